//! A block device as the target: its safety verdict enforced (blocked refused, confirm needs the
//! name typed back), opened with O_EXCL for a write and held for the whole run.

use super::*;
use crate::device::safety::{SafetyReport, WriteSafety, open_exclusive};
use crate::engine::RunError;
use crate::engine::job::{Job, TargetFacts};
use crate::sysroot::SysRoot;

/// What validation needs to know of a block device: its size and its logical block size.
pub(super) fn block_facts(d: &crate::device::Device) -> TargetFacts {
    TargetFacts {
        size: d.size_bytes,
        direct_align: d.logical_block_size,
        is_block: true,
    }
}

pub(super) fn open_block(
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
        let refused = crate::engine::zoned::refusals(job, zone, dev.scheduler.as_deref());
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
    // IOPOLL needs the device's polled queues: without them the kernel refuses (EOPNOTSUPP)
    // or, worse, spins. Said before anything runs where --hipri asks for it.
    let disk = dev.parent.as_deref().unwrap_or(&name);
    let has_poll_queues = std::fs::read_to_string(root.sys(format!("block/{disk}/queue/io_poll")))
        .map(|s| s.trim() == "1")
        .unwrap_or(false);
    if job.hipri && !has_poll_queues {
        return Err(RunError::Invalid(vec![format!(
            "--hipri polls {disk}'s queue for completions, but it has no poll queues \
             (queue/io_poll is not 1); for NVMe, load the driver with nvme.poll_queues=N, \
             or leave --hipri out"
        )]));
    }
    // `auto` polls a device's poll queues, not a virtual one's (no `device` under it): null_blk
    // has one by default and completes a polled request when it is polled, not after its
    // completion time (docs/architecture.md, "Where the device has poll queues").
    let polls = has_poll_queues && root.sys(format!("block/{disk}/device")).exists();
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
        holding: Some(dev.clone()),
        sectors: Some(from_sector(dev.start_sector.unwrap_or(0))),
        polls,
        remove_on_drop: None,
    })
}
