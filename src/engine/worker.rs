//! One job thread: issues I/O over its region with io_uring (or pread/pwrite), times every
//! completion into a histogram, and hands interval figures to the sampler at most every 10 ms
//! (one uncontended lock per flush, none per I/O).

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;

use super::few::Trial;
use super::io_threads::{io_worker_threads, sq_poller_workers};
use super::job::{Data, EngineKind, Op};
use super::pattern::{Pattern, Shuffle, body_pattern, shuffle_key, stamp};
use super::result::IoFailure;
use super::wait::{Spin, WAKE_NS, WaitShare};
use super::zeros::ZeroSampler;
use crate::device::extents::sector_of;
use crate::sys::{AlignedBuf, Completion, Dir, UringQueue};
use crate::trace::pick::Pick;

pub(crate) fn new_histogram() -> Histogram<u64> {
    // 1 ns to 1 hour at 3 significant digits: no resizing, so recording never allocates.
    Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("histogram bounds")
}

/// The histogram of one interval (a live sample's percentiles and heatmap column): 2 significant
/// digits, so a percentile is within 1% (fio's latency bins are ~1.6% wide; the run's own
/// histogram keeps 3). Its counts take 36 KiB where 3 digits take 264 KiB, which each job's two
/// copies write every flush (docs/architecture.md, "Smaller costs the engine avoids").
pub(crate) fn new_interval_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 3_600_000_000_000, 2).expect("histogram bounds")
}

/// Figures accumulated since the sampler last took them.
pub(crate) struct IntervalAcc {
    pub bytes: u64,
    pub read_bytes: u64,
    pub ios: u64,
    pub hist: Histogram<u64>,
    pub total_bytes: u64,
    /// I/Os timed since (`trace::pick`), and the level the sampler keeps them at, which the
    /// job takes up at each hand-over so as not to hand over what would be dropped.
    pub timed: Vec<TimedIo>,
    pub pick: Pick,
    /// Whether the job is in its final fdatasync.
    pub flushing: bool,
}

impl IntervalAcc {
    pub fn new() -> Self {
        Self {
            bytes: 0,
            read_bytes: 0,
            ios: 0,
            hist: new_interval_histogram(),
            total_bytes: 0,
            timed: Vec::new(),
            pick: Pick::default(),
            flushing: false,
        }
    }
}

pub(crate) struct WorkerSpec {
    pub op: Op,
    pub bs: u64,
    pub iodepth: u32,
    pub region_start: u64,
    pub region_len: u64,
    /// Run until this instant instead of once over the region.
    pub deadline: Option<Instant>,
    pub ramp_end: Instant,
    pub data: Data,
    pub rwmixread: u8,
    pub fdatasync_at_end: bool,
    /// O_DIRECT (`--mode direct`): what reaches io-wq then says what the device can take
    /// without blocking, not what the page cache held at the moment.
    pub direct: bool,
    pub sqpoll: bool,
    /// io_uring IOPOLL.
    pub hipri: bool,
    pub engine: EngineKind,
    pub seed: u64,
    /// Bind this job's thread and its io-wq workers to these CPUs.
    pub cpus: Option<super::cpus::CpuList>,
    /// Where the target's bytes lie on the traced device (512-byte sectors), where the job's
    /// I/Os are its bios (direct I/O): some are then timed ([`TimedIo`]).
    pub sectors: Option<super::target::Sectors>,
}

/// One of the job's I/Os, by the sector the block layer sees it at, with when it was submitted
/// and completed (ns of CLOCK_MONOTONIC, the trace's clock too).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimedIo {
    pub sector: u64,
    pub submitted: u64,
    pub completed: u64,
}

pub(crate) struct WorkerOutcome {
    pub hist: Histogram<u64>,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub ios: u64,
    /// First and last moments that count (after the ramp).
    pub counted_from: Option<Instant>,
    pub counted_to: Option<Instant>,
    pub error: Option<IoFailure>,
    pub engine_note: Option<String>,
    pub engine_used: EngineKind,
    /// Writes completed, the ramp included: what `verify` reads back.
    pub writes_done: u64,
    /// io_uring worker threads (io-wq) of the job's thread when its I/O ended: the kernel ran
    /// the job's I/O in them because it could not issue it without blocking.
    pub io_workers: usize,
    /// The kernel handed the job's first I/Os to io-wq, so the rest were sent there at once
    /// (IOSQE_ASYNC): [`hand_over_if_punted`].
    pub to_workers: bool,
    /// The job polled its ring for completions instead of sleeping when it decided on the
    /// hand-over ([`Spin`]; a shallow ring of fast completions).
    pub busy_polled: bool,
    /// The job woke for a few completions at a time, its trial having found that faster (or
    /// as fast, at less CPU) on this device than the rate rule's share (`engine/few.rs`).
    pub few_per_wake: bool,
    /// Blocks sampled from what reads returned, and how many of them were all zeros.
    pub zeros: ZeroSampler,
}

