//! What each kind of warning or finding means, in general: what `blkscope explain KIND` says
//! before the words of the newest run that had one. A run's own message says what was seen in
//! that run, with its figures; this says what the kind is about and what to do about it.

/// (kind, what it means).
pub const KINDS: [(&str, &str); 17] = [
    (
        "read_modify_write",
        "Reads on the target, or on a device under it, during a write-only test: something \
         reads a block before writing part of it. Buffered writes smaller than the page-cache \
         block (4 KiB, or a smaller file system block) make the kernel read the block first, \
         whatever the sector size; below the test, a device with larger blocks, RAID parity \
         or unaligned offsets do the same. Use a block size that is a multiple of the block, \
         or direct I/O at a multiple of the logical block size. Reads by other processes \
         meanwhile are named, as they may be the ones seen.",
    ),
    (
        "flushes",
        "Cache flushes reached the device during a write test: with O_DSYNC or O_SYNC every \
         write waits until the drive has written its volatile cache, and that wait, not the \
         transfer, is what a sync write costs. Flushes in a test that asked for none came \
         from something else.",
    ),
    (
        "util_saturation",
        "%util is the share of time with at least one request in flight, not capacity: near \
         100% with one request in flight, a parallel device (SSD, NVMe, RAID) may do much \
         more with a deeper queue; below 90% with a deep queue it says little. Read it next \
         to aqu-sz, IOPS and latency.",
    ),
    (
        "page_cache",
        "The test went through the page cache (RAM): buffered writes without a sync are done \
         once copied into memory, and buffered reads may come from it. Use --mode fdatasync \
         (dd conv=fdatasync) or --mode direct for writes, --mode nocache or --mode direct for \
         reads.",
    ),
    (
        "backing_cache",
        "The target is a loop device attached without direct I/O, or is built on one, or its \
         backing file is in RAM (tmpfs): its I/O goes through the backing file's page cache \
         or to memory, whatever the test's flags, so the test measures memory. Attach it with \
         losetup --direct-io=on, put its file on the disk to test, or test that disk.",
    ),
    (
        "memory_fs",
        "The test's file is on a tmpfs or ramfs: RAM, with no block device under it. The \
         figures are memory copies; give a directory on a disk.",
    ),
    (
        "partial_fs_block",
        "Direct writes of part of a file system block (--bs or --offset not a multiple of it): \
         ext4 and XFS zero the rest of a block not yet written, so they run such writes one at \
         a time and never without blocking. Use the --bs and --offset the finding gives.",
    ),
    (
        "write_cache",
        "What the drive's write cache means for sync writes: with a volatile cache (write \
         back) each sync write waits for a flush; with the cache off or in write through mode \
         every write goes to the media, 30x to 100x slower per write. On zram or a RAM disk \
         there is nothing to flush and nothing durable.",
    ),
    (
        "stats_off",
        "queue/iostats is 0: the kernel keeps no I/O statistics for the device, so its \
         diskstats (and iostat, and the panel) show zeros, not idleness. Turn them on with \
         echo 1 > /sys/block/DEV/queue/iostats.",
    ),
    (
        "io_worker_wakeups",
        "io_uring could not issue the I/O without blocking (zram and other drivers without \
         NOWAIT support, an I/O too large for one request, a direct write to part of a file \
         system block), so kernel worker threads (io-wq) ran it: at a low queue depth every \
         I/O then waits for a worker to wake and for the job to be woken back, which can be \
         most of the latency, more so in a VM whose idle CPUs halt at once. Run again with \
         --cpus N to keep the job and its workers on one CPU (fio: --cpus_allowed=N).",
    ),
    (
        "never_written",
        "Part of what a read test read was never written (zram pages never stored, holes in a \
         file or a loop device's backing file): such reads come back as zeros without touching \
         the store or the disk, and flatter every tool. Fill the region first (the finding \
         gives the blkscope run --op write that does).",
    ),
    (
        "zeros_read",
        "A tenth or more of the blocks sampled from a read test's reads were all zeros: blocks \
         never written, discarded (TRIM) or written as zeros often come back without the \
         device reading its medium, so the figures are flattered. Fill the region with random \
         data and test again.",
    ),
    (
        "busy_processes",
        "Other processes moved data while the test ran: they share the devices and the CPU \
         with it. Their I/O is theirs, not the test's; run again when they are done to see \
         the device alone.",
    ),
    (
        "zeros",
        "The test wrote zeros: a compressing file system (ZFS, btrfs), zram or an SSD \
         controller stores them almost for free and flatters the result. Use --data random \
         (the default).",
    ),
    (
        "psync_iodepth",
        "pread and pwrite are synchronous: with the pread/pwrite engine each job has one I/O \
         in flight, whatever --iodepth says. Use --jobs N for parallel I/O there.",
    ),
    (
        "outlier",
        "A repeat more than 25% from the median throughput: caches warming or filling, \
         garbage collection, thermal throttling or another process. Look at the spread, and \
         run again before believing any single number.",
    ),
    (
        "write_cache_toggle",
        "The kernel was told the write cache is write through, so it sent no flushes: faster, \
         and unsafe if the device does keep a volatile cache. A drive's own cache turned off \
         (hdparm -W0) is slower instead: every write waits for the media.",
    ),
];

/// What warnings and findings of `kind` mean, if it is one.
pub fn about(kind: &str) -> Option<&'static str> {
    KINDS.iter().find(|(k, _)| *k == kind).map(|(_, a)| *a)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind the code raises is explained: those named in the source as a finding's
    /// `kind:` or a warning's first argument.
    #[test]
    fn every_kind_raised_is_explained() {
        let src = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
        let mut raised = std::collections::BTreeSet::new();
        let mut stack = vec![std::path::PathBuf::from(src)];
        while let Some(p) = stack.pop() {
            for e in std::fs::read_dir(&p).unwrap().flatten() {
                let path = e.path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                let code = text.split("#[cfg(test)]\nmod tests").next().unwrap();
                for (i, _) in code
                    .match_indices("kind: \"")
                    .chain(code.match_indices("Warning::new("))
                {
                    let rest = &code[i..];
                    let Some(q) = rest.find('"') else { continue };
                    let name: String = rest[q + 1..]
                        .chars()
                        .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                        .collect();
                    // A finding's `kind: "x",` (a &'static str), not a signature's `"x".into()`.
                    let after = rest[q + 1 + name.len()..].strip_prefix('"').unwrap_or("");
                    if !name.is_empty() && rest[..q].lines().count() <= 2 && after.starts_with(',')
                    {
                        raised.insert(name);
                    }
                }
            }
        }
        // Target kinds (`kind: "block",`) are not warnings.
        raised.remove("block");
        raised.remove("file");
        println!("raised: {raised:?}");
        assert!(raised.len() >= 14, "{raised:?}");
        for k in &raised {
            assert!(
                about(k).is_some(),
                "{k} is raised but not explained in KINDS"
            );
        }
    }
}
