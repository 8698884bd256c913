//! The run view (live charts, progress, percentiles), the iostat -x panel beside it, and the
//! results view.

use super::*;

/// iostat -x of the watched devices, one column per device, as many as fit from
/// `app.iostat_first` (Left/Right scroll through them), the rows scrolled by
/// `app.iostat_scroll`.
pub fn diskstats_panel(f: &mut Frame, app: &App, look: Look, area: Rect) {
    let fit = ((area.width.saturating_sub(2 + 8)) / 10).max(1) as usize;
    let first = app.iostat_first.min(app.watched.len().saturating_sub(1));
    let names: Vec<&String> = app.watched.iter().skip(first).take(fit).collect();
    let mut lines = Vec::new();
    if names.is_empty() {
        lines.push(Line::from("no block device to watch"));
    } else {
        let mut head = format!("{:<8}", "");
        for n in &names {
            head.push_str(&format!(" {:>9.9}", n));
        }
        lines.push(Line::from(Span::styled(
            head,
            Style::default().add_modifier(Modifier::BOLD),
        )));
        // "off" alone reads like a fault of the panel: say whose figures are missing and why,
        // first, where a short panel still shows it.
        for n in &names {
            if app
                .diskstats
                .iter()
                .any(|x| &&x.disk_device == n && x.stats_off)
            {
                // Two short lines: the panel does not wrap (its rows scroll by line).
                lines.push(Line::from(format!("off: no kernel figures for {n}")));
                lines.push(Line::from("  (its queue/iostats is 0)"));
            }
        }
        // The columns that explain a test, in the order the panel teaches them.
        let rows: [&str; 11] = [
            "r/s", "w/s", "rkB/s", "wkB/s", "rrqm/s", "wrqm/s", "r_await", "w_await", "aqu-sz",
            "%util", "f/s",
        ];
        for label in rows {
            let get = |x: &crate::stats::IostatX| x.column(label).unwrap_or(0.0);
            let mut s = format!("{label:<8}");
            for n in &names {
                match app.diskstats.iter().find(|x| &&x.disk_device == n) {
                    Some(x) if x.stats_off => s.push_str(&format!(" {:>9}", "off")),
                    Some(x) => s.push_str(&format!(" {:>9}", crate::output::fmt_compact(get(x)))),
                    None => s.push_str(&format!(" {:>9}", "-")),
                }
            }
            let hot = label == "r/s" && rmw_live(app);
            lines.push(if hot {
                Line::from(Span::styled(s, look.alert()))
            } else {
                Line::from(s)
            });
        }
    }
    let inner_h = area.height.saturating_sub(2) as usize;
    // The header stays; the figures below it scroll.
    let max = lines.len().saturating_sub(inner_h) as u16;
    let mut limits = app.limits.get();
    limits.iostat_rows = max;
    app.limits.set(limits);
    let scroll = app.iostat_scroll.min(max) as usize;
    if scroll > 0 && lines.len() > 1 {
        lines.drain(1..1 + scroll.min(lines.len() - 1));
    }
    let title = if app.watched.len() > names.len() {
        format!(
            " iostat -x (1 s) {}-{} of {} ",
            first + 1,
            first + names.len(),
            app.watched.len()
        )
    } else {
        " iostat -x (1 s) ".to_string()
    };
    let focused = app.screen == Screen::Main && app.focus == Focus::Iostat;
    f.render_widget(
        Paragraph::new(lines).block(look.block(title, focused)),
        area,
    );
}

/// The analysis of the test so far found read-modify-write: its reads light up in the panel.
fn rmw_live(app: &App) -> bool {
    app.running()
        && app.run.as_ref().is_some_and(|r| {
            r.findings
                .iter()
                .any(|f| f.kind == crate::analysis::findings::Kind::ReadModifyWrite)
        })
}

pub(super) fn run_view(f: &mut Frame, app: &App, look: Look, area: Rect) {
    let Some(run) = &app.run else { return };
    let [left, right] =
        Layout::horizontal([Constraint::Min(36), Constraint::Length(30)]).areas(area);
    let [charts, info] = Layout::vertical([Constraint::Min(6), Constraint::Length(6)]).areas(left);
    run_charts(f, app, run, look, charts);
    run_progress(f, run, look, info);
    let [panel, note] = Layout::vertical([Constraint::Length(14), Constraint::Min(0)]).areas(right);
    diskstats_panel(f, app, look, panel);
    run_side_note(f, app, look, note);
}

