//! What the diskstats of the devices under a test mean, judged against its job:
//! read-modify-write, flushes, the write cache, %util, the page cache, statistics turned off.

use crate::analysis::traced::TraceSummary;
use crate::engine::job::{Job, Mode, Op};
use crate::engine::target::FsBlock;
use crate::stats::IostatX;
use crate::stats::iostat::{Counters, compute};
use crate::units::fmt_size;

use super::{Evidence, Figure, Finding, Kind};

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
    /// How many of `devices` (from the start) are the target and what it is built on.
    pub below_count: usize,
    /// For a file target: its file system's block, the unit buffered writes read in when it is
    /// smaller than a page (a block device's page cache reads whole pages).
    pub fs_block: Option<FsBlock>,
    /// Bytes other processes read while the test ran, when they moved enough to be named
    /// (`busy_processes`); else 0. None while the test runs (/proc/PID/io is read at its end).
    pub other_read_bytes: Option<f64>,
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

fn size(b: f64) -> String {
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

/// Reads during a write-only test, on the target or a device under it. Real read-modify-write
/// reads about as much as it writes; a few hundred KiB from something else (another program
/// probing the device, udev) must not look like it: at least 10% of the bytes written, and at
/// least 256 KiB.
fn read_modify_write(c: &Context) -> Option<Finding> {
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
        Some(t) if t.mode == "on" => t.reads_not_others(dev, share(t)) as f64,
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
    let who: Vec<(String, u32, u64)> = t
        .others_on(dev)
        .filter(|o| o.read_bytes > 0)
        .take(3)
        .map(|o| (o.comm.clone(), o.pid, o.read_bytes))
        .collect();
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

/// Flushes during the test. fdatasync mode ends with one flush per job by design.
fn flushes(c: &Context) -> Option<Finding> {
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
            let others: Vec<(String, u32, u64)> = t
                .others_on(target)
                .filter(|o| o.flushes > 0)
                .take(3)
                .map(|o| (o.comm.clone(), o.pid, o.flushes))
                .collect();
            match all {
                // None in the trace (a device that makes its own): all of diskstats'.
                0 => (td.flushes, others),
                _ => (
                    (td.flushes as f64 * ours / all as f64).round() as u64,
                    others,
                ),
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

/// Processes a finding names, each with a count (`what`: its flushes, its bytes), as evidence.
fn processes(named: &[(String, u32, u64)], what: &str) -> Figure {
    let record = |(comm, pid, n): &(String, u32, u64)| {
        Figure::record([
            ("comm", comm.as_str().into()),
            ("pid", (*pid).into()),
            (what, (*n).into()),
        ])
    };
    Figure::List(named.iter().map(record).collect())
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
fn write_cache(c: &Context) -> Option<Finding> {
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

/// %util next to the queue depth.
fn util_saturation(c: &Context) -> Option<Finding> {
    let (target, td, x) = (c.name, c.counters, &c.x);
    if td.reads + td.writes == 0 || c.act.seconds < 0.5 {
        return None;
    }
    let mut e = Evidence::from([
        ("util", x.util),
        ("aqu-sz", x.aqu_sz),
        ("r/s", x.r_s),
        ("w/s", x.w_s),
        ("r_await", x.r_await),
        ("w_await", x.w_await),
    ]);
    let others = others_busy(c.act, target, &mut e);
    let asked = c.job.iodepth as u64 * c.job.jobs as u64;
    e.insert("in_flight_asked", asked);
    let f = if x.util >= 95.0 && x.aqu_sz < 1.5 {
        Finding::new(Kind::UtilSaturation, e, |e| {
            format!(
                "%util is {:.0}% with {:.1} requests in flight on average: %util is the share \
                 of time with at least one request in flight, not capacity. {}{others}",
                e.num("util"),
                e.num("aqu-sz"),
                util_advice(asked, e.num("aqu-sz")),
            )
        })
    } else if x.util < 90.0 && x.aqu_sz >= 4.0 {
        Finding::new(Kind::UtilSaturation, e, |e| {
            format!(
                "%util is {:.0}% although {:.1} requests were queued on average: %util counts \
                 busy time, so it says little about how close a parallel device is to its \
                 limit; read it next to aqu-sz, IOPS and latency.{others}",
                e.num("util"),
                e.num("aqu-sz"),
            )
        })
    } else {
        return None;
    };
    Some(f.on(target.as_str()))
}

/// What to do about a device busy all the time with little in flight. When the test kept more
/// in flight than reached the device, a deeper queue is not the advice (docs/architecture.md,
/// "util_saturation with io-wq").
fn util_advice(asked: u64, aqu_sz: f64) -> String {
    if asked as f64 >= 2.0 * aqu_sz.max(1.0) {
        format!(
            "The test kept {asked} I/Os in flight, yet the device had {aqu_sz:.1} on average: \
             the rest waited above it, in the kernel. One cause: a driver that cannot take an \
             I/O without blocking (zram) has io_uring hand the I/Os to a kernel worker thread, \
             and a worker that never has to wait runs them one after another, so a deeper \
             queue only waits longer there; more jobs (--jobs N, a worker each) run in \
             parallel."
        )
    } else {
        "A device that serves requests in parallel (SSD, NVMe, RAID) can often do more with a \
         deeper queue (--iodepth 32 or --jobs 4)."
            .to_string()
    }
}

/// With a trace, another process's share of the device's I/O while the test ran: %util and
/// aqu-sz count its requests too, so the figures are not the test's alone.
fn others_busy(act: &Activity, target: &str, e: &mut Evidence) -> String {
    let Some(t) = act.traced.as_ref().filter(|t| t.traced()) else {
        return String::new();
    };
    let (theirs, who) = t.others_moved(target);
    let all: u64 = theirs + t.reads_not_others(target, 1.0) + t.writes_not_others(target, 1.0);
    // Under a tenth of the bytes: the figures are the test's, near enough.
    if who.is_empty() || theirs * 10 < all {
        return String::new();
    }
    let named: Vec<String> = who
        .iter()
        .map(|(c, p, b)| format!("{c} (pid {p}) {}", fmt_size(*b)))
        .collect();
    e.insert("others_bytes", theirs);
    e.insert("device_bytes", all);
    e.insert("named", processes(&who, "bytes"));
    format!(
        " Other processes moved {} of the {} on {target} meanwhile ({}): %util and aqu-sz \
         count their requests too, so these figures are not the test's alone.",
        fmt_size(theirs),
        fmt_size(all),
        named.join(", ")
    )
}

/// Buffered writes that never reached the device.
fn page_cache(c: &Context) -> Option<Finding> {
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

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::analysis::traced::{SubmitterIo, TraceSummary};
    use crate::trace::tally::Who;

    #[test]
    fn flushes_a_direct_test_did_not_ask_for_say_whose_they_may_be() {
        let d = Counters {
            writes: 512,
            sectors_written: 4096,
            flushes: 300,
            ..Default::default()
        };
        let moved = Moved {
            read_bytes: 0,
            write_bytes: 131_072,
        };
        let mut a = act(d, 2.0);
        a.traced = Some(crate::analysis::traced::TraceSummary::off("--no-trace"));
        let f = analyze(&job(Op::Write, 4096, Mode::Direct), moved, &a, 4096);
        let fl = f.iter().find(|f| f.kind == "flushes").expect("flushes");
        println!("{}", fl.message);
        assert!(
            fl.message
                .contains("this test's mode asks for none, and another process may have asked")
                && fl
                    .message
                    .contains("not traced: --no-trace; whose flushes these were cannot be told")
                && fl.message.contains(
                    "each makes the drive write its volatile cache (write cache: write back) before"
                ),
            "{}",
            fl.message
        );
        // On a loop device, in its words: a flush syncs the backing file; a sync test's
        // write-cache note speaks of the file, not of a drive.
        a.loop_device = true;
        let f = analyze(&job(Op::Write, 4096, Mode::Dsync), moved, &a, 4096);
        let words: Vec<&str> = f
            .iter()
            .filter(|f| f.kind == "flushes" || f.kind == "write_cache")
            .map(|f| f.message.as_str())
            .collect();
        println!("{words:#?}");
        assert_eq!(words.len(), 2, "{words:?}");
        assert!(
            words.iter().all(|m| !m.contains("the drive"))
                && words[0]
                    .contains("until loop0 has synced its backing file (write cache: write back)"),
            "{words:?}"
        );
    }

    #[test]
    fn another_process_busy_on_the_device_is_named_beside_util() {
        let with = |other: u64| {
            let mut a = act(Counters::default(), 2.0);
            a.traced = Some(traced_throughout(vec![
                io(Who::Test, "blkscope", 10, 100 << 20),
                io(Who::Other, "dd", 4503, other),
            ]));
            others_busy(&a, "loop0", &mut Evidence::new())
        };
        let m = with(300 << 20);
        println!("{m}");
        assert!(
            m.contains("Other processes moved 300M of the 400M on loop0")
                && m.contains("dd (pid 4503) 300M"),
            "{m}"
        );
        assert_eq!(with(5 << 20), "", "under a tenth: the test's, near enough");
        assert_eq!(
            others_busy(
                &act(Counters::default(), 2.0),
                "loop0",
                &mut Evidence::new()
            ),
            "",
            "no trace"
        );
    }

    /// What `pid` (`comm`) read on loop0, as a trace's submitter.
    fn io(who: Who, comm: &str, pid: u32, read_bytes: u64) -> SubmitterIo {
        SubmitterIo {
            device: "loop0".into(),
            disk: None,
            backing_file_of: None,
            who,
            pid,
            comm: comm.into(),
            read_bytes,
            write_bytes: 0,
            ios: 1,
            flushes: 0,
            ancestors: Vec::new(),
            weight: 1.0,
        }
    }

    /// A 2 s test traced throughout, its submitters `submitters`.
    fn traced_throughout(submitters: Vec<SubmitterIo>) -> TraceSummary {
        TraceSummary {
            mode: "on",
            why: None,
            seconds: 2.0,
            of_seconds: 2.0,
            windows: 1,
            read_as: Some("pages"),
            events: 10,
            submitters,
            ..TraceSummary::off("")
        }
    }

    fn act(d: Counters, seconds: f64) -> Activity {
        Activity {
            devices: vec![("loop0".into(), d)],
            seconds,
            stats_off: vec![],
            logical_block_size: 4096,
            write_cache: Some("write back".into()),
            in_ram: false,
            loop_device: false,
            below_count: 1,
            fs_block: None,
            other_read_bytes: Some(0.0),
            traced: None,
        }
    }

    pub(in crate::analysis::findings) fn job(op: Op, bs: u64, mode: Mode) -> Job {
        Job {
            op,
            bs,
            mode,
            ..Job::default()
        }
    }

    #[test]
    fn rmw_for_small_buffered_writes() {
        // 100 MB written in 512-byte buffered writes; the device read 100 MB in 4 KiB reads.
        let d = Counters {
            reads: 25_000,
            sectors_read: 200_000,
            writes: 1000,
            sectors_written: 200_000,
            ..Default::default()
        };
        let moved = Moved {
            read_bytes: 0,
            write_bytes: 102_400_000,
        };
        let f = analyze(
            &job(Op::Write, 512, Mode::Fdatasync),
            moved,
            &act(d, 2.0),
            4096,
        );
        let rmw = f
            .iter()
            .find(|f| f.kind == "read_modify_write")
            .expect("rmw");
        assert_eq!(rmw.numbers["device_read_bytes"], 102_400_000.0);
        assert!(rmw.message.contains("--bs 4K"), "{}", rmw.message);
        assert!(rmw.message.contains("part of a 4096-byte page-cache block"));
        // In a file on a file system with 1K blocks, the block it reads is the file system's.
        let mut a = act(d, 2.0);
        a.fs_block = Some(FsBlock {
            fs: Some("ext4".into()),
            size: 1024,
            unwritten: false,
        });
        let f = analyze(&job(Op::Write, 512, Mode::Fdatasync), moved, &a, 4096);
        let rmw = f.iter().find(|f| f.kind == "read_modify_write").unwrap();
        println!("{}", rmw.message);
        assert!(
            rmw.message.contains("part of a 1024-byte block of ext4")
                && rmw.message.contains("multiple of 1024 (--bs 1K)"),
            "{}",
            rmw.message
        );
        // Other processes that read half as much or more may have made the reads.
        let mut a = act(d, 2.0);
        a.other_read_bytes = Some(60e6);
        let f = analyze(&job(Op::Write, 512, Mode::Fdatasync), moved, &a, 4096);
        let rmw = f.iter().find(|f| f.kind == "read_modify_write").unwrap();
        assert!(
            rmw.message.ends_with(
                "so some or all of these reads may be theirs: run it again when they are done."
            ),
            "{}",
            rmw.message
        );
        assert_eq!(rmw.numbers["other_read_bytes"], 60e6);
        a.other_read_bytes = Some(10e6);
        let f = analyze(&job(Op::Write, 512, Mode::Fdatasync), moved, &a, 4096);
        let rmw = f.iter().find(|f| f.kind == "read_modify_write").unwrap();
        assert!(!rmw.message.contains("may be theirs"), "{}", rmw.message);
        assert!(!rmw.numbers.contains_key("other_read_bytes"));
        // No reads at 4 KiB: no finding.
        let d = Counters {
            writes: 1000,
            sectors_written: 200_000,
            ..Default::default()
        };
        let f = analyze(
            &job(Op::Write, 4096, Mode::Fdatasync),
            moved,
            &act(d, 2.0),
            4096,
        );
        assert!(f.iter().all(|f| f.kind != "read_modify_write"));
        // Reads during a read test are not read-modify-write.
        let d = Counters {
            reads: 25_000,
            sectors_read: 200_000,
            ..Default::default()
        };
        let f = analyze(
            &job(Op::Read, 512, Mode::Buffered),
            moved,
            &act(d, 2.0),
            4096,
        );
        assert!(f.iter().all(|f| f.kind != "read_modify_write"));
    }

    /// Read-modify-write with a trace that names two other readers: each one's pid and bytes
    /// are the evidence's (a fresh-clone CI run named "cargo (pid 21294) read 104K" with
    /// neither in it, and the sentence check stopped the test).
    #[test]
    fn other_readers_beside_traced_rmw_are_named_from_the_evidence() {
        let d = Counters {
            reads: 25_000,
            sectors_read: 200_000,
            writes: 1000,
            sectors_written: 200_000,
            ..Default::default()
        };
        let mut a = act(d, 2.0);
        a.traced = Some(traced_throughout(vec![
            io(Who::Test, "blkscope", 10, 90 << 20),
            io(Who::Other, "dd", 4503, 6 << 20),
            io(Who::Other, "cat", 4510, 3 << 20),
        ]));
        let moved = Moved {
            read_bytes: 0,
            write_bytes: 102_400_000,
        };
        let f = analyze(&job(Op::Write, 512, Mode::Fdatasync), moved, &a, 4096);
        let rmw = f.iter().find(|f| f.kind == "read_modify_write").unwrap();
        println!("{} {:?}", rmw.message, rmw.numbers);
        assert!(
            rmw.message
                .contains("dd (pid 4503) read 6M, cat (pid 4510) read 3M"),
            "{}",
            rmw.message
        );
        assert_eq!(
            super::super::told::unexplained(&rmw.message, &rmw.numbers),
            Vec::<String>::new()
        );
    }

    #[test]
    fn a_little_foreign_reading_is_not_rmw() {
        // 264 KiB read by another program's probe while 16 MiB were written.
        let d = Counters {
            reads: 3,
            sectors_read: 528,
            writes: 4096,
            sectors_written: 32768,
            ..Default::default()
        };
        let moved = Moved {
            read_bytes: 0,
            write_bytes: 16 << 20,
        };
        let f = analyze(
            &job(Op::Randwrite, 4096, Mode::Direct),
            moved,
            &act(d, 1.0),
            4096,
        );
        assert!(f.iter().all(|f| f.kind != "read_modify_write"), "{f:?}");
    }

    #[test]
    fn flushes_and_util() {
        let d = Counters {
            writes: 512,
            sectors_written: 4096,
            flushes: 256,
            ms_flushing: 128,
            io_ticks: 1990,
            weighted_ms: 2000,
            ..Default::default()
        };
        let moved = Moved {
            read_bytes: 0,
            write_bytes: 131_072,
        };
        let f = analyze(&job(Op::Write, 512, Mode::Dsync), moved, &act(d, 2.0), 4096);
        let fl = f.iter().find(|f| f.kind == "flushes").expect("flushes");
        assert_eq!(fl.numbers["flushes"], 256.0);
        assert_eq!(fl.numbers["f/s"], 128.0);
        assert_eq!(fl.numbers["f_await"], 0.5);
        assert!(fl.message.contains("O_DSYNC"));
        let wc = f
            .iter()
            .find(|f| f.kind == "write_cache")
            .expect("write_cache");
        assert!(
            wc.message.contains("volatile write cache"),
            "{}",
            wc.message
        );
        assert_eq!(wc.numbers["write_back"], 1.0);
        let u = f
            .iter()
            .find(|f| f.kind == "util_saturation")
            .expect("util");
        assert!(u.message.contains("not capacity"), "{}", u.message);
        assert!(u.message.contains("--iodepth 32"), "{}", u.message);
        assert_eq!(u.numbers["util"], 99.5);
        // The same device figures under a test that kept 8 in flight: the depth did not reach
        // the device, so a deeper queue is not the advice.
        let mut deep = job(Op::Write, 512, Mode::Dsync);
        deep.iodepth = 8;
        let f = analyze(&deep, moved, &act(d, 2.0), 4096);
        let u = f
            .iter()
            .find(|f| f.kind == "util_saturation")
            .expect("util");
        println!("{}", u.message);
        assert!(
            u.message
                .contains("kept 8 I/Os in flight, yet the device had 1.0")
                && u.message.contains("--jobs N")
                && !u.message.contains("--iodepth 32"),
            "{}",
            u.message
        );
    }

    /// A sync write on zram or a RAM disk: the cache setting means no flush, not durability.
    #[test]
    fn sync_writes_to_ram_are_not_durable() {
        let d = Counters {
            writes: 512,
            sectors_written: 4096,
            io_ticks: 10,
            ..Default::default()
        };
        let moved = Moved {
            read_bytes: 0,
            write_bytes: 2_097_152,
        };
        let mut a = act(d, 1.0);
        a.write_cache = Some("write through".into());
        a.in_ram = true;
        let f = analyze(&job(Op::Write, 4096, Mode::Dsync), moved, &a, 4096);
        let wc = f
            .iter()
            .find(|f| f.kind == "write_cache")
            .expect("write_cache");
        println!("{}", wc.message);
        assert!(
            wc.message.contains("in RAM") && wc.message.contains("power loss"),
            "{}",
            wc.message
        );
        assert!(!wc.message.contains("reach the media"), "{}", wc.message);
        assert_eq!(wc.numbers["in_ram"], 1.0);
        assert!(crate::device::in_ram("zram1") && crate::device::in_ram("ram0"));
        assert!(!crate::device::in_ram("sda") && !crate::device::in_ram("loop0"));
    }

    #[test]
    fn page_cache_and_stats_off() {
        let d = Counters {
            writes: 10,
            sectors_written: 2048,
            ..Default::default()
        };
        let moved = Moved {
            read_bytes: 0,
            write_bytes: 64 << 20,
        };
        let f = analyze(
            &job(Op::Write, 1 << 20, Mode::Buffered),
            moved,
            &act(d, 1.0),
            4096,
        );
        let pc = f
            .iter()
            .find(|f| f.kind == "page_cache")
            .expect("page_cache");
        // The fix is options the command line takes.
        assert!(
            pc.message
                .contains("Use --mode fdatasync (dd conv=fdatasync) or --mode direct."),
            "{}",
            pc.message
        );
        let f = analyze(
            &job(Op::Write, 1 << 20, Mode::Fdatasync),
            moved,
            &act(d, 1.0),
            4096,
        );
        assert!(f.iter().all(|f| f.kind != "page_cache"));
        let mut a = act(d, 1.0);
        a.stats_off = vec!["loop0".into()];
        let f = analyze(&job(Op::Write, 1 << 20, Mode::Buffered), moved, &a, 4096);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].kind, "stats_off");
    }
}
