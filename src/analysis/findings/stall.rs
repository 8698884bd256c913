//! A device that held the test's I/Os: the longest time in which none of them completed while
//! some were in flight, from the engine's samples (each says `waiting` when its interval had
//! none). The same [`Stalls`] is fed the samples as they come (the live view) and the run's
//! samples at its end (the result), so the two say the same.

use super::{Evidence, Finding, Kind};
use crate::engine::job::{Job, Mode};
use crate::engine::result::Sample;

/// Shorter waits are not said: a second is long for any device that answers at all.
pub const STALL_MIN_S: f64 = 1.0;

/// Nor a wait within this many times the median of the intervals' p50 latency: a device whose
/// every I/O takes seconds is slow, not stalled.
pub const STALL_OVER_MEDIAN: f64 = 10.0;

/// Consecutive intervals in which none of the test's I/Os completed.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Stretch {
    /// Seconds into the run at its start.
    from_s: f64,
    seconds: f64,
    /// The most I/Os in flight at its intervals' ends.
    in_flight: u32,
}

/// The test's intervals so far: the longest stretch without a completion, the one going on,
/// and each interval's median latency (those that had completions), with the start of the
/// stretch it ends where it ends one.
#[derive(Debug, Default)]
pub struct Stalls {
    longest: Option<Stretch>,
    current: Option<Stretch>,
    p50s: Vec<(u64, Option<f64>)>,
}

impl Stalls {
    /// The stalls of a run's samples.
    pub fn of(samples: &[Sample]) -> Self {
        let mut s = Self::default();
        samples.iter().for_each(|x| s.see(x));
        s
    }

    /// Takes in the next sample.
    pub fn see(&mut self, s: &Sample) {
        let Some(n) = s.waiting else {
            if s.ios > 0 {
                self.p50s.push((s.p50_ns, self.current.map(|c| c.from_s)));
            }
            self.current = None;
            return;
        };
        let cur = self.current.get_or_insert(Stretch {
            from_s: s.elapsed_s - s.interval_s,
            seconds: 0.0,
            in_flight: 0,
        });
        cur.seconds = s.elapsed_s - cur.from_s;
        cur.in_flight = cur.in_flight.max(n);
        if self.longest.is_none_or(|l| cur.seconds > l.seconds) {
            self.longest = Some(*cur);
        }
    }

    /// The median of the intervals' p50 latency, ns (0 without a completion), but for the
    /// interval that ends the longest stretch: its I/Os are the ones the stretch held (a run
    /// frozen from its start has no other, and its one p50 is the stall's own length).
    fn median_p50_ns(&self) -> u64 {
        let held = self.longest.map(|l| l.from_s);
        let mut v: Vec<u64> = self
            .p50s
            .iter()
            .filter(|(_, after)| after.is_none() || *after != held)
            .map(|(p, _)| *p)
            .collect();
        v.sort_unstable();
        v.get(v.len() / 2).copied().unwrap_or(0)
    }

    /// The finding, when the longest stretch is long enough to be a stall.
    pub fn finding(&self, job: &Job, device: &str) -> Option<Finding> {
        let l = self.longest?;
        let median = self.median_p50_ns();
        if l.seconds < STALL_MIN_S || l.seconds * 1e9 < STALL_OVER_MEDIAN * median as f64 {
            return None;
        }
        let buffered_writes =
            job.op.writes() && matches!(job.mode, Mode::Buffered | Mode::Fdatasync);
        let numbers = Evidence::new()
            .with("stalled_s", l.seconds)
            .with("from_s", l.from_s)
            .with("in_flight", l.in_flight)
            .with("median_p50_ns", median)
            .with("buffered_writes", buffered_writes);
        Some(Finding::new(Kind::Stall, numbers, say).on(device))
    }
}

