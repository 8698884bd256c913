//! Findings: what the diskstats figures of a test mean, as data (a kind, the numbers behind it
//! and a short explanation), so the command line and the TUI show the same thing.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::engine::job::{Job, Mode, Op};
use crate::engine::target::{CacheBelow, FsBlock};
use crate::stats::iostat::{Counters, compute};
use crate::units::{exact_size, fmt_size};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// `read_modify_write`, `flushes`, `util_saturation`, `stats_off`, `page_cache`,
    /// `busy_processes`, `io_worker_wakeups`, `backing_cache`, `memory_fs`,
    /// `partial_fs_block`, `never_written`, `zeros_read`.
    pub kind: &'static str,
    /// The device the figures come from.
    pub device: String,
    pub message: String,
    pub numbers: BTreeMap<&'static str, f64>,
}

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
    /// How many of `devices` (from the start) are the target and what it is built on.
    pub below_count: usize,
    /// For a file target: its file system's block, the unit buffered writes read in when it is
    /// smaller than a page (a block device's page cache reads whole pages).
    pub fs_block: Option<FsBlock>,
    /// Bytes other processes read while the test ran, when they moved enough to be named
    /// (`busy_processes`); else 0.
    pub other_read_bytes: f64,
}

/// Bytes a test moved, as the engine counted them.
#[derive(Debug, Clone, Copy)]
pub struct Moved {
    pub read_bytes: u64,
    pub write_bytes: u64,
}

fn mib(b: f64) -> String {
    fmt_size(b as u64)
}

