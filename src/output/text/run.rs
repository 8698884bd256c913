//! `blkscope run`: a result's figures, warnings, where the time went, the spread of repeats.

use super::*;
use super::{fmt_duration, fmt_rate};
use crate::engine::TargetInfo;
use crate::result::RunResult;
use crate::units::fmt_size;
use std::fmt::Write as _;

/// The block layer's trace of a run in one line: where the test's time went, or why it was not
/// traced.
pub fn trace_line(t: &crate::analysis::traced::TraceSummary) -> String {
    // The trace prints microseconds: a time under one is "<1 us", not the histogram's 1 ns.
    let ms = |ns: u64| {
        if ns < 1_000 {
            "<1 us".to_string()
        } else {
            fmt_duration(ns as f64, 1)
        }
    };
    let split = match (&t.q2d_ns, &t.d2c_ns) {
        (Some(q), Some(d)) if q.max > 0 => format!(
            ": in the queue (Q2D) p50 {} p99 {}, in the device (D2C) p50 {} p99 {}",
            ms(q.p50),
            ms(q.p99),
            ms(d.p50),
            ms(d.p99)
        ),
        _ => match &t.split_why {
            Some(why) => format!("; no split between queue and device: {why}"),
            None => String::new(),
        },
    };
    match t.mode {
        "off" => format!("traced: no ({})", t.why.as_deref().unwrap_or("off")),
        "sampled" => format!(
            "traced: {:.2} s of {:.1} s, in {}{}{split}",
            t.seconds,
            t.of_seconds,
            crate::units::count(t.windows as usize, "window"),
            match t.timed_seconds {
                Some(timed) => format!(" (the test's I/Os timed in {timed:.2} s of them)"),
                None => String::new(),
            }
        ),
        _ => format!("traced: yes{split}"),
    }
}

/// What each loop device under the test asked of the disk below it, one line each: "below
/// loop0: its backing file /tmp/a.img on vda read 64M for it (kworker/u8:2)".
pub fn below_lines(t: &crate::analysis::traced::TraceSummary) -> Vec<String> {
    t.below()
        .iter()
        .map(|b| {
            let did = crate::units::read_wrote(b.read_bytes, b.write_bytes, "");
            format!(
                "below {}: its backing file {} on {} {did} for it ({})",
                b.loop_device,
                b.file,
                b.disk,
                b.threads.join(", ")
            )
        })
        .collect()
}

/// Where all of a middle I/O's time went, from the engine's submission to its seeing the
/// completion: "where a middle I/O's 63.0 us went (1359 of 6798 timed): submitting 0.7 us,
/// queue 0.4 us, device 53.5 us, completing 8.3 us"; or why that cannot be told.
pub fn steps_line(t: &crate::analysis::traced::TraceSummary) -> Option<String> {
    let us = |ns: u64| fmt_duration(ns as f64, 1);
    match (&t.steps, &t.steps_why) {
        (Some(s), _) => Some(format!(
            "where a middle I/O's {} went ({} of {} timed): submitting {}, queue {}, device {}, \
             completing {}{}",
            us(s.total_ns),
            s.middle,
            s.timed,
            us(s.submit_ns),
            us(s.queue_ns),
            us(s.device_ns),
            us(s.complete_ns),
            windows_against_between(s)
                .map(|w| format!("; {w}"))
                .unwrap_or_default()
        )),
        // Said once: the trace line has it already.
        (None, Some(why)) if t.split_why.as_ref() != Some(why) => Some(format!(
            "no time split from submission to completion: {why}"
        )),
        _ => None,
    }
}

/// How the I/Os in a sampled trace's windows compared with those between them, where both
/// were timed; beyond a quarter either way, the parts are said to be the windows' only.
pub fn windows_against_between(s: &crate::analysis::steps::Steps) -> Option<String> {
    use crate::analysis::steps::{parts_are_the_windows, windows_against_rest};
    let (a, b) = (s.in_windows_p50_ns?, s.between_p50_ns?);
    let us = |ns: u64| fmt_duration(ns as f64, 1);
    let ratio = windows_against_rest(s)?;
    let apart = if parts_are_the_windows(ratio) {
        ": these parts are those of the windows' I/Os, not of the run's typical one"
    } else {
        ""
    };
    Some(format!(
        "I/Os in the trace's windows took {ratio:.2}x as long as between them (p50 {} against \
         {}){apart}",
        us(a),
        us(b)
    ))
}

