//! Reports people share: `report RUN --format html` is one self-contained page (inline SVG and
//! CSS, no script, font or image fetched) with every chart, `--format svg --chart NAME` one
//! chart, `compare A B --format html` both runs on the same axes. A real browser (headless
//! Chromium) renders the page, and the picture is checked not to be blank.

mod common;

use std::process::Command;

use common::*;

/// No script, no external resource: everything the page shows is in it.
fn self_contained(html: &str) {
    assert!(html.starts_with("<!DOCTYPE html>"), "{}", &html[..80]);
    assert!(!html.contains("<script"), "a script");
    for attr in ["src=", "href=", "@import", "url("] {
        assert!(!html.contains(attr), "fetches something: {attr}");
    }
    // The only URL is the SVG namespace.
    let urls = html.matches("http").count();
    let ns = html.matches("http://www.w3.org/2000/svg").count();
    assert_eq!(urls, ns, "no URL other than the SVG namespace");
}

#[test]
fn an_html_report_with_every_chart_and_an_svg() {
    let runs = SavedRuns::new();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    // Not traced: the Q2D/D2C chart (a_traced_report_shows_where_the_time_went) is not here.
    runs.ok(&[
        "run",
        d,
        "--op",
        "randread",
        "--bs",
        "4k",
        "--iodepth",
        "8",
        "--runtime",
        "1s",
        "--size",
        "16M",
        "--no-trace",
    ]);
    let html = runs.ok(&["report", "last", "--format", "html"]);
    self_contained(&html);
    assert_eq!(
        html.matches("<svg").count(),
        4,
        "throughput, IOPS, heatmap, histogram"
    );
    assert!(!html.contains("Where the time went"));
    for t in [
        "Throughput",
        "IOPS",
        "Latency over time",
        "Latency histogram",
        "p99.9",
    ] {
        assert!(html.contains(t), "no {t}");
    }
    for chart in ["throughput", "iops", "heatmap", "histogram"] {
        let svg = runs.ok(&["report", "last", "--format", "svg", "--chart", chart]);
        assert!(
            svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"),
            "{chart}"
        );
    }
    // A run that is not a sweep has no sweep chart: one line, exit 2.
    let out = runs.run(&["report", "last", "--format", "svg", "--chart", "sweep"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    // Without --chart: throughput over time, the chart a run that is not a sweep is about.
    let svg = runs.ok(&["report", "last", "--format", "svg"]);
    assert!(
        svg.starts_with("<svg") && svg.contains("Throughput"),
        "{}",
        &svg[..svg.len().min(300)]
    );
}

#[test]
fn a_traced_report_shows_where_the_time_went_and_compare_puts_both_runs_on_it() {
    if !require(true, &["losetup"]) {
        return;
    }
    let lo = Loop::new(64 << 20, Some(4096), false);
    let runs = SavedRuns::new();
    let run = |extra: &[&str]| {
        let mut a = vec![
            "run",
            lo.dev(),
            "--op",
            "randread",
            "--bs",
            "4k",
            "--size",
            "8M",
            "--iodepth",
            "4",
        ];
        a.extend_from_slice(extra);
        runs.ok(&a)
    };
    run(&[]);
    let doc: serde_json::Value = serde_json::from_str(&run(&["--json"])).unwrap();
    let t = &first_result(&doc)["trace"];
    println!("trace: {t}");
    if t["q2d_ns"].is_null() {
        assert!(
            !required(),
            "CI: the run must be traced with Q2D and D2C: {t}"
        );
        eprintln!("SKIPPED: no Q2D/D2C here: {t}");
        return;
    }
    let html = runs.ok(&["report", "last", "--format", "html"]);
    self_contained(&html);
    assert!(
        html.contains("Where the time went (the block layer's trace)"),
        "no split chart"
    );
    for label in [
        "Q2D: scheduler and queue",
        "D2C: device",
        "randread 4K QD4 x1 direct p50",
    ] {
        assert!(html.contains(label), "no {label}");
    }
    let ids = runs.ids();
    let html = runs.ok(&["compare", &ids[0], &ids[1], "--format", "html"]);
    self_contained(&html);
    assert!(
        html.contains("Where the time went"),
        "no split chart in compare"
    );
    assert!(
        html.contains("A ") && html.contains("B "),
        "both runs' rows"
    );
}

#[test]
fn a_sweep_report_draws_its_curve_and_knee_and_compare_overlays() {
    let runs = SavedRuns::new();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    runs.ok(&[
        "sweep",
        d,
        "--qd",
        "1,8,32",
        "--runtime",
        "300ms",
        "--size",
        "16M",
    ]);
    let html = runs.ok(&["report", "last", "--format", "html"]);
    self_contained(&html);
    assert!(
        html.contains("Sweep: randread by iodepth"),
        "no sweep section"
    );
    assert!(
        html.contains("Knee at") || html.contains("No knee"),
        "the knee is named"
    );
    let svg = runs.ok(&["report", "last", "--format", "svg", "--chart", "sweep"]);
    assert!(svg.contains("randread by iodepth"), "{}", &svg[..200]);
    // The Markdown report has the sweep too: its points as written and the knee (or none).
    let md = runs.ok(&["report", "last", "--format", "md"]);
    println!("{md}");
    assert!(
        md.contains("## Sweep: randread by iodepth") && md.contains("| QD8 |"),
        "{md}"
    );
    assert!(md.contains("Knee at QD") || md.contains("No knee"), "{md}");
    // A sweep's own chart is the default one.
    let plain = runs.ok(&["report", "last", "--format", "svg"]);
    assert!(
        plain == svg,
        "report --format svg of a sweep draws the sweep: {}",
        &plain[..plain.len().min(400)]
    );
    // The knee, when there is one, is named as depths are written (QD8), not as a number.
    if let Some(k) = html.split("Knee at ").nth(1) {
        println!("knee: {}", &k[..k.len().min(120)]);
        assert!(k.starts_with("QD"), "{}", &k[..k.len().min(120)]);
    }
    // Two runs of the same test, compared on the same axes (not traced: the Q2D/D2C chart has
    // its own test).
    for _ in 0..2 {
        runs.ok(&[
            "run",
            d,
            "--op",
            "randread",
            "--bs",
            "4k",
            "--runtime",
            "500ms",
            "--size",
            "16M",
            "--no-trace",
        ]);
    }
    let ids: Vec<String> = runs
        .ids()
        .into_iter()
        .filter(|n| n.contains("randread_4K_QD1"))
        .collect();
    assert_eq!(ids.len(), 2, "{ids:?}");
    let html = runs.ok(&["compare", &ids[0], &ids[1], "--format", "html"]);
    self_contained(&html);
    assert!(
        html.contains(">A<") && html.contains(">B<"),
        "both runs in the legend"
    );
    assert_eq!(
        html.matches("<svg").count(),
        2,
        "throughput and p99, both runs on each"
    );
}

/// The fraction of pixels that are not white, and how many colours there are.
fn ink(png_path: &std::path::Path) -> (f64, usize) {
    let decoder = png::Decoder::new(std::io::BufReader::new(
        std::fs::File::open(png_path).unwrap(),
    ));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let px = info.color_type.samples();
    let mut colours = std::collections::HashSet::new();
    let mut inked = 0usize;
    let n = (info.width * info.height) as usize;
    for p in buf[..n * px].chunks(px) {
        if p[..3] != [255, 255, 255] {
            inked += 1;
        }
        colours.insert((p[0] >> 4, p[1] >> 4, p[2] >> 4));
    }
    (inked as f64 / n as f64, colours.len())
}

#[test]
fn a_browser_renders_the_report() {
    let chromium = ["chromium", "chromium-browser", "google-chrome"]
        .into_iter()
        .find(|c| tool_exists(c));
    let Some(chromium) = chromium else {
        assert!(
            !required(),
            "BLKSCOPE_REQUIRE_PRIVILEGED_TESTS=1 but chromium is missing"
        );
        eprintln!("SKIPPED: no chromium to render the report");
        return;
    };
    let runs = SavedRuns::new();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    runs.ok(&[
        "run",
        d,
        "--op",
        "randread",
        "--bs",
        "4k",
        "--iodepth",
        "8",
        "--runtime",
        "1s",
        "--size",
        "16M",
    ]);
    let html = runs.ok(&["report", "last", "--format", "html"]);
    let page = runs.path().join("report.html");
    std::fs::write(&page, html).unwrap();
    let png = runs.path().join("report.png");
    let out = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=900,1800",
            &format!("--screenshot={}", png.display()),
            &format!("file://{}", page.display()),
        ])
        .env("HOME", runs.path())
        .output()
        .unwrap();
    assert!(
        png.exists(),
        "no screenshot: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (inked, colours) = ink(&png);
    println!(
        "report.png: {:.1}% of pixels inked, {colours} colours",
        inked * 100.0
    );
    assert!(
        inked > 0.03,
        "the page looks blank: {:.2}% inked",
        inked * 100.0
    );
    assert!(colours > 8, "the charts have colour: {colours} colours");
}
