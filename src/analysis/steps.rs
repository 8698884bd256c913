//! Where the time of the test's I/Os went, all of it: the engine's submission and completion
//! times of some of its direct I/Os (`engine::TimedIo`) paired with the block layer's three
//! times of the same bios (`trace::Stepped`: queued, issued, completed), by sector and time.
//! Each paired I/O's time splits into four parts that add up to it: submitting (from the
//! engine's submission to the block layer: the system call or the ring, an io-wq worker),
//! the queue (Q2D), the device (D2C), and completing (from the device's completion to the
//! engine: the interrupt, the completion's delivery, the engine's wait for it).
//!
//! The parts are told for the I/Os in the middle of the paired ones (from the 40th to the
//! 60th percentile of their own time), averaged: they add up to those I/Os' time, which is
//! about the run's median.

pub use crate::engine::result::Steps;

use crate::engine::TimedIo;
use crate::trace::{Coverage, Stepped};

/// Fewer paired I/Os than this say nothing of a middle one.
pub const MIN_TIMED: usize = 10;

/// The trace read as text prints microseconds: its times are up to this much before the true
/// ones (its pages give nanoseconds).
const PRINTED_NS: u64 = 1_000;

/// One paired I/O's four parts, ns.
type Parts = [u64; 4];

/// The middle I/Os' parts, where at least [`MIN_TIMED`] were paired; else how many were.
pub fn of(engine: &[TimedIo], trace: &[Stepped]) -> Result<Steps, usize> {
    let paired = pair(engine, trace);
    match paired.len() {
        n if n >= MIN_TIMED => Ok(middle(paired)),
        n => Err(n),
    }
}

/// [`of`], and where the trace was kept in windows (`coverage`), how the I/Os in those that
/// timed the test's I/Os compared with those between them: for the result and for the live
/// view alike.
pub fn of_sampled(
    engine: &[TimedIo],
    trace: &[Stepped],
    coverage: &Coverage,
) -> Result<Steps, usize> {
    let mut s = of(engine, trace)?;
    if coverage.windowed {
        let windows = coverage.timed_windows();
        (s.in_windows_p50_ns, s.between_p50_ns) = in_and_between(engine, &windows).unzip();
    }
    Ok(s)
}

/// Within this of the I/Os between a sampled trace's windows, the windows' I/Os are the run's
/// typical ones; beyond it their parts are said to be the windows' (a first TUI run on a loop
/// device had them 3.24x the rest).
const LIKE_THE_REST: std::ops::RangeInclusive<f64> = 0.8..=1.25;

/// How long the I/Os in a sampled trace's windows took against those between them (their
/// medians' ratio), where both were timed.
pub fn windows_against_rest(s: &Steps) -> Option<f64> {
    let (a, b) = (s.in_windows_p50_ns?, s.between_p50_ns?);
    Some(a as f64 / b.max(1) as f64)
}

/// Whether the parts are the windows' I/Os' and not the run's typical one's: that ratio beyond
/// [`LIKE_THE_REST`].
pub fn parts_are_the_windows(ratio: f64) -> bool {
    !LIKE_THE_REST.contains(&ratio)
}

/// The engine's timed I/Os' median time, of those submitted in the trace's `windows` and of
/// those submitted between them, where each has [`MIN_TIMED`].
fn in_and_between(engine: &[TimedIo], windows: &[(u64, u64)]) -> Option<(u64, u64)> {
    let inside = |t: &TimedIo| {
        windows
            .iter()
            .any(|&(a, b)| b > 0 && (a..b).contains(&t.submitted))
    };
    let (mut a, mut b): (Vec<u64>, Vec<u64>) = (Vec::new(), Vec::new());
    for t in engine {
        let took = t.completed - t.submitted;
        if inside(t) {
            a.push(took)
        } else {
            b.push(took)
        }
    }
    let median = |v: &mut Vec<u64>| {
        let mid = v.len() / 2;
        *v.select_nth_unstable(mid).1
    };
    (a.len() >= MIN_TIMED && b.len() >= MIN_TIMED).then(|| (median(&mut a), median(&mut b)))
}

/// Each engine I/O with the trace's bio at its sector that was queued while it was under way
/// (the first such in the trace's order). The bios are looked up in a list sorted by sector:
/// the live view pairs them again at every read of the trace, and a map with a list for each
/// sector cost 0.6 ms of the main thread's CPU a time (docs/architecture.md).
fn pair(engine: &[TimedIo], trace: &[Stepped]) -> Vec<Parts> {
    let mut by_sector: Vec<(u64, u32)> = (trace.iter().enumerate())
        .map(|(i, s)| (s.sector, i as u32))
        .collect();
    by_sector.sort_unstable();
    engine
        .iter()
        .filter_map(|e| {
            let from = by_sector.partition_point(|&(sector, _)| sector < e.sector);
            let found = by_sector[from..]
                .iter()
                .take_while(|&&(sector, _)| sector == e.sector)
                .map(|&(_, i)| &trace[i as usize])
                .find(|s| {
                    s.queued + PRINTED_NS >= e.submitted
                        && s.completed <= e.completed
                        && s.queued <= s.issued
                        && s.issued <= s.completed
                })?;
            Some(parts(e, found))
        })
        .collect()
}

