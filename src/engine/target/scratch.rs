//! A directory as the target: a scratch file of the test's own, created (never over something
//! else), sized to fit the free space with room to spare, preallocated, laid out with data where
//! a read test needs it, and removed when the target is dropped (or at the next start, after a
//! crash).

use super::*;
use crate::device::safety::WriteSafety;
use crate::engine::RunError;
use crate::engine::job::{Data, Job, Plan, TargetFacts};
use crate::sys;
use crate::sysroot::SysRoot;
use std::fs::{File, OpenOptions};
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// The test's own file: removed on drop only if its path still names the inode blkscope
/// created (in a shared directory somebody may have put something else there meanwhile).
pub(super) struct ScratchFile {
    pub(super) path: PathBuf,
    pub(super) dev: u64,
    pub(super) ino: u64,
}

impl ScratchFile {
    pub(super) fn remove(&self) {
        use std::os::unix::fs::MetadataExt;
        if let Ok(m) = std::fs::symlink_metadata(&self.path)
            && m.dev() == self.dev
            && m.ino() == self.ino
        {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

pub(super) static FILE_COUNTER: AtomicU32 = AtomicU32::new(0);

/// Scratch files are named `.blkscope-PID-N.tmp`: the pid tells a later blkscope whether the
/// run that made one is still alive.
pub(super) const SCRATCH_PREFIX: &str = ".blkscope-";

pub(super) const SCRATCH_SUFFIX: &str = ".tmp";

/// The `n`th scratch file of this process in `dir`.
pub(super) fn scratch_path(dir: &Path, n: u32) -> PathBuf {
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

/// Opens a scratch file of the test's own in `dir`: created (never over something else),
/// preallocated, laid out with data where the test needs it on disk, and reopened with the
/// test's flags through its descriptor. It is removed when the target is dropped.
pub(super) fn open_dir_file(
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
    guard.sectors = of_file(root, &path);
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
pub(super) fn fits(dir: &Path, job: &Job, size: u64, free: u64) -> Result<(), RunError> {
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

/// How much of `free` bytes on a file system blkscope lets a scratch file or a lab take: all
/// but 10% of it, and at least 64M left, so that a typo cannot fill the file system under
/// somebody's database.
pub fn usable_space(free: u64) -> u64 {
    free.saturating_sub((free / 10).max(64 << 20))
}

/// Creates the next scratch file in `dir`. O_CREAT|O_EXCL (create_new) never follows a
/// symlink planted at the path.
pub(super) fn create_scratch(dir: &Path) -> Result<(File, ScratchFile), RunError> {
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
pub(super) fn scratch_target(
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
        sectors: None,
        polls: false,
        remove_on_drop: Some(scratch),
    }
}

/// Reopens the scratch file with the test's flags (O_DIRECT, O_DSYNC) through its descriptor,
/// never by path: between the create and now the path may have been swapped for a symlink to
/// a disk. The file reopened must be the one created (`created`: its device and inode).
pub(super) fn reopen_as_created(
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
pub(super) fn debug_pause_after_create(cancel: &AtomicBool) {
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

pub(super) fn lay_out(f: &File, size: u64, data: Data, cancel: &AtomicBool) -> std::io::Result<()> {
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
