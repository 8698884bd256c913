//! Block device discovery: every whole device and partition, with the properties that decide
//! how to test it, read from sysfs and procfs through a [`SysRoot`].
//!
//! Layout of what is read (all relative to the root):
//! - `sys/block/NAME/` for whole devices, `sys/block/NAME/PART/` (with a `partition` file) for
//!   partitions; queue limits come from the whole device's `queue/`.
//! - `holders/` and `slaves/` in each device directory (dm, md, LVM, bcache stacking).
//! - `proc/self/mountinfo` (by major:minor) and `proc/swaps`.
//! - signatures from the device node (`/dev/NAME`, or `dev/NAME` in a fixture tree).

pub mod mounts;
pub mod safety;
pub mod signatures;
pub mod store;

use std::collections::{BTreeMap, HashSet};
use std::fs::File;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::Error;
use crate::sysroot::{SysRoot, dir_names, read_attr, read_u64};
use mounts::{MountTable, SwapTable};
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

/// Options for discovery.
#[derive(Debug, Clone, Default)]
pub struct DiscoverOptions {
    /// Skip reading signatures from device nodes (faster; the safety verdict then cannot see
    /// partition tables or file systems and says so).
    pub skip_signatures: bool,
    /// Read signatures only from this device (by `major:minor` or kernel name): a check of one
    /// target has no business reading every disk on the machine.
    pub probe_only: Option<String>,
}

/// The properties of one device by kernel name (or `/dev/` path), without reading any device
/// node: a lookup that puts no reads of its own into the device's diskstats. None when there is
/// no such device.
pub fn properties(root: &SysRoot, name: &str) -> Option<Device> {
    let name = name.strip_prefix("/dev/").unwrap_or(name);
    let opts = DiscoverOptions {
        skip_signatures: true,
        ..Default::default()
    };
    discover(root, &opts).ok()?.get(name).cloned()
}

/// Reads every block device under `root`.
pub fn discover(root: &SysRoot, opts: &DiscoverOptions) -> Result<DeviceTree, Error> {
    let block = root.sys("block");
    if !block.is_dir() {
        return Err(Error::NoSysfs { path: block });
    }
    let mounts = MountTable::read(root)?;
    let swaps = SwapTable::read(root)?;

    let mut raw: BTreeMap<String, Device> = BTreeMap::new();
    let mut order: Vec<String> = Vec::new();
    for name in dir_names(&block).map_err(|e| Error::io(&block, e))? {
        let dir = block.join(&name);
        let whole = read_device(root, &name, &dir, None, &mounts, &swaps);
        let mut parts = Vec::new();
        for sub in dir_names(&dir).unwrap_or_default() {
            let sdir = dir.join(&sub);
            if sdir.join("partition").is_file() {
                parts.push(read_device(
                    root,
                    &sub,
                    &sdir,
                    Some(&whole),
                    &mounts,
                    &swaps,
                ));
            }
        }
        let mut whole = whole;
        whole.partitions = parts.iter().map(|p| p.name.clone()).collect();
        order.push(name.clone());
        raw.insert(name, whole);
        for p in parts {
            order.push(p.name.clone());
            raw.insert(p.name.clone(), p);
        }
    }

    // Like lsblk since Linux 4.8: by major:minor.
    order.sort_by_key(|n| raw[n].devno());
    let mut devices = tree_order(&raw, &order);
    let mut to_probe: Vec<&mut Device> = Vec::new();
    for d in devices.iter_mut() {
        let wanted = opts
            .probe_only
            .as_ref()
            .is_none_or(|w| *w == d.maj_min || *w == d.name);
        if opts.skip_signatures {
            d.blank = signatures::Blank::unknown("not read (--no-signatures)");
        } else if wanted {
            to_probe.push(d);
        } else {
            d.blank = signatures::Blank::unknown("not read (only the target was probed)");
        }
    }
    // Devices are probed a few at a time: each waits on its own disk (a blank spare disk's
    // blank test is 66 seeks), so a machine full of disks is not read one after another.
    const PROBERS: usize = 8;
    if to_probe.len() > 1 {
        let per = to_probe.len().div_ceil(PROBERS);
        std::thread::scope(|scope| {
            for chunk in to_probe.chunks_mut(per) {
                scope.spawn(move || {
                    for d in chunk.iter_mut() {
                        probe_signatures(root, d);
                    }
                });
            }
        });
    } else if let Some(d) = to_probe.pop() {
        probe_signatures(root, d);
    }
    let mut tree = DeviceTree { devices };
    safety::assess_tree(root, &mut tree);
    Ok(tree)
}

