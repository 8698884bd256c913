//! A sweep as the session runs it: a suite of one test at each queue depth or block size
//! (from `--qd`/`--bs` lists), and the series and knee of what it measured
//! (`crate::analysis::sweep`).

use crate::analysis::sweep::{Param, Point, Series, knee};
use crate::engine::{EngineKind, Job};

/// The series of a sweep's tests, grouped by op, each in the order of its swept value (a
/// knee is where latency outgrows throughput as the value grows).
pub fn analyze(param: Param, tests: &[super::TestOutcome]) -> Vec<Series> {
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
        s.points.sort_by_key(|p| p.value);
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
                // One engine for every point, so that the curve is the device's and not a
                // change of engine: io_uring for every depth of a depth sweep (not a loop at
                // QD1), and for a sweep at depth (not the probe's choice point by point,
                // `engine::probe`).
                engine: Some(match (param, base.engine) {
                    (Param::Iodepth, EngineKind::Auto) => EngineKind::Uring,
                    (_, EngineKind::Auto) if qd > 1 => EngineKind::Uring,
                    (_, named) => named,
                }),
                rwmixread: None,
                cold: None,
                verify: None,
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
            crate::units::parse_size(b.trim())?,
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
            Param::Bs => crate::units::parse_size(x),
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
    // Run from the smallest up, as the series reads (`--bs 64k,4k` ran 64K first and called
    // the step down to 4K a knee).
    let mut v = v;
    v.sort_unstable();
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sweep_keeps_one_engine_and_never_probes_point_by_point() {
        let engines = |param, values: &[u64], base: &Job| -> Vec<(EngineKind, bool)> {
            suite(param, values, base)
                .tests
                .iter()
                .map(|t| {
                    let j = t.job(512);
                    (j.engine_to_use().engine, j.may_probe_engine())
                })
                .collect()
        };
        let qd1 = Job::default();
        let qd8 = Job {
            iodepth: 8,
            ..Job::default()
        };
        let qd = engines(Param::Iodepth, &[1, 2, 32], &qd1);
        let bs = engines(Param::Bs, &[4096, 1 << 20], &qd1);
        let bs8 = engines(Param::Bs, &[4096, 1 << 20], &qd8);
        println!("depth sweep {qd:?}, block size sweeps at QD1 {bs:?} and QD8 {bs8:?}");
        assert_eq!(qd, vec![(EngineKind::Uring, false); 3]);
        assert_eq!(bs, vec![(EngineKind::Psync, false); 2]);
        assert_eq!(bs8, vec![(EngineKind::Uring, false); 2]);
    }

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

    #[test]
    fn lists() {
        assert_eq!(parse_list(Param::Iodepth, "1,2, 4"), Ok(vec![1, 2, 4]));
        assert_eq!(parse_list(Param::Bs, "4k,1M"), Ok(vec![4096, 1 << 20]));
        assert_eq!(
            parse_list(Param::Bs, "1M,4k,64k"),
            Ok(vec![4096, 64 << 10, 1 << 20])
        );
        assert_eq!(parse_list(Param::Iodepth, "32,1,4"), Ok(vec![1, 4, 32]));
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
