//! The file below a loop device: where its blocks lie on the disk that holds it, so that the
//! trace also sees that disk there (and nowhere else on it). The loop device's own I/O on it is
//! its worker's (a kernel thread), and another process's is a neighbour on the test's file
//! below (a `dd` of the backing file, a backup reading it): both are told apart from the
//! machine's other I/O on that disk by the file's sectors.

use std::path::Path;

use super::Named;
use crate::sysroot::SysRoot;

/// A loop device's backing file as the block layer's events see it: the disk they name, and
/// the file's sectors on it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileBelow {
    /// The loop device.
    pub loop_dev: (u32, u32),
    pub file: String,
    /// The disk the events name (a partition's disk, where the file system is on one).
    pub disk: (u32, u32),
    pub disk_name: String,
    /// The file's sectors on `disk`, sorted and apart: `[start, end)`.
    pub ranges: Vec<(u64, u64)>,
}

impl FileBelow {
    /// Whether `sector` of `disk` is in the file.
    pub fn holds(&self, disk: (u32, u32), sector: u64) -> bool {
        if disk != self.disk {
            return false;
        }
        let i = self.ranges.partition_point(|&(a, _)| a <= sector);
        i > 0 && sector < self.ranges[i - 1].1
    }
}

/// A disk (major, minor) and the sectors of files on it: `[start, end)` each.
pub type DiskRanges = ((u32, u32), Vec<(u64, u64)>);

/// Each disk below the loop devices that is not traced whole (`whole`), with its files' ranges
/// on it: what the events' filter keeps of that disk, in both ways of tracing.
pub fn disks_below(files: &[FileBelow], whole: &[(u32, u32)]) -> Vec<DiskRanges> {
    let mut disks: Vec<(u32, u32)> = files.iter().map(|f| f.disk).collect();
    disks.retain(|d| !whole.contains(d));
    disks.sort_unstable();
    disks.dedup();
    disks
        .into_iter()
        .map(|disk| {
            let all = (files.iter().filter(|f| f.disk == disk))
                .flat_map(|f| f.ranges.iter().copied())
                .collect();
            (disk, all)
        })
        .collect()
}

/// `ranges` (sorted) in at most `n`, the nearest joined: what the kernel's filter is given (a
/// filter is a page at most; the tally tests the files' own ranges).
pub fn coarse(ranges: &[(u64, u64)], n: usize) -> Vec<(u64, u64)> {
    let mut v = ranges.to_vec();
    v.sort_unstable();
    while v.len() > n.max(1) {
        let i = (1..v.len())
            .min_by_key(|&i| v[i].0.saturating_sub(v[i - 1].1))
            .expect("two ranges");
        v[i - 1].1 = v[i - 1].1.max(v[i].1);
        v.remove(i);
    }
    v
}

/// The backing files of the loop devices among `devices`, where blkscope can tell their
/// sectors ([`crate::device::extents::on_disk`]).
pub fn files_below(root: &SysRoot, devices: &Named) -> Vec<FileBelow> {
    devices
        .iter()
        .filter_map(|(dev, name)| file_below(root, *dev, name))
        .collect()
}

fn file_below(root: &SysRoot, loop_dev: (u32, u32), name: &str) -> Option<FileBelow> {
    let file = std::fs::read_to_string(root.sys(format!("class/block/{name}/loop/backing_file")))
        .ok()?
        .trim_end()
        .to_string();
    let on = crate::device::extents::on_disk(root, Path::new(&file))?;
    let mut ranges: Vec<(u64, u64)> = on
        .extents
        .iter()
        .map(|e| (e.sector, e.sector + e.len.div_ceil(512)))
        .collect();
    ranges.sort_unstable();
    let mut joined: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
    for (a, b) in ranges {
        match joined.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => joined.push((a, b)),
        }
    }
    Some(FileBelow {
        loop_dev,
        file,
        disk: on.disk,
        disk_name: on.disk_name,
        ranges: joined,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn below(ranges: Vec<(u64, u64)>) -> FileBelow {
        FileBelow {
            loop_dev: (7, 0),
            file: "/tmp/a.img".into(),
            disk: (254, 0),
            disk_name: "vda".into(),
            ranges,
        }
    }

    #[test]
    fn a_sector_is_in_the_file_where_one_of_its_ranges_holds_it() {
        let f = below(vec![(100, 200), (300, 400)]);
        let seen: Vec<(u64, bool)> = [99, 100, 199, 200, 250, 300, 399, 400]
            .iter()
            .map(|&s| (s, f.holds((254, 0), s)))
            .collect();
        println!("{seen:?}");
        let held: Vec<u64> = seen.iter().filter(|s| s.1).map(|s| s.0).collect();
        assert_eq!(held, vec![100, 199, 300, 399]);
        assert!(!f.holds((254, 16), 150), "another disk's sector 150");
    }

    #[test]
    fn the_filters_ranges_join_the_nearest_and_cover_the_file() {
        let ranges = [(1000, 1010), (0, 10), (12, 20), (100, 110)];
        let c = coarse(&ranges, 2);
        println!("{c:?}");
        assert_eq!(c, vec![(0, 110), (1000, 1010)]);
        assert_eq!(coarse(&ranges, 10).len(), 4);
        assert_eq!(coarse(&ranges, 0), vec![(0, 1010)]);
    }
}
