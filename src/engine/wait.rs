//! How many completions a job waits for before it wakes to reap and refill its ring.
//!
//! Every wake costs: whatever completes an I/O (an interrupt, an io-wq worker) wakes the job,
//! in a VM often with an interrupt to a halted vCPU, and where the job shares a CPU with the
//! workers doing its I/O, two context switches. Waking for few completions pays that often;
//! sleeping through many lets the queue run dry while the job wakes, and the device (or the
//! workers) then wait for the job.
//!
//! So the job waits for all but what keeps the device busy while it wakes: the completions
//! that come in [`WAKE_NS`] at the rate this ring has seen, at least one and at most half of
//! what is in flight (the device never sees fewer than half the asked depth). The rate is
//! taken only from rounds where the queue did not run dry (fewer came back than were in
//! flight): a round that drained it measured the job's own wake as well, and would make the
//! device look slower, the wait longer and the queue drier still. A shallow ring
//! ([`SHALLOW`]) of fast completions waits for one. Why these rules, with their measurements:
//! docs/architecture.md, "How many completions a job waits for".
//!
//! A job waiting for one completion that comes sooner than a wake would take polls for it
//! instead of sleeping: [`Spin`].

/// Rings this deep or shallower wait for one completion when their completions come less
/// than [`POLL_NS`] apart (and then poll for it: [`Spin`]): a queue of eight barely outlasts a
/// wake, so its measured rate would include the job's own wake.
pub const SHALLOW: usize = 8;

/// About how long a sleeping job takes to wake, reap and submit again (a VM's halted vCPU
/// included); the I/Os that complete in this time are left in flight.
pub const WAKE_NS: u64 = 30_000;

/// A ring deeper than [`SHALLOW`] that wakes for a few completions ([`WaitShare::wake_for_few`])
/// waits for at most this part of what is in flight, and at least [`FEW_AT_LEAST`].
pub const FEW_OF: usize = 16;

/// ... (one and two were level where it was measured; two wakes half as often).
pub const FEW_AT_LEAST: usize = 2;

/// The job's running estimate of the time between completions on its ring.
#[derive(Debug, Clone, Copy, Default)]
pub struct WaitShare {
    /// Nanoseconds per completion, smoothed; 0 until a round that did not drain the queue.
    per_io_ns: u64,
    /// Wake for a few completions ([`FEW_OF`]) instead of the rate rule's share: chosen by
    /// `engine/few.rs`'s trial where the device completes the ring's I/O itself.
    few: bool,
}

/// A shallow ring whose completions come close together (`per_io_ns` apart; 0: not known, as
/// on a ring of one): it waits for one completion, and polls for it ([`Spin`]).
pub fn fast(depth: usize, per_io_ns: u64) -> bool {
    depth <= SHALLOW && per_io_ns <= POLL_NS
}

impl WaitShare {
    pub fn new() -> Self {
        Self::default()
    }

    /// Completions to wait for with `in_flight` I/Os in flight on a ring of `depth`.
    pub fn want(&self, in_flight: usize, depth: usize) -> usize {
        // Until a rate is known, one: no wait longer than the device needs.
        if in_flight <= 1 || self.per_io_ns == 0 || fast(depth, self.per_io_ns) {
            return 1;
        }
        let keep = WAKE_NS.div_ceil(self.per_io_ns) as usize;
        let share = in_flight.saturating_sub(keep).clamp(1, in_flight / 2);
        if self.few && depth > SHALLOW {
            share.min((in_flight / FEW_OF).max(FEW_AT_LEAST))
        } else {
            share
        }
    }

    /// From now on, wake for a few completions (true) or the rate rule's share (false).
    pub fn wake_for_few(&mut self, few: bool) {
        self.few = few;
    }

    /// A round of the job: `reaped` of the `in_flight` I/Os came back `ns` after the previous
    /// reap.
    pub fn observe(&mut self, ns: u64, reaped: usize, in_flight: usize) {
        if reaped == 0 || reaped >= in_flight {
            return;
        }
        let per = (ns / reaped as u64).max(1);
        // An eighth of each new round: steady within a few dozen rounds, deaf to one slow wake.
        self.per_io_ns = if self.per_io_ns == 0 {
            per
        } else {
            (self.per_io_ns * 7 + per) / 8
        };
    }

    /// The smoothed time between completions (0 before any).
    pub fn per_io_ns(&self) -> u64 {
        self.per_io_ns
    }
}

/// Completions further apart than this are slept for, not polled for: about what a sleep and
/// its wake cost in CPU between the job and the thread that wakes it (docs/architecture.md,
/// "Polling instead of sleeping").
pub const POLL_NS: u64 = 8_000;

/// When polls that ran out outnumber those that caught by this many, the job sleeps instead ...
pub const MISSES: u32 = 4;

/// ... and polls again once in this many waits, to notice that completions come quickly again.
pub const PROBE_EVERY: u32 = 64;

