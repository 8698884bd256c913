//! A closer look at a device whose samples are blank, before it is called `clear`: every byte
//! read, by default where the blank test's own rate says that takes under
//! [`WHOLE_BY_DEFAULT`] seconds, and always when asked (`check --full`), with progress and a
//! way to stop.

use std::fs::File;

use super::signatures::{self, Blank, Coverage, WHOLE_BY_DEFAULT};
use super::{Device, DeviceTree, WriteSafety};
use crate::sysroot::SysRoot;

/// How far a check reads a device its samples call blank.
pub struct Depth<'a> {
    /// Read it whole however long that takes (`check --full`).
    pub full: bool,
    /// Called with (bytes read, bytes in all) after each MiB of a whole read; false stops it.
    pub progress: &'a mut dyn FnMut(u64, u64) -> bool,
}

/// What a whole read did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Not needed (the verdict does not hang on it) or not quick enough to do unasked.
    NotRead,
    /// Read; the device's blank test now says what every byte holds.
    Read,
    /// Stopped by the caller after this many bytes: the sampled verdict stands.
    Stopped(u64),
    /// It could not be read whole (why), and the sampled verdict stands.
    Failed(String),
}

/// Reads the device `maj_min` of `tree` whole when `depth` says so and its verdict hangs on
/// it (clear, on samples alone), then assesses the tree again.
pub fn deepen(root: &SysRoot, tree: &mut DeviceTree, maj_min: &str, depth: &mut Depth) -> Outcome {
    let Some(d) = tree.devices.iter_mut().find(|d| d.maj_min == maj_min) else {
        return Outcome::NotRead;
    };
    if !wants_whole(d, depth.full) {
        return Outcome::NotRead;
    }
    let Some(f) = open(root, d) else {
        return Outcome::Failed("it cannot be opened to read it whole".into());
    };
    let size = d.size_bytes;
    let mut done = 0;
    let read = signatures::read_whole(&f, size, &mut |n| {
        done = n;
        (depth.progress)(n, size)
    });
    let outcome = match read {
        Ok(Some(b)) => {
            d.blank = b;
            Outcome::Read
        }
        Ok(None) => Outcome::Stopped(done),
        Err(e) => Outcome::Failed(format!("reading it whole failed at offset {done:#x}: {e}")),
    };
    super::safety::assess_tree(root, tree);
    outcome
}

/// Whether `d`'s verdict hangs on a whole read: clear, with nothing but sampled zeros to go
/// on, and (unless asked) quick to read.
fn wants_whole(d: &Device, full: bool) -> bool {
    let Blank::Blank { read, .. } = &d.blank else {
        return false;
    };
    if d.write_safety != WriteSafety::Clear || *read == Coverage::Whole {
        return false;
    }
    full || (*read == Coverage::Sampled
        && signatures::whole_read_estimate(&d.blank, d.size_bytes)
            .is_some_and(|s| s <= WHOLE_BY_DEFAULT))
}

/// `d`'s node, with O_DIRECT where it allows (a block device), buffered otherwise (a fixture's
/// image).
fn open(root: &SysRoot, d: &Device) -> Option<File> {
    let node = super::discover::node_of(root, d);
    super::discover::open_direct(&node).or_else(|| File::open(&node).ok())
}
