//! One chart, one SVG string.

use plotters::prelude::*;

use crate::analysis::steps::Steps;
use crate::analysis::sweep::{Param, Series};
use crate::engine::Sample;
use crate::engine::result::{LAT_BUCKETS, Latency, lat_bucket_floor};

const W: u32 = 760;
const H: u32 = 300;

/// Colours of the series of a chart (a comparison draws two runs in two colours).
const PALETTE: [RGBColor; 4] = [
    RGBColor(31, 119, 180),
    RGBColor(214, 39, 40),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
];

fn err<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

fn ns_label(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.0} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.0} ms", ns / 1e6)
    } else {
        format!("{:.0} us", ns / 1e3)
    }
}

/// A value over time for each named series (MB/s or IOPS from the samples).
pub fn over_time(
    title: &str,
    unit: &str,
    series: &[(&str, &[Sample])],
    value: fn(&Sample) -> f64,
) -> Result<String, String> {
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, (W, H)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let x_max = series
            .iter()
            .flat_map(|(_, v)| v.iter().map(|x| x.elapsed_s))
            .fold(0.0f64, f64::max)
            .max(1.0);
        let y_max = series
            .iter()
            .flat_map(|(_, v)| v.iter().map(value))
            .fold(0.0f64, f64::max)
            .max(1.0)
            * 1.1;
        let mut c = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(32)
            .y_label_area_size(60)
            .build_cartesian_2d(0f64..x_max, 0f64..y_max)
            .map_err(err)?;
        c.configure_mesh()
            .x_desc("seconds")
            .y_desc(unit)
            .draw()
            .map_err(err)?;
        for (i, (name, v)) in series.iter().enumerate() {
            let color = PALETTE[i % PALETTE.len()];
            c.draw_series(LineSeries::new(
                v.iter().map(|x| (x.elapsed_s, value(x))),
                color.stroke_width(2),
            ))
            .map_err(err)?
            .label(*name)
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color));
        }
        if series.len() > 1 {
            c.configure_series_labels()
                .background_style(WHITE.mix(0.8))
                .border_style(BLACK)
                .draw()
                .map_err(err)?;
        }
        root.present().map_err(err)?;
    }
    Ok(s)
}

/// The latency heatmap: a column per interval, a row per latency bucket (1 us to 10 s, log
/// scale), darker where more of the interval's I/Os took that long.
pub fn heatmap(title: &str, samples: &[Sample]) -> Result<String, String> {
    let cols: Vec<&Sample> = samples
        .iter()
        .filter(|s| !s.lat_buckets.is_empty())
        .collect();
    let (mut lo, mut hi) = (LAT_BUCKETS, 0);
    for s in &cols {
        for (i, c) in s.lat_buckets.iter().enumerate() {
            if *c > 0 {
                lo = lo.min(i);
                hi = hi.max(i + 1);
            }
        }
    }
    if lo >= hi {
        (lo, hi) = (0, LAT_BUCKETS);
    }
    let (lo, hi) = (lo.saturating_sub(1), (hi + 1).min(LAT_BUCKETS));
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, (W, H)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let x_max = cols.last().map(|s| s.elapsed_s).unwrap_or(1.0).max(1e-3);
        let mut c = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(32)
            .y_label_area_size(60)
            .build_cartesian_2d(0f64..x_max, lo as f64..hi as f64)
            .map_err(err)?;
        c.configure_mesh()
            .disable_mesh()
            .x_desc("seconds")
            .y_desc("latency")
            .y_labels(hi - lo)
            .y_label_formatter(&|v| ns_label(lat_bucket_floor(*v as usize)))
            .draw()
            .map_err(err)?;
        let mut prev_t = 0.0;
        for col in &cols {
            let total: u32 = col.lat_buckets.iter().sum();
            for (b, n) in col.lat_buckets.iter().enumerate().take(hi).skip(lo) {
                if *n == 0 || total == 0 {
                    continue;
                }
                let share = *n as f64 / total as f64;
                // From pale yellow to dark red as the share grows.
                let shade = RGBColor(
                    255 - (share * 120.0) as u8,
                    (230.0 * (1.0 - share)) as u8,
                    (120.0 * (1.0 - share)) as u8,
                );
                c.draw_series(std::iter::once(Rectangle::new(
                    [(prev_t, b as f64), (col.elapsed_s, b as f64 + 1.0)],
                    shade.filled(),
                )))
                .map_err(err)?;
            }
            prev_t = col.elapsed_s;
        }
        root.present().map_err(err)?;
    }
    Ok(s)
}

