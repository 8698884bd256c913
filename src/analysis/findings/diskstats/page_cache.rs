//! The page cache between the test and its device: buffered writes that never reached it,
//! rewrites that a final fdatasync synced once, reads that memory served.

use crate::analysis::traced::TraceSummary;
use crate::engine::job::Mode;
use crate::units::fmt_size;

use super::super::{Evidence, Finding, Kind};
use super::{Context, size};

/// What reached the target of the test's writes, and other processes' writes there.
struct Reached {
    /// The test's own and the kernel's writeback (for it) on the device.
    test: f64,
    /// Other processes' writes there, as the trace counted them (0 without one).
    others: u64,
    /// The trace's windows, when it was kept in windows over the run.
    windows: Option<u32>,
}

/// Which way the test's bytes went.
#[derive(Clone, Copy, PartialEq)]
enum Way {
    Read,
    Write,
}

/// What reached `target` of the test's writes (or came from it of its reads): with a trace,
/// another process there meanwhile does not hide the trap.
fn reached(t: Option<&TraceSummary>, target: &str, disk: f64, way: Way) -> Reached {
    let untraced = Reached {
        test: disk,
        others: 0,
        windows: None,
    };
    let Some(t) = t else {
        return untraced;
    };
    let (ours, all) = match way {
        Way::Write => (t.writes_not_others(target, 1.0), t.writes_all(target)),
        Way::Read => (t.reads_not_others(target, 1.0), t.reads_all(target)),
    };
    if t.throughout() {
        return Reached {
            test: ours as f64,
            others: all.saturating_sub(ours),
            windows: None,
        };
    }
    // In windows: diskstats' count in the shares the windows saw. Windows that saw no writes
    // cannot say whose diskstats' were, and then they count as the test's (no trap claimed).
    if all == 0 {
        return untraced;
    }
    let share = |n: u64| disk * n as f64 / all as f64;
    Reached {
        test: share(ours),
        others: share(all.saturating_sub(ours)) as u64,
        windows: Some(t.windows),
    }
}

/// The test's bytes that the page cache kept from the device: buffered writes, writes a
/// final fdatasync synced once though the run wrote them many times, reads memory served.
pub(super) fn page_cache(c: &Context) -> Option<Finding> {
    if !on_its_device(c) {
        return None;
    }
    unsynced_writes(c).or_else(|| cached_reads(c))
}

/// Whether the target's bytes all lie on the device whose counters are read: a block device,
/// or a file on a file system that places its files on its one device (not btrfs, whose
/// mirror or stripe on another device may hold part of them).
fn on_its_device(c: &Context) -> bool {
    match &c.act.fs_block {
        None => true,
        Some(b) => {
            b.fs.as_deref()
                .is_some_and(crate::device::extents::maps_onto_its_device)
        }
    }
}

/// Buffered writes that never reached the device; and those of a `--mode fdatasync` run that
/// wrote its blocks more than once (a timed run wraps around its region), of which the final
/// fdatasync wrote the last copy only. Not judged live for fdatasync: its sync is at the end.
fn unsynced_writes(c: &Context) -> Option<Finding> {
    let (job, target) = (c.job, c.name);
    let synced_at_end = job.mode == Mode::Fdatasync;
    if !job.op.writes()
        || !(job.mode == Mode::Buffered || synced_at_end && c.act.ended)
        || c.moved.write_bytes == 0
    {
        return None;
    }
    let e = short_of_the_device(c, Way::Write)?;
    let why = match synced_at_end {
        false => {
            "the rest waited in the page cache, so the result measured memory, not the \
                  device. Use --mode fdatasync (dd conv=fdatasync) or --mode direct."
        }
        true => {
            "the test wrote the same blocks again and again (a timed run wraps around its \
                 region) and the final fdatasync wrote only the last copy of each, so the \
                 result counts the rewrites at memory's speed, not the device's. Give a --size \
                 without --runtime (one pass, as dd conv=fdatasync does), or use --mode direct."
        }
    };
    Some(
        Finding::new(Kind::PageCache, e, move |e| {
            format!(
                "only {} of the {} written reached {target} while the test ran: {why}{}",
                size(e.num("device_write_bytes")),
                size(e.num("test_write_bytes")),
                others_words(e, "others_write_bytes", "wrote")
            )
        })
        .on(target.as_str()),
    )
}

/// Reads through the page cache that memory served: less than half of what the test read
/// came from the device. `--mode nocache` empties the cache of the target's pages before the
/// run only, so a timed run over a region that fits in memory reads it from the device once.
fn cached_reads(c: &Context) -> Option<Finding> {
    let (job, target) = (c.job, c.name);
    if !job.op.reads() || job.mode == Mode::Direct || c.moved.read_bytes == 0 {
        return None;
    }
    let e = short_of_the_device(c, Way::Read)?;
    let why = match job.mode {
        Mode::Nocache => {
            "the rest came from the page cache, which --mode nocache empties \
                          before the run only: a run that goes over its region again and \
                          again (a timed run wraps around it) reads memory after its first \
                          pass, so the result measured memory, not the device. Give a --size \
                          without --runtime (one pass), or use --mode direct."
        }
        _ => {
            "the rest came from the page cache, so the result measured memory, not the \
              device. Use --mode nocache (one pass over a region) or --mode direct."
        }
    };
    Some(
        Finding::new(Kind::PageCache, e, move |e| {
            format!(
                "only {} of the {} read came from {target} while the test ran: {why}{}",
                size(e.num("device_read_bytes")),
                size(e.num("test_read_bytes")),
                others_words(e, "others_read_bytes", "read")
            )
        })
        .on(target.as_str()),
    )
}

/// The evidence where less than half of what the test moved `way` reached its device (or
/// came from it): `device_write_bytes` and `test_write_bytes` (or `_read_`), and other
/// processes' bytes there as the trace saw them (`others_write_bytes`, in `trace_windows`).
fn short_of_the_device(c: &Context, way: Way) -> Option<Evidence> {
    let (sectors, moved, [device, test, others]) = match way {
        Way::Write => (
            c.counters.sectors_written,
            c.moved.write_bytes,
            [
                "device_write_bytes",
                "test_write_bytes",
                "others_write_bytes",
            ],
        ),
        Way::Read => (
            c.counters.sectors_read,
            c.moved.read_bytes,
            ["device_read_bytes", "test_read_bytes", "others_read_bytes"],
        ),
    };
    let r = reached(c.traced(), c.name, sectors as f64 * 512.0, way);
    if r.test >= moved as f64 * 0.5 {
        return None;
    }
    let mut e = Evidence::from([(device, r.test), (test, moved as f64)]);
    if r.others > 0 {
        e.insert(others, r.others);
        if let Some(n) = r.windows {
            e.insert("trace_windows", n);
        }
    }
    Some(e)
}

/// Other processes' bytes on the device (`key`), left out of what reached it of the test's.
fn others_words(e: &Evidence, key: &str, did: &str) -> String {
    let b = e.count(key);
    if b == 0 {
        return String::new();
    }
    let trace = match e.count("trace_windows") {
        0 => "The block layer's trace".to_string(),
        1 => "The block layer's trace, in one window of the run, each process's share of it \
              taken for the whole run"
            .to_string(),
        n => format!(
            "The block layer's trace, in {n} windows over the run, each process's share of them \
             taken for the whole run"
        ),
    };
    format!(
        " ({trace}: other processes {did} {} there meanwhile, not counted.)",
        fmt_size(b)
    )
}