/// Throughput over time, and IOPS (or, after `l`, the latency heatmap and histogram).
fn run_charts(f: &mut Frame, app: &App, run: &crate::ui::app::RunView, look: Look, area: Rect) {
    let [c1, c2] =
        Layout::vertical([Constraint::Percentage(55), Constraint::Percentage(45)]).areas(area);
    let secs: Vec<(f64, f64)> = run
        .samples
        .iter()
        .map(|s| (s.elapsed_s, s.bytes_per_sec / 1e6))
        .collect();
    let iops: Vec<(f64, f64)> = run.samples.iter().map(|s| (s.elapsed_s, s.iops)).collect();
    let x_max = run
        .job
        .runtime
        .map(|r| r.as_secs_f64() + run.job.ramp.map(|x| x.as_secs_f64()).unwrap_or(0.0))
        .unwrap_or_else(|| secs.last().map(|p| p.0).unwrap_or(1.0))
        .max(secs.last().map(|p| p.0).unwrap_or(0.0))
        .max(1.0);
    // The unit first in the title: ratatui drops the legend (which names it too) when the chart
    // is small, and cuts a long title at its end; the axis alone would give a bare number.
    let title = format!(" MB/s: {} on {} ", run.test, run.target);
    chart(f, look, c1, &title, "MB/s", &secs, x_max);
    if app.latency_view {
        let [hm, hist] =
            Layout::horizontal([Constraint::Min(20), Constraint::Length(30)]).areas(c2);
        latency::heatmap(f, look, hm, " latency over time ", &run.samples);
        latency::histogram(f, look, hist, &run.samples);
    } else {
        chart(f, look, c2, " IOPS ", "IOPS", &iops, x_max);
    }
}

/// Progress, ETA and the last sample's figures.
fn run_progress(f: &mut Frame, run: &crate::ui::app::RunView, look: Look, info: Rect) {
    let last = run.samples.last();
    let done: u64 = last.map(|s| s.total_bytes).unwrap_or(0);
    let elapsed = last.map(|s| s.elapsed_s).unwrap_or(0.0);
    let progress = last.and_then(|s| s.progress).unwrap_or(0.0);
    let eta = if progress > 0.01 {
        format!("{:.0} s", elapsed / progress - elapsed)
    } else {
        "-".into()
    };
    let bar_w = 20usize;
    let filled = (progress * bar_w as f64).round() as usize;
    let (fill, empty) = if look.ascii {
        ("#", "-")
    } else {
        ("█", "░")
    };
    let bar = format!(
        "{}{}",
        fill.repeat(filled),
        empty.repeat(bar_w - filled.min(bar_w))
    );
    let mut lines = vec![
        Line::from(format!("{bar} {:>3.0}%  ETA {eta}", progress * 100.0)),
        Line::from(format!("done {}  elapsed {:.1} s", fmt_size(done), elapsed)),
        Line::from(match last {
            Some(s) => format!(
                "{:.1} MB/s {:.0} IOPS p50 {} p99 {}",
                s.bytes_per_sec / 1e6,
                s.iops,
                fmt_ns(s.p50_ns),
                fmt_ns(s.p99_ns)
            ),
            None => "starting...".into(),
        }),
    ];
    if run.cancelling {
        lines.push(Line::from(Span::styled(
            "cancelling: waiting for the I/O in flight...",
            look.alert(),
        )));
    } else if let Some(split) = last.and_then(time_split) {
        lines.push(split);
    }
    f.render_widget(
        Paragraph::new(lines).block(look.block(format!(" {} ", run.job.label()), false)),
        info,
    );
}

