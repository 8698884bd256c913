//! Whether a deep ring whose device completes its I/O itself should wake for a few
//! completions instead of a share of what is in flight: a trial of both, in turns.
//!
//! The rate rule (`wait::WaitShare`) was tuned where io-wq workers do the I/O on the job's CPUs
//! (zram), and there waking seldom pays. Where the device completes the I/O and the job only
//! reaps (a loop device over a disk), waking for two was faster at less CPU for writes and
//! level for reads (docs/architecture.md, "Waking for a few completions"). Which holds on a
//! device is not known before it runs, so the job tries both, [`TURNS`] turns in alternation,
//! and keeps the faster: within [`LEVEL`], the one with less of its thread's CPU per I/O.

/// Rings deeper than the shallow ones (which wait for one) try. At QD16 the two ways were level
/// on a loop device over this VM's disk, where the trial then costs its CPU for nothing; over
/// a file in memory a few was 1.6x the rule's rate (docs/architecture.md).
pub const TRIED_FROM: usize = super::wait::SHALLOW + 1;

/// Whether a ring of `depth` tries: direct I/O (`direct`) that the device completes itself,
/// not a ring whose job polls, whose I/O goes to io-wq or that a kernel thread submits
/// (`waits_another_way`).
pub fn tried(depth: usize, direct: bool, waits_another_way: bool) -> bool {
    depth >= TRIED_FROM && direct && !waits_another_way
}

/// The trial begins this long after the ring settled: a run's first tenth of a second can be
/// slower on both ways alike, which makes them look level.
pub const WARM_NS: u64 = 100_000_000;

/// Each turn lasts at least this long ...
pub const TURN_NS: u64 = 40_000_000;

/// ... and until this many rings' worth of I/Os have completed in it.
pub const TURN_RINGS: u64 = 2;

/// Turns in all: the rate rule's first, then a few's, and so on; an even number, so that a
/// drift of the device over the trial weighs on both alike.
pub const TURNS: usize = 6;

/// Rates within this part of each other are level, and the CPU per I/O decides.
pub const LEVEL: f64 = 0.03;

/// The trial's state: which turn, when it began, and what each way has done so far.
#[derive(Debug, Clone)]
pub struct Trial {
    depth: u64,
    /// Whether [`WARM_NS`] has passed and the turns have begun.
    warm: bool,
    turn: usize,
    /// When the turn began: the clock's ns, and the job thread's CPU ns.
    since_ns: u64,
    since_cpu: u64,
    ios_now: u64,
    /// For the share (0) and the few (1): I/Os, ns and CPU ns over their turns.
    ios: [u64; 2],
    ns: [u64; 2],
    cpu: [u64; 2],
}

impl Trial {
    /// A trial for a ring of `depth` starting at `now_ns`, its thread having used `cpu_ns`.
    pub fn new(depth: usize, now_ns: u64, cpu_ns: u64) -> Self {
        Trial {
            depth: depth as u64,
            warm: false,
            turn: 0,
            since_ns: now_ns,
            since_cpu: cpu_ns,
            ios_now: 0,
            ios: [0; 2],
            ns: [0; 2],
            cpu: [0; 2],
        }
    }

    /// Whether this turn wakes for a few (not while warming).
    pub fn few(&self) -> bool {
        self.warm && self.turn % 2 == 1
    }

    /// `n` I/Os completed at `now_ns`; `cpu_ns` reads the thread's CPU clock (only when a turn
    /// ends). The decision, once the last turn has ended: wake for a few (true) or not.
    pub fn completed(
        &mut self,
        n: usize,
        now_ns: u64,
        cpu_ns: impl FnOnce() -> u64,
    ) -> Option<bool> {
        self.ios_now += n as u64;
        let took = now_ns.saturating_sub(self.since_ns);
        if !self.warm {
            if took >= WARM_NS {
                self.warm = true;
                (self.since_ns, self.since_cpu, self.ios_now) = (now_ns, cpu_ns(), 0);
            }
            return None;
        }
        if took < TURN_NS || self.ios_now < TURN_RINGS * self.depth {
            return None;
        }
        let cpu = cpu_ns();
        let way = self.turn % 2;
        self.ios[way] += self.ios_now;
        self.ns[way] += took;
        self.cpu[way] += cpu.saturating_sub(self.since_cpu);
        (self.since_ns, self.since_cpu, self.ios_now) = (now_ns, cpu, 0);
        self.turn += 1;
        (self.turn == TURNS).then(|| self.verdict())
    }

