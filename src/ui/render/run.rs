//! The run view: live charts, progress, percentiles, where the time went, and beside the
//! iostat -x panel the other processes' I/O and what the analysis of the test so far found.

use super::*;

pub(super) fn run_view(f: &mut Frame, app: &App, look: Look, area: Rect) {
    let Some(run) = &app.run else { return };
    let [left, right] =
        Layout::horizontal([Constraint::Min(36), Constraint::Length(30)]).areas(area);
    // A line more where the split's parts are a sampled trace's windows' and not the run's.
    let windows = run.samples.last().and_then(parts_of_windows);
    let tall = 6 + u16::from(windows.is_some());
    let [charts, info] =
        Layout::vertical([Constraint::Min(6), Constraint::Length(tall)]).areas(left);
    run_charts(f, app, run, look, charts);
    run_progress(f, run, look, info, windows);
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
fn run_progress(
    f: &mut Frame,
    run: &crate::ui::app::RunView,
    look: Look,
    info: Rect,
    windows: Option<Line<'static>>,
) {
    let last = run.samples.last();
    let done: u64 = last.map(|s| s.total_bytes).unwrap_or(0);
    let elapsed = last.map(|s| s.elapsed_s).unwrap_or(0.0);
    let progress = last.and_then(|s| s.progress).unwrap_or(0.0);
    let eta = if last.is_some_and(|s| s.stopping.is_some()) {
        // The device decides.
        "-".into()
    } else if progress > 0.01 {
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
            // No completion, no latency to say (not "p50 0 ns").
            Some(s) => s.none_completed().map_or_else(
                || {
                    format!(
                        "{:.1} MB/s {:.0} IOPS p50 {} p99 {}",
                        s.bytes_per_sec / 1e6,
                        s.iops,
                        fmt_ns(s.p50_ns),
                        fmt_ns(s.p99_ns)
                    )
                },
                |none| format!("0 IOPS, {none}"),
            ),
            None => "starting...".into(),
        }),
    ];
    if let Some(st) = last.and_then(|s| s.stopping) {
        lines.push(Line::from(Span::styled(st.line(), look.alert())));
    } else if run.cancelling {
        lines.push(Line::from(Span::styled(
            "cancelling: waiting for the I/O in flight...",
            look.alert(),
        )));
    } else if let Some(split) = last.and_then(time_split) {
        lines.push(split);
        lines.extend(windows);
    }
    f.render_widget(
        Paragraph::new(lines).block(look.block(format!(" {} ", run.job.label()), false)),
        info,
    );
}

/// Where the test's I/Os spend their time, from the block layer's trace so far: a middle I/O's
/// parts where the engine's times were paired with the trace's, "us: 65 = sub 0.7 + q 0.4 +
/// dev 55 + done 8.6" (microseconds: submitting, the queue, the device, completing); else "queue
/// 15 us |#=========| device 360 us", the bar's share the queue's (Q2D) and the device's (D2C).
fn time_split(s: &crate::engine::Sample) -> Option<Line<'static>> {
    if let Some(st) = &s.steps {
        let us = |ns: u64| {
            let us = ns as f64 / 1e3;
            if us >= 10.0 {
                format!("{us:.0}")
            } else {
                format!("{us:.1}")
            }
        };
        return Some(Line::from(format!(
            "us: {} = sub {} + q {} + dev {} + done {}",
            us(st.total_ns),
            us(st.submit_ns),
            us(st.queue_ns),
            us(st.device_ns),
            us(st.complete_ns)
        )));
    }
    let (Some(q), Some(d)) = (s.q2d_p50_ns, s.d2c_p50_ns) else {
        return s
            .split_why
            .as_ref()
            .map(|why| Line::from(format!("no queue/device split: {why}")));
    };
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

/// Under the split, where a sampled trace's windows' I/Os took much longer or shorter than the
/// rest ([`crate::analysis::steps::parts_are_the_windows`]): the parts are theirs, as the
/// result says it ("parts of the windows' I/Os: 3.24x the rest").
fn parts_of_windows(s: &crate::engine::Sample) -> Option<Line<'static>> {
    use crate::analysis::steps::{parts_are_the_windows, windows_against_rest};
    let ratio = windows_against_rest(s.steps.as_deref()?)?;
    parts_are_the_windows(ratio)
        .then(|| Line::from(format!("parts of the windows' I/Os: {ratio:.2}x the rest")))
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
    // By the block layer's trace: bytes since the test began, on the devices under it (scaled
    // to the run where it is kept in windows).
    let traced = app
        .run
        .as_ref()
        .and_then(|r| r.samples.last())
        .filter(|s| !s.others_traced.is_empty());
    if let Some(s) = traced {
        text.push(Line::from(Span::styled("other I/O (trace):", look.alert())));
        for o in &s.others_traced {
            let what = match (o.read_bytes, o.write_bytes) {
                (0, 0) => format!("moved {}", crate::output::fmt_size(o.bytes)),
                (r, w) => crate::units::read_wrote(r, w, ""),
            };
            text.push(Line::from(format!(
                " {:.10} {} {what} on {}",
                o.comm, o.pid, o.device
            )));
        }
    } else if !app.busy.is_empty() {
        // Live, by /proc/PID/io, where there is no trace (or it saw no one yet).
        text.push(Line::from(Span::styled(
            "other I/O now (/proc):",
            look.alert(),
        )));
        for p in &app.busy {
            // A shell's reaped children, a writer through the page cache: /proc does not say.
            let on = match p.devices.is_empty() {
                true => "a device not known".to_string(),
                false => p.devices.join(","),
            };
            text.push(Line::from(format!(
                " {:.10} {} {} on {on}",
                p.comm,
                p.pid,
                crate::units::read_wrote(
                    p.read_bytes_per_sec as u64,
                    p.write_bytes_per_sec as u64,
                    "/s"
                )
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
