//! What a device's settings mean for a test, from sysfs alone (no device node is read): memory
//! under it, blocks never written, alignment, the write cache, the scheduler, queue limits, the
//! machine's idle CPUs, statistics turned off, use, and the kernel's error counts. The doctor's
//! checks; a test's result says the same of the memory under its target ([`cache_below`]).

use serde_json::json;

use super::{Evidence, Finding, Kind, Severity};
use crate::device::{BufferedLoop, Device, DeviceTree, Kind as DeviceKind};
use crate::engine::target::CacheBelow;
use crate::sysroot::SysRoot;
use crate::units::fmt_size;

/// What the checks look at: the device, the tree it is in, and the root they are read from.
pub struct Context<'a> {
    pub root: &'a SysRoot,
    pub tree: &'a DeviceTree,
    pub device: &'a Device,
}

/// What a device's settings mean for a test, one check after another.
pub fn examine(c: &Context) -> Vec<Finding> {
    let d = c.device;
    let mut out = Vec::new();
    out.extend(backing_cache(c));
    out.extend(never_written(c));
    // Alignment: the device's own, and its partitions'.
    alignment(d, &mut out);
    for p in d.partitions.iter().filter_map(|p| c.tree.get(p)) {
        alignment(p, &mut out);
    }
    // A partition has no queue of its own: these are its disk's settings, and its disk's
    // sysfs files are where to change them.
    let queue = c.tree.whole(d);
    out.extend(write_cache(queue));
    out.extend(scheduler(queue));
    queue_limits(queue, &mut out);
    out.extend(idle_halt(c.root));
    out.extend(stats_off(d));
    out.extend(in_use(c));
    out.extend(kernel_errors(c));
    out
}

/// A device's finding: its kind, how much it matters, the figures (as JSON) and the words.
fn found(
    kind: Kind,
    severity: Severity,
    numbers: serde_json::Value,
    say: impl FnOnce(&Evidence) -> String,
) -> Finding {
    Finding::new(kind, Evidence::from_json(numbers), say).rated(severity)
}

/// The kernel's own count of failed and timed-out commands on a SCSI-family device (SATA, SAS,
/// USB, virtio-scsi): `device/ioerr_cnt` and `device/iotmo_cnt`, hexadecimal, since the device
/// appeared.
fn kernel_errors(c: &Context) -> Option<Finding> {
    let name = &c.device.name;
    let count = |f: &str| {
        let t = std::fs::read_to_string(c.root.sys(format!("block/{name}/device/{f}"))).ok()?;
        let t = t.trim();
        u64::from_str_radix(t.trim_start_matches("0x"), 16).ok()
    };
    let (e, t) = (
        count("ioerr_cnt").unwrap_or(0),
        count("iotmo_cnt").unwrap_or(0),
    );
    if e == 0 && t == 0 {
        return None;
    }
    let numbers = json!({"ioerr_cnt": e, "iotmo_cnt": t});
    Some(found(Kind::KernelErrors, Severity::Warning, numbers, |e| {
        format!(
            "the kernel counted {} failed command(s) and {} timeout(s) on {name} since it \
             appeared (device/ioerr_cnt, iotmo_cnt): the medium or the link has failed \
             requests; dmesg names them, and SMART says whether the drive knows",
            e.count("ioerr_cnt"),
            e.count("iotmo_cnt")
        )
    }))
}

/// A loop device without direct I/O, or over a file in RAM: its I/O goes through the page
/// cache of the backing file's file system, or to RAM, so a test measures memory.
fn backing_cache(c: &Context) -> Option<Finding> {
    let d = c.device;
    if d.kind != DeviceKind::Loop {
        return None;
    }
    let b = c.tree.buffered_loop(&d.name)?;
    Some(loop_cache(Some(&d.name), &b).rated(Severity::Warning))
}

/// The finding when memory serves the target's I/O in place of a disk: a loop device without
/// direct I/O under it (`backing_cache`, as the doctor names it), or a file system in RAM
/// (`memory_fs`). `target` is the target's block device (None for a file).
pub fn cache_below(target: Option<&str>, cache: &CacheBelow) -> Finding {
    match cache {
        CacheBelow::Loop(b) => loop_cache(target, b).on(b.device.as_str()),
        CacheBelow::MemoryFs { fs } => Finding::new(Kind::MemoryFs, Evidence::new(), |_| {
            format!(
                "the test's file is on a {fs}, a file system in RAM with no block device under \
                 it: the figures are memory copies, not a disk's. Name a directory on the disk \
                 you mean to test"
            )
        })
        .on(""),
    }
}

