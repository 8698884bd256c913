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

/// The knee: the last point before the first step where mean latency grew by a larger factor
/// than throughput did (queue depth sweeps compare IOPS, block-size sweeps bytes per second).
/// None when latency never outgrew throughput (the device kept up at every point).
pub fn knee(param: Param, points: &[Point]) -> Option<Knee> {
    for (i, w) in points.windows(2).enumerate() {
        let (a, b) = (&w[0], &w[1]);
        let (ta, tb) = (param.throughput(a), param.throughput(b));
        if ta <= 0.0 || a.mean_latency_ns <= 0.0 {
            continue;
        }
        let gt = tb / ta;
        let gl = b.mean_latency_ns / a.mean_latency_ns;
        if gl > gt * 1.05 {
            let what = match param {
                Param::Iodepth => "IOPS",
                Param::Bs => "throughput",
            };
            return Some(Knee {
                index: i,
                value: a.value,
                why: format!(
                    "from {} to {}, {what} grew {gt:.2}x but latency {gl:.2}x: past {} the \
                     extra {} only waits in the queue",
                    param.label(a.value),
                    param.label(b.value),
                    param.label(a.value),
                    match param {
                        Param::Iodepth => "depth",
                        Param::Bs => "size",
                    }
                ),
            });
        }
    }
    None
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
            None => "No knee: latency never grew faster than throughput.".into(),
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
        assert!(
            k.why.contains("from 64K to 1M") && k.why.contains("past 64K"),
            "{}",
            k.why
        );
    }
}
