//! Opening a test's target. The safety check runs here, inside the library's open path, so no
//! caller can skip it: a write to a `blocked` device is refused, a `confirm` device needs its
//! name typed back, and the device stays open with O_EXCL for the whole run. A directory gets a
//! file of the test's own, removed when the [`OpenTarget`] is dropped.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

use serde::Serialize;

use super::RunError;
use super::job::{Data, Job, Mode, Plan, TargetFacts};
use crate::device::safety::{self, SafetyReport, WriteSafety, open_exclusive};
use crate::device::{DiscoverOptions, discover};
use crate::sys;
use crate::sysroot::SysRoot;

/// A file target in a directory gets this size unless the job gives one.
pub const DEFAULT_FILE_SIZE: u64 = 256 << 20;

/// What the user named, and what they confirmed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TargetSpec {
    pub path: String,
    /// The device name typed back for a `confirm` device.
    pub confirm: Option<String>,
    /// Allow a write test to overwrite an existing regular file.
    pub force: bool,
}

/// Facts about the target, reported with the results.
#[derive(Debug, Clone, Serialize)]
pub struct TargetInfo {
    pub path: String,
    /// `block` or `file`.
    pub kind: &'static str,
    /// Kernel name of the block device: the target, or the one holding a file target.
    pub device: Option<String>,
    pub size_bytes: u64,
    pub logical_block_size: Option<u64>,
    pub physical_block_size: Option<u64>,
    pub rotational: Option<bool>,
    pub write_cache: Option<String>,
    pub scheduler: Option<String>,
    /// The file a directory target created for the test (removed afterwards).
    pub test_file: Option<String>,
    pub write_safety: WriteSafety,
}

/// Memory that serves a target's I/O in place of a disk (a trap: the figures are the page
/// cache's or RAM's).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CacheBelow {
    /// The target is, or is on, a loop device without direct I/O.
    Loop(crate::device::BufferedLoop),
    /// The target is a file on a file system in memory (tmpfs, ramfs): no device under it.
    MemoryFs { fs: String },
}

/// The file system under a file target: its block size, for writes that cover part of a block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FsBlock {
    /// Its type as /proc/self/mounts names it (ext4, xfs, ...), if found.
    pub fs: Option<String>,
    /// Its fundamental block size (statvfs f_frsize).
    pub size: u64,
    /// The test writes into blocks the file has not written yet: blkscope's scratch file for a
    /// write test is preallocated (unwritten extents), as fio's is.
    pub unwritten: bool,
}

impl FsBlock {
    /// `fs`: the file system's type, as [`watch_for_file`] found it.
    fn of(file: &File, fs: Option<String>, unwritten: bool) -> Option<Self> {
        Some(Self {
            fs,
            size: sys::fs_block_size(file)?,
            unwritten,
        })
    }
}

/// An open target. Dropping it closes the device (ending O_EXCL) or removes the test's file.
pub struct OpenTarget {
    pub file: File,
    pub info: TargetInfo,
    pub plan: Plan,
    /// Devices whose diskstats explain the test: the target's device (for a file, the device
    /// holding it), what it is built on, then what is built on it.
    pub watch: Vec<String>,
    /// How many of `watch` (from the start) are the device and what it is built on.
    pub below_count: usize,
    /// Where its blocks live, to tell how much of a read test's region was never written.
    pub store: crate::device::Store,
    /// Memory under the target that a test measures instead of a disk.
    pub cache_below: Option<CacheBelow>,
    /// For a file: the file system's block size.
    pub fs_block: Option<FsBlock>,
    /// For a file: the device holding it, as discovery found it (without reading any device),
    /// so that a saved run need not look for it again.
    pub holding: Option<crate::device::Device>,
    remove_on_drop: Option<ScratchFile>,
}

/// The test's own file: removed on drop only if its path still names the inode blkscope
/// created (in a shared directory somebody may have put something else there meanwhile).
struct ScratchFile {
    path: PathBuf,
    dev: u64,
    ino: u64,
}

