//! The kinds of finding and warning, each with what it means in general: what `blkscope explain
//! KIND` says before the words of the newest run that had one, and what docs/findings.md lists.
//! A finding's own message says what was seen, with its figures; this says what the kind is
//! about and what to do about it. A new kind is a variant here, and the compiler asks for its
//! name, its meaning and where it comes from.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Where findings of a kind come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// A test's settings, before it runs.
    Job,
    /// The diskstats of the devices under a test.
    Diskstats,
    /// How a test ran (the engine, the target, what lies under it).
    HowItRan,
    /// What a test read that held nothing.
    Unwritten,
    /// Other processes, by the block layer's trace or /proc.
    Others,
    /// Repeats of a test, and what a suite changed.
    Repeats,
    /// A device's settings and health (`doctor`; some also on a test's result).
    Device,
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::Job => "the test's settings",
            Source::Diskstats => "diskstats during the test",
            Source::HowItRan => "how the test ran",
            Source::Unwritten => "what the test read",
            Source::Others => "other processes",
            Source::Repeats => "repeats and suites",
            Source::Device => "the device (doctor)",
        }
    }
}

macro_rules! kinds {
    ($($variant:ident $name:literal $source:ident $about:literal,)*) => {
        /// A kind of finding or warning. Its JSON is its name (`read_modify_write`).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Kind {
            $($variant,)*
        }

        impl Kind {
            /// Every kind, in the order `explain` and docs/findings.md list them.
            pub const ALL: &'static [Kind] = &[$(Kind::$variant,)*];

            /// Its name, as JSON, the text output and `blkscope explain` spell it.
            pub fn name(self) -> &'static str {
                match self {
                    $(Kind::$variant => $name,)*
                }
            }

            /// What findings of this kind mean, in general.
            pub fn about(self) -> &'static str {
                match self {
                    $(Kind::$variant => $about,)*
                }
            }

            /// Where findings of this kind come from.
            pub fn source(self) -> Source {
                match self {
                    $(Kind::$variant => Source::$source,)*
                }
            }
        }
    };
}

/// What a finding does to the test's figure: the order notes are said in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Effect {
    /// The figure is not the device's at all (reads of holes, memory, the page cache).
    Meaningless,
    /// The figure is the device's, moved by something the finding names (read-modify-write,
    /// flushes, another process's I/O, the engine's way of running it).
    Changes,
    /// What the device is and how it is set up: context for reading the figure.
    Context,
}

impl Kind {
    /// What findings of this kind do to the test's figure.
    pub fn effect(self) -> Effect {
        use Kind::*;
        match self {
            NeverWritten | ZerosRead | PageCache | MemoryFs | BackingCache | Zeros => {
                Effect::Meaningless
            }
            ReadModifyWrite | Flushes | PartialFsBlock | IoWorkerWakeups | BusyProcesses
            | Stall | PsyncIodepth | Outlier | WriteCacheToggle | InUse => Effect::Changes,
            UtilSaturation | WriteCache | StatsOff | Smart | SmartUnavailable | Misaligned
            | Scheduler | QueueLimits | IdleHalt | KernelErrors => Effect::Context,
        }
    }
}

