//! The suites that change a device setting and put it back: the same short tests under every
//! scheduler the device offers, and O_DSYNC latency with the write cache on and off. The
//! setting is restored whatever happens (`crate::tuning`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use super::{Observer, Outcome, Runner, TestOutcome, run_repeated};
use crate::engine::{Job, RunError, TargetSpec};
use crate::sysroot::SysRoot;

/// The suites that change a device setting and put it back (they are code, not TOML).
pub const SETTING_SUITES: [(&str, &str); 2] = [
    (
        "scheduler",
        "4K random read QD1 and QD32 and 1M sequential write under every I/O scheduler the \
         device offers, side by side; the original scheduler is put back",
    ),
    (
        "write-cache",
        "4K O_DSYNC latency with the volatile write cache on, then off, then the original back \
         (needs --allow-cache-toggle: turning it off can slow a disk 30x)",
    ),
];

/// How long each test of the setting suites runs.
pub const SETTING_TEST_RUNTIME: std::time::Duration = std::time::Duration::from_secs(2);

fn setting_job(op: crate::engine::Op, bs: u64, iodepth: u32, mode: crate::engine::Mode) -> Job {
    Job {
        op,
        bs,
        iodepth,
        mode,
        runtime: Some(SETTING_TEST_RUNTIME),
        ..Job::default()
    }
}

/// The block device a setting suite works on, or why not.
fn setting_device(
    root: &SysRoot,
    spec: &TargetSpec,
    suite: &str,
) -> Result<crate::device::Device, RunError> {
    let (report, tree) = crate::device::safety::check_tree(root, &spec.path)?;
    match (report.target_kind, report.device) {
        ("block", Some(d)) => tree
            .and_then(|t| t.get(&d).cloned())
            .ok_or_else(|| RunError::Invalid(vec![format!("device {d} vanished")])),
        _ => Err(RunError::Invalid(vec![format!(
            "suite {suite} changes a device's setting: name a block device, not {}",
            spec.path
        )])),
    }
}

/// `suite scheduler`: the same short tests under every scheduler the device offers. The
/// original scheduler is put back whatever happens (see [`crate::tuning`]).
pub fn run_scheduler_suite(
    root: &SysRoot,
    spec: &TargetSpec,
    repeat: u32,
    cancel: Arc<AtomicBool>,
    obs: &mut dyn Observer,
) -> Result<Outcome, RunError> {
    use crate::engine::{Mode, Op};
    let d = setting_device(root, spec, "scheduler")?;
    if d.schedulers_available.len() < 2 {
        return Err(RunError::Invalid(vec![format!(
            "{} offers one scheduler only ({}): nothing to compare",
            d.name,
            d.schedulers_available.join(", ")
        )]));
    }
    let tweak = crate::tuning::Tweak::begin(root, &d.name, crate::tuning::Knob::Scheduler)
        .map_err(|e| RunError::Invalid(vec![e]))?;
    let tests = [
        (
            "rand-read 4K QD1",
            setting_job(Op::Randread, 4096, 1, Mode::Direct),
        ),
        (
            "rand-read 4K QD32",
            setting_job(Op::Randread, 4096, 32, Mode::Direct),
        ),
        (
            "seq-write 1M",
            setting_job(Op::Write, 1 << 20, 1, Mode::Direct),
        ),
    ];
    let mut out = Outcome::default();
    let mut runner = Runner::new(root, spec, None, &cancel, obs);
    'all: for sched in &d.schedulers_available {
        tweak.set(sched).map_err(|e| RunError::Invalid(vec![e]))?;
        for (name, job) in &tests {
            let label = format!("{name} [{sched}]");
            let Some(result) = run_repeated(&mut runner, &label, job, repeat, &mut out.target)?
            else {
                break 'all;
            };
            let stop = result.error.is_some() || result.cancelled;
            out.tests.push(TestOutcome {
                name: name.to_string(),
                about: None,
                job: job.clone(),
                result,
                setting: Some(("scheduler", sched.clone())),
            });
            if stop {
                break 'all;
            }
        }
    }
    drop(tweak);
    out.cancelled = cancel.load(Ordering::Relaxed);
    Ok(out)
}

/// `suite write-cache`: 4K O_DSYNC latency with the write cache on, off, and as it was. Refused
/// without `allow_toggle`: turning the cache off can slow a production disk 30x.
pub fn run_write_cache_suite(
    root: &SysRoot,
    spec: &TargetSpec,
    repeat: u32,
    allow_toggle: bool,
    cancel: Arc<AtomicBool>,
    obs: &mut dyn Observer,
) -> Result<Outcome, RunError> {
    use crate::engine::{Mode, Op};
    let d = setting_device(root, spec, "write-cache")?;
    let knob = crate::tuning::cache_knob(&d);
    let how = match knob {
        crate::tuning::Knob::Hdparm => "hdparm -W (ATA)",
        crate::tuning::Knob::Nvme => "nvme set-feature -f 6 (NVMe)",
        crate::tuning::Knob::Sdparm => "sdparm --set/--clear WCE (SCSI)",
        _ => "the kernel's queue/write_cache (a virtual device: whether flushes are sent)",
    };
    if !allow_toggle {
        return Err(RunError::Invalid(vec![format!(
            "suite write-cache turns {}'s write cache off and on again (through {how}); with it \
             off a disk can be 30x slower, which hurts a production disk: add \
             --allow-cache-toggle to go on",
            d.name
        )]));
    }
    let tweak = crate::tuning::Tweak::begin(root, &d.name, knob).map_err(|e| {
        RunError::Invalid(vec![format!(
            "cannot read {}'s write cache through {how}: {e}; install the tool (hdparm, \
             nvme-cli or sdparm) or run as root",
            d.name
        )])
    })?;
    let job = setting_job(Op::Write, 4096, 1, Mode::Dsync);
    let original = tweak.original().to_string();
    let mut out = Outcome::default();
    let mut runner = Runner::new(root, spec, None, &cancel, obs);
    for (label, value) in [
        ("cache on", "on"),
        ("cache off", "off"),
        ("as it was", original.as_str()),
    ] {
        tweak.set(value).map_err(|e| RunError::Invalid(vec![e]))?;
        let name = format!("sync-latency 4K [{label}]");
        let Some(mut result) = run_repeated(&mut runner, &name, &job, repeat, &mut out.target)?
        else {
            break;
        };
        if knob == crate::tuning::Knob::KernelWriteCache && value == "off" {
            result.warnings.push(crate::analysis::Warning::new(
                crate::analysis::findings::Kind::WriteCacheToggle,
                "the kernel was told the cache is write through, so it sent no flushes: faster, \
                 and unsafe if the device does keep a volatile cache. A drive's own cache turned \
                 off (hdparm -W0) is slower instead: every write waits for the media",
            ));
        }
        let stop = result.error.is_some() || result.cancelled;
        out.tests.push(TestOutcome {
            name: format!("sync-latency 4K ({label})"),
            about: None,
            job: job.clone(),
            result,
            setting: Some(("write_cache", value.to_string())),
        });
        if stop {
            break;
        }
    }
    drop(tweak);
    out.cancelled = cancel.load(Ordering::Relaxed);
    Ok(out)
}
