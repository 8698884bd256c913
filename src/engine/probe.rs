//! The engine a job runs on, settled before its run: what it named, what `auto`'s rule gives
//! ([`Job::engine_to_use`]), and, for a job at depth ([`Job::may_probe_engine`]) on a target
//! whose I/O io_uring can only hand to the kernel's io-wq workers (a driver without
//! non-blocking I/O, such as zram), a short probe of the ring against a pread/pwrite loop.
//! There the ring's depth is the workers' threads, whose hand-offs cost more than their
//! parallelism gives back until the ring holds enough bytes, and where that lies depends on the
//! machine's CPUs: so it is measured, not ruled, and the path that does more I/Os a second
//! for its CPU per I/O is taken ([`Probe::winner`]). The probe runs before the run's counters,
//! trace and clock start, and its time and figures are said with the choice.
//! docs/architecture.md, "The engine auto picks at depth" and "More I/Os for the CPU".

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::io_threads::io_worker_threads;
use super::job::{EngineKind, Job, Mode};
use super::result::Probe;
use super::target::OpenTarget;
use super::{Timing, sample_until_done, spawn_jobs, uring_disabled_by_env};
use crate::sys::{Completion, Dir, UringQueue};

/// How long each path's counted part runs, after its ramp ([`ramp`]).
pub const PROBE: Duration = Duration::from_millis(60);

/// The start of a path's run that is not counted: for the ring 100 ms, the time a ring on zram
/// takes to reach its rate (10 ms slices of a 4K QD32 and a 16K QD16 ring: below it for the
/// first 80-110 ms, then within a few percent of it); for the loop 10 ms (steady after 20-40
/// ms, and counted as the median of its slices).
fn ramp(engine: EngineKind) -> Duration {
    match engine {
        EngineKind::Uring => Duration::from_millis(100),
        _ => Duration::from_millis(10),
    }
}

/// The engine a run starts with, and what to say of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Settled {
    pub engine: EngineKind,
    /// Why blkscope took it, when the job left the choice to it.
    pub why: Option<String>,
    /// Why io_uring is not used where it was to be (the environment turned it off).
    pub note: Option<String>,
    pub probe: Option<Probe>,
    /// `auto` polls for the completions (IOPOLL) on a queue that has poll queues: the run is
    /// `--hipri`'s ([`polls_by_default`]).
    pub polled: bool,
}

/// Why `auto` polls: the words of a result whose device has poll queues.
pub const POLLED_WHY: &str = "the device has poll queues (queue/io_poll 1): io_uring polls them \
     for each completion (IOPOLL, as --hipri), with no interrupt to wait for";

/// Whether `auto` runs `job` with polled completions on `target`: direct I/O on a device with
/// poll queues, which an administrator sets up for polled I/O (NVMe's `poll_queues`), where
/// neither a pread/pwrite loop nor an interrupt-driven ring gets a completion as soon (not a
/// virtual device's: [`OpenTarget::polls`]). Not with SQPOLL, nor where the job named its
/// engine.
pub fn polls_by_default(target: &OpenTarget, job: &Job) -> bool {
    target.polls
        && job.engine == EngineKind::Auto
        && job.mode == Mode::Direct
        && !job.hipri
        && !job.sqpoll
}

/// The engine `job` runs on `target`: see the module's words. A probe that cannot run (a job
/// that fails at once, a cancel) leaves the rule's choice, and the run says what failed.
pub fn settle(target: &OpenTarget, job: &Job, cancel: &Arc<AtomicBool>) -> Settled {
    let choice = job.engine_to_use();
    let ruled = Settled {
        engine: choice.engine,
        why: choice.why.map(str::to_string),
        note: None,
        probe: None,
        polled: false,
    };
    if choice.engine == EngineKind::Uring && uring_disabled_by_env() {
        // Not "unavailable": the user asked for it, and the kernel's io_uring was never tried.
        return Settled {
            engine: EngineKind::Psync,
            why: None,
            note: Some(
                "io_uring not used: BLKSCOPE_DISABLE_URING=1 is set; ran with pread/pwrite"
                    .to_string(),
            ),
            probe: None,
            polled: false,
        };
    }
    if polls_by_default(target, job) {
        return Settled {
            engine: EngineKind::Uring,
            why: Some(POLLED_WHY.to_string()),
            polled: true,
            ..ruled
        };
    }
    if !job.may_probe_engine() || !handed_to_workers(target, job) {
        return ruled;
    }
    let (Some(ring), Some(each)) = (
        run_path(target, job, EngineKind::Uring, cancel),
        run_path(target, job, EngineKind::Psync, cancel),
    ) else {
        return ruled;
    };
    let probe = Probe {
        seconds: PROBE.as_secs_f64(),
        ring_iops: ring.iops,
        loop_iops: each.iops,
        ring_cpu_us: ring.cpu_us(),
        loop_cpu_us: each.cpu_us(),
    };
    let engine = probe.winner();
    Settled {
        engine,
        why: Some(probed_why(&probe)),
        note: None,
        probe: Some(probe),
        polled: false,
    }
}