/// Where the time of each test's I/Os went, from the block layer's trace: for each row (a test,
/// or a run's test) a bar at p50 and one at p99, each Q2D (in the scheduler and the queue) then
/// D2C (in the device), in microseconds. Comparing two schedulers or queue depths shows on which
/// side the extra time sits.
pub fn time_split(title: &str, rows: &[(String, &Latency, &Latency)]) -> Result<String, String> {
    if rows.is_empty() {
        return Err("no traced test with Q2D and D2C".into());
    }
    let bars: Vec<(String, Vec<f64>)> = rows
        .iter()
        .flat_map(|(name, q, d)| {
            [
                (
                    format!("{name} p50"),
                    vec![q.p50 as f64 / 1e3, d.p50 as f64 / 1e3],
                ),
                (
                    format!("{name} p99"),
                    vec![q.p99 as f64 / 1e3, d.p99 as f64 / 1e3],
                ),
            ]
        })
        .collect();
    stacked(
        title,
        &[(1, "Q2D: scheduler and queue"), (0, "D2C: device")],
        &bars,
    )
}

/// Where a middle I/O's time went in each test (`analysis::steps`): its four parts, in
/// microseconds, one bar a test.
pub fn steps(title: &str, rows: &[(String, &Steps)]) -> Result<String, String> {
    if rows.is_empty() {
        return Err("no test timed at every step".into());
    }
    let us = |ns: u64| ns as f64 / 1e3;
    let bars: Vec<(String, Vec<f64>)> = rows
        .iter()
        .map(|(name, s)| {
            let parts = [s.submit_ns, s.queue_ns, s.device_ns, s.complete_ns];
            (name.clone(), parts.map(us).to_vec())
        })
        .collect();
    stacked(
        title,
        &[
            (3, "submitting: system call, ring, io-wq"),
            (1, "queue (Q2D)"),
            (0, "device (D2C)"),
            (2, "completing: interrupt, delivery, wait"),
        ],
        &bars,
    )
}

/// Horizontal bars of parts laid end to end, one bar a row: `parts` gives each part's colour
/// (of [`PALETTE`]) and its legend.
fn stacked(
    title: &str,
    parts: &[(usize, &str)],
    bars: &[(String, Vec<f64>)],
) -> Result<String, String> {
    let x_max = bars
        .iter()
        .map(|b| b.1.iter().sum::<f64>())
        .fold(1.0, f64::max)
        * 1.15;
    let n = bars.len();
    let h = (80 + 26 * n as u32).max(160) + 20 * parts.len().saturating_sub(2) as u32;
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, (W, h)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut c = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(32)
            .y_label_area_size(200)
            .build_cartesian_2d(0f64..x_max, -0.5f64..n as f64 - 0.5)
            .map_err(err)?;
        // Bar i is centred on n-1-i, so the labels sit on whole numbers.
        let labels: Vec<String> = bars.iter().map(|b| b.0.clone()).collect();
        c.configure_mesh()
            .x_desc("microseconds")
            .y_labels(n + 1)
            .y_label_formatter(&|v| {
                let k = v.round();
                if (v - k).abs() > 0.01 || k < 0.0 || k as usize >= n {
                    return String::new();
                }
                labels[n - 1 - k as usize].clone()
            })
            .disable_y_mesh()
            .draw()
            .map_err(err)?;
        let y = |i: usize| (n - 1 - i) as f64 - 0.5;
        for (p, &(colour, legend)) in parts.iter().enumerate() {
            let colour = PALETTE[colour];
            c.draw_series(bars.iter().enumerate().map(|(i, b)| {
                let from: f64 = b.1[..p].iter().sum();
                Rectangle::new(
                    [(from, y(i) + 0.15), (from + b.1[p], y(i) + 0.85)],
                    colour.filled(),
                )
            }))
            .map_err(err)?
            .label(legend)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], colour.filled()));
        }
        c.configure_series_labels()
            .position(SeriesLabelPosition::LowerRight)
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(s)
}

