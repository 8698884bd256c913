//! Latency as pictures: a heatmap of latency over time (columns are intervals, rows are
//! log-scaled latency buckets from 1 us to 10 s, shading is the share of the interval's I/Os)
//! and the histogram of the whole run with p50, p99 and p99.9 marked. Density characters carry
//! the shading, so it reads in NO_COLOR and ASCII too; colour adds to them.

use super::*;
use crate::engine::Sample;
use crate::engine::result::{LAT_BUCKETS, lat_bucket_floor};

/// Density characters, from none to all of a column's I/Os.
const SHADES: [char; 10] = [' ', '.', ':', '-', '=', '+', '*', '#', '%', '@'];

/// A latency edge as a short label: `1us`, `316us`, `10ms`, `1s`.
fn edge_label(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.0}s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.0}ms", ns / 1e6)
    } else {
        format!("{:.0}us", ns / 1e3)
    }
}

/// Groups the 28 buckets into `rows` rows (top = slowest): the bucket range of each row.
fn row_ranges(rows: usize, lo: usize, hi: usize) -> Vec<(usize, usize)> {
    let n = hi - lo;
    let rows = rows.clamp(1, n);
    (0..rows)
        .rev()
        .map(|r| (lo + r * n / rows, lo + (r + 1) * n / rows))
        .collect()
}

/// The buckets worth showing: from the fastest to the slowest that holds anything, with one
/// bucket of margin (so a fast device is not drawn as one line at the bottom).
fn span(samples: &[Sample]) -> (usize, usize) {
    let mut lo = LAT_BUCKETS;
    let mut hi = 0;
    for s in samples {
        for (i, c) in s.lat_buckets.iter().enumerate() {
            if *c > 0 {
                lo = lo.min(i);
                hi = hi.max(i + 1);
            }
        }
    }
    if lo >= hi {
        return (0, LAT_BUCKETS);
    }
    let lo = lo.saturating_sub(1);
    let hi = (hi + 1).min(LAT_BUCKETS);
    // At least 8 buckets (two decades).
    if hi - lo < 8 {
        let hi = (lo + 8).min(LAT_BUCKETS);
        return (hi.saturating_sub(8), hi);
    }
    (lo, hi)
}

fn shade_style(look: Look, share: f64) -> Style {
    if !look.color || share <= 0.0 {
        return Style::default();
    }
    Style::default().fg(if share > 0.5 {
        Color::Red
    } else if share > 0.2 {
        Color::Yellow
    } else if share > 0.05 {
        Color::Green
    } else {
        Color::DarkGray
    })
}

/// The heatmap of `samples` in `area` (with a border titled `title`).
pub fn heatmap(f: &mut Frame, look: Look, area: Rect, title: &str, samples: &[Sample]) {
    let inner_w = area.width.saturating_sub(2 + 6) as usize;
    let inner_h = area.height.saturating_sub(2) as usize;
    let cols: Vec<&Sample> = samples
        .iter()
        .filter(|s| !s.lat_buckets.is_empty())
        .collect();
    let shown = &cols[cols.len().saturating_sub(inner_w)..];
    let (lo, hi) = span(samples);
    let ranges = row_ranges(inner_h.max(1), lo, hi);
    let mut lines = Vec::new();
    let label_rows = [0, ranges.len() / 2, ranges.len().saturating_sub(1)];
    for (r, &(a, b)) in ranges.iter().enumerate() {
        let label = if label_rows.contains(&r) {
            edge_label(lat_bucket_floor(a))
        } else {
            String::new()
        };
        let mut spans = vec![Span::styled(format!("{label:>5} "), look.dim())];
        for s in shown {
            let total: u32 = s.lat_buckets.iter().sum();
            let here: u32 = s.lat_buckets[a..b].iter().sum();
            let share = if total > 0 {
                here as f64 / total as f64
            } else {
                0.0
            };
            let k = if here == 0 {
                0
            } else {
                ((share * 9.0).ceil() as usize).clamp(1, 9)
            };
            spans.push(Span::styled(
                SHADES[k].to_string(),
                shade_style(look, share),
            ));
        }
        lines.push(Line::from(spans));
    }
    if shown.is_empty() {
        lines = vec![Line::from("no latencies yet")];
    }
    f.render_widget(
        Paragraph::new(lines).block(look.block(title.to_string(), false)),
        area,
    );
}

/// The latency histogram of all `samples`, rows as in the heatmap, bars by count, with the
/// rows that hold p50, p99 and p99.9 marked.
pub fn histogram(f: &mut Frame, look: Look, area: Rect, samples: &[Sample]) {
    let inner_h = area.height.saturating_sub(2) as usize;
    let inner_w = area.width.saturating_sub(2) as usize;
    let mut all = vec![0u64; LAT_BUCKETS];
    for s in samples {
        for (i, c) in s.lat_buckets.iter().enumerate() {
            all[i] += *c as u64;
        }
    }
    let total: u64 = all.iter().sum();
    let (lo, hi) = span(samples);
    let ranges = row_ranges(inner_h.max(1), lo, hi);
    // The bucket where the cumulative count passes each quantile.
    let quantile_bucket = |q: f64| {
        let want = (total as f64 * q).ceil() as u64;
        let mut acc = 0;
        all.iter()
            .position(|c| {
                acc += c;
                acc >= want
            })
            .unwrap_or(0)
    };
    let marks = [
        (quantile_bucket(0.5), "p50"),
        (quantile_bucket(0.99), "p99"),
        (quantile_bucket(0.999), "p99.9"),
    ];
    let counts: Vec<u64> = ranges
        .iter()
        .map(|&(a, b)| all[a..b].iter().sum())
        .collect();
    let max = counts.iter().copied().max().unwrap_or(0).max(1);
    let bar_w = inner_w.saturating_sub(6 + 7);
    let fill = if look.ascii { "#" } else { "█" };
    let mut lines = Vec::new();
    for (&(a, b), &c) in ranges.iter().zip(&counts) {
        let label = edge_label(lat_bucket_floor(a));
        let n = ((c as f64 / max as f64) * bar_w as f64).round() as usize;
        let mark: Vec<&str> = marks
            .iter()
            .filter(|(m, _)| (a..b).contains(m))
            .map(|(_, l)| *l)
            .collect();
        let mut spans = vec![
            Span::styled(format!("{label:>5} "), look.dim()),
            Span::raw(fill.repeat(n.max(usize::from(c > 0)))),
        ];
        if !mark.is_empty() && total > 0 {
            spans.push(Span::styled(format!(" <{}", mark.join(",")), look.alert()));
        }
        lines.push(Line::from(spans));
    }
    if total == 0 {
        lines = vec![Line::from("no latencies yet")];
    }
    f.render_widget(
        Paragraph::new(lines).block(look.block(" latency histogram ", false)),
        area,
    );
}
