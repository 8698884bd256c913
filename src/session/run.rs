//! One run of a job: the engine opens the target and runs the job on it, the read-back of
//! `--verify` reads what it wrote, and the analysis says what the figures mean, all while the
//! target is still held (O_EXCL on a device; a scratch file not yet removed).

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::analysis;
use crate::analysis::findings::{Finding, Moved};
use crate::analysis::live::SoFar;
use crate::analysis::steps::{self, Steps};
use crate::analysis::traced::{OwnBytes, TraceSummary};
use crate::device::Device;
use crate::engine::{
    self, Job, OpenTarget, Run, RunError, Sample, Settled, TargetInfo, TargetSpec, TimedIo,
};
use crate::result::RunResult;
use crate::sysroot::SysRoot;
use crate::trace;
use crate::verify::{self, VerifyReport};

/// Runs `job` on the target once: its result, with the target as it was opened.
pub fn run_job(
    root: &SysRoot,
    spec: &TargetSpec,
    job: &Job,
    cancel: Arc<AtomicBool>,
    mut on_sample: impl FnMut(&Sample),
) -> Result<(TargetInfo, RunResult), RunError> {
    run_once(root, spec, job, None, cancel, false, |s, _| on_sample(s)).map(|r| (r.info, r.result))
}

/// One run: the target as it was opened, the device that holds a file target, the engine it
/// ran on, the result.
pub(super) struct Ran {
    pub info: TargetInfo,
    pub holding: Option<Device>,
    pub settled: Settled,
    pub result: RunResult,
}

/// [`run_job`], also handing back the device that holds a file target, as opening it found it;
/// with `live_findings`, each live sample comes with what the analysis makes of the test so far.
/// `settled`: the engine an earlier run of the same job settled on (repeats run on one engine);
/// None to settle it now (a probe, before the counters and the trace start: `engine::probe`).
pub(super) fn run_once(
    root: &SysRoot,
    spec: &TargetSpec,
    job: &Job,
    settled: Option<&Settled>,
    cancel: Arc<AtomicBool>,
    live_findings: bool,
    on_sample: impl FnMut(&Sample, &[Finding]),
) -> Result<Ran, RunError> {
    let mut target = engine::target::open(root, spec, job, &cancel)?;
    let settled = match settled {
        Some(s) => s.clone(),
        None => engine::settle(&target, job, &cancel),
    };
    // How much of what a read test reads held nothing when it began (after the probe, whose
    // writes the run then finds).
    let unwritten = analysis::unwritten_before(root, &target, job);
    // The block layer's trace of the devices under the target, over the run only.
    let tracer = trace::wanted().then(|| trace::Tracer::start(root, &target.watch));
    if let (Some(Ok(t)), Some(runtime)) = (&tracer, job.runtime) {
        t.ends_in(job.ramp.unwrap_or_default() + runtime);
    }
    let live = match &tracer {
        Some(Ok(t)) => Some(t.live()),
        _ => None,
    };
    let off = match &tracer {
        None => Some("--no-trace".to_string()),
        Some(Err(why)) => Some(why.clone()),
        Some(Ok(_)) => None,
    };
    let mut so_far = live_findings.then(|| {
        let known = analysis::known_before(job, &spec.path, &target, unwritten.as_ref());
        SoFar::begin(root, &target, known)
    });
    let mut on_sample = on_sample;
    // Each live sample with the trace so far, and what the analysis makes of the test so far
    // by the same trace.
    // A middle I/O's parts so far, and the trace's events when they were paired: new pairs
    // come only when the trace has been read again, and only for an observer that shows them
    // (pairing thousands of I/Os took 0.5-0.85 ms of the main thread at each read).
    let mut steps_at: (u64, Option<Steps>) = (u64::MAX, None);
    // The test's own bytes so far, by direction, for the trace's counters (`OwnBytes`).
    let own_device = target.watch.first().cloned().unwrap_or_default();
    let mut moved = Moved {
        read_bytes: 0,
        write_bytes: 0,
    };
    let each = |s: &Sample, timed: &[TimedIo]| {
        moved.read_bytes += s.read_bytes;
        moved.write_bytes += s.write_bytes;
        // The trace so far is for an observer that shows it (the TUI, `--ndjson`): a progress
        // bar shows the rate alone, and summing the trace up each sample is not free.
        if !live_findings {
            return on_sample(s, &[]);
        }
        let view = live.as_ref().and_then(|l| l.lock().ok().map(|v| v.clone()));
        let trace = match (&view, &off) {
            (Some(v), _) => {
                let own = OwnBytes::of(job, &own_device, moved.read_bytes, moved.write_bytes);
                TraceSummary::so_far(v, Some(&own))
            }
            (None, Some(why)) => Some(TraceSummary::off(why.clone())),
            (None, None) => None,
        };
        if let Some(v) = view
            .as_ref()
            .filter(|v| live_findings && v.events != steps_at.0)
        {
            let now = steps::of_sampled(timed, &v.stepped, &v.coverage);
            steps_at = (v.events, now.ok());
        }
        let mut s = with_trace(s, view.as_ref(), trace.as_ref());
        s.steps = steps_at.1.map(Box::new);
        let found = match so_far.as_mut() {
            Some(sf) => sf.findings(root, job, &target, &s, moved, trace),
            None => Vec::new(),
        };
        on_sample(&s, &found)
    };
    let run = engine::run(root, &target, job, &settled, cancel.clone(), each);
    let trace = match tracer {
        None => TraceSummary::off("--no-trace"),
        Some(Err(why)) => TraceSummary::off(why),
        Some(Ok(t)) => {
            let traced = t.stop();
            let timed = run.as_ref().map_or(&[][..], |r| &r.timed[..]);
            // The samples' sum holds the ramp's bytes, which the counters hold too.
            let own = run.as_ref().ok().map(|r| {
                let m = &r.measured;
                let read = moved.read_bytes.max(m.read_bytes);
                let written = moved.write_bytes.max(m.write_bytes);
                OwnBytes::of(job, &own_device, read, written)
            });
            TraceSummary::of(&traced, own.as_ref()).with_steps(timed, &traced)
        }
    };
    let run = run?;
    let verify = job
        .verify
        .then(|| read_back(&target, &run, job, &cancel))
        .flatten();
    let analysis = analysis::analyze_run(
        root,
        job,
        (&spec.path, &target),
        &run,
        unwritten.as_ref(),
        trace,
    );
    let (info, holding) = (target.info.clone(), target.holding.take());
    drop(target);
    Ok(Ran {
        info,
        holding,
        settled,
        result: RunResult::of(run.measured, analysis, verify),
    })
}

