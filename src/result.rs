//! The result of a test: what the engine measured ([`Measured`]), with what the analysis made
//! of it (warnings, findings, the diskstats of the devices under it), the read-back of
//! `--verify`, and over repeats the spread. What `run --json` prints, saved runs keep and every
//! view shows.

use std::ops::{Deref, DerefMut};

use serde::ser::{SerializeStruct, Serializer};
use serde::{Deserialize, Serialize};

use crate::analysis::findings::Finding;
use crate::analysis::traced::TraceSummary;
use crate::analysis::{Analysis, DeviceBytes, Warning};
use crate::engine::Measured;
use crate::stats::IostatX;
use crate::verify::VerifyReport;

/// The result of one run of a job (or, with `repeats`, of several: the median one heads them).
/// It reads as the [`Measured`] figures it holds (`r.bytes_per_sec`), with what was made of
/// them beside.
#[derive(Debug, Clone)]
pub struct RunResult {
    pub measured: Measured,
    pub warnings: Vec<Warning>,
    /// What the diskstats of the devices under the test showed, explained.
    pub findings: Vec<Finding>,
    /// The target's device and its related devices over the run, in `iostat -x` terms.
    pub diskstats: Vec<IostatX>,
    /// What reached the target's device (for a file: the device holding it) during the run.
    pub device_bytes: Option<DeviceBytes>,
    pub repeats: Option<Vec<RunResult>>,
    pub spread: Option<Spread>,
    /// The read-back of `--verify`.
    pub verify: Option<VerifyReport>,
    /// The block layer's trace of the run (who did the I/O, where its time went), or why it
    /// was not traced.
    pub trace: Option<TraceSummary>,
}

impl RunResult {
    /// A run's figures with their analysis and read-back.
    pub fn of(measured: Measured, analysis: Analysis, verify: Option<VerifyReport>) -> Self {
        Self {
            measured,
            warnings: analysis.warnings,
            findings: analysis.findings,
            diskstats: analysis.diskstats,
            device_bytes: analysis.device_bytes,
            repeats: None,
            spread: None,
            verify,
            trace: analysis.trace,
        }
    }
}

impl Deref for RunResult {
    type Target = Measured;
    fn deref(&self) -> &Measured {
        &self.measured
    }
}

impl DerefMut for RunResult {
    fn deref_mut(&mut self) -> &mut Measured {
        &mut self.measured
    }
}

/// The result as JSON (`run --json`, saved runs, `--host`): the figures, the warnings and
/// findings, the diskstats, repeats and spread, then what was written and read back, and the
/// time series last. The order is the format's: files and scripts read it.
impl Serialize for RunResult {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let m = &self.measured;
        let mut st = s.serialize_struct("RunResult", 32)?;
        st.serialize_field("op", m.op)?;
        st.serialize_field("bs", &m.bs)?;
        st.serialize_field("iodepth", &m.iodepth)?;
        st.serialize_field("jobs", &m.jobs)?;
        st.serialize_field("mode", m.mode)?;
        st.serialize_field("data", m.data)?;
        st.serialize_field("engine", m.engine)?;
        if let Some(why) = &m.engine_why {
            st.serialize_field("engine_why", why)?;
        }
        if let Some(p) = &m.engine_probe {
            st.serialize_field("engine_probe", p)?;
        }
        st.serialize_field("engine_note", &m.engine_note)?;
        if m.polled {
            st.serialize_field("polled", &true)?;
        }
        if m.to_workers {
            st.serialize_field("to_workers", &true)?;
        }
        if m.busy_polled {
            st.serialize_field("busy_polled", &true)?;
        }
        if m.few_per_wake {
            st.serialize_field("few_per_wake", &true)?;
        }
        if let Some(c) = &m.cpus {
            st.serialize_field("cpus", c)?;
        }
        st.serialize_field("bytes", &m.bytes)?;
        st.serialize_field("ios", &m.ios)?;
        st.serialize_field("read_bytes", &m.read_bytes)?;
        st.serialize_field("write_bytes", &m.write_bytes)?;
        st.serialize_field("seconds", &m.seconds)?;
        st.serialize_field("bytes_per_sec", &m.bytes_per_sec)?;
        st.serialize_field("iops", &m.iops)?;
        st.serialize_field("latency_ns", &m.latency_ns)?;
        st.serialize_field("cpu", &m.cpu)?;
        st.serialize_field("streams", &m.streams)?;
        st.serialize_field("partial", &m.partial)?;
        st.serialize_field("cancelled", &m.cancelled)?;
        st.serialize_field("error", &m.error)?;
        st.serialize_field("warnings", &self.warnings)?;
        st.serialize_field("findings", &self.findings)?;
        st.serialize_field("diskstats", &self.diskstats)?;
        st.serialize_field("device_bytes", &self.device_bytes)?;
        if let Some(t) = &self.trace {
            st.serialize_field("trace", t)?;
        }
        if let Some(r) = &self.repeats {
            st.serialize_field("repeats", r)?;
        }
        if let Some(x) = &self.spread {
            st.serialize_field("spread", x)?;
        }
        if let Some(x) = &m.stamp {
            st.serialize_field("stamp", x)?;
        }
        if let Some(x) = &self.verify {
            st.serialize_field("verify", x)?;
        }
        if !m.samples.is_empty() {
            st.serialize_field("samples", &m.samples)?;
        }
        if let Some(x) = &m.histogram {
            st.serialize_field("histogram", x)?;
        }
        st.end()
    }
}

