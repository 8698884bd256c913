//! The I/O engine: opens a target ([`target::open`]), runs a [`Job`] on it with io_uring (or
//! pread/pwrite), streams [`Sample`]s while it runs and returns what it [`Measured`] with the
//! counters read around it. It knows nothing of any UI, of what the figures mean (the
//! analysis, `crate::analysis`) or of reading back what it wrote (`crate::verify`): callers
//! pass a closure for samples and an `AtomicBool` to cancel.
//!
//! Threads: one named OS thread per job (`blkscope-job-N`), each with its own ring; the calling
//! thread samples their interval figures and calls back.

pub mod cpus;
pub mod few;
pub mod io_threads;
pub mod job;
pub mod pattern;
pub mod probe;
pub mod result;
pub mod target;
pub mod wait;
pub mod worker;
pub mod zeros;
pub mod zoned;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::mpsc::{Receiver, Sender, TryRecvError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

pub use job::{Data, EngineKind, Job, Mode, Op};
pub use probe::{Settled, settle};
pub use result::{Measured, Probe, Sample};
pub use target::{OpenTarget, TargetInfo, TargetSpec};

use crate::device::safety::SafetyReport;
use crate::stats::procs::ProcSnapshot;
use crate::sysroot::SysRoot;
use pattern::{Stamp, StampJob};
use result::IoFailure;
pub use worker::TimedIo;
use worker::{IntervalAcc, WorkerOutcome, WorkerSpec, new_histogram, run_worker};
use zeros::ZeroSampler;

/// Why a run did not start (or could not go on).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{}", .0.join("; "))]
    Invalid(Vec<String>),
    #[error("write test refused: {} is blocked: {}", .0.target, reasons(.0))]
    Blocked(Box<SafetyReport>),
    #[error("{} carries data ({}): a write test destroys it; add --confirm {} to go on", .0.target, reasons(.0), .0.device.as_deref().unwrap_or("NAME"))]
    ConfirmationNeeded(Box<SafetyReport>),
    #[error("cannot open {}: {source}", path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Device(#[from] crate::Error),
}

fn reasons(r: &SafetyReport) -> String {
    r.reasons
        .iter()
        .filter(|x| x.code.severity().is_some())
        .map(|x| x.detail.clone())
        .collect::<Vec<_>>()
        .join("; ")
}

impl RunError {
    /// 2 invalid job, 3 confirmation missing, 4 blocked, 1 anything else.
    pub fn exit_code(&self) -> i32 {
        match self {
            RunError::Invalid(_) => 2,
            RunError::ConfirmationNeeded(_) => 3,
            RunError::Blocked(_) => 4,
            RunError::Open { .. } => 1,
            RunError::Device(e) => e.exit_code(),
        }
    }
}

/// Says why io_uring could not be set up, reading kernel.io_uring_disabled where it matters.
pub fn uring_unavailable_note(e: &std::io::Error) -> String {
    let sysctl = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
        .ok()
        .map(|s| s.trim().to_string());
    let why = match (e.raw_os_error(), sysctl.as_deref()) {
        (Some(libc::ENOSYS), _) => {
            "the kernel has no io_uring, or a seccomp filter (e.g. a container's) blocks it"
                .to_string()
        }
        (Some(libc::EPERM), Some("2")) => "kernel.io_uring_disabled = 2 turns it off".to_string(),
        (Some(libc::EPERM), Some("1")) => {
            "kernel.io_uring_disabled = 1 allows it only to the io_uring_group or CAP_SYS_ADMIN"
                .to_string()
        }
        _ => format!("io_uring_setup failed: {e}"),
    };
    format!("io_uring unavailable ({why}); fell back to pread/pwrite")
}

/// Set `BLKSCOPE_DISABLE_URING=1` to run with pread/pwrite as where io_uring_setup fails (to
/// test or demonstrate the fallback); the note says it was the variable.
fn uring_disabled_by_env() -> bool {
    std::env::var("BLKSCOPE_DISABLE_URING").as_deref() == Ok("1")
}

/// Counters read just before the first I/O and just after the last, for the analysis: the
/// diskstats of the devices under the test (none when there are none to watch, or
/// /proc/diskstats cannot be read) and every process's /proc/PID/io.
pub struct Counters {
    pub disk: Option<(crate::stats::Snapshot, crate::stats::Snapshot)>,
    pub procs: (ProcSnapshot, ProcSnapshot),
}

