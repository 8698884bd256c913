//! Buffered writes that never reached the device.

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

/// What reached `target` of the test's writes: with a trace, another process writing there
/// meanwhile does not hide the trap.
fn reached(t: Option<&TraceSummary>, target: &str, disk: f64) -> Reached {
    let untraced = Reached {
        test: disk,
        others: 0,
        windows: None,
    };
    let Some(t) = t else {
        return untraced;
    };
    let (ours, all) = (t.writes_not_others(target, 1.0), t.writes_all(target));
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

/// Buffered writes that never reached the device.
pub(super) fn page_cache(c: &Context) -> Option<Finding> {
    let (job, target) = (c.job, c.name);
    if !job.op.writes() || job.mode != Mode::Buffered || c.moved.write_bytes == 0 {
        return None;
    }
    let disk = c.counters.sectors_written as f64 * 512.0;
    let r = reached(c.traced(), target, disk);
    let written = c.moved.write_bytes as f64;
    if r.test >= written * 0.5 {
        return None;
    }
    let mut e = Evidence::from([
        ("device_write_bytes", r.test),
        ("test_write_bytes", written),
    ]);
    if r.others > 0 {
        e.insert("others_write_bytes", r.others);
        if let Some(n) = r.windows {
            e.insert("trace_windows", n);
        }
    }
    Some(
        Finding::new(Kind::PageCache, e, |e| {
            format!(
                "only {} of the {} written reached {target} while the test ran: the rest waited \
                 in the page cache, so the result measured memory, not the device. Use \
                 --mode fdatasync (dd conv=fdatasync) or --mode direct.{}",
                size(e.num("device_write_bytes")),
                size(e.num("test_write_bytes")),
                others_words(e)
            )
        })
        .on(target.as_str()),
    )
}

/// Other processes' writes on the device, left out of what reached it of the test's.
fn others_words(e: &Evidence) -> String {
    let b = e.count("others_write_bytes");
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
        " ({trace}: other processes wrote {} there meanwhile, not counted.)",
        fmt_size(b)
    )
}