/// The four parts of an I/O, each moment held between the one before and its completion, so
/// that they add up to its time (the trace's microseconds may put one a little early).
fn parts(e: &TimedIo, s: &Stepped) -> Parts {
    let q = s.queued.clamp(e.submitted, e.completed);
    let d = s.issued.clamp(q, e.completed);
    let c = s.completed.clamp(d, e.completed);
    [q - e.submitted, d - q, c - d, e.completed - c]
}

/// The mean parts of the I/Os from the 40th to the 60th percentile of their time.
fn middle(mut paired: Vec<Parts>) -> Steps {
    paired.sort_by_key(|p| p.iter().sum::<u64>());
    let n = paired.len();
    let band = &paired[n * 2 / 5..(n * 3 / 5).max(n * 2 / 5 + 1)];
    let mean = |i: usize| band.iter().map(|p| p[i]).sum::<u64>() / band.len() as u64;
    let [submit_ns, queue_ns, device_ns, complete_ns] = [mean(0), mean(1), mean(2), mean(3)];
    Steps {
        timed: n as u64,
        middle: band.len() as u64,
        total_ns: submit_ns + queue_ns + device_ns + complete_ns,
        submit_ns,
        queue_ns,
        device_ns,
        complete_ns,
        ..Steps::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn io(sector: u64, at: u64, took: u64) -> TimedIo {
        TimedIo {
            sector,
            submitted: at,
            completed: at + took,
        }
    }

    /// A bio of an I/O submitted at `at`: in the block layer 5 us later, issued 2 us after,
    /// `device` in the device, and seen by the engine 3 us after that.
    fn bio(sector: u64, at: u64, device: u64) -> Stepped {
        Stepped {
            sector,
            queued: at + 5_000,
            issued: at + 7_000,
            completed: at + 7_000 + device,
        }
    }

    #[test]
    fn the_parts_of_a_middle_io_add_up_to_it() {
        // 21 I/Os, one every 100 us, the n-th 10n us in the device.
        let mut engine = Vec::new();
        let mut trace = Vec::new();
        for n in 0..21u64 {
            let (at, device) = (1_000_000 + n * 100_000, n * 10_000);
            engine.push(io(n * 8, at, 5_000 + 2_000 + device + 3_000));
            trace.push(bio(n * 8, at, device));
        }
        // An I/O the trace did not see, and bios at the same sector an hour later (one read
        // before the others, one after).
        engine.push(io(999, 5_000_000, 50_000));
        trace.push(bio(0, 3_600_000_000_000, 1_000));
        trace.insert(0, bio(8, 3_600_000_000_000, 1_000));
        let s = of(&engine, &trace).unwrap();
        println!("{s:?}");
        assert_eq!((s.timed, s.middle), (21, 4));
        // The middle four: n = 8..=11, 80 to 110 us in the device.
        assert_eq!(
            (s.submit_ns, s.queue_ns, s.device_ns, s.complete_ns),
            (5_000, 2_000, 95_000, 3_000)
        );
        assert_eq!(s.total_ns, 105_000);
    }

    #[test]
    fn ios_in_the_windows_and_between_them_are_told_apart() {
        // 40 I/Os, one every 100 ms, those in the first half of each second 20% slower.
        let engine: Vec<TimedIo> = (0..40u64)
            .map(|n| {
                let at = n * 100_000_000;
                io(
                    n * 8,
                    at,
                    if at % 1_000_000_000 < 500_000_000 {
                        120_000
                    } else {
                        100_000
                    },
                )
            })
            .collect();
        let windows: Vec<(u64, u64)> = (0..4u64)
            .map(|s| (s * 1_000_000_000, s * 1_000_000_000 + 500_000_000))
            .collect();
        assert_eq!(in_and_between(&engine, &windows), Some((120_000, 100_000)));
        // A window still open (its end 0) holds nothing; too few on a side say nothing.
        assert_eq!(in_and_between(&engine, &[(0, 0)]), None);
        assert_eq!(in_and_between(&engine[..15], &windows), None);
    }

    #[test]
    fn microseconds_early_are_held_to_the_io_and_too_few_say_nothing() {
        // The trace's queue time printed a microsecond before the engine's submission.
        let e = io(8, 10_000_500, 20_000);
        let s = Stepped {
            sector: 8,
            queued: 10_000_000,
            issued: 10_002_000,
            completed: 10_019_000,
        };
        let p = parts(&e, &s);
        println!("{p:?}");
        assert_eq!(p, [0, 1_500, 17_000, 1_500]);
        assert_eq!(p.iter().sum::<u64>(), 20_000);
        assert_eq!(of(&[e], &[s]), Err(1), "one I/O is not a middle one");
    }
}