    /// The faster way; within [`LEVEL`], the one with less CPU per I/O.
    pub fn verdict(&self) -> bool {
        let rate = |w: usize| self.ios[w] as f64 / self.ns[w].max(1) as f64;
        let per_io = |w: usize| self.cpu[w] as f64 / self.ios[w].max(1) as f64;
        let (share, few) = (rate(0), rate(1));
        if few > share * (1.0 + LEVEL) {
            return true;
        }
        few >= share * (1.0 - LEVEL) && per_io(1) < per_io(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// QD16 tries (the rule waits for 7 of 16 there, and over a file in memory 4K random reads
    /// ran 198-214K IOPS that way against 229-310K waking for a few); a shallow ring, which
    /// waits for one, does not; nor a ring whose I/O goes to io-wq or is polled.
    #[test]
    fn rings_deeper_than_the_shallow_ones_try() {
        let tries: Vec<(usize, bool)> = [1, 8, 9, 16, 32, 128]
            .into_iter()
            .map(|d| (d, tried(d, true, false)))
            .collect();
        println!("{tries:?}");
        assert_eq!(
            tries,
            [
                (1, false),
                (8, false),
                (9, true),
                (16, true),
                (32, true),
                (128, true)
            ]
        );
        assert!(!tried(16, false, false), "buffered");
        assert!(!tried(16, true, true), "polled, SQPOLL or io-wq");
    }

    /// A trial of QD32 run to its end: each turn of `TURN_NS`, the share's turns completing
    /// `share.0` I/Os at `share.1` ns of CPU each, the few's `few.0` at `few.1`; rounds of 8.
    fn run(share: (u64, u64), few: (u64, u64)) -> (Option<bool>, Vec<bool>) {
        let mut t = warmed();
        let (mut cpu, mut ways) = (0, Vec::new());
        for turn in 0..TURNS as u64 {
            ways.push(t.few());
            let (ios, per) = if t.few() { few } else { share };
            let rounds = ios / 8;
            for i in 1..=rounds {
                cpu += per * 8;
                let now = WARM_NS + TURN_NS * turn + TURN_NS * i / rounds;
                let out = t.completed(8, now, || cpu);
                if i < rounds {
                    assert_eq!(out, None, "turn {turn} ended at round {i} of {rounds}");
                } else if out.is_some() {
                    return (out, ways);
                }
            }
        }
        (None, ways)
    }

    #[test]
    fn the_ways_take_turns_and_the_faster_is_kept() {
        // 4K writes at QD32 on a loop device: 110K IOPS at 1.5 us a share, 123K at 1.0 a few.
        let (v, ways) = run((4400, 1500), (4920, 1000));
        println!("turns {ways:?}: few {v:?}");
        assert_eq!(ways, [false, true, false, true, false, true]);
        assert_eq!(v, Some(true));
        // A device where waking for few is slower: the share stays.
        let (v, _) = run((4920, 1000), (4400, 900));
        println!("slower few at less CPU: few {v:?}");
        assert_eq!(v, Some(false));
    }

    #[test]
    fn level_rates_are_decided_by_the_cpu_per_io() {
        // 1% apart: level; the few costs more CPU, then less.
        let (v, _) = run((4000, 1000), (4040, 1200));
        println!("level, few dearer: few {v:?}");
        assert_eq!(v, Some(false));
        let (v, _) = run((4000, 1000), (3960, 900));
        println!("level, few cheaper: few {v:?}");
        assert_eq!(v, Some(true));
    }

    /// A QD32 trial at the end of its warming, at `WARM_NS`.
    fn warmed() -> Trial {
        let mut t = Trial::new(32, 0, 0);
        assert_eq!(t.completed(10_000, WARM_NS - 1, || 0), None);
        assert!(!t.warm && !t.few(), "warm before its time");
        assert_eq!(t.completed(1, WARM_NS, || 0), None);
        assert!(t.warm && !t.few());
        t
    }

    #[test]
    fn a_turn_lasts_its_time_and_two_rings_of_ios() {
        let mut t = warmed();
        // A turn's time gone but 63 I/Os: the turn goes on; the 64th ends it.
        let end = WARM_NS + TURN_NS;
        assert_eq!(t.completed(63, end, || 5), None);
        assert!(!t.few());
        assert_eq!(t.completed(1, end + 1, || 5), None);
        println!(
            "after 64 I/Os in a turn's time: turn {} few {}",
            t.turn,
            t.few()
        );
        assert!(t.few());
        // 64 I/Os in 1 ms: the turn goes on until its time.
        assert_eq!(t.completed(64, end + 1_000_000, || 6), None);
        assert!(t.few());
    }
}