/// One run of a job: what it measured, the counters around it, and how it ran.
pub struct Run {
    pub measured: Measured,
    pub counters: Counters,
    /// The engine that ran (io_uring may have fallen back to pread/pwrite).
    pub engine_used: EngineKind,
    /// io-wq worker threads the jobs' I/O went through, summed over the jobs.
    pub io_workers: usize,
    /// Blocks sampled from what the reads returned (all jobs).
    pub zeros: ZeroSampler,
    /// Some of the test's direct I/Os with their sector, submission and completion times
    /// (every job's: `trace::pick`), for where their time went.
    pub timed: Vec<TimedIo>,
}

/// When a run starts, ends its ramp, stops, and samples.
#[derive(Clone, Copy)]
struct Timing {
    start: Instant,
    ramp: Duration,
    ramp_end: Instant,
    deadline: Option<Instant>,
    interval: Duration,
}

impl Timing {
    fn of(job: &Job) -> Self {
        let start = Instant::now();
        let ramp = job.ramp.unwrap_or_default();
        let ramp_end = start + ramp;
        Self {
            start,
            ramp,
            ramp_end,
            deadline: job.runtime.map(|r| ramp_end + r),
            interval: job.interval.unwrap_or(Duration::from_millis(100)),
        }
    }
}

/// The seed of job `j` of a run: its run stamp, body bytes and random order.
fn job_seed(run_seed: u64, j: u32) -> u64 {
    run_seed.wrapping_add((j as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15))
}

/// Runs `job` once on a target that [`target::open`] opened (and the caller keeps open until
/// it has read back and analysed what it wrote: O_EXCL holds for the whole run), on the engine
/// [`settle`] settled on.
pub fn run(
    root: &SysRoot,
    target: &OpenTarget,
    job: &Job,
    settled: &Settled,
    cancel: Arc<AtomicBool>,
    on_sample: impl FnMut(&Sample, &[TimedIo]),
) -> Result<Run, RunError> {
    // `auto` on a queue with poll queues runs as --hipri would (`probe::polls_by_default`).
    let polled = settled.polled.then(|| Job {
        hipri: true,
        ..job.clone()
    });
    let job = polled.as_ref().unwrap_or(job);
    if job.mode == Mode::Nocache || job.drop_cache_first {
        let _ = crate::sys::drop_cache(&target.file);
    }
    let engine = settled.engine;
    // Other processes' I/O over the run (/proc/PID/io), to tell what else moved data.
    let procs0 = ProcSnapshot::read(root);
    // diskstats of the devices under the test, from just before the first I/O.
    let snap0 = (!target.watch.is_empty())
        .then(|| crate::stats::Snapshot::read(root).ok())
        .flatten();
    let timing = Timing::of(job);
    let cpu0 = crate::sys::cpu_times();
    let run_seed = fastrand::u64(..);
    let jobs = spawn_jobs(target, job, engine, timing, run_seed, &cancel)?;
    let (series, timed) = sample_until_done(&jobs, timing, target.plan.total, &cancel, on_sample);
    let outcomes: Vec<_> = jobs
        .handles
        .into_iter()
        .map(|h| h.join().expect("worker thread panicked"))
        .collect();
    let cpu1 = crate::sys::cpu_times();
    // Before the target is closed: closing a block device flushes its page cache, which would
    // hide what buffered writes left in memory.
    let snap1 = snap0
        .as_ref()
        .and_then(|_| crate::stats::Snapshot::read(root).ok());
    let cancelled = cancel.load(Ordering::Relaxed);
    let procs1 = ProcSnapshot::read(root);

    let mut totals = Totals::of(&outcomes, job, target.plan.region);
    let engine_used = totals.engine_used.unwrap_or(engine);
    // The variable's note first, else the first job's (io_uring fell back).
    totals.engine_note = settled.note.clone().or(totals.engine_note.take());
    let plan = target.plan;
    let mut measured = totals.measured(job, engine_used, timing, plan.total, series, cancelled);
    measured.engine_why = settled.why.clone();
    measured.engine_probe = settled.probe;
    measured.cpu = cpu_used(cpu0, cpu1, &measured.samples);
    measured.stamp = stamp(job, &outcomes, target.plan.region, run_seed);
    let mut zeros = ZeroSampler::for_region(target.plan.region);
    for o in &outcomes {
        zeros.add(&o.zeros);
    }
    Ok(Run {
        timed,
        engine_used,
        // Each job counted its own (io-wq workers are per thread).
        io_workers: outcomes.iter().map(|o| o.io_workers).sum(),
        zeros,
        measured,
        counters: Counters {
            disk: snap0.zip(snap1),
            procs: (procs0, procs1),
        },
    })
}