/// The latency histogram over buckets, with p50, p99 and p99.9 drawn as lines.
pub fn histogram(title: &str, buckets: &[u64], marks: &[(&str, u64)]) -> Result<String, String> {
    let total: u64 = buckets.iter().sum();
    let lo = buckets
        .iter()
        .position(|c| *c > 0)
        .unwrap_or(0)
        .saturating_sub(1);
    let hi = (buckets
        .iter()
        .rposition(|c| *c > 0)
        .unwrap_or(LAT_BUCKETS - 1)
        + 2)
    .min(LAT_BUCKETS);
    let y_max = buckets.iter().copied().max().unwrap_or(1).max(1) as f64 * 1.1;
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, (W, H)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let mut c = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 16))
            .margin(10)
            .x_label_area_size(32)
            .y_label_area_size(60)
            .build_cartesian_2d(lo as f64..hi as f64, 0f64..y_max)
            .map_err(err)?;
        c.configure_mesh()
            .x_desc("latency")
            .y_desc("I/Os")
            .x_labels(hi - lo)
            .x_label_formatter(&|v| ns_label(lat_bucket_floor(*v as usize)))
            .draw()
            .map_err(err)?;
        c.draw_series(buckets.iter().enumerate().take(hi).skip(lo).map(|(i, n)| {
            Rectangle::new(
                [(i as f64 + 0.05, 0.0), (i as f64 + 0.95, *n as f64)],
                PALETTE[0].filled(),
            )
        }))
        .map_err(err)?;
        for (k, (label, ns)) in marks.iter().enumerate() {
            if total == 0 || *ns == 0 {
                continue;
            }
            // The bucket position of the value, with the fraction inside its bucket.
            let x = ((*ns as f64).log10() - 3.0) * 4.0;
            let color = PALETTE[(k + 1) % PALETTE.len()];
            c.draw_series(std::iter::once(PathElement::new(
                vec![(x, 0.0), (x, y_max)],
                color.stroke_width(2),
            )))
            .map_err(err)?
            .label(format!(
                "{label} {}",
                crate::output::fmt_duration(*ns as f64, 1)
            ))
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], color));
        }
        c.configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .draw()
            .map_err(err)?;
        root.present().map_err(err)?;
    }
    Ok(s)
}

/// A sweep: throughput (IOPS for depth, MB/s for size) and p99 against the swept value (log
/// scale), with the knee marked.
pub fn sweep(series: &Series) -> Result<String, String> {
    let xs: Vec<f64> = series.points.iter().map(|p| p.value as f64).collect();
    let (x_lo, x_hi) = (
        xs.iter().copied().fold(f64::MAX, f64::min).max(1.0),
        xs.iter().copied().fold(0.0, f64::max).max(2.0),
    );
    let thr = |p: &crate::analysis::sweep::Point| series.param.throughput(p);
    let unit = series.param.throughput_unit();
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, (W, H * 2)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let (top, bottom) = root.split_vertically(H);
        let title = format!("{} by {}", series.op, series.param.as_str());
        for (area, name, get, color) in [
            (
                &top,
                unit,
                &thr as &dyn Fn(&crate::analysis::sweep::Point) -> f64,
                PALETTE[0],
            ),
            (
                &bottom,
                "p99 latency (ms)",
                &|p: &crate::analysis::sweep::Point| p.p99_ns as f64 / 1e6,
                PALETTE[1],
            ),
        ] {
            let y_max = series
                .points
                .iter()
                .map(get)
                .fold(0.0f64, f64::max)
                .max(1e-3)
                * 1.15;
            let mut c = ChartBuilder::on(area)
                .caption(format!("{title}: {name}"), ("sans-serif", 16))
                .margin(10)
                .x_label_area_size(32)
                .y_label_area_size(60)
                .build_cartesian_2d((x_lo..x_hi).log_scale(), 0f64..y_max)
                .map_err(err)?;
            c.configure_mesh()
                .x_desc(series.param.as_str())
                .y_desc(name)
                .x_label_formatter(&|v| match series.param {
                    Param::Iodepth => format!("{v:.0}"),
                    Param::Bs => crate::units::fmt_size(*v as u64),
                })
                .draw()
                .map_err(err)?;
            c.draw_series(LineSeries::new(
                series.points.iter().map(|p| (p.value as f64, get(p))),
                color.stroke_width(2),
            ))
            .map_err(err)?;
            c.draw_series(
                series
                    .points
                    .iter()
                    .map(|p| Circle::new((p.value as f64, get(p)), 4, color.filled())),
            )
            .map_err(err)?;
            if let Some(k) = &series.knee {
                let kx = k.value as f64;
                c.draw_series(std::iter::once(PathElement::new(
                    vec![(kx, 0.0), (kx, y_max)],
                    BLACK.stroke_width(1),
                )))
                .map_err(err)?;
                c.draw_series(std::iter::once(Text::new(
                    format!("knee: {}", series.param.label(k.value)),
                    (kx, y_max * 0.92),
                    ("sans-serif", 13),
                )))
                .map_err(err)?;
            }
        }
        root.present().map_err(err)?;
    }
    Ok(s)
}
