//! Sweeps: one test at a series of queue depths or block sizes, and the knee of the curve: the
//! point after which latency grows faster than throughput. By Little's law (I/Os in flight =
//! IOPS x latency), while the device has parallelism to spare, more depth buys throughput at
//! little latency; past the knee, it only lengthens the queue.

use serde::Serialize;

use crate::engine::{Job, RunResult};

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
    pub fn of(param: Param, job: &Job, r: &RunResult) -> Self {
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

/// The series of a sweep's tests, grouped by op, in the order they ran.
pub fn analyze(param: Param, tests: &[crate::session::TestOutcome]) -> Vec<Series> {
    let mut out: Vec<Series> = Vec::new();
    for t in tests {
        let op = t.job.op.as_str().to_string();
        let point = Point::of(param, &t.job, &t.result);
        match out.iter_mut().find(|s| s.op == op) {
            Some(s) => s.points.push(point),
            None => out.push(Series {
                op,
                param,
                points: vec![point],
                knee: None,
            }),
        }
    }
    for s in out.iter_mut() {
        s.knee = knee(param, &s.points);
    }
    out
}

/// A suite that sweeps `param` over `values` with `base` for everything else.
pub fn suite(param: Param, values: &[u64], base: &Job) -> crate::suite::Suite {
    use crate::suite::{BlockSize, DurationField, SuiteTest};
    let tests = values
        .iter()
        .map(|&v| {
            let (bs, qd) = match param {
                Param::Iodepth => (base.bs, v as u32),
                Param::Bs => (v, base.iodepth),
            };
            SuiteTest {
                name: match param {
                    Param::Iodepth => format!("QD{v}"),
                    Param::Bs => format!("bs {}", crate::units::fmt_size(v)),
                },
                about: None,
                op: base.op,
                bs: BlockSize::Bytes(bs),
                size: match base.size {
                    Some(crate::engine::job::SizeSpec::Text(x)) => Some(crate::suite::SizeField(x)),
                    Some(crate::engine::job::SizeSpec::Bytes(b)) => {
                        Some(crate::suite::SizeField(crate::engine::job::Sized::Bytes(b)))
                    }
                    None => None,
                },
                count: None,
                runtime: base.runtime.map(DurationField),
                ramp: None,
                iodepth: Some(qd),
                jobs: Some(1),
                offset: None,
                mode: Some(base.mode),
                data: None,
                engine: None,
                rwmixread: None,
                cold: None,
                cpus: base.cpus.clone(),
            }
        })
        .collect();
    crate::suite::Suite {
        name: format!("sweep-{}", param.as_str()),
        title: format!("{} {} sweep", base.op.as_str(), param.as_str()),
        source: None,
        about: String::new(),
        found: None,
        repeat: 1,
        sweep: Some(param.as_str().into()),
        prepare: None,
        contrast: None,
        tests,
        origin: "command line".into(),
    }
}

/// What a sweep varies, from `--qd` and `--bs` as given: the one with a list is swept, and a
/// single value of the other is the fixed block size or depth (`--qd 1,4,16 --bs 4k`, as `run`
/// and fio spell the block size), else `block` and `depth` (`--block`, `--depth`). Returns the
/// parameter, its values, the block size and the depth.
pub fn resolve(
    qd: Option<&str>,
    bs: Option<&str>,
    block: u64,
    depth: u32,
) -> Result<(Param, Vec<u64>, u64, u32), String> {
    let count = |s: &str| s.split(',').filter(|x| !x.trim().is_empty()).count();
    let one_depth = |s: &str| {
        s.trim()
            .parse::<u32>()
            .ok()
            .filter(|d| *d > 0)
            .ok_or_else(|| format!("--qd {s}: give a queue depth such as 8"))
    };
    match (qd, bs) {
        (Some(q), Some(b)) if count(q) > 1 && count(b) > 1 => Err(format!(
            "a sweep varies one thing: --qd {q} at one block size (add --bs 4k), or --bs {b} at \
             one depth (add --qd 8)"
        )),
        (Some(q), Some(b)) if count(q) > 1 => Ok((
            Param::Iodepth,
            parse_list(Param::Iodepth, q)?,
            crate::engine::job::parse_size(b.trim())?,
            depth,
        )),
        (Some(q), Some(b)) if count(b) > 1 => {
            Ok((Param::Bs, parse_list(Param::Bs, b)?, block, one_depth(q)?))
        }
        (Some(q), Some(b)) => Err(format!(
            "--qd {q} --bs {b} is one point, not a sweep: give a list to one of them (--qd 1,4,16), \
             or use blkscope run --iodepth {q} --bs {b}"
        )),
        (Some(q), None) => Ok((Param::Iodepth, parse_list(Param::Iodepth, q)?, block, depth)),
        (None, Some(b)) => Ok((Param::Bs, parse_list(Param::Bs, b)?, block, depth)),
        (None, None) => Err("a sweep needs --qd LIST or --bs LIST".into()),
    }
}

/// Parses a list of queue depths (`1,2,4,8`) or block sizes (`4k,64k,1M`).
pub fn parse_list(param: Param, s: &str) -> Result<Vec<u64>, String> {
    let v: Result<Vec<u64>, String> = s
        .split(',')
        .map(|x| x.trim())
        .filter(|x| !x.is_empty())
        .map(|x| match param {
            Param::Iodepth => x
                .parse::<u64>()
                .map_err(|_| format!("'{x}' is not a queue depth: use numbers like 1,2,4,8")),
            Param::Bs => crate::engine::job::parse_size(x),
        })
        .collect();
    let v = v?;
    if v.len() < 2 {
        return Err("a sweep needs at least two values, e.g. --qd 1,4,16 or --bs 4k,64k,1M".into());
    }
    if v.len() > 64 {
        return Err(format!("{} values: a sweep takes at most 64", v.len()));
    }
    // A point given twice would run twice and put two points at one x for the knee.
    for (i, x) in v.iter().enumerate() {
        if v[..i].contains(x) {
            let name = match param {
                Param::Iodepth => format!("QD{x}"),
                Param::Bs => crate::units::exact_size(*x),
            };
            return Err(format!("{name} is in the list twice: give each point once"));
        }
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sweep_varies_the_option_given_a_list() {
        let r = |q: Option<&str>, b: Option<&str>| resolve(q, b, 4096, 1);
        assert_eq!(
            r(Some("1,4,16"), None),
            Ok((Param::Iodepth, vec![1, 4, 16], 4096, 1))
        );
        assert_eq!(
            r(Some("1,4"), Some("8k")),
            Ok((Param::Iodepth, vec![1, 4], 8192, 1))
        );
        assert_eq!(
            r(Some("8"), Some("4k,1M")),
            Ok((Param::Bs, vec![4096, 1 << 20], 4096, 8))
        );
        assert_eq!(
            r(None, Some("4k,64k")),
            Ok((Param::Bs, vec![4096, 65536], 4096, 1))
        );
        for (q, b, says) in [
            (Some("1,4"), Some("4k,8k"), "varies one thing"),
            (Some("4"), Some("4k"), "one point, not a sweep"),
            (Some("x"), Some("4k,8k"), "--qd x: give a queue depth"),
            (Some("0"), Some("4k,8k"), "--qd 0: give a queue depth"),
            (Some("1,4"), Some("4q"), "4q"),
            (None, None, "needs --qd LIST or --bs LIST"),
        ] {
            let e = r(q, b).unwrap_err();
            assert!(e.contains(says), "{q:?} {b:?}: {e}");
        }
    }

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

    #[test]
    fn lists() {
        assert_eq!(parse_list(Param::Iodepth, "1,2, 4"), Ok(vec![1, 2, 4]));
        assert_eq!(parse_list(Param::Bs, "4k,1M"), Ok(vec![4096, 1 << 20]));
        assert!(parse_list(Param::Iodepth, "1").is_err());
        assert!(parse_list(Param::Iodepth, "1,x").is_err());
        // It ran QD1 twice.
        assert_eq!(
            parse_list(Param::Iodepth, "1,1"),
            Err("QD1 is in the list twice: give each point once".into())
        );
        assert_eq!(
            parse_list(Param::Bs, "4k,64k,4096"),
            Err("4k is in the list twice: give each point once".into())
        );
    }
}