impl ScratchFile {
    fn remove(&self) {
        use std::os::unix::fs::MetadataExt;
        if let Ok(m) = std::fs::symlink_metadata(&self.path)
            && m.dev() == self.dev
            && m.ino() == self.ino
        {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// The watch list for the device named `name`.
fn watch_list(tree: &crate::device::DeviceTree, name: &str) -> (Vec<String>, usize) {
    let below = 1 + tree.below(name).len();
    (crate::stats::related(tree, name), below)
}

/// The block device that holds a file, its watch list (empty for tmpfs, overlay, ...), and the
/// page cache under it, if any.
struct FileDevice {
    watch: Vec<String>,
    below: usize,
    device: Option<crate::device::Device>,
    cache_below: Option<CacheBelow>,
    /// The type of the file system holding it, by mount point.
    fs: Option<String>,
}

fn watch_for_file(root: &SysRoot, path: &Path) -> FileDevice {
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

impl OpenTarget {
    /// A second descriptor on the same file or device for reading it back: O_DIRECT, so what
    /// comes back is what the device holds, not the page cache; where the file system refuses
    /// O_DIRECT (tmpfs before Linux 6.6), a buffered one after dropping the cached pages.
    /// Reopened through the descriptor, never by path.
    pub fn reopen_for_reading(&self) -> std::io::Result<File> {
        use std::os::fd::AsRawFd;
        let fd_path = format!("/proc/self/fd/{}", self.file.as_raw_fd());
        let _ = self.file.sync_data();
        match OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECT | libc::O_CLOEXEC)
            .open(&fd_path)
        {
            Err(e) if e.raw_os_error() == Some(libc::EINVAL) => {
                let f = OpenOptions::new()
                    .read(true)
                    .custom_flags(libc::O_CLOEXEC)
                    .open(&fd_path)?;
                let _ = sys::drop_cache(&f);
                Ok(f)
            }
            r => r,
        }
    }
}

impl Drop for OpenTarget {
    fn drop(&mut self) {
        if let Some(f) = self.remove_on_drop.take() {
            f.remove();
        }
    }
}

static FILE_COUNTER: AtomicU32 = AtomicU32::new(0);

/// Scratch files are named `.blkscope-PID-N.tmp`: the pid tells a later blkscope whether the
/// run that made one is still alive.
const SCRATCH_PREFIX: &str = ".blkscope-";
const SCRATCH_SUFFIX: &str = ".tmp";

/// The `n`th scratch file of this process in `dir`.
fn scratch_path(dir: &Path, n: u32) -> PathBuf {
    dir.join(format!(
        "{SCRATCH_PREFIX}{}-{n}{SCRATCH_SUFFIX}",
        std::process::id()
    ))
}

/// The file name the dd and fio lines use for a directory target (they cannot share
/// blkscope's per-process name).
pub fn command_line_file(dir: &Path) -> String {
    format!("{}/blkscope.fio.tmp", dir.display())
}

/// The path the dd and fio lines name for a target: the device, or a file in the scratch
/// directory.
pub fn command_line_target(device: Option<&str>, scratch_dir: &Path) -> String {
    match device {
        Some(d) => format!("/dev/{d}"),
        None => command_line_file(scratch_dir),
    }
}

/// Removes scratch files in `dir` left by a blkscope that died (their process no longer
/// exists); returns how many. Every command that makes scratch files calls it first.
pub fn remove_stale_scratch_files(dir: &Path) -> usize {
    let mut n = 0;
    let Ok(rd) = std::fs::read_dir(dir) else {
        return 0;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix(SCRATCH_PREFIX) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if name.ends_with(SCRATCH_SUFFIX)
            && pid != std::process::id()
            && !crate::sys::pid_alive(pid)
            && std::fs::remove_file(e.path()).is_ok()
        {
            n += 1;
        }
    }
    n
}

fn open_err(path: &Path, e: std::io::Error) -> RunError {
    RunError::Open {
        path: path.to_path_buf(),
        source: e,
    }
}

/// What validation needs to know of a block device: its size and its logical block size.
fn block_facts(d: &crate::device::Device) -> TargetFacts {
    TargetFacts {
        size: d.size_bytes,
        direct_align: d.logical_block_size,
        is_block: true,
    }
}

/// Checks and opens the target of `job`. What the user can get wrong is refused before
/// anything is read, allocated or created: an empty target, buffers larger than the memory
/// available, a scratch file larger than the free space.
/// `cancel` (Ctrl-C, SIGTERM, SIGHUP) is heard during the slow parts of setting up too (laying
/// out a scratch file for a read test); the scratch file is then removed.
pub fn open(
    root: &SysRoot,
    spec: &TargetSpec,
    job: &Job,
    cancel: &AtomicBool,
) -> Result<OpenTarget, RunError> {
    if spec.path.trim().is_empty() {
        return Err(RunError::Invalid(vec![
            "the target is empty: name a block device (e.g. /dev/sdb), a directory or a file"
                .into(),
        ]));
    }
    if let Some(avail) = root.mem_available()
        && let Err(e) = job.check_memory(avail)
    {
        // On a block device, a job that does not fit it at all (`--bs 1T` on a 256M disk) is
        // told that first: the memory figure's fix (a smaller --bs that is still larger than
        // the disk) would only lead to the next refusal. Validating is pure: nothing is read
        // or allocated for it.
        let first = spec
            .path
            .starts_with("/dev/")
            .then(|| crate::device::properties(root, &spec.path))
            .flatten()
            .and_then(|d| job.validate(&block_facts(&d)).err());
        return Err(invalid(first.unwrap_or_else(|| vec![e])));
    }
    let (report, tree) = safety::check_tree(root, &spec.path)?;
    let writes = job.op.writes();
    let flags = job.mode.open_flags();
    if let Some(tree) = tree {
        return open_block(root, spec, job, report, &tree, writes, flags);
    }
    let path = Path::new(&spec.path);
    if path.is_dir() {
        open_dir_file(root, path, job, writes, flags, report.write_safety, cancel)
    } else {
        open_named_file(root, path, spec, job, writes, flags, report.write_safety)
    }
}

fn open_block(
    root: &SysRoot,
    spec: &TargetSpec,
    job: &Job,
    report: SafetyReport,
    tree: &crate::device::DeviceTree,
    writes: bool,
    flags: i32,
) -> Result<OpenTarget, RunError> {
    let name = report.device.clone().unwrap_or_default();
    if writes && report.write_safety == WriteSafety::Blocked {
        return Err(RunError::Blocked(Box::new(report)));
    }
    let dev = tree
        .get(&name)
        .ok_or_else(|| RunError::Invalid(vec![format!("device {name} vanished")]))?;
    let facts = block_facts(dev);
    // A typo is said before the device's name is asked for: typing the name, only to be told
    // then that the job itself was wrong, is a step for nothing.
    let plan = job.validate(&facts).map_err(invalid)?;
    if writes && dev.zoned.as_deref() == Some("host-managed") {
        let zone = std::fs::read_to_string(root.sys(format!("block/{name}/queue/chunk_sectors")))
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .map(|s| s * 512)
            .unwrap_or(0);
        let refused = super::zoned::refusals(job, zone, dev.scheduler.as_deref());
        if !refused.is_empty() {
            return Err(RunError::Invalid(refused));
        }
    }
    if writes && report.write_safety == WriteSafety::Confirm {
        let typed = spec
            .confirm
            .as_deref()
            .map(|c| c.trim_start_matches("/dev/"));
        if typed != Some(name.as_str()) {
            return Err(RunError::ConfirmationNeeded(Box::new(report)));
        }
    }
    if job.hipri {
        // IOPOLL needs the device's polled queues: without them the kernel refuses (EOPNOTSUPP)
        // or, worse, spins. Say so before anything runs.
        let disk = dev.parent.as_deref().unwrap_or(&name);
        let poll = std::fs::read_to_string(root.sys(format!("block/{disk}/queue/io_poll")))
            .map(|s| s.trim() == "1")
            .unwrap_or(false);
        if !poll {
            return Err(RunError::Invalid(vec![format!(
                "--hipri polls {disk}'s queue for completions, but it has no poll queues \
                 (queue/io_poll is not 1); for NVMe, load the driver with nvme.poll_queues=N, \
                 or leave --hipri out"
            )]));
        }
    }
    let (watch, below_count) = watch_list(tree, &name);
    let cache_below = tree.buffered_loop(&name).map(CacheBelow::Loop);
    let path = dev.path.clone();
    let file = if writes {
        open_noatime(flags, |f| open_exclusive(&path, true, f)).map_err(|e| open_err(&path, e))?
    } else {
        open_for_test(&path, false, flags).map_err(|e| open_err(&path, e))?
    };
    Ok(OpenTarget {
        file,
        info: TargetInfo {
            path: spec.path.clone(),
            kind: "block",
            device: Some(name),
            size_bytes: dev.size_bytes,
            logical_block_size: Some(dev.logical_block_size),
            physical_block_size: Some(dev.physical_block_size),
            rotational: Some(dev.rotational),
            write_cache: dev.write_cache.clone(),
            scheduler: dev.scheduler.clone(),
            test_file: None,
            write_safety: report.write_safety,
        },
        plan,
        watch,
        below_count,
        store: crate::device::Store::of_device(root, tree, dev),
        cache_below,
        fs_block: None,
        holding: None,
        remove_on_drop: None,
    })
}

/// Opens the target with O_NOATIME, as fio and t/io_uring do, so that no read updates the
/// inode's access time (4% of a 4K read at QD1 on zram, pinned to one CPU: bench/vs_fio.sh's
/// device, alternating runs). The kernel allows the flag only to the file's owner or a holder of
/// CAP_FOWNER: on EPERM the open is tried again without it.
fn open_noatime(flags: i32, open: impl Fn(i32) -> std::io::Result<File>) -> std::io::Result<File> {
    match open(flags | libc::O_NOATIME) {
        Err(e) if e.raw_os_error() == Some(libc::EPERM) => open(flags),
        other => other,
    }
}

/// Opens `path` for a test: for reading, and writing too for a write test, with the test's
/// `flags`, O_CLOEXEC and, where allowed, O_NOATIME.
fn open_for_test(path: &Path, writes: bool, flags: i32) -> std::io::Result<File> {
    open_noatime(flags, |f| {
        OpenOptions::new()
            .read(true)
            .write(writes)
            .custom_flags(f | libc::O_CLOEXEC)
            .open(path)
    })
}

/// What the jobs of a suite or sweep get wrong on `spec`'s target, found before the first one
/// runs, so that a bad point cannot fail after the points before it have run (or written): each
/// job's parameters and the memory its buffers need, and on a block device its size and
/// O_DIRECT alignment too. `jobs` are (test name, job); each problem is named by the tests
/// that have it.
/// Anything this cannot see (a scratch file's free space, a file's alignment) is still
/// checked when each test opens its target. `suite_sizes`: the sizes are a suite file's, which
/// the user cannot change with --size; a test too large for the device then says how large a
/// device it needs.
pub fn precheck(
    root: &SysRoot,
    spec: &TargetSpec,
    device: Option<&crate::device::Device>,
    jobs: &[(&str, &Job)],
    suite_sizes: bool,
) -> Result<(), RunError> {
    // Sizes are checked against a device named by its /dev/ path.
    let device = device.filter(|_| spec.path.starts_with("/dev/"));
    let mem = root.mem_available();
    // (problem, the tests that have it), in the order first seen: a problem several tests
    // share (a sweep's --size on every point) is said once, naming them all.
    let mut problems: Vec<(String, Vec<&str>)> = Vec::new();
    // The suite's largest test that does not fit the device: (bytes needed, test).
    let mut too_large: Option<(u64, &str)> = None;
    for &(name, job) in jobs {
        let mut e = Vec::new();
        if let Some(avail) = mem
            && let Err(x) = job.check_memory(avail)
        {
            e.push(x);
        }
        match &device {
            Some(d) => {
                let need = job
                    .size
                    .map_or(0, |s| s.resolve(d.size_bytes))
                    .saturating_add(job.offset);
                if suite_sizes && d.size_bytes > 0 && need > d.size_bytes {
                    if too_large.is_none_or(|(n, _)| need > n) {
                        too_large = Some((need, name));
                    }
                } else {
                    e.extend(job.validate(&block_facts(d)).err().unwrap_or_default());
                }
            }
            None => e.extend(job.check_params(1, false)),
        }
        for x in e {
            match problems.iter_mut().find(|(p, _)| *p == x.0) {
                Some((_, names)) => names.push(name),
                None => problems.push((x.0, vec![name])),
            }
        }
    }
    let mut errs: Vec<String> = Vec::new();
    if let (Some((need, name)), Some(d)) = (too_large, &device) {
        // Whole MiB, as the command line takes it back (`1G`, not `1024M`).
        let at_least = crate::units::exact_size(need.div_ceil(1 << 20) << 20);
        errs.push(format!(
            "{name} needs {} of the device and {} has {}: run the suite on a device of at least \
             {at_least} (`blkscope lab --size {at_least}` makes lab devices that large)",
            crate::units::fmt_size(need),
            d.name,
            crate::units::fmt_size(d.size_bytes),
        ));
    }
    errs.extend(
        problems
            .into_iter()
            .map(|(p, names)| format!("{}: {p}", names.join(", "))),
    );
    if errs.is_empty() {
        Ok(())
    } else {
        Err(RunError::Invalid(errs))
    }
}

/// How much of `free` bytes on a file system blkscope lets a scratch file or a lab take: all
/// but 10% of it, and at least 64M left, so that a typo cannot fill the file system under
/// somebody's database.
pub fn usable_space(free: u64) -> u64 {
    free.saturating_sub((free / 10).max(64 << 20))
}

fn invalid(errs: Vec<super::job::Invalid>) -> RunError {
    RunError::Invalid(errs.into_iter().map(|e| e.0).collect())
}

/// The O_DIRECT alignment for a file: what statx says, else 4096 (safe on every file system).
fn file_direct_align(path: &Path) -> u64 {
    sys::dio_alignment(path)
        .map(|(_, off)| off as u64)
        .unwrap_or(4096)
}

/// Opens a scratch file of the test's own in `dir`: created (never over something else),
/// preallocated, laid out with data where the test needs it on disk, and reopened with the
/// test's flags through its descriptor. It is removed when the target is dropped.
fn open_dir_file(
    root: &SysRoot,
    dir: &Path,
    job: &Job,
    writes: bool,
    flags: i32,
    safety: WriteSafety,
    cancel: &AtomicBool,
) -> Result<OpenTarget, RunError> {
    let size = job
        .size
        .map(|s| s.resolve(DEFAULT_FILE_SIZE))
        .unwrap_or(DEFAULT_FILE_SIZE)
        .saturating_add(job.offset);
    // Stale files of killed runs go first (their space counts), then the new one must fit
    // with room to spare: a typo must not fill the file system under somebody's database.
    remove_stale_scratch_files(dir);
    if let Ok(free) = sys::fs_available(dir) {
        fits(dir, job, size, free)?;
    }
    if job.hipri {
        return Err(RunError::Invalid(vec![
            "--hipri polls a block device's queue: name a device, not a directory".into(),
        ]));
    }
    let (created, scratch) = create_scratch(dir)?;
    let path = scratch.path.clone();
    let created_id = (scratch.dev, scratch.ino);
    // From here on the file is removed on every exit path (if it is still ours).
    let mut guard = scratch_target(dir, created, scratch, size, safety);
    let facts = TargetFacts {
        size,
        direct_align: file_direct_align(&path),
        is_block: false,
    };
    guard.plan = job.validate(&facts).map_err(invalid)?;
    debug_pause_after_create(cancel);
    sys::preallocate(&guard.file, size).map_err(|e| open_err(&path, e))?;
    // A read test needs data that is really on disk: lay the file out (untimed), as fio does,
    // then drop it from the cache. So does a write test on a cold cache (a suite's `cold`, as
    // rmw-sweep's): its writes of part of a page then read the blocks they change, as on a
    // device, instead of finding them unwritten (zeros, no read).
    let laid_out = !writes || job.drop_cache_first;
    if laid_out {
        lay_out(&guard.file, size, job.data, cancel).map_err(|e| open_err(&path, e))?;
        guard.file.sync_all().map_err(|e| open_err(&path, e))?;
        let _ = sys::drop_cache(&guard.file);
    }
    guard.file = reopen_as_created(&guard.file, &path, created_id, writes, flags)?;
    let under = watch_for_file(root, &path);
    guard.watch = under.watch;
    guard.below_count = under.below;
    guard.info.device = under.device.as_ref().map(|d| d.name.clone());
    guard.holding = under.device;
    guard.cache_below = under.cache_below;
    // A write test's file that was not laid out is preallocated: every write lands in a block
    // not written yet.
    guard.fs_block = FsBlock::of(&guard.file, under.fs, !laid_out);
    Ok(guard)
}

/// Whether a scratch file of `size` bytes fits in `dir`, with `free` bytes free there; if not,
/// what to change.
fn fits(dir: &Path, job: &Job, size: u64, free: u64) -> Result<(), RunError> {
    let room = usable_space(free);
    if size <= room {
        return Ok(());
    }
    // The file is --offset + --size long: where the offset alone is past the room,
    // no --size fits and the offset is what to change.
    let fix = if room < 1 << 20 {
        // Not a MiB to offer: no --size or --offset helps.
        ", so there is no room for a scratch file here: use a directory with more than 64M \
         free"
            .to_string()
    } else if job.offset >= room {
        format!(
            "; the file runs to --offset + --size, so use an --offset well below {}, or \
             another directory",
            crate::units::fmt_size(room)
        )
    } else {
        // Whole MiB, rounded down: a rounded-up figure would be refused in turn.
        format!(
            "; use --size {}M or less, or another directory",
            (room - job.offset) >> 20
        )
    };
    Err(RunError::Invalid(vec![format!(
        "a {} scratch file does not fit in {}: {} free there, and blkscope leaves at \
         least 10% (and 64M) of it{fix}",
        crate::units::fmt_size(size),
        dir.display(),
        crate::units::fmt_size(free),
    )]))
}

/// Creates the next scratch file in `dir`. O_CREAT|O_EXCL (create_new) never follows a
/// symlink planted at the path.
fn create_scratch(dir: &Path) -> Result<(File, ScratchFile), RunError> {
    use std::os::unix::fs::MetadataExt;
    let n = FILE_COUNTER.fetch_add(1, Ordering::Relaxed);
    let path = scratch_path(dir, n);
    let created = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_CLOEXEC)
        .open(&path)
        .map_err(|e| open_err(&path, e))?;
    let meta = created.metadata().map_err(|e| open_err(&path, e))?;
    let scratch = ScratchFile {
        path,
        dev: meta.dev(),
        ino: meta.ino(),
    };
    Ok((created, scratch))
}

/// The target a scratch file in `dir` makes, before it is planned and laid out.
fn scratch_target(
    dir: &Path,
    file: File,
    scratch: ScratchFile,
    size: u64,
    safety: WriteSafety,
) -> OpenTarget {
    OpenTarget {
        file,
        info: TargetInfo {
            path: dir.display().to_string(),
            kind: "file",
            device: None,
            size_bytes: size,
            logical_block_size: None,
            physical_block_size: None,
            rotational: None,
            write_cache: None,
            scheduler: None,
            test_file: Some(scratch.path.display().to_string()),
            write_safety: safety,
        },
        plan: Plan {
            region: 0,
            total: 0,
        },
        watch: Vec::new(),
        below_count: 0,
        // Laid out with data before a read test: no holes to look for.
        store: Default::default(),
        cache_below: None,
        fs_block: None,
        holding: None,
        remove_on_drop: Some(scratch),
    }
}

/// Reopens the scratch file with the test's flags (O_DIRECT, O_DSYNC) through its descriptor,
/// never by path: between the create and now the path may have been swapped for a symlink to
/// a disk. The file reopened must be the one created (`created`: its device and inode).
fn reopen_as_created(
    file: &File,
    path: &Path,
    created: (u64, u64),
    writes: bool,
    flags: i32,
) -> Result<File, RunError> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::MetadataExt;
    let fd_path = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
    let reopened = open_for_test(&fd_path, writes, flags).map_err(|e| {
        open_err(
            path,
            std::io::Error::new(
                e.kind(),
                format!(
                    "reopening it through {} ({e}); is /proc mounted?",
                    fd_path.display()
                ),
            ),
        )
    })?;
    let m = reopened.metadata().map_err(|e| open_err(path, e))?;
    if (m.dev(), m.ino()) != created {
        return Err(open_err(
            path,
            std::io::Error::other("the reopened file is not the one blkscope created"),
        ));
    }
    Ok(reopened)
}

/// Debug builds only: `BLKSCOPE_DEBUG_SCRATCH_PAUSE_MS` waits after the scratch file is created
/// (or until cancelled), so a test can swap its path for a symlink, or send a signal, at that
/// moment.
#[cfg_attr(not(debug_assertions), allow(unused_variables))]
fn debug_pause_after_create(cancel: &AtomicBool) {
    #[cfg(debug_assertions)]
    if let Some(ms) = std::env::var("BLKSCOPE_DEBUG_SCRATCH_PAUSE_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        let until = std::time::Instant::now() + std::time::Duration::from_millis(ms);
        while std::time::Instant::now() < until && !cancel.load(Ordering::Relaxed) {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}

fn lay_out(f: &File, size: u64, data: Data, cancel: &AtomicBool) -> std::io::Result<()> {
    let chunk = 1 << 20;
    let mut buf = vec![0u8; chunk];
    let mut rng = fastrand::Rng::with_seed(0x5eed);
    let mut off = 0u64;
    while off < size {
        if cancel.load(Ordering::Relaxed) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::Interrupted,
                "cancelled while laying out the file",
            ));
        }
        let n = chunk.min((size - off) as usize);
        if data == Data::Random {
            rng.fill(&mut buf[..n]);
        }
        f.write_all_at(&buf[..n], off)?;
        off += n as u64;
    }
    Ok(())
}