/// The job's clock: CLOCK_MONOTONIC as nanoseconds in a u64 (`sys::monotonic_ns`), so that a
/// latency is one subtraction. Under callgrind, `Instant` arithmetic (four checked subtractions
/// an I/O, ~74 instructions each) was a sixth of the job thread's instructions per 4K read at
/// QD32. The engine outside the job keeps `Instant`s; `ns` and `instant` convert at the edges,
/// from one pair of readings of the same clock taken together (tens of nanoseconds apart).
#[derive(Clone, Copy)]
struct Clock {
    base: Instant,
    base_ns: u64,
}

impl Clock {
    fn new() -> Self {
        Self {
            base: Instant::now(),
            base_ns: crate::sys::monotonic_ns(),
        }
    }

    #[inline]
    fn now(&self) -> u64 {
        crate::sys::monotonic_ns()
    }

    fn ns(&self, i: Instant) -> u64 {
        match i.checked_duration_since(self.base) {
            Some(d) => self.base_ns.saturating_add(d.as_nanos() as u64),
            None => self
                .base_ns
                .saturating_sub((self.base - i).as_nanos() as u64),
        }
    }

    fn instant(&self, ns: u64) -> Instant {
        if ns >= self.base_ns {
            self.base + Duration::from_nanos(ns - self.base_ns)
        } else {
            self.base - Duration::from_nanos(self.base_ns - ns)
        }
    }
}

/// How often a job hands its interval figures to the sampler.
const FLUSH_EVERY_NS: u64 = 10_000_000;

struct Recorder<'a> {
    acc: &'a Mutex<IntervalAcc>,
    local: IntervalAcc,
    next_flush: u64,
    out: WorkerOutcome,
    /// On the job's clock: the ramp's end, and the first and last moments that count.
    ramp_end: u64,
    counted_from: Option<u64>,
    counted_to: Option<u64>,
    /// Where the target's bytes lie where the job's I/Os are timed, and which of them are.
    sectors: Option<super::target::Sectors>,
    pick: Pick,
}

impl Recorder<'_> {
    /// Tells the sampler the job is in its final fdatasync.
    fn flushing(&mut self) {
        if let Ok(mut a) = self.acc.lock() {
            a.flushing = true;
        }
    }

    /// Counts a completed I/O at `off`: its latency and the moment it completed, on the job's
    /// clock.
    #[inline]
    fn record(&mut self, dir: Dir, bytes: u64, off: u64, lat: u64, now: u64) {
        if dir == Dir::Write {
            self.out.writes_done += 1;
        }
        let ns = lat.max(1);
        self.local.bytes += bytes;
        if dir == Dir::Read {
            self.local.read_bytes += bytes;
        }
        self.local.ios += 1;
        self.local.total_bytes += bytes;
        let _ = self.local.hist.record(ns);
        if now >= self.ramp_end {
            if self.counted_from.is_none() {
                // From when the first counted I/O was issued, but not before the ramp's end.
                self.counted_from = Some(now - lat.min(now - self.ramp_end));
            }
            self.counted_to = Some(now);
            let sector = self.sectors.as_ref().and_then(|m| sector_of(m, off));
            if let Some(sector) = sector.filter(|&s| self.pick.keeps(s)) {
                self.local.timed.push(TimedIo {
                    sector,
                    submitted: now - lat,
                    completed: now,
                });
            }
            let _ = self.out.hist.record(ns);
            self.out.ios += 1;
            match dir {
                Dir::Read => self.out.read_bytes += bytes,
                Dir::Write => self.out.write_bytes += bytes,
            }
        }
        if now >= self.next_flush {
            self.flush(now);
        }
    }

    fn flush(&mut self, now: u64) {
        if let Ok(mut a) = self.acc.lock() {
            a.bytes += self.local.bytes;
            a.read_bytes += self.local.read_bytes;
            a.ios += self.local.ios;
            a.total_bytes += self.local.total_bytes;
            let _ = a.hist.add(&self.local.hist);
            a.timed.append(&mut self.local.timed);
            self.pick = a.pick;
        }
        self.local.bytes = 0;
        self.local.read_bytes = 0;
        self.local.ios = 0;
        self.local.total_bytes = 0;
        self.local.hist.reset();
        self.next_flush = now.saturating_add(FLUSH_EVERY_NS);
    }

    /// Hands the last figures to the sampler and returns the outcome, its moments as `Instant`s.
    fn finish(mut self, clock: &Clock) -> WorkerOutcome {
        self.flush(clock.now());
        self.out.counted_from = self.counted_from.map(|n| clock.instant(n));
        self.out.counted_to = self.counted_to.map(|n| clock.instant(n));
        self.out
    }
}

