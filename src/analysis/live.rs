//! The analysis of a test while it runs: the diskstats findings over the counters since the
//! test began and the bytes it has moved so far, the same function the final result's come
//! from, so that what the live view says and what the result says cannot part ways.

use crate::engine::Job;
use crate::engine::result::Sample;
use crate::engine::target::OpenTarget;
use crate::stats::Snapshot;
use crate::sysroot::SysRoot;

use super::findings::{self, Finding, Moved};
use super::traced::TraceSummary;

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

    /// Adds a live sample's bytes, and says what the test's figures mean so far, by the trace
    /// so far (`trace`: its summary, or why there is none) as the result's come from the whole
    /// trace: the diskstats findings, and the other processes the trace saw. None until half a
    /// second has passed (too little to judge), nor while a trace that runs has not been read
    /// yet (`trace` None): without it, a neighbour's reads would be taken for the test's.
    pub fn findings(
        &mut self,
        root: &SysRoot,
        job: &Job,
        target: &OpenTarget,
        s: &Sample,
        trace: Option<TraceSummary>,
    ) -> Vec<Finding> {
        self.moved.read_bytes += s.read_bytes;
        self.moved.write_bytes += s.write_bytes;
        let (Some(a), Some(trace)) = (&self.start, trace) else {
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
        let mut act = super::activity(target, devices, seconds, self.stats_off.clone());
        let ours = self.moved.read_bytes + self.moved.write_bytes;
        let others = trace
            .traced()
            .then(|| super::findings::others::traced_finding(&trace, job, ours, None))
            .flatten();
        act.traced = Some(trace);
        let mut found = findings::analyze(job, self.moved, &act, crate::sys::page_size());
        found.extend(others);
        findings::order(&mut found);
        found
    }
}