fn say(e: &Evidence) -> String {
    let held = if e.get("buffered_writes") == Some(&super::Figure::Flag(true)) {
        "the kernel held the test's buffered writes (writeback throttling while dirty pages go \
         to a slow device) or the device held what it was writing"
    } else {
        "the device, or what lies under it, held them (a frozen file system under a loop \
         device, a disk spinning up or retrying a sector, a lost path)"
    };
    format!(
        "none of the test's I/Os completed for {:.1} s from {:.1} s into the run, with {} in \
         flight: {held}; the run's figures count that wait",
        e.num("stalled_s"),
        e.num("from_s"),
        crate::units::count(e.count("in_flight") as usize, "I/O"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(at: f64, ios: u64, p50_ns: u64, waiting: Option<u32>) -> Sample {
        Sample {
            elapsed_s: at,
            interval_s: 0.1,
            ios,
            p50_ns,
            waiting,
            ..Sample::default()
        }
    }

    /// A run whose I/Os took 400 us, then none completed for 2 s with 16 in flight, then
    /// went on.
    fn frozen() -> Vec<Sample> {
        let mut v: Vec<Sample> = (1..=10)
            .map(|i| sample(i as f64 / 10.0, 500, 400_000, None))
            .collect();
        v.extend((11..=30).map(|i| sample(i as f64 / 10.0, 0, 0, Some(16))));
        v.extend((31..=40).map(|i| sample(i as f64 / 10.0, 500, 400_000, None)));
        v
    }

    #[test]
    fn a_stretch_without_completions_is_said_with_its_length_start_and_ios() {
        let job = Job::default();
        let f = Stalls::of(&frozen())
            .finding(&job, "loop2")
            .expect("a 2 s stall");
        println!("{f:?}");
        assert_eq!(f.kind, Kind::Stall);
        assert_eq!(f.device(), "loop2");
        assert!(
            (f.numbers.num("stalled_s") - 2.0).abs() < 1e-6,
            "{:?}",
            f.numbers
        );
        assert!(
            (f.numbers.num("from_s") - 1.0).abs() < 1e-6,
            "{:?}",
            f.numbers
        );
        assert_eq!(f.numbers.count("in_flight"), 16);
        assert!(
            f.message.starts_with("none of the test's I/Os completed for 2.0 s from 1.0 s into the run, with 16 I/Os in flight: the device"),
            "{}",
            f.message
        );
    }

    #[test]
    fn the_stall_is_said_while_it_goes_on() {
        let job = Job::default();
        let mut live = Stalls::default();
        let all = frozen();
        let mut said = Vec::new();
        for s in &all[..25] {
            live.see(s);
            said.push(
                live.finding(&job, "loop2")
                    .map(|f| f.numbers.num("stalled_s")),
            );
        }
        println!("{said:?}");
        // Not before a second without a completion, then growing with the stall.
        assert!(said[..19].iter().all(Option::is_none));
        assert!(said[19..].iter().all(Option::is_some));
        assert!((said[24].unwrap() - 1.5).abs() < 1e-6);
    }

    #[test]
    fn short_waits_and_slow_devices_are_no_stall() {
        let job = Job::default();
        // Half a second without a completion.
        let mut v: Vec<Sample> = (1..=10)
            .map(|i| sample(i as f64 / 10.0, 500, 400_000, None))
            .collect();
        v.extend((11..=15).map(|i| sample(i as f64 / 10.0, 0, 0, Some(16))));
        v.extend((16..=20).map(|i| sample(i as f64 / 10.0, 500, 400_000, None)));
        assert_eq!(Stalls::of(&v).finding(&job, "sda"), None);
        // A device whose I/Os take 1.5 s each: 1.4 s between completions is its pace.
        let slow: Vec<Sample> = (1..=60)
            .map(|i| {
                let done = i % 15 == 0;
                sample(
                    i as f64 / 10.0,
                    u64::from(done),
                    1_500_000_000,
                    (!done).then_some(1),
                )
            })
            .collect();
        let s = Stalls::of(&slow);
        println!("{s:?}");
        assert_eq!(s.finding(&job, "sda"), None);
        // A run frozen from its start: its only completions are the held ones, at the end.
        let mut start: Vec<Sample> = (1..=40)
            .map(|i| sample(i as f64 / 10.0, 0, 0, Some(16)))
            .collect();
        start.push(sample(4.1, 16, 3_980_000_000, None));
        let f = Stalls::of(&start)
            .finding(&job, "sda")
            .expect("frozen from the start");
        println!("{}", f.message);
        assert!(
            (f.numbers.num("stalled_s") - 4.0).abs() < 1e-6,
            "{:?}",
            f.numbers
        );
        // A run in which nothing completed at all, for 3 s.
        let none: Vec<Sample> = (1..=30)
            .map(|i| sample(i as f64 / 10.0, 0, 0, Some(4)))
            .collect();
        let f = Stalls::of(&none)
            .finding(&job, "sda")
            .expect("a run without a completion");
        println!("{}", f.message);
        assert!((f.numbers.num("from_s")).abs() < 1e-6);
    }

    #[test]
    fn buffered_writes_name_the_kernels_throttling() {
        let job = Job {
            op: crate::engine::job::Op::Write,
            mode: Mode::Buffered,
            ..Job::default()
        };
        let f = Stalls::of(&frozen()).finding(&job, "sdb").expect("a stall");
        println!("{}", f.message);
        assert!(f.message.contains("writeback throttling"), "{}", f.message);
    }
}
