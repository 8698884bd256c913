//! Findings from how a test ran rather than from its diskstats: io_uring's hand-over to kernel
//! workers, direct writes of part of a file system block.

use super::{Evidence, Finding, Kind};
use crate::engine::job::{Job, Mode};
use crate::engine::target::FsBlock;
use crate::sysroot::SysRoot;
use crate::units::{exact_size, fmt_size};

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
    /// How long an idle CPU of this guest polls before it halts (the haltpoll cpuidle driver's
    /// `guest_halt_poll_ns`), where the machine is a VM that has it: [`halt_poll_ns`].
    pub halt_poll_ns: Option<u64>,
    /// The job polled its ring for completions instead of sleeping (`busy_polled`): it was
    /// not woken for them, and keeping it on its workers' CPU would take that CPU from them.
    pub busy_polled: bool,
}

/// What haltpoll's default did on the VM blkscope was measured on (docs/architecture.md), as a
/// finding that cites it carries it: the default (ns), the block size, and how many times as
/// fast 4K reads at QD1 ran with it on a loop device over a file and on a filled zram.
pub const HALT_POLL_MEASURED: [(&str, f64); 4] = [
    ("default_guest_halt_poll_ns", 200_000.0),
    ("measured_bs", 4096.0),
    ("measured_speedup_loop", 1.16),
    ("measured_speedup_zram", 7.0),
];

/// The haltpoll cpuidle governor's `guest_halt_poll_ns` (a KVM guest): how long an idle vCPU
/// polls for work before it halts and hands the CPU back to the host. At 0 every wake-up of an
/// idle vCPU goes through the hypervisor. None unless haltpoll is the governor in use (the
/// module may be loaded beside another).
pub fn halt_poll_ns(root: &SysRoot) -> Option<u64> {
    let idle = root.sys("devices/system/cpu/cpuidle");
    let governor = ["current_governor", "current_governor_ro"]
        .iter()
        .find_map(|f| crate::sysroot::read_attr(&idle.join(f)))?;
    if governor != "haltpoll" {
        return None;
    }
    crate::sysroot::read_u64(&root.sys("module/haltpoll/parameters/guest_halt_poll_ns"))
}

/// Above this mean latency the wake-ups are a small part of each I/O and the finding is left
/// out (docs/architecture.md, "io_worker_wakeups").
pub const IO_WORKER_WAKEUP_MAX_MEAN_NS: f64 = 200_000.0;

/// Up to this queue depth, keeping the job and its workers on one CPU won; deeper, two CPUs
/// working won instead (docs/architecture.md, "io_worker_wakeups").
pub const IO_WORKER_WAKEUP_MAX_DEPTH: u32 = 4;

/// A finding when io_uring handed a low-queue-depth test's I/O to its kernel worker threads
/// (io-wq) and the job was not kept to one CPU with them: each I/O then waits for a worker to
/// be woken and for the job to be woken back, and when the scheduler puts the two on different
/// CPUs that wake-up (tens of microseconds for an idle CPU in a VM) can be most of what was
/// measured (docs/architecture.md, "io_worker_wakeups").
pub fn io_worker_wakeups(job: &Job, issue: Issue, device: &str) -> Option<Finding> {
    if !issue.uring
        || issue.io_workers == 0
        || job.cpus.is_some()
        || job.sqpoll
        || job.iodepth > IO_WORKER_WAKEUP_MAX_DEPTH
        || issue.cpus_available < 2
        || issue.mean_latency_ns >= IO_WORKER_WAKEUP_MAX_MEAN_NS
        || issue.busy_polled
    {
        return None;
    }
    let on = if device.is_empty() {
        "the target".to_string()
    } else {
        device.to_string()
    };
    let e = Evidence::from([
        ("io_workers", issue.io_workers as f64),
        ("iodepth", job.iodepth as f64),
        ("cpus_available", issue.cpus_available as f64),
        ("mean_latency_ns", issue.mean_latency_ns),
    ]);
    let e = match issue.halt_poll_ns {
        Some(0) => HALT_POLL_MEASURED
            .iter()
            .fold(e.with("guest_halt_poll_ns", 0.0), |e, &(k, v)| e.with(k, v)),
        Some(n) => e.with("guest_halt_poll_ns", n as f64),
        None => e,
    };
    Some(
        Finding::new(Kind::IoWorkerWakeups, e, |e| {
            format!(
                "io_uring could not issue the I/O on {on} without blocking (a driver without \
                 NOWAIT support, such as zram, an I/O too large for one request, a direct write \
                 to part of a file system block, or a mode that waits), so it handed the I/O to \
                 kernel worker threads (io-wq). At queue depth {qd} each I/O then waits for a \
                 worker to wake and for the job to be woken back; when they run on different \
                 CPUs, waking an idle CPU (slow in a VM) can be most of the latency measured. \
                 The scheduler keeps them on one CPU only while the other CPUs are busy, so the \
                 figure depends on what else runs (several times faster while it does). Run \
                 again with --cpus N to keep the job and its workers on one CPU (fio: \
                 --cpus_allowed=N) and compare.{vm}",
                qd = e.count("iodepth"),
                vm = if e.get("guest_halt_poll_ns").is_some_and(|n| *n == 0.0) {
                    " This machine is a VM whose idle CPUs halt at once (the haltpoll \
                     governor's guest_halt_poll_ns is 0), so every such wake-up goes through \
                     the hypervisor: with the kernel's default of 200000 ns, 4K reads at QD1 on \
                     a filled zram ran 7x as fast unpinned on the VM blkscope was measured on, \
                     for fio alike. Polling spends host CPU time while the guest is idle, which \
                     is why a host may turn it off; an application on this VM pays the same \
                     wake-ups."
                } else {
                    ""
                }
            )
        })
        .on(device),
    )
}