/// One run's result: what ran, throughput, latency, CPU, streams, notes, warnings, error.
pub fn run_result(info: &TargetInfo, r: &RunResult, run: u32, of: u32) -> String {
    let mut out = String::new();
    let which = if of > 1 {
        format!(" (run {run}/{of})")
    } else {
        String::new()
    };
    let cpus = r
        .cpus
        .as_deref()
        .map(|c| format!(" on CPUs {c}"))
        .unwrap_or_default();
    // What the writes carry; a read writes nothing, so it has no data to name.
    let data = if crate::engine::job::Op::from_name(r.op).is_some_and(|o| o.writes()) {
        format!(" {} data", r.data)
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "{} {} QD{} x{} {}{data} on {} via {}{}{cpus}{which}",
        r.op,
        fmt_size(r.bs),
        r.iodepth,
        r.jobs,
        r.mode,
        info.test_file.as_deref().unwrap_or(&info.path),
        r.engine,
        if r.polled {
            ", polled"
        } else if r.to_workers {
            ", handed to io-wq"
        } else if r.busy_polled {
            ", busy-polling"
        } else if r.few_per_wake {
            ", waking for few completions"
        } else {
            ""
        }
    );
    let _ = writeln!(
        out,
        "  {} in {:.3} s: {}, {:.0} IOPS",
        fmt_size(r.bytes),
        r.seconds,
        fmt_rate(r.bytes_per_sec),
        r.iops
    );
    let l = &r.latency_ns;
    let _ = writeln!(
        out,
        "  latency: min {}  mean {}  p50 {}  p99 {}  p99.9 {}  max {}",
        fmt_ns(l.min as f64),
        fmt_ns(l.mean),
        fmt_ns(l.p50 as f64),
        fmt_ns(l.p99 as f64),
        fmt_ns(l.p99_9 as f64),
        fmt_ns(l.max as f64)
    );
    let _ = writeln!(
        out,
        "  cpu: {:.2} s user, {:.2} s system ({:.2} us per I/O)",
        r.cpu.user_s, r.cpu.system_s, r.cpu.per_io_us
    );
    how_it_ran(&mut out, r);
    for w in &r.warnings {
        let _ = writeln!(
            out,
            "  warning [{}]: {}",
            w.kind,
            first_sentence(&w.message)
        );
    }
    if r.warnings.iter().any(|w| shortened(&w.message)) {
        let _ = writeln!(out, "  {WHOLE_WARNING}");
    }
    if let Some(e) = &r.error {
        // "error: read failed at offset 2097152: unreadable sector (medium error ...)".
        let _ = writeln!(
            out,
            "  error: {} failed{}: {}",
            e.op,
            e.offset
                .map(|o| format!(" at offset {o}"))
                .unwrap_or_default(),
            e.message,
        );
    }
    if let Some(v) = &r.verify {
        out.push_str(&verify_report(
            v,
            r.stamp.as_ref().map(stamp_span).unwrap_or(0),
            "  ",
        ));
    }
    if r.cancelled {
        let _ = writeln!(out, "  cancelled: the figures above are partial");
    }
    out
}

/// The end of the last region a stamp covers (for the bad-range map's scale).
pub(super) fn stamp_span(s: &crate::engine::pattern::Stamp) -> u64 {
    s.jobs.iter().map(|j| j.start + j.len).max().unwrap_or(0)
}

/// The spread of a repeated run (empty when it was run once).
pub fn spread(r: &RunResult) -> String {
    let mut out = String::new();
    if let Some(s) = &r.spread {
        let _ = writeln!(
            out,
            "{} runs: min {}  median {}  max {}  (spread {:.1}% of the median)",
            s.runs,
            fmt_rate(s.bytes_per_sec.min),
            fmt_rate(s.bytes_per_sec.median),
            fmt_rate(s.bytes_per_sec.max),
            s.relative_spread * 100.0
        );
        let _ = writeln!(
            out,
            "         IOPS min {:.0}  median {:.0}  max {:.0}",
            s.iops.min, s.iops.median, s.iops.max
        );
    }
    out
}

/// Each job's stream (of several), the engine and why, its note, and the trace's lines.
fn how_it_ran(out: &mut String, r: &RunResult) {
    if r.streams.len() > 1 {
        for s in &r.streams {
            let _ = writeln!(
                out,
                "  job {} at offset {}: {} in {:.3} s, {}",
                s.job,
                fmt_size(s.offset),
                fmt_size(s.bytes),
                s.seconds,
                fmt_rate(s.bytes_per_sec)
            );
        }
    }
    if let Some(c) = r.engine_chosen() {
        let _ = writeln!(out, "  engine: {c}");
    }
    if let Some(n) = &r.engine_note {
        let _ = writeln!(out, "  note: {n}");
    }
    if let Some(t) = &r.trace {
        let _ = writeln!(out, "  {}", trace_line(t));
        if let Some(line) = steps_line(t) {
            let _ = writeln!(out, "  {line}");
        }
        for line in below_lines(t) {
            let _ = writeln!(out, "  {line}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::steps::Steps;
    use crate::analysis::traced::TraceSummary;

    /// A trace kept in windows whose timed I/Os took `inside` ns at the median, `between` the
    /// rest.
    fn sampled(inside: u64, between: u64) -> TraceSummary {
        let mut t = TraceSummary::off("made up");
        t.mode = "sampled";
        t.steps = Some(Steps {
            timed: 158,
            middle: 31,
            total_ns: 1_530_000,
            submit_ns: 20_400,
            queue_ns: 19_500,
            device_ns: 1_251_100,
            complete_ns: 239_000,
            in_windows_p50_ns: Some(inside),
            between_p50_ns: Some(between),
        });
        t
    }

    #[test]
    fn parts_of_windows_unlike_the_rest_are_said_to_be_the_windows() {
        // As a first TUI run on a loop device gave them.
        let far = steps_line(&sampled(1_600_000, 493_100)).unwrap();
        println!("{far}");
        assert!(
            far.ends_with(
                "I/Os in the trace's windows took 3.24x as long as between them (p50 1.60 ms \
                 against 493.1 us): these parts are those of the windows' I/Os, not of the \
                 run's typical one"
            ),
            "{far}"
        );
        let near = steps_line(&sampled(546_900, 485_600)).unwrap();
        println!("{near}");
        assert!(
            near.ends_with("(p50 546.9 us against 485.6 us)"),
            "1.13x: {near}"
        );
        let faster = steps_line(&sampled(400_000, 520_000)).unwrap();
        assert!(
            faster.contains("0.77x") && faster.contains("not of the run's"),
            "{faster}"
        );
    }

    #[test]
    fn one_window_is_one_window() {
        let mut t = sampled(500_000, 500_000);
        (t.seconds, t.of_seconds) = (1.25, 2.0);
        for (n, want) in [(1, "in 1 window"), (4, "in 4 windows")] {
            t.windows = n;
            let line = trace_line(&t);
            println!("{line}");
            assert!(
                line.starts_with(&format!("traced: 1.25 s of 2.0 s, {want}")),
                "{line}"
            );
        }
    }
}
