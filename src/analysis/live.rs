//! The analysis of a test while it runs: the diskstats findings over the counters since the
//! test began and the bytes it has moved so far, and the stalls of its samples so far, by the
//! same functions the final result's come from, so that what the live view says and what the
//! result says cannot part ways.

use crate::engine::Job;
use crate::engine::result::Sample;
use crate::engine::target::OpenTarget;
use crate::stats::Snapshot;
use crate::sysroot::SysRoot;

use super::findings::stall::Stalls;
use super::findings::{self, Finding, Moved};
use super::traced::TraceSummary;

/// A test's counters at its start, and what it had moved by each sample.
pub struct SoFar {
    start: Option<Snapshot>,
    /// Devices whose `queue/iostats` is 0 (read once: a setting, not a figure).
    stats_off: Vec<String>,
    /// The bytes moved by each sample's end (seconds into the run, bytes so far), for the
    /// moment of the trace's last read.
    history: Vec<(f64, u64)>,
    /// The intervals without a completion so far.
    stalls: Stalls,
    /// What was known before the first I/O ([`super::known_before`]): said from the first
    /// sample on, as the result says it.
    known: Vec<Finding>,
}

impl SoFar {
    /// Reads the counters of the devices under `target`, just before its first I/O; `known`:
    /// the findings already known then.
    pub fn begin(root: &SysRoot, target: &OpenTarget, known: Vec<Finding>) -> Self {
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
            history: Vec::new(),
            stalls: Stalls::default(),
            known,
        }
    }

    /// Says what the test's figures mean at sample `s`, the test having `moved` so far, as
    /// the result will: what was known before it began, the diskstats findings and the other
    /// processes the trace saw (by [`SoFar::by_counters`]), and a stall of its I/Os (by the
    /// samples so far).
    pub fn findings(
        &mut self,
        root: &SysRoot,
        job: &Job,
        target: &OpenTarget,
        s: &Sample,
        moved: Moved,
        trace: Option<TraceSummary>,
    ) -> Vec<Finding> {
        self.stalls.see(s);
        let mut found = self.by_counters(root, job, target, s, moved, trace);
        let device = target.info.device.as_deref().unwrap_or("");
        found.extend(self.stalls.finding(job, device));
        found.extend(self.known.iter().cloned());
        findings::order(&mut found);
        found
    }

    /// The diskstats findings and the other processes the trace saw, by the trace so far
    /// (`trace`: its summary, or why there is none) as the result's come from the whole
    /// trace. None until half a second has passed (too little to judge), nor while a trace
    /// that runs has not been read yet (`trace` None): without it, a neighbour's reads would
    /// be taken for the test's.
    fn by_counters(
        &mut self,
        root: &SysRoot,
        job: &Job,
        target: &OpenTarget,
        s: &Sample,
        moved: Moved,
        trace: Option<TraceSummary>,
    ) -> Vec<Finding> {
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
        // The others' bytes are the trace's as of its last read (up to a second ago): their
        // share is of the test's bytes at that moment, not of this one's.
        let ours = moved.read_bytes + moved.write_bytes;
        self.history.push((s.elapsed_s, ours));
        let then = bytes_at(&self.history, trace.of_seconds);
        let others = trace
            .traced()
            .then(|| super::findings::others::traced_finding(&trace, job, then, None))
            .flatten();
        act.traced = Some(trace);
        let mut found = findings::analyze(job, moved, &act, crate::sys::page_size());
        found.extend(others);
        found
    }
}

/// The bytes moved `at` seconds into the run, between the samples of `history` (in order):
/// the nearest before it and after it, by time; all so far past the last.
fn bytes_at(history: &[(f64, u64)], at: f64) -> u64 {
    let after = history.partition_point(|&(t, _)| t < at);
    let Some(&(t1, b1)) = history.get(after) else {
        return history.last().map_or(0, |&(_, b)| b);
    };
    let (t0, b0) = after.checked_sub(1).map_or((0.0, 0), |i| history[i]);
    if t1 <= t0 {
        return b1;
    }
    b0 + ((b1 - b0) as f64 * (at - t0) / (t1 - t0)).round() as u64
}

#[cfg(test)]
mod tests {
    use super::bytes_at;

    /// A trace last read at 1.0 s of a test sampled every 0.4 s: the bytes it had moved then,
    /// not the 1.2 s sample's (a dd's share beside a 3 s read test fell 1.02, 0.71, 0.53 over
    /// three samples between two reads).
    #[test]
    fn the_tests_bytes_at_the_traces_last_read() {
        let h = [(0.4, 400), (0.8, 800), (1.2, 1200)];
        assert_eq!(bytes_at(&h, 1.0), 1000);
        assert_eq!(
            bytes_at(&h, 0.2),
            200,
            "before the first sample, from nothing"
        );
        assert_eq!(bytes_at(&h, 0.8), 800);
        assert_eq!(bytes_at(&h, 2.0), 1200, "past the last: all so far");
        assert_eq!(bytes_at(&[], 1.0), 0);
    }
}