/// A loop device whose blocks are memory's (a backing file in the page cache, or in RAM), as
/// the target (`target` is `b.device`), under it, or under a file (`target` None).
fn loop_cache(target: Option<&str>, b: &BufferedLoop) -> Finding {
    let subject = match target {
        Some(t) if t == b.device => format!("{t} is"),
        Some(t) => format!("{t} is on {},", b.device),
        None => format!("the test's file is on {},", b.device),
    };
    let numbers = Evidence::new()
        .with("backing_file", b.backing_file.as_str())
        .with("backing_device", b.backing_device.clone())
        .with("backing_fs", b.backing_fs.clone())
        .with("direct_io", b.direct_io);
    Finding::new(Kind::BackingCache, numbers, |_| {
        if b.in_ram() {
            format!(
                "{subject} {}: its blocks are in memory, so a test's figures there are memory \
                 copies, not a disk's, with direct I/O or without (fio and dd on it measure the \
                 same). Put the backing file on the disk you mean to test, or test that disk",
                b.what(),
            )
        } else {
            format!(
                "{subject} {}, so its reads and writes go through the page cache of that file: \
                 writes are done once copied into memory, and blocks read before come back from \
                 it. A test's figures there are memory's more than {}'s. Switch it with \
                 `losetup --direct-io=on /dev/{}` and run again (fio and dd on it measure the \
                 same cache)",
                b.what(),
                b.backing_device.as_deref().unwrap_or("the disk"),
                b.device
            )
        }
    })
}

/// The write cache, and what it means for durability and sync latency.
fn write_cache(d: &Device) -> Option<Finding> {
    let wc = d.write_cache.as_deref()?;
    let numbers = json!({ "write_cache": wc });
    Some(found(Kind::WriteCache, Severity::Info, numbers, |_| {
        if crate::device::in_ram(&d.name) {
            format!(
                "{} keeps its data in RAM: \"{wc}\" means no flush is needed, not that a write \
                 is durable; nothing on it survives a reboot or a power loss, and its sync-write \
                 latency says nothing about a disk's",
                d.name
            )
        } else if d.kind == DeviceKind::Loop {
            let file = d.loop_backing_file.as_deref().unwrap_or("its backing file");
            format!(
                "{} is a loop device over {file}, with no cache of its own: \"{wc}\" means a \
                 flush there (fsync, O_DSYNC) is an fsync of that file, so its sync-write \
                 latency is the file system and the disk under it at work; measure sync \
                 latency on the disk that is to hold the data",
                d.name
            )
        } else if wc == "write back" {
            "volatile write cache (write back): writes are acknowledged from the drive's cache; \
             only a flush (fsync, O_DSYNC) makes them durable, and each flush costs. Compare the \
             sync-latency (dsync) and direct tests to see what a flush costs"
                .to_string()
        } else {
            "write through: every acknowledged write is on stable storage (or the drive has a \
             power-protected cache)"
                .to_string()
        }
    }))
}

/// The scheduler against the medium.
fn scheduler(d: &Device) -> Option<Finding> {
    let s = d.scheduler.as_deref()?;
    if d.rotational && s == "none" && d.kind != DeviceKind::Loop {
        let numbers = json!({ "scheduler": s, "available": d.schedulers_available });
        Some(found(Kind::Scheduler, Severity::Warning, numbers, |_| {
            format!(
                "a rotational disk with scheduler none: requests go to the disk in arrival \
                 order, seeks and all; mq-deadline or bfq sort them (available: {}; echo \
                 mq-deadline > /sys/block/{}/queue/scheduler)",
                d.schedulers_available.join(", "),
                d.name
            )
        }))
    } else if !d.rotational && s == "bfq" {
        let numbers = json!({ "scheduler": s });
        Some(found(Kind::Scheduler, Severity::Info, numbers, |_| {
            "a non-rotational device with bfq: fair, but its per-request work costs IOPS on \
             fast flash; none or mq-deadline is usual there"
                .into()
        }))
    } else {
        None
    }
}

