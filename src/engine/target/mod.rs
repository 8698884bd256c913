//! Opening a test's target. The safety check runs here, inside the library's open path, so no
//! caller can skip it: a write to a `blocked` device is refused, a `confirm` device needs its
//! name typed back, and the device stays open with O_EXCL for the whole run. A directory gets a
//! file of the test's own, removed when the [`OpenTarget`] is dropped.
//!
//! A file per kind of target ([`block`], [`scratch`], [`named`]), the devices watched during
//! the test ([`watch`]), and what a suite's tests would be refused for ([`precheck`]).

mod block;
mod named;
mod precheck;
mod scratch;
mod watch;
use block::*;
use named::*;
pub use precheck::*;
pub use scratch::*;
use watch::*;

use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::sync::atomic::AtomicBool;

use serde::Serialize;

use super::RunError;
use super::job::{Job, Mode, Plan};
use crate::device::safety::{self, WriteSafety};
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

/// Where a target's bytes lie on the disk the trace names, by offset
/// ([`crate::device::extents::sector_of`]).
pub type Sectors = std::sync::Arc<Vec<crate::device::extents::Extent>>;

/// A device's bytes, all from `start` (a partition's first sector on its disk) on.
pub fn from_sector(start: u64) -> Sectors {
    std::sync::Arc::new(vec![crate::device::extents::Extent {
        logical: 0,
        len: u64::MAX / 2,
        sector: start,
    }])
}

/// A file's bytes, where its file system places them on a disk.
pub fn of_file(root: &SysRoot, path: &Path) -> Option<Sectors> {
    crate::device::extents::on_disk(root, path).map(|o| std::sync::Arc::new(o.extents))
}

/// An open target. Dropping it closes the device (ending O_EXCL) or removes the test's file.
pub struct OpenTarget {
    pub file: File,
    pub info: TargetInfo,
    pub plan: Plan,
    /// Devices whose diskstats explain the test: the target's device (for a file, the device
    /// holding it), what it is built on, then what is built on it.
    pub watch: Vec<String>,
    /// How many of `watch` (from the start) are the device and what it is built on, but for
    /// the whole disk of a partition among them (which comes next: `watch_list`).
    pub below_count: usize,
    /// Where its blocks live, to tell how much of a read test's region was never written.
    pub store: crate::device::Store,
    /// Memory under the target that a test measures instead of a disk.
    pub cache_below: Option<CacheBelow>,
    /// For a file: the file system's block size.
    pub fs_block: Option<FsBlock>,
    /// The target's device, or for a file the device holding it, as the check before the run
    /// found it (a write test's with the signatures it read), so that a session need not
    /// discover the devices again for it.
    pub holding: Option<crate::device::Device>,
    /// Where the target's bytes lie on the device the block layer's trace names, in 512-byte
    /// sectors: from a partition's start on its disk, or a file's extents there; None where
    /// that cannot be told (a file on tmpfs or btrfs).
    pub sectors: Option<Sectors>,
    /// Whether the target is a device with poll queues (`queue/io_poll` 1 on its disk, which
    /// has a `device`: NVMe loaded with `poll_queues`; not a virtual device such as null_blk):
    /// there `auto` polls for completions (`engine::probe::settle`).
    pub polls: bool,
    remove_on_drop: Option<ScratchFile>,
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

fn open_err(path: &Path, e: std::io::Error) -> RunError {
    RunError::Open {
        path: path.to_path_buf(),
        source: e,
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
    let writes = job.op.writes();
    let (report, tree) = if writes {
        safety::check_tree(root, &spec.path)?
    } else {
        safety::check_tree_unread(root, &spec.path)?
    };
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

/// Opens the target with O_NOATIME, as fio and t/io_uring do, so that no read updates the
/// inode's access time (docs/architecture.md, "Smaller costs"). The kernel allows the flag only
/// to the file's owner or a holder of CAP_FOWNER: on EPERM the open is tried again without it.
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

fn invalid(errs: Vec<super::job::Invalid>) -> RunError {
    RunError::Invalid(errs.into_iter().map(|e| e.0).collect())
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
