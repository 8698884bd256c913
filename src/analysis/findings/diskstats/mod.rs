//! What the diskstats of the devices under a test mean, judged against its job:
//! read-modify-write (`reads`), flushes and the write cache (`flushes`), %util (`util`), the
//! page cache (`page_cache`), statistics turned off (here).

mod flushes;
mod page_cache;
mod reads;
#[cfg(test)]
pub(super) mod tests;
mod util;

use crate::analysis::traced::{SubmitterIo, TraceSummary};
use crate::engine::job::Job;
use crate::engine::target::FsBlock;
use crate::stats::IostatX;
use crate::stats::iostat::{Counters, compute};
use crate::units::fmt_size;

use super::{Evidence, Figure, Finding, Kind};
use flushes::{flushes, write_cache};
use page_cache::page_cache;
use reads::read_modify_write;
use util::util_saturation;

/// What the devices under a test did while it ran.
#[derive(Debug, Clone)]
pub struct Activity {
    /// The target's device first (for a file target: the device holding the file), then the
    /// devices it is built on, then those built on it. Each with its counter deltas.
    pub devices: Vec<(String, Counters)>,
    /// Seconds between the two readings.
    pub seconds: f64,
    /// Devices whose `queue/iostats` is 0.
    pub stats_off: Vec<String>,
    /// The target's logical block size.
    pub logical_block_size: u64,
    /// `write back` or `write through`, where known.
    pub write_cache: Option<String>,
    /// Whether the target's device keeps its data in RAM (zram, a RAM disk).
    pub in_ram: bool,
    /// Whether it is a loop device: its write cache is its backing file's page cache.
    pub loop_device: bool,
    /// How many of `devices` (from the start) are the target and what it is built on, but for
    /// the whole disk of a partition among them (its counters hold its partitions' I/O).
    pub below_count: usize,
    /// For a file target: its file system's block, the unit buffered writes read in when it is
    /// smaller than a page (a block device's page cache reads whole pages).
    pub fs_block: Option<FsBlock>,
    /// Bytes other processes read while the test ran, when they moved enough to be named
    /// (`busy_processes`); else 0. None while the test runs (/proc/PID/io is read at its end).
    pub other_read_bytes: Option<f64>,
    /// Whether the test has ended (a final fdatasync done); false while it runs.
    pub ended: bool,
    /// What the block layer's tracepoints said of the test (or why it was not traced): with it,
    /// reads are the test's or the kernel's on each device, and other processes' are theirs.
    pub traced: Option<TraceSummary>,
}

/// Bytes a test moved, as the engine counted them.
#[derive(Debug, Clone, Copy)]
pub struct Moved {
    pub read_bytes: u64,
    pub write_bytes: u64,
}

/// What the findings of this file look at: the test's job, what it moved, what the devices
/// under it did, and the page size.
struct Context<'a> {
    job: &'a Job,
    moved: Moved,
    act: &'a Activity,
    page_size: u64,
    /// The target's device: its name, counter deltas and `iostat -x` figures.
    name: &'a String,
    counters: &'a Counters,
    x: IostatX,
}

impl Context<'_> {
    /// The trace of the test, where there is one.
    fn traced(&self) -> Option<&TraceSummary> {
        self.act.traced.as_ref().filter(|t| t.traced())
    }
}

pub(super) fn size(b: f64) -> String {
    fmt_size(b as u64)
}

/// Explains the diskstats of a test run: each finding is a step of its own.
pub fn analyze(job: &Job, moved: Moved, act: &Activity, page_size: u64) -> Vec<Finding> {
    let Some((target, td)) = act.devices.first() else {
        return Vec::new();
    };
    if act.stats_off.iter().any(|d| d == target) {
        return vec![stats_off(target)];
    }
    let c = Context {
        job,
        moved,
        act,
        page_size,
        name: target,
        counters: td,
        x: compute(target, td, act.seconds),
    };
    [
        read_modify_write(&c),
        flushes(&c),
        write_cache(&c),
        util_saturation(&c),
        page_cache(&c),
    ]
    .into_iter()
    .flatten()
    .collect()
}

fn stats_off(target: &str) -> Finding {
    Finding::new(Kind::StatsOff, Evidence::new().with("iostats", 0u64), |_| {
        format!(
            "the kernel keeps no I/O statistics for {target} (queue/iostats = 0): its diskstats \
             are zeros, not idleness; turn them on with: echo 1 > /sys/block/{target}/queue/iostats"
        )
    })
    .on(target)
}

/// The other processes a finding names on `dev`: the first three with some of `what` (their
/// flushes, their bytes read), as (comm, pid, that count).
pub(super) fn named_others(
    t: &TraceSummary,
    dev: &str,
    what: impl Fn(&SubmitterIo) -> u64,
) -> Vec<(String, u32, u64)> {
    t.others_on(dev)
        .filter(|o| what(o) > 0)
        .take(3)
        .map(|o| (o.comm.clone(), o.pid, what(o)))
        .collect()
}

/// Processes a finding names, each with a count (`what`: its flushes, its bytes), as evidence.
pub(super) fn processes(named: &[(String, u32, u64)], what: &str) -> Figure {
    let record = |(comm, pid, n): &(String, u32, u64)| {
        Figure::record([
            ("comm", comm.as_str().into()),
            ("pid", (*pid).into()),
            (what, (*n).into()),
        ])
    };
    Figure::List(named.iter().map(record).collect())
}
