//! The text of the headless commands' human output: a check's verdict, a run's result and its
//! spread, a suite's table, an explanation and a comparison. Each function returns the lines,
//! newline-terminated; the caller prints them.

use std::fmt::Write as _;

use super::{fmt_duration, fmt_rate};
use crate::analysis::explain;
use crate::device::{ReasonCode, SafetyReport, WriteSafety};
use crate::engine::{Job, TargetInfo};
use crate::result::RunResult;
use crate::units::fmt_size;

fn fmt_ns(ns: f64) -> String {
    fmt_duration(ns, 1)
}

/// `check`'s verdict, its reasons and the advice that follows from them.
pub fn check(r: &SafetyReport) -> String {
    let mut out = String::new();
    let what = match &r.device {
        Some(d) => format!("{} ({d})", r.target),
        None => r.target.clone(),
    };
    let _ = writeln!(out, "{what}: {}", r.write_safety.as_str());
    for reason in &r.reasons {
        let _ = writeln!(out, "  [{}] {}", reason.code.badge(), reason.detail);
    }
    for note in &r.read_notes {
        let _ = writeln!(out, "  note: {}", note.detail);
    }
    let advice = match (r.write_safety, &r.device) {
        (WriteSafety::Clear, _) if r.reasons.iter().any(|x| x.code == ReasonCode::ExistingFile) => {
            "A write test may run with --force (it overwrites the file).".to_string()
        }
        (WriteSafety::Clear, _) => "A write test may run.".to_string(),
        (WriteSafety::Confirm, Some(d)) => {
            format!("A write test destroys what is on it: it needs --confirm {d}.")
        }
        (WriteSafety::Confirm, None) => "A write test needs confirmation.".to_string(),
        // A device of size 0, or one that cannot be opened, cannot be read either: `run`
        // refuses the read too.
        (WriteSafety::Blocked, _) if r.reasons.iter().any(|x| x.code == ReasonCode::Empty) => {
            "Nothing can be tested: write and read tests alike need a size above 0.".to_string()
        }
        (WriteSafety::Blocked, _) if r.reasons.iter().any(|x| x.code == ReasonCode::OpenFailed) => {
            "Write tests are refused, and a read test cannot open it either.".to_string()
        }
        (WriteSafety::Blocked, _) => "Write tests are refused; read tests are allowed.".to_string(),
    };
    let _ = writeln!(out, "{advice}");
    out
}

/// Where a warning printed by its first sentence is said whole.
const WHOLE_WARNING: &str =
    "(each warning above is its first sentence: blkscope explain KIND says more, --json all)";

/// The first sentence of a message (through its full stop), or all of it: a warning's headline
/// on a console, where a 900-character paragraph would bury the figures.
pub fn first_sentence(s: &str) -> &str {
    s.match_indices(". ")
        .find(|(i, _)| s[i + 2..].starts_with(|c: char| c.is_uppercase()))
        .map_or(s, |(i, _)| &s[..=i])
}

/// Whether [`first_sentence`] leaves something out.
fn shortened(s: &str) -> bool {
    first_sentence(s).len() < s.trim_end().len()
}