fn failure(op: Dir, offset: u64, errno: Option<i32>, message: String) -> IoFailure {
    IoFailure {
        message,
        errno,
        offset: Some(offset),
        op: match op {
            Dir::Read => "read",
            Dir::Write => "write",
        },
    }
}

/// What an I/O's error means, in the user's words first: the errors a failing disk or its
/// transport gives say what happened (the kernel's ENODATA is a medium error, "No data
/// available" says nothing of it); the rest as the C library words them.
pub(crate) fn errno_message(code: i32) -> String {
    let what = match code {
        libc::ENODATA => "unreadable sector (medium error: the device could not read it back)",
        libc::EIO => "I/O error (the device or its transport failed the request)",
        libc::ETIMEDOUT => "the device did not answer in time (a transport timeout)",
        libc::ENOLINK => "the link to the device is down (the transport failed)",
        libc::EILSEQ => {
            "the data failed its integrity check (a checksum or protection information did not \
             match: the block was never written through it, or it changed underneath)"
        }
        _ => {
            return format!(
                "{} ({})",
                std::io::Error::from_raw_os_error(code),
                crate::device::safety::errno_name(code)
            );
        }
    };
    format!("{what} ({})", crate::device::safety::errno_name(code))
}

/// What every loop of a job shares: its spec, clock, offsets, figures and when to stop.
struct Ctx<'a> {
    spec: &'a WorkerSpec,
    clock: Clock,
    pattern: Pattern,
    rec: Recorder<'a>,
    cancel: &'a AtomicBool,
    /// The deadline on the job's clock.
    deadline: Option<u64>,
    /// A ring's I/Os in flight at its last wait ([`NOT_A_RING`] for a pread/pwrite job).
    in_flight: &'a AtomicU32,
}

/// What a pread/pwrite job's `in_flight` holds while it loops: its one I/O is in flight until
/// it ends. (0 before a job's loop and after it.)
pub(crate) const NOT_A_RING: u32 = u32::MAX;

/// The bit of a ring's `in_flight` that says it has stopped issuing.
pub(crate) const DRAINING: u32 = 1 << 31;

impl Ctx<'_> {
    /// Cancelled, or past the deadline at `now`.
    #[inline]
    fn should_stop(&self, now: u64) -> bool {
        self.cancel.load(Ordering::Relaxed) || self.deadline.is_some_and(|d| now >= d)
    }

    /// Random data goes into write buffers: the body is laid down once, each write stamped.
    fn random_writes(&self) -> bool {
        self.spec.data == Data::Random
    }

    /// Records the first error of the job (later ones are consequences).
    fn fail(&mut self, e: IoFailure) {
        if self.rec.out.error.is_none() {
            self.rec.out.error = Some(e);
        }
    }
}

/// A failure that is not one I/O's (binding CPUs, submitting, the final flush).
fn setup_failure(op: &'static str, message: String, e: &std::io::Error) -> IoFailure {
    IoFailure {
        message,
        errno: e.raw_os_error(),
        offset: None,
        op,
    }
}

