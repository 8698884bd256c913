//! Sweeps: one test at a series of queue depths or block sizes, and the knee of the curve: the
//! point after which latency grows faster than throughput. By Little's law (I/Os in flight =
//! IOPS x latency), while the device has parallelism to spare, more depth buys throughput at
//! little latency; past the knee, it only lengthens the queue.

use serde::Serialize;

use crate::engine::{Job, Measured};

/// What a sweep varies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Param {
    Iodepth,
    Bs,
}

impl Param {
    pub fn of(&self, job: &Job) -> u64 {
        match self {
            Param::Iodepth => job.iodepth as u64,
            Param::Bs => job.bs,
        }
    }

    /// What a sweep of this kind is read by: IOPS across depths, MB/s across sizes.
    pub fn throughput(&self, p: &Point) -> f64 {
        match self {
            Param::Iodepth => p.iops,
            Param::Bs => p.bytes_per_sec / 1e6,
        }
    }

    /// What [`Param::throughput`] is called in a sentence: IOPS, or throughput.
    fn throughput_word(&self) -> &'static str {
        match self {
            Param::Iodepth => "IOPS",
            Param::Bs => "throughput",
        }
    }

    /// The unit of [`Param::throughput`].
    pub fn throughput_unit(&self) -> &'static str {
        match self {
            Param::Iodepth => "IOPS",
            Param::Bs => "MB/s",
        }
    }

    /// A swept value as people write it: `QD8`, `64K`.
    pub fn label(&self, v: u64) -> String {
        match self {
            Param::Iodepth => format!("QD{v}"),
            Param::Bs => crate::units::fmt_size(v),
        }
    }

    pub fn as_str(&self) -> &'static str {
        match self {
            Param::Iodepth => "iodepth",
            Param::Bs => "bs",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "iodepth" | "qd" => Some(Param::Iodepth),
            "bs" => Some(Param::Bs),
            _ => None,
        }
    }
}

/// One point of a sweep.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    /// The swept value (I/Os in flight, or bytes per I/O).
    pub value: u64,
    pub iops: f64,
    pub bytes_per_sec: f64,
    pub mean_latency_ns: f64,
    pub p99_ns: u64,
}

impl Point {
    pub fn of(param: Param, job: &Job, r: &Measured) -> Self {
        Point {
            value: param.of(job),
            iops: r.iops,
            bytes_per_sec: r.bytes_per_sec,
            mean_latency_ns: r.latency_ns.mean,
            p99_ns: r.latency_ns.p99,
        }
    }
}

/// Where the curve bends.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Knee {
    /// Index into the points, and the swept value there.
    pub index: usize,
    pub value: u64,
    pub why: String,
}

/// Each step between neighbouring points: its index, and how many times throughput (IOPS for
/// depths, bytes per second for sizes) and mean latency grew over it.
fn growths(param: Param, points: &[Point]) -> Vec<(usize, f64, f64)> {
    points
        .windows(2)
        .enumerate()
        .filter_map(|(i, w)| {
            let (a, b) = (&w[0], &w[1]);
            let ta = param.throughput(a);
            (ta > 0.0 && a.mean_latency_ns > 0.0).then(|| {
                (
                    i,
                    param.throughput(b) / ta,
                    b.mean_latency_ns / a.mean_latency_ns,
                )
            })
        })
        .collect()
}

/// Latency grew by more than throughput over a step (5% of slack).
fn latency_outgrew(gt: f64, gl: f64) -> bool {
    gl > gt * 1.05
}

/// Throughput grew by more than latency over a step: the device kept up there.
fn throughput_outgrew(gt: f64, gl: f64) -> bool {
    gt > gl * 1.05
}

/// The knee: the last point before the first step where mean latency grew by a larger factor
/// than throughput did (queue depth sweeps compare IOPS, block-size sweeps bytes per second),
/// of the steps after the last one where throughput outgrew latency: past a knee the extra
/// depth only waits, so a step where throughput grows again after one was a dip on the way
/// (a sweep on a host-backed loop device went from 7271 to 12240 IOPS at QD1 to QD4 with
/// latency 2.38x, then to 41995 at QD16 with latency 1.17x, and was said to have its knee at
/// QD1). None when latency never outgrew throughput for good ([`no_knee_why`] says which).
pub fn knee(param: Param, points: &[Point]) -> Option<Knee> {
    let steps = growths(param, points);
    let after = steps
        .iter()
        .filter(|(_, gt, gl)| throughput_outgrew(*gt, *gl))
        .map(|(i, _, _)| i + 1)
        .max()
        .unwrap_or(0);
    let &(i, gt, gl) = steps
        .iter()
        .find(|(i, gt, gl)| *i >= after && latency_outgrew(*gt, *gl))?;
    let (a, b) = (&points[i], &points[i + 1]);
    let what = param.throughput_word();
    Some(Knee {
        index: i,
        value: a.value,
        why: format!(
            "from {} to {}, {what} grew {gt:.2}x but latency {gl:.2}x: past {} {}",
            param.label(a.value),
            param.label(b.value),
            param.label(a.value),
            match param {
                Param::Iodepth => "the extra depth only waits in the queue",
                // Each I/O of a larger block moves more: its time grows with its size once
                // the target moves no more bytes a second, queue or none (QD1).
                Param::Bs =>
                    "a larger block mostly takes longer to move: the throughput is near its limit",
            }
        ),
    })
}

