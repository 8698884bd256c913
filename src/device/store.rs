//! Where a target's blocks live, as far as blkscope can tell which of them were written: a zram
//! device, a loop device's backing file, a named file. The analysis of a read test
//! (`crate::analysis::unwritten`) asks the store how much of a region holds nothing.

use std::path::PathBuf;

use super::{Device, DeviceTree, Kind};
use crate::sysroot::{SysRoot, read_u64};

/// Where a target's blocks live, as far as blkscope can tell which were written.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Store {
    /// A zram device: `mm_stat` says how much it stores.
    Zram { device: String },
    /// A loop device (or a partition of one) over a file: the file's holes. `offset` is where
    /// the target's first byte lies in the file.
    BackingFile {
        device: String,
        file: PathBuf,
        offset: u64,
    },
    /// A named file target: its own holes.
    File { path: PathBuf },
    #[default]
    Unknown,
}

impl Store {
    /// The store of a block device target.
    pub fn of_device(root: &SysRoot, tree: &DeviceTree, dev: &Device) -> Store {
        let whole = tree.whole(dev);
        let start = dev.start_sector.unwrap_or(0) * 512;
        match whole.kind {
            Kind::Zram if dev.parent.is_none() => Store::Zram {
                device: dev.name.clone(),
            },
            Kind::Loop => {
                let Some(file) = &whole.loop_backing_file else {
                    return Store::Unknown;
                };
                let loop_offset =
                    read_u64(&root.sys(format!("block/{}/loop/offset", whole.name))).unwrap_or(0);
                Store::BackingFile {
                    device: dev.name.clone(),
                    file: PathBuf::from(file),
                    offset: loop_offset + start,
                }
            }
            _ => Store::Unknown,
        }
    }
}
