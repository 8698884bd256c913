//! Reads of what was never written. A zram device answers a read of a page it never stored
//! with zeros without touching its store, and a file system answers a read of a hole in a file
//! (a sparse or fallocated file, or a loop device's backing file) with zeros without reading
//! the disk below: such reads flatter every tool (README, "Findings"). Before a read test,
//! blkscope looks at how much of the region it will read holds nothing, where it can tell:
//! zram (`mm_stat`), a loop device (its backing file's holes) and a named file (its holes).
//! Other devices (a thin volume, an SSD after TRIM) can hand back zeros the same way, unseen:
//! for them the jobs sample what their reads returned ([`ZeroSampler`], `zeros_read`).

use std::collections::BTreeMap;
use std::fs::File;

use crate::analysis::findings::Finding;
use crate::device::Store;
use crate::engine::job::Job;
use crate::engine::zeros::ZeroSampler;
use crate::sysroot::{SysRoot, read_attr};
use crate::units::{exact_size, fmt_size};

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

/// The finding when enough of what a read test reads was never written
/// ([`Unwritten::worth_saying`]): that share of its reads cost the device nothing.
pub fn finding(job: &Job, target: &str, store: &Store, u: &Unwritten) -> Option<Finding> {
    if !job.op.reads() || !u.worth_saying() {
        return None;
    }
    let share = u.unwritten_bytes as f64 / u.region_bytes as f64;
    let pct = format!("{:.0}%", share * 100.0);
    let (region, unwritten) = (fmt_size(u.region_bytes), fmt_size(u.unwritten_bytes));
    let fill = fill_command(
        job,
        target,
        u.region_bytes,
        matches!(store, Store::File { .. }),
    );
    let (device, what) = match store {
        Store::Zram { device } => (
            device.clone(),
            format!(
                "{device} stored {} when the test began, and the test reads {region}: at least \
                 {unwritten} of that ({pct}) was never written (or was discarded). zram answers a \
                 read of such a page with zeros without touching its store",
                match u.stored_bytes.unwrap_or(0) {
                    0 => "nothing".to_string(),
                    b => fmt_size(b),
                }
            ),
        ),
        Store::BackingFile { device, file, .. } => (
            device.clone(),
            format!(
                "{unwritten} ({pct}) of the {region} the test reads on {device} is holes in its \
                 backing file {}: never written, or allocated but unwritten. The file system \
                 answers a read of a hole with zeros without reading the disk below",
                file.display()
            ),
        ),
        Store::File { path } => (
            String::new(),
            format!(
                "{unwritten} ({pct}) of the {region} the test reads in {} is holes: never \
                 written, or allocated but unwritten. The file system answers a read of a hole \
                 with zeros without reading the disk",
                path.display()
            ),
        ),
        Store::Unknown => return None,
    };
    Some(Finding {
        kind: "never_written",
        device,
        message: format!(
            "{what}, so those reads flatter the result (fio and dd alike). Fill the region with \
             data first ({fill}) and measure again."
        ),
        numbers: BTreeMap::from([
            ("region_bytes", u.region_bytes as f64),
            ("unwritten_bytes", u.unwritten_bytes as f64),
            ("unwritten_share", share),
        ])
        .into_iter()
        .chain(u.stored_bytes.map(|s| ("stored_bytes", s as f64)))
        .collect(),
    })
}

/// A write test over the same region as `job`: 1M writes where the region allows them, and
/// `--force` for a file (which a write test overwrites only when told).
fn fill_command(job: &Job, target: &str, region: u64, file: bool) -> String {
    let bs = if job.offset.is_multiple_of(1 << 20) && region.is_multiple_of(1 << 20) {
        1 << 20
    } else {
        job.bs
    };
    let mut fill = format!("blkscope run {target} --op write --bs {}", exact_size(bs));
    if job.offset > 0 {
        fill += &format!(" --offset {}", exact_size(job.offset));
    }
    fill += &format!(" --size {}", exact_size(region));
    if file {
        fill += " --force";
    }
    fill
}