/// The job threads of a run, the accumulators each reports its interval figures into, and
/// a channel nothing is sent on: each job thread holds a sender until it ends (also by a
/// panic), so the channel is disconnected once all have ended.
struct Jobs {
    accs: Vec<Arc<Mutex<IntervalAcc>>>,
    /// Each job's I/Os in flight at its last wait (`worker::NOT_A_RING` for pread/pwrite).
    in_flight: Vec<Arc<AtomicU32>>,
    handles: Vec<JoinHandle<WorkerOutcome>>,
    done: Receiver<()>,
}

/// Starts one thread a job, each over its own region.
fn spawn_jobs(
    target: &OpenTarget,
    job: &Job,
    engine: EngineKind,
    timing: Timing,
    run_seed: u64,
    cancel: &Arc<AtomicBool>,
) -> Result<Jobs, RunError> {
    let failed = |e| RunError::Open {
        path: PathBuf::from(&target.info.path),
        source: e,
    };
    let region = target.plan.region;
    let mut accs = Vec::new();
    let mut in_flight = Vec::new();
    let mut handles = Vec::new();
    let (done_tx, done) = std::sync::mpsc::channel::<()>();
    for j in 0..job.jobs {
        // A description of its own (a dup would share one reference count, which every
        // pread/pwrite of every job then takes and drops: docs/architecture.md).
        let file = crate::sys::reopen(&target.file)
            .or_else(|_| target.file.try_clone())
            .map_err(failed)?;
        let acc = Arc::new(Mutex::new(IntervalAcc::new()));
        accs.push(acc.clone());
        let flying = Arc::new(AtomicU32::new(0));
        in_flight.push(flying.clone());
        let ws = WorkerSpec {
            op: job.op,
            bs: job.bs,
            iodepth: if engine == EngineKind::Psync {
                1
            } else {
                job.iodepth
            },
            region_start: job.offset + j as u64 * region,
            region_len: region,
            deadline: timing.deadline,
            ramp_end: timing.ramp_end,
            data: job.data,
            rwmixread: job.rwmixread,
            fdatasync_at_end: job.mode == Mode::Fdatasync && job.op.writes(),
            direct: job.mode == Mode::Direct,
            sqpoll: job.sqpoll,
            hipri: job.hipri,
            engine,
            seed: job_seed(run_seed, j),
            cpus: job.cpus.clone(),
            // Direct I/O goes to the block layer as the engine issued it (a buffered one goes
            // through the page cache): only then is an I/O's sector its bio's.
            sectors: target.sectors.clone().filter(|_| job.mode == Mode::Direct),
        };
        let cancel = cancel.clone();
        let held: Sender<()> = done_tx.clone();
        let h = std::thread::Builder::new()
            .name(format!("blkscope-job-{j}"))
            .spawn(move || {
                let _held = held;
                run_worker(ws, file, cancel, acc, flying)
            })
            .map_err(failed)?;
        handles.push(h);
    }
    Ok(Jobs {
        accs,
        in_flight,
        handles,
        done,
    })
}

/// What the jobs did since the last sample, taken from their accumulators (which start over).
struct Interval {
    bytes: u64,
    ios: u64,
    read: u64,
    total_bytes: u64,
}

fn take_interval(
    accs: &[Arc<Mutex<IntervalAcc>>],
    hist: &mut Histogram<u64>,
    timed: &mut Timed,
) -> Interval {
    let mut iv = Interval {
        bytes: 0,
        ios: 0,
        read: 0,
        total_bytes: 0,
    };
    hist.reset();
    for a in accs {
        if let Ok(mut a) = a.lock() {
            iv.bytes += a.bytes;
            iv.read += a.read_bytes;
            a.read_bytes = 0;
            iv.ios += a.ios;
            iv.total_bytes += a.total_bytes;
            let _ = hist.add(&a.hist);
            a.bytes = 0;
            a.ios = 0;
            a.total_bytes = 0;
            a.hist.reset();
            for t in a.timed.drain(..) {
                timed.pick.keep(&mut timed.kept, t, |t| t.sector);
            }
            a.pick = timed.pick;
        }
    }
    iv
}

