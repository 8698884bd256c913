//! Self-contained HTML reports: inline SVG and CSS only, no script, font or image fetched from
//! anywhere, so a report can be mailed or opened offline.

use std::fmt::Write as _;

use crate::analysis::steps::Steps;
use crate::engine::result::Latency;
use crate::plot::{svg, sweeps, total_buckets};
use crate::runs::{Figures, SavedRecord, SavedRun, figures};

/// Escapes text for HTML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

const STYLE: &str = "body{font-family:sans-serif;max-width:820px;margin:2em auto;color:#222}\
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ccc}\
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:3px 8px;\
text-align:right}td:first-child,th:first-child{text-align:left}.note{color:#555}\
.chart{margin:0.5em 0}.knee{font-weight:bold}";

fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <title>{}</title><style>{STYLE}</style></head><body>\n{body}</body></html>\n",
        esc(title)
    )
}

fn figures_table(figs: &[Figures]) -> String {
    let mut s = String::from(
        "<table><tr><th>test</th><th>MB/s</th><th>IOPS</th><th>p50</th><th>p99</th>\
         <th>spread</th><th>notes</th></tr>\n",
    );
    for f in figs {
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>{:.1}</td><td>{:.0}</td><td>{:.1} us</td><td>{:.1} us</td>\
             <td>{}</td><td>{}</td></tr>",
            esc(&f.name),
            f.mb_s,
            f.iops,
            f.p50_us,
            f.p99_us,
            f.spread
                .map(|v| format!("{:.1}%", v * 100.0))
                .unwrap_or_else(|| "-".into()),
            esc(&f.warnings.join(", "))
        );
    }
    s.push_str("</table>\n");
    s
}

fn chart(out: &mut String, svg: Result<String, String>) {
    match svg {
        Ok(s) => {
            let _ = writeln!(out, "<div class=\"chart\">{s}</div>");
        }
        Err(e) => {
            let _ = writeln!(out, "<p class=\"note\">(chart not drawn: {})</p>", esc(&e));
        }
    }
}

/// The charts of one test: throughput and IOPS over time, the latency heatmap and histogram.
fn test_charts(out: &mut String, t: &SavedRecord) {
    let r = &t.result;
    if r.samples.is_empty() {
        out.push_str(
            "<p class=\"note\">No time series: this run was saved before blkscope-run/2.</p>\n",
        );
        return;
    }
    let one = [(t.name.as_str(), &r.samples[..])];
    chart(
        out,
        svg::over_time("Throughput", "MB/s", &one, |s| s.bytes_per_sec / 1e6),
    );
    chart(out, svg::over_time("IOPS", "IOPS", &one, |s| s.iops));
    chart(out, svg::heatmap("Latency over time", &r.samples));
    let l = &r.latency_ns;
    chart(
        out,
        svg::histogram(
            "Latency histogram",
            &total_buckets(&r.samples),
            &[("p50", l.p50), ("p99", l.p99), ("p99.9", l.p99_9)],
        ),
    );
}

/// Where the time of each traced test's I/Os went: a middle I/O's four parts, from the engine's
/// submission to its completion, where it was timed at every step; Q2D and D2C at p50 and p99.
/// One chart of each for the tests given; nothing when none has either.
fn split_chart<'a>(out: &mut String, tests: impl Iterator<Item = (String, &'a SavedRecord)>) {
    let tests: Vec<(String, &SavedRecord)> = tests.collect();
    let rows: Vec<(String, &Latency, &Latency)> = tests
        .iter()
        .filter_map(|(name, t)| {
            let tr = t.result.trace.as_ref()?;
            Some((name.clone(), tr.q2d_ns.as_ref()?, tr.d2c_ns.as_ref()?))
        })
        .collect();
    let steps: Vec<(String, &Steps)> = tests
        .iter()
        .filter_map(|(name, t)| Some((name.clone(), t.result.trace.as_ref()?.steps.as_ref()?)))
        .collect();
    if rows.is_empty() && steps.is_empty() {
        return;
    }
    out.push_str("<h2>Where the time went (the block layer's trace)</h2>\n");
    if !steps.is_empty() {
        chart(
            out,
            svg::steps(
                "A middle I/O, from submission to completion, microseconds",
                &steps,
            ),
        );
        // Kept in windows: how their I/Os compared with the rest, whose parts these are not.
        for (name, s) in &steps {
            if let Some(w) = crate::output::text::windows_against_between(s) {
                let _ = writeln!(out, "<p class=\"note\">{}: {}</p>", esc(name), esc(&w));
            }
        }
    }
    if !rows.is_empty() {
        chart(
            out,
            svg::time_split("Q2D (queue) and D2C (device), microseconds", &rows),
        );
    }
}

