//! Reads of what was never written. A zram device answers a read of a page it never stored
//! with zeros without touching its store, and a file system answers a read of a hole in a file
//! (a sparse or fallocated file, or a loop device's backing file) with zeros without reading
//! the disk below: such reads flatter every tool (docs/tests.md, "Findings"). Before a read test,
//! blkscope looks at how much of the region it will read holds nothing, where it can tell:
//! zram (`mm_stat`), a loop device (its backing file's holes) and a named file (its holes).
//! Other devices (a thin volume, an SSD after TRIM) can hand back zeros the same way, unseen:
//! for them the jobs sample what their reads returned (`zeros_read`, in [`crate::analysis::findings::unwritten`]).

use std::fs::File;

use crate::device::Store;
use crate::sysroot::{SysRoot, read_attr};

/// How much of the region a read test reads held nothing when it began.
#[derive(Debug, Clone, PartialEq)]
pub struct Unwritten {
    pub region_bytes: u64,
    /// Bytes of the region that were never written (at least this many, for zram).
    pub unwritten_bytes: u64,
    /// zram: the bytes it stored, over the whole device.
    pub stored_bytes: Option<u64>,
}

impl Unwritten {
    /// At least a tenth of the region (and 64 KiB) was never written: enough of the reads cost
    /// the device nothing to say so (a run's finding and the doctor's alike).
    pub fn worth_saying(&self) -> bool {
        self.region_bytes > 0
            && self.unwritten_bytes >= 64 << 10
            && self.unwritten_bytes * 10 >= self.region_bytes
    }
}

/// Data extents walked at most in a backing file: a file in millions of pieces costs a few
/// hundred milliseconds before the test, not more; the rest counts as data.
const MAX_EXTENTS: usize = 100_000;

/// Looks at `[start, start + len)` of the target before a read test. None where blkscope cannot
/// tell (or could not look).
pub fn probe(root: &SysRoot, store: &Store, start: u64, len: u64) -> Option<Unwritten> {
    let end = start.checked_add(len)?;
    match store {
        Store::Zram { device } => {
            // mm_stat: orig_data_size first, the bytes of every page stored (same-filled ones
            // too). Pages written back to a backing device leave that count (bd_stat's first
            // field, in pages).
            let mm = read_attr(&root.sys(format!("block/{device}/mm_stat")))?;
            let orig: u64 = mm.split_whitespace().next()?.parse().ok()?;
            let written_back = read_attr(&root.sys(format!("block/{device}/bd_stat")))
                .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok())
                .unwrap_or(0)
                * 4096;
            let stored = orig + written_back;
            Some(Unwritten {
                region_bytes: len,
                unwritten_bytes: len.saturating_sub(stored),
                stored_bytes: Some(stored),
            })
        }
        Store::BackingFile { file, offset, .. } => holes(
            file,
            offset.checked_add(start)?,
            offset.checked_add(end)?,
            len,
        ),
        Store::File { path } => holes(path, start, end, len),
        Store::Unknown => None,
    }
}

fn holes(path: &std::path::Path, from: u64, to: u64, len: u64) -> Option<Unwritten> {
    // A descriptor of its own: the walk moves the file offset.
    let f = File::open(path).ok()?;
    let data = crate::sys::data_bytes(&f, from, to, MAX_EXTENTS).ok()?;
    Some(Unwritten {
        region_bytes: len,
        unwritten_bytes: len.saturating_sub(data),
        stored_bytes: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zram_is_probed_from_mm_stat_through_the_root() {
        let dir = tempfile::tempdir().unwrap();
        let block = dir.path().join("sys/block/zram3");
        std::fs::create_dir_all(&block).unwrap();
        std::fs::write(
            block.join("mm_stat"),
            "  8388608   100000   200000        0   200000        5        0        0        0\n",
        )
        .unwrap();
        let root = SysRoot::at(dir.path());
        let store = Store::Zram {
            device: "zram3".into(),
        };
        let u = probe(&root, &store, 0, 64 << 20).unwrap();
        assert_eq!(u.stored_bytes, Some(8 << 20));
        assert_eq!(u.unwritten_bytes, 56 << 20);
        // Pages written back to a backing device were written too.
        std::fs::write(block.join("bd_stat"), "     1024        0        0\n").unwrap();
        let u = probe(&root, &store, 0, 64 << 20).unwrap();
        assert_eq!(u.unwritten_bytes, 52 << 20);
    }

    #[test]
    fn a_loop_partition_is_looked_at_where_it_lies_in_the_backing_file() {
        use std::os::unix::fs::FileExt;
        let dir = tempfile::tempdir().unwrap();
        let w = |rel: &str, text: &str| {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        };
        // A 16 MiB backing file with data only in [9 MiB, 10 MiB); the loop device starts 1 MiB
        // into it (losetup --offset), and its partition 1 at sector 2048 (1 MiB further).
        let backing = dir.path().join("disk.img");
        let f = File::create(&backing).unwrap();
        f.set_len(16 << 20).unwrap();
        f.write_all_at(&vec![7u8; 1 << 20], 9 << 20).unwrap();
        f.sync_all().unwrap();
        if !crate::sys::tracks_holes(&f, 16 << 20, dir.path()) {
            return;
        }
        w("sys/block/loop5/dev", "7:5\n");
        w("sys/block/loop5/size", "30720\n");
        w(
            "sys/block/loop5/loop/backing_file",
            &format!("{}\n", backing.display()),
        );
        w("sys/block/loop5/loop/offset", "1048576\n");
        w("sys/block/loop5/loop5p1/partition", "1\n");
        w("sys/block/loop5/loop5p1/start", "2048\n");
        w("sys/block/loop5/loop5p1/size", "20480\n");
        w("sys/block/loop5/loop5p1/dev", "259:0\n");
        w("proc/self/mountinfo", "");
        w("proc/swaps", "Filename Type Size Used Priority\n");
        let root = SysRoot::at(dir.path());
        let opts = crate::device::DiscoverOptions {
            skip_signatures: true,
            ..Default::default()
        };
        let tree = crate::device::discover(&root, &opts).unwrap();
        let part = tree.get("loop5p1").expect("the partition in the tree");
        let store = Store::of_device(&root, &tree, part);
        assert_eq!(
            store,
            Store::BackingFile {
                device: "loop5p1".into(),
                file: backing.clone(),
                offset: 2 << 20
            }
        );
        // The partition's [6 MiB, 8 MiB) is the file's [8 MiB, 10 MiB): half data.
        let u = probe(&root, &store, 6 << 20, 2 << 20).unwrap();
        println!("{u:?}");
        assert!(
            ((1 << 20) - 65536..=1 << 20).contains(&u.unwritten_bytes),
            "{u:?}"
        );
        // Its [0, 4 MiB) is the file's [2 MiB, 6 MiB): all holes.
        assert_eq!(
            probe(&root, &store, 0, 4 << 20).unwrap().unwritten_bytes,
            4 << 20
        );
    }
}
