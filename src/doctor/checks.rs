//! What a device's settings mean for a test: findings from sysfs alone.

use serde_json::json;

use super::{Finding, Severity};
use crate::device::{Device, DeviceTree, Kind};
use crate::sysroot::SysRoot;

/// What a device's settings mean for a test, one check after another.
pub fn examine(root: &SysRoot, tree: &DeviceTree, d: &Device) -> Vec<Finding> {
    let mut out = Vec::new();
    backing_cache(tree, d, &mut out);
    never_written(root, tree, d, &mut out);
    // Alignment: the device's own, and its partitions'.
    alignment(d, &mut out);
    for p in d.partitions.iter().filter_map(|p| tree.get(p)) {
        alignment(p, &mut out);
    }
    write_cache(d, &mut out);
    scheduler(d, &mut out);
    queue_limits(d, &mut out);
    idle_halt(root, &mut out);
    if d.keeps_no_io_figures() {
        out.push(Finding::new(
            "stats_off",
            Severity::Warning,
            format!(
                "queue/iostats is 0: the kernel keeps no figures for {}, so iostat and blkscope's \
                 diskstats panel show zeros (echo 1 > /sys/block/{}/queue/iostats)",
                d.name, d.name
            ),
        ));
    }
    in_use(tree, d, &mut out);
    kernel_errors(root, d, &mut out);
    out
}

/// The kernel's own count of failed and timed-out commands on a SCSI-family device (SATA, SAS,
/// USB, virtio-scsi): `device/ioerr_cnt` and `device/iotmo_cnt`, hexadecimal, since the device
/// appeared.
fn kernel_errors(root: &SysRoot, d: &Device, out: &mut Vec<Finding>) {
    let count = |f: &str| {
        let t = std::fs::read_to_string(root.sys(format!("block/{}/device/{f}", d.name))).ok()?;
        let t = t.trim();
        u64::from_str_radix(t.trim_start_matches("0x"), 16).ok()
    };
    let (errors, timeouts) = (count("ioerr_cnt"), count("iotmo_cnt"));
    let (e, t) = (errors.unwrap_or(0), timeouts.unwrap_or(0));
    if e == 0 && t == 0 {
        return;
    }
    out.push(
        Finding::new(
            "kernel_errors",
            Severity::Warning,
            format!(
                "the kernel counted {e} failed command(s) and {t} timeout(s) on {} since it \
                 appeared (device/ioerr_cnt, iotmo_cnt): the medium or the link has failed \
                 requests; dmesg names them, and SMART says whether the drive knows",
                d.name
            ),
        )
        .with(serde_json::json!({"ioerr_cnt": e, "iotmo_cnt": t})),
    );
}

/// A loop device without direct I/O, or over a file in RAM: its I/O goes through the page
/// cache of the backing file's file system, or to RAM, so a test measures memory.
fn backing_cache(tree: &DeviceTree, d: &Device, out: &mut Vec<Finding>) {
    if d.kind == Kind::Loop
        && let Some(b) = tree.buffered_loop(&d.name)
    {
        out.push(
            Finding::new(
                "backing_cache",
                Severity::Warning,
                if b.in_ram() {
                    format!(
                        "{} is {}: its blocks are in memory, so a test measures memory, with \
                         direct I/O or without. Put the backing file on the disk you mean to \
                         test",
                        d.name,
                        b.what(),
                    )
                } else {
                    format!(
                        "{} is {}: its writes land in the page cache of the backing file, so a \
                         test measures memory. Attach it with `losetup --direct-io=on`, or test {}",
                        d.name,
                        b.what(),
                        b.backing_device.as_deref().unwrap_or("the device under it")
                    )
                },
            )
            .with(json!({
                "backing_file": b.backing_file,
                "backing_device": b.backing_device,
                "backing_fs": b.backing_fs,
                "direct_io": b.direct_io,
            })),
        );
    }
}

