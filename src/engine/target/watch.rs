//! The devices whose diskstats are watched during a test: the target's device, those it is
//! built on and those built on it; for a file, the device holding its file system.

use super::*;
use crate::device::{DiscoverOptions, discover};
use crate::sysroot::SysRoot;
use std::path::Path;

/// The watch list for the device named `name`.
pub(super) fn watch_list(tree: &crate::device::DeviceTree, name: &str) -> (Vec<String>, usize) {
    let below = 1 + tree.below(name).len();
    (crate::stats::related(tree, name), below)
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