/// Where the test's I/Os spend their time, from the block layer's trace so far: "queue 15 us
/// |#=========| device 360 us", the bar's share the queue's (Q2D) and the device's (D2C).
fn time_split(s: &crate::engine::Sample) -> Option<Line<'static>> {
    let (q, d) = (s.q2d_p50_ns?, s.d2c_p50_ns?);
    let w = 10usize;
    let qn = ((q as f64 / (q + d).max(1) as f64) * w as f64).round() as usize;
    Some(Line::from(format!(
        "p50 queue {} |{}{}| device {}",
        fmt_ns(q),
        "#".repeat(qn.min(w)),
        "=".repeat(w - qn.min(w)),
        fmt_ns(d)
    )))
}

/// Under the iostat figures: the other processes doing I/O now (top three), then what the
/// analysis of the test so far found, each finding's first sentence (the result has the rest).
fn run_side_note(f: &mut Frame, app: &App, look: Look, note: Rect) {
    let found: Vec<&str> = app
        .run
        .as_ref()
        .filter(|_| app.running())
        .map(|r| {
            r.findings
                .iter()
                .map(|f| crate::output::text::first_sentence(&f.message))
                .collect()
        })
        .unwrap_or_default();
    let mut text: Vec<Line> = Vec::new();
    // By the block layer's trace where it runs throughout: bytes since the test began, on the
    // devices under it.
    let traced = app
        .run
        .as_ref()
        .and_then(|r| r.samples.last())
        .filter(|s| !s.others_traced.is_empty());
    if let Some(s) = traced {
        text.push(Line::from(Span::styled("other I/O (trace):", look.alert())));
        for o in &s.others_traced {
            text.push(Line::from(format!(
                " {:.10} {} {} {}",
                o.comm,
                o.pid,
                o.device,
                crate::output::fmt_size(o.bytes)
            )));
        }
    } else if !app.busy.is_empty() {
        // Live, by /proc/PID/io (the trace of a fast test is a sample, read after it).
        text.push(Line::from(Span::styled(
            "other I/O now (/proc):",
            look.alert(),
        )));
        for p in &app.busy {
            text.push(Line::from(format!(
                " {:.10} {} {}/s",
                p.comm,
                p.pid,
                crate::output::fmt_size((p.read_bytes_per_sec + p.write_bytes_per_sec) as u64)
            )));
        }
    }
    for e in found {
        text.push(Line::from(Span::styled(e.to_string(), look.alert())));
    }
    if !text.is_empty() {
        f.render_widget(Paragraph::new(text).wrap(Wrap { trim: true }), note);
    }
}

/// The foreground of a series: `c` in colour, plain otherwise.
fn series_style(look: Look, c: Color) -> Style {
    if look.color {
        Style::default().fg(c)
    } else {
        Style::default()
    }
}

/// Series over time from 0 to `x_max` seconds, on a y axis that fits the highest point; a
/// legend only when there is more than one series to tell apart.
fn time_chart(
    f: &mut Frame,
    look: Look,
    area: Rect,
    title: &str,
    sets: Vec<Dataset>,
    y_max: f64,
    x_max: f64,
) {
    let legend = sets.len() > 1;
    let y_max = y_max.max(1.0) * 1.1;
    let mut c = Chart::new(sets)
        .block(look.block(title.to_string(), false))
        .x_axis(
            Axis::default()
                .bounds([0.0, x_max])
                .labels(vec![Span::raw("0 s"), Span::raw(format!("{x_max:.0} s"))]),
        )
        .y_axis(Axis::default().bounds([0.0, y_max]).labels(vec![
            Span::raw("0"),
            Span::raw(crate::output::fmt_compact(y_max)),
        ]));
    if !legend {
        c = c.legend_position(None);
    }
    f.render_widget(c, area);
}

fn highest(pts: &[(f64, f64)]) -> f64 {
    pts.iter().map(|p| p.1).fold(0.0f64, f64::max)
}

pub(crate) fn chart(
    f: &mut Frame,
    look: Look,
    area: Rect,
    title: &str,
    unit: &str,
    pts: &[(f64, f64)],
    x_max: f64,
) {
    let ds = Dataset::default()
        .name(unit.to_string())
        .marker(look.marker())
        .graph_type(GraphType::Line)
        .style(series_style(look, Color::Cyan))
        .data(pts);
    time_chart(f, look, area, title, vec![ds], highest(pts), x_max);
}

