//! Reports of saved runs: Markdown, CSV and JSON ([`render`]), and a self-contained HTML page
//! with its charts ([`html`], drawn by `crate::plot`). What a suite run found is read from its
//! suite's contrast here, where suites and saved runs meet.

pub mod html;

use std::fmt::Write as _;

use crate::analysis::Warning;
use crate::analysis::sweep::{Param, Series};
use crate::runs::{Figures, SavedRun, figures};
use crate::suite::Suite;

/// Formats a saved run as `md`, `csv` or `json`.
pub fn render(run: &SavedRun, format: &str) -> Result<String, String> {
    match format {
        "json" => serde_json::to_string_pretty(&run.raw).map_err(|e| e.to_string()),
        "csv" => Ok(csv(&figures(run))),
        "md" => Ok(markdown(run)),
        other => Err(format!("unknown format '{other}': use md, csv or json")),
    }
}

/// One line a test: its figures and its warnings' kinds.
fn csv(figs: &[Figures]) -> String {
    let mut s = String::from("test,mb_per_s,iops,p50_us,p99_us,relative_spread,warnings\n");
    for x in figs {
        let _ = writeln!(
            s,
            "{},{:.3},{:.1},{:.1},{:.1},{},{}",
            csv_field(&x.name),
            x.mb_s,
            x.iops,
            x.p50_us,
            x.p99_us,
            x.spread.map(|v| format!("{v:.4}")).unwrap_or_default(),
            csv_field(&x.warnings.join(" "))
        );
    }
    s
}

/// The run's heading, its table of figures, what it found, its sweeps and its notes.
fn markdown(run: &SavedRun) -> String {
    let mut s = markdown_heading(run);
    s.push_str("\n| test | MB/s | IOPS | p50 | p99 | spread | notes |\n");
    s.push_str("| --- | ---: | ---: | ---: | ---: | ---: | --- |\n");
    for x in &figures(run) {
        let _ = writeln!(
            s,
            "| {} | {:.1} | {:.0} | {:.1} us | {:.1} us | {} | {} |",
            x.name,
            x.mb_s,
            x.iops,
            x.p50_us,
            x.p99_us,
            x.spread
                .map(|v| format!("{:.1}%", v * 100.0))
                .unwrap_or("-".into()),
            x.warnings.join(", ")
        );
    }
    if let Some(here) = found_here(run) {
        let _ = writeln!(s, "\n**What this run found:** {here}");
    }
    // A sweep (or any run whose tests vary one thing): its points and its knee.
    for sw in crate::plot::sweeps(run) {
        markdown_sweep(&mut s, &sw);
    }
    markdown_notes(&mut s, run);
    s
}

/// The title and what the run ran on.
fn markdown_heading(run: &SavedRun) -> String {
    let mut s = format!(
        "# blkscope {} `{}`\n\n- run: {}\n- created: {}\n- target: {} ({})\n",
        run.kind,
        run.name,
        run.id,
        run.created,
        run.target.as_ref().map(|t| t.path.as_str()).unwrap_or("-"),
        run.target
            .as_ref()
            .and_then(|t| t.device.as_deref())
            .unwrap_or("file"),
    );
    if let Some(d) = &run.device {
        if let Some(m) = &d.model {
            let _ = writeln!(s, "- model: {m}");
        }
        let _ = writeln!(
            s,
            "- block size: logical {} physical {}, rotational {}, write cache {}",
            d.logical_block_size,
            d.physical_block_size,
            d.rotational,
            d.write_cache.as_deref().unwrap_or("-")
        );
    }
    s
}

/// A sweep's points and its knee.
fn markdown_sweep(s: &mut String, sw: &Series) {
    let _ = writeln!(
        s,
        "\n## Sweep: {} by {}\n\n| {} | {} | mean | p99 |\n| ---: | ---: | ---: | ---: |",
        sw.op,
        sw.param.as_str(),
        sw.param.as_str(),
        sw.param.throughput_unit()
    );
    for p in &sw.points {
        let t = sw.param.throughput(p);
        let _ = writeln!(
            s,
            "| {} | {} | {:.1} us | {:.1} us |",
            sw.param.label(p.value),
            match sw.param {
                Param::Iodepth => format!("{t:.0}"),
                Param::Bs => format!("{t:.1}"),
            },
            p.mean_latency_ns / 1e3,
            p.p99_ns as f64 / 1e3
        );
    }
    let _ = writeln!(s, "\n{}", sw.knee_sentence());
}

/// Findings and warnings: one every test has word for word is listed once, for all of them.
fn markdown_notes(s: &mut String, run: &SavedRun) {
    let lists: Vec<&[Warning]> = run.tests.iter().map(|t| &t.result.warnings[..]).collect();
    let shared = crate::result::shared_warnings(&lists);
    let mut notes: Vec<String> = shared
        .iter()
        .map(|w| format!("- **every test** `{}`: {}", w.kind, w.message))
        .collect();
    notes.extend(run.tests.iter().flat_map(|t| {
        t.result
            .warnings
            .iter()
            .filter(|w| !shared.contains(w))
            .map(move |w| format!("- **{}** `{}`: {}", t.name, w.kind, w.message))
    }));
    if !notes.is_empty() {
        s.push_str("\n## Findings and warnings\n\n");
        s.push_str(&notes.join("\n"));
        s.push('\n');
    }
}

/// What a saved suite run found, by its suite's contrast (the suite found by name among the
/// built-in and the user's; None for a single test or a suite without one).
pub fn found_here(run: &SavedRun) -> Option<String> {
    // A single test reads no suite files.
    if run.kind != "suite" {
        return None;
    }
    found_here_in(
        run,
        &crate::suite::all().unwrap_or_else(|_| crate::suite::builtin()),
    )
}

/// [`found_here`] with the suites already at hand (the TUI's).
pub fn found_here_in(run: &SavedRun, suites: &[Suite]) -> Option<String> {
    if run.kind != "suite" {
        return None;
    }
    let suite = suites.iter().find(|s| s.name == run.name)?;
    let target = run.target.as_ref().map_or("-", |t| t.path.as_str());
    suite.found_here(
        run.tests
            .iter()
            .map(|t| (t.name.as_str(), t.result.median_rate())),
        target,
    )
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}
