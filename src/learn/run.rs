//! Runs a lesson: makes the lab devices it needs, fills what it reads, runs each step's tests
//! (with the step's scheduler), checks each claim on the figures just measured, and names the
//! choice they support. The lab goes when the run ends, however it ends.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde::Serialize;

use super::repeats::{self, Figures};
use super::{DeviceKind, Expr, Lesson, Step, figures, letter};
use crate::engine::job::{Data, Mode, Op, SizeSpec};
use crate::engine::{Job, Sample, TargetSpec};
use crate::lab::{Lab, LabDevice, LabKind, LabOptions};
use crate::sysroot::SysRoot;

/// How big the lab's devices are: every test of a built-in lesson fits, and filling one takes
/// about a second on a disk.
pub const LAB_SIZE: u64 = 256 << 20;

pub struct Options {
    pub size: u64,
    /// Where the lab's files go (`--dir`).
    pub dir: Option<PathBuf>,
    /// The choice the student predicted (index), if any.
    pub prediction: Option<usize>,
    /// How many times each test runs (`--repeat`); None: the lesson's `repeat`, else 3.
    pub repeat: Option<usize>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            size: LAB_SIZE,
            dir: None,
            prediction: None,
            repeat: None,
        }
    }
}

/// What a lesson run tells whoever shows it, as it happens.
pub trait Observer {
    /// A phase without a test: making the lab, filling a device.
    fn status(&mut self, _what: &str) {}
    fn step_starting(&mut self, _i: usize, _step: &Step, _path: &str) {}
    fn test_starting(&mut self, _name: &str, _job: &Job, _path: &str) {}
    fn sample(&mut self, _s: &Sample) {}
    fn test_done(&mut self, _t: &TestRun) {}
    fn step_done(&mut self, _i: usize, _r: &StepRun) {}
}

pub struct Quiet;
impl Observer for Quiet {}

/// A choice, named.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Pick {
    pub choice: char,
    pub text: String,
}

/// One test of a step: its figures and the command lines that match it. Of a test run several
/// times: each figure's median, with the lowest and highest in `spread`.
#[derive(Debug, Clone, Serialize)]
pub struct TestRun {
    pub test: String,
    pub figures: BTreeMap<String, f64>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub spread: BTreeMap<String, [f64; 2]>,
    /// How many runs the figures are the medians of.
    pub runs: usize,
    pub dd: String,
    pub fio: String,
    /// The kinds of the warnings the run raised (`blkscope explain KIND`).
    pub warnings: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A claim, checked.
#[derive(Debug, Clone, Serialize)]
pub struct ClaimRun {
    pub text: String,
    pub check: String,
    /// None when it could not be checked (a figure the run lacks: say, no trace), or when the
    /// spread of the runs could overturn it (`held_in` then says how many it held in).
    pub held: Option<bool>,
    /// Of a lesson run several times: [runs it held in, runs it was checked in].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub held_in: Option<[usize; 2]>,
    /// Each figure the check names, as measured.
    pub numbers: BTreeMap<String, f64>,
    /// What it means that it held or not; why it could not be checked.
    pub meaning: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct StepRun {
    pub name: String,
    pub device: DeviceKind,
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<String>,
    pub results: Vec<TestRun>,
    pub claims: Vec<ClaimRun>,
}

#[derive(Debug, Clone, Serialize)]
pub struct LessonRun {
    pub lesson: String,
    pub title: String,
    pub question: String,
    pub created: String,
    /// The file system that holds the lab's files (ext4, tmpfs, ...), when known.
    pub lab_fs: Option<String>,
    /// Whether that file system keeps its files in RAM: then every figure is memory's.
    pub in_ram: bool,
    /// How many times each test ran; figures and verdicts are the medians'.
    pub repeats: usize,
    pub prediction: Option<Pick>,
    /// The choice the figures support (None: none of the choices' conditions held, or the
    /// spread of the runs could change it: `unclear` says how).
    pub answer: Option<Pick>,
    /// Why there is no answer though a choice fits the medians: the spread of the runs could
    /// make another choice fit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unclear: Option<String>,
    pub predicted_right: Option<bool>,
    pub steps: Vec<StepRun>,
    pub cancelled: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub takeaway: Option<String>,
}

impl LessonRun {
    /// How its claims came out.
    pub fn claims(&self) -> ClaimCount {
        let mut n = ClaimCount::default();
        for c in self.steps.iter().flat_map(|s| &s.claims) {
            n.add(c.held, c.held_in.is_some());
        }
        n
    }
}

/// How a lesson run's claims came out: every claim is in one of the four.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ClaimCount {
    pub held: usize,
    pub did_not_hold: usize,
    /// Checked, but the spread of the runs could overturn it.
    pub unclear: usize,
    /// A figure it names was not measured (no trace, say).
    pub unchecked: usize,
}

impl ClaimCount {
    /// One claim: whether it held (None: undecided), and whether it was checked on the runs
    /// (`held_in`), which tells a claim the spread left open from one never checked.
    pub fn add(&mut self, held: Option<bool>, checked: bool) {
        match (held, checked) {
            (Some(true), _) => self.held += 1,
            (Some(false), _) => self.did_not_hold += 1,
            (None, true) => self.unclear += 1,
            (None, false) => self.unchecked += 1,
        }
    }