kinds! {
    ReadModifyWrite "read_modify_write" Diskstats
        "Reads on the target, or on a device under it, during a write-only test: something \
         reads a block before writing part of it. Buffered writes smaller than the page-cache \
         block (4 KiB, or a smaller file system block) make the kernel read the block first, \
         whatever the sector size; below the test, a device with larger blocks, RAID parity \
         or unaligned offsets do the same. Use a block size that is a multiple of the block, \
         or direct I/O at a multiple of the logical block size. Reads by other processes \
         meanwhile are named, as they may be the ones seen. The whole disk of a partition is \
         not looked at: its counters hold its other partitions' I/O too, and the test's reads \
         are counted on its own partition.",
    Flushes "flushes" Diskstats
        "Cache flushes reached the device during a write test: with O_DSYNC or O_SYNC every \
         write waits until the drive has written its volatile cache, and that wait, not the \
         transfer, is what a sync write costs. In a test that asked for none, the block layer's \
         trace says whether they were the test's (a file system's journal working for it) or \
         another process's; on a loop device a flush syncs its backing file.",
    UtilSaturation "util_saturation" Diskstats
        "%util is the share of time with at least one request in flight, not capacity: near \
         100% with one request in flight, a parallel device (SSD, NVMe, RAID) may do much \
         more with a deeper queue; below 90% with a deep queue it says little. Read it next \
         to aqu-sz, IOPS and latency.",
    PageCache "page_cache" Diskstats
        "The test went through the page cache (RAM): buffered writes without a sync are done \
         once copied into memory, and buffered reads may come from it. Use --mode fdatasync \
         (dd conv=fdatasync) or --mode direct for writes, --mode nocache or --mode direct for \
         reads. Those two modes keep the cache out of one pass only: --mode nocache empties \
         it before the run and --mode fdatasync syncs at the end, so a run that goes over its \
         region again and again (a timed run wraps around it) reads memory after its first \
         pass, or has its rewrites synced once. Said from the device's counters: less than \
         half of what the test moved reached the device.",
    BackingCache "backing_cache" Device
        "The target is a loop device attached without direct I/O, or is built on one, or its \
         backing file is in RAM (tmpfs): its I/O goes through the backing file's page cache \
         or to memory, whatever the test's flags, so the test measures memory. Attach it with \
         losetup --direct-io=on, put its file on the disk to test, or test that disk.",
    MemoryFs "memory_fs" HowItRan
        "The test's file is on a tmpfs or ramfs: RAM, with no block device under it. The \
         figures are memory copies; give a directory on a disk.",
    PartialFsBlock "partial_fs_block" HowItRan
        "Direct writes of part of a file system block (--bs or --offset not a multiple of it): \
         ext4 and XFS zero the rest of a block not yet written, so they run such writes one at \
         a time and never without blocking. Use the --bs and --offset the finding gives.",
    WriteCache "write_cache" Device
        "What the drive's write cache means for sync writes: with a volatile cache (write \
         back) each sync write waits for a flush; with the cache off or in write through mode \
         every write goes to the media, 30x to 100x slower per write. On zram or a RAM disk \
         there is nothing to flush and nothing durable; a loop device's cache is its backing \
         file's page cache, and a sync write waits for that file to be synced.",
    StatsOff "stats_off" Device
        "queue/iostats is 0: the kernel keeps no I/O statistics for the device, so its \
         diskstats (and iostat, and the panel) show zeros, not idleness. Turn them on with \
         echo 1 > /sys/block/DEV/queue/iostats.",
    IoWorkerWakeups "io_worker_wakeups" HowItRan
        "io_uring could not issue the I/O without blocking (zram and other drivers without \
         NOWAIT support, an I/O too large for one request, a direct write to part of a file \
         system block), so kernel worker threads (io-wq) ran it: at a low queue depth every \
         I/O then waits for a worker to wake and for the job to be woken back, which can be \
         most of the latency, more so in a VM whose idle CPUs halt at once. Run again with \
         --cpus N to keep the job and its workers on one CPU (fio: --cpus_allowed=N).",
    Stall "stall" HowItRan
        "For a second or more (and ten times the test's median latency), none of the test's \
         I/Os completed while some were in flight: the device, or something under it, held \
         them. A file system frozen under a loop device (fsfreeze, a snapshot), a disk \
         spinning up or retrying a sector it cannot read, a path being failed over, a \
         drive's firmware pausing; for buffered writes, the kernel's writeback throttling. \
         The run's throughput and its maximum latency count the wait: run again, and look at \
         the kernel's log (dmesg) and the devices under the target.",
    NeverWritten "never_written" Unwritten
        "Part of what a read test read was never written (zram pages never stored, holes in a \
         file or a loop device's backing file): such reads come back as zeros without touching \
         the store or the disk, and flatter every tool. Fill the region first (the finding \
         gives the blkscope run --op write that does).",
    ZerosRead "zeros_read" Unwritten
        "A tenth or more of the blocks sampled from a read test's reads were all zeros: blocks \
         never written, discarded (TRIM) or written as zeros often come back without the \
         device reading its medium, so the figures are flattered. Fill the region with random \
         data and test again.",
    BusyProcesses "busy_processes" Others
        "Other processes moved data while the test ran: they share the devices and the CPU \
         with it. Their I/O is theirs, not the test's; run again when they are done to see \
         the device alone.",
    Zeros "zeros" Job
        "The test wrote zeros: a compressing file system (ZFS, btrfs), zram or an SSD \
         controller stores them almost for free and flatters the result. Use --data random \
         (the default).",
    PsyncIodepth "psync_iodepth" Job
        "pread and pwrite are synchronous: with the pread/pwrite engine each job has one I/O \
         in flight, whatever --iodepth says. Use --jobs N for parallel I/O there.",
    Outlier "outlier" Repeats
        "A repeat more than 25% from the median throughput: caches warming or filling, \
         garbage collection, thermal throttling or another process. Look at the spread, and \
         run again before believing any single number.",
    WriteCacheToggle "write_cache_toggle" Repeats
        "The kernel was told the write cache is write through, so it sent no flushes: faster, \
         and unsafe if the device does keep a volatile cache. A drive's own cache turned off \
         (hdparm -W0) is slower instead: every write waits for the media.",
    Smart "smart" Device
        "The drive's own health record, read by smartctl: its overall verdict, reallocated, \
         pending and uncorrectable sectors, link CRC errors, wear, spare capacity, media \
         errors and temperature. A drive that predicts its failure, or counts sectors it \
         could not read, is copied off before it is tested.",
    SmartUnavailable "smart_unavailable" Device
        "No SMART for this device, and why: a virtual device (loop, zram, device-mapper, md: \
         check the devices under it), smartctl missing (install smartmontools) or unable to \
         open it (root is needed), or a device that reports none.",
    Misaligned "misaligned" Device
        "A partition or device that does not start on a physical block (or on the optimal I/O \
         size, a RAID stripe): each write of a block then touches two, and the drive reads \
         before it writes. Repartition at a 1 MiB boundary.",
    Scheduler "scheduler" Device
        "The I/O scheduler against the medium: a disk that seeks without one (none) serves \
         requests in arrival order; bfq on fast flash spends per-request work that costs \
         IOPS. mq-deadline or bfq suit disks, none or mq-deadline flash.",
    QueueLimits "queue_limits" Device
        "Queue limits that shape a test: max_sectors_kb below what the hardware takes splits \
         large I/Os, and a small nr_requests holds deeper queues in the kernel.",
    IdleHalt "idle_halt" Device
        "This machine is a VM whose idle CPUs halt at once (guest_halt_poll_ns is 0): a CPU \
         asleep while an I/O is in flight is woken through the hypervisor, which adds to every \
         latency measured at a low queue depth. Compare latency with another machine's with \
         that in mind.",
    InUse "in_use" Device
        "The device or something on it is mounted, used as swap or held by another device \
         (LVM, md, dm): write tests are refused, and its own I/O disturbs reads.",
    KernelErrors "kernel_errors" Device
        "The kernel counted failed or timed-out commands on the device since it appeared \
         (device/ioerr_cnt, iotmo_cnt): the medium or the link failed requests. dmesg names \
         them; SMART says whether the drive knows.",
}