/// Runs one job thread to the end, a cancel request, or the first I/O error.
pub(crate) fn run_worker(
    spec: WorkerSpec,
    file: File,
    cancel: Arc<AtomicBool>,
    acc: Arc<Mutex<IntervalAcc>>,
    in_flight: Arc<AtomicU32>,
) -> WorkerOutcome {
    let clock = Clock::new();
    let mut cx = Ctx {
        in_flight: &in_flight,
        pattern: pattern_of(&spec),
        rec: recorder(&spec, &acc, &clock),
        deadline: spec.deadline.map(|d| clock.ns(d)),
        clock,
        cancel: &cancel,
        spec: &spec,
    };
    if let Some(cpus) = &spec.cpus
        && let Err(e) = crate::sys::bind_thread(cpus.cpus())
    {
        let message = format!("cannot run on CPUs {cpus}: {e}");
        cx.rec.out.error = Some(setup_failure("setup", message, &e));
        return cx.rec.out;
    }
    let (engine, queue) = open_queue(&spec, &file, &mut cx.rec.out);
    cx.rec.out.engine_used = engine;
    match (engine, queue) {
        (EngineKind::Null, _) => {
            null_loop(&mut cx);
            return cx.rec.finish(&cx.clock);
        }
        (_, Some(mut q)) => {
            uring_loop(&mut cx, &mut q);
            in_flight.store(0, Ordering::Relaxed);
            cx.rec.out.io_workers = io_worker_threads();
        }
        (_, None) => {
            in_flight.store(NOT_A_RING, Ordering::Relaxed);
            psync_loop(&mut cx, &file);
            in_flight.store(0, Ordering::Relaxed);
        }
    }
    if spec.fdatasync_at_end && cx.rec.out.error.is_none() && !cancel.load(Ordering::Relaxed) {
        // dd conv=fdatasync: the flush is part of the timed region.
        cx.rec.flushing();
        if let Err(e) = file.sync_data() {
            let message = format!("fdatasync failed: {e}");
            cx.rec.out.error = Some(setup_failure("fdatasync", message, &e));
        } else if cx.rec.counted_to.is_some() {
            cx.rec.counted_to = Some(cx.clock.now());
        }
    }
    cx.rec.finish(&cx.clock)
}

/// The job's offsets: once over its region, or pass after pass until the deadline.
fn pattern_of(spec: &WorkerSpec) -> Pattern {
    let blocks = (spec.region_len / spec.bs).max(1);
    Pattern {
        op: spec.op,
        bs: spec.bs,
        start: spec.region_start,
        blocks,
        next: 0,
        remaining: if spec.deadline.is_some() {
            None
        } else {
            Some(blocks)
        },
        rng: fastrand::Rng::with_seed(spec.seed),
        rwmixread: spec.rwmixread,
        shuffle: Shuffle::new(blocks, shuffle_key(spec.seed)),
    }
}

fn recorder<'a>(spec: &WorkerSpec, acc: &'a Mutex<IntervalAcc>, clock: &Clock) -> Recorder<'a> {
    Recorder {
        acc,
        local: IntervalAcc::new(),
        next_flush: clock.now().saturating_add(FLUSH_EVERY_NS),
        out: WorkerOutcome {
            hist: new_histogram(),
            read_bytes: 0,
            write_bytes: 0,
            ios: 0,
            counted_from: None,
            counted_to: None,
            error: None,
            engine_note: None,
            engine_used: spec.engine,
            writes_done: 0,
            io_workers: 0,
            to_workers: false,
            busy_polled: false,
            few_per_wake: false,
            zeros: ZeroSampler::for_region(spec.region_len),
        },
        ramp_end: clock.ns(spec.ramp_end),
        counted_from: None,
        counted_to: None,
        sectors: spec.sectors.clone(),
        pick: Pick::default(),
    }
}

/// The job's ring when it runs on io_uring; where the ring cannot be set up, pread/pwrite and
/// a note saying why.
fn open_queue(
    spec: &WorkerSpec,
    file: &File,
    out: &mut WorkerOutcome,
) -> (EngineKind, Option<UringQueue>) {
    if spec.engine != EngineKind::Uring {
        return (spec.engine, None);
    }
    match UringQueue::new(
        file,
        spec.iodepth,
        spec.bs as usize,
        spec.sqpoll,
        spec.hipri,
        spec.cpus.as_ref().map(|c| c.cpus()),
    ) {
        Ok(q) => (EngineKind::Uring, Some(q)),
        Err(e) => {
            out.engine_note = Some(super::uring_unavailable_note(&e));
            (EngineKind::Psync, None)
        }
    }
}