/// Two runs' MB/s on the same axes (this one, and the earlier one in a second style).
fn overlay_chart(
    f: &mut Frame,
    look: Look,
    area: Rect,
    title: &str,
    this: &[(f64, f64)],
    earlier: &[(f64, f64)],
    x_max: f64,
) {
    let sets = vec![
        Dataset::default()
            .name("earlier")
            .marker(Marker::Dot)
            .graph_type(GraphType::Scatter)
            .style(series_style(look, Color::Yellow))
            .data(earlier),
        Dataset::default()
            .name("this")
            .marker(look.marker())
            .graph_type(GraphType::Line)
            .style(series_style(look, Color::Cyan))
            .data(this),
    ];
    let y_max = highest(this).max(highest(earlier));
    time_chart(f, look, area, title, sets, y_max, x_max);
}

fn fmt_ns(ns: u64) -> String {
    crate::output::fmt_duration(ns as f64, 0)
}

/// The results table and the explanation below it, in `body`. The table takes the rows it
/// needs (borders, header, one row per result), at most half of `body`; the explanation gets
/// the rest, since its findings can run to many lines.
pub(super) fn results_areas(app: &App, body: Rect) -> (Rect, Rect) {
    let want = (app.results.len() as u16).saturating_add(3).max(4);
    let [table, detail] = Layout::vertical([
        Constraint::Length(want.min(body.height / 2)),
        Constraint::Min(0),
    ])
    .areas(body);
    (table, detail)
}

/// The results table's area in `body`, and the first row it shows (the selected row stays in
/// view).
pub(super) fn results_table_area(app: &App, body: Rect) -> (Rect, usize) {
    let (table_area, _) = results_areas(app, body);
    let visible = table_area.height.saturating_sub(3) as usize;
    (table_area, list_first(app.selected_result, visible))
}

pub(super) fn results_view(f: &mut Frame, app: &App, look: Look, area: Rect) {
    let (_, detail) = results_areas(app, area);
    results_table(f, app, look, area);
    let Some(r) = app.results.get(app.selected_result) else {
        return;
    };
    if app.result_charts {
        // After `c`, the earlier run of the same test on the same axes.
        let other = app
            .compare_with
            .filter(|&(_, sel)| sel == app.selected_result)
            .and_then(|(j, _)| app.results.get(j));
        result_charts(f, look, detail, r, other);
        return;
    }
    let para = Paragraph::new(result_notes(r, look, detail.width)).wrap(Wrap { trim: false });
    let (scroll, max, shown) = super::scroll_pane(&para, detail, app.notes_offset());
    let mut limits = app.limits.get();
    limits.notes = max;
    app.limits.set(limits);
    // When the findings run past the pane, the title says where the view is and how to move.
    let title = match shown {
        Some(s) => format!(" What it means, dd and fio: lines {s} (PgUp/PgDn) "),
        None => " What it means, and the same test in dd and fio ".to_string(),
    };
    f.render_widget(
        para.scroll((scroll, 0)).block(look.block(title, false)),
        detail,
    );
}

/// The table of results, from the row that keeps the selected one in view.
fn results_table(f: &mut Frame, app: &App, look: Look, area: Rect) {
    let (table_area, first) = results_table_area(app, area);
    let header = Row::new(["#", "test", "target", "MB/s", "IOPS", "p50", "p99", ""])
        .style(Style::default().add_modifier(Modifier::BOLD));
    let rows: Vec<Row> = app
        .results
        .iter()
        .enumerate()
        .skip(first)
        .map(|(i, r)| {
            let (mbs, iops, p50, p99, note) = result_figures(r);
            let row = Row::new(vec![
                Cell::from((i + 1).to_string()),
                Cell::from(r.test.clone()),
                Cell::from(r.target.clone()),
                Cell::from(mbs),
                Cell::from(iops),
                Cell::from(p50),
                Cell::from(p99),
                Cell::from(note),
            ]);
            if i == app.selected_result {
                row.style(look.selected())
            } else {
                row
            }
        })
        .collect();
    let widths = [
        Constraint::Length(2),
        Constraint::Min(22),
        Constraint::Length(12),
        Constraint::Length(8),
        Constraint::Length(8),
        Constraint::Length(9),
        Constraint::Length(9),
        Constraint::Length(9),
    ];
    f.render_widget(
        Table::new(rows, widths)
            .header(header)
            .block(look.block(" Results ", true)),
        table_area,
    );
}