impl RunResult {
    /// [`median_rate`], and 0 for a result that failed or was cut short (it stands for nothing).
    pub fn median_rate(&self) -> f64 {
        if self.error.is_some() || self.cancelled {
            0.0
        } else {
            median_rate(self.bytes_per_sec, self.spread.as_ref())
        }
    }
}

/// The throughput a result stands for: the median over its repeats, or its one run's.
pub fn median_rate(bytes_per_sec: f64, spread: Option<&Spread>) -> f64 {
    spread.map_or(bytes_per_sec, |s| s.bytes_per_sec.median)
}

/// The IOPS a result stands for, as [`median_rate`]: the median over its repeats (of two, the
/// mean of both, as the throughput's), or its one run's.
pub fn median_iops(iops: f64, spread: Option<&Spread>) -> f64 {
    spread.map_or(iops, |s| s.iops.median)
}

/// Min, median and max over repeats.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Spread {
    pub runs: usize,
    pub bytes_per_sec: MinMedMax,
    pub iops: MinMedMax,
    pub p99_ns: MinMedMax,
    /// (max - min) / median of throughput.
    pub relative_spread: f64,
    /// Runs (0-based) whose throughput is more than 25% away from the median.
    pub outliers: Vec<usize>,
}

/// A run is an outlier when its throughput is more than this far from the median.
pub const OUTLIER_DISTANCE: f64 = 0.25;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct MinMedMax {
    pub min: f64,
    pub median: f64,
    pub max: f64,
}

impl MinMedMax {
    pub fn of(mut v: Vec<f64>) -> Self {
        v.sort_by(|a, b| a.total_cmp(b));
        let n = v.len();
        if n == 0 {
            return Self {
                min: 0.0,
                median: 0.0,
                max: 0.0,
            };
        }
        let median = if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        };
        Self {
            min: v[0],
            median,
            max: v[n - 1],
        }
    }
}

