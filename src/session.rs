//! One path to run a test: a job repeated under one set of rules, or a suite of such tests, and
//! the outcome saved. The command line and the TUI (and later remote hosts) call this; none of
//! them has a repeat loop or a save of its own.
//!
//! The repeat rules: each test runs `repeat` times; before every repeat after the first of a
//! test that reads, the target's cached pages are dropped (so repeat 2 does not read what repeat
//! 1 left in memory); a run that failed or was cancelled ends the test, and a failed test ends a
//! suite. Repeats are folded into one result with its spread (`engine::result::with_repeats`).
//!
//! A device that was blank when the session began holds the session's own data after its first
//! write: later runs of the same session do not ask for a confirmation again.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::engine::{self, Job, RunError, RunResult, Sample, TargetInfo, TargetSpec};
use crate::suite::Suite;
use crate::sysroot::SysRoot;

/// What a caller hears while tests run. Every method has a default that does nothing.
pub trait Observer {
    /// Run `run` of `of` of the test `test` is about to start.
    fn run_starting(&mut self, _test: &str, _run: u32, _of: u32) {}
    /// A live sample of the run under way.
    fn sample(&mut self, _s: &Sample) {}
    /// Run `run` of `of` finished (with or without an error).
    fn run_finished(&mut self, _info: &TargetInfo, _r: &RunResult, _run: u32, _of: u32) {}
}

/// An observer that hears nothing.
pub struct Quiet;
impl Observer for Quiet {}

/// One test that ran: its name, the job and the result (repeats folded in).
#[derive(Debug, Clone)]
pub struct TestOutcome {
    pub name: String,
    pub about: Option<String>,
    pub job: Job,
    pub result: RunResult,
    /// The setting it ran under, in the scheduler and write-cache suites: ("scheduler",
    /// "mq-deadline") or ("write_cache", "off").
    pub setting: Option<(&'static str, String)>,
}

/// What a test or a suite produced.
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// The target as the first run opened it (None when nothing ran).
    pub target: Option<TargetInfo>,
    pub tests: Vec<TestOutcome>,
    /// Stopped early by the cancel flag.
    pub cancelled: bool,
}

impl Outcome {
    /// Whether anything failed or was cut short.
    pub fn failed(&self) -> bool {
        self.cancelled
            || self
                .tests
                .iter()
                .any(|t| t.result.error.is_some() || t.result.cancelled)
    }
}

/// Where and how tests run: the target, the cancel flag and who hears about it.
struct Runner<'a> {
    root: &'a SysRoot,
    /// The target; once a write has run on a device that was blank at the start, its name
    /// counts as confirmed for the rest of the session (the data on it is the session's own).
    spec: TargetSpec,
    cancel: Arc<AtomicBool>,
    obs: &'a mut dyn Observer,
}

impl<'a> Runner<'a> {
    fn new(
        root: &'a SysRoot,
        spec: &TargetSpec,
        cancel: &Arc<AtomicBool>,
        obs: &'a mut dyn Observer,
    ) -> Self {
        Runner {
            root,
            spec: spec.clone(),
            cancel: cancel.clone(),
            obs,
        }
    }
}

/// Runs `job` `repeat` times under the repeat rules; None when no run started (cancelled
/// before the first). The first run's target goes into `target`.
fn run_repeated(
    r: &mut Runner,
    name: &str,
    job: &Job,
    repeat: u32,
    target: &mut Option<TargetInfo>,
) -> Result<Option<RunResult>, RunError> {
    let Runner {
        root,
        spec,
        cancel,
        obs,
    } = r;
    let repeat = repeat.max(1);
    let mut runs = Vec::new();
    for i in 0..repeat {
        if cancel.load(Ordering::Relaxed) {
            break;
        }
        obs.run_starting(name, i + 1, repeat);
        let mut j = job.clone();
        if i > 0 && j.op.reads() {
            j.drop_cache_first = true;
        }
        let (info, res) = engine::run(root, spec, &j, cancel.clone(), |s| obs.sample(s))?;
        obs.run_finished(&info, &res, i + 1, repeat);
        if j.op.writes()
            && info.kind == "block"
            && info.write_safety == crate::device::WriteSafety::Clear
            && spec.confirm.is_none()
        {
            spec.confirm = info.device.clone();
        }
        target.get_or_insert(info);
        let stop = res.cancelled || res.error.is_some();
        runs.push(res);
        if stop {
            break;
        }
    }
    Ok(match runs.len() {
        0 => None,
        1 => runs.pop(),
        _ => Some(engine::result::with_repeats(runs)),
    })
}