impl Kind {
    /// The kind of this name, if it is one.
    pub fn parse(name: &str) -> Option<Kind> {
        Kind::ALL.iter().copied().find(|k| k.name() == name)
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl PartialEq<&str> for Kind {
    fn eq(&self, other: &&str) -> bool {
        self.name() == *other
    }
}

impl Serialize for Kind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Kind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Kind::parse(&name).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "unknown kind of finding '{name}' (written by another version of blkscope?)"
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_has_a_name_of_its_own_and_says_what_it_means() {
        let mut names = std::collections::BTreeSet::new();
        for k in Kind::ALL {
            println!("{k}: {}", k.about());
            assert!(names.insert(k.name()), "{k} twice");
            assert!(
                k.name().chars().all(|c| c.is_ascii_lowercase() || c == '_'),
                "{k}"
            );
            assert!(k.about().len() > 80 && k.about().ends_with('.'), "{k}");
            assert_eq!(Kind::parse(k.name()), Some(*k));
            let json = serde_json::to_string(k).unwrap();
            assert_eq!(json, format!("\"{}\"", k.name()));
            assert_eq!(serde_json::from_str::<Kind>(&json).unwrap(), *k);
        }
        let e = serde_json::from_str::<Kind>("\"no_such\"").unwrap_err();
        assert!(
            e.to_string().contains("unknown kind of finding 'no_such'"),
            "{e}"
        );
    }
}