/// Explains the diskstats of a test run.
pub fn analyze(job: &Job, moved: Moved, act: &Activity, page_size: u64) -> Vec<Finding> {
    let mut out = Vec::new();
    let Some((target, td)) = act.devices.first() else {
        return out;
    };
    if act.stats_off.iter().any(|d| d == target) {
        out.push(Finding {
            kind: "stats_off",
            device: target.clone(),
            message: format!(
                "the kernel keeps no I/O statistics for {target} (queue/iostats = 0): its diskstats \
                 are zeros, not idleness; turn them on with: echo 1 > /sys/block/{target}/queue/iostats"
            ),
            numbers: BTreeMap::new(),
        });
        return out;
    }
    let write_only = matches!(job.op, Op::Write | Op::Randwrite);

    // Reads during a write-only test, on the target or a device under it. Real
    // read-modify-write reads about as much as it writes; a few hundred KiB from something
    // else (another program probing the device, udev) must not look like it: at least 10% of
    // the bytes written, and at least 256 KiB.
    if write_only {
        let written = moved.write_bytes as f64;
        if let Some((dev, d)) = act.devices[..act.below_count.max(1)]
            .iter()
            .filter(|(_, d)| {
                let r = d.sectors_read as f64 * 512.0;
                r >= 262_144.0 && r >= written * 0.10
            })
            .max_by_key(|(_, d)| d.sectors_read)
        {
            let read = d.sectors_read as f64 * 512.0;
            let buffered = job.mode != Mode::Direct;
            // A file system with blocks smaller than a page (ext4 makes 1K blocks on a small
            // device) reads only the blocks a write covers in part: 1K writes there read
            // nothing, 512-byte ones do.
            let (unit, block) = match &act.fs_block {
                Some(f) if f.size < page_size => (
                    f.size,
                    format!(
                        "{}-byte block of {}",
                        f.size,
                        f.fs.as_deref().unwrap_or("the file system")
                    ),
                ),
                _ => (page_size, format!("{page_size}-byte page-cache block")),
            };
            let partial_block = job.bs % unit != 0;
            let message = if buffered && partial_block {
                format!(
                    "read-modify-write: {} was read from {dev} while the test wrote {}. Buffered \
                     writes of {} bytes cover only part of a {block}, so the kernel reads the \
                     block first, whatever the sector size. Use a block size that is a multiple \
                     of {unit} (--bs {}), or direct I/O with a multiple of the logical block size \
                     ({}).",
                    mib(read),
                    mib(written),
                    job.bs,
                    fmt_size(unit),
                    act.logical_block_size
                )
            } else {
                format!(
                    "read-modify-write: {} was read from {dev} during a write-only test ({} \
                     written). Something below the test rewrites partial blocks: a device \
                     underneath with a larger block size, RAID parity, or unaligned offsets.",
                    mib(read),
                    mib(written)
                )
            };
            let mut numbers = BTreeMap::from([
                ("device_read_bytes", read),
                ("device_reads", d.reads as f64),
                ("test_write_bytes", written),
                ("bs", job.bs as f64),
                ("page_size", page_size as f64),
            ]);
            // Other processes that read at least half as much meanwhile may have made these
            // reads (a build reading vda at 374M/s made an 8M write test on a file there "read
            // 22.7M").
            let other = act.other_read_bytes;
            let message = if other >= 0.5 * read {
                numbers.insert("other_read_bytes", other);
                format!(
                    "{message} Other processes read {} while the test ran (busy_processes), so \
                     some or all of these reads may be theirs: run it again when they are done.",
                    fmt_size(other as u64)
                )
            } else {
                message
            };
            out.push(Finding {
                kind: "read_modify_write",
                device: dev.clone(),
                message,
                numbers,
            });
        }
    }

    // Flushes during the test. fdatasync mode ends with one flush per job by design.
    let x = compute(target, td, act.seconds);
    let expected_flushes = if job.mode == Mode::Fdatasync {
        2 * job.jobs as u64
    } else {
        0
    };
    if td.flushes > expected_flushes && job.op.writes() {
        let cache = act.write_cache.as_deref().unwrap_or("unknown");
        let why = match job.mode {
            Mode::Dsync | Mode::Sync => format!(
                "with {} every write waits until the drive has written its volatile cache \
                 (write cache: {cache}); that wait, not the transfer, is what sync writes cost. \
                 A drive with power-loss protection, or with its cache in write through mode, \
                 pays less per write.",
                if job.mode == Mode::Dsync {
                    "O_DSYNC"
                } else {
                    "O_SYNC"
                }
            ),
            _ => format!(
                "each makes the drive write its volatile cache (write cache: {cache}) before \
                 going on; something other than this test asked for them."
            ),
        };
        out.push(Finding {
            kind: "flushes",
            device: target.clone(),
            message: format!(
                "{} cache flushes reached {target} ({:.0}/s, {:.2} ms each on average): {why}",
                td.flushes, x.f_s, x.f_await
            ),
            numbers: BTreeMap::from([
                ("flushes", td.flushes as f64),
                ("f/s", x.f_s),
                ("f_await", x.f_await),
                ("w/s", x.w_s),
            ]),
        });
    }

    // Sync writes: what the drive's write cache setting means for them.
    if job.op.writes()
        && matches!(job.mode, Mode::Dsync | Mode::Sync)
        && let Some(cache) = act.write_cache.as_deref()
    {
        let why = if act.in_ram {
            "it keeps its data in RAM, so a sync write has no cache to flush and no media to \
             wait for: its latency is a memory copy (and, for zram, compression), far below what \
             a sync write costs on any disk, and nothing written survives a reboot or a power \
             loss. Measure sync latency on the disk that is to hold the data."
        } else if cache == "write back" {
            "the drive has a volatile write cache (write back): each sync write waits for a \
             cache flush. Turning the cache off (hdparm -W0) makes every write go to the media \
             and can cost 30x to 100x in latency (article 000: 0.36 ms vs 11.2 ms per 512-byte \
             write); leave it on unless the drive lies about flushes, and compare drives with \
             the same setting."
        } else {
            "the drive's cache is in write through mode: writes reach the media (or a \
             power-safe cache) before they complete, so no flush is needed, and sync latency is \
             what the media does. With a volatile cache on (write back) they would wait for \
             flushes instead."
        };
        out.push(Finding {
            kind: "write_cache",
            device: target.clone(),
            message: format!("write cache \"{cache}\" on {target}: {why}"),
            numbers: BTreeMap::from([
                ("write_back", if cache == "write back" { 1.0 } else { 0.0 }),
                ("in_ram", if act.in_ram { 1.0 } else { 0.0 }),
                ("w_await", x.w_await),
            ]),
        });
    }

    // %util next to the queue depth.
    let ios = td.reads + td.writes;
    if ios > 0 && act.seconds >= 0.5 {
        let numbers = BTreeMap::from([
            ("util", x.util),
            ("aqu-sz", x.aqu_sz),
            ("r/s", x.r_s),
            ("w/s", x.w_s),
            ("r_await", x.r_await),
            ("w_await", x.w_await),
        ]);
        if x.util >= 95.0 && x.aqu_sz < 1.5 {
            // The test kept more in flight than reached the device: a deeper queue is not the
            // advice then. zram at --iodepth 8: aqu-sz 0.97, one io-wq worker thread running
            // every I/O (it never blocks, so io-wq starts no second one); --jobs 2 --iodepth 4
            // gave aqu-sz 1.88 and 1.6x the throughput.
            let asked = job.iodepth as u64 * job.jobs as u64;
            let advice = if asked as f64 >= 2.0 * x.aqu_sz.max(1.0) {
                format!(
                    "The test kept {asked} I/Os in flight, yet the device had {:.1} on average: \
                     the rest waited above it, in the kernel. One cause: a driver that cannot \
                     take an I/O without blocking (zram) has io_uring hand the I/Os to a kernel \
                     worker thread, and a worker that never has to wait runs them one after \
                     another, so a deeper queue only waits longer there; more jobs (--jobs N, \
                     a worker each) run in parallel.",
                    x.aqu_sz
                )
            } else {
                "A device that serves requests in parallel (SSD, NVMe, RAID) can often do more \
                 with a deeper queue (--iodepth 32 or --jobs 4)."
                    .to_string()
            };
            out.push(Finding {
                kind: "util_saturation",
                device: target.clone(),
                message: format!(
                    "%util is {:.0}% with {:.1} requests in flight on average: %util is the share \
                     of time with at least one request in flight, not capacity. {advice}",
                    x.util, x.aqu_sz
                ),
                numbers,
            });
        } else if x.util < 90.0 && x.aqu_sz >= 4.0 {
            out.push(Finding {
                kind: "util_saturation",
                device: target.clone(),
                message: format!(
                    "%util is {:.0}% although {:.1} requests were queued on average: %util counts \
                     busy time, so it says little about how close a parallel device is to its \
                     limit; read it next to aqu-sz, IOPS and latency.",
                    x.util, x.aqu_sz
                ),
                numbers,
            });
        }
    }

    // Buffered writes that never reached the device.
    if job.op.writes() && job.mode == Mode::Buffered && moved.write_bytes > 0 {
        let reached = td.sectors_written as f64 * 512.0;
        let written = moved.write_bytes as f64;
        if reached < written * 0.5 {
            out.push(Finding {
                kind: "page_cache",
                device: target.clone(),
                message: format!(
                    "only {} of the {} written reached {target} while the test ran: the rest waited \
                     in the page cache, so the result measured memory, not the device. Use \
                     --mode fdatasync (dd conv=fdatasync) or --mode direct.",
                    mib(reached),
                    mib(written)
                ),
                numbers: BTreeMap::from([
                    ("device_write_bytes", reached),
                    ("test_write_bytes", written),
                ]),
            });
        }
    }
    out
}