/// The finding when at least a tenth of the blocks sampled from a read test's reads (and 8
/// were sampled) were all zeros, on any device: where blkscope cannot see which blocks were
/// written ([`finding`] says more where it can, and this one is then left out). `file`: the
/// target is a file.
pub fn zeros_finding(
    job: &Job,
    target: &str,
    device: &str,
    file: bool,
    region: u64,
    zeros: &ZeroSampler,
) -> Option<Finding> {
    if !job.op.reads() || zeros.sampled < 8 || zeros.zero * 10 < zeros.sampled {
        return None;
    }
    let share = zeros.zero as f64 / zeros.sampled as f64;
    let fill = fill_command(job, target, region, file);
    Some(Finding {
        kind: "zeros_read",
        device: device.to_string(),
        message: format!(
            "{} of the {} blocks sampled from the test's reads (one every {} read) were all \
             zeros ({:.0}%). Blocks never written, discarded (TRIM) or written as zeros often come \
             back without the device reading its medium (an SSD, a thin volume, zram, a sparse \
             file), so such reads flatter the result (fio and dd alike). Unless zeros are what \
             it should hold, fill the region with data first ({fill}) and measure again.",
            zeros.zero,
            zeros.sampled,
            fmt_size(zeros.every),
            share * 100.0
        ),
        numbers: BTreeMap::from([
            ("sampled_blocks", zeros.sampled as f64),
            ("zero_blocks", zeros.zero as f64),
            ("zero_share", share),
        ]),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::job::Op;

    fn job(op: Op) -> Job {
        Job {
            op,
            bs: 4096,
            ..Job::default()
        }
    }

    fn zram() -> Store {
        Store::Zram {
            device: "zram1".into(),
        }
    }

    #[test]
    fn a_read_of_an_empty_zram_is_a_finding_with_its_numbers() {
        let u = Unwritten {
            region_bytes: 1 << 30,
            unwritten_bytes: (1 << 30) - (4 << 20),
            stored_bytes: Some(4 << 20),
        };
        let f = finding(&job(Op::Randread), "/dev/zram1", &zram(), &u).expect("a finding");
        println!("{}", f.message);
        assert_eq!(f.kind, "never_written");
        assert_eq!(f.device, "zram1");
        assert_eq!(f.numbers["stored_bytes"], (4 << 20) as f64);
        assert_eq!(f.numbers["unwritten_bytes"], ((1 << 30) - (4 << 20)) as f64);
        assert!(
            f.message
                .contains("blkscope run /dev/zram1 --op write --bs 1M --size 1G"),
            "{}",
            f.message
        );
        assert!(f.message.contains("at least 1020M"), "{}", f.message);
    }

    #[test]
    fn no_finding_for_a_write_test_a_filled_region_or_a_few_holes() {
        let empty = Unwritten {
            region_bytes: 1 << 30,
            unwritten_bytes: 1 << 30,
            stored_bytes: Some(0),
        };
        assert_eq!(
            finding(&job(Op::Randwrite), "/dev/zram1", &zram(), &empty),
            None
        );
        assert!(finding(&job(Op::Randrw), "/dev/zram1", &zram(), &empty).is_some());
        // Under a tenth of the region, or under 64 KiB: left out.
        let few = Unwritten {
            unwritten_bytes: (1 << 30) / 11,
            ..empty.clone()
        };
        assert_eq!(finding(&job(Op::Read), "/dev/zram1", &zram(), &few), None);
        let tiny = Unwritten {
            region_bytes: 256 << 10,
            unwritten_bytes: 60 << 10,
            stored_bytes: Some(0),
        };
        assert_eq!(finding(&job(Op::Read), "/dev/zram1", &zram(), &tiny), None);
        assert_eq!(
            finding(&job(Op::Read), "x", &Store::Unknown, &empty),
            None,
            "an unknown store says nothing"
        );
    }

    #[test]
    fn the_fill_command_keeps_the_test_region() {
        let j = Job {
            offset: 12 << 10,
            ..job(Op::Randread)
        };
        let u = Unwritten {
            region_bytes: 8 << 20,
            unwritten_bytes: 8 << 20,
            stored_bytes: None,
        };
        let store = Store::File {
            path: "/srv/f".into(),
        };
        let f = finding(&j, "/srv/f", &store, &u).unwrap();
        assert!(
            f.message
                .contains("blkscope run /srv/f --op write --bs 4k --offset 12k --size 8M --force"),
            "{}",
            f.message
        );
        assert_eq!(f.device, "");
    }

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

    #[test]
    fn zeros_read_needs_eight_samples_and_a_tenth_of_them_zero() {
        let z = |sampled: u64, zero: u64| {
            let (mut s, blank, data) = (ZeroSampler::default(), [0u8; 4096], [1u8; 4096]);
            for k in 0..sampled {
                // One sample per 4 MiB read.
                s.see(4 << 20, || if k < zero { &blank } else { &data });
            }
            s
        };
        let j = job(Op::Randread);
        let f = zeros_finding(&j, "/dev/sdx", "sdx", false, 1 << 30, &z(20, 20)).unwrap();
        println!("{}", f.message);
        assert_eq!(f.kind, "zeros_read");
        assert_eq!(f.numbers["zero_blocks"], 20.0);
        assert!(
            f.message.contains("20 of the 20 blocks")
                && f.message
                    .contains("blkscope run /dev/sdx --op write --bs 1M --size 1G"),
            "{}",
            f.message
        );
        assert!(zeros_finding(&j, "x", "", false, 1 << 30, &z(20, 2)).is_some());
        assert_eq!(zeros_finding(&j, "x", "", false, 1 << 30, &z(20, 1)), None);
        assert_eq!(zeros_finding(&j, "x", "", false, 1 << 30, &z(7, 7)), None);
        let w = job(Op::Write);
        assert_eq!(zeros_finding(&w, "x", "", false, 1 << 30, &z(20, 20)), None);
    }
}