/// No I/O: each "I/O" is issued and completed at once, in batches of iodepth, with the same
/// pattern, stamping and recording as a real one; what is left is the harness.
fn null_loop(cx: &mut Ctx) {
    let spec = cx.spec;
    let depth = spec.iodepth.max(1) as usize;
    let mut buf = vec![0u8; spec.bs as usize];
    loop {
        let t0 = cx.clock.now();
        if cx.should_stop(t0) {
            return;
        }
        for _ in 0..depth {
            let Some((off, dir)) = cx.pattern.next() else {
                return;
            };
            if dir == Dir::Write && cx.random_writes() {
                stamp(&mut buf, off, spec.seed);
            }
            let now = cx.clock.now();
            cx.rec
                .record(dir, spec.bs, off, now.saturating_sub(t0), now);
        }
    }
}

/// The I/Os in flight on a ring: which buffer slots are free, and for each slot in use when
/// it was issued, its direction and its offset.
struct Slots {
    free: Vec<usize>,
    started: Vec<u64>,
    dirs: Vec<Dir>,
    offsets: Vec<u64>,
}

impl Slots {
    fn new(depth: usize, now: u64) -> Self {
        Self {
            free: (0..depth).rev().collect(),
            started: vec![now; depth],
            dirs: vec![Dir::Read; depth],
            offsets: vec![0u64; depth],
        }
    }
}

/// io_uring: keeps the ring full, waits for a share of what is in flight, records what came
/// back.
fn uring_loop(cx: &mut Ctx, q: &mut UringQueue) {
    let spec = cx.spec;
    let depth = spec.iodepth as usize;
    if cx.random_writes() {
        let body = body_pattern(spec.seed, spec.bs as usize);
        for s in 0..depth {
            q.buf_mut(s).copy_from_slice(&body);
        }
    }
    // One clock read a round: after the reap, which also times the next issues.
    let mut now = cx.clock.now();
    let mut slots = Slots::new(depth, now);
    let mut done: Vec<Completion> = Vec::with_capacity(depth);
    let mut issuing = true;
    // The wait is bounded (to notice a cancel or the deadline) only once one was slow: the
    // timer is not free (docs/architecture.md).
    let mut slow = false;
    // Polling needs another CPU for whatever completes the I/O (an io-wq worker): on the job's
    // only one it would take that CPU from the worker.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut w = Waits::new(cx, depth, now, cpus);
    loop {
        if cx.should_stop(now) || cx.rec.out.error.is_some() {
            issuing = false;
        }
        if issuing {
            issuing = issue(cx, q, &mut slots, now);
        }
        if q.in_flight() == 0 {
            return;
        }
        // For the sampler, should the device not complete them (one store a wait).
        let draining = if issuing { 0 } else { DRAINING };
        cx.in_flight
            .store(q.in_flight() as u32 | draining, Ordering::Relaxed);
        let waited_from = now;
        let in_flight = q.in_flight();
        done.clear();
        // Draining, every wait is bounded (docs/architecture.md, "A device that does not
        // complete what was issued").
        if let Err(e) = w.wait(cx, q, &mut done, slow || !issuing) {
            let message = format!("io_uring submit failed: {e}");
            cx.rec.out.error = Some(setup_failure("submit", message, &e));
            issuing = false;
            continue;
        }
        now = cx.clock.now();
        slow = now.saturating_sub(waited_from) > 10_000_000;
        w.reaped(cx, q, done.len(), in_flight, now);
        complete(cx, q, &mut slots, &done, now);
    }
}

/// How a ring's job waits: its share of the ring ([`WaitShare`]), its polling ([`Spin`]) and,
/// once settled, its trial of waking for few ([`Trial`]).
struct Waits {
    share: WaitShare,
    spin: Spin,
    /// Whether the job may poll a shallow ring of fast completions ([`Spin`]): not with SQPOLL
    /// or IOPOLL, nor on one CPU.
    may_poll: bool,
    /// Whether the job polls for every completion of its SQ poller's ring instead of sleeping
    /// ([`SQ_POLL_CHECKS_EVERY`]): with more than one CPU, until it settles to find the poller
    /// handing the I/O to io-wq.
    polls_sq: bool,
    trial: Option<Trial>,
    depth: usize,
    cpus: usize,
    reaped: usize,
    last_reap: u64,
}

impl Waits {
    fn new(cx: &mut Ctx, depth: usize, now: u64, cpus: usize) -> Self {
        let spec = cx.spec;
        let polls_sq = spec.sqpoll && cpus > 1;
        cx.rec.out.busy_polled = polls_sq;
        Waits {
            share: WaitShare::new(),
            spin: Spin::new(),
            may_poll: !(spec.sqpoll || spec.hipri) && cpus > 1,
            polls_sq,
            trial: None,
            depth,
            cpus,
            reaped: 0,
            last_reap: now,
        }
    }