/// Whether io_uring hands the target's I/O to io-wq: one read of the job's first block on a
/// ring of its own, in a thread of its own, and then whether that thread has a worker (the
/// kernel starts one for the first I/O it cannot issue without blocking). A read, whatever the
/// job does: reads are always allowed.
fn handed_to_workers(target: &OpenTarget, job: &Job) -> bool {
    let Ok(file) = crate::sys::reopen(&target.file) else {
        return false;
    };
    let (bs, off) = (job.bs, job.offset);
    let read_one = move || -> bool {
        let Ok(mut q) = UringQueue::new(&file, 1, bs as usize, false, false, None) else {
            return false;
        };
        q.push(0, Dir::Read, off, bs as u32);
        let mut done: Vec<Completion> = Vec::with_capacity(1);
        if q.submit_and_wait(1, Some(Duration::from_secs(1))).is_err() {
            return false;
        }
        q.reap(&mut done);
        done.len() == 1 && io_worker_threads() > 0
    };
    std::thread::Builder::new()
        .name("blkscope-probe".into())
        .spawn(read_one)
        .ok()
        .and_then(|h| h.join().ok())
        .unwrap_or(false)
}

/// What one path did in the probe: its rate, and the process's CPU time over all its I/Os (the
/// ramp's too).
#[derive(Debug, Clone, Copy)]
struct Path {
    iops: f64,
    ios_done: u64,
    cpu: Duration,
}

impl Path {
    fn cpu_us(&self) -> f64 {
        self.cpu.as_secs_f64() * 1e6 / self.ios_done.max(1) as f64
    }
}

/// The probe's samples are this long; a path's rate is their median after its ramp, which one
/// stall of the machine's (a VM's host taking the CPU for a few milliseconds) does not move.
const SLICE: Duration = Duration::from_millis(10);

/// The job on `engine` for [`PROBE`] after its [`ramp`]; None when it failed, did nothing or
/// was cancelled.
fn run_path(
    target: &OpenTarget,
    job: &Job,
    engine: EngineKind,
    cancel: &Arc<AtomicBool>,
) -> Option<Path> {
    let short = Job {
        runtime: Some(PROBE),
        ramp: Some(ramp(engine)),
        interval: Some(SLICE),
        ..job.clone()
    };
    let timing = Timing::of(&short);
    let (u0, s0) = crate::sys::cpu_times();
    let jobs = spawn_jobs(target, &short, engine, timing, fastrand::u64(..), cancel).ok()?;
    // Its timed I/Os are drained and dropped, as a run's are kept.
    let (series, _) = sample_until_done(&jobs, timing, 0, cancel, |_, _| {});
    let outcomes: Vec<_> = jobs
        .handles
        .into_iter()
        .filter_map(|h| h.join().ok())
        .collect();
    let (u1, s1) = crate::sys::cpu_times();
    let failed = outcomes.iter().any(|o| o.error.is_some());
    // Whole slices after the ramp (the last one is cut short by the jobs' end).
    let mut rates: Vec<f64> = series
        .iter()
        .filter(|s| !s.ramp && s.interval_s >= SLICE.as_secs_f64() / 2.0)
        .map(|s| s.iops)
        .collect();
    rates.sort_by(f64::total_cmp);
    let ok = !failed && !rates.is_empty() && !cancel.load(Ordering::Relaxed);
    ok.then(|| Path {
        iops: rates[rates.len() / 2],
        ios_done: series.iter().map(|s| s.ios).sum(),
        cpu: (u1 + s1).saturating_sub(u0 + s0),
    })
}

