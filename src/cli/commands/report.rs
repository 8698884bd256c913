//! `blkscope report RUN`: a saved run as Markdown, CSV, JSON, one HTML page, or one SVG chart.

use std::io::Write;

use crate::cli::print;
use crate::plot::{svg, sweeps, total_buckets};
use crate::report::html;

pub fn run(
    run: &str,
    format: &str,
    chart: Option<&str>,
    test: Option<&str>,
    out: &mut impl Write,
) -> Result<i32, crate::Error> {
    let path = crate::runs::resolve(run).map_err(crate::Error::Usage)?;
    let saved = crate::runs::load(&path).map_err(crate::Error::Usage)?;
    let text = match format {
        "html" => html::report(&saved),
        "svg" => {
            // The chart a run is about: a sweep's curve (a sweep, or a suite that varies one
            // thing, such as rmw-sweep), otherwise throughput over time.
            let chart = chart.unwrap_or(if !sweeps(&saved).is_empty() {
                "sweep"
            } else {
                "throughput"
            });
            let t = match test {
                Some(n) => saved.tests.iter().find(|t| t.name == n).ok_or_else(|| {
                    crate::Error::Usage(format!(
                        "run {} has no test '{n}'; it has: {}",
                        saved.id,
                        saved
                            .tests
                            .iter()
                            .map(|t| t.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                })?,
                None => saved
                    .tests
                    .first()
                    .ok_or_else(|| crate::Error::Usage(format!("run {} has no tests", saved.id)))?,
            };
            let samples = &t.result.samples[..];
            if chart != "sweep" && samples.is_empty() {
                return Err(crate::Error::Usage(format!(
                    "run {} has no time series (saved before blkscope-run/2): only md, csv, \
                     json and html (figures) are possible",
                    saved.id
                )));
            }
            let one = [(t.name.as_str(), samples)];
            let l = &t.result.latency_ns;
            match chart {
                "throughput" => {
                    svg::over_time("Throughput", "MB/s", &one, |s| s.bytes_per_sec / 1e6)
                }
                "iops" => svg::over_time("IOPS", "IOPS", &one, |s| s.iops),
                "heatmap" => svg::heatmap("Latency over time", samples),
                "histogram" => svg::histogram(
                    "Latency histogram",
                    &total_buckets(samples),
                    &[("p50", l.p50), ("p99", l.p99), ("p99.9", l.p99_9)],
                ),
                _ => match sweeps(&saved).first() {
                    Some(s) => svg::sweep(s),
                    None => {
                        return Err(crate::Error::Usage(format!(
                            "run {} is not a sweep (its tests do not differ in queue depth or \
                             block size only)",
                            saved.id
                        )));
                    }
                },
            }
            .map_err(|e| crate::Error::Usage(format!("cannot draw the chart: {e}")))?
        }
        _ => crate::report::render(&saved, format).map_err(crate::Error::Usage)?,
    };
    print(out, &text)?;
    Ok(0)
}
