//! Reads during a write-only test: read-modify-write, or someone else's.

use crate::analysis::traced::TraceSummary;
use crate::engine::job::{Mode, Op};
use crate::stats::iostat::Counters;
use crate::units::fmt_size;

use super::super::{Evidence, Finding, Kind};
use super::{Activity, Context, named_others, processes, size};

/// Reads during a write-only test, on the target or a device under it. Real read-modify-write
/// reads about as much as it writes; a few hundred KiB from something else (another program
/// probing the device, udev) must not look like it: at least 10% of the bytes written, and at
/// least 256 KiB.
pub(super) fn read_modify_write(c: &Context) -> Option<Finding> {
    let (job, act) = (c.job, c.act);
    if !matches!(job.op, Op::Write | Op::Randwrite) {
        return None;
    }
    let written = c.moved.write_bytes as f64;
    let (dev, d, read) = act.devices[..act.below_count.max(1)]
        .iter()
        .map(|(dev, d)| (dev, d, reads_of(act, dev, d)))
        .filter(|(_, _, r)| *r >= 262_144.0 && *r >= written * 0.10)
        .max_by(|a, b| a.2.total_cmp(&b.2))?;
    // A file system with blocks smaller than a page (ext4 makes 1K blocks on a small
    // device) reads only the blocks a write covers in part: 1K writes there read
    // nothing, 512-byte ones do.
    let fs_block = act.fs_block.as_ref().filter(|f| f.size < c.page_size);
    let unit = fs_block.map_or(c.page_size, |f| f.size);
    let mut e = Evidence::from([
        ("device_read_bytes", read),
        ("device_reads", d.reads as f64),
        ("test_write_bytes", written),
        ("bs", job.bs as f64),
        ("page_size", c.page_size as f64),
        ("logical_block_size", act.logical_block_size as f64),
    ]);
    if let Some(f) = fs_block {
        e.insert("fs_block", f.size as f64);
    }
    let others = match c.traced() {
        Some(t) => others_traced(t, dev, &mut e),
        None => others_guessed(act, read, &mut e),
    };
    let block = match fs_block {
        Some(f) => format!(
            "{}-byte block of {}",
            f.size,
            f.fs.as_deref().unwrap_or("the file system")
        ),
        None => format!("{}-byte page-cache block", c.page_size),
    };
    let partial_block = job.mode != Mode::Direct && !job.bs.is_multiple_of(unit);
    let lbs = act.logical_block_size;
    Some(
        Finding::new(Kind::ReadModifyWrite, e, |e| {
            let (read, written) = (
                size(e.num("device_read_bytes")),
                size(e.num("test_write_bytes")),
            );
            let what = if partial_block {
                format!(
                    "read-modify-write: {read} was read from {dev} while the test wrote \
                     {written}. Buffered writes of {} bytes cover only part of a {block}, so \
                     the kernel reads the block first, whatever the sector size. Use a block \
                     size that is a multiple of {unit} (--bs {}), or direct I/O with a multiple \
                     of the logical block size ({lbs}).",
                    e.count("bs"),
                    fmt_size(unit),
                )
            } else {
                format!(
                    "read-modify-write: {read} was read from {dev} during a write-only test \
                     ({written} written). Something below the test rewrites partial blocks: a \
                     device underneath with a larger block size, RAID parity, or unaligned \
                     offsets."
                )
            };
            format!("{what}{others}")
        })
        .on(dev.as_str()),
    )
}

/// The bytes read on `dev` during the test that may be the test's: with a trace of the whole
/// test, the test's and the kernel's for it; with windows, diskstats' count in the share the
/// windows give them; without, all diskstats saw.
fn reads_of(act: &Activity, dev: &str, d: &Counters) -> f64 {
    let disk = d.sectors_read as f64 * 512.0;
    // The kernel's reads on the target are the test's (a page read before a write); below
    // it (a loop device's file on its disk), only in the test's share of the target's I/O:
    // a loop worker reads for whoever read the loop device.
    let target = act.devices.first().map(|(n, _)| n.as_str()).unwrap_or(dev);
    let share = |t: &TraceSummary| {
        if dev == target {
            1.0
        } else {
            t.test_share(target)
        }
    };
    match act.traced.as_ref().filter(|t| t.traced()) {
        Some(t) if t.throughout() => t.reads_not_others(dev, share(t)) as f64,
        // In windows: diskstats' count in the share the windows give the test; windows that
        // saw no reads at all give it none (the reads came between them, and whose they were
        // is as the windows say: not the test's).
        Some(t) => {
            let (ours, all) = (t.reads_not_others(dev, share(t)), t.reads_all(dev));
            if all > 0 {
                disk * ours as f64 / all as f64
            } else {
                0.0
            }
        }
        None => disk,
    }
}

/// With a trace: who else read `dev` meanwhile, named as theirs (the words that follow the
/// finding's own).
fn others_traced(t: &TraceSummary, dev: &str, e: &mut Evidence) -> String {
    e.insert("traced", 1.0);
    let who = named_others(t, dev, |o| o.read_bytes);
    if who.is_empty() {
        return " The block layer's trace shows these reads were the test's.".into();
    }
    let others: Vec<String> = who
        .iter()
        .map(|(c, p, b)| format!("{c} (pid {p}) read {}", fmt_size(*b)))
        .collect();
    let theirs: u64 = t.others_on(dev).map(|o| o.counted(o.read_bytes)).sum();
    e.insert("other_read_bytes", theirs as f64);
    e.insert("other_readers", processes(&who, "read_bytes"));
    format!(
        " The block layer's trace shows these reads were the test's; besides them, {} from \
         {dev}: theirs, not counted here.",
        others.join(", ")
    )
}

/// Without a trace: other processes that read at least half as much meanwhile may have made
/// these reads (a build reading vda at 374M/s made an 8M write test on a file there "read
/// 22.7M"); and why it could not be told (while the test runs, whether others read is not
/// known yet: it is said then too).
fn others_guessed(act: &Activity, read: f64, e: &mut Evidence) -> String {
    let mut words = String::new();
    if let Some(other) = act.other_read_bytes
        && other >= 0.5 * read
    {
        e.insert("other_read_bytes", other);
        words = format!(
            " Other processes read {} while the test ran (busy_processes), so some or all of \
             these reads may be theirs: run it again when they are done.",
            size(other)
        );
    }
    if let Some(why) = act.traced.as_ref().and_then(|t| t.why.as_deref())
        && act.other_read_bytes.is_none_or(|o| o > 0.0)
    {
        words += &format!(
            " (The block layer was not traced: {why}; whose reads these were cannot be told.)"
        );
    }
    words
}
