//! Block device discovery: every whole device and partition, with the properties that decide
//! how to test it, read from sysfs and procfs through a [`SysRoot`].
//!
//! Layout of what is read (all relative to the root):
//! - `sys/block/NAME/` for whole devices, `sys/block/NAME/PART/` (with a `partition` file) for
//!   partitions; queue limits come from the whole device's `queue/`.
//! - `holders/` and `slaves/` in each device directory (dm, md, LVM, bcache stacking).
//! - `proc/self/mountinfo` (by major:minor) and `proc/swaps`.
//! - signatures from the device node (`/dev/NAME`, or `dev/NAME` in a fixture tree).

//!
//! [`discover`](fn@discover) reads them, `classify` says what each is; this file has the device,
//! the tree and the questions asked of it (what is below, above, held, a buffered loop).

mod classify;
pub mod deepen;
mod discover;
pub mod extents;
pub mod mounts;
pub mod safety;
pub mod signatures;
pub mod store;
pub use classify::*;
pub use discover::*;

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::sysroot::SysRoot;
pub use safety::{Reason, ReasonCode, SafetyReport, WriteSafety};
pub use signatures::{Signature, Usage};
pub use store::Store;

/// What kind of block device this is, in blkscope's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Disk,
    Part,
    Loop,
    Zram,
    Dm,
    Md,
    Nvme,
    Rom,
    Mmc,
    Ram,
    Other,
}

impl Kind {
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Disk => "disk",
            Kind::Part => "part",
            Kind::Loop => "loop",
            Kind::Zram => "zram",
            Kind::Dm => "dm",
            Kind::Md => "md",
            Kind::Nvme => "nvme",
            Kind::Rom => "rom",
            Kind::Mmc => "mmc",
            Kind::Ram => "ram",
            Kind::Other => "other",
        }
    }
}

/// One block device or partition.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Device {
    /// Kernel name (`sda`, `nvme0n1p2`, `dm-0`).
    pub name: String,
    /// `/dev/NAME`.
    pub path: PathBuf,
    /// `major:minor`.
    pub maj_min: String,
    pub kind: Kind,
    /// The TYPE lsblk prints (`disk`, `part`, `loop`, `lvm`, `crypt`, `raid1`, `rom`, ...).
    #[serde(rename = "type")]
    pub lsblk_type: String,
    pub size_bytes: u64,
    pub model: Option<String>,
    pub vendor: Option<String>,
    pub serial: Option<String>,
    pub wwid: Option<String>,
    /// Transport as far as sysfs tells: `nvme`, `usb`, `sata`, `scsi`, `virtio`, `mmc`, ...
    pub transport: Option<String>,
    pub logical_block_size: u64,
    pub physical_block_size: u64,
    pub minimum_io_size: Option<u64>,
    pub optimal_io_size: Option<u64>,
    pub alignment_offset: Option<u64>,
    pub rotational: bool,
    pub removable: bool,
    pub read_only: bool,
    /// The active I/O scheduler (`none`, `mq-deadline`, ...).
    pub scheduler: Option<String>,
    pub schedulers_available: Vec<String>,
    /// `write back` (volatile cache on) or `write through`.
    pub write_cache: Option<String>,
    pub nr_requests: Option<u64>,
    pub max_sectors_kb: Option<u64>,
    pub max_hw_sectors_kb: Option<u64>,
    pub read_ahead_kb: Option<u64>,
    /// The `queue/iostats` switch as sysfs shows it. Whether /proc/diskstats counts this
    /// device also depends on its driver: `io_figures`.
    pub iostats: Option<bool>,
    /// Whether /proc/diskstats counts this device's I/O: false where `queue/iostats` is 0 and
    /// the driver honours it (not zram, which counts regardless). Missing from the JSON of an
    /// older blkscope (a host's): taken as counted.
    #[serde(default = "counted")]
    pub io_figures: bool,
    pub discard: bool,
    pub discard_granularity: Option<u64>,
    pub discard_max_bytes: Option<u64>,
    /// `none`, `host-aware` or `host-managed`.
    pub zoned: Option<String>,
    /// For a partition: its number and first sector (512-byte units).
    pub partition_number: Option<u32>,
    pub start_sector: Option<u64>,
    /// The whole device of a partition, by name.
    pub parent: Option<String>,
    pub partitions: Vec<String>,
    /// Devices built directly on this one (dm, md, bcache).
    pub holders: Vec<String>,
    /// Devices this one is built directly on.
    pub slaves: Vec<String>,
    pub dm_name: Option<String>,
    pub dm_uuid: Option<String>,
    pub md_level: Option<String>,
    pub loop_backing_file: Option<String>,
    /// The file system type the backing file is on (mountinfo's longest mount point holding
    /// it): a tmpfs or ramfs means the loop device is RAM, with direct I/O or not.
    #[serde(default)]
    pub loop_backing_fs: Option<String>,
    pub loop_direct_io: Option<bool>,
    pub mountpoints: Vec<String>,
    pub swap: bool,
    pub signatures: Vec<Signature>,
    /// Why the signature probe could not read the device, when it could not.
    pub signature_error: Option<String>,
    /// The blank test: whether the device reads the same byte everywhere blkscope looked. Only
    /// run where nothing else (a signature, partitions) already says it holds data.
    pub blank: signatures::Blank,
    /// Where the device shows no signature and no partitions: a format found where a partition
    /// usually begins, or a copy one keeps (a table was probably wiped; the data is intact).
    #[serde(
        default,
        rename = "hidden_signature",
        skip_serializing_if = "Option::is_none"
    )]
    pub hidden: Option<signatures::Hidden>,
    /// Depth in the tree (0 for a device that sits on nothing), for lsblk-like display.
    pub depth: usize,
    pub write_safety: WriteSafety,
    pub safety_reasons: Vec<Reason>,
}

