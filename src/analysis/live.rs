//! The analysis of a test while it runs: the diskstats findings over the counters since the
//! test began and the bytes it has moved so far, the same function the final result's come
//! from, so that what the live view says and what the result says cannot part ways.

use crate::engine::Job;
use crate::engine::result::Sample;
use crate::engine::target::OpenTarget;
use crate::stats::Snapshot;
use crate::sysroot::SysRoot;

use super::findings::{self, Finding, Moved};

/// A test's counters at its start, and what it has moved since.
pub struct SoFar {
    start: Option<Snapshot>,
    /// Devices whose `queue/iostats` is 0 (read once: a setting, not a figure).
    stats_off: Vec<String>,
    moved: Moved,
}

impl SoFar {
    /// Reads the counters of the devices under `target`, just before its first I/O.
    pub fn begin(root: &SysRoot, target: &OpenTarget) -> Self {
        let stats_off = target
            .watch
            .iter()
            .filter(|n| crate::stats::iostats_disabled(root, n))
            .cloned()
            .collect();
        Self {
            start: (!target.watch.is_empty())
                .then(|| Snapshot::read(root).ok())
                .flatten(),
            stats_off,
            moved: Moved {
                read_bytes: 0,
                write_bytes: 0,
            },
        }
    }

    /// Adds a live sample's bytes, and says what the test's figures mean so far (none until
    /// half a second has passed: too little to judge).
    pub fn findings(
        &mut self,
        root: &SysRoot,
        job: &Job,
        target: &OpenTarget,
        s: &Sample,
    ) -> Vec<Finding> {
        self.moved.read_bytes += s.read_bytes;
        self.moved.write_bytes += s.write_bytes;
        let Some(a) = &self.start else {
            return Vec::new();
        };
        let Ok(b) = Snapshot::read(root) else {
            return Vec::new();
        };
        let seconds = b.at.saturating_duration_since(a.at).as_secs_f64();
        if seconds < 0.5 {
            return Vec::new();
        }
        let devices = super::deltas(target, a, &b);
        let act = super::activity(target, devices, seconds, self.stats_off.clone());
        findings::analyze(job, self.moved, &act, crate::sys::page_size())
    }
}
