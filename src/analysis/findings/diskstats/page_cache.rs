//! Buffered writes that never reached the device.

use crate::engine::job::Mode;
use crate::units::fmt_size;

use super::super::{Evidence, Finding, Kind};
use super::{Context, size};

/// Buffered writes that never reached the device.
pub(super) fn page_cache(c: &Context) -> Option<Finding> {
    let (job, target) = (c.job, c.name);
    if !job.op.writes() || job.mode != Mode::Buffered || c.moved.write_bytes == 0 {
        return None;
    }
    // What reached the device of the test's (its own and the kernel's writeback): with a trace
    // of the whole test, another process writing there meanwhile does not hide the trap.
    let (reached, others) = match c.act.traced.as_ref().filter(|t| t.mode == "on") {
        Some(t) => (
            t.writes_not_others(target, 1.0) as f64,
            t.others_on(target)
                .map(|o| o.counted(o.write_bytes))
                .sum::<u64>(),
        ),
        None => (c.counters.sectors_written as f64 * 512.0, 0),
    };
    let written = c.moved.write_bytes as f64;
    if reached >= written * 0.5 {
        return None;
    }
    let mut e = Evidence::from([
        ("device_write_bytes", reached),
        ("test_write_bytes", written),
    ]);
    if others > 0 {
        e.insert("others_write_bytes", others);
    }
    Some(
        Finding::new(Kind::PageCache, e, |e| {
            let theirs = match e.count("others_write_bytes") {
                0 => String::new(),
                b => format!(
                    " (The block layer's trace: other processes wrote {} there meanwhile, not \
                     counted.)",
                    fmt_size(b)
                ),
            };
            format!(
                "only {} of the {} written reached {target} while the test ran: the rest waited \
                 in the page cache, so the result measured memory, not the device. Use \
                 --mode fdatasync (dd conv=fdatasync) or --mode direct.{theirs}",
                size(e.num("device_write_bytes")),
                size(e.num("test_write_bytes"))
            )
        })
        .on(target.as_str()),
    )
}