/// A result's row figures: MB/s, IOPS, p50, p99 and a note (saved, error, partial, notes).
fn result_figures(r: &crate::ui::app::ResultRow) -> (String, String, String, String, String) {
    match (&r.result, &r.error) {
        (None, None) if r.reopened.is_some() => {
            let f = r.reopened.as_ref().expect("checked");
            (
                format!("{:.1}", f.mb_s),
                format!("{:.0}", f.iops),
                fmt_ns((f.p50_us * 1e3) as u64),
                fmt_ns((f.p99_us * 1e3) as u64),
                "saved".to_string(),
            )
        }
        (Some(x), _) => (
            format!("{:.1}", x.bytes_per_sec / 1e6),
            format!("{:.0}", x.iops),
            fmt_ns(x.latency_ns.p50),
            fmt_ns(x.latency_ns.p99),
            if x.error.is_some() {
                "error".to_string()
            } else if x.partial {
                "partial".to_string()
            } else if !x.warnings.is_empty() {
                match x.warnings.len() {
                    1 => "1 note".to_string(),
                    n => format!("{n} notes"),
                }
            } else {
                String::new()
            },
        ),
        (None, Some(_)) => (
            "-".into(),
            "-".into(),
            "-".into(),
            "-".into(),
            "failed".into(),
        ),
        _ => Default::default(),
    }
}

/// What a result means: its dd and fio lines first (they must stay in view however many
/// findings follow; a suite that failed before its first test has none), where it was saved,
/// its sweep, what it found, the read-back, errors, warnings and notes.
fn result_notes(r: &crate::ui::app::ResultRow, look: Look, width: u16) -> Vec<Line<'static>> {
    let mut lines: Vec<Line> = Vec::new();
    for (label, cmd) in [("dd:  ", &r.dd), ("fio: ", &r.fio)] {
        if !cmd.is_empty() {
            lines.push(Line::from(vec![
                Span::styled(label, Style::default().add_modifier(Modifier::BOLD)),
                Span::raw(cmd.clone()),
            ]));
        }
    }
    if let Some(id) = &r.saved_id {
        lines.push(Line::from(format!("saved as {id}")));
    }
    if let Some((series, at)) = &r.sweep {
        lines.extend(sweep_lines(look, series, *at, width.saturating_sub(2)));
    }
    if let Some(f) = &r.found_here {
        lines.push(Line::from(vec![
            Span::styled(
                "What this run found: ",
                Style::default().add_modifier(Modifier::BOLD),
            ),
            Span::raw(f.to_string()),
        ]));
    }
    if let Some(e) = &r.error {
        lines.push(Line::from(Span::styled(
            format!("failed: {e}"),
            look.alert(),
        )));
    }
    let Some(x) = &r.result else {
        return lines;
    };
    if let Some(v) = &x.verify {
        lines.extend(verify_lines(x, v, look, width));
    }
    if let Some(e) = &x.error {
        lines.push(Line::from(Span::styled(
            format!("I/O error: {} {}", e.op, e.message),
            look.alert(),
        )));
    }
    for w in &x.warnings {
        lines.push(Line::from(vec![
            Span::styled(format!("[{}] ", w.kind), look.alert()),
            Span::raw(w.message.clone()),
        ]));
    }
    if let Some(n) = &x.engine_note {
        lines.push(Line::from(format!("note: {n}")));
    }
    lines
}

/// The read-back of `--verify`: sectors checked and bad, and where the bad ones are.
fn verify_lines(
    x: &crate::result::RunResult,
    v: &crate::verify::VerifyReport,
    look: Look,
    width: u16,
) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    let size = x
        .stamp
        .as_ref()
        .and_then(|s| s.jobs.iter().map(|j| j.start + j.len).max())
        .unwrap_or(0);
    let style = if v.is_bad() {
        look.alert()
    } else {
        Style::default()
    };
    lines.push(Line::from(Span::styled(
        format!(
            "verify: {} sectors checked, {} bad{}",
            v.sectors_checked,
            v.sectors_bad,
            v.stopped
                .as_deref()
                .map(|w| format!(" (stopped: {w})"))
                .unwrap_or_default()
        ),
        style,
    )));
    if v.is_bad() {
        let w = width.saturating_sub(10) as usize;
        lines.push(Line::from(format!(
            "map [{}]",
            crate::verify::bad_range_map(v, size, w)
        )));
        lines.push(Line::from(Span::styled(
            format!("    {}", crate::verify::map_legend()),
            look.dim(),
        )));
    }
    lines
}