/// A live sample with the trace's Q2D and D2C so far and the other processes it saw (as its
/// summary says them: scaled to the run where it is kept in windows), where there is a trace.
fn with_trace(s: &Sample, view: Option<&trace::LiveView>, t: Option<&TraceSummary>) -> Sample {
    let mut s = s.clone();
    if let Some(v) = view {
        s.q2d_p50_ns = v.split.map(|x| x.0);
        s.d2c_p50_ns = v.split.map(|x| x.1);
    }
    if let Some(t) = t {
        s.others_traced = t.live_others();
        s.split_why = t.split_why.clone();
    } else if view.is_some_and(|v| !v.read()) {
        s.split_why = Some(NOT_READ_YET.into());
    }
    s
}

/// Why a live sample has no split before the trace's reader has read it once.
const NOT_READ_YET: &str = "the trace has not been read yet";

/// `--verify`: reads back what the run wrote (a random-data write has a stamp to check).
fn read_back(
    target: &OpenTarget,
    run: &Run,
    job: &Job,
    cancel: &AtomicBool,
) -> Option<VerifyReport> {
    let stamp = run.measured.stamp.as_ref()?;
    let granularity = target.info.logical_block_size.unwrap_or(512);
    Some(match target.reopen_for_reading() {
        Ok(f) => verify::verify(
            &f,
            stamp,
            &verify::ReadBack {
                granularity,
                max_errors: job.max_errors.unwrap_or(1000),
                cancel,
            },
        ),
        Err(e) => VerifyReport {
            stopped: Some(format!("cannot open the target to read it back: {e}")),
            ..Default::default()
        },
    })
}