/// Orders devices as lsblk draws them: each device that sits on nothing, then (depth-first)
/// its partitions and holders. A device with several slaves (md over two disks) is listed once,
/// under the first.
fn tree_order(raw: &BTreeMap<String, Device>, order: &[String]) -> Vec<Device> {
    let mut out: Vec<Device> = Vec::with_capacity(raw.len());
    let mut seen: HashSet<&str> = HashSet::new();
    fn visit<'a>(
        name: &'a str,
        depth: usize,
        raw: &'a BTreeMap<String, Device>,
        seen: &mut HashSet<&'a str>,
        out: &mut Vec<Device>,
    ) {
        let Some(d) = raw.get(name) else { return };
        if !seen.insert(name) {
            return;
        }
        let mut d2 = d.clone();
        d2.depth = depth;
        out.push(d2);
        for c in d.partitions.iter().chain(d.holders.iter()) {
            visit(c, depth + 1, raw, seen, out);
        }
    }
    for name in order {
        let d = &raw[name];
        if d.parent.is_none() && d.slaves.iter().all(|s| !raw.contains_key(s)) {
            visit(name, 0, raw, &mut seen, &mut out);
        }
    }
    // Anything left (a cycle, a slave that is not a block device we know): at the end.
    for name in order {
        visit(name, 0, raw, &mut seen, &mut out);
    }
    out
}

fn read_device(
    root: &SysRoot,
    name: &str,
    dir: &Path,
    whole: Option<&Device>,
    mounts: &MountTable,
    swaps: &SwapTable,
) -> Device {
    let a = |rel: &str| read_attr(&dir.join(rel));
    let n = |rel: &str| read_u64(&dir.join(rel));
    // Queue limits live on the whole device.
    let qdir = whole
        .map(|w| root.sys("block").join(&w.name))
        .unwrap_or_else(|| dir.to_path_buf());
    let q = |rel: &str| read_attr(&qdir.join("queue").join(rel));
    let qn = |rel: &str| read_u64(&qdir.join("queue").join(rel));

    let maj_min = a("dev").unwrap_or_default();
    let dm_name = a("dm/name");
    let dm_uuid = a("dm/uuid");
    let md_level = a("md/level").filter(|s| !s.is_empty());
    let scsi_type = read_u64(&dir.join("device/type"));
    let kind = classify(name, whole.is_some(), dm_name.is_some(), scsi_type);
    let iostats = qn("iostats").map(|v| v == 1);
    let lsblk_type = lsblk_type(
        name,
        whole.is_some(),
        dm_uuid.as_deref(),
        dm_name.is_some(),
        md_level.as_deref(),
        scsi_type,
    );

    let (scheduler, schedulers_available) = parse_scheduler(q("scheduler").as_deref());
    let removable = n("removable").unwrap_or(0) == 1 || whole.is_some_and(|w| w.removable);
    let mountpoints = mounts.mountpoints(&maj_min, name, dm_name.as_deref(), root.is_live());
    let swap = swaps.contains_device(name, dm_name.as_deref(), root.is_live());
    let device_attr = |rel: &str| {
        whole
            .is_none()
            .then(|| read_attr(&dir.join("device").join(rel)))
            .flatten()
            .filter(|s| !s.is_empty())
    };

    Device {
        name: name.to_string(),
        path: PathBuf::from("/dev").join(name),
        maj_min,
        kind,
        lsblk_type,
        size_bytes: n("size").unwrap_or(0) * 512,
        model: device_attr("model"),
        vendor: device_attr("vendor"),
        serial: device_attr("serial"),
        wwid: device_attr("wwid").or_else(|| a("wwid")),
        transport: if whole.is_none() {
            transport(root, name, kind)
        } else {
            None
        },
        logical_block_size: qn("logical_block_size").unwrap_or(512),
        physical_block_size: qn("physical_block_size").unwrap_or(512),
        minimum_io_size: qn("minimum_io_size"),
        optimal_io_size: qn("optimal_io_size"),
        alignment_offset: n("alignment_offset"),
        rotational: qn("rotational") == Some(1),
        removable,
        read_only: n("ro") == Some(1),
        scheduler,
        schedulers_available,
        write_cache: q("write_cache"),
        nr_requests: qn("nr_requests"),
        max_sectors_kb: qn("max_sectors_kb"),
        max_hw_sectors_kb: qn("max_hw_sectors_kb"),
        read_ahead_kb: qn("read_ahead_kb"),
        iostats,
        io_figures: iostats != Some(false)
            || counts_io_regardless_of_iostats(whole.map_or(name, |w| w.name.as_str())),
        discard: qn("discard_max_bytes").unwrap_or(0) > 0,
        discard_granularity: qn("discard_granularity"),
        discard_max_bytes: qn("discard_max_bytes"),
        zoned: q("zoned"),
        partition_number: n("partition").map(|v| v as u32),
        start_sector: n("start"),
        parent: whole.map(|w| w.name.clone()),
        partitions: Vec::new(),
        holders: dir_names(&dir.join("holders")).unwrap_or_default(),
        slaves: dir_names(&dir.join("slaves")).unwrap_or_default(),
        dm_name,
        dm_uuid,
        md_level,
        loop_backing_fs: a("loop/backing_file").and_then(|f| mounts.fs_type(&f)),
        loop_backing_file: a("loop/backing_file"),
        loop_direct_io: n("loop/dio").map(|v| v == 1),
        mountpoints,
        swap,
        signatures: Vec::new(),
        signature_error: None,
        blank: signatures::Blank::unknown("not read"),
        hidden: None,
        depth: 0,
        write_safety: WriteSafety::Clear,
        safety_reasons: Vec::new(),
    }
}