/// Why a sweep has no knee: latency never outgrew throughput, or it did on a step after which
/// throughput grew again (a dip, said with both steps' figures).
pub fn no_knee_why(param: Param, points: &[Point]) -> String {
    let steps = growths(param, points);
    let dip = steps.iter().find(|(_, gt, gl)| latency_outgrew(*gt, *gl));
    let again = dip.and_then(|&(d, _, _)| {
        steps
            .iter()
            .filter(|(i, gt, gl)| *i > d && throughput_outgrew(*gt, *gl))
            .max_by(|x, y| x.1.total_cmp(&y.1))
    });
    let (Some(&(d, dt, dl)), Some(&(g, gt, gl))) = (dip, again) else {
        return "latency never grew faster than throughput over this range".into();
    };
    let label = |i: usize| param.label(points[i].value);
    let what = param.throughput_word();
    format!(
        "from {} to {} latency grew faster than {what} ({what} {dt:.2}x, latency {dl:.2}x), but \
         {what} grew again after it ({gt:.2}x from {} to {}, latency {gl:.2}x): a dip on the \
         way, not where the device stops keeping up; run the sweep again to see whether it \
         stays",
        label(d),
        label(d + 1),
        label(g),
        label(g + 1),
    )
}

/// The points and knee of one series of a sweep (a bs sweep has one series per op).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Series {
    pub op: String,
    pub param: Param,
    pub points: Vec<Point>,
    pub knee: Option<Knee>,
}

impl Series {
    /// Where the knee is and why, or that there is none: the sentence reports print under a
    /// sweep.
    pub fn knee_sentence(&self) -> String {
        match &self.knee {
            Some(k) => format!("Knee at {}: {}", self.param.label(k.value), k.why),
            None => format!("No knee: {}.", no_knee_why(self.param, &self.points)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(value: u64, iops: f64, lat_us: f64) -> Point {
        Point {
            value,
            iops,
            bytes_per_sec: iops * 4096.0,
            mean_latency_ns: lat_us * 1e3,
            p99_ns: (lat_us * 2e3) as u64,
        }
    }

    /// A sweep on this VM's host-backed loop device: QD1 to QD4 grew IOPS 1.68x and latency
    /// 2.38x, then QD16 and QD64 grew IOPS 3.43x and 2.83x at 1.17x and 1.41x latency. It said
    /// "knee: from QD1 to QD4 ... past QD1 the extra depth only waits in the queue".
    #[test]
    fn a_dip_that_throughput_climbs_out_of_is_no_knee() {
        let pts = [
            p(1, 7271.0, 137.5),
            p(4, 12240.0, 326.8),
            p(16, 41995.0, 381.0),
            p(64, 118789.0, 538.8),
        ];
        assert_eq!(knee(Param::Iodepth, &pts), None);
        let why = no_knee_why(Param::Iodepth, &pts);
        println!("{why}");
        assert_eq!(
            why,
            "from QD1 to QD4 latency grew faster than IOPS (IOPS 1.68x, latency 2.38x), but IOPS \
             grew again after it (3.43x from QD4 to QD16, latency 1.17x): a dip on the way, not \
             where the device stops keeping up; run the sweep again to see whether it stays"
        );
        // The same dip, then a knee for good: the knee is the later one.
        let mut more = pts.to_vec();
        more.push(p(128, 120_000.0, 1066.0));
        let k = knee(Param::Iodepth, &more).unwrap();
        assert_eq!(k.value, 64, "{k:?}");
        // Latency never outgrew IOPS: said as before.
        assert_eq!(
            no_knee_why(Param::Iodepth, &pts[1..]),
            "latency never grew faster than throughput over this range"
        );
    }

    #[test]
    fn the_knee_is_where_latency_outgrows_iops() {
        // IOPS doubles with depth up to 8 at about the same latency, then saturates.
        let pts = [
            p(1, 10_000.0, 100.0),
            p(2, 19_500.0, 102.0),
            p(4, 38_000.0, 105.0),
            p(8, 70_000.0, 114.0),
            p(16, 80_000.0, 200.0),
            p(32, 81_000.0, 395.0),
        ];
        let k = knee(Param::Iodepth, &pts).unwrap();
        assert_eq!((k.index, k.value), (3, 8), "{k:?}");
        assert!(k.why.contains("from QD8 to QD16"), "{}", k.why);
        // A device that keeps up: no knee.
        assert_eq!(knee(Param::Iodepth, &pts[..4]), None);
        // Sizes are written as sizes, not byte counts.
        // 74, 642 and 1153 MB/s at a mean latency of 55, 100 and 880 us.
        let bs: Vec<Point> = [
            (4096, 18_000.0, 55.0),
            (65536, 9_800.0, 100.0),
            (1 << 20, 1_100.0, 880.0),
        ]
        .into_iter()
        .map(|(v, iops, lat)| Point {
            bytes_per_sec: iops * v as f64,
            ..p(v, iops, lat)
        })
        .collect();
        let k = knee(Param::Bs, &bs).unwrap();
        println!("{}", k.why);
        assert!(
            k.why.contains("from 64K to 1M") && k.why.contains("past 64K"),
            "{}",
            k.why
        );
        // No queue in a QD1 size sweep: a larger block's time is its transfer's.
        assert!(
            k.why.ends_with(
                "a larger block mostly takes longer to move: the throughput is near its limit"
            ) && !k.why.contains("queue"),
            "{}",
            k.why
        );
    }
}