/// The run's timed I/Os so far (every job's), at most [`MAX_TIMED`](crate::trace::pick::MAX_TIMED),
/// and the level that keeps them.
#[derive(Default)]
struct Timed {
    kept: Vec<TimedIo>,
    pick: crate::trace::pick::Pick,
}

/// Samples every interval until every job is done; returns the time series.
fn sample_until_done(
    jobs: &Jobs,
    timing: Timing,
    planned: u64,
    cancel: &AtomicBool,
    mut on_sample: impl FnMut(&Sample, &[TimedIo]),
) -> (Vec<Sample>, Vec<TimedIo>) {
    let mut last = timing.start;
    let mut next_tick = timing.start + timing.interval;
    let mut total_bytes = 0u64;
    let mut hist = worker::new_interval_histogram();
    // The time series the result keeps (and charts are drawn from).
    let mut series: Vec<Sample> = Vec::new();
    let mut timed = Timed::default();
    let mut stop = StopWatch::default();
    loop {
        let all_done = matches!(jobs.done.try_recv(), Err(TryRecvError::Disconnected));
        let now = Instant::now();
        if now < next_tick && !all_done {
            // Asleep until the tick or the last job's end, whichever comes first.
            let _ = jobs.done.recv_timeout(next_tick - now);
            continue;
        }
        let iv = take_interval(&jobs.accs, &mut hist, &mut timed);
        total_bytes += iv.total_bytes;
        if iv.ios > 0 || !all_done {
            let mut sample = make_sample(&iv, &hist, timing, now, last, total_bytes, planned);
            if !all_done {
                let held = InFlight::of(jobs);
                sample.stopping = stop.look(held, timing, cancel, now);
                // An interval in which none of the I/Os in flight completed (a final
                // fdatasync alone is the page cache's writing, not an I/O held).
                sample.waiting = (iv.ios == 0 && held.count > 0).then_some(held.count);
            }
            on_sample(&sample, &timed.kept);
            series.push(sample);
        }
        last = now;
        next_tick = now + timing.interval;
        if all_done {
            return (series, timed.kept);
        }
    }
}

/// When the jobs were told to stop, for the samples that say what they still wait for.
#[derive(Default)]
struct StopWatch {
    since: Option<Instant>,
}

impl StopWatch {
    /// What the jobs still running wait for once they have stopped issuing (a cancel, the
    /// deadline passed, a job at the end of its bytes or in its final fdatasync) and have
    /// waited [`result::STOPPING_SAID_AFTER`] for it.
    fn look(
        &mut self,
        held: InFlight,
        timing: Timing,
        cancel: &AtomicBool,
        now: Instant,
    ) -> Option<result::Stopping> {
        let cancelled = cancel.load(Ordering::Relaxed);
        let told = cancelled || held.draining || timing.deadline.is_some_and(|d| now >= d);
        if !(told || held.flushing) {
            return None;
        }
        let since = *self.since.get_or_insert(now);
        let waited = now.duration_since(since);
        (waited >= result::STOPPING_SAID_AFTER).then_some(result::Stopping {
            waited_s: waited.as_secs_f64(),
            cancelled,
            in_flight: held.count,
            flushing: held.flushing,
        })
    }
}

/// What the jobs still running have issued and not seen completed, as their last waits said.
#[derive(Clone, Copy)]
struct InFlight {
    count: u32,
    /// A job waits for its final fdatasync.
    flushing: bool,
    /// A ring's job has stopped issuing (the end of its bytes, or told to stop).
    draining: bool,
}

impl InFlight {
    fn of(jobs: &Jobs) -> Self {
        let mut held = InFlight {
            count: 0,
            flushing: false,
            draining: false,
        };
        for ((acc, n), h) in jobs.accs.iter().zip(&jobs.in_flight).zip(&jobs.handles) {
            if h.is_finished() {
                continue;
            }
            held.flushing |= acc.lock().is_ok_and(|a| a.flushing);
            held.count += match n.load(Ordering::Relaxed) {
                // A pread/pwrite job's one I/O is in flight while it loops (its count is 0
                // again before a final fdatasync).
                worker::NOT_A_RING => 1,
                n => {
                    held.draining |= n & worker::DRAINING != 0;
                    n & !worker::DRAINING
                }
            };
        }
        held
    }
}

