//! An existing file named as the target: read as it is, written only when told (--force).

use super::*;
use crate::device::safety::WriteSafety;
use crate::engine::RunError;
use crate::engine::job::{Job, TargetFacts};
use crate::sys;
use crate::sysroot::SysRoot;
use std::path::Path;

pub(super) fn open_named_file(
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
        sectors: of_file(root, path),
        polls: false,
        remove_on_drop: None,
    })
}

/// The O_DIRECT alignment for a file: what statx says, else 4096 (safe on every file system).
pub(super) fn file_direct_align(path: &Path) -> u64 {
    sys::dio_alignment(path)
        .map(|(_, off)| off as u64)
        .unwrap_or(4096)
}
