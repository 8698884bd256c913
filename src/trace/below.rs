//! The file below a loop device: where its blocks lie on the disk that holds it, so that the
//! trace also sees that disk there (and nowhere else on it). The loop device's own I/O on it is
//! its worker's (a kernel thread), and another process's is a neighbour on the test's file
//! below (a `dd` of the backing file, a backup reading it): both are told apart from the
//! machine's other I/O on that disk by the file's sectors.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::{Named, devno};
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

/// File systems whose extents' physical offsets are offsets on their one block device (btrfs'
/// are addresses in its own space over several).
fn maps_onto_its_device(fs: &str) -> bool {
    matches!(
        fs,
        "ext2" | "ext3" | "ext4" | "xfs" | "f2fs" | "vfat" | "exfat"
    )
}

/// The backing files of the loop devices among `devices`, where blkscope can tell their
/// sectors (the live system, a file system above that maps files onto one device).
pub fn files_below(root: &SysRoot, devices: &Named) -> Vec<FileBelow> {
    if !root.is_live() {
        return Vec::new();
    }
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
    let path = Path::new(&file);
    let fs = crate::device::mounts::fs_type_of(root, path)?;
    if !maps_onto_its_device(&fs) {
        return None;
    }
    let st_dev = std::fs::metadata(path).ok()?.dev();
    let (disk, disk_name, start) = disk_of(root, (libc::major(st_dev), libc::minor(st_dev)))?;
    let ranges = extents(path, start)?;
    (!ranges.is_empty()).then_some(FileBelow {
        loop_dev,
        file,
        disk,
        disk_name,
        ranges,
    })
}

/// The disk the block layer's events name for the device `dev` holding a file system, its name,
/// and where `dev` starts on it (a partition's `start`; 0 for a whole device).
fn disk_of(root: &SysRoot, dev: (u32, u32)) -> Option<((u32, u32), String, u64)> {
    let dir = std::fs::canonicalize(root.sys(format!("dev/block/{}:{}", dev.0, dev.1))).ok()?;
    let name_of = |d: &Path| d.file_name().map(|n| n.to_string_lossy().into_owned());
    if dir.join("partition").exists() {
        let start = crate::sysroot::read_u64(&dir.join("start"))?;
        let disk_dir = dir.parent()?;
        let disk = name_of(disk_dir)?;
        Some((devno(root, &disk)?, disk, start))
    } else {
        Some((dev, name_of(&dir)?, 0))
    }
}

/// The file's extents as sectors of its disk (`start`: its file system's first sector there),
/// sorted, adjacent ones joined; None if the file system cannot say. Extents without a place
/// of their own on the device (delayed, inline, encoded) are left out.
fn extents(path: &Path, start: u64) -> Option<Vec<(u64, u64)>> {
    use fiemap::{FiemapExtentFlags as F, FiemapFlags};
    let file = std::fs::File::open(path).ok()?;
    let placeless = F::UNKNOWN | F::DELALLOC | F::ENCODED | F::DATA_INLINE | F::DATA_TAIL;
    let mut v: Vec<(u64, u64)> = Vec::new();
    for e in fiemap::Fiemap::with_flags(&file, FiemapFlags::SYNC) {
        let e = e.ok()?;
        if e.fe_flags.intersects(placeless) || e.fe_length == 0 {
            continue;
        }
        let a = start + e.fe_physical / 512;
        v.push((a, a + e.fe_length.div_ceil(512)));
    }
    v.sort_unstable();
    let mut joined: Vec<(u64, u64)> = Vec::with_capacity(v.len());
    for (a, b) in v {
        match joined.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => joined.push((a, b)),
        }
    }
    Some(joined)
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

    /// A file of this machine's (the test binary's own directory holds one), where its file
    /// system maps files onto a device: its extents, joined and sorted, cover its size.
    #[test]
    fn a_files_extents_cover_its_size() {
        let dir = std::env::temp_dir().join(format!("blkscope-fiemap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f");
        std::fs::write(&path, vec![7u8; 1 << 20]).unwrap();
        let got = extents(&path, 0);
        let _ = std::fs::remove_dir_all(&dir);
        println!("extents of a 1 MiB file: {got:?}");
        let Some(v) = got else {
            println!("this file system does not map files (FIEMAP)");
            return;
        };
        let sectors: u64 = v.iter().map(|(a, b)| b - a).sum();
        assert!(sectors >= 2048, "{sectors} sectors for 1 MiB");
        assert!(v.windows(2).all(|w| w[0].1 < w[1].0), "{v:?}");
    }
}
