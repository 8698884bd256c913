//! Charts over time: throughput and IOPS of a run, and two runs on the same axes.

use super::*;

/// The foreground of a series: `c` in colour, plain otherwise.
pub(super) fn series_style(look: Look, c: Color) -> Style {
    if look.color {
        Style::default().fg(c)
    } else {
        Style::default()
    }
}

/// Series over time from 0 to `x_max` seconds, on a y axis that fits the highest point; a
/// legend only when there is more than one series to tell apart.
pub(super) fn time_chart(
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

pub(super) fn highest(pts: &[(f64, f64)]) -> f64 {
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
pub(super) fn overlay_chart(
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

pub(super) fn fmt_ns(ns: u64) -> String {
    crate::output::fmt_duration(ns as f64, 0)
}
