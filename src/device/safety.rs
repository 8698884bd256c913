//! Whether a write test may run on a target, and why not.
//!
//! - `blocked`: the device or anything built on it or under it is mounted or active swap; it is
//!   held (dm, md, LVM, bcache); it is read-only; an `O_EXCL` open fails (EBUSY); or it cannot be
//!   opened at all.
//! - `confirm`: nothing uses it, but it carries partitions, a partition table or a signature:
//!   a write needs the device name typed back.
//! - `clear`: nothing on it, nothing using it.
//!
//! A directory or regular file is a file target and always `clear`. Reads are never blocked.
//! The engine opens devices through [`open_exclusive`] after [`check`] so no caller can skip it.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::deepen::{Depth, Outcome, deepen};
use super::{Device, DeviceTree, DiscoverOptions, Usage, discover};
use crate::Error;
use crate::sysroot::SysRoot;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WriteSafety {
    Clear,
    Confirm,
    Blocked,
}

impl WriteSafety {
    pub fn as_str(self) -> &'static str {
        match self {
            WriteSafety::Clear => "clear",
            WriteSafety::Confirm => "confirm",
            WriteSafety::Blocked => "blocked",
        }
    }

    /// The exit status of `blkscope check`: 0 clear, 3 confirm, 4 blocked.
    pub fn exit_code(self) -> i32 {
        match self {
            WriteSafety::Clear => 0,
            WriteSafety::Confirm => 3,
            WriteSafety::Blocked => 4,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReasonCode {
    // blocked
    Mounted,
    Swap,
    Held,
    ReadOnly,
    Busy,
    OpenFailed,
    Empty,
    // confirm
    Partitions,
    PartitionTable,
    Signature,
    /// Not blank, and no known format: somebody's data all the same.
    Data,
    /// Not read, so blkscope cannot tell whether it is blank.
    Unchecked,
    // notes (do not change the verdict)
    FileTarget,
    ExistingFile,
    ReadDisturbed,
    /// Blank where blkscope looked (says which byte).
    Blank,
}

impl ReasonCode {
    /// The verdict this reason forces, if any.
    pub fn severity(self) -> Option<WriteSafety> {
        use ReasonCode::*;
        match self {
            Mounted | Swap | Held | ReadOnly | Busy | OpenFailed | Empty => {
                Some(WriteSafety::Blocked)
            }
            Partitions | PartitionTable | Signature | Data | Unchecked => {
                Some(WriteSafety::Confirm)
            }
            FileTarget | ExistingFile | ReadDisturbed | Blank => None,
        }
    }

    /// A short badge for tables and the TUI.
    pub fn badge(self) -> &'static str {
        use ReasonCode::*;
        match self {
            Mounted => "MOUNTED",
            Swap => "SWAP",
            Held => "HELD",
            ReadOnly => "RO",
            Busy => "BUSY",
            OpenFailed => "NOOPEN",
            Empty => "EMPTY",
            Partitions | PartitionTable => "PARTS",
            Signature => "SIG",
            Data => "DATA",
            Unchecked => "UNREAD",
            Blank => "BLANK",
            FileTarget | ExistingFile => "FILE",
            ReadDisturbed => "INUSE",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reason {
    pub code: ReasonCode,
    pub detail: String,
}

impl Reason {
    fn new(code: ReasonCode, detail: impl Into<String>) -> Self {
        Self {
            code,
            detail: detail.into(),
        }
    }
}

/// The verdict on one target.
#[derive(Debug, Clone, Serialize)]
pub struct SafetyReport {
    /// The target as given.
    pub target: String,
    /// `block` or `file`.
    pub target_kind: &'static str,
    /// The kernel name of the block device, for block targets.
    pub device: Option<String>,
    pub write_safety: WriteSafety,
    /// Why, most severe first. Notes that do not change the verdict come last.
    pub reasons: Vec<Reason>,
    /// Reads are always allowed; these say what may disturb them.
    pub read_notes: Vec<Reason>,
    /// What the blank test read of a block device and found: `read` says how the places were
    /// chosen (`sampled`, `data_extents`, `whole`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blank: Option<super::signatures::Blank>,
    /// A whole read that was stopped or failed, and where: the verdict is the sampled one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub whole_read: Option<String>,
}

fn verdict(reasons: &[Reason]) -> WriteSafety {
    reasons
        .iter()
        .filter_map(|r| r.code.severity())
        .max()
        .unwrap_or(WriteSafety::Clear)
}

fn sort_reasons(reasons: &mut [Reason]) {
    reasons.sort_by_key(|r| std::cmp::Reverse(r.code.severity()));
}

/// Fills `write_safety` and `safety_reasons` of every device from what discovery saw (mounts,
/// swap, holders, read-only, partitions, signatures). Opening with O_EXCL is left to [`check`].
pub(crate) fn assess_tree(root: &SysRoot, tree: &mut DeviceTree) {
    let assessed: Vec<Vec<Reason>> = tree
        .devices
        .iter()
        .map(|d| assess_static(root, tree, &d.name))
        .collect();
    for (d, mut reasons) in tree.devices.iter_mut().zip(assessed) {
        sort_reasons(&mut reasons);
        d.write_safety = verdict(&reasons);
        d.safety_reasons = reasons;
    }
}

fn assess_static(root: &SysRoot, tree: &DeviceTree, name: &str) -> Vec<Reason> {
    let mut r = Vec::new();
    let Some(d) = tree.get(name) else { return r };
    in_use(tree, d, &mut r);
    state(root, d, &mut r);
    contents(d, &mut r);
    // The blank test speaks only where nothing else does: a device in use (blocked) or with a
    // signature or partitions holds data whatever the test says.
    let blocked = r
        .iter()
        .any(|x| x.code.severity() == Some(WriteSafety::Blocked));
    if !blocked && d.signatures.is_empty() && d.partitions.is_empty() && d.size_bytes > 0 {
        blank(d, &mut r);
    }
    r
}

/// Mounted, swap or held: the device, what is built on it, or what it is built on.
fn in_use(tree: &DeviceTree, d: &Device, r: &mut Vec<Reason>) {
    use ReasonCode::*;
    let above = tree.above(&d.name);
    let below = tree.below(&d.name);
    let family = std::iter::once(d)
        .map(|x| (x, "it"))
        .chain(above.iter().map(|x| (*x, "above")))
        .chain(below.iter().map(|x| (*x, "below")));
    for (x, rel) in family {
        let who = match rel {
            "it" => format!("{} is", x.path.display()),
            "above" => format!("{} (built on it) is", x.path.display()),
            _ => format!("{} (it is built on that) is", x.path.display()),
        };
        if !x.mountpoints.is_empty() {
            r.push(Reason::new(
                Mounted,
                format!(
                    "{who} mounted at {}; unmount it first",
                    x.mountpoints.join(", ")
                ),
            ));
        }
        if x.swap {
            r.push(Reason::new(
                Swap,
                format!("{who} active swap; run swapoff {} first", x.path.display()),
            ));
        }
    }
    if !d.holders.is_empty() {
        r.push(Reason::new(
            Held,
            format!(
                "held by {} (device-mapper, md or LVM); stop or remove that first",
                holder_names(tree, &d.holders)
            ),
        ));
    }
    for p in above
        .iter()
        .filter(|p| p.is_partition() && !p.holders.is_empty())
    {
        r.push(Reason::new(
            Held,
            format!(
                "its partition {} is held by {}",
                p.name,
                holder_names(tree, &p.holders)
            ),
        ));
    }
}

/// Its state: empty, read-only, or not readable for the signature probe.
fn state(root: &SysRoot, d: &Device, r: &mut Vec<Reason>) {
    use ReasonCode::*;
    if d.size_bytes == 0 {
        r.push(Reason::new(
            Empty,
            "its size is 0: nothing to test (an unattached loop device, an unconfigured zram, \
             or no medium)",
        ));
    }
    if d.read_only {
        r.push(Reason::new(
            ReadOnly,
            "the kernel has it read-only (ro=1); see blockdev --setrw",
        ));
    }
    if let Some(e) = &d.signature_error
        && root.is_live()
    {
        if is_root() {
            r.push(Reason::new(
                OpenFailed,
                format!("cannot read it to look for signatures ({e})"),
            ));
        } else {
            r.push(Reason::new(
                Unchecked,
                format!(
                    "not read ({e}): blkscope cannot tell whether it holds data; run it as root \
                     to look"
                ),
            ));
        }
    }
}

/// What it holds: partitions, and the signatures of what is on it.
fn contents(d: &Device, r: &mut Vec<Reason>) {
    use ReasonCode::*;
    if !d.partitions.is_empty() {
        r.push(Reason::new(
            Partitions,
            format!("has partitions: {}", d.partitions.join(", ")),
        ));
    }
    for s in &d.signatures {
        let (code, what) = match s.usage {
            Usage::PartitionTable => (PartitionTable, "partition table"),
            Usage::Filesystem => (Signature, "file system"),
            Usage::Swap => (Signature, "swap area"),
            Usage::Raid => (Signature, "RAID/LVM member"),
            Usage::Crypto => (Signature, "encrypted volume"),
        };
        // "swap area", not "swap swap area".
        let name = if what.starts_with(&*s.kind) {
            what.to_string()
        } else {
            format!("{} {what}", s.kind)
        };
        r.push(Reason::new(
            code,
            format!("{name} signature at offset {:#x}", s.offset),
        ));
    }
}

/// What the blank test saw, where nothing else says the device holds data.
fn blank(d: &Device, r: &mut Vec<Reason>) {
    use super::signatures::Blank as B;
    use ReasonCode::*;
    // A format behind a wiped table: whatever the sampled bytes were, it holds data.
    if let Some(h) = &d.hidden {
        r.push(Reason::new(Data, hidden_words(h)));
        return;
    }
    match &d.blank {
        B::Data { offset } => r.push(Reason::new(
            Data,
            format!("not blank: non-zero data at offset {offset:#x}; no known format"),
        )),
        B::Blank { .. } => r.push(Reason::new(Blank, blank_words(&d.blank))),
        B::Unknown { why } if d.signature_error.is_none() => r.push(Reason::new(
            Unchecked,
            format!("blank test not run: {why}; a write test needs --confirm"),
        )),
        B::Unknown { .. } => {}
    }
}

/// A place on a device in the unit it reads best in, as [`crate::units::fmt_size`] rounds it
/// but spelt out: `1 MiB`, `31.5 KiB`.
fn place(bytes: u64) -> String {
    let s = crate::units::fmt_size(bytes);
    match s.char_indices().last() {
        Some((i, u)) if u != 'B' => format!("{} {u}iB", &s[..i]),
        _ => s,
    }
}

/// What a blank test that found nothing but one byte read, and how it chose the places.
fn blank_words(b: &super::signatures::Blank) -> String {
    use super::signatures::{Blank as B, Coverage};
    let (B::Blank { byte, read, .. }, Some(judged)) = (b, b.judged()) else {
        return String::new();
    };
    let erase = if *byte == 0xff {
        " (a fresh flash erase)"
    } else {
        ""
    };
    match read {
        Coverage::Whole => format!("blank: {judged}: every byte is {byte:#04x}{erase}"),
        Coverage::DataExtents => format!(
            "blank: {judged}, with the samples: all {byte:#04x}{erase}{}",
            if *byte == 0 {
                "; the rest of the file is holes, which read as zeros"
            } else {
                ""
            }
        ),
        Coverage::Sampled => format!(
            "{judged}: all {byte:#04x}{erase} (the first 16 MiB every 512 KiB, the last MiB \
             and 64 places between); data between them is not seen (check --full reads every \
             byte)"
        ),
    }
}

/// What a format found behind a wiped table means, in one sentence.
fn hidden_words(h: &super::signatures::Hidden) -> String {
    use super::signatures::Usage as U;
    let at = place(h.start);
    let what = match h.usage {
        U::Filesystem => "file system",
        U::Swap => "swap area",
        U::Raid => "RAID/LVM member",
        U::Crypto => "encrypted volume",
        U::PartitionTable => "partition table",
    };
    match (h.found.as_str(), h.usage) {
        ("backup", U::PartitionTable) => format!(
            "a GPT backup header in the last sector (offset {}), and no partition table at the \
             start: the table was probably wiped; gdisk or testdisk can rebuild it from the \
             backup, and the partitions' data is likely intact",
            h.offset
        ),
        ("backup", _) => format!(
            "a {} of {} at offset {} (the {what} begins at {at}, offset {}), and \
             nothing at its start: its start was probably overwritten; the rest is likely \
             intact and recoverable ({})",
            super::signatures::copy_name(&h.kind),
            h.kind,
            h.offset,
            h.start,
            if h.recover.is_empty() {
                "testdisk"
            } else {
                &h.recover
            }
        ),
        _ => format!(
            "{} at {at} (offset {}), no partition table: a table was probably wiped; the {what} \
             is intact and recoverable (testdisk)",
            h.kind, h.start
        ),
    }
}

fn holder_names(tree: &DeviceTree, names: &[String]) -> String {
    names
        .iter()
        .map(|h| match tree.get(h).and_then(|d| d.dm_name.as_ref()) {
            Some(dm) => format!("{h} ({dm})"),
            None => h.clone(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// What a target path turned out to be.
enum Resolved {
    Directory(PathBuf),
    File(PathBuf),
    Block {
        path: PathBuf,
        maj_min: String,
    },
    /// In a fixture tree: a device by kernel name.
    Named(String),
}

/// A directory or file on devtmpfs, sysfs, procfs and the like is no place for a test: `run
/// /dev/$DISK` with DISK unset names /dev/, and a test there would write its file into the
/// device directory (RAM). One line that says what was probably meant.
fn not_on_a_kernel_fs(root: &SysRoot, target: &str, dir: bool) -> Result<(), Error> {
    let Some(fs) = super::mounts::fs_type_of(root, Path::new(target)) else {
        return Ok(());
    };
    let Some(what) = super::mounts::kernel_fs(&fs) else {
        return Ok(());
    };
    let real = std::fs::canonicalize(target).unwrap_or_else(|_| PathBuf::from(target));
    Err(Error::Usage(if fs == "devtmpfs" && dir {
        if real == Path::new("/dev") {
            format!(
                "{target} is the device directory: name a device in it (e.g. /dev/sdb); an empty variable?"
            )
        } else {
            format!(
                "{target} is a directory of device names ({fs}, in RAM), not a place for a \
                 test's file: name a device in it; an empty variable?"
            )
        }
    } else {
        let kind = if dir { "a directory" } else { "a file" };
        format!(
            "{target} is {kind} on {fs}, {what}, not a disk: name a block device (e.g. \
             /dev/sdb), or a directory on the disk to test"
        )
    }))
}

fn resolve(root: &SysRoot, target: &str) -> Result<Resolved, Error> {
    if target.trim().is_empty() {
        return Err(Error::Usage(
            "the target is empty: name a block device (e.g. /dev/sdb), a directory or a file"
                .into(),
        ));
    }
    let p = Path::new(target);
    if !root.is_live() {
        let name = target.strip_prefix("/dev/").unwrap_or(target);
        return Ok(Resolved::Named(name.to_string()));
    }
    let meta = match std::fs::metadata(p) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            // `blkscope check sda` means /dev/sda.
            let dev = Path::new("/dev").join(target);
            if !target.contains('/') && dev.exists() {
                return resolve(root, &dev.to_string_lossy());
            }
            return Err(Error::TargetNotFound { path: p.into() });
        }
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => {
            return Err(Error::PermissionDenied { path: p.into() });
        }
        Err(e) => return Err(Error::io(p, e)),
    };
    let ft = meta.file_type();
    if ft.is_dir() || ft.is_file() {
        not_on_a_kernel_fs(root, target, ft.is_dir())?;
    }
    if ft.is_dir() {
        Ok(Resolved::Directory(p.into()))
    } else if ft.is_file() {
        Ok(Resolved::File(p.into()))
    } else if ft.is_block_device() {
        let rdev = meta.rdev();
        let maj_min = format!("{}:{}", libc::major(rdev), libc::minor(rdev));
        Ok(Resolved::Block {
            path: p.into(),
            maj_min,
        })
    } else if ft.is_char_device() {
        Err(Error::NotABlockDevice {
            path: p.into(),
            what: "a character device",
        })
    } else {
        Err(Error::NotABlockDevice {
            path: p.into(),
            what: "neither a block device, a regular file nor a directory",
        })
    }
}

/// Whether `target` names something a test can run on at all (a block device, a directory or
/// a file, not on a kernel file system), without discovering devices or reading one: the check
/// a session makes before its first test says anything.
pub fn nameable(root: &SysRoot, target: &str) -> Result<(), Error> {
    resolve(root, target).map(|_| ())
}

/// Decides whether a write test may run on `target` (a block device path or name, a directory
/// or a regular file).
pub fn check(root: &SysRoot, target: &str) -> Result<SafetyReport, Error> {
    check_tree(root, target).map(|(report, _)| report)
}

/// [`check`], also handing back the device tree it discovered for a block target (with the
/// target's signatures only), so the caller need not discover again.
pub fn check_tree(
    root: &SysRoot,
    target: &str,
) -> Result<(SafetyReport, Option<DeviceTree>), Error> {
    let mut depth = Depth {
        full: false,
        progress: &mut |_, _| true,
    };
    check_deep(root, target, &mut depth)
}

/// [`check_tree`] without reading the device, for a test that only reads it: mounts, swap and
/// holders decide the verdict as before, but signatures are not read, so a blank device is not
/// seen to be blank (its verdict is `confirm`). Reads are allowed whatever it says, so the
/// probe's few hundred reads are not made where nothing hangs on them (docs/architecture.md,
/// "What a run costs besides its I/Os").
pub fn check_tree_unread(
    root: &SysRoot,
    target: &str,
) -> Result<(SafetyReport, Option<DeviceTree>), Error> {
    check_reading(root, target, None)
}

/// [`check_tree`], reading a device whose samples are blank as far as `depth` says.
pub fn check_deep(
    root: &SysRoot,
    target: &str,
    depth: &mut Depth,
) -> Result<(SafetyReport, Option<DeviceTree>), Error> {
    check_reading(root, target, Some(depth))
}

/// The check: with `depth`, the target's signatures read (and a blank-looking device read as
/// far as it says); without, no read of the device at all.
fn check_reading(
    root: &SysRoot,
    target: &str,
    depth: Option<&mut Depth>,
) -> Result<(SafetyReport, Option<DeviceTree>), Error> {
    use ReasonCode::*;
    let skip_signatures = depth.is_none();
    match resolve(root, target)? {
        Resolved::Directory(p) => {
            let reasons = vec![Reason::new(
                FileTarget,
                format!(
                    "a directory: a test creates its own file in {} and removes it afterwards",
                    p.display()
                ),
            )];
            Ok((file_report(target, reasons), None))
        }
        Resolved::File(p) => {
            let reasons = vec![Reason::new(
                ExistingFile,
                format!(
                    "an existing file: a write test overwrites {} only when it is named with --force",
                    p.display()
                ),
            )];
            Ok((file_report(target, reasons), None))
        }
        Resolved::Block { path, maj_min } => {
            // Test the open first: a user without permission gets one clear line.
            let excl = try_open_excl(&path);
            if let Err(e) = &excl
                && e.kind() == io::ErrorKind::PermissionDenied
                && !is_root()
            {
                return Err(Error::NeedRoot { path });
            }
            // Only the target's own signatures matter to its verdict: read no other disk.
            let opts = DiscoverOptions {
                probe_only: Some(maj_min.clone()),
                skip_signatures,
            };
            let mut tree = discover(root, &opts)?;
            let outcome = match depth {
                Some(depth) if excl.is_ok() => deepen(root, &mut tree, &maj_min, depth),
                _ => Outcome::NotRead,
            };
            let d = tree
                .by_maj_min(&maj_min)
                .ok_or_else(|| Error::UnknownDevice {
                    path: path.clone(),
                    detail: format!("no device {maj_min} in {}", root.sys("block").display()),
                })?;
            let mut report = block_report(target, d);
            report.whole_read = match outcome {
                Outcome::Stopped(at) => Some(format!(
                    "stopped after {} of {}: the verdict is the sampled one",
                    crate::units::fmt_size(at),
                    crate::units::fmt_size(d.size_bytes)
                )),
                Outcome::Failed(why) => Some(why),
                Outcome::NotRead | Outcome::Read => None,
            };
            if let Err(e) = excl {
                let reason = match e.raw_os_error() {
                    Some(libc::EBUSY) => Reason::new(
                        Busy,
                        "opening it with O_EXCL fails with EBUSY: something holds it (a mount, \
                         swap, dm/md/LVM, or another program with O_EXCL)",
                    ),
                    Some(code) => Reason::new(
                        OpenFailed,
                        format!(
                            "it cannot be opened: {} ({}){}",
                            e,
                            errno_name(code),
                            if is_root() {
                                "; even root can be refused, e.g. in a sandbox or by a security module"
                            } else {
                                ""
                            }
                        ),
                    ),
                    None => Reason::new(OpenFailed, format!("it cannot be opened: {e}")),
                };
                // Held by something: what the blank test saw no longer decides anything.
                report
                    .reasons
                    .retain(|r| !matches!(r.code, OpenFailed | Blank | Data | Unchecked));
                // Not even a read opens it: "reads are allowed" would promise what fails.
                if reason.code == OpenFailed {
                    report.read_notes.clear();
                }
                report.reasons.push(reason);
                sort_reasons(&mut report.reasons);
                report.write_safety = verdict(&report.reasons);
            }
            Ok((report, Some(tree)))
        }
        Resolved::Named(name) => {
            let opts = DiscoverOptions {
                probe_only: Some(name.clone()),
                skip_signatures,
            };
            let tree = discover(root, &opts)?;
            let d = tree.get(&name).ok_or_else(|| Error::UnknownDevice {
                path: PathBuf::from("/dev").join(&name),
                detail: format!("no device {name} in {}", root.sys("block").display()),
            })?;
            let report = block_report(target, d);
            Ok((report, Some(tree)))
        }
    }
}

fn file_report(target: &str, reasons: Vec<Reason>) -> SafetyReport {
    SafetyReport {
        target: target.to_string(),
        target_kind: "file",
        device: None,
        write_safety: WriteSafety::Clear,
        reasons,
        read_notes: Vec::new(),
        blank: None,
        whole_read: None,
    }
}

fn block_report(target: &str, d: &super::Device) -> SafetyReport {
    let mut read_notes = Vec::new();
    if d.safety_reasons.iter().any(|r| {
        matches!(
            r.code,
            ReasonCode::Mounted | ReasonCode::Swap | ReasonCode::Held
        )
    }) {
        read_notes.push(Reason::new(
            ReasonCode::ReadDisturbed,
            "reads are allowed, but the device is in use: other I/O to it disturbs the results",
        ));
    }
    SafetyReport {
        target: target.to_string(),
        target_kind: "block",
        device: Some(d.name.clone()),
        write_safety: d.write_safety,
        reasons: d.safety_reasons.clone(),
        read_notes,
        blank: Some(d.blank.clone()),
        whole_read: None,
    }
}

fn try_open_excl(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_EXCL | libc::O_CLOEXEC)
        .open(path)
}

/// Opens a block device for a test and keeps it exclusive (`O_EXCL`) for as long as the `File`
/// lives: the kernel then refuses mounts, swapon, dm/md and other O_EXCL openers.
pub fn open_exclusive(path: &Path, write: bool, extra_flags: i32) -> io::Result<File> {
    OpenOptions::new()
        .read(true)
        .write(write)
        .custom_flags(libc::O_EXCL | libc::O_CLOEXEC | extra_flags)
        .open(path)
}

pub fn is_root() -> bool {
    crate::sys::geteuid() == 0
}

/// The symbolic name of an errno value (`EBUSY`), for messages.
pub fn errno_name(code: i32) -> &'static str {
    match code {
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::EIO => "EIO",
        libc::ENXIO => "ENXIO",
        libc::EACCES => "EACCES",
        libc::EBUSY => "EBUSY",
        libc::ENODEV => "ENODEV",
        libc::EINVAL => "EINVAL",
        libc::EROFS => "EROFS",
        libc::ENOMEDIUM => "ENOMEDIUM",
        libc::ETXTBSY => "ETXTBSY",
        libc::ENOSPC => "ENOSPC",
        libc::ENOSYS => "ENOSYS",
        libc::ENODATA => "ENODATA",
        libc::ETIMEDOUT => "ETIMEDOUT",
        libc::ENOLINK => "ENOLINK",
        libc::EILSEQ => "EILSEQ",
        _ => "errno",
    }
}

#[cfg(test)]
mod tests {
    /// Where partitions begin, as a wiped table's reason names them.
    #[test]
    fn places_read_as_units() {
        let spelt: Vec<String> = crate::device::signatures::PARTITION_STARTS
            .iter()
            .map(|&b| super::place(b))
            .collect();
        println!("{spelt:?}");
        assert_eq!(
            spelt,
            [
                "31.5 KiB", "252 KiB", "1 MiB", "2 MiB", "3 MiB", "4 MiB", "8 MiB", "16 MiB"
            ]
        );
    }
}
