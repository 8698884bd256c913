//! The devices whose diskstats are watched during a test: the target's device, those it is
//! built on and those built on it; for a file, the device holding its file system.

use super::*;
use crate::device::{DiscoverOptions, discover};
use crate::sysroot::SysRoot;
use std::path::Path;

/// The watch list for the device named `name`, and how many of it (from the start) are the
/// device and what it is built on. The whole disk of a partition among them comes after the
/// rest and is not counted: its counters hold every partition's I/O, the test's counted on its
/// own partition already and its neighbours' on theirs (a reader of `sda2` is no read of a
/// write test's on `sda1`).
pub(super) fn watch_list(tree: &crate::device::DeviceTree, name: &str) -> (Vec<String>, usize) {
    let related = crate::stats::related(tree, name);
    let (below, above) = related.split_at(1 + tree.below(name).len());
    let whole = |n: &&String| {
        below
            .iter()
            .any(|m| tree.get(m).and_then(|d| d.parent.as_ref()) == Some(*n))
    };
    let (wholes, rest): (Vec<&String>, Vec<&String>) = below[1..].iter().partition(whole);
    let counted = 1 + rest.len();
    let watch = below[..1]
        .iter()
        .chain(rest)
        .chain(wholes)
        .chain(above)
        .cloned()
        .collect();
    (watch, counted)
}

/// The block device that holds a file, its watch list (empty for tmpfs, overlay, ...), and the
/// page cache under it, if any.
pub(super) struct FileDevice {
    pub(super) watch: Vec<String>,
    pub(super) below: usize,
    pub(super) device: Option<crate::device::Device>,
    pub(super) cache_below: Option<CacheBelow>,
    /// The type of the file system holding it, by mount point.
    pub(super) fs: Option<String>,
}

pub(super) fn watch_for_file(root: &SysRoot, path: &Path) -> FileDevice {
    // The file system type by mount point: the path as the kernel sees it.
    let fs = crate::device::mounts::fs_type_of(root, path);
    // No block device under it (tmpfs, overlay, ...), or none blkscope could find.
    let none = |fs: Option<String>| FileDevice {
        watch: Vec::new(),
        below: 0,
        device: None,
        cache_below: fs
            .clone()
            .filter(|f| crate::device::mounts::in_ram(f))
            .map(|fs| CacheBelow::MemoryFs { fs }),
        fs,
    };
    let opts = DiscoverOptions {
        skip_signatures: true,
        ..Default::default()
    };
    let Ok(tree) = discover(root, &opts) else {
        return none(fs);
    };
    match tree.holding(path) {
        Some(d) => {
            let (watch, below) = watch_list(&tree, &d.name);
            FileDevice {
                watch,
                below,
                device: Some(d.clone()),
                cache_below: tree.buffered_loop(&d.name).map(CacheBelow::Loop),
                fs,
            }
        }
        None => none(fs),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// dm-0 (an LV) on sda2: the LV, its partition, then the disk, which is not counted among
    /// what the LV is built on (its counters hold sda1's I/O too); a partition alike.
    #[test]
    fn a_partitions_whole_disk_is_watched_and_not_counted_below() {
        let root = SysRoot::at(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/lvm-on-partition"
        ));
        let tree = discover(&root, &DiscoverOptions::default()).unwrap();
        for (name, want, counted) in [
            ("dm-0", vec!["dm-0", "sda2", "sda"], 2),
            ("sda2", vec!["sda2", "sda", "dm-0", "dm-1"], 1),
            ("sda", vec!["sda", "sda1", "sda2", "dm-0", "dm-1"], 1),
        ] {
            let (watch, below) = watch_list(&tree, name);
            let watch: Vec<&str> = watch.iter().map(String::as_str).collect();
            println!("{name}: {watch:?}, {below} below");
            assert_eq!((watch, below), (want, counted), "{name}");
        }
    }
}