    /// Submits what is queued and waits for all but what keeps the device busy while this
    /// thread wakes (engine/wait.rs), polling where that costs less than a sleep; with an SQ
    /// poller, polls for the first completion. The wait is bounded by a timer once one was
    /// `slow` (to notice a cancel while a slow device works).
    fn wait(
        &mut self,
        cx: &Ctx,
        q: &mut UringQueue,
        done: &mut Vec<Completion>,
        slow: bool,
    ) -> std::io::Result<()> {
        if self.polls_sq {
            return q.poll_completions(done, 1, SQ_POLL_CHECKS_EVERY);
        }
        let want = self.share.want(q.in_flight(), self.depth);
        let per_io_ns = self.share.per_io_ns();
        if self.may_poll && self.spin.worth(want, self.depth, per_io_ns) {
            self.spin.record(poll_for(cx, q, done, want));
        }
        if done.len() < want {
            let timeout = slow.then_some(Duration::from_millis(50));
            q.submit_and_wait(want - done.len(), timeout)?;
        }
        q.reap(done);
        Ok(())
    }

    /// `n` of the `in_flight` I/Os came back at `now`.
    fn reaped(&mut self, cx: &mut Ctx, q: &mut UringQueue, n: usize, in_flight: usize, now: u64) {
        if n > 0 {
            (self.share).observe(now.saturating_sub(self.last_reap), n, in_flight);
            self.last_reap = now;
        }
        // Once, when the first ring's worth (and a few more, to see whether polls catch
        // their completions) has come back.
        let settled = self.depth.max(HAND_OVER_AFTER);
        if self.reaped < settled && self.reaped + n >= settled {
            self.settle(cx, q, now);
        } else if let Some(t) = &mut self.trial {
            if let Some(few) = t.completed(n, now, crate::sys::thread_cpu_ns) {
                cx.rec.out.few_per_wake = few;
                self.share.wake_for_few(few);
                self.trial = None;
            } else {
                self.share.wake_for_few(t.few());
            }
        }
        self.reaped += n;
    }

    /// Polling or not, io-wq or not, and whether to try waking for few. A job of an SQ poller
    /// whose I/O the poller hands to io-wq stops polling: the workers doing the I/O need the
    /// CPU it would spin on (docs/architecture.md, "An SQ poller's job polls too").
    fn settle(&mut self, cx: &mut Ctx, q: &mut UringQueue, now: u64) {
        self.polls_sq &= sq_poller_workers() == 0;
        let polling = self.spin.polling(self.depth, self.share.per_io_ns());
        cx.rec.out.busy_polled = polling || self.polls_sq;
        hand_over_if_punted(cx, q, polling, self.cpus);
        self.trial = tries_waking_for_few(cx, polling, self.depth)
            .then(|| Trial::new(self.depth, now, crate::sys::thread_cpu_ns()));
    }
}

/// Whether the job tries waking for a few completions (`engine/few.rs`): a ring of at least
/// `few::TRIED_FROM` of direct I/O that the device completes itself (not handed to io-wq, not
/// polled, SQPOLL or IOPOLL).
fn tries_waking_for_few(cx: &Ctx, polling: bool, depth: usize) -> bool {
    let spec = cx.spec;
    let waits_another_way = polling || spec.sqpoll || spec.hipri || cx.rec.out.to_workers;
    super::few::tried(depth, spec.direct, waits_another_way)
}

/// Polls the ring for completions, submitting what is queued on the first call, until `want`
/// have come (true) or [`WAKE_NS`] has passed (false): [`Spin`].
fn poll_for(cx: &Ctx, q: &mut UringQueue, done: &mut Vec<Completion>, want: usize) -> bool {
    let from = cx.clock.now();
    loop {
        if q.submit_and_wait(0, None).is_err() {
            // The wait that follows submits again and reports it.
            return false;
        }
        q.reap(done);
        if done.len() >= want {
            return true;
        }
        if cx.clock.now().saturating_sub(from) > WAKE_NS {
            return false;
        }
    }
}

/// How long a job of an SQPOLL ring polls its completion ring before it looks at the clock
/// for a cancel or the run's end: with SQPOLL and more than one CPU the job polls for its
/// completions instead of sleeping in io_uring_enter, as fio's `--sqthread_poll` does
/// ([`UringQueue::poll_completions`]; docs/architecture.md, "An SQ poller's job polls too").
const SQ_POLL_CHECKS_EVERY: Duration = Duration::from_millis(10);

