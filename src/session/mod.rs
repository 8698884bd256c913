//! One path to run a test: a job repeated under one set of rules, or a suite of such tests, and
//! the outcome saved. The command line and the TUI (and later remote hosts) call this; none of
//! them has a repeat loop or a save of its own.
//!
//! The repeat rules: each test runs `repeat` times; before every repeat after the first of a
//! test that reads, the target's cached pages are dropped (so repeat 2 does not read what repeat
//! 1 left in memory); a run that failed or was cancelled ends the test, and a failed test ends a
//! suite. Repeats are folded into one result with its spread (`crate::result::with_repeats`).
//!
//! A device that was blank when the session began holds the session's own data after its first
//! write: later runs of the same session do not ask for a confirmation again.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

mod run;
mod settings;
pub mod sweep;
mod verify;

pub use run::run_job;
pub use settings::{
    SETTING_SUITES, SETTING_TEST_RUNTIME, run_scheduler_suite, run_write_cache_suite,
};
pub use verify::{capacity, verify_saved};

use crate::device::Device;
use crate::engine::{Job, RunError, Sample, TargetInfo, TargetSpec};
use crate::result::RunResult;
use crate::suite::Suite;
use crate::sysroot::SysRoot;

/// What a caller hears while tests run. Every method has a default that does nothing.
pub trait Observer {
    /// Run `run` of `of` of the test `test` is about to start.
    fn run_starting(&mut self, _test: &str, _run: u32, _of: u32) {}
    /// A live sample of the run under way, and what the analysis makes of the run so far
    /// (empty unless [`Observer::wants_findings`]).
    fn sample(&mut self, _s: &Sample, _findings: &[crate::analysis::findings::Finding]) {}
    /// Whether the samples should come with the analysis so far: it reads the devices' counters
    /// at every sample, which an observer that does not show it should not pay for.
    fn wants_findings(&self) -> bool {
        false
    }
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
    /// The properties of the device the tests ran on (for a file, the device holding it), as
    /// the session found them: what a saved run records.
    pub device: Option<Device>,
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
    /// The target's device (or the one holding a file): found before a suite's tests, else by
    /// the first run's open.
    device: Option<Device>,
    cancel: Arc<AtomicBool>,
    obs: &'a mut dyn Observer,
}

impl<'a> Runner<'a> {
    fn new(
        root: &'a SysRoot,
        spec: &TargetSpec,
        device: Option<Device>,
        cancel: &Arc<AtomicBool>,
        obs: &'a mut dyn Observer,
    ) -> Self {
        Runner {
            root,
            spec: spec.clone(),
            device,
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
        device,
        cancel,
        obs,
    } = r;
    let repeat = repeat.max(1);
    let mut runs = Vec::new();
    // Every repeat on the engine the first settled on: a spread over two engines would be the
    // engines', not the device's.
    let mut settled = None;
    for i in 0..repeat {
        if cancel.load(Ordering::Relaxed) {
            break;
        }
        obs.run_starting(name, i + 1, repeat);
        let mut j = job.clone();
        if i > 0 && j.op.reads() {
            j.drop_cache_first = true;
        }
        let live = obs.wants_findings();
        let ran = run::run_once(
            root,
            spec,
            &j,
            settled.as_ref(),
            cancel.clone(),
            live,
            |s, f| obs.sample(s, f),
        )?;
        settled.get_or_insert(ran.settled);
        let (info, res) = (ran.info, ran.result);
        if device.is_none() {
            *device = ran.holding;
        }
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
        _ => Some(crate::result::with_repeats(runs)),
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
    // The first run's open finds the device (`OpenTarget::holding`): nothing needs it before.
    let r = Runner::new(root, spec, None, &cancel, obs);
    run_tests(r, None, vec![test], repeat, Origin::Run)
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
    let device = device_of(root, &spec.path);
    let lbs = crate::suite::target_lbs(&spec.path, device.as_ref());
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
    let r = Runner::new(root, spec, device, &cancel, obs);
    run_tests(r, prepare, tests, repeat, origin)
}

/// The properties of the target's device, looked up once for the whole session (without
/// reading the device): None for a directory or a file, or a name discovery does not know.
fn device_of(root: &SysRoot, path: &str) -> Option<Device> {
    let p = std::path::Path::new(path);
    if p.is_dir() || p.is_file() {
        return None;
    }
    crate::device::properties(root, path)
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
fn run_tests(
    mut runner: Runner,
    prepare: Option<Job>,
    tests: Vec<(String, Option<String>, Job)>,
    repeat: u32,
    origin: Origin,
) -> Result<Outcome, RunError> {
    let fill = crate::suite::FILL_NAME;
    // A target that is no target at all (/dev/, a file on sysfs) is said before anything runs.
    crate::device::safety::nameable(runner.root, &runner.spec.path)?;
    if origin != Origin::Run {
        let named: Vec<(&str, &Job)> = prepare
            .iter()
            .map(|j| (fill, j))
            .chain(tests.iter().map(|(n, _, j)| (n.as_str(), j)))
            .collect();
        let (root, spec, device) = (runner.root, &runner.spec, runner.device.as_ref());
        crate::engine::target::precheck(root, spec, device, &named, origin == Origin::Suite)?;
    }
    let cancel = runner.cancel.clone();
    let mut out = Outcome::default();
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
            out.device = runner.device;
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
    out.device = runner.device;
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
    // Found before a suite's runs or by the first run's open; looked up here only for
    // a target discovery knew by another name (a /dev/disk/by-id/ path).
    let device = outcome.device.clone().or_else(|| {
        let name = outcome.target.as_ref()?.device.as_deref()?;
        crate::device::properties(root, name)
    });
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