/// The write cache, and what it means for durability and sync latency.
fn write_cache(d: &Device, out: &mut Vec<Finding>) {
    if let Some(wc) = &d.write_cache {
        let (sev, msg) = if crate::device::in_ram(&d.name) {
            (
                Severity::Info,
                format!(
                    "{} keeps its data in RAM: \"{wc}\" means no flush is needed, not that a \
                     write is durable; nothing on it survives a reboot or a power loss, and its \
                     sync-write latency says nothing about a disk's",
                    d.name
                ),
            )
        } else if wc == "write back" {
            (
                Severity::Info,
                "volatile write cache (write back): writes are acknowledged from the drive's \
                 cache; only a flush (fsync, O_DSYNC) makes them durable, and each flush costs. \
                 Compare the sync-latency (dsync) and direct tests to see what a flush costs"
                    .to_string(),
            )
        } else {
            (
                Severity::Info,
                "write through: every acknowledged write is on stable storage (or the drive has \
                 a power-protected cache)"
                    .to_string(),
            )
        };
        out.push(Finding::new("write_cache", sev, msg).with(json!({ "write_cache": wc })));
    }
}

/// The scheduler against the medium.
fn scheduler(d: &Device, out: &mut Vec<Finding>) {
    if let Some(s) = &d.scheduler {
        if d.rotational && s == "none" && d.kind != Kind::Loop {
            out.push(
                Finding::new(
                    "scheduler",
                    Severity::Warning,
                    format!(
                        "a rotational disk with scheduler none: requests go to the disk in \
                         arrival order, seeks and all; mq-deadline or bfq sort them (available: \
                         {}; echo mq-deadline > /sys/block/{}/queue/scheduler)",
                        d.schedulers_available.join(", "),
                        d.name
                    ),
                )
                .with(json!({ "scheduler": s, "available": d.schedulers_available })),
            );
        } else if !d.rotational && s == "bfq" {
            out.push(
                Finding::new(
                    "scheduler",
                    Severity::Info,
                    "a non-rotational device with bfq: fair, but its per-request work costs \
                     IOPS on fast flash; none or mq-deadline is usual there",
                )
                .with(json!({ "scheduler": s })),
            );
        }
    }
}

/// Queue limits that split large I/Os or cap the queue depth.
fn queue_limits(d: &Device, out: &mut Vec<Finding>) {
    if let (Some(m), Some(hw)) = (d.max_sectors_kb, d.max_hw_sectors_kb)
        && m < hw
        && m < 1024
    {
        out.push(
            Finding::new(
                "queue_limits",
                Severity::Info,
                format!(
                    "max_sectors_kb is {m} while the hardware takes {hw}: larger I/Os are split \
                     into {m} KiB requests (raise it in /sys/block/{}/queue/max_sectors_kb)",
                    d.name
                ),
            )
            .with(json!({ "max_sectors_kb": m, "max_hw_sectors_kb": hw })),
        );
    }
    if let Some(n) = d.nr_requests.filter(|&n| n < 32 && n > 0) {
        out.push(
            Finding::new(
                "queue_limits",
                Severity::Info,
                format!("nr_requests is {n}: tests at a higher queue depth wait in the kernel"),
            )
            .with(json!({ "nr_requests": n })),
        );
    }
}

/// The machine, as it bears on latency: a VM whose idle vCPUs halt at once.
fn idle_halt(root: &SysRoot, out: &mut Vec<Finding>) {
    if crate::analysis::findings::halt_poll_ns(root) == Some(0) {
        out.push(
            Finding::new(
                "idle_halt",
                Severity::Info,
                "this machine is a VM whose idle CPUs halt at once (the haltpoll governor's \
                 guest_halt_poll_ns is 0): a CPU that sleeps while an I/O is in flight is woken \
                 through the hypervisor when it completes, which adds to every latency measured \
                 at a low queue depth here (QD1 tests, dd oflag=dsync, ioping). On the VM \
                 blkscope was measured on, the kernel's default of 200000 ns (echo 200000 > \
                 /sys/module/haltpoll/parameters/guest_halt_poll_ns) made 4K reads at QD1 \
                 1.16x as fast on a loop device over a file on its disk and 7x on a filled \
                 zram; polling costs the host CPU time while the guest is idle. Compare \
                 latency with another machine's with that in mind",
            )
            .with(json!({ "guest_halt_poll_ns": 0 })),
        );
    }
}

