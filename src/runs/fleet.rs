//! One test across hosts: each host's saved run side by side, the median, the spread and the
//! hosts far from it.

use serde::Serialize;

use super::{Figures, SavedRun};
use crate::result::{MinMedMax, OUTLIER_DISTANCE};

/// One test across hosts: each host's figures, the median, the spread, and the outliers.
#[derive(Debug, Clone, Serialize)]
pub struct FleetRow {
    pub test: String,
    pub hosts: Vec<(String, f64, f64, f64)>,
    pub median_mb_s: f64,
    /// (max - min) / median of MB/s.
    pub spread: f64,
    /// Hosts more than 25% from the median.
    pub outliers: Vec<String>,
}

/// A fleet table from each host's saved run: one row per test, the hosts' MB/s, IOPS and p99.
pub fn fleet(runs: &[(String, SavedRun)]) -> Vec<FleetRow> {
    let mut tests: Vec<String> = Vec::new();
    for (_, r) in runs {
        for t in &r.tests {
            if !tests.contains(&t.name) {
                tests.push(t.name.clone());
            }
        }
    }
    tests
        .into_iter()
        .map(|name| {
            let hosts: Vec<(String, f64, f64, f64)> = runs
                .iter()
                .filter_map(|(h, r)| {
                    let t = r.tests.iter().find(|t| t.name == name)?;
                    let f = Figures::of_saved(&t.name, &t.result);
                    Some((h.clone(), f.mb_s, f.iops, f.p99_us))
                })
                .collect();
            let mut v: Vec<f64> = hosts.iter().map(|x| x.1).collect();
            v.sort_by(|a, b| a.total_cmp(b));
            let median = MinMedMax::of(v.clone()).median;
            let spread = match (v.first(), v.last()) {
                (Some(lo), Some(hi)) if median > 0.0 => (hi - lo) / median,
                _ => 0.0,
            };
            let outliers = hosts
                .iter()
                .filter(|x| median > 0.0 && (x.1 - median).abs() / median > OUTLIER_DISTANCE)
                .map(|x| x.0.clone())
                .collect();
            FleetRow {
                test: name,
                hosts,
                median_mb_s: median,
                spread,
                outliers,
            }
        })
        .collect()
}