impl Device {
    pub fn is_partition(&self) -> bool {
        self.kind == Kind::Part
    }

    /// Whether the kernel keeps no I/O figures for this device, so that its diskstats are
    /// zeros rather than idleness: `queue/iostats` is 0 and its driver honours that.
    pub fn keeps_no_io_figures(&self) -> bool {
        !self.io_figures
    }

    /// (major, minor) from `maj_min`.
    pub fn devno(&self) -> (u32, u32) {
        let mut it = self.maj_min.split(':').map(|x| x.parse().unwrap_or(0));
        (it.next().unwrap_or(0), it.next().unwrap_or(0))
    }

    /// Whether `list` shows it without `--all`: like lsblk, empty loop devices without a
    /// backing file and RAM disks (major 1) are left out.
    pub fn listed_by_default(&self) -> bool {
        let empty_loop =
            self.kind == Kind::Loop && self.size_bytes == 0 && self.loop_backing_file.is_none();
        !empty_loop && self.devno().0 != 1
    }
}

/// A loop device that reads and writes its backing file through the page cache (it was attached
/// without direct I/O): a test on it, or on anything built on it, measures memory as much as the
/// disk below.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BufferedLoop {
    /// The loop device.
    pub device: String,
    pub backing_file: String,
    /// The block device whose file system holds the backing file.
    pub backing_device: Option<String>,
    /// The type of that file system.
    pub backing_fs: Option<String>,
    /// The loop device has direct I/O on (then it is here because its file is in RAM).
    pub direct_io: bool,
}

impl BufferedLoop {
    /// What it is, in words: "a loop device over /tmp/a.img (on vda) without direct I/O".
    pub fn what(&self) -> String {
        let on = match (&self.backing_device, self.backing_fs.as_deref()) {
            (_, Some(fs)) if mounts::in_ram(fs) => format!("a {fs}: RAM"),
            (Some(u), _) => u.clone(),
            (None, Some(t)) => format!("a {t} file system with no block device"),
            (None, None) => "an unknown file system".to_string(),
        };
        format!(
            "a loop device over {} (on {on}) {} direct I/O",
            self.backing_file,
            if self.direct_io { "with" } else { "without" }
        )
    }