/// Mounted, swap or held (the device or anything on it).
fn in_use(tree: &DeviceTree, d: &Device, out: &mut Vec<Finding>) {
    let family = std::iter::once(d).chain(tree.above(&d.name));
    let mut uses = Vec::new();
    for x in family {
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
    if !uses.is_empty() {
        out.push(
            Finding::new(
                "in_use",
                Severity::Info,
                format!(
                    "in use ({}): write tests are refused; reads are disturbed by its own I/O",
                    uses.join("; ")
                ),
            )
            .with(json!({ "uses": uses })),
        );
    }
}

/// A partition that does not start on a physical block (or on the optimal I/O size), or a
/// device with an alignment offset.
fn alignment(d: &Device, out: &mut Vec<Finding>) {
    let pbs = d.physical_block_size.max(512);
    if let Some(start) = d.start_sector {
        let bytes = start * 512;
        let opt = d.optimal_io_size.unwrap_or(0);
        if bytes % pbs != 0 {
            out.push(
                Finding::new(
                    "misaligned",
                    Severity::Problem,
                    format!(
                        "{} starts at byte {bytes} (sector {start}), not a multiple of the \
                         physical block size {pbs}: every write straddles two physical blocks \
                         and the drive reads, modifies and writes them. Recreate the partition \
                         at a 1 MiB boundary (sector 2048)",
                        d.name
                    ),
                )
                .with(json!({ "start_bytes": bytes, "physical_block_size": pbs })),
            );
        } else if opt > 0 && bytes % opt != 0 {
            out.push(
                Finding::new(
                    "misaligned",
                    Severity::Warning,
                    format!(
                        "{} starts at byte {bytes}, not a multiple of the optimal I/O size {opt} \
                         (a RAID stripe, say): full-stripe writes become partial ones",
                        d.name
                    ),
                )
                .with(json!({ "start_bytes": bytes, "optimal_io_size": opt })),
            );
        }
    }
    if let Some(a) = d.alignment_offset.filter(|&a| a != 0) {
        out.push(
            Finding::new(
                "misaligned",
                Severity::Warning,
                format!(
                    "{} reports an alignment offset of {a} bytes: its logical block 0 is not at \
                     the start of a physical block",
                    d.name
                ),
            )
            .with(json!({ "alignment_offset": a })),
        );
    }
}

/// Blocks never written, where blkscope can tell (zram, a loop device's backing file): reads
/// of them come back as zeros without touching the store or the disk below, so a read test
/// there measures nothing real (the run's `never_written` finding says the same for its region).
/// From sysfs and the backing file's extents: no device node is read.
fn never_written(root: &SysRoot, tree: &DeviceTree, d: &Device, out: &mut Vec<Finding>) {
    use crate::analysis::unwritten::probe;
    use crate::device::Store;
    let store = Store::of_device(root, tree, d);
    let Some(u) = probe(root, &store, 0, d.size_bytes).filter(|u| u.worth_saying()) else {
        return;
    };
    let how = match &store {
        Store::Zram { .. } => format!(
            "it stores {} of data",
            crate::units::fmt_size(u.stored_bytes.unwrap_or(0))
        ),
        Store::BackingFile { file, .. } => format!("holes in its backing file {}", file.display()),
        _ => return,
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
    out.push(
        Finding::new(
            "never_written",
            Severity::Info,
            format!(
                "{:.0}% of {} ({} of {}) was never written ({how}): reads there come back as \
                 zeros without touching the store or the disk below, so a read test measures \
                 nothing real until it is filled{fill}",
                u.unwritten_bytes as f64 * 100.0 / u.region_bytes as f64,
                d.name,
                crate::units::fmt_size(u.unwritten_bytes),
                crate::units::fmt_size(u.region_bytes),
            ),
        )
        .with(json!({
            "unwritten_bytes": u.unwritten_bytes,
            "size_bytes": u.region_bytes,
            "stored_bytes": u.stored_bytes,
        })),
    );
}