/// A saved run as one HTML page.
pub fn report(run: &SavedRun) -> String {
    let mut b = String::new();
    let _ = writeln!(
        b,
        "<h1>blkscope {} <code>{}</code></h1>",
        esc(&run.kind),
        esc(&run.name)
    );
    let _ = writeln!(
        b,
        "<p>run {} &middot; {} &middot; target {} ({})</p>",
        esc(&run.id),
        esc(&run.created),
        esc(run.target.as_ref().map(|t| t.path.as_str()).unwrap_or("-")),
        esc(run
            .target
            .as_ref()
            .and_then(|t| t.device.as_deref())
            .unwrap_or("file"))
    );
    if let Some(d) = &run.device {
        let _ = writeln!(
            b,
            "<p>{}logical block {} physical {}, {}, write cache {}</p>",
            d.model
                .as_deref()
                .map(|m| format!("{}: ", esc(m)))
                .unwrap_or_default(),
            d.logical_block_size,
            d.physical_block_size,
            if d.rotational {
                "rotational"
            } else {
                "non-rotational"
            },
            esc(d.write_cache.as_deref().unwrap_or("-"))
        );
    }
    b.push_str(&figures_table(&figures(run)));
    if let Some(here) = super::found_here(run) {
        let _ = writeln!(
            b,
            "<p class=\"found\"><b>What this run found:</b> {}</p>",
            esc(&here)
        );
    }
    for s in sweeps(run) {
        let _ = writeln!(b, "<h2>Sweep: {} by {}</h2>", esc(&s.op), s.param.as_str());
        chart(&mut b, svg::sweep(&s));
        let class = if s.knee.is_some() {
            " class=\"knee\""
        } else {
            ""
        };
        let _ = writeln!(b, "<p{class}>{}</p>", esc(&s.knee_sentence()));
    }
    split_chart(&mut b, run.tests.iter().map(|t| (t.name.clone(), t)));
    for t in &run.tests {
        let _ = writeln!(b, "<h2>{}</h2>", esc(&t.name));
        test_charts(&mut b, t);
        if !t.result.warnings.is_empty() {
            b.push_str("<ul>\n");
            for w in &t.result.warnings {
                let _ = writeln!(
                    b,
                    "<li><b>{}</b>: {}</li>",
                    esc(w.kind.name()),
                    esc(&w.message)
                );
            }
            b.push_str("</ul>\n");
        }
    }
    page(&format!("blkscope {} {}", run.kind, run.name), &b)
}

/// Two saved runs on the same axes, test by test.
pub fn compare(a: &SavedRun, b: &SavedRun, diffs: &[crate::runs::Diff]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<h1>blkscope compare</h1><p>A: {} ({})<br>B: {} ({})</p>",
        esc(&a.id),
        esc(a.target.as_ref().map(|t| t.path.as_str()).unwrap_or("-")),
        esc(&b.id),
        esc(b.target.as_ref().map(|t| t.path.as_str()).unwrap_or("-"))
    );
    s.push_str("<table><tr><th>test</th><th></th><th>A</th><th>B</th><th>B/A</th></tr>\n");
    for d in diffs {
        let _ = writeln!(
            s,
            "<tr><td>{}</td><td>{}</td><td>{:.1}</td><td>{:.1}</td><td>{}</td></tr>",
            esc(&d.name()),
            esc(d.metric),
            d.a,
            d.b,
            d.ratio
                .map(|r| format!("{r:.2}x"))
                .unwrap_or_else(|| "-".into())
        );
    }
    s.push_str("</table>\n");
    let mut noted = Vec::new();
    for d in diffs {
        if noted.contains(&d.name()) {
            continue;
        }
        for n in d.notes() {
            let _ = writeln!(s, "<p class=\"note\">{}: {}</p>", esc(&d.name()), esc(&n));
        }
        noted.push(d.name());
    }
    split_chart(
        &mut s,
        crate::runs::pairs(a, b).into_iter().flat_map(|(ta, tb)| {
            let name = crate::runs::pair_name(ta, tb);
            [(format!("A {name}"), ta), (format!("B {name}"), tb)]
        }),
    );
    for (ta, tb) in crate::runs::pairs(a, b) {
        let _ = writeln!(s, "<h2>{}</h2>", esc(&crate::runs::pair_name(ta, tb)));
        if ta.result.samples.is_empty() || tb.result.samples.is_empty() {
            s.push_str("<p class=\"note\">No time series in one of the runs.</p>\n");
            continue;
        }
        let both = [("A", &ta.result.samples[..]), ("B", &tb.result.samples[..])];
        chart(
            &mut s,
            svg::over_time("Throughput", "MB/s", &both, |x| x.bytes_per_sec / 1e6),
        );
        chart(
            &mut s,
            svg::over_time("p99 latency per interval", "ms", &both, |x| {
                x.p99_ns as f64 / 1e6
            }),
        );
    }
    page("blkscope compare", &s)
}