/// Runs one test, `repeat` times.
pub fn run_test(
    root: &SysRoot,
    spec: &TargetSpec,
    name: &str,
    job: &Job,
    repeat: u32,
    cancel: Arc<AtomicBool>,
    obs: &mut dyn Observer,
) -> Result<Outcome, RunError> {
    let test = (name.to_string(), None, job.clone());
    run_tests(
        root,
        spec,
        None,
        vec![test],
        repeat,
        Origin::Run,
        cancel,
        obs,
    )
}

/// Runs every test of `suite` on the target, `repeat` times each; with `verify`, every test that
/// writes random data sequentially or at random reads back what it wrote.
pub fn run_suite(
    root: &SysRoot,
    suite: &Suite,
    spec: &TargetSpec,
    repeat: u32,
    verify: bool,
    cancel: Arc<AtomicBool>,
    obs: &mut dyn Observer,
) -> Result<Outcome, RunError> {
    let lbs = crate::suite::target_lbs(root, &spec.path);
    let tests = suite
        .tests
        .iter()
        .map(|t| {
            let mut j = t.job(lbs);
            j.verify = verify
                && j.op.writes()
                && j.op != crate::engine::Op::Randrw
                && j.data == crate::engine::Data::Random;
            (t.name.clone(), t.about.clone(), j)
        })
        .collect();
    let origin = if suite.sweep.is_some() {
        Origin::Sweep
    } else {
        Origin::Suite
    };
    // Not in a directory: each test there lays out a scratch file of its own (with data
    // before a read), and a fill would only write a file of its own and remove it.
    let prepare = suite
        .fill_job(lbs)
        .filter(|_| !std::path::Path::new(&spec.path).is_dir());
    run_tests(root, spec, prepare, tests, repeat, origin, cancel, obs)
}

/// Where a list of tests comes from, for the check before the first one runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Origin {
    /// `run`: one test. Opening its target checks it before anything is done, so it has no
    /// check of its own.
    Run,
    /// A sweep: the points' sizes are the user's (--size).
    Sweep,
    /// A suite file: its sizes are the suite's own (see `target::precheck`).
    Suite,
}