/// How a test's I/O was issued, for [`io_worker_wakeups`].
#[derive(Debug, Clone, Copy)]
pub struct Issue {
    /// The engine was io_uring.
    pub uring: bool,
    /// io-wq worker threads of the job threads at the end of their I/O, summed over the jobs.
    pub io_workers: usize,
    /// CPUs the process may run on.
    pub cpus_available: usize,
    /// Mean completion latency of the test's I/Os, in ns.
    pub mean_latency_ns: f64,
}

/// Above this mean latency the wake-ups are a small part of each I/O and the finding is left
/// out: waking an idle vCPU here costs ~25 us, two per I/O (zram QD1: 54 us mean unpinned, 7 us
/// with --cpus 0), so under 200 us they can be a quarter or more of it. A 1 MiB read or write at
/// QD1 on a loop device goes through io-wq too (too large for one request without blocking),
/// but at ~800 us an I/O the wake-ups hardly show.
pub const IO_WORKER_WAKEUP_MAX_MEAN_NS: f64 = 200_000.0;

/// Up to this queue depth, keeping the job and its workers on one CPU won (4K random reads on
/// a filled zram, 2 CPUs, 3 alternating pairs of 2 s): QD1 23-27K IOPS unpinned against
/// 140-148K with --cpus 0, QD2 40-56K against 152-155K, QD4 74-88K against 135-155K; at QD8
/// two CPUs working won instead (246-268K against 157-161K).
pub const IO_WORKER_WAKEUP_MAX_DEPTH: u32 = 4;

