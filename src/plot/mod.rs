//! Charts as SVG (plotters' SVG backend: no fonts or scripts fetched, text as SVG text) and the
//! self-contained HTML reports built from them: throughput and IOPS over time, the latency
//! heatmap and histogram, and sweep curves with their knee. The TUI draws the same data in
//! cells (`ui::render::latency`); both read a result's samples and latency buckets.

pub mod html;
pub mod svg;

use crate::engine::Sample;
use crate::engine::result::LAT_BUCKETS;
use crate::runs::SavedRun;
use crate::sweep::{Param, Point, Series};

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

/// [`sweeps`] over (job, result) pairs, in the order the tests ran (a saved run's, or the
/// tests a host sent back).
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
        let points: Vec<Point> = tests
            .iter()
            .map(|(j, r)| Point {
                value: param.of(j),
                iops: r.iops,
                bytes_per_sec: r.bytes_per_sec,
                mean_latency_ns: r.latency_ns.mean,
                p99_ns: r.latency_ns.p99,
            })
            .collect();
        let knee = crate::sweep::knee(param, &points);
        out.push(Series {
            op: op.as_str().to_string(),
            param,
            points,
            knee,
        });
    }
    out
}
