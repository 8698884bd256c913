//! Charts as SVG (plotters' SVG backend: no fonts or scripts fetched, text as SVG text), which
//! the self-contained HTML reports (`crate::report::html`) are built from: throughput and IOPS
//! over time, the latency heatmap and histogram, and sweep curves with their knee. The TUI
//! draws the same data in cells (`ui::render::latency`); both read a result's samples and
//! latency buckets.

pub mod svg;

use crate::analysis::sweep::{Param, Point, Series};
use crate::engine::Sample;
use crate::engine::result::LAT_BUCKETS;
use crate::runs::SavedRun;

/// The latency-bucket counts of a whole run, from its samples.
pub fn total_buckets(samples: &[Sample]) -> Vec<u64> {
    let mut all = vec![0u64; LAT_BUCKETS];
    for s in samples {
        for (i, c) in s.lat_buckets.iter().enumerate().take(LAT_BUCKETS) {
            all[i] += *c as u64;
        }
    }
    all
}

/// The sweeps in a saved run: tests of one op that differ only in queue depth, or only in
/// block size, make a series (two points at least).
pub fn sweeps(run: &SavedRun) -> Vec<Series> {
    let tests: Vec<_> = run.tests.iter().map(|t| (&t.job, &t.result)).collect();
    sweeps_in(&tests)
}

/// [`sweeps`] over (job, result) pairs (a saved run's, or the tests a host sent back), each
/// series in the order of its swept value.
pub fn sweeps_in(tests: &[(&crate::engine::Job, &crate::runs::SavedResult)]) -> Vec<Series> {
    let mut out = Vec::new();
    let mut ops: Vec<crate::engine::Op> = Vec::new();
    for (job, _) in tests {
        if !ops.contains(&job.op) {
            ops.push(job.op);
        }
    }
    for op in ops {
        let tests: Vec<_> = tests.iter().filter(|(j, _)| j.op == op).collect();
        if tests.len() < 2 {
            continue;
        }
        let same = |f: &dyn Fn(&crate::engine::Job) -> u64| {
            tests.iter().all(|(j, _)| f(j) == f(tests[0].0))
        };
        let param = if same(&|j| j.bs) && !same(&|j| j.iodepth as u64) {
            Param::Iodepth
        } else if same(&|j| j.iodepth as u64) && !same(&|j| j.bs) {
            Param::Bs
        } else {
            continue;
        };
        // Each value once: the scheduler suite runs QD1 and QD32 under every scheduler, which
        // is not a sweep (its points would repeat).
        let mut values: Vec<u64> = tests.iter().map(|(j, _)| param.of(j)).collect();
        values.sort_unstable();
        if values.windows(2).any(|w| w[0] == w[1]) {
            continue;
        }
        let mut points: Vec<Point> = tests
            .iter()
            .map(|(j, r)| Point {
                value: param.of(j),
                iops: r.iops,
                bytes_per_sec: r.bytes_per_sec,
                mean_latency_ns: r.latency_ns.mean,
                p99_ns: r.latency_ns.p99,
            })
            .collect();
        // As the value grows, whatever order a user's suite ran them in.
        points.sort_by_key(|p| p.value);
        let knee = crate::analysis::sweep::knee(param, &points);
        out.push(Series {
            op: op.as_str().to_string(),
            param,
            points,
            knee,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::analysis::sweep::Param;
    use crate::engine::{Job, Op};
    use crate::runs::SavedResult;

    fn result(iops: f64) -> SavedResult {
        serde_json::from_value(serde_json::json!({
            "bytes_per_sec": iops * 4096.0,
            "iops": iops,
            "latency_ns": {"min": 0, "mean": 1e9 / iops, "p50": 0, "p90": 0, "p99": 0,
                           "p99_9": 0, "p99_99": 0, "max": 0},
            "warnings": [],
        }))
        .unwrap()
    }

    fn job(op: Op, bs: u64, iodepth: u32) -> Job {
        Job {
            op,
            bs,
            iodepth,
            ..Job::default()
        }
    }

    /// Tests of one op that differ in one thing, each value once, are a sweep; the scheduler
    /// suite's QD1 and QD32 under every scheduler (values repeated) and tests that differ in
    /// two things are not.
    #[test]
    fn what_is_a_sweep() {
        let r = result(1000.0);
        let qd = [
            job(Op::Randread, 4096, 1),
            job(Op::Randread, 4096, 4),
            job(Op::Randread, 4096, 16),
        ];
        let pairs: Vec<_> = qd.iter().map(|j| (j, &r)).collect();
        let s = super::sweeps_in(&pairs);
        assert_eq!(s.len(), 1, "{s:?}");
        assert_eq!((s[0].param, s[0].points.len()), (Param::Iodepth, 3));
        let bs = [job(Op::Write, 4096, 1), job(Op::Write, 65536, 1)];
        let pairs: Vec<_> = bs.iter().map(|j| (j, &r)).collect();
        assert_eq!(super::sweeps_in(&pairs)[0].param, Param::Bs);
        let sched = [1, 32, 1, 32].map(|q| job(Op::Randread, 4096, q));
        let pairs: Vec<_> = sched.iter().map(|j| (j, &r)).collect();
        assert!(super::sweeps_in(&pairs).is_empty(), "repeated values");
        let both = [job(Op::Read, 4096, 1), job(Op::Read, 1 << 20, 8)];
        let pairs: Vec<_> = both.iter().map(|j| (j, &r)).collect();
        assert!(super::sweeps_in(&pairs).is_empty(), "two things vary");
        // A user's suite that ran its depths out of order (QD16 first): the series goes up,
        // and its knee is where latency outgrew IOPS going up.
        let at = |iops: f64, mean_us: f64| {
            let mut r = result(iops);
            r.latency_ns.mean = mean_us * 1e3;
            r
        };
        // QD1 to QD4: IOPS 1.2x, latency 4x; QD4 to QD16: IOPS 1.08x, latency 4x.
        let (r1, r4, r16) = (
            at(10_000.0, 100.0),
            at(12_000.0, 400.0),
            at(13_000.0, 1600.0),
        );
        let (j16, j1, j4) = (
            job(Op::Randread, 4096, 16),
            job(Op::Randread, 4096, 1),
            job(Op::Randread, 4096, 4),
        );
        let pairs = [(&j16, &r16), (&j1, &r1), (&j4, &r4)];
        let s = super::sweeps_in(&pairs);
        let values: Vec<u64> = s[0].points.iter().map(|p| p.value).collect();
        println!("{values:?} knee {:?}", s[0].knee);
        assert_eq!(values, [1, 4, 16]);
        assert_eq!(s[0].knee.as_ref().map(|k| k.value), Some(1));
    }
}