    /// Its backing file is in RAM (tmpfs, ramfs): direct I/O would not help.
    pub fn in_ram(&self) -> bool {
        self.backing_fs.as_deref().is_some_and(mounts::in_ram)
    }
}

/// Every block device on a system, in tree order (like `lsblk`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct DeviceTree {
    pub devices: Vec<Device>,
}

impl DeviceTree {
    /// The devices `list` shows: all of them with `all`, else as lsblk does.
    pub fn listed(&self, all: bool) -> DeviceTree {
        DeviceTree {
            devices: self
                .devices
                .iter()
                .filter(|d| all || d.listed_by_default())
                .cloned()
                .collect(),
        }
    }

    pub fn get(&self, name: &str) -> Option<&Device> {
        self.devices.iter().find(|d| d.name == name)
    }

    /// The whole device of a partition (its disk, whose queue and SMART it has), else `d`.
    pub fn whole<'a>(&'a self, d: &'a Device) -> &'a Device {
        d.parent.as_deref().and_then(|p| self.get(p)).unwrap_or(d)
    }

    pub fn by_maj_min(&self, maj_min: &str) -> Option<&Device> {
        self.devices.iter().find(|d| d.maj_min == maj_min)
    }

    /// The block device whose file system holds `path` (none for tmpfs, overlay, ...).
    pub fn holding(&self, path: &Path) -> Option<&Device> {
        use std::os::unix::fs::MetadataExt;
        let dev = std::fs::metadata(path).ok()?.dev();
        if let Some(d) = self.by_maj_min(&format!("{}:{}", libc::major(dev), libc::minor(dev))) {
            return Some(d);
        }
        // btrfs gives its files an anonymous device number (major 0), that of their subvolume:
        // the device with a mount point that holds the path and carries the same number (a
        // tmpfs at /tmp does not make a file there vda1's). A subvolume that is not mounted
        // itself has a number of its own and is not found.
        if libc::major(dev) != 0 {
            return None;
        }
        let real = std::fs::canonicalize(path).ok()?;
        self.devices
            .iter()
            .flat_map(|d| d.mountpoints.iter().map(move |m| (m, d)))
            .filter(|(m, _)| {
                real.starts_with(m) && std::fs::metadata(m).is_ok_and(|x| x.dev() == dev)
            })
            .max_by_key(|(m, _)| m.len())
            .map(|(_, d)| d)
    }

    /// The device a command-line argument names: a kernel name or /dev path; on the live
    /// system also a symlink to one (/dev/disk/by-id/...), or a file or directory, for the
    /// device whose file system holds it (then the second value is true). Err: why none,
    /// worded for the user.
    pub fn named(&self, root: &SysRoot, arg: &str) -> Result<(String, bool), String> {
        let name = arg.strip_prefix("/dev/").unwrap_or(arg);
        if self.get(name).is_some() {
            return Ok((name.to_string(), false));
        }
        if !root.is_live() || !arg.contains('/') {
            return Err("`blkscope list` shows the devices".into());
        }
        let path = Path::new(arg);
        let Ok(meta) = std::fs::metadata(path) else {
            return Err(
                "no such device, file or directory; `blkscope list` shows the devices".into(),
            );
        };
        use std::os::unix::fs::FileTypeExt;
        if meta.file_type().is_block_device() {
            let real = std::fs::canonicalize(path).ok();
            let base = real.as_deref().and_then(Path::file_name);
            return match base.map(|b| b.to_string_lossy().into_owned()) {
                Some(b) if self.get(&b).is_some() => Ok((b, false)),
                _ => Err("`blkscope list` shows the devices".into()),
            };
        }
        match self.holding(path) {
            Some(d) => Ok((d.name.clone(), true)),
            None => {
                let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
                let fs = mounts::fs_type(root, &real.to_string_lossy())
                    .unwrap_or_else(|| "a file system".into());
                Err(format!(
                    "it is on {fs}, a file system with no block device under it; \
                     `blkscope list` shows the devices"
                ))
            }
        }
    }