/// The sample of the interval from `last` to `now`.
fn make_sample(
    iv: &Interval,
    hist: &Histogram<u64>,
    timing: Timing,
    now: Instant,
    last: Instant,
    total_bytes: u64,
    planned: u64,
) -> Sample {
    let dt = now.duration_since(last).as_secs_f64().max(1e-9);
    let start = timing.start;
    let progress = (timing.deadline.is_none() && planned > 0)
        .then(|| (total_bytes as f64 / planned as f64).min(1.0))
        .or_else(|| {
            timing.deadline.map(|d| {
                (now.duration_since(start).as_secs_f64()
                    / d.duration_since(start).as_secs_f64().max(1e-9))
                .min(1.0)
            })
        });
    let any = iv.ios > 0;
    Sample {
        elapsed_s: now.duration_since(start).as_secs_f64(),
        interval_s: dt,
        bytes: iv.bytes,
        ios: iv.ios,
        bytes_per_sec: iv.bytes as f64 / dt,
        iops: iv.ios as f64 / dt,
        p50_ns: if any { hist.value_at_quantile(0.5) } else { 0 },
        p99_ns: if any { hist.value_at_quantile(0.99) } else { 0 },
        total_bytes,
        progress,
        ramp: now < timing.ramp_end,
        read_bytes: iv.read,
        write_bytes: iv.bytes - iv.read.min(iv.bytes),
        lat_buckets: if any {
            result::lat_buckets(hist)
        } else {
            Vec::new()
        },
        q2d_p50_ns: None,
        d2c_p50_ns: None,
        others_traced: Vec::new(),
        split_why: None,
        steps: None,
        stopping: None,
        waiting: None,
    }
}

/// The jobs' figures added up.
struct Totals {
    hist: Histogram<u64>,
    read_bytes: u64,
    write_bytes: u64,
    ios: u64,
    /// First and last moments that count (after the ramp), over every job.
    from: Option<Instant>,
    to: Option<Instant>,
    error: Option<IoFailure>,
    engine_note: Option<String>,
    engine_used: Option<EngineKind>,
    to_workers: bool,
    busy_polled: bool,
    few_per_wake: bool,
    streams: Vec<result::Stream>,
}