fn counted() -> bool {
    true
}

/// Whether the driver of disk `name` counts its I/O in /proc/diskstats whatever its
/// `queue/iostats` says. Request-based (blk-mq) devices are counted only with the switch on
/// (a loop device with iostats 0 counted 0B of an 8M write), and md, dm and pmem check it
/// before they count. zram is the exception: it is created with iostats 0 (it never sets the
/// flag) and counts every I/O regardless (a new zram with iostats 0 counted 16384 sectors for
/// `dd bs=1M count=8 oflag=direct`, kernel 6.18).
pub fn counts_io_regardless_of_iostats(name: &str) -> bool {
    classify(name, false, false, None) == Kind::Zram
}

/// Whether device `name` (a disk or one of its partitions) keeps its data in RAM: zram, or a
/// RAM disk (brd). A write there is never durable, whatever its `write_cache` says.
pub fn in_ram(name: &str) -> bool {
    matches!(classify(name, false, false, None), Kind::Zram | Kind::Ram)
}

fn classify(name: &str, is_part: bool, is_dm: bool, scsi_type: Option<u64>) -> Kind {
    if is_part {
        Kind::Part
    } else if is_dm || name.starts_with("dm-") {
        Kind::Dm
    } else if name.starts_with("loop") {
        Kind::Loop
    } else if name.starts_with("zram") {
        Kind::Zram
    } else if name.starts_with("md") {
        Kind::Md
    } else if name.starts_with("nvme") {
        Kind::Nvme
    } else if name.starts_with("mmcblk") {
        Kind::Mmc
    } else if name.starts_with("ram") {
        Kind::Ram
    } else if name.starts_with("sr") || scsi_type == Some(5) {
        Kind::Rom
    } else {
        Kind::Disk
    }
}

/// lsblk's TYPE (util-linux lsblk.c `get_type`).
fn lsblk_type(
    name: &str,
    is_part: bool,
    dm_uuid: Option<&str>,
    is_dm: bool,
    md_level: Option<&str>,
    scsi_type: Option<u64>,
) -> String {
    if is_part {
        return "part".into();
    }
    if is_dm || name.starts_with("dm-") {
        let prefix = dm_uuid
            .and_then(|u| u.split('-').next())
            .filter(|p| !p.is_empty());
        return match prefix {
            Some(p) if p.len() >= 4 && p[..4].eq_ignore_ascii_case("part") => "part".into(),
            Some(p) => p.to_ascii_lowercase(),
            None => "dm".into(),
        };
    }
    if name.starts_with("loop") {
        return "loop".into();
    }
    if name.starts_with("md") {
        return md_level.unwrap_or("md").to_ascii_lowercase();
    }
    scsi_type_name(scsi_type).unwrap_or("disk").to_string()
}

