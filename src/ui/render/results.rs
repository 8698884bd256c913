//! The results view: every run of the session, its figures, what it means (findings, the
//! read-back, a sweep's knee), the dd and fio lines, and its charts.

use super::*;

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
pub(super) fn results_table(f: &mut Frame, app: &App, look: Look, area: Rect) {
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
pub(super) fn result_figures(
    r: &crate::ui::app::ResultRow,
) -> (String, String, String, String, String) {
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
pub(super) fn result_notes(
    r: &crate::ui::app::ResultRow,
    look: Look,
    width: u16,
) -> Vec<Line<'static>> {
    let mut lines: Vec<Line> = Vec::new();
    for (label, cmd) in [("dd:  ", &r.dd), ("fio: ", &r.fio)] {
        if !cmd.is_empty() {
            lines.push(Line::from(vec![
                Span::styled(label, Style::default().add_modifier(Modifier::BOLD)),
                Span::raw(cmd.clone()),
            ]));
        }
    }
    if let Some(c) = r.engine_chosen() {
        lines.push(Line::from(format!("engine: {c}")));
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
    // Where the time went, where the trace told: a middle I/O's parts, else the queue and
    // the device (an untraced run says nothing here; its result's text says why).
    if let Some(t) = r.result.as_ref().and_then(|x| x.trace.as_ref()) {
        if t.steps.is_some() {
            lines.extend(crate::output::text::steps_line(t).map(Line::from));
        } else if t.q2d_ns.is_some() {
            lines.push(Line::from(crate::output::text::trace_line(t)));
        }
        lines.extend(
            crate::output::text::below_lines(t)
                .into_iter()
                .map(Line::from),
        );
    }
    if let Some(e) = &r.error {
        lines.push(Line::from(Span::styled(
            format!("failed: {e}"),
            look.alert(),
        )));
    }
    if let Some(x) = &r.result {
        if let Some(v) = &x.verify {
            lines.extend(verify_lines(x, v, look, width));
        }
        if let Some(e) = &x.error {
            lines.push(Line::from(Span::styled(
                format!("I/O error: {} {}", e.op, e.message),
                look.alert(),
            )));
        }
    }
    for w in r.warnings() {
        lines.push(Line::from(vec![
            Span::styled(format!("[{}] ", w.kind), look.alert()),
            Span::raw(w.message.clone()),
        ]));
    }
    if let Some(n) = r.result.as_ref().and_then(|x| x.engine_note.as_ref()) {
        lines.push(Line::from(format!("note: {n}")));
    }
    lines
}

/// The read-back of `--verify`: sectors checked and bad, and where the bad ones are.
pub(super) fn verify_lines(
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
            crate::output::text::bad_range_map(v, size, w)
        )));
        lines.push(Line::from(Span::styled(
            format!("    {}", crate::output::text::map_legend()),
            look.dim(),
        )));
    }
    lines
}

/// A sweep as bars, one line a point (this result's point marked with `>`), and its knee,
/// in `width` columns.
pub(super) fn sweep_lines(
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
        None => format!(
            "no knee: {}",
            crate::analysis::sweep::no_knee_why(s.param, &s.points)
        ),
    }));
    out
}

/// `g` in the results: the selected run's throughput over time, latency heatmap and histogram.
pub(super) fn result_charts(
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