/// A finding when io_uring handed a low-queue-depth test's I/O to its kernel worker threads
/// (io-wq) and the job was not kept to one CPU with them: each I/O then waits for a worker to
/// be woken and for the job to be woken back, and when the scheduler puts the two on different
/// CPUs that wake-up (tens of microseconds for an idle CPU in a VM) can be most of what was
/// measured. On a filled zram, 4K reads at QD1 in a 2-CPU VM: ~20K IOPS unpinned, ~140K with
/// --cpus 0, and fio alike with --cpus_allowed=0 (README, "QD1 on zram, and `--cpus`").
pub fn io_worker_wakeups(job: &Job, issue: Issue, device: &str) -> Option<Finding> {
    if !issue.uring
        || issue.io_workers == 0
        || job.cpus.is_some()
        || job.sqpoll
        || job.iodepth > IO_WORKER_WAKEUP_MAX_DEPTH
        || issue.cpus_available < 2
        || issue.mean_latency_ns >= IO_WORKER_WAKEUP_MAX_MEAN_NS
    {
        return None;
    }
    let on = if device.is_empty() {
        "the target".to_string()
    } else {
        device.to_string()
    };
    Some(Finding {
        kind: "io_worker_wakeups",
        device: device.to_string(),
        message: format!(
            "io_uring could not issue the I/O on {on} without blocking (a driver without NOWAIT \
             support, such as zram, an I/O too large for one request, a direct write to part of \
             a file system block, or a mode that waits), so \
             it handed the I/O to kernel worker threads (io-wq). At queue depth {qd} each I/O \
             then waits for a worker to wake and for the job to be woken back; when they run \
             on different CPUs, waking an idle CPU (slow in a VM) can be most of the latency \
             measured. The scheduler keeps them on one CPU only while the other CPUs are busy, \
             so the figure depends on what else runs (several times faster while it does). \
             Run again with --cpus N to keep the job and its workers on one CPU (fio: \
             --cpus_allowed=N) and compare.",
            qd = job.iodepth
        ),
        numbers: BTreeMap::from([
            ("io_workers", issue.io_workers as f64),
            ("iodepth", job.iodepth as f64),
            ("cpus_available", issue.cpus_available as f64),
            ("mean_latency_ns", issue.mean_latency_ns),
        ]),
    })
}

