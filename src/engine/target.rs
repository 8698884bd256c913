//! Opening a test's target. The safety check runs here, inside the library's open path, so no
//! caller can skip it: a write to a `blocked` device is refused, a `confirm` device needs its
//! name typed back, and the device stays open with O_EXCL for the whole run. A directory gets a
//! file of the test's own, removed when the [`OpenTarget`] is dropped.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

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
    remove_on_drop: Option<PathBuf>,
}

/// The watch list for the device named `name`.
fn watch_list(tree: &crate::device::DeviceTree, name: &str) -> (Vec<String>, usize) {
    let below = 1 + tree.below(name).len();
    (crate::stats::related(tree, name), below)
}

/// The block device that holds a file, and its watch list (empty for tmpfs, overlay, ...).
fn watch_for_file(root: &SysRoot, path: &Path) -> (Vec<String>, usize, Option<String>) {
    let opts = DiscoverOptions {
        skip_signatures: true,
        ..Default::default()
    };
    let Ok(tree) = discover(root, &opts) else {
        return (Vec::new(), 0, None);
    };
    match tree.holding(path) {
        Some(d) => {
            let (w, b) = watch_list(&tree, &d.name);
            (w, b, Some(d.name.clone()))
        }
        None => (Vec::new(), 0, None),
    }
}

impl Drop for OpenTarget {
    fn drop(&mut self) {
        if let Some(p) = self.remove_on_drop.take() {
            let _ = std::fs::remove_file(p);
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

/// Checks and opens the target of `job`.
pub fn open(root: &SysRoot, spec: &TargetSpec, job: &Job) -> Result<OpenTarget, RunError> {
    let (report, tree) = safety::check_tree(root, &spec.path)?;
    let writes = job.op.writes();
    let flags = job.mode.open_flags();
    if let Some(tree) = tree {
        return open_block(spec, job, report, &tree, writes, flags);
    }
    let path = Path::new(&spec.path);
    if path.is_dir() {
        open_dir_file(root, path, job, writes, flags, report.write_safety)
    } else {
        open_named_file(root, path, spec, job, writes, flags, report.write_safety)
    }
}

fn open_block(
    spec: &TargetSpec,
    job: &Job,
    report: SafetyReport,
    tree: &crate::device::DeviceTree,
    writes: bool,
    flags: i32,
) -> Result<OpenTarget, RunError> {
    let name = report.device.clone().unwrap_or_default();
    if writes {
        match report.write_safety {
            WriteSafety::Blocked => return Err(RunError::Blocked(Box::new(report))),
            WriteSafety::Confirm => {
                let typed = spec
                    .confirm
                    .as_deref()
                    .map(|c| c.trim_start_matches("/dev/"));
                if typed != Some(name.as_str()) {
                    return Err(RunError::ConfirmationNeeded(Box::new(report)));
                }
            }
            WriteSafety::Clear => {}
        }
    }
    let dev = tree
        .get(&name)
        .ok_or_else(|| RunError::Invalid(vec![format!("device {name} vanished")]))?;
    let facts = TargetFacts {
        size: dev.size_bytes,
        direct_align: dev.logical_block_size,
        is_block: true,
    };
    let plan = job.validate(&facts).map_err(invalid)?;
    let (watch, below_count) = watch_list(tree, &name);
    let path = dev.path.clone();
    let file = if writes {
        open_exclusive(&path, true, flags).map_err(|e| open_err(&path, e))?
    } else {
        OpenOptions::new()
            .read(true)
            .custom_flags(flags | libc::O_CLOEXEC)
            .open(&path)
            .map_err(|e| open_err(&path, e))?
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
        remove_on_drop: None,
    })
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

fn open_dir_file(
    root: &SysRoot,
    dir: &Path,
    job: &Job,
    writes: bool,
    flags: i32,
    safety: WriteSafety,
) -> Result<OpenTarget, RunError> {
    let size = job
        .size
        .map(|s| s.resolve(DEFAULT_FILE_SIZE))
        .unwrap_or(DEFAULT_FILE_SIZE)
        + job.offset;
    let n = FILE_COUNTER.fetch_add(1, Ordering::Relaxed);
    let path = scratch_path(dir, n);
    let created = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .custom_flags(libc::O_CLOEXEC)
        .open(&path)
        .map_err(|e| open_err(&path, e))?;
    // From here on the file is removed on every exit path.
    let mut guard = OpenTarget {
        file: created,
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
            test_file: Some(path.display().to_string()),
            write_safety: safety,
        },
        plan: Plan {
            region: 0,
            total: 0,
        },
        watch: Vec::new(),
        below_count: 0,
        remove_on_drop: Some(path.clone()),
    };
    let facts = TargetFacts {
        size,
        direct_align: file_direct_align(&path),
        is_block: false,
    };
    guard.plan = job.validate(&facts).map_err(invalid)?;
    sys::preallocate(&guard.file, size).map_err(|e| open_err(&path, e))?;
    if !writes {
        // A read test needs data that is really on disk: lay the file out (untimed), as fio
        // does, then drop it from the cache.
        lay_out(&guard.file, size, job.data).map_err(|e| open_err(&path, e))?;
        guard.file.sync_all().map_err(|e| open_err(&path, e))?;
        let _ = sys::drop_cache(&guard.file);
    }
    guard.file = OpenOptions::new()
        .read(true)
        .write(writes)
        .custom_flags(flags | libc::O_CLOEXEC)
        .open(&path)
        .map_err(|e| open_err(&path, e))?;
    let (watch, below, dev) = watch_for_file(root, &path);
    guard.watch = watch;
    guard.below_count = below;
    guard.info.device = dev;
    Ok(guard)
}

fn lay_out(f: &File, size: u64, data: Data) -> std::io::Result<()> {
    let chunk = 1 << 20;
    let mut buf = vec![0u8; chunk];
    let mut rng = fastrand::Rng::with_seed(0x5eed);
    let mut off = 0u64;
    while off < size {
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
    if writes && !spec.force {
        return Err(RunError::Invalid(vec![format!(
            "{} exists and a write test would overwrite it: add --force to allow that, or name a directory to test in",
            path.display()
        )]));
    }
    let len = std::fs::metadata(path)
        .map_err(|e| open_err(path, e))?
        .len();
    let facts = TargetFacts {
        size: len,
        direct_align: file_direct_align(path),
        is_block: false,
    };
    let plan = job.validate(&facts).map_err(invalid)?;
    let file = OpenOptions::new()
        .read(true)
        .write(writes)
        .custom_flags(flags | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| open_err(path, e))?;
    let (watch, below_count, dev) = watch_for_file(root, path);
    Ok(OpenTarget {
        file,
        info: TargetInfo {
            path: spec.path.clone(),
            kind: "file",
            device: dev,
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
        watch,
        below_count,
        remove_on_drop: None,
    })
}

/// Whether a mode reads through the page cache.
pub fn buffered(mode: Mode) -> bool {
    matches!(mode, Mode::Buffered | Mode::Fdatasync | Mode::Nocache)
}