fn open_named_file(
    root: &SysRoot,
    path: &Path,
    spec: &TargetSpec,
    job: &Job,
    writes: bool,
    flags: i32,
    safety: WriteSafety,
) -> Result<OpenTarget, RunError> {
    if job.hipri {
        return Err(RunError::Invalid(vec![
            "--hipri polls a block device's queue: name a device, not a file".into(),
        ]));
    }
    let len = std::fs::metadata(path)
        .map_err(|e| open_err(path, e))?
        .len();
    let facts = TargetFacts {
        size: len,
        direct_align: file_direct_align(path),
        is_block: false,
    };
    // As on a device: a typo is said before --force is asked for.
    let plan = job.validate(&facts).map_err(invalid)?;
    if writes && !spec.force {
        return Err(RunError::Invalid(vec![format!(
            "{} exists and a write test would overwrite it: add --force to allow that, or name a directory to test in",
            path.display()
        )]));
    }
    let file = open_for_test(path, writes, flags).map_err(|e| open_err(path, e))?;
    let under = watch_for_file(root, path);
    let fs_block = FsBlock::of(&file, under.fs, false);
    Ok(OpenTarget {
        file,
        info: TargetInfo {
            path: spec.path.clone(),
            kind: "file",
            device: under.device.as_ref().map(|d| d.name.clone()),
            size_bytes: len,
            logical_block_size: None,
            physical_block_size: None,
            rotational: None,
            write_cache: None,
            scheduler: None,
            test_file: None,
            write_safety: safety,
        },
        plan,
        watch: under.watch,
        below_count: under.below,
        store: crate::device::Store::File {
            path: path.to_path_buf(),
        },
        cache_below: under.cache_below,
        fs_block,
        holding: under.device,
        remove_on_drop: None,
    })
}