/// The block layer's trace of a run in one line: where the test's time went, or why it was not
/// traced.
fn trace_line(t: &crate::analysis::traced::TraceSummary) -> String {
    let ms = |ns: u64| fmt_duration(ns as f64, 1);
    let split = match (&t.q2d_ns, &t.d2c_ns) {
        (Some(q), Some(d)) if q.max > 0 => format!(
            ": in the queue (Q2D) p50 {} p99 {}, in the device (D2C) p50 {} p99 {}",
            ms(q.p50),
            ms(q.p99),
            ms(d.p50),
            ms(d.p99)
        ),
        _ => String::new(),
    };
    match t.mode {
        "off" => format!("traced: no ({})", t.why.as_deref().unwrap_or("off")),
        "sampled" => format!("traced: the first {:.2} s{split}", t.seconds),
        _ => format!("traced: yes{split}"),
    }
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
    if let Some(n) = &r.engine_note {
        let _ = writeln!(out, "  note: {n}");
    }
    if let Some(t) = &r.trace {
        let _ = writeln!(out, "  {}", trace_line(t));
    }
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
fn stamp_span(s: &crate::engine::pattern::Stamp) -> u64 {
    s.jobs.iter().map(|j| j.start + j.len).max().unwrap_or(0)
}

/// A read-back: sectors checked and bad, the first bad ranges, and a map over `size` bytes.
pub fn verify_report(v: &crate::verify::VerifyReport, size: u64, indent: &str) -> String {
    let mut out = String::new();
    let rate = if v.seconds > 0.0 {
        format!(
            ", read back at {}",
            fmt_rate(v.bytes_read as f64 / v.seconds)
        )
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "{indent}verify: {} sectors checked, {} bad{rate}",
        v.sectors_checked, v.sectors_bad
    );
    if let Some(why) = &v.stopped {
        let _ = writeln!(out, "{indent}verify stopped early: {why}");
    }
    for r in v.bad_ranges.iter().take(10) {
        let _ = writeln!(
            out,
            "{indent}  bad: {} bytes at offset {:#x} ({}): {}",
            r.length,
            r.offset,
            fmt_size(r.offset),
            r.kind.name()
        );
    }
    if v.bad_ranges.len() > 10 || v.ranges_cut {
        let _ = writeln!(
            out,
            "{indent}  ... {} ranges in all{} (--json lists them)",
            v.bad_ranges.len(),
            if v.ranges_cut {
                ", more not listed"
            } else {
                ""
            }
        );
    }
    if v.is_bad() && size > 0 {
        let _ = writeln!(
            out,
            "{indent}map [{}] ({})",
            crate::verify::bad_range_map(v, size, 60),
            crate::verify::map_legend()
        );
    }
    // What each kind found means, once each.
    for kind in crate::verify::BadKind::ALL {
        if v.bad_ranges.iter().any(|r| r.kind == kind) {
            let _ = writeln!(out, "{indent}{}: {}", kind.name(), kind.meaning());
        }
    }
    out
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
            super::count(s.tests.len(), "test"),
            super::count(s.repeat as usize, "run")
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
                t.result.iops,
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
                        t.result.iops,
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
        super::count(repeat as usize, "run")
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
            r.iops,
            fmt_ns(r.latency_ns.p99 as f64),
            spread
        );
        if r.streams.len() > 1 {
            let s: Vec<String> = r
                .streams
                .iter()
                .map(|s| format!("job {} {:.1} MB/s", s.job, s.bytes_per_sec / 1e6))
                .collect();
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

/// One test explained: its label, what it is for, the blkscope, dd and fio lines, what each
/// flag does, and the traps it avoids.
pub fn explain_job(name: &str, about: Option<&str>, job: &Job, target: &str) -> String {
    let mut out = String::new();
    let total = job.planned_bytes();
    let _ = writeln!(out, "{name}: {}", job.label());
    if let Some(a) = about {
        let _ = writeln!(out, "  {a}");
    }
    let c = explain::commands(job, target, total);
    let _ = writeln!(out, "  blkscope: {}", c.blkscope);
    match &c.dd {
        Ok(dd) => {
            let _ = writeln!(out, "  dd:       {dd}");
        }
        Err(why) => {
            let _ = writeln!(out, "  dd:       (none: {why})");
        }
    }
    let _ = writeln!(out, "  fio:      {}", c.fio);
    for n in explain::flag_notes(job) {
        let _ = writeln!(out, "    - {n}");
    }
    for t in explain::traps(job) {
        let _ = writeln!(out, "  trap: {t}");
    }
    out
}

/// `explain KIND`: what warnings of `kind` mean, then the whole of what the newest saved run
/// that had one said (`seen`: run id, test, message), wrapped for an 80-column console.
pub fn kind_explanation(kind: &str, about: &str, seen: Option<(String, String, String)>) -> String {
    let mut out = wrap(&format!("{kind}: {about}"), 78, "") + "\n";
    match seen {
        Some((id, test, message)) => {
            let _ = writeln!(
                out,
                "\nIn saved run {id},\ntest {test}:\n{}",
                wrap(&message, 78, "  ")
            );
        }
        None => {
            let _ = writeln!(
                out,
                "\nNo saved run has one among the newest: `blkscope runs` lists them."
            );
        }
    }
    out
}

/// `text` in lines of at most `width` columns (words kept whole), each after `indent`.
fn wrap(text: &str, width: usize, indent: &str) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::from(indent);
    for word in text.split_whitespace() {
        if line.len() > indent.len() && line.len() + 1 + word.len() > width {
            lines.push(std::mem::replace(&mut line, String::from(indent)));
        }
        if line.len() > indent.len() {
            line.push(' ');
        }
        line.push_str(word);
    }
    lines.push(line);
    lines.join("\n")
}

/// An explanation: a whole suite's head, then each test.
pub fn explanation(e: &crate::suite::Explanation, target: &str) -> String {
    let mut out = String::new();
    if let Some(s) = &e.suite {
        let _ = writeln!(out, "{}: {}", s.name, s.title);
        if let Some(src) = &s.source {
            let _ = writeln!(out, "From: {src}");
        }
        let _ = writeln!(out, "{}", s.about);
        if let Some(f) = &s.found {
            let _ = writeln!(out, "What the article found: {f}");
        }
        if let Some(c) = &s.contrast {
            let _ = writeln!(
                out,
                "What blkscope tells you after the run: {}.",
                c.promise()
            );
        }
        let _ = writeln!(
            out,
            "Each test runs {}.\n",
            match s.repeat {
                1 => "once".to_string(),
                n => format!("{n} times"),
            }
        );
        if let Some(fill) = s.fill_job(512) {
            out.push_str(&explain_job(
                crate::suite::FILL_NAME,
                Some(
                    "once, before the tests, not a result: random data over what the read tests \
                     read, as CrystalDiskMark writes its test file first (reads of blocks never \
                     written measure nothing)",
                ),
                &fill,
                target,
            ));
            out.push('\n');
        }
    }
    for t in &e.tests {
        out.push_str(&explain_job(&t.name, t.about.as_deref(), &t.job, target));
        if e.in_suite {
            out.push('\n');
        }
    }
    out
}

/// Two saved runs side by side.
pub fn comparison(a_id: &str, b_id: &str, diffs: &[crate::runs::Diff]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "A: {a_id}\nB: {b_id}");
    let _ = writeln!(out, "{:<9} {:>12} {:>12} {:>7}", "", "A", "B", "B/A");
    // Each test's name on a line of its own, then its figures: names are long, and two lone
    // tests compared carry both names.
    let mut last = None;
    for d in diffs {
        let name = d.name();
        if last.as_ref() != Some(&name) {
            let _ = writeln!(out, "{name}");
            last = Some(name);
        }
        let _ = writeln!(
            out,
            "  {:<7} {:>12.1} {:>12.1} {:>7}",
            d.metric,
            d.a,
            d.b,
            d.ratio.map(|r| format!("{r:.2}x")).unwrap_or("-".into())
        );
    }
    out
}

