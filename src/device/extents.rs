//! Where a file's blocks lie on the disk the block layer's events name: its extents (FIEMAP),
//! moved by its file system's start where that is a partition. The trace follows a loop device
//! onto the disk below its backing file by them, and the engine gives a file's I/Os the sectors
//! their bios have.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use crate::sysroot::SysRoot;

/// One extent: `len` bytes of the file from byte `logical` lie from `sector` of the disk on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extent {
    pub logical: u64,
    pub len: u64,
    pub sector: u64,
}

/// A file's blocks on its disk: the disk (major, minor), its kernel name, and the extents,
/// by logical offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OnDisk {
    pub disk: (u32, u32),
    pub disk_name: String,
    pub extents: Vec<Extent>,
}

/// File systems whose extents' physical offsets are offsets on their one block device (btrfs'
/// are addresses in its own space over several).
pub fn maps_onto_its_device(fs: &str) -> bool {
    matches!(
        fs,
        "ext2" | "ext3" | "ext4" | "xfs" | "f2fs" | "vfat" | "exfat"
    )
}

/// Where `path`'s blocks lie, on the live system, where its file system says (None where it
/// cannot: tmpfs, btrfs, a file not yet given blocks).
pub fn on_disk(root: &SysRoot, path: &Path) -> Option<OnDisk> {
    if !root.is_live() || !maps_onto_its_device(&super::mounts::fs_type_of(root, path)?) {
        return None;
    }
    let st_dev = std::fs::metadata(path).ok()?.dev();
    let (disk, disk_name, start) = disk_of(root, (libc::major(st_dev), libc::minor(st_dev)))?;
    let mut extents = extents(path)?;
    for e in &mut extents {
        e.sector += start;
    }
    (!extents.is_empty()).then_some(OnDisk {
        disk,
        disk_name,
        extents,
    })
}

/// The disk the block layer's events name for the device `dev` holding a file system, its name,
/// and where `dev` starts on it (a partition's `start`; 0 for a whole device).
fn disk_of(root: &SysRoot, dev: (u32, u32)) -> Option<((u32, u32), String, u64)> {
    let dir = std::fs::canonicalize(root.sys(format!("dev/block/{}:{}", dev.0, dev.1))).ok()?;
    let name_of = |d: &Path| d.file_name().map(|n| n.to_string_lossy().into_owned());
    if !dir.join("partition").exists() {
        return Some((dev, name_of(&dir)?, 0));
    }
    let start = crate::sysroot::read_u64(&dir.join("start"))?;
    let disk_dir = dir.parent()?;
    let disk = crate::sysroot::read_devno(&disk_dir.join("dev"))?;
    Some((disk, name_of(disk_dir)?, start))
}

/// The file's extents on its file system's device, by logical offset (FIEMAP, syncing delayed
/// allocations first); None if the file system cannot say. Extents without a place of their
/// own on the device (delayed, inline, encoded) are left out.
fn extents(path: &Path) -> Option<Vec<Extent>> {
    use fiemap::{FiemapExtentFlags as F, FiemapFlags};
    let file = std::fs::File::open(path).ok()?;
    let placeless = F::UNKNOWN | F::DELALLOC | F::ENCODED | F::DATA_INLINE | F::DATA_TAIL;
    let mut v = Vec::new();
    for e in fiemap::Fiemap::with_flags(&file, FiemapFlags::SYNC) {
        let e = e.ok()?;
        if e.fe_flags.intersects(placeless) || e.fe_length == 0 {
            continue;
        }
        v.push(Extent {
            logical: e.fe_logical,
            len: e.fe_length,
            sector: e.fe_physical / 512,
        });
    }
    v.sort_unstable_by_key(|e| e.logical);
    Some(v)
}

/// Where byte `off` of a file lies among `extents` (sorted by logical offset), in sectors.
pub fn sector_of(extents: &[Extent], off: u64) -> Option<u64> {
    let i = extents.partition_point(|e| e.logical <= off);
    let e = extents.get(i.checked_sub(1)?)?;
    (off < e.logical + e.len).then(|| e.sector + (off - e.logical) / 512)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_files_offset_is_found_in_its_extent() {
        let x = [
            Extent {
                logical: 0,
                len: 8192,
                sector: 1000,
            },
            Extent {
                logical: 8192,
                len: 4096,
                sector: 50,
            },
        ];
        let seen: Vec<(u64, Option<u64>)> = [0, 4096, 8191, 8192, 12287, 12288]
            .iter()
            .map(|&o| (o, sector_of(&x, o)))
            .collect();
        println!("{seen:?}");
        assert_eq!(
            seen.iter().map(|s| s.1).collect::<Vec<_>>(),
            vec![Some(1000), Some(1008), Some(1015), Some(50), Some(57), None]
        );
    }

    /// A file of this machine's temporary directory, where its file system maps files onto a
    /// device: its extents cover its size.
    #[test]
    fn a_files_extents_cover_its_size() {
        let dir = std::env::temp_dir().join(format!("blkscope-fiemap-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("f");
        std::fs::write(&path, vec![7u8; 1 << 20]).unwrap();
        let got = extents(&path);
        let _ = std::fs::remove_dir_all(&dir);
        println!("extents of a 1 MiB file: {got:?}");
        let Some(v) = got.filter(|v| !v.is_empty()) else {
            eprintln!("SKIPPED: the temporary directory's file system does not map files");
            return;
        };
        let bytes: u64 = v.iter().map(|e| e.len).sum();
        assert!(bytes >= 1 << 20, "{bytes} bytes mapped of 1 MiB");
    }
}