/// Completions seen before [`hand_over_if_punted`] decides (at least the first ring's worth).
const HAND_OVER_AFTER: usize = 32;

/// When the kernel could not issue the job's first I/Os without blocking and handed them to
/// io-wq workers (a driver without NOWAIT such as zram, an I/O too large for one request), the
/// rest go there as they are submitted, unless the job is polling ([`Spin`]). Each I/O then
/// skips an attempt that fails, and io-wq may run them on more than one worker: left to the
/// failed attempts it starts a second worker only when the first blocks, which a zram read
/// never does, so one thread did every I/O. fio does the same with `--force_async=1`.
///
/// A polling job (a shallow ring of fast I/Os) keeps its CPU busy: there one worker on
/// another CPU does the I/O while the job polls for it, and the workers are held to one
/// fewer than the CPUs so that none takes turns with the job. The decision is made once, at
/// [`HAND_OVER_AFTER`] completions. Measurements: docs/architecture.md, "Handing I/O to
/// io-wq".
///
/// Not with SQPOLL or IOPOLL, whose I/O is issued by other means, and only for direct I/O: a
/// buffered I/O goes to io-wq or not by what the page cache holds at that moment, and one
/// that would have completed in the page cache at once is better not sent to a thread.
fn hand_over_if_punted(cx: &mut Ctx, q: &mut UringQueue, polling: bool, cpus: usize) {
    if cx.spec.sqpoll || cx.spec.hipri || !cx.spec.direct || io_worker_threads() == 0 {
        return;
    }
    if polling {
        q.hold_workers(cpus - 1);
    } else {
        q.send_to_workers(cpus);
        cx.rec.out.to_workers = true;
    }
}

/// Fills the free slots with the next I/Os; false once the pattern has no more.
#[inline]
fn issue(cx: &mut Ctx, q: &mut UringQueue, slots: &mut Slots, now: u64) -> bool {
    let spec = cx.spec;
    while let Some(slot) = slots.free.pop() {
        let Some((off, dir)) = cx.pattern.next() else {
            slots.free.push(slot);
            return false;
        };
        slots.started[slot] = if dir == Dir::Write && cx.random_writes() {
            stamp(q.buf_mut(slot), off, spec.seed);
            cx.clock.now()
        } else {
            now
        };
        slots.dirs[slot] = dir;
        slots.offsets[slot] = off;
        q.push(slot, dir, off, spec.bs as u32);
    }
    true
}

/// Records the completions reaped at `now` and frees their slots; an error or a short I/O is
/// the job's error (the first one).
#[inline]
fn complete(cx: &mut Ctx, q: &UringQueue, slots: &mut Slots, done: &[Completion], now: u64) {
    let bs = cx.spec.bs;
    for c in done {
        let s = c.slot;
        slots.free.push(s);
        let (dir, off) = (slots.dirs[s], slots.offsets[s]);
        if c.result < 0 {
            cx.fail(failure(dir, off, Some(-c.result), errno_message(-c.result)));
            continue;
        }
        if c.result as u64 != bs {
            let message = format!("short I/O: {} of {} bytes", c.result, bs);
            cx.fail(failure(dir, off, None, message));
            continue;
        }
        cx.rec
            .record(dir, bs, off, now.saturating_sub(slots.started[s]), now);
        if dir == Dir::Read {
            cx.rec.out.zeros.see(bs, || q.buf(s));
        }
    }
}