/// Whether a mode reads through the page cache.
pub fn buffered(mode: Mode) -> bool {
    matches!(mode, Mode::Buffered | Mode::Fdatasync | Mode::Nocache)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::job::{Mode, Op};
    use std::os::fd::AsRawFd;

    /// The open flags of a descriptor of this process, from /proc/self/fdinfo (octal).
    fn fd_flags(f: &File) -> i32 {
        let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{}", f.as_raw_fd())).unwrap();
        let line = info.lines().find_map(|l| l.strip_prefix("flags:")).unwrap();
        i32::from_str_radix(line.trim(), 8).unwrap()
    }

    #[test]
    fn a_read_target_is_opened_without_access_time_updates() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("data");
        std::fs::write(&path, vec![7u8; 1 << 20]).unwrap();
        let job = Job {
            op: Op::Read,
            mode: Mode::Buffered,
            bs: 4096,
            ..Job::default()
        };
        let spec = TargetSpec {
            path: path.display().to_string(),
            confirm: None,
            force: false,
        };
        let t = open(&SysRoot::live(), &spec, &job, &AtomicBool::new(false)).unwrap();
        let flags = fd_flags(&t.file);
        eprintln!("flags {flags:o}");
        // The test made the file, so it owns it and the kernel grants O_NOATIME.
        assert_ne!(flags & libc::O_NOATIME, 0, "flags {flags:o}");
    }

    #[test]
    fn where_o_noatime_is_refused_the_open_goes_on_without_it() {
        let tried = std::cell::RefCell::new(Vec::new());
        let f = open_noatime(libc::O_DIRECT, |flags| {
            tried.borrow_mut().push(flags);
            if flags & libc::O_NOATIME != 0 {
                Err(std::io::Error::from_raw_os_error(libc::EPERM))
            } else {
                tempfile::tempfile()
            }
        });
        assert!(f.is_ok());
        assert_eq!(
            *tried.borrow(),
            vec![libc::O_DIRECT | libc::O_NOATIME, libc::O_DIRECT]
        );
        // Any other error is the answer.
        let e = open_noatime(0, |_| Err(std::io::Error::from_raw_os_error(libc::EACCES)));
        assert_eq!(e.unwrap_err().raw_os_error(), Some(libc::EACCES));
    }
}