/// A finding when a direct write test on a file writes part of a file system block at a time.
/// ext4 and XFS zero the rest of a block a direct write covers only partly when the block is
/// not written yet, and so run such writes one at a time (exclusive inode lock, waiting for
/// every direct I/O in flight), never without blocking. Over blocks already written ext4 runs
/// them in parallel, so for a file the user named, whose blocks may be written, it takes the
/// device's queue as the evidence: `aqu_sz` of the device holding the file.
/// `written`: what the device holding the file wrote while the test ran, and what the test
/// wrote, when known: the zeroing shows as more written than the test wrote. The measurements:
/// docs/architecture.md, "partial_fs_block".
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
    let bs_off = !job.bs.is_multiple_of(blk);
    let offset_off = !job.offset.is_multiple_of(blk);
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
    let mut e = Evidence::from([
        ("fs_block", blk as f64),
        ("bs", job.bs as f64),
        ("offset", job.offset as f64),
        ("in_flight_asked", asked as f64),
    ]);
    if let Some(a) = aqu_sz {
        e.insert("aqu-sz", a);
    }
    if let Some((dev, ours)) = amplified {
        e.insert("device_write_bytes", dev as f64);
        e.insert("test_write_bytes", ours as f64);
    }
    Some(
        Finding::new(Kind::PartialFsBlock, e, |e| {
            format!(
                "{what} not a multiple of the {} blocks of {fs_name} under the file. A direct \
                 write that covers part of a block {whose} makes the file system zero the rest \
                 of it, so ext4 and XFS run such writes one at a time, each waiting for every \
                 other in flight, and io_uring hands them to a kernel worker.{queue}{zeroed} Use \
                 {} to measure the device rather than this (fio and dd with this block size on \
                 a new file meet the same).",
                fmt_size(e.count("fs_block")),
                fix.join(" and "),
            )
        })
        .on(device),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::job::Op;

    fn job(op: Op, bs: u64, mode: Mode) -> Job {
        super::super::diskstats::tests::job(op, bs, mode)
    }

    #[test]
    fn io_worker_wakeups_only_at_low_depth_unpinned_with_workers_seen() {
        let mut j = job(Op::Randread, 4096, Mode::Direct);
        let seen = Issue {
            uring: true,
            io_workers: 1,
            cpus_available: 2,
            mean_latency_ns: 54_000.0,
            halt_poll_ns: None,
            busy_polled: false,
        };
        let f = io_worker_wakeups(&j, seen, "zram1").expect("a QD1 io_uring run through io-wq");
        println!("{}", f.message);
        assert_eq!(f.kind, "io_worker_wakeups");
        assert!(f.message.contains("zram1") && f.message.contains("--cpus N"));
        assert!(f.message.contains("--cpus_allowed=N"));
        assert_eq!(f.numbers["io_workers"], 1.0);
        assert!(
            !f.message.contains("guest_halt_poll_ns"),
            "not a VM: {}",
            f.message
        );
        // A KVM guest whose idle vCPUs halt at once: the cause named, with its figure.
        let vm = Issue {
            halt_poll_ns: Some(0),
            ..seen
        };
        let f = io_worker_wakeups(&j, vm, "zram1").expect("the same run in such a VM");
        println!("{}", f.message);
        assert!(
            f.message.contains("guest_halt_poll_ns is 0"),
            "{}",
            f.message
        );
        assert_eq!(f.numbers["guest_halt_poll_ns"], 0.0);
        // Polling on: the wake-ups are cheaper, and nothing is said of it.
        let polls = Issue {
            halt_poll_ns: Some(200_000),
            ..seen
        };
        let f = io_worker_wakeups(&j, polls, "zram1").expect("still through io-wq");
        assert!(!f.message.contains("halt at once"), "{}", f.message);

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
        none(
            &j,
            Issue {
                busy_polled: true,
                ..seen
            },
            "the job polled for its completions: no wake-up to save, and --cpus would take the \
             workers' CPU",
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
    fn halt_polling_is_read_where_the_driver_is() {
        let dir = tempfile::tempdir().unwrap();
        let root = SysRoot::at(dir.path());
        assert_eq!(halt_poll_ns(&root), None, "no haltpoll driver");
        let p = dir.path().join("sys/module/haltpoll/parameters");
        std::fs::create_dir_all(&p).unwrap();
        std::fs::write(p.join("guest_halt_poll_ns"), "0\n").unwrap();
        let idle = dir.path().join("sys/devices/system/cpu/cpuidle");
        std::fs::create_dir_all(&idle).unwrap();
        std::fs::write(idle.join("current_governor_ro"), "menu\n").unwrap();
        assert_eq!(halt_poll_ns(&root), None, "loaded, but menu governs");
        std::fs::write(idle.join("current_governor_ro"), "haltpoll\n").unwrap();
        assert_eq!(halt_poll_ns(&root), Some(0));
        std::fs::write(p.join("guest_halt_poll_ns"), "200000\n").unwrap();
        assert_eq!(halt_poll_ns(&root), Some(200_000));
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
}