/// Why the probe's winner ([`Probe::winner`]) was taken, with both paths' figures and how the
/// ring's compare with the loop's (the faster, where a path's CPU time did not move).
fn probed_why(p: &Probe) -> String {
    let head = "io_uring hands this target's I/O to the kernel's io-wq workers";
    let s = p.seconds;
    let (ring, ring_cpu) = (p.ring_iops.round(), p.ring_cpu_us);
    let (each, each_cpu) = (p.loop_iops.round(), p.loop_cpu_us);
    let each_path = "pread/pwrite, one I/O at a time per job,";
    let ring_won = p.winner() == EngineKind::Uring;
    let tail = match (p.timed_ratios(), ring_won) {
        (Some((rate, cost)), false) => {
            format!("the ring's {rate:.2}x the IOPS cost {cost:.2}x the CPU per I/O")
        }
        (Some((rate, cost)), true) => {
            format!("the ring's {rate:.2}x the IOPS for {cost:.2}x the CPU per I/O")
        }
        (None, _) => "a path's CPU time did not move in so short a probe: the faster".into(),
    };
    if ring_won {
        format!(
            "{head}; in a {s} s probe of each, the ring ran {ring} IOPS at {ring_cpu:.1} us of \
             CPU an I/O, and {each_path} {each} IOPS at {each_cpu:.1} us: {tail}"
        )
    } else {
        format!(
            "{head}; in a {s} s probe of each, {each_path} ran {each} IOPS at {each_cpu:.1} us \
             of CPU an I/O, and the ring {ring} IOPS at {ring_cpu:.1} us: {tail}"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(ring_iops: f64, loop_iops: f64, ring_cpu_us: f64, loop_cpu_us: f64) -> Probe {
        Probe {
            seconds: 0.1,
            ring_iops,
            loop_iops,
            ring_cpu_us,
            loop_cpu_us,
        }
    }

    #[test]
    fn the_path_that_does_more_ios_for_its_cpu_wins() {
        for (p, want) in [
            // The loop both faster and cheaper (zram, 4K QD8).
            (probe(158_000.0, 446_000.0, 6.7, 2.3), EngineKind::Psync),
            // The ring faster by less than its CPU per I/O grew (zram, 4K QD128 on 2 CPUs: its
            // second worker's CPU for a tenth more IOPS).
            (probe(576_000.0, 526_000.0, 2.65, 1.9), EngineKind::Psync),
            (probe(544_000.0, 464_000.0, 3.6, 2.2), EngineKind::Psync),
            // The ring faster by more than its CPU per I/O grew (zram, 1M QD4).
            (probe(7_600.0, 3_700.0, 269.0, 272.0), EngineKind::Uring),
            (probe(1_000_000.0, 500_000.0, 3.0, 2.0), EngineKind::Uring),
            // As fast: the cheaper, whichever that is; a tie, the loop.
            (probe(480_000.0, 462_000.0, 3.7, 2.3), EngineKind::Psync),
            (probe(462_000.0, 480_000.0, 2.0, 2.3), EngineKind::Uring),
            (probe(500_000.0, 500_000.0, 2.0, 2.0), EngineKind::Psync),
            // No CPU figure: the faster.
            (probe(600_000.0, 500_000.0, 0.0, 0.0), EngineKind::Uring),
            (probe(400_000.0, 500_000.0, 2.0, 0.0), EngineKind::Psync),
        ] {
            println!("{p:?}: {:?}, ratios {:?}", p.winner(), p.ratios());
            assert_eq!(p.winner(), want, "{p:?}");
        }
    }

    #[test]
    fn the_winner_is_said_with_both_figures_and_their_ratios() {
        let p = probe(158_509.4, 446_285.6, 6.71, 2.28);
        let w = probed_why(&p);
        println!("{w}");
        assert!(
            w.contains(
                "ran 446286 IOPS at 2.3 us of CPU an I/O, and the ring 158509 IOPS at 6.7 us"
            ),
            "{w}"
        );
        assert!(w.contains("0.1 s probe"), "{w}");
        let p = probe(576_000.0, 526_000.0, 2.65, 1.9);
        let w = probed_why(&p);
        println!("{w}");
        assert!(
            w.ends_with("the ring's 1.10x the IOPS cost 1.39x the CPU per I/O"),
            "{w}"
        );
        let p = probe(7_600.0, 3_700.0, 269.0, 272.0);
        let w = probed_why(&p);
        println!("{w}");
        assert!(
            w.contains("the ring ran 7600 IOPS at 269.0 us of CPU an I/O")
                && w.ends_with("the ring's 2.05x the IOPS for 0.99x the CPU per I/O"),
            "{w}"
        );
        // A CPU figure of 0 (a probe shorter than the clock's step): no ratio of it is said.
        for p in [
            probe(600_000.0, 500_000.0, 0.0, 0.0),
            probe(400_000.0, 500_000.0, 2.0, 0.0),
        ] {
            let w = probed_why(&p);
            println!("{w}");
            assert!(!w.contains("inf") && !w.contains("NaN"), "{w}");
            assert!(w.ends_with("so short a probe: the faster"), "{w}");
        }
    }
}