/// The doctor's findings, device by device, worst first.
pub fn doctor(reports: &[crate::doctor::DeviceReport]) -> String {
    let mut out = String::new();
    for r in reports {
        let worst = r.worst().map(|w| w.as_str()).unwrap_or("nothing found");
        let holds = r
            .holds
            .as_deref()
            .map(|p| format!(", which holds {p}"))
            .unwrap_or_default();
        let _ = writeln!(out, "{} ({}{holds}): {worst}", r.name, r.path);
        for f in &r.findings {
            let _ = writeln!(
                out,
                "  [{}] {}: {}",
                f.severity().as_str(),
                f.kind,
                f.message
            );
        }
        let _ = writeln!(out);
    }
    out
}

/// A sweep: each point with a bar of its throughput and its latency, and the knee.
pub fn sweep(series: &[crate::analysis::sweep::Series]) -> String {
    use crate::analysis::sweep::Param;
    let mut out = String::new();
    for s in series {
        let _ = writeln!(out, "\n{} by {}:", s.op, s.param.as_str());
        let max = s
            .points
            .iter()
            .map(|p| match s.param {
                Param::Iodepth => p.iops,
                Param::Bs => p.bytes_per_sec,
            })
            .fold(0.0f64, f64::max)
            .max(1.0);
        for (i, p) in s.points.iter().enumerate() {
            let v = match s.param {
                Param::Iodepth => p.iops,
                Param::Bs => p.bytes_per_sec,
            };
            let bar = "#".repeat(((v / max) * 30.0).round() as usize);
            let label = s.param.label(p.value);
            let mark = if s.knee.as_ref().is_some_and(|k| k.index == i) {
                "  <- knee"
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "  {label:>6} {bar:<30} {:>9.0} IOPS {:>8.1} MB/s  mean {:>9}  p99 {:>9}{mark}",
                p.iops,
                p.bytes_per_sec / 1e6,
                fmt_ns(p.mean_latency_ns),
                fmt_ns(p.p99_ns as f64)
            );
        }
        match &s.knee {
            Some(k) => {
                let _ = writeln!(out, "  knee: {}", k.why);
            }
            None => {
                let _ = writeln!(
                    out,
                    "  no knee: latency never grew faster than throughput over this range"
                );
            }
        }
    }
    out
}

