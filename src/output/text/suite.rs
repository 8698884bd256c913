//! `blkscope suites` and `suite`: the list, and a suite's table (and a setting's A/B).

use super::*;
use crate::units::fmt_size;
use std::fmt::Write as _;

/// The list of suites.
pub fn suites(suites: &[crate::suite::Suite]) -> String {
    let mut out = String::new();
    for s in suites {
        let origin = if s.origin == "builtin" {
            String::new()
        } else {
            format!("  [{}]", s.origin)
        };
        let _ = writeln!(
            out,
            "{:<12} {} ({}, {} each){origin}",
            s.name,
            s.title,
            crate::output::count(s.tests.len(), "test"),
            crate::output::count(s.repeat as usize, "run")
        );
    }
    for (n, about) in crate::session::SETTING_SUITES {
        let _ = writeln!(out, "{n:<12} {about}");
    }
    let _ = writeln!(
        out,
        "\nRun one: blkscope suite NAME TARGET   Explain one: blkscope explain NAME"
    );
    out
}

/// The scheduler or write-cache suite: each test under each setting, side by side.
pub fn setting_table(suite: &str, target: &str, tests: &[crate::session::TestOutcome]) -> String {
    let mut out = String::new();
    if suite != "scheduler" {
        let _ = writeln!(out, "suite {suite} on {target}");
        let _ = writeln!(
            out,
            "  {:<32} {:>9} {:>10} {:>10}",
            "test", "IOPS", "p50", "p99"
        );
        for t in tests {
            let _ = writeln!(
                out,
                "  {:<32} {:>9.0} {:>10} {:>10}",
                t.name,
                crate::result::median_iops(t.result.iops, t.result.spread.as_ref()),
                fmt_ns(t.result.latency_ns.p50 as f64),
                fmt_ns(t.result.latency_ns.p99 as f64)
            );
        }
        return out;
    }
    let mut settings: Vec<String> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    for t in tests {
        if let Some((_, v)) = &t.setting
            && !settings.contains(v)
        {
            settings.push(v.clone());
        }
        if !names.contains(&t.name) {
            names.push(t.name.clone());
        }
    }
    let what = if suite == "scheduler" {
        "scheduler"
    } else {
        "write cache"
    };
    let _ = writeln!(out, "suite {suite} on {target}: IOPS and p99 by {what}");
    let mut head = format!("  {:<28}", "test");
    for s in &settings {
        let _ = write!(head, " {:>20}", s);
    }
    let _ = writeln!(out, "{head}");
    for n in &names {
        let mut line = format!("  {n:<28}");
        for s in &settings {
            let cell = tests
                .iter()
                .find(|t| &t.name == n && t.setting.as_ref().is_some_and(|(_, v)| v == s))
                .map(|t| {
                    format!(
                        "{:.0} / {}",
                        crate::result::median_iops(t.result.iops, t.result.spread.as_ref()),
                        fmt_ns(t.result.latency_ns.p99 as f64)
                    )
                })
                .unwrap_or_else(|| "-".into());
            let _ = write!(line, " {cell:>20}");
        }
        let _ = writeln!(out, "{line}");
    }
    out
}

/// A suite's results: one row per test with its median, range, spread, streams and findings.
pub fn suite_table(
    suite: &crate::suite::Suite,
    target: &str,
    repeat: u32,
    tests: &[crate::session::TestOutcome],
    cancelled: bool,
) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{} on {target} ({} each)",
        suite.title,
        crate::output::count(repeat as usize, "run")
    );
    let _ = writeln!(
        out,
        "  {:<28} {:>10} {:>19} {:>9} {:>9} {:>7}",
        "test", "MB/s", "(min-max)", "IOPS", "p99", "spread"
    );
    // A finding every test has word for word (never_written on a device not yet filled, a
    // sweep's every point) is said once, under the table, instead of under each row.
    let lists: Vec<&[crate::analysis::Warning]> =
        tests.iter().map(|t| &t.result.warnings[..]).collect();
    let shared = crate::result::shared_warnings(&lists);
    for t in tests {
        let r = &t.result;
        let (lo, hi, spread) = match &r.spread {
            Some(s) => (
                s.bytes_per_sec.min / 1e6,
                s.bytes_per_sec.max / 1e6,
                format!("{:.1}%", s.relative_spread * 100.0),
            ),
            None => (r.bytes_per_sec / 1e6, r.bytes_per_sec / 1e6, "-".into()),
        };
        // The row's figure whatever became of the run (a failed one says so beneath).
        let med = crate::result::median_rate(r.bytes_per_sec, r.spread.as_ref());
        let _ = writeln!(
            out,
            "  {:<28} {:>10.1} {:>19} {:>9.0} {:>9} {:>7}",
            t.name,
            med / 1e6,
            format!("({lo:.1}-{hi:.1})"),
            crate::result::median_iops(r.iops, r.spread.as_ref()),
            fmt_ns(r.latency_ns.p99 as f64),
            spread
        );
        if r.streams.len() > 1 {
            let s: Vec<String> = r
                .streams
                .iter()
                .map(|s| {
                    format!(
                        "job {} {:.1} MB/s in {:.3} s",
                        s.job,
                        s.bytes_per_sec / 1e6,
                        s.seconds
                    )
                })
                .collect();
            // Each over its own time: a stream that ended first ran faster than the total,
            // which is over the run's.
            let _ = writeln!(out, "      per stream: {}", s.join(", "));
        }
        if let Some(d) = &r.device_bytes {
            let _ = writeln!(
                out,
                "      {} read {} and wrote {} while it ran",
                d.device,
                fmt_size(d.read),
                fmt_size(d.written)
            );
        }
        for w in r.warnings.iter().filter(|w| !shared.contains(w)) {
            let _ = writeln!(out, "      [{}] {}", w.kind, first_sentence(&w.message));
        }
        if let Some(e) = &r.error {
            let _ = writeln!(out, "      error: {} {}", e.op, e.message);
        }
    }
    if !shared.is_empty() {
        let _ = writeln!(out, "  every test:");
        for w in &shared {
            let _ = writeln!(out, "      [{}] {}", w.kind, first_sentence(&w.message));
        }
    }
    let all = tests.iter().flat_map(|t| t.result.warnings.iter());
    if all.into_iter().any(|w| shortened(&w.message)) {
        let _ = writeln!(out, "  {WHOLE_WARNING}");
    }
    if let Some(here) = suite.found_here(
        tests
            .iter()
            .map(|t| (t.name.as_str(), t.result.median_rate())),
        target,
    ) {
        let _ = writeln!(out, "\nWhat this run found: {here}");
    }
    if let Some(found) = &suite.found {
        let _ = writeln!(out, "\nWhat the article found: {found}");
    }
    if cancelled {
        let _ = writeln!(out, "cancelled: the suite stopped early");
    }
    out
}