/// A sweep as bars, one line a point (this result's point marked with `>`), and its knee,
/// in `width` columns.
fn sweep_lines(
    look: Look,
    s: &crate::analysis::sweep::Series,
    at: usize,
    width: u16,
) -> Vec<Line<'static>> {
    let thr = |p: &crate::analysis::sweep::Point| s.param.throughput(p);
    let unit = s.param.throughput_unit();
    let max = s.points.iter().map(thr).fold(0.0f64, f64::max).max(1e-9);
    // "> QD256 " + bar + " 123456 IOPS  p99 12.3 ms <- knee"
    let bar_w = (width as usize).saturating_sub(44).clamp(4, 40);
    let full = if look.ascii { '#' } else { '█' };
    let mut out = vec![Line::from(Span::styled(
        format!("sweep: {} by {}", s.op, s.param.as_str()),
        Style::default().add_modifier(Modifier::BOLD),
    ))];
    for (i, p) in s.points.iter().enumerate() {
        let n = ((thr(p) / max) * bar_w as f64).round() as usize;
        let bar: String = std::iter::repeat_n(full, n).collect();
        let knee = s.knee.as_ref().is_some_and(|k| k.index == i);
        let text = format!(
            "{}{:>6} {bar:<bar_w$} {:>8.0} {unit}  p99 {:>8}{}",
            if i == at { ">" } else { " " },
            s.param.label(p.value),
            thr(p),
            fmt_ns(p.p99_ns),
            if knee { " <- knee" } else { "" }
        );
        out.push(if i == at {
            Line::from(Span::styled(text, look.selected()))
        } else {
            Line::from(text)
        });
    }
    out.push(Line::from(match &s.knee {
        Some(k) => format!("knee at {}: {}", s.param.label(k.value), k.why),
        None => "no knee: latency never grew faster than throughput over this range".into(),
    }));
    out
}

/// `g` in the results: the selected run's throughput over time, latency heatmap and histogram.
fn result_charts(
    f: &mut Frame,
    look: Look,
    area: Rect,
    r: &super::super::app::ResultRow,
    other: Option<&super::super::app::ResultRow>,
) {
    let samples = r.samples();
    if samples.is_empty() {
        f.render_widget(
            Paragraph::new(
                "no time series here: runs saved before schema blkscope-run/2 carry only their \
                 figures",
            )
            .wrap(Wrap { trim: true })
            .block(look.block(" Charts ", false)),
            area,
        );
        return;
    }
    let [top, bottom] =
        Layout::vertical([Constraint::Percentage(45), Constraint::Percentage(55)]).areas(area);
    let pts: Vec<(f64, f64)> = samples
        .iter()
        .map(|s| (s.elapsed_s, s.bytes_per_sec / 1e6))
        .collect();
    let earlier: Vec<(f64, f64)> = other
        .map(|o| {
            o.samples()
                .iter()
                .map(|s| (s.elapsed_s, s.bytes_per_sec / 1e6))
                .collect()
        })
        .unwrap_or_default();
    let x_max = pts
        .iter()
        .chain(&earlier)
        .map(|p| p.0)
        .fold(1.0f64, f64::max);
    if earlier.is_empty() {
        chart(
            f,
            look,
            top,
            &format!(" {}: MB/s ", r.test),
            "MB/s",
            &pts,
            x_max,
        );
    } else {
        let title = format!(" {}: MB/s, this run (line) and the earlier (dots) ", r.test);
        overlay_chart(f, look, top, &title, &pts, &earlier, x_max);
    }
    let [hm, hist] =
        Layout::horizontal([Constraint::Min(20), Constraint::Length(30)]).areas(bottom);
    latency::heatmap(f, look, hm, " latency over time ", samples);
    latency::histogram(f, look, hist, samples);
}