/// pread/pwrite: one I/O at a time, each timed around its system call.
fn psync_loop(cx: &mut Ctx, file: &File) {
    let spec = cx.spec;
    let mut buf = AlignedBuf::new(spec.bs as usize, 4096);
    if cx.random_writes() {
        buf.as_mut_slice()
            .copy_from_slice(&body_pattern(spec.seed, spec.bs as usize));
    }
    loop {
        if cx.should_stop(cx.clock.now()) {
            return;
        }
        let Some((off, dir)) = cx.pattern.next() else {
            return;
        };
        if dir == Dir::Write && cx.random_writes() {
            stamp(buf.as_mut_slice(), off, spec.seed);
        }
        let t0 = cx.clock.now();
        let r = match dir {
            Dir::Read => file.read_at(buf.as_mut_slice(), off),
            Dir::Write => file.write_at(buf.as_slice(), off),
        };
        let now = cx.clock.now();
        let e = match r {
            Ok(n) if n as u64 == spec.bs => {
                cx.rec
                    .record(dir, spec.bs, off, now.saturating_sub(t0), now);
                if dir == Dir::Read {
                    cx.rec.out.zeros.see(spec.bs, || buf.as_slice());
                }
                continue;
            }
            Ok(n) => failure(
                dir,
                off,
                None,
                format!("short I/O: {n} of {} bytes", spec.bs),
            ),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => {
                let code = e.raw_os_error();
                let message = code.map(errno_message).unwrap_or_else(|| e.to_string());
                failure(dir, off, code, message)
            }
        };
        cx.rec.out.error = Some(e);
        return;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failing_disks_errors_are_said_in_the_users_words() {
        for (code, want) in [
            (libc::ENODATA, "unreadable sector (medium error"),
            (libc::EIO, "I/O error (the device or its transport"),
            (libc::ETIMEDOUT, "did not answer in time"),
            (libc::ENOLINK, "link to the device is down"),
            (libc::EILSEQ, "integrity check"),
        ] {
            let m = errno_message(code);
            println!("{code}: {m}");
            assert!(m.contains(want), "{m}");
            assert!(!m.contains("os error"), "{m}");
        }
        // The rest as the C library says it, with the name.
        let m = errno_message(libc::EINVAL);
        assert!(
            m.contains("Invalid argument") && m.contains("EINVAL"),
            "{m}"
        );
    }

    #[test]
    fn an_interval_histogram_is_small_and_its_percentiles_within_one_percent() {
        // Each job keeps two (its own and the sampler's) and clears them 100 times a second,
        // which writes every page: at 3 digits (264 KiB) 256 jobs held 75 MB more.
        let kib = |h: &Histogram<u64>| h.distinct_values() * 8 / 1024;
        let (run, mut iv) = (new_histogram(), new_interval_histogram());
        println!("counts: run {} KiB, interval {} KiB", kib(&run), kib(&iv));
        assert!(kib(&iv) <= 40, "interval histogram takes {} KiB", kib(&iv));
        let mut run = run;
        // Latencies from 3 us to about 30 ms, spread over the decades.
        let mut x = 3_000f64;
        while x < 3e7 {
            run.record(x as u64).unwrap();
            iv.record(x as u64).unwrap();
            x *= 1.003;
        }
        for q in [0.5, 0.9, 0.99, 0.999] {
            let (a, b) = (run.value_at_quantile(q), iv.value_at_quantile(q));
            println!("q{q}: run {a} ns, interval {b} ns");
            assert!(
                (b as f64 - a as f64).abs() <= a as f64 * 0.01,
                "q{q}: {a} against {b}"
            );
        }
        let (ra, rb) = (
            super::super::result::lat_buckets(&run),
            super::super::result::lat_buckets(&iv),
        );
        println!("heatmap column: run {ra:?}\n          interval {rb:?}");
        assert_eq!(ra.iter().sum::<u32>(), rb.iter().sum::<u32>());
        for (i, (a, b)) in ra.iter().zip(&rb).enumerate() {
            assert!(a.abs_diff(*b) <= a / 50 + 1, "bucket {i}: {a} against {b}");
        }
    }

    #[test]
    fn the_job_clock_converts_to_instants_and_back() {
        // How far apart the clock's two base readings can be: no more than Clock::new took.
        let t0 = Instant::now();
        let c = Clock::new();
        let skew = (Instant::now() - t0).as_nanos() as u64;
        let later = c.base + Duration::from_millis(1500);
        let earlier = c.base - Duration::from_millis(20);
        for i in [c.base, later, earlier] {
            let back = c.instant(c.ns(i));
            println!("{i:?} -> {} ns -> {back:?}", c.ns(i));
            assert_eq!(back, i, "exact both ways");
        }
        assert_eq!(c.ns(later) - c.ns(earlier), 1_520_000_000);
        // The same clock as Instant: a reading taken between two Instants lies between them,
        // give or take the base readings' skew.
        let (a, n, b) = (Instant::now(), c.now(), Instant::now());
        println!("{} <= {n} <= {} ns, skew up to {skew} ns", c.ns(a), c.ns(b));
        assert!(c.ns(a) <= n + skew && n <= c.ns(b) + skew);
    }
}