    pub fn total(&self) -> usize {
        self.held + self.did_not_hold + self.unclear + self.unchecked
    }
}

/// Runs `lesson` on new lab devices; the lab is removed before this returns.
pub fn run(
    root: &SysRoot,
    lesson: &Lesson,
    opts: &Options,
    cancel: Arc<AtomicBool>,
    obs: &mut dyn Observer,
) -> Result<LessonRun, crate::Error> {
    let kinds = lesson.devices();
    crate::lab::can_make()?;
    obs.status("making the lab's devices");
    let lab = Lab::create(&LabOptions {
        size: opts.size,
        partitioned: false,
        dir: opts.dir.clone(),
        cached: kinds.contains(&DeviceKind::Cached),
        zram: kinds.contains(&DeviceKind::Zram),
    })?;
    let pick = |i: usize| Pick {
        choice: letter(i),
        text: lesson.choices[i].text.clone(),
    };
    let mut out = LessonRun {
        lesson: lesson.name.clone(),
        title: lesson.title.clone(),
        question: lesson.question.clone(),
        created: crate::runs::rfc3339_now(),
        lab_fs: lab.fs.clone(),
        in_ram: lab.in_ram.is_some(),
        repeats: opts
            .repeat
            .or(lesson.repeat)
            .unwrap_or(super::DEFAULT_REPEAT),
        prediction: opts
            .prediction
            .filter(|i| *i < lesson.choices.len())
            .map(pick),
        answer: None,
        unclear: None,
        predicted_right: None,
        steps: Vec::new(),
        cancelled: false,
        takeaway: lesson.takeaway.clone(),
    };
    if lesson.fill {
        fill(root, lesson, &lab, opts.size, &cancel, obs);
    }
    let mut figs = Figures::new();
    let mut per_run = vec![Figures::new(); out.repeats];
    for (i, step) in lesson.steps.iter().enumerate() {
        if cancel.load(Ordering::Relaxed) {
            break;
        }
        let dev = device(&lab, step.device);
        obs.step_starting(i, step, &dev.path);
        let r = run_step(root, step, dev, (&mut figs, &mut per_run), &cancel, obs);
        if cancel.load(Ordering::Relaxed) {
            break;
        }
        obs.step_done(i, &r);
        out.steps.push(r);
    }
    out.cancelled = cancel.load(Ordering::Relaxed);
    if !out.cancelled {
        match repeats::answer(lesson, &figs, &per_run) {
            Ok(a) => out.answer = a.map(pick),
            Err(why) => out.unclear = Some(why),
        }
        out.predicted_right = out
            .prediction
            .as_ref()
            .zip(out.answer.as_ref())
            .map(|(p, a)| p.choice == a.choice);
    }
    drop(lab);
    Ok(out)
}

/// The lab device of a kind.
fn device(lab: &Lab, kind: DeviceKind) -> &LabDevice {
    let want = |d: &&LabDevice| match kind {
        DeviceKind::Lab512 => d.kind == LabKind::Loop && d.sector == 512,
        DeviceKind::Lab4096 => d.kind == LabKind::Loop && d.sector == 4096,
        DeviceKind::Cached => d.kind == LabKind::Cached,
        DeviceKind::Zram => d.kind == LabKind::Zram,
    };
    lab.devices
        .iter()
        .find(want)
        .expect("the lab makes every kind a lesson names")
}

fn spec(d: &LabDevice) -> TargetSpec {
    // The lab's own device: it was made for this lesson, and its name is typed back here.
    TargetSpec {
        path: d.path.clone(),
        confirm: Some(d.name.clone()),
        force: false,
    }
}

/// Writes random data once over each device a step reads from (1M direct writes): reads of
/// never-written blocks would measure nothing.
fn fill(
    root: &SysRoot,
    lesson: &Lesson,
    lab: &Lab,
    size: u64,
    cancel: &Arc<AtomicBool>,
    obs: &mut dyn Observer,
) {
    let mut kinds: Vec<DeviceKind> = lesson
        .steps
        .iter()
        .filter(|s| s.tests.iter().any(|t| t.op.reads()))
        .map(|s| s.device)
        .collect();
    kinds.sort();
    kinds.dedup();
    for k in kinds {
        if cancel.load(Ordering::Relaxed) {
            return;
        }
        let d = device(lab, k);
        obs.status(&format!("filling {k} ({}) with random data", d.path));
        let job = Job {
            op: Op::Write,
            bs: 1 << 20,
            iodepth: 4,
            size: Some(SizeSpec::Bytes(size)),
            mode: Mode::Direct,
            data: Data::Random,
            ..Job::default()
        };
        let _ = crate::session::run_job(root, &spec(d), &job, cancel.clone(), |_| {});
    }
}

/// One step: its scheduler set (and put back after), its tests run `repeats` times in turn
/// (a, b, a, b, ...: what drifts meanwhile touches each alike), its claims checked on the
/// medians and on each run. `figs` gathers the medians, `per_run` each run's figures.
fn run_step(
    root: &SysRoot,
    step: &Step,
    dev: &LabDevice,
    (figs, per_run): (&mut Figures, &mut [Figures]),
    cancel: &Arc<AtomicBool>,
    obs: &mut dyn Observer,
) -> StepRun {
    let tweak = step.scheduler.as_ref().map(|s| {
        let t = crate::tuning::Tweak::begin(root, &dev.name, crate::tuning::Knob::Scheduler);
        t.and_then(|t| t.set(s).map(|_| t))
    });
    let mut out = StepRun {
        name: step.name.clone(),
        device: step.device,
        path: dev.path.clone(),
        scheduler: step.scheduler.clone(),
        results: Vec::new(),
        claims: Vec::new(),
    };
    let scheduler_failed = matches!(&tweak, Some(Err(_)));
    let mut runs: Vec<Vec<TestRun>> = vec![Vec::new(); step.tests.len()];
    let n = per_run.len();
    for (k, run_figs) in per_run.iter_mut().enumerate() {
        for (t, done) in step.tests.iter().zip(runs.iter_mut()) {
            if cancel.load(Ordering::Relaxed) {
                return out;
            }
            let job = t.job(dev.sector as u64);
            let label = run_label(&t.name, k, n);
            obs.test_starting(&label, &job, &dev.path);
            let r = run_test(root, &t.name, &job, dev, cancel, obs);
            for (f, v) in &r.figures {
                run_figs.insert(format!("{}.{f}", t.name), *v);
            }
            obs.test_done(&TestRun {
                test: label,
                ..r.clone()
            });
            done.push(r);
        }
    }
    drop(tweak);
    for (t, done) in step.tests.iter().zip(&runs) {
        let r = repeats::combine(done);
        for (k, v) in &r.figures {
            figs.insert(format!("{}.{k}", t.name), *v);
        }
        out.results.push(r);
    }
    out.claims = step
        .claims
        .iter()
        .map(|c| {
            let mut r = repeats::check(c, figs, per_run);
            if scheduler_failed {
                r.meaning = format!(
                    "{} (the scheduler could not be set to {}: the step ran with the device's)",
                    r.meaning,
                    step.scheduler.as_deref().unwrap_or("")
                );
            }
            r
        })
        .collect();
    out
}

/// A test's name as it runs: `qd1`, or `qd1 2/3` (its second run of three).
fn run_label(name: &str, k: usize, n: usize) -> String {
    if n == 1 {
        name.to_string()
    } else {
        format!("{name} {}/{n}", k + 1)
    }
}

fn run_test(
    root: &SysRoot,
    name: &str,
    job: &Job,
    dev: &LabDevice,
    cancel: &Arc<AtomicBool>,
    obs: &mut dyn Observer,
) -> TestRun {
    let r = crate::session::run_job(root, &spec(dev), job, cancel.clone(), |s| obs.sample(s));
    let total = job.size.map(|s| s.resolve(LAB_SIZE)).unwrap_or(LAB_SIZE);
    let mut out = TestRun {
        test: name.to_string(),
        figures: BTreeMap::new(),
        spread: BTreeMap::new(),
        runs: 1,
        dd: String::new(),
        fio: crate::analysis::explain::fio_command(job, &dev.path, total),
        warnings: Vec::new(),
        error: None,
    };
    match r {
        Ok((info, r)) => {
            let total = job
                .size
                .map(|s| s.resolve(info.size_bytes))
                .unwrap_or(info.size_bytes);
            out.dd =
                crate::analysis::explain::dd_line_for_run(job, &dev.path, total, Some(r.bytes));
            out.fio = crate::analysis::explain::fio_command(job, &dev.path, total);
            out.figures = figures::of(job, &r);
            out.warnings = r.warnings.iter().map(|w| w.kind.to_string()).collect();
            out.error = r.error.as_ref().map(|e| e.message.clone());
        }
        Err(e) => out.error = Some(e.to_string()),
    }
    out
}

/// Checks a claim on the figures measured so far.
pub fn check_claim(c: &super::Claim, figs: &BTreeMap<String, f64>) -> ClaimRun {
    let expr = Expr::parse(c.check.get_ref()).expect("checked when the lesson was read");
    let numbers: BTreeMap<String, f64> = expr
        .variables()
        .into_iter()
        .filter_map(|v| figs.get(&v).map(|x| (v, *x)))
        .collect();
    let get = |n: &str| figs.get(n).copied();
    let (held, meaning) = match expr.holds(&get) {
        Ok(true) => (Some(true), c.held.clone()),
        Ok(false) => (Some(false), c.failed.clone()),
        Err(why) => (
            None,
            format!("could not be checked: {why} (a test failed, or the run was not traced)"),
        ),
    };
    ClaimRun {
        text: c.text.clone(),
        check: expr.text,
        held,
        held_in: None,
        numbers,
        meaning,
    }
}
