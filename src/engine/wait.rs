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
//! device look slower, the wait longer and the queue drier still.
//!
//! Measured on a filled zram (2 CPUs, alternating with fio; issue 40's closing note): with a
//! fixed half, 4K random reads at QD16 ran 0.72x fio (the workers ran dry while the job woke)
//! and with a fixed eighth QD128 0.94x and two jobs at QD16 0.96x (a wake every 2 completions);
//! half suits 16K reads at QD16 (1.3x), QD128 (1.3x) and two jobs (1.3x), one suits 4K at QD8.

/// Rings this deep or shallower wait for one completion whatever the rate: with the rule
/// below, 4K random reads at QD8 on zram measured their rate with the job's own wake in it
/// (the queue of eight barely outlasts a wake) and waited for more, 0.64x fio against 0.77x.
pub const SHALLOW: usize = 8;

/// About how long a sleeping job takes to wake, reap and submit again (a VM's halted vCPU
/// included); the I/Os that complete in this time are left in flight.
pub const WAKE_NS: u64 = 30_000;

/// The job's running estimate of the time between completions on its ring.
#[derive(Debug, Clone, Copy, Default)]
pub struct WaitShare {
    /// Nanoseconds per completion, smoothed; 0 until a round that did not drain the queue.
    per_io_ns: u64,
}

impl WaitShare {
    pub fn new() -> Self {
        Self::default()
    }

    /// Completions to wait for with `in_flight` I/Os in flight on a ring of `depth`.
    pub fn want(&self, in_flight: usize, depth: usize) -> usize {
        // Until a rate is known, one: no wait longer than the device needs.
        if in_flight <= 1 || depth <= SHALLOW || self.per_io_ns == 0 {
            return 1;
        }
        let keep = WAKE_NS.div_ceil(self.per_io_ns) as usize;
        in_flight.saturating_sub(keep).clamp(1, in_flight / 2)
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
    fn slow_completions_wait_for_half_and_shallow_rings_for_one() {
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
        assert_eq!(w.want(4, 4), 1);
        assert_eq!(w.want(8, 8), 1);
        // What is in flight of a deep ring, not the depth, sets the share (a run's last I/Os).
        assert_eq!(w.want(6, 32), 3);
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
}