/// util-linux `blkdev_scsi_type_to_name`.
fn scsi_type_name(t: Option<u64>) -> Option<&'static str> {
    Some(match t? {
        0x00 => "disk",
        0x01 => "tape",
        0x02 => "printer",
        0x03 => "processor",
        0x04 => "worm",
        0x05 => "rom",
        0x06 => "scanner",
        0x07 => "mo-disk",
        0x08 => "changer",
        0x09 => "comm",
        0x0c => "raid",
        0x0d => "enclosure",
        0x0e => "rbc",
        0x11 => "osd",
        0x7f => "no-lun",
        _ => return None,
    })
}

/// The active scheduler in `queue/scheduler` text (`mq-deadline kyber [none]`).
pub fn active_scheduler(s: &str) -> Option<String> {
    parse_scheduler(Some(s)).0
}

/// Every scheduler a device offers, from its `queue/scheduler` text.
pub fn available_schedulers(s: &str) -> Vec<String> {
    parse_scheduler(Some(s)).1
}

fn parse_scheduler(s: Option<&str>) -> (Option<String>, Vec<String>) {
    let Some(s) = s else {
        return (None, Vec::new());
    };
    let mut active = None;
    let mut all = Vec::new();
    for w in s.split_whitespace() {
        if let Some(inner) = w.strip_prefix('[').and_then(|w| w.strip_suffix(']')) {
            active = Some(inner.to_string());
            all.push(inner.to_string());
        } else {
            all.push(w.to_string());
        }
    }
    if active.is_none() && all.len() == 1 {
        active = all.first().cloned();
    }
    (active, all)
}

/// The transport, from where the device sits in the sysfs device hierarchy.
fn transport(root: &SysRoot, name: &str, kind: Kind) -> Option<String> {
    let link = std::fs::read_link(root.sys("block").join(name)).ok()?;
    let p = link.to_string_lossy();
    let t = if p.contains("/nvme") || kind == Kind::Nvme {
        "nvme"
    } else if p.contains("/usb") {
        "usb"
    } else if p.contains("/ata") {
        "sata"
    } else if p.contains("/virtio") {
        "virtio"
    } else if p.contains("/mmc") {
        "mmc"
    } else if p.contains("/host") && p.contains("/target") {
        "scsi"
    } else {
        return None;
    };
    Some(t.to_string())
}

fn probe_signatures(root: &SysRoot, d: &mut Device) {
    let node = if root.is_live() {
        d.path.clone()
    } else {
        root.dev_node(&d.name)
    };
    if !root.is_live() && !node.exists() {
        d.blank = signatures::Blank::unknown("no device node in the fixture tree");
        return;
    }
    if d.size_bytes == 0 {
        d.blank = signatures::Blank::unknown("its size is 0");
        return;
    }
    let f = match File::open(&node) {
        Ok(f) => f,
        Err(e) => {
            d.signature_error = Some(format!("opening {}: {e}", node.display()));
            d.blank = signatures::Blank::unknown(format!("cannot open it: {e}"));
            return;
        }
    };
    match signatures::probe(&f, d.size_bytes, d.logical_block_size as u32) {
        Ok(s) => d.signatures = s,
        Err(e) => {
            d.signature_error = Some(format!("reading {}: {e}", node.display()));
            d.blank = signatures::Blank::unknown(format!("cannot read it: {e}"));
            return;
        }
    }
    // A known signature or partitions already say it holds data; otherwise look for a format
    // behind a wiped table, and at what the device holds (about 6 MiB in all).
    if !d.signatures.is_empty() || !d.partitions.is_empty() {
        d.blank = signatures::Blank::unknown("not needed: it carries a signature or partitions");
        return;
    }
    // O_DIRECT where the node allows it (a block device), buffered otherwise (a fixture's
    // image file on tmpfs, say).
    use std::os::unix::fs::OpenOptionsExt;
    let direct = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT | libc::O_CLOEXEC)
        .open(&node)
        .ok();
    let lbs = d.logical_block_size as u32;
    d.hidden = direct
        .as_ref()
        .and_then(|g| signatures::probe_hidden(g, d.size_bytes, lbs).ok())
        .or_else(|| signatures::probe_hidden(&f, d.size_bytes, lbs).ok())
        .flatten();
    let blank = direct
        .as_ref()
        .and_then(|g| signatures::scan_blank_direct(g, d.size_bytes).ok());
    d.blank = match blank {
        Some(b) => b,
        None => signatures::scan_blank(&f, d.size_bytes)
            .unwrap_or_else(|e| signatures::Blank::unknown(format!("cannot read it: {e}"))),
    };
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
