//! Reading back later: what a saved run wrote (after a reboot or a power cut), and a capacity
//! check (stamped blocks over the whole device, read back). The read-back itself is
//! `crate::verify`'s; this is the session's part: finding the run, checking the target, holding it.

use std::sync::atomic::AtomicBool;

use crate::engine::{Job, RunError, TargetInfo, TargetSpec};
use crate::sysroot::SysRoot;

/// Reads back, on `target`, what the saved run `run` wrote there (after a reboot or a power
/// cut). The target must be the run's own: the same device (or file) and size.
pub fn verify_saved(
    root: &SysRoot,
    target: &str,
    run: &crate::runs::SavedRun,
    max_errors: u64,
    cancel: &AtomicBool,
) -> Result<crate::verify::VerifyReport, crate::Error> {
    use crate::verify;
    let usage = |m: String| crate::Error::Usage(m);
    let (saved_target, stamp) = match (
        &run.target,
        run.tests.iter().find_map(|t| t.result.stamp.clone()),
    ) {
        (Some(t), Some(s)) => (t, s),
        _ => {
            return Err(usage(format!(
                "run {} recorded no writes to check: verify needs a write run with random data",
                run.id
            )));
        }
    };
    if saved_target.test_file.is_some() {
        return Err(usage(format!(
            "run {} wrote a scratch file that was removed afterwards: nothing to read back; \
             verify later needs a run on a device or a named file",
            run.id
        )));
    }
    let (report, tree) = crate::device::safety::check_tree(root, target)?;
    let same = match (&saved_target.device, &report.device, report.target_kind) {
        (Some(a), Some(b), "block") => a == b,
        (_, _, "file") => {
            std::fs::canonicalize(target).ok() == std::fs::canonicalize(&saved_target.path).ok()
        }
        _ => false,
    };
    if !same {
        return Err(usage(format!(
            "{target} is not the target of run {} ({}): name that one",
            run.id, saved_target.path
        )));
    }
    let path = match &report.device {
        Some(d) if report.target_kind == "block" => format!("/dev/{d}"),
        _ => target.to_string(),
    };
    let size = match tree
        .zip(report.device.as_deref())
        .and_then(|(t, d)| t.get(d).cloned())
    {
        Some(d) if report.target_kind == "block" => d.size_bytes,
        _ => std::fs::metadata(&path)
            .map(|m| m.len())
            .map_err(|e| crate::Error::io(std::path::Path::new(&path), e))?,
    };
    if size != saved_target.size_bytes {
        return Err(usage(format!(
            "{path} has {size} bytes, but run {} wrote to a target of {}: not the same device",
            run.id, saved_target.size_bytes
        )));
    }
    use std::os::unix::fs::OpenOptionsExt;
    let open = |flags: i32| {
        std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(flags | libc::O_CLOEXEC)
            .open(&path)
    };
    let f = match open(libc::O_DIRECT) {
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => open(0),
        r => r,
    }
    .map_err(|e| crate::Error::io(std::path::Path::new(&path), e))?;
    Ok(verify::verify(
        &f,
        &stamp,
        &verify::ReadBack {
            granularity: saved_target.logical_block_size.unwrap_or(512),
            max_errors,
            cancel,
        },
    ))
}

/// A capacity check of a device (destructive: the usual safety check and confirmation apply,
/// and it is held with O_EXCL): stamped blocks written over it, all of it or spread samples,
/// then read back.
pub fn capacity(
    root: &SysRoot,
    spec: &TargetSpec,
    mode: crate::verify::CapacityMode,
    max_errors: u64,
    cancel: &AtomicBool,
) -> Result<
    (
        TargetInfo,
        crate::verify::Capacity,
        crate::verify::VerifyReport,
    ),
    RunError,
> {
    let report = crate::device::safety::check(root, &spec.path)?;
    if report.target_kind != "block" {
        return Err(RunError::Invalid(vec![format!(
            "{} is not a block device: a capacity check tests a device (a USB stick, an SD \
             card), not a file",
            spec.path
        )]));
    }
    let job = Job {
        op: crate::engine::Op::Write,
        bs: 4096,
        ..Job::default()
    };
    let target = crate::engine::target::open(root, spec, &job, cancel)?;
    let size = target.info.size_bytes;
    let (cap, rep) = crate::verify::capacity(
        &target.file,
        size,
        mode,
        &crate::verify::ReadBack {
            granularity: target.info.logical_block_size.unwrap_or(512),
            max_errors,
            cancel,
        },
    );
    Ok((target.info.clone(), cap, rep))
}