/// A finding when a direct write test on a file writes part of a file system block at a time.
/// ext4 and XFS zero the rest of a block a direct write covers only partly when the block is
/// not written yet, and so run such writes one at a time (exclusive inode lock, waiting for
/// every direct I/O in flight), never without blocking. On this VM's ext4 (4K blocks), random
/// writes at QD32 into a new preallocated file: fio 18357 IOPS at --bs=3k against 78769 at 4k;
/// blkscope 19062 (aqu-sz 0.9) against 60012 (aqu-sz 21.3). Over blocks already written ext4
/// runs them in parallel (115K at 3k, 112K at 4k on a written file), so for a file the user
/// named, whose blocks may be written, it takes the device's queue as the evidence: `aqu_sz`
/// of the device holding the file.
/// `written`: what the device holding the file wrote while the test ran, and what the test
/// wrote, when known: the zeroing shows as more written than the test wrote (1K random writes
/// at QD16 into a new file here: vda wrote 84.6M for the test's 24.6M).
pub fn partial_fs_block(
    job: &Job,
    fs: &FsBlock,
    device: &str,
    aqu_sz: Option<f64>,
    written: Option<(u64, u64)>,
) -> Option<Finding> {
    let blk = fs.size;
    if job.mode != Mode::Direct || !job.op.writes() || blk <= 1 {
        return None;
    }
    let bs_off = job.bs % blk != 0;
    let offset_off = job.offset % blk != 0;
    if !bs_off && !offset_off {
        return None;
    }
    let asked = job.iodepth as u64 * job.jobs as u64;
    let held_back = aqu_sz.filter(|&a| asked >= 2 && a * 2.0 < asked as f64);
    // Seen on ext4 and XFS (iomap's sub-block zeroing under an exclusive lock); elsewhere only
    // with the queue as evidence.
    let known = matches!(fs.fs.as_deref(), Some("ext4" | "xfs"));
    if !(fs.unwritten && known) && held_back.is_none() {
        return None;
    }
    let what = match (bs_off, offset_off) {
        (true, true) => format!(
            "bs {} and offset {} are",
            fmt_size(job.bs),
            fmt_size(job.offset)
        ),
        (true, false) => format!("bs {} is", fmt_size(job.bs)),
        _ => format!("offset {} is", fmt_size(job.offset)),
    };
    let fs_name = fs.fs.as_deref().unwrap_or("the file system");
    let whose = if fs.unwritten {
        "the file has not written yet (blkscope's scratch file for a write test is preallocated, \
         as fio's is)"
    } else {
        "the file has not written yet (holes or preallocated space)"
    };
    let queue = match held_back {
        Some(a) => format!(
            " The test kept {asked} writes in flight; {on} had {a:.1} on average.",
            on = if device.is_empty() {
                "the device"
            } else {
                device
            }
        ),
        None => String::new(),
    };
    let amplified = written.filter(|&(dev, ours)| ours > 0 && dev as f64 >= 1.5 * ours as f64);
    let zeroed = match amplified {
        Some((dev, ours)) => format!(
            " {on} wrote {} for the test's {}: the zeroed rest of each block (and anything else \
             written to it meanwhile).",
            fmt_size(dev),
            fmt_size(ours),
            on = if device.is_empty() {
                "the device"
            } else {
                device
            }
        ),
        None => String::new(),
    };
    let mut fix = Vec::new();
    if bs_off {
        fix.push(format!("--bs {}", exact_size(job.bs.div_ceil(blk) * blk)));
    }
    if offset_off {
        fix.push(format!("--offset {}", exact_size(job.offset / blk * blk)));
    }
    let mut numbers = BTreeMap::from([
        ("fs_block", blk as f64),
        ("bs", job.bs as f64),
        ("offset", job.offset as f64),
        ("in_flight_asked", asked as f64),
    ]);
    if let Some(a) = aqu_sz {
        numbers.insert("aqu-sz", a);
    }
    if let Some((dev, _)) = amplified {
        numbers.insert("device_write_bytes", dev as f64);
    }
    Some(Finding {
        kind: "partial_fs_block",
        device: device.to_string(),
        message: format!(
            "{what} not a multiple of the {} blocks of {fs_name} under the file. A direct write \
             that covers part of a block {whose} makes the file system zero the rest of it, so \
             ext4 and XFS run such writes one at a time, each waiting for every other in \
             flight, and io_uring hands them to a kernel worker.{queue}{zeroed} Use {} to \
             measure the \
             device rather than this (fio and dd with this block size on a new file meet the \
             same).",
            fmt_size(blk),
            fix.join(" and "),
        ),
        numbers,
    })
}