/// Whether a job polls its ring instead of sleeping while it waits for one completion.
///
/// A job on a shallow ring waits for one completion at a time, and when that one comes in
/// less time than a wake takes, sleeping costs more than it saves: the job's CPU halts, the
/// completion has to wake it (an interrupt to a halted vCPU in a VM), and meanwhile the queue
/// runs dry and the io-wq worker doing its I/O goes to sleep too, to be woken in turn by the
/// next submission. Polling (io_uring_enter without waiting, which also runs the completions
/// the kernel deferred to this thread) for up to [`WAKE_NS`] keeps both awake. Deeper rings
/// wait for many completions and sleep. A device slower than a wake (a disk) misses its polls;
/// once misses outnumber catches by [`MISSES`] the job sleeps and tries once in
/// [`PROBE_EVERY`] waits. The measurements: docs/architecture.md, "Polling instead of
/// sleeping".
#[derive(Debug, Clone, Copy, Default)]
pub struct Spin {
    /// Polls that ran out less those that caught their completion, from 0 to [`MISSES`].
    misses: u32,
    /// Waits slept since the last poll, while polling is off.
    slept: u32,
    /// Whether any poll caught its completion yet.
    caught: bool,
}

impl Spin {
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether to poll now for `want` completions on a ring of `depth` whose completions have
    /// come `per_io_ns` apart (0: not known, as on a ring of one).
    pub fn worth(&mut self, want: usize, depth: usize, per_io_ns: u64) -> bool {
        if !fast(depth, per_io_ns) || want > 1 {
            return false;
        }
        if self.misses < MISSES {
            return true;
        }
        self.slept += 1;
        if self.slept < PROBE_EVERY {
            return false;
        }
        self.slept = 0;
        true
    }

    /// A poll caught its completion (`true`) or ran out of time. A catch takes back one miss,
    /// not all: polls that catch only now and then (a device whose completions come about
    /// [`WAKE_NS`] apart) stop, as they cost more than the sleeps they save.
    pub fn record(&mut self, caught: bool) {
        if caught {
            self.misses = self.misses.saturating_sub(1);
            self.caught = true;
        } else {
            self.misses = (self.misses + 1).min(MISSES);
        }
    }