/// Folds repeats into one record: the run with the median throughput, with `repeats` and
/// `spread` attached.
pub fn with_repeats(runs: Vec<RunResult>) -> RunResult {
    assert!(!runs.is_empty());
    let spread = Spread {
        runs: runs.len(),
        bytes_per_sec: MinMedMax::of(runs.iter().map(|r| r.bytes_per_sec).collect()),
        iops: MinMedMax::of(runs.iter().map(|r| r.iops).collect()),
        p99_ns: MinMedMax::of(runs.iter().map(|r| r.latency_ns.p99 as f64).collect()),
        relative_spread: 0.0,
        outliers: Vec::new(),
    };
    let med = spread.bytes_per_sec.median;
    let relative_spread = if med > 0.0 {
        (spread.bytes_per_sec.max - spread.bytes_per_sec.min) / med
    } else {
        0.0
    };
    let mut order: Vec<usize> = (0..runs.len()).collect();
    order.sort_by(|&a, &b| runs[a].bytes_per_sec.total_cmp(&runs[b].bytes_per_sec));
    let mid = order[(runs.len() - 1) / 2];
    let mut head = runs[mid].clone();
    head.partial = runs.iter().any(|r| r.partial);
    head.cancelled = runs.iter().any(|r| r.cancelled);
    if head.error.is_none() {
        head.error = runs.iter().find_map(|r| r.error.clone());
    }
    let outliers: Vec<usize> = if runs.len() >= 3 && med > 0.0 {
        runs.iter()
            .enumerate()
            .filter(|(_, r)| (r.bytes_per_sec - med).abs() / med > OUTLIER_DISTANCE)
            .map(|(i, _)| i)
            .collect()
    } else {
        Vec::new()
    };
    if !outliers.is_empty() {
        let which: Vec<String> = outliers
            .iter()
            .map(|i| format!("run {} ({:.1} MB/s)", i + 1, runs[*i].bytes_per_sec / 1e6))
            .collect();
        // What was seen doing I/O during the outlying runs, when anything was.
        let seen: Vec<String> = outliers
            .iter()
            .filter_map(|i| {
                runs[*i]
                    .warnings
                    .iter()
                    .find(|w| w.kind == "busy_processes")
                    .map(|w| format!("during run {}, {}", i + 1, w.message))
            })
            .collect();
        let causes = if seen.is_empty() {
            "No other process was seen doing I/O then: caches warming or filling (page cache, \
             an SSD's SLC cache), garbage collection or thermal throttling make outliers too"
                .to_string()
        } else {
            seen.join(". ")
        };
        head.warnings.push(Warning::new(
            crate::analysis::findings::Kind::Outlier,
            format!(
                "{} more than {:.0}% away from the median {:.1} MB/s. {causes}. Look at the \
                 spread, and run again before believing any single number.",
                which.join(", "),
                OUTLIER_DISTANCE * 100.0,
                med / 1e6
            ),
        ));
    }
    head.spread = Some(Spread {
        relative_spread,
        outliers,
        ..spread
    });
    // The head keeps its time series; the copies in `repeats` do without (a saved file stays
    // small).
    let runs = runs
        .into_iter()
        .map(|mut r| {
            r.samples.clear();
            r.histogram = None;
            r
        })
        .collect();
    head.repeats = Some(runs);
    head
}

/// The warnings every one of several tests has word for word (two tests at least): said once
/// for all of them in tables and reports, instead of under each (never_written on a device
/// not yet filled, under every point of a sweep).
pub fn shared_warnings<'a>(lists: &[&'a [Warning]]) -> Vec<&'a Warning> {
    match lists.split_first() {
        Some((first, rest)) if !rest.is_empty() => first
            .iter()
            .filter(|w| rest.iter().all(|l| l.contains(w)))
            .collect(),
        _ => Vec::new(),
    }
}