/// The finding when memory serves the target's I/O in place of a disk: a loop device without
/// direct I/O under it (`backing_cache`, as the doctor names it), or a file system in RAM
/// (`memory_fs`). `target` is the target's block device (None for a file).
pub fn cache_below(target: Option<&str>, cache: &CacheBelow) -> Finding {
    match cache {
        CacheBelow::Loop(b) => {
            let subject = match target {
                Some(t) if t == b.device => format!("{t} is"),
                Some(t) => format!("{t} is on {},", b.device),
                None => format!("the test's file is on {},", b.device),
            };
            let message = if b.in_ram() {
                format!(
                    "{subject} {}: its blocks are in memory, so these figures are memory copies, \
                     not a disk's, with direct I/O or without (fio and dd on it measure the same). \
                     Put the backing file on the disk you mean to test, or test that disk",
                    b.what(),
                )
            } else {
                format!(
                    "{subject} {}, so its reads and writes go through the page cache of that \
                     file: writes are done once copied into memory, and blocks read before come \
                     back from it. These figures are memory's more than {}'s. Switch it with \
                     `losetup --direct-io=on /dev/{}` and run again (fio and dd on it measure the \
                     same cache)",
                    b.what(),
                    b.backing_device.as_deref().unwrap_or("the disk"),
                    b.device
                )
            };
            Finding {
                kind: "backing_cache",
                device: b.device.clone(),
                message,
                numbers: BTreeMap::new(),
            }
        }
        CacheBelow::MemoryFs { fs } => Finding {
            kind: "memory_fs",
            device: String::new(),
            message: format!(
                "the test's file is on a {fs}, a file system in RAM with no block device under \
                 it: the figures are memory copies, not a disk's. Name a directory on the disk \
                 you mean to test"
            ),
            numbers: BTreeMap::new(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn act(d: Counters, seconds: f64) -> Activity {
        Activity {
            devices: vec![("loop0".into(), d)],
            seconds,
            stats_off: vec![],
            logical_block_size: 4096,
            write_cache: Some("write back".into()),
            in_ram: false,
            below_count: 1,
            fs_block: None,
            other_read_bytes: 0.0,
        }
    }

    fn job(op: Op, bs: u64, mode: Mode) -> Job {
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
        a.other_read_bytes = 60e6;
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
        a.other_read_bytes = 10e6;
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

    #[test]
    fn io_worker_wakeups_only_at_low_depth_unpinned_with_workers_seen() {
        let mut j = job(Op::Randread, 4096, Mode::Direct);
        let seen = Issue {
            uring: true,
            io_workers: 1,
            cpus_available: 2,
            mean_latency_ns: 54_000.0,
        };
        let f = io_worker_wakeups(&j, seen, "zram1").expect("a QD1 io_uring run through io-wq");
        println!("{}", f.message);
        assert_eq!(f.kind, "io_worker_wakeups");
        assert!(f.message.contains("zram1") && f.message.contains("--cpus N"));
        assert!(f.message.contains("--cpus_allowed=N"));
        assert_eq!(f.numbers["io_workers"], 1.0);

        let none = |j: &Job, i: Issue, why: &str| {
            let got = io_worker_wakeups(j, i, "zram1");
            assert!(got.is_none(), "{why}: got {got:?}");
        };
        none(
            &j,
            Issue {
                io_workers: 0,
                ..seen
            },
            "no worker thread was seen",
        );
        none(
            &j,
            Issue {
                uring: false,
                ..seen
            },
            "pread/pwrite has no io-wq",
        );
        none(
            &j,
            Issue {
                cpus_available: 1,
                ..seen
            },
            "one CPU: nothing to keep apart",
        );
        none(
            &j,
            Issue {
                mean_latency_ns: 810_000.0,
                ..seen
            },
            "1M at 810 us an I/O: the wake-ups hardly show",
        );
        j.iodepth = 4;
        assert!(io_worker_wakeups(&j, seen, "zram1").is_some(), "QD4 still");
        j.iodepth = 8;
        none(&j, seen, "at QD8 the wake-ups overlap with other I/O");
        j.iodepth = 1;
        j.cpus = Some(crate::engine::cpus::CpuList::parse("0").unwrap());
        none(&j, seen, "already kept to CPU 0");
    }

    #[test]
    fn direct_writes_of_part_of_a_file_system_block() {
        let scratch = FsBlock {
            fs: Some("ext4".into()),
            size: 4096,
            unwritten: true,
        };
        let mut j = job(Op::Randwrite, 3072, Mode::Direct);
        j.iodepth = 32;
        // A scratch file: raised whatever the queue showed, with the device's queue beside it.
        let f = partial_fs_block(&j, &scratch, "vda", Some(0.9), None).expect("3K into 4K blocks");
        println!("{}", f.message);
        assert_eq!(f.kind, "partial_fs_block");
        assert!(
            f.message
                .starts_with("bs 3K is not a multiple of the 4K blocks of ext4")
        );
        assert!(f.message.contains("kept 32 writes in flight; vda had 0.9"));
        assert!(!f.message.contains("for the test's"), "{}", f.message);
        // More written by the device than by the test: the zeroing, said with both figures.
        let f =
            partial_fs_block(&j, &scratch, "vda", Some(0.9), Some((84 << 20, 24 << 20))).unwrap();
        assert!(
            f.message
                .contains("vda wrote 84M for the test's 24M: the zeroed rest"),
            "{}",
            f.message
        );
        assert_eq!(f.numbers["device_write_bytes"], (84u64 << 20) as f64);
        let f =
            partial_fs_block(&j, &scratch, "vda", Some(0.9), Some((25 << 20, 24 << 20))).unwrap();
        assert!(!f.message.contains("for the test's"), "{}", f.message);
        assert!(
            f.message.contains("Use --bs 4k to measure"),
            "{}",
            f.message
        );
        assert_eq!(f.numbers["fs_block"], 4096.0);
        assert!(partial_fs_block(&j, &scratch, "vda", None, None).is_some());
        // A multiple of the block, a read, a buffered write: nothing.
        for (op, bs, mode) in [
            (Op::Randwrite, 8192, Mode::Direct),
            (Op::Randread, 3072, Mode::Direct),
            (Op::Write, 3072, Mode::Fdatasync),
            (Op::Write, 3072, Mode::Dsync),
        ] {
            let mut k = job(op, bs, mode);
            k.iodepth = 32;
            let f = partial_fs_block(&k, &scratch, "vda", Some(0.9), None);
            assert!(f.is_none(), "{op:?} {bs} {mode:?}: {f:?}");
        }
        // An offset off the block: the offset is named, and the fix rounds it down.
        let mut k = job(Op::Write, 4096, Mode::Direct);
        k.offset = 1024;
        let f = partial_fs_block(&k, &scratch, "", None, None).expect("offset 1K");
        println!("{}", f.message);
        assert!(f.message.starts_with("offset 1K is not"), "{}", f.message);
        assert!(f.message.contains("Use --offset 0 to"), "{}", f.message);
        // A named file may have its blocks written: only when the queue shows it held back.
        let named = FsBlock {
            unwritten: false,
            ..scratch.clone()
        };
        assert!(partial_fs_block(&j, &named, "vda", Some(22.4), None).is_none());
        assert!(partial_fs_block(&j, &named, "vda", None, None).is_none());
        let f = partial_fs_block(&j, &named, "vda", Some(1.0), None).expect("held back");
        assert!(
            f.message.contains("(holes or preallocated space)"),
            "{}",
            f.message
        );
        let mut qd1 = j.clone();
        qd1.iodepth = 1;
        assert!(partial_fs_block(&qd1, &named, "vda", Some(0.3), None).is_none());
        // A file system where it was not seen (vfat): only with the queue as evidence.
        let vfat = FsBlock {
            fs: Some("vfat".into()),
            ..scratch.clone()
        };
        assert!(partial_fs_block(&j, &vfat, "vda", Some(22.0), None).is_none());
        assert!(partial_fs_block(&j, &vfat, "vda", Some(1.0), None).is_some());
    }

    #[test]
    fn memory_under_the_target_names_what_sits_on_what() {
        let b = crate::device::BufferedLoop {
            device: "loop0".into(),
            backing_file: "/srv/a.img".into(),
            backing_device: Some("vda".into()),
            backing_fs: Some("ext4".into()),
            direct_io: false,
        };
        let c = CacheBelow::Loop(b.clone());
        for (target, head) in [
            (
                Some("loop0"),
                "loop0 is a loop device over /srv/a.img (on vda) without direct I/O",
            ),
            (
                Some("loop0p1"),
                "loop0p1 is on loop0, a loop device over /srv/a.img (on vda)",
            ),
            (
                None,
                "the test's file is on loop0, a loop device over /srv/a.img (on vda)",
            ),
        ] {
            let f = cache_below(target, &c);
            println!("{target:?}: {}", f.message);
            assert_eq!(f.kind, "backing_cache");
            assert_eq!(f.device, "loop0");
            assert!(f.message.starts_with(head), "{head:?}");
            assert!(f.message.contains("memory's more than vda's"));
            assert!(f.message.contains("losetup --direct-io=on /dev/loop0"));
        }
        // A backing file in RAM is said as such.
        let tmp = CacheBelow::Loop(crate::device::BufferedLoop {
            backing_device: None,
            backing_fs: Some("tmpfs".into()),
            ..b.clone()
        });
        let f = cache_below(Some("loop0"), &tmp);
        assert!(f.message.contains("(on a tmpfs: RAM)"), "{}", f.message);
        // There direct I/O is no way out, and not offered; with it on, the same.
        assert!(
            !f.message.contains("losetup --direct-io=on"),
            "{}",
            f.message
        );
        assert!(
            f.message.contains("Put the backing file on the disk"),
            "{}",
            f.message
        );
        let dio = CacheBelow::Loop(crate::device::BufferedLoop {
            backing_device: None,
            backing_fs: Some("tmpfs".into()),
            direct_io: true,
            ..b
        });
        let f = cache_below(Some("loop0"), &dio);
        println!("{}", f.message);
        assert!(
            f.message.starts_with(
                "loop0 is a loop device over /srv/a.img (on a tmpfs: RAM) with direct I/O: its \
                 blocks are in memory"
            ),
            "{}",
            f.message
        );
        let f = cache_below(None, &CacheBelow::MemoryFs { fs: "ramfs".into() });
        assert_eq!(f.kind, "memory_fs");
        assert!(
            f.message
                .starts_with("the test's file is on a ramfs, a file system in RAM")
        );
    }
}
