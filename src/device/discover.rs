//! Discovery: every block device from sysfs and procfs (through the root, so tests point it at
//! fixture trees), read into a tree ordered as lsblk orders it, with signatures where asked.

use super::*;
use crate::Error;
use crate::sysroot::{SysRoot, dir_names, read_attr, read_u64};
use mounts::{MountTable, SwapTable};
use std::collections::{BTreeMap, HashSet};
use std::fs::File;
use std::path::{Path, PathBuf};

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
    let budget = if opts.probe_only.is_some() {
        signatures::EXTENT_BUDGET
    } else {
        signatures::EXTENT_BUDGET_LIST
    };
    if to_probe.len() > 1 {
        let per = to_probe.len().div_ceil(PROBERS);
        std::thread::scope(|scope| {
            for chunk in to_probe.chunks_mut(per) {
                scope.spawn(move || {
                    for d in chunk.iter_mut() {
                        probe_signatures(root, d, budget);
                    }
                });
            }
        });
    } else if let Some(d) = to_probe.pop() {
        probe_signatures(root, d, budget);
    }
    let mut tree = DeviceTree { devices };
    safety::assess_tree(root, &mut tree);
    Ok(tree)
}

/// Orders devices as lsblk draws them: each device that sits on nothing, then (depth-first)
/// its partitions and holders. A device with several slaves (md over two disks) is listed once,
/// under the first.
pub(super) fn tree_order(raw: &BTreeMap<String, Device>, order: &[String]) -> Vec<Device> {
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

pub(super) fn read_device(
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

/// Reads `d`'s signatures, and where it has none, looks behind them and at what it holds
/// (reading up to `extent_budget` bytes of a loop device's backing file's data).
pub(super) fn probe_signatures(root: &SysRoot, d: &mut Device, extent_budget: u64) {
    let node = node_of(root, d);
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
    let direct = open_direct(&node);
    let lbs = d.logical_block_size as u32;
    d.hidden = direct
        .as_ref()
        .and_then(|g| signatures::probe_hidden(g, d.size_bytes, lbs).ok())
        .or_else(|| signatures::probe_hidden(&f, d.size_bytes, lbs).ok())
        .flatten();
    let extra = if root.is_live() {
        backing_extents(root, d, extent_budget)
    } else {
        Default::default()
    };
    let blank = direct
        .as_ref()
        .and_then(|g| signatures::scan_blank_direct(g, d.size_bytes, &extra).ok());
    d.blank = match blank {
        Some(b) => b,
        None => signatures::scan_blank(&f, d.size_bytes, &extra)
            .unwrap_or_else(|e| signatures::Blank::unknown(format!("cannot read it: {e}"))),
    };
}

/// `d`'s device node: under /dev on the live system, in the fixture tree's dev/ otherwise.
pub(super) fn node_of(root: &SysRoot, d: &Device) -> PathBuf {
    if root.is_live() {
        d.path.clone()
    } else {
        root.dev_node(&d.name)
    }
}

/// `node` opened for reading with O_DIRECT, if it takes that (a block device does; a file on
/// tmpfs does not).
pub(super) fn open_direct(node: &Path) -> Option<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECT | libc::O_CLOEXEC)
        .open(node)
        .ok()
}

/// Where a loop device's backing file holds data (SEEK_DATA), as places in the device, within
/// `budget` bytes: data anywhere in the file is then read, not only where the blank test
/// samples. Nothing for other devices, or when the file cannot be opened.
pub(super) fn backing_extents(root: &SysRoot, d: &Device, budget: u64) -> signatures::Extra {
    let Some(file) = &d.loop_backing_file else {
        return Default::default();
    };
    let Ok(f) = File::open(file.trim_end_matches(" (deleted)")) else {
        return Default::default();
    };
    let offset = read_attr(&root.sys("block").join(&d.name).join("loop/offset"))
        .and_then(|s| s.parse::<u64>().ok())
        .unwrap_or(0);
    let Ok(x) = crate::sys::data_extents(&f, offset, offset + d.size_bytes, 4096) else {
        return Default::default();
    };
    let in_device: Vec<(u64, u64)> = x.extents.iter().map(|&(o, l)| (o - offset, l)).collect();
    let (regions, all) = signatures::extent_regions(&in_device, budget);
    signatures::Extra {
        regions,
        complete: all && x.walked >= offset + d.size_bytes,
    }
}