/// One interval of `doctor --watch`: who did I/O on which device, most first.
pub fn top(iv: &crate::doctor::watch::Interval) -> String {
    let mut out = String::new();
    let how = if iv.sampled {
        format!(
            " (events came too fast: the first {:.2} s traced)",
            iv.seconds
        )
    } else {
        String::new()
    };
    let lost = match iv.lost {
        0 => String::new(),
        n => format!(", {n} events lost"),
    };
    let _ = writeln!(out, "block layer trace, {:.2} s{how}{lost}", iv.seconds);
    let _ = writeln!(
        out,
        "{:<10} {:>7}  {:<16} {:>10} {:>10} {:>8} {:>10}",
        "DEVICE", "PID", "PROCESS", "READ/s", "WRITE/s", "IOPS", "D2C mean"
    );
    if iv.rows.is_empty() {
        let _ = writeln!(out, "(no I/O)");
    }
    for r in &iv.rows {
        let comm = if r.kernel {
            format!("[{}]", r.comm)
        } else {
            r.comm.clone()
        };
        let _ = writeln!(
            out,
            "{:<10} {:>7}  {:<16.16} {:>10} {:>10} {:>8.0} {:>10}",
            r.device,
            r.pid,
            comm,
            fmt_size(r.read_bytes_per_sec as u64),
            fmt_size(r.write_bytes_per_sec as u64),
            r.iops,
            r.d2c_mean_us
                .map(|us| crate::output::fmt_duration(us * 1e3, 1))
                .unwrap_or_else(|| "-".into())
        );
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use crate::analysis::Warning;
    use crate::analysis::findings::Kind;
    use crate::device::{Reason, ReasonCode, SafetyReport, WriteSafety};
    use crate::result::fixed_result;
    use crate::session::TestOutcome;

    /// A long warning is said on a console by its kind and first sentence, with where the rest
    /// is; the rest is not printed.
    #[test]
    fn a_warning_prints_its_first_sentence() {
        assert_eq!(
            super::first_sentence("a (e.g. /dev/sdb). B is next. C"),
            "a (e.g. /dev/sdb)."
        );
        assert_eq!(
            super::first_sentence("one: no full stop"),
            "one: no full stop"
        );
        let mut r = fixed_result(100e6);
        r.warnings = vec![
            Warning::new(
                Kind::IoWorkerWakeups,
                "io_uring could not issue the I/O on zram0 without blocking, so io-wq ran it. At \
                 queue depth 1 each I/O then waits for a worker to wake. Run again with --cpus N.",
            ),
            Warning::new(Kind::Zeros, "zeros compress; use --data random"),
        ];
        let info = crate::engine::TargetInfo {
            path: "/dev/zram0".into(),
            kind: "block",
            device: Some("zram0".into()),
            size_bytes: 1 << 30,
            logical_block_size: Some(4096),
            physical_block_size: Some(4096),
            rotational: Some(false),
            write_cache: None,
            scheduler: None,
            test_file: None,
            write_safety: WriteSafety::Clear,
        };
        let t = super::run_result(&info, &r, 1, 1);
        println!("{t}");
        assert!(
            t.contains(
                "warning [io_worker_wakeups]: io_uring could not issue the I/O on zram0 \
                        without blocking, so io-wq ran it.\n"
            ),
            "{t}"
        );
        assert!(!t.contains("waits for a worker"), "{t}");
        assert!(
            t.contains("warning [zeros]: zeros compress; use --data random\n"),
            "{t}"
        );
        assert!(t.contains("blkscope explain KIND"), "{t}");
        // Nothing shortened, no pointer.
        r.warnings.remove(0);
        assert!(!super::run_result(&info, &r, 1, 1).contains("explain KIND"));
    }

    /// A blocked device's last line says whether a read may run: not on a device of size 0
    /// (`run` says "the device has nothing to test") nor on one that cannot be opened.
    #[test]
    fn a_blocked_verdict_says_whether_a_read_can_run() {
        let report = |codes: &[ReasonCode]| SafetyReport {
            target: "/dev/x".into(),
            target_kind: "block",
            device: Some("x".into()),
            write_safety: WriteSafety::Blocked,
            reasons: codes
                .iter()
                .map(|&code| Reason {
                    code,
                    detail: "why".into(),
                })
                .collect(),
            read_notes: Vec::new(),
        };
        let last = |codes: &[ReasonCode]| {
            let t = super::check(&report(codes));
            println!("{t}");
            t.lines().last().unwrap().to_string()
        };
        assert_eq!(
            last(&[ReasonCode::Mounted]),
            "Write tests are refused; read tests are allowed."
        );
        assert!(last(&[ReasonCode::Empty]).starts_with("Nothing can be tested"));
        assert!(
            last(&[ReasonCode::Mounted, ReasonCode::OpenFailed])
                .contains("a read test cannot open it either")
        );
    }

    /// A finding every test has word for word is said once, under the table; one that differs
    /// stays under its own row.
    #[test]
    fn a_finding_every_test_shares_is_said_once() {
        let suite = crate::suite::find("zeros-trap").unwrap().expect("built in");
        let shared = Warning::new(Kind::NeverWritten, "64M of the 64M is holes");
        let test = |name: &str, own: &str| {
            let mut result = fixed_result(400e6);
            result.warnings = vec![shared.clone(), Warning::new(Kind::BusyProcesses, own)];
            TestOutcome {
                name: name.into(),
                about: None,
                job: Default::default(),
                result,
                setting: None,
            }
        };
        let tests = [
            test("zeros", "cargo moved 1M"),
            test("random data", "cargo moved 2M"),
        ];
        let text = super::suite_table(&suite, "/dev/loop9", 1, &tests, false);
        println!("{text}");
        assert_eq!(text.matches("holes").count(), 1, "{text}");
        let every = text.find("every test:").expect("a shared section");
        assert!(text[every..].contains("[never_written] 64M"), "{text}");
        for own in ["cargo moved 1M", "cargo moved 2M"] {
            let at = text.find(own).expect(own);
            assert!(at < every, "{own} under its row: {text}");
        }
        // One test: nothing to share, the finding stays under it.
        let one = super::suite_table(&suite, "/dev/loop9", 1, &tests[..1], false);
        assert!(
            !one.contains("every test:") && one.contains("holes"),
            "{one}"
        );
    }
}