/// Queue limits that split large I/Os or cap the queue depth.
fn queue_limits(d: &Device, out: &mut Vec<Finding>) {
    if let (Some(m), Some(hw)) = (d.max_sectors_kb, d.max_hw_sectors_kb)
        && m < hw
        && m < 1024
    {
        let numbers = json!({ "max_sectors_kb": m, "max_hw_sectors_kb": hw });
        out.push(found(Kind::QueueLimits, Severity::Info, numbers, |e| {
            let m = e.count("max_sectors_kb");
            format!(
                "max_sectors_kb is {m} while the hardware takes {}: larger I/Os are split into \
                 {m} KiB requests (raise it in /sys/block/{}/queue/max_sectors_kb)",
                e.count("max_hw_sectors_kb"),
                d.name
            )
        }));
    }
    if let Some(n) = d.nr_requests.filter(|&n| n < 32 && n > 0) {
        let numbers = json!({ "nr_requests": n });
        out.push(found(Kind::QueueLimits, Severity::Info, numbers, |e| {
            format!(
                "nr_requests is {}: tests at a higher queue depth wait in the kernel",
                e.count("nr_requests")
            )
        }));
    }
}

/// The machine, as it bears on latency: a VM whose idle vCPUs halt at once.
fn idle_halt(root: &SysRoot) -> Option<Finding> {
    if super::halt_poll_ns(root) != Some(0) {
        return None;
    }
    let mut numbers = json!({ "guest_halt_poll_ns": 0 });
    for (k, v) in super::HALT_POLL_MEASURED {
        numbers[k] = json!(v);
    }
    Some(found(Kind::IdleHalt, Severity::Info, numbers, |_| {
        "this machine is a VM whose idle CPUs halt at once (the haltpoll governor's \
         guest_halt_poll_ns is 0): a CPU that sleeps while an I/O is in flight is woken \
         through the hypervisor when it completes, which adds to every latency measured at a \
         low queue depth here (QD1 tests, dd oflag=dsync, ioping). On the VM blkscope was \
         measured on, the kernel's default of 200000 ns (echo 200000 > \
         /sys/module/haltpoll/parameters/guest_halt_poll_ns) made 4K reads at QD1 1.16x as \
         fast on a loop device over a file on its disk and 7x on a filled zram; polling costs \
         the host CPU time while the guest is idle. A test whose threads poll instead of \
         sleeping (blkscope --sqpoll, fio --sqthread_poll) keeps its CPUs from halting and so \
         runs faster here at a low queue depth, at the cost of CPUs kept busy. Compare latency \
         with another machine's with that in mind"
            .into()
    }))
}

/// queue/iostats 0: the kernel keeps no figures for the device.
fn stats_off(d: &Device) -> Option<Finding> {
    if !d.keeps_no_io_figures() {
        return None;
    }
    Some(found(
        Kind::StatsOff,
        Severity::Warning,
        json!({ "iostats": 0 }),
        |_| {
            format!(
                "queue/iostats is 0: the kernel keeps no figures for {}, so iostat and blkscope's \
             diskstats panel show zeros (echo 1 > /sys/block/{}/queue/iostats)",
                d.name, d.name
            )
        },
    ))
}

/// Mounted, swap or held (the device or anything on it).
fn in_use(c: &Context) -> Option<Finding> {
    let d = c.device;
    let mut uses = Vec::new();
    for x in std::iter::once(d).chain(c.tree.above(&d.name)) {
        for m in &x.mountpoints {
            uses.push(format!("{} mounted at {m}", x.name));
        }
        if x.swap {
            uses.push(format!("{} is swap", x.name));
        }
    }
    if !d.holders.is_empty() {
        uses.push(format!("held by {}", d.holders.join(", ")));
    }
    if uses.is_empty() {
        return None;
    }
    let numbers = json!({ "uses": uses });
    Some(found(Kind::InUse, Severity::Info, numbers, |_| {
        format!(
            "in use ({}): write tests are refused; reads are disturbed by its own I/O",
            uses.join("; ")
        )
    }))
}