    /// The first loop device among `name` and what it is built on whose I/O memory serves:
    /// one without direct I/O (the backing file's page cache), or one over a file in RAM
    /// (tmpfs, ramfs), where direct I/O changes nothing.
    pub fn buffered_loop(&self, name: &str) -> Option<BufferedLoop> {
        std::iter::once(self.get(name)?)
            .chain(self.below(name))
            .filter(|d| d.kind == Kind::Loop)
            .find_map(|d| {
                let file = d.loop_backing_file.clone()?;
                let backing_fs = d.loop_backing_fs.clone();
                let in_ram = backing_fs.as_deref().is_some_and(mounts::in_ram);
                (d.loop_direct_io == Some(false) || in_ram).then(|| BufferedLoop {
                    device: d.name.clone(),
                    backing_device: self.holding(Path::new(&file)).map(|x| x.name.clone()),
                    backing_fs,
                    backing_file: file,
                    direct_io: d.loop_direct_io == Some(true),
                })
            })
    }

    /// Everything built on top of `name`: its partitions and holders, recursively.
    pub fn above(&self, name: &str) -> Vec<&Device> {
        self.walk(name, |d| d.partitions.iter().chain(d.holders.iter()))
    }

    /// Everything `name` is built on: its whole disk and slaves, recursively.
    pub fn below(&self, name: &str) -> Vec<&Device> {
        self.walk(name, |d| d.parent.iter().chain(d.slaves.iter()))
    }

    fn walk<'a, F, I>(&'a self, name: &str, next: F) -> Vec<&'a Device>
    where
        F: Fn(&'a Device) -> I,
        I: Iterator<Item = &'a String>,
    {
        let mut seen: HashSet<&str> = HashSet::from([name]);
        let mut out = Vec::new();
        let mut stack: Vec<&str> = vec![name];
        while let Some(n) = stack.pop() {
            let Some(d) = self.get(n) else { continue };
            for m in next(d) {
                if seen.insert(m.as_str())
                    && let Some(md) = self.get(m)
                {
                    out.push(md);
                    stack.push(m.as_str());
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scheduler_parsing() {
        assert_eq!(
            parse_scheduler(Some("mq-deadline kyber [none]")),
            (
                Some("none".into()),
                vec!["mq-deadline".into(), "kyber".into(), "none".into()]
            )
        );
        assert_eq!(
            parse_scheduler(Some("none")),
            (Some("none".into()), vec!["none".into()])
        );
        assert_eq!(parse_scheduler(None), (None, vec![]));
    }

    #[test]
    fn lsblk_types() {
        assert_eq!(
            lsblk_type("dm-0", false, Some("LVM-abc"), true, None, None),
            "lvm"
        );
        assert_eq!(
            lsblk_type("dm-1", false, Some("CRYPT-LUKS2-x-y"), true, None, None),
            "crypt"
        );
        assert_eq!(
            lsblk_type("dm-2", false, Some("part1-mpath-x"), true, None, None),
            "part"
        );
        assert_eq!(lsblk_type("dm-3", false, None, true, None, None), "dm");
        assert_eq!(
            lsblk_type("md0", false, None, false, Some("raid1"), None),
            "raid1"
        );
        assert_eq!(lsblk_type("sr0", false, None, false, None, Some(5)), "rom");
        assert_eq!(lsblk_type("loop0p1", true, None, false, None, None), "part");
        assert_eq!(lsblk_type("zram0", false, None, false, None, None), "disk");
    }
}