    /// Whether the job is polling: its completions come close together on a ring of `depth`
    /// (`per_io_ns` apart) and its polls catch them.
    pub fn polling(&self, depth: usize, per_io_ns: u64) -> bool {
        fast(depth, per_io_ns) && self.caught && self.misses < MISSES
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A share that has seen many rounds of `per_io_ns` between completions, 4 of 16 a round.
    fn settled(per_io_ns: u64) -> WaitShare {
        let mut w = WaitShare::new();
        for _ in 0..200 {
            w.observe(per_io_ns * 4, 4, 16);
        }
        w
    }

    #[test]
    fn fast_completions_at_a_low_depth_wake_on_the_first() {
        // 4K reads on zram: one every ~2 us; 30 us of work in flight needs all of 8 or 16.
        let w = settled(2_000);
        println!(
            "per {} ns: QD8 {}, QD16 {}",
            w.per_io_ns(),
            w.want(8, 8),
            w.want(16, 16)
        );
        assert_eq!(w.want(8, 8), 1);
        assert_eq!(w.want(16, 16), 1);
    }

    #[test]
    fn deep_queues_wait_for_at_most_half() {
        let w = settled(2_000);
        println!("QD128 {}, QD32 {}", w.want(128, 128), w.want(32, 32));
        assert_eq!(w.want(128, 128), 64);
        assert_eq!(w.want(32, 32), 16);
        // 16K reads, ~4 us apart: QD16 keeps 8 and waits for 8.
        let w = settled(4_000);
        println!("per 4 us: QD16 {}", w.want(16, 16));
        assert_eq!(w.want(16, 16), 8);
    }

    #[test]
    fn slow_completions_wait_for_half_and_fast_shallow_rings_for_one() {
        // 1M reads: one every ~60 us; one in flight covers a wake.
        let w = settled(60_000);
        println!(
            "QD16 {}, QD32 {}; QD4 {}, QD8 {}",
            w.want(16, 16),
            w.want(32, 32),
            w.want(4, 4),
            w.want(8, 8)
        );
        assert_eq!(w.want(16, 16), 8);
        assert_eq!(w.want(32, 32), 16);
        assert_eq!(w.want(4, 4), 2);
        assert_eq!(w.want(8, 8), 4);
        // 64K reads, ~12 us apart: three cover a wake. 4K reads, 2 us apart: shallow rings
        // wait for one (and poll).
        // (8 less 3 is 5, held to half of 8.)
        assert_eq!(settled(12_000).want(8, 8), 4);
        assert_eq!(settled(2_000).want(8, 8), 1);
        // What is in flight of a deep ring, not the depth, sets the share (a run's last I/Os).
        assert_eq!(w.want(6, 32), 3);
    }

    #[test]
    fn a_ring_that_wakes_for_few_waits_for_a_sixteenth_and_at_least_two() {
        let mut w = settled(10_000);
        let before = (
            w.want(32, 32),
            w.want(128, 128),
            w.want(16, 16),
            w.want(8, 8),
        );
        w.wake_for_few(true);
        let after = (
            w.want(32, 32),
            w.want(128, 128),
            w.want(16, 16),
            w.want(8, 8),
        );
        println!("QD32, QD128, QD16, QD8: share {before:?}, few {after:?}");
        assert_eq!(before, (16, 64, 8, 4));
        // Shallow rings keep their rule (one, or polling, when completions come fast).
        assert_eq!(after, (2, 8, 2, 4));
        // Never more than the share, and never none.
        assert_eq!(w.want(3, 32), 1);
        w.wake_for_few(false);
        assert_eq!(w.want(32, 32), 16);
    }

    #[test]
    fn before_any_rate_and_at_depth_one_it_waits_for_one() {
        let w = WaitShare::new();
        println!("unsettled QD128 want {}", w.want(128, 128));
        assert_eq!(w.want(128, 128), 1);
        assert_eq!(settled(100).want(1, 1), 1);
        assert_eq!(settled(100).want(0, 0), 1);
    }

    #[test]
    fn a_round_that_drained_the_queue_says_nothing_of_the_rate() {
        let mut w = settled(2_000);
        // All 16 back after a slow wake: the queue ran dry, the time is the job's own.
        w.observe(1_000_000, 16, 16);
        assert_eq!(w.per_io_ns(), 2_000);
        // Nothing reaped: no rate either.
        w.observe(5_000, 0, 16);
        assert_eq!(w.per_io_ns(), 2_000);
        // One slow round that did not drain moves the estimate by an eighth.
        w.observe(1_000_000, 1, 16);
        println!("after one 1 ms round: {} ns", w.per_io_ns());
        assert!(
            (120_000..130_000).contains(&w.per_io_ns()),
            "{}",
            w.per_io_ns()
        );
    }

    /// A Spin that has polled `n` times with the given outcome, on a QD8 ring of 2 us
    /// completions.
    fn spun(n: usize, caught: bool) -> Spin {
        let mut s = Spin::new();
        for _ in 0..n {
            assert!(s.worth(1, 8, 2_000));
            s.record(caught);
        }
        s
    }

    #[test]
    fn a_shallow_ring_of_fast_completions_polls_and_others_sleep() {
        let mut s = Spin::new();
        let cases = [
            ("QD8, 2 us apart", s.worth(1, 8, 2_000)),
            ("QD1, rate unknown", s.worth(1, 1, 0)),
            ("QD8, 20 us apart", s.worth(1, 8, 20_000)),
            ("QD16", s.worth(1, 16, 2_000)),
            ("QD8 waiting for 2", s.worth(2, 8, 2_000)),
        ];
        println!("{cases:?}");
        assert_eq!(
            cases.map(|c| c.1),
            [true, true, false, false, false],
            "{cases:?}"
        );
        // Not polling until a poll has caught its completion, and not on a slow ring.
        assert!(!s.polling(8, 2_000));
        let s = spun(3, true);
        assert!(s.polling(8, 2_000));
        assert!(!s.polling(8, 20_000), "completions 20 us apart: {s:?}");
    }

    #[test]
    fn polls_that_run_out_stop_and_one_in_sixty_four_waits_tries_again() {
        let mut s = spun(MISSES as usize, false);
        let tries: Vec<bool> = (0..2 * PROBE_EVERY).map(|_| s.worth(1, 8, 2_000)).collect();
        let at: Vec<usize> = (0..tries.len()).filter(|&i| tries[i]).collect();
        println!("after {MISSES} misses, polls at waits {at:?}: {s:?}");
        assert_eq!(at, [PROBE_EVERY as usize - 1, 2 * PROBE_EVERY as usize - 1]);
        assert!(!s.polling(8, 2_000));
        // A probe that catches its completion turns polling back on.
        s.record(true);
        assert!(s.worth(1, 8, 2_000) && s.polling(8, 2_000), "{s:?}");
    }

    #[test]
    fn polls_that_catch_only_half_the_time_stop() {
        // A device whose completions come about as far apart as the poll lasts.
        let mut s = spun(1, true);
        let mut polled = 0;
        for i in 0..1000 {
            if s.worth(1, 8, 2_000) {
                polled += 1;
                s.record(i % 3 != 0 && i % 3 != 1); // one in three caught
            }
        }
        println!("polled {polled} of 1000 waits, catching one in three: {s:?}");
        assert!(!s.polling(8, 2_000), "{s:?}");
        assert!(polled < 100, "polled {polled} of 1000 waits");
        // Catching two in three keeps polling.
        let mut s = spun(1, true);
        for i in 0..1000 {
            if s.worth(1, 8, 2_000) {
                s.record(i % 3 != 0);
            }
        }
        assert!(s.polling(8, 2_000), "{s:?}");
    }
}