/// Runs (name, about, job) tests in order, `repeat` times each; a failed test ends the list.
/// `prepare` (a suite's fill) runs once first, under [`crate::suite::FILL_NAME`], and is kept
/// as a test only when it failed (the reason the suite stopped). The tests of a suite or sweep
/// are all checked, the fill with them, before the first runs.
#[allow(clippy::too_many_arguments)]
fn run_tests(
    root: &SysRoot,
    spec: &TargetSpec,
    prepare: Option<Job>,
    tests: Vec<(String, Option<String>, Job)>,
    repeat: u32,
    origin: Origin,
    cancel: Arc<AtomicBool>,
    obs: &mut dyn Observer,
) -> Result<Outcome, RunError> {
    let fill = crate::suite::FILL_NAME;
    if origin != Origin::Run {
        let named: Vec<(&str, &Job)> = prepare
            .iter()
            .map(|j| (fill, j))
            .chain(tests.iter().map(|(n, _, j)| (n.as_str(), j)))
            .collect();
        engine::target::precheck(root, spec, &named, origin == Origin::Suite)?;
    }
    let mut out = Outcome::default();
    let mut runner = Runner::new(root, spec, &cancel, obs);
    if let Some(job) = prepare {
        let Some(result) = run_repeated(&mut runner, fill, &job, 1, &mut out.target)? else {
            out.cancelled = true;
            return Ok(out);
        };
        if result.error.is_some() || result.cancelled {
            out.tests.push(TestOutcome {
                name: fill.to_string(),
                about: Some("random data over what the read tests read, before them".into()),
                job,
                result,
                setting: None,
            });
            out.cancelled = cancel.load(Ordering::Relaxed);
            return Ok(out);
        }
    }
    for (name, about, job) in tests {
        let Some(result) = run_repeated(&mut runner, &name, &job, repeat, &mut out.target)? else {
            break;
        };
        let failed = result.error.is_some() || result.cancelled;
        out.tests.push(TestOutcome {
            name,
            about,
            job,
            result,
            setting: None,
        });
        if failed {
            break;
        }
    }
    out.cancelled = cancel.load(Ordering::Relaxed);
    Ok(out)
}

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
    let mut runner = Runner::new(root, spec, &cancel, obs);
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
    let mut runner = Runner::new(root, spec, &cancel, obs);
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
            result.warnings.push(crate::engine::Warning::new(
                "write_cache_toggle",
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

/// Saves an outcome as a run of `kind` (`run` or `suite`) named `name`, with the properties of
/// the device it ran on (read without touching the device, so the save puts no reads into its
/// diskstats). Returns the saved file.
pub fn save(
    root: &SysRoot,
    kind: &str,
    name: &str,
    outcome: &Outcome,
) -> Result<PathBuf, std::io::Error> {
    let device = outcome
        .target
        .as_ref()
        .and_then(|t| t.device.as_deref())
        .and_then(|n| crate::device::properties(root, n));
    let tests: Vec<crate::runs::SavedTest> = outcome
        .tests
        .iter()
        .map(|t| crate::runs::SavedTest {
            name: match &t.setting {
                Some((_, v)) => format!("{} [{v}]", t.name),
                None => t.name.clone(),
            },
            job: t.job.clone(),
            result: t.result.clone(),
        })
        .collect();
    crate::runs::save(kind, name, outcome.target.as_ref(), device.as_ref(), &tests)
}

/// Reads back, on `target`, what the saved run `run` wrote there (after a reboot or a power
/// cut). The target must be the run's own: the same device (or file) and size.
pub fn verify_saved(
    root: &SysRoot,
    target: &str,
    run: &crate::runs::SavedRun,
    max_errors: u64,
    cancel: &AtomicBool,
) -> Result<crate::engine::verify::VerifyReport, crate::Error> {
    use crate::engine::verify;
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
    mode: crate::engine::verify::CapacityMode,
    max_errors: u64,
    cancel: &AtomicBool,
) -> Result<
    (
        TargetInfo,
        crate::engine::verify::Capacity,
        crate::engine::verify::VerifyReport,
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
    let (cap, rep) = crate::engine::verify::capacity(
        &target.file,
        size,
        mode,
        &crate::engine::verify::ReadBack {
            granularity: target.info.logical_block_size.unwrap_or(512),
            max_errors,
            cancel,
        },
    );
    Ok((target.info.clone(), cap, rep))
}

/// A cancel flag raised by Ctrl-C, SIGTERM and SIGHUP; a second one of them exits at once
/// (status 130).
pub fn cancel_on_signals() -> Arc<AtomicBool> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let cancel = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM, SIGHUP] {
        let _ = signal_hook::flag::register_conditional_shutdown(sig, 130, cancel.clone());
        let _ = signal_hook::flag::register(sig, cancel.clone());
    }
    // Run over ssh by another blkscope (`--host`): standard input is the ssh channel, and its
    // end (the connection gone, Ctrl-C on the other side) cancels like a hang-up.
    if std::env::var("BLKSCOPE_EXIT_ON_EOF").as_deref() == Ok("1") {
        let c = cancel.clone();
        let _ = std::thread::Builder::new()
            .name("blkscope-stdin".into())
            .spawn(move || {
                let _ = std::io::copy(&mut std::io::stdin().lock(), &mut std::io::sink());
                c.store(true, Ordering::Relaxed);
            });
    }
    cancel
}