/// A partition that does not start on a physical block (or on the optimal I/O size), or a
/// device with an alignment offset.
fn alignment(d: &Device, out: &mut Vec<Finding>) {
    let pbs = d.physical_block_size.max(512);
    if let Some(start) = d.start_sector {
        let bytes = start * 512;
        let opt = d.optimal_io_size.unwrap_or(0);
        if bytes % pbs != 0 {
            let numbers = json!({
                "start_bytes": bytes,
                "start_sector": start,
                "physical_block_size": pbs,
                "boundary_bytes": 1 << 20,
                "boundary_sector": 2048,
            });
            out.push(found(Kind::Misaligned, Severity::Problem, numbers, |e| {
                format!(
                    "{} starts at byte {} (sector {}), not a multiple of the physical block \
                     size {}: every write straddles two physical blocks and the drive reads, \
                     modifies and writes them. Recreate the partition at a 1 MiB boundary \
                     (sector {})",
                    d.name,
                    e.count("start_bytes"),
                    e.count("start_sector"),
                    e.count("physical_block_size"),
                    e.count("boundary_sector")
                )
            }));
        } else if opt > 0 && bytes % opt != 0 {
            let numbers = json!({ "start_bytes": bytes, "optimal_io_size": opt });
            out.push(found(Kind::Misaligned, Severity::Warning, numbers, |e| {
                format!(
                    "{} starts at byte {}, not a multiple of the optimal I/O size {} (a RAID \
                     stripe, say): full-stripe writes become partial ones",
                    d.name,
                    e.count("start_bytes"),
                    e.count("optimal_io_size")
                )
            }));
        }
    }
    if let Some(a) = d.alignment_offset.filter(|&a| a != 0) {
        let numbers = json!({ "alignment_offset": a });
        out.push(found(Kind::Misaligned, Severity::Warning, numbers, |_| {
            format!(
                "{} reports an alignment offset of {a} bytes: its logical block 0 is not at the \
                 start of a physical block",
                d.name
            )
        }));
    }
}

/// Blocks never written, where blkscope can tell (zram, a loop device's backing file): reads
/// of them come back as zeros without touching the store or the disk below, so a read test
/// there measures nothing real (the run's `never_written` finding says the same for its region).
/// From sysfs and the backing file's extents: no device node is read.
fn never_written(c: &Context) -> Option<Finding> {
    use crate::analysis::unwritten::probe;
    use crate::device::Store;
    let (tree, d) = (c.tree, c.device);
    let store = Store::of_device(c.root, tree, d);
    let u = probe(c.root, &store, 0, d.size_bytes).filter(|u| u.worth_saying())?;
    let how = match &store {
        Store::Zram { .. } => format!(
            "it stores {} of data",
            fmt_size(u.stored_bytes.unwrap_or(0))
        ),
        Store::BackingFile { file, .. } => format!("holes in its backing file {}", file.display()),
        _ => return None,
    };
    // A device in use (a file system mounted on it) refuses the write that would fill it.
    let in_use = !d.holders.is_empty()
        || std::iter::once(d)
            .chain(tree.above(&d.name))
            .any(|x| !x.mountpoints.is_empty() || x.swap);
    let fill = if in_use {
        "; it is in use, so no write test may fill it: read what its user has written, or test \
         a device that holds data"
            .to_string()
    } else {
        format!(" (blkscope run {} --op write --bs 1M)", d.path.display())
    };
    let numbers = json!({
        "unwritten_bytes": u.unwritten_bytes,
        "size_bytes": u.region_bytes,
        "stored_bytes": u.stored_bytes,
        "unwritten_share": u.unwritten_bytes as f64 / u.region_bytes.max(1) as f64,
    });
    Some(found(Kind::NeverWritten, Severity::Info, numbers, |e| {
        let (unwritten, size) = (e.count("unwritten_bytes"), e.count("size_bytes"));
        format!(
            "{:.0}% of {} ({} of {}) was never written ({how}): reads there come back as zeros \
             without touching the store or the disk below, so a read test measures nothing \
             real until it is filled{fill}",
            e.num("unwritten_share") * 100.0,
            d.name,
            fmt_size(unwritten),
            fmt_size(size),
        )
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

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
            assert_eq!(f.device(), "loop0");
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
