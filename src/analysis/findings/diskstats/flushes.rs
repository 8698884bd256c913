//! Flushes during a write test, and what the write cache makes of its sync writes.

use crate::analysis::traced::TraceSummary;
use crate::engine::job::Mode;

use super::super::{Evidence, Finding, Kind};
use super::{Context, named_others, processes};

/// Flushes during the test. fdatasync mode ends with one flush per job by design.
pub(super) fn flushes(c: &Context) -> Option<Finding> {
    let (job, target, td, x) = (c.job, c.name, c.counters, &c.x);
    let expected_flushes = if job.mode == Mode::Fdatasync {
        2 * job.jobs as u64
    } else {
        0
    };
    // With a trace, only the flushes the test (or the kernel for it) sent are its own; another
    // process's (dd oflag=dsync beside it) are named as theirs.
    let (ours, others) = match c.traced() {
        Some(t) => {
            let (ours, all) = t.flushes_on(target, 1.0);
            let ours = flushes_now(c, t, ours);
            let others = named_others(t, target, |o| o.flushes);
            match all {
                // None in the trace (a device that makes its own): all of diskstats'.
                0 => (td.flushes, others),
                // The trace's own count (in windows, as many a written byte as they saw). The
                // kernel sends flushes asked for together as one request, and diskstats counts
                // requests: a share of them took a flush-heavy neighbour's merging from the
                // test (46 of its 64 traced throughout; 20 and 94 in windows).
                _ => ((ours.round() as u64).min(td.flushes), others),
            }
        }
        None => (td.flushes, Vec::new()),
    };
    if ours <= expected_flushes || !job.op.writes() {
        return None;
    }
    let all = td.flushes.max(1) as f64;
    let mut e = Evidence::from([
        ("flushes", ours as f64),
        ("f/s", x.f_s),
        ("f_await", x.f_await),
        ("w/s", x.w_s),
        // The test's flushes a second: its share of the device's.
        ("test_f/s", x.f_s * ours as f64 / all),
    ]);
    if !others.is_empty() {
        e.insert("others_flushing", processes(&others, "flushes"));
    }
    let why = flushes_why(c);
    let theirs = match others.is_empty() {
        true => String::new(),
        false => format!(
            " Besides them, the block layer's trace saw other processes' flushes: {}; theirs, \
             not counted here.",
            others
                .iter()
                .map(|(comm, pid, flushes)| format!("{comm} (pid {pid}): {flushes}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    Some(
        Finding::new(Kind::Flushes, e, |e| {
            format!(
                "{} cache flushes reached {target} ({:.0}/s, {:.2} ms each on average): \
                 {why}{theirs}",
                e.num("flushes"),
                e.num("test_f/s"),
                e.num("f_await"),
            )
        })
        .on(target.as_str()),
    )
}

/// `ours` (the test's flushes and the kernel's for it, as the trace has them) with the test's
/// own brought to the engine's count of its writes, as many a written byte as the trace saw:
/// the trace is read once a second or at its windows' ends, the engine's count is of now, so a
/// live sample said the count of the last read beside this moment's rates (57 flushes at 1.0 s
/// of a test that had sent 2145). At the end the two counts are one where the test's bytes
/// are its bios.
fn flushes_now(c: &Context, t: &TraceSummary, ours: f64) -> f64 {
    let (written, flushes) = t.test_writes_and_flushes(c.name);
    if written == 0 || c.moved.write_bytes == 0 {
        return ours;
    }
    let f = flushes as f64;
    ours - f + f * c.moved.write_bytes as f64 / written as f64
}

/// What the flushes of a write test mean for its mode, in the words of its device (a drive's
/// volatile cache; a loop device's backing file).
fn flushes_why(c: &Context) -> String {
    let cache = match c.act.write_cache.as_deref() {
        Some(w) => format!(" (write cache: {w})"),
        None => String::new(),
    };
    let (target, lo) = (c.name, c.act.loop_device);
    // What a flush does, after "waits until" and after "makes".
    let (done, make) = if lo {
        (
            format!(
                "{target} has synced its backing file{cache}, the disk under it flushing its own cache"
            ),
            format!(
                "{target} sync its backing file{cache}, the disk under it flushing its own cache,"
            ),
        )
    } else {
        (
            format!("the drive has written its volatile cache{cache}"),
            format!("the drive write its volatile cache{cache}"),
        )
    };
    match c.job.mode {
        Mode::Dsync | Mode::Sync => format!(
            "with {} every write waits until {done}; that wait, not the transfer, is what \
             sync writes cost.{}",
            if c.job.mode == Mode::Dsync {
                "O_DSYNC"
            } else {
                "O_SYNC"
            },
            if lo {
                ""
            } else {
                " A drive with power-loss protection, or with its cache in write through mode, \
                 pays less per write."
            }
        ),
        _ => {
            let whose = match (
                c.traced(),
                c.act.traced.as_ref().and_then(|t| t.why.as_deref()),
            ) {
                (Some(_), _) => "by the block layer's trace they were the test's, or the \
                                 kernel's on its behalf (a file system's journal, writeback)"
                    .to_string(),
                (None, Some(why)) => format!(
                    "another process may have asked for them (the block layer was not traced: \
                     {why}; whose flushes these were cannot be told)"
                ),
                (None, None) => "another process may have asked for them".to_string(),
            };
            format!(
                "each makes {make} before going on; this test's mode asks for none, and {whose}."
            )
        }
    }
}

/// Sync writes: what the drive's write cache setting means for them.
pub(super) fn write_cache(c: &Context) -> Option<Finding> {
    let (job, act, target) = (c.job, c.act, c.name);
    if !job.op.writes() || !matches!(job.mode, Mode::Dsync | Mode::Sync) {
        return None;
    }
    let cache = act.write_cache.as_deref()?;
    let e = Evidence::from([
        ("write_back", if cache == "write back" { 1.0 } else { 0.0 }),
        ("in_ram", if act.in_ram { 1.0 } else { 0.0 }),
        ("loop", if act.loop_device { 1.0 } else { 0.0 }),
        ("w_await", c.x.w_await),
    ]);
    Some(
        Finding::new(Kind::WriteCache, e, |e| {
            let why = if e.num("loop") == 1.0 {
                "a loop device's cache is its backing file's page cache: a sync write there \
                 waits until the file is synced, which is the file system and the disk under \
                 it at work (their journal, their cache flush), not a drive's cache of its own. \
                 Measure sync latency on the disk that is to hold the data."
            } else if e.num("in_ram") == 1.0 {
                "it keeps its data in RAM, so a sync write has no cache to flush and no media to \
                 wait for: its latency is a memory copy (and, for zram, compression), far below \
                 what a sync write costs on any disk, and nothing written survives a reboot or \
                 a power loss. Measure sync latency on the disk that is to hold the data."
            } else if e.num("write_back") == 1.0 {
                "the drive has a volatile write cache (write back): each sync write waits for a \
                 cache flush. Turning the cache off (hdparm -W0) makes every write go to the \
                 media and can cost many times the latency (article 000: 30x to 100x, 0.36 ms \
                 vs 11.2 ms per 512-byte write); leave it on unless the drive lies about \
                 flushes, and compare drives with the same setting."
            } else {
                "the drive's cache is in write through mode: writes reach the media (or a \
                 power-safe cache) before they complete, so no flush is needed, and sync \
                 latency is what the media does. With a volatile cache on (write back) they \
                 would wait for flushes instead."
            };
            format!("write cache \"{cache}\" on {target}: {why}")
        })
        .on(target.as_str()),
    )
}