/// A 1 GiB write result at `bps` bytes a second, for other modules' tests.
#[cfg(test)]
pub(crate) fn fixed_result(bps: f64) -> RunResult {
    tests::run(bps)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::findings::Kind;
    use crate::engine::result::{Cpu, Latency};

    #[test]
    fn min_median_max() {
        let m = MinMedMax::of(vec![3.0, 1.0, 2.0]);
        assert_eq!((m.min, m.median, m.max), (1.0, 2.0, 3.0));
        let m = MinMedMax::of(vec![4.0, 1.0, 2.0, 3.0]);
        assert_eq!(m.median, 2.5);
    }

    pub(super) fn run(bps: f64) -> RunResult {
        RunResult::of(
            Measured {
                op: "write",
                bs: 1 << 20,
                iodepth: 1,
                jobs: 1,
                mode: "direct",
                data: "random",
                engine: "uring",
                engine_why: None,
                engine_probe: None,
                engine_note: None,
                polled: false,
                to_workers: false,
                busy_polled: false,
                few_per_wake: false,
                cpus: None,
                bytes: 1 << 30,
                ios: 1024,
                read_bytes: 0,
                write_bytes: 1 << 30,
                seconds: (1u64 << 30) as f64 / bps,
                bytes_per_sec: bps,
                iops: bps / (1 << 20) as f64,
                latency_ns: Latency {
                    p99: (1e9 / bps * 1e6) as u64,
                    ..Default::default()
                },
                cpu: Cpu::default(),
                streams: vec![],
                partial: false,
                cancelled: false,
                error: None,
                stamp: None,
                samples: Vec::new(),
                histogram: None,
            },
            Analysis::default(),
            None,
        )
    }

    #[test]
    fn warnings_every_test_has_are_shared() {
        let w = |k: &str, m: &str| Warning::new(Kind::parse(k).unwrap(), m);
        let a = [w("never_written", "holes"), w("busy_processes", "cargo 1M")];
        let b = [w("busy_processes", "cargo 2M"), w("never_written", "holes")];
        let shared = super::shared_warnings(&[&a, &b]);
        assert_eq!(
            shared,
            [&a[0]],
            "the same words in both, whatever the order"
        );
        assert!(
            super::shared_warnings(&[&a]).is_empty(),
            "one test shares nothing"
        );
        assert!(super::shared_warnings(&[&a, &b, &[]]).is_empty());
    }

    #[test]
    fn repeats_spread_and_outliers_on_fixed_inputs() {
        let r = with_repeats(vec![
            run(400e6),
            run(410e6),
            run(150e6),
            run(405e6),
            run(395e6),
        ]);
        let s = r.spread.as_ref().unwrap();
        assert_eq!(s.runs, 5);
        assert_eq!(s.bytes_per_sec.min, 150e6);
        assert_eq!(s.bytes_per_sec.median, 400e6);
        assert_eq!(s.bytes_per_sec.max, 410e6);
        assert!(
            (s.relative_spread - 0.65).abs() < 1e-9,
            "{}",
            s.relative_spread
        );
        assert_eq!(s.outliers, [2], "the slow third run");
        assert_eq!(r.bytes_per_sec, 400e6, "the head is the median run");
        assert_eq!(r.repeats.as_ref().unwrap().len(), 5);
        let w = r.warnings.iter().find(|w| w.kind == "outlier").unwrap();
        assert!(w.message.contains("run 3 (150.0 MB/s)"), "{}", w.message);
        // A tight set has none; two runs are too few to call one an outlier.
        let r = with_repeats(vec![run(400e6), run(420e6), run(380e6)]);
        assert!(r.spread.unwrap().outliers.is_empty());
        assert!(r.warnings.is_empty());
        let r = with_repeats(vec![run(400e6), run(100e6)]);
        assert!(r.spread.unwrap().outliers.is_empty());
    }

    #[test]
    fn an_outlier_names_the_processes_seen_during_it() {
        let mut slow = run(100e6);
        slow.warnings.push(Warning::new(
            Kind::BusyProcesses,
            "other processes moved 2G (80% of the test's bytes) while it ran: updatedb (pid 42)",
        ));
        let r = with_repeats(vec![run(400e6), run(410e6), slow]);
        let w = r.warnings.iter().find(|w| w.kind == "outlier").unwrap();
        assert!(
            w.message.contains("during run 3") && w.message.contains("updatedb (pid 42)"),
            "{}",
            w.message
        );
        // Without anything seen, the note says so instead of guessing.
        let r = with_repeats(vec![run(400e6), run(410e6), run(100e6)]);
        let w = r.warnings.iter().find(|w| w.kind == "outlier").unwrap();
        assert!(
            w.message.contains("No other process was seen"),
            "{}",
            w.message
        );
    }
}