impl Totals {
    fn of(outcomes: &[WorkerOutcome], job: &Job, region: u64) -> Self {
        let mut t = Totals {
            hist: new_histogram(),
            read_bytes: 0,
            write_bytes: 0,
            ios: 0,
            from: None,
            to: None,
            error: None,
            engine_note: None,
            engine_used: outcomes.first().map(|o| o.engine_used),
            to_workers: outcomes.iter().any(|o| o.to_workers),
            busy_polled: outcomes.iter().any(|o| o.busy_polled),
            few_per_wake: outcomes.iter().any(|o| o.few_per_wake),
            streams: Vec::new(),
        };
        for (j, o) in outcomes.iter().enumerate() {
            let _ = t.hist.add(&o.hist);
            t.read_bytes += o.read_bytes;
            t.write_bytes += o.write_bytes;
            t.ios += o.ios;
            t.from = match (t.from, o.counted_from) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            t.to = match (t.to, o.counted_to) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            };
            if t.error.is_none() {
                t.error = o.error.clone();
            }
            if t.engine_note.is_none() {
                t.engine_note = o.engine_note.clone();
            }
            let secs = match (o.counted_from, o.counted_to) {
                (Some(a), Some(b)) => b.duration_since(a).as_secs_f64(),
                _ => 0.0,
            };
            let b = o.read_bytes + o.write_bytes;
            t.streams.push(result::Stream {
                job: j as u32,
                offset: job.offset + j as u64 * region,
                bytes: b,
                seconds: secs,
                bytes_per_sec: if secs > 0.0 { b as f64 / secs } else { 0.0 },
            });
        }
        t
    }

    /// The run's figures (its CPU time and stamp are added by the caller).
    fn measured(
        self,
        job: &Job,
        engine_used: EngineKind,
        timing: Timing,
        planned: u64,
        series: Vec<Sample>,
        cancelled: bool,
    ) -> Measured {
        let seconds = match (self.from, self.to) {
            (Some(a), Some(b)) => b.duration_since(a).as_secs_f64(),
            _ => 0.0,
        };
        let bytes = self.read_bytes + self.write_bytes;
        let per_sec = |n: u64| {
            if seconds > 0.0 {
                n as f64 / seconds
            } else {
                0.0
            }
        };
        let partial = cancelled
            || self.error.is_some()
            || (timing.deadline.is_none() && bytes < planned && timing.ramp.is_zero());
        Measured {
            op: job.op.as_str(),
            bs: job.bs,
            iodepth: job.iodepth,
            jobs: job.jobs,
            mode: job.mode.as_str(),
            data: match job.data {
                Data::Random => "random",
                Data::Zero => "zero",
            },
            engine: engine_used.as_str(),
            engine_why: None,
            engine_probe: None,
            engine_note: self.engine_note,
            polled: job.hipri && engine_used == EngineKind::Uring,
            to_workers: self.to_workers,
            busy_polled: self.busy_polled,
            few_per_wake: self.few_per_wake,
            cpus: job.cpus.as_ref().map(|c| c.to_string()),
            bytes,
            ios: self.ios,
            read_bytes: self.read_bytes,
            write_bytes: self.write_bytes,
            seconds,
            bytes_per_sec: per_sec(bytes),
            iops: per_sec(self.ios),
            latency_ns: result::Latency::from_histogram(&self.hist),
            cpu: result::Cpu::default(),
            streams: self.streams,
            partial,
            cancelled,
            error: self.error,
            stamp: None,
            samples: series,
            histogram: result::encode_histogram(&self.hist),
        }
    }
}

/// The CPU time the run used, over every I/O it did.
fn cpu_used(
    cpu0: (Duration, Duration),
    cpu1: (Duration, Duration),
    series: &[Sample],
) -> result::Cpu {
    // Every I/O done, the ramp's too: the live samples count them all (the last one drains
    // what the jobs handed over when they finished).
    let ios_done: u64 = series.iter().map(|s| s.ios).sum();
    let user = (cpu1.0 - cpu0.0).as_secs_f64();
    let system = (cpu1.1 - cpu0.1).as_secs_f64();
    result::Cpu {
        user_s: user,
        system_s: system,
        // The CPU time is the whole run's, the ramp's too: over every I/O it did. (Over the
        // counted I/Os alone, `--ramp 2s --runtime 10s` showed 20% more per I/O.)
        per_io_us: if ios_done > 0 {
            (user + system) * 1e6 / ios_done as f64
        } else {
            0.0
        },
    }
}

/// What a random-data write put where, for reading it back (`--verify`, `verify --stamp`).
fn stamp(job: &Job, outcomes: &[WorkerOutcome], region: u64, run_seed: u64) -> Option<Stamp> {
    if !(job.op.writes() && job.data == Data::Random && job.op != Op::Randrw) {
        return None;
    }
    Some(Stamp {
        jobs: outcomes
            .iter()
            .enumerate()
            .map(|(j, o)| StampJob {
                start: job.offset + j as u64 * region,
                len: region,
                bs: job.bs,
                seed: job_seed(run_seed, j as u32),
                writes: o.writes_done,
                random: job.op.is_random(),
            })
            .collect(),
    })
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_job_of_many_gets_its_own_seed_without_overflow() {
        // `j * constant` overflowed (a panic in debug builds) from the second job on.
        let seeds: Vec<u64> = (0..64).map(|j| job_seed(u64::MAX - 5, j)).collect();
        let mut unique = seeds.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), seeds.len(), "{seeds:x?}");
    }

    #[test]
    fn the_fallback_note_names_why_io_uring_failed() {
        let enosys = uring_unavailable_note(&std::io::Error::from_raw_os_error(libc::ENOSYS));
        assert!(
            enosys.contains("seccomp") && enosys.contains("fell back to pread/pwrite"),
            "{enosys}"
        );
        let other = uring_unavailable_note(&std::io::Error::from_raw_os_error(libc::ENOMEM));
        assert!(other.contains("io_uring_setup failed"), "{other}");
    }
}
