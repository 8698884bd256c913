//! `blkscope sweep`: the points and the knee.

use super::*;
use std::fmt::Write as _;

/// A sweep: each point with a bar of its throughput and its latency, and the knee.
pub fn sweep(series: &[crate::analysis::sweep::Series]) -> String {
    use crate::analysis::sweep::Param;
    let mut out = String::new();
    for s in series {
        let _ = writeln!(out, "\n{} by {}:", s.op, s.param.as_str());
        let max = s
            .points
            .iter()
            .map(|p| match s.param {
                Param::Iodepth => p.iops,
                Param::Bs => p.bytes_per_sec,
            })
            .fold(0.0f64, f64::max)
            .max(1.0);
        for (i, p) in s.points.iter().enumerate() {
            let v = match s.param {
                Param::Iodepth => p.iops,
                Param::Bs => p.bytes_per_sec,
            };
            let bar = "#".repeat(((v / max) * 30.0).round() as usize);
            let label = s.param.label(p.value);
            let mark = if s.knee.as_ref().is_some_and(|k| k.index == i) {
                "  <- knee"
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "  {label:>6} {bar:<30} {:>9.0} IOPS {:>8.1} MB/s  mean {:>9}  p99 {:>9}{mark}",
                p.iops,
                p.bytes_per_sec / 1e6,
                fmt_ns(p.mean_latency_ns),
                fmt_ns(p.p99_ns as f64)
            );
        }
        match &s.knee {
            Some(k) => {
                let _ = writeln!(out, "  knee: {}", k.why);
            }
            None => {
                let why = crate::analysis::sweep::no_knee_why(s.param, &s.points);
                let _ = writeln!(out, "  no knee: {why}");
            }
        }
    }
    out
}
