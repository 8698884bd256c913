//! What a run reports: live interval samples and the final result (serde, for `--json` and
//! `--ndjson`).

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Latency buckets of a heatmap column: log-scaled from 1 us to 10 s, four per decade (bucket
/// i holds latencies from 10^(3 + i/4) ns up to the next; the first also holds anything faster,
/// the last anything slower).
pub const LAT_BUCKETS: usize = 28;

/// The heatmap bucket of a latency in nanoseconds.
pub fn lat_bucket(ns: u64) -> usize {
    if ns <= 1000 {
        return 0;
    }
    let b = ((ns as f64).log10() - 3.0) * 4.0;
    (b.floor().max(0.0) as usize).min(LAT_BUCKETS - 1)
}

/// The lower edge of bucket `i`, nanoseconds.
pub fn lat_bucket_floor(i: usize) -> f64 {
    10f64.powf(3.0 + i as f64 / 4.0)
}

/// Counts per latency bucket of the I/Os recorded in `h`.
pub fn lat_buckets(h: &Histogram<u64>) -> Vec<u32> {
    let mut v = vec![0u32; LAT_BUCKETS];
    for x in h.iter_recorded() {
        let b = lat_bucket(x.value_iterated_to());
        v[b] = v[b].saturating_add(x.count_at_value() as u32);
    }
    v
}

/// The whole run's histogram, losslessly: HdrHistogram's V2 format, deflated, in base64 (as
/// HdrHistogram's own interval logs keep it).
pub fn encode_histogram(h: &Histogram<u64>) -> Option<String> {
    use base64::Engine as _;
    use hdrhistogram::serialization::{Serializer, V2DeflateSerializer};
    let mut buf = Vec::new();
    V2DeflateSerializer::new().serialize(h, &mut buf).ok()?;
    Some(base64::engine::general_purpose::STANDARD.encode(buf))
}

/// Reads back what [`encode_histogram`] wrote.
pub fn decode_histogram(s: &str) -> Option<Histogram<u64>> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD.decode(s).ok()?;
    hdrhistogram::serialization::Deserializer::new()
        .deserialize(&mut std::io::Cursor::new(bytes))
        .ok()
}

/// One live sample, every `interval` (default 100 ms).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Sample {
    /// Seconds since the run started (ramp included).
    pub elapsed_s: f64,
    /// Length of this interval in seconds.
    pub interval_s: f64,
    pub bytes: u64,
    pub ios: u64,
    pub bytes_per_sec: f64,
    pub iops: f64,
    /// Completion latency percentiles of the I/Os that finished in this interval.
    pub p50_ns: u64,
    pub p99_ns: u64,
    /// Bytes done so far (ramp included).
    pub total_bytes: u64,
    /// Fraction done, when the run is bounded by size.
    pub progress: Option<f64>,
    /// Still in the ramp (excluded from the result).
    pub ramp: bool,
    /// This interval's bytes read and written.
    #[serde(default)]
    pub read_bytes: u64,
    #[serde(default)]
    pub write_bytes: u64,
    /// The interval's I/Os per latency bucket ([`LAT_BUCKETS`], 1 us to 10 s): a heatmap column.
    #[serde(default)]
    pub lat_buckets: Vec<u32>,
}

/// Completion latency summary, nanoseconds.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct Latency {
    pub min: u64,
    pub mean: f64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p99_9: u64,
    pub p99_99: u64,
    pub max: u64,
}

impl Latency {
    pub fn from_histogram(h: &Histogram<u64>) -> Self {
        if h.is_empty() {
            return Self::default();
        }
        Self {
            min: h.min(),
            mean: h.mean(),
            p50: h.value_at_quantile(0.50),
            p90: h.value_at_quantile(0.90),
            p99: h.value_at_quantile(0.99),
            p99_9: h.value_at_quantile(0.999),
            p99_99: h.value_at_quantile(0.9999),
            max: h.max(),
        }
    }
}

#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct Cpu {
    pub user_s: f64,
    pub system_s: f64,
    /// (user + system) / every I/O the run did (the ramp's too, whose CPU time is in
    /// user and system), microseconds.
    pub per_io_us: f64,
}

/// The I/O error that stopped a run.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct IoFailure {
    pub message: String,
    /// errno, when the kernel gave one.
    pub errno: Option<i32>,
    /// Byte offset of the failed I/O.
    pub offset: Option<u64>,
    pub op: &'static str,
}

/// Something the user should know about a result.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Warning {
    pub kind: String,
    pub message: String,
}

impl Warning {
    pub fn new(kind: &str, message: impl Into<String>) -> Self {
        Self {
            kind: kind.to_string(),
            message: message.into(),
        }
    }
}

/// The result of one run of a job.
#[derive(Debug, Clone, Serialize)]
pub struct RunResult {
    pub op: &'static str,
    pub bs: u64,
    pub iodepth: u32,
    pub jobs: u32,
    pub mode: &'static str,
    pub data: &'static str,
    /// The engine that ran (`uring` or `psync`).
    pub engine: &'static str,
    /// Why io_uring was not used, when the job asked for it.
    pub engine_note: Option<String>,
    /// The CPUs the job threads (and their io-wq workers) were bound to (`--cpus`), as a list
    /// such as `0-3,6`; absent when they could run anywhere.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpus: Option<String>,
    /// Bytes moved after the ramp.
    pub bytes: u64,
    pub ios: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub seconds: f64,
    pub bytes_per_sec: f64,
    pub iops: f64,
    pub latency_ns: Latency,
    pub cpu: Cpu,
    /// Per job thread: bytes and throughput, for concurrent-stream tests.
    pub streams: Vec<Stream>,
    /// Stopped before the end (cancelled or failed).
    pub partial: bool,
    pub cancelled: bool,
    pub error: Option<IoFailure>,
    pub warnings: Vec<Warning>,
    /// What the diskstats of the devices under the test showed, explained.
    pub findings: Vec<crate::engine::findings::Finding>,
    /// The target's device and its related devices over the run, in `iostat -x` terms.
    pub diskstats: Vec<crate::stats::IostatX>,
    /// What reached the target's device (for a file: the device holding it) during the run.
    pub device_bytes: Option<DeviceBytes>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub repeats: Option<Vec<RunResult>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spread: Option<Spread>,
    /// What a random-data write put where (offsets, stamps, seeds): enough to read it back
    /// later with `blkscope verify --stamp`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stamp: Option<crate::engine::verify::Stamp>,
    /// The read-back of `--verify`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verify: Option<crate::engine::verify::VerifyReport>,
    /// Every interval of the run (time, bytes, I/Os, read/write split, p50/p99, latency
    /// buckets): the time series charts and heatmaps are drawn from.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub samples: Vec<Sample>,
    /// The whole run's latency histogram ([`encode_histogram`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub histogram: Option<String>,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct DeviceBytes {
    pub device: String,
    pub read: u64,
    pub written: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Stream {
    pub job: u32,
    pub offset: u64,
    pub bytes: u64,
    pub seconds: f64,
    pub bytes_per_sec: f64,
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
            "outlier",
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

    #[test]
    fn min_median_max() {
        let m = MinMedMax::of(vec![3.0, 1.0, 2.0]);
        assert_eq!((m.min, m.median, m.max), (1.0, 2.0, 3.0));
        let m = MinMedMax::of(vec![4.0, 1.0, 2.0, 3.0]);
        assert_eq!(m.median, 2.5);
    }

    pub(super) fn run(bps: f64) -> RunResult {
        RunResult {
            op: "write",
            bs: 1 << 20,
            iodepth: 1,
            jobs: 1,
            mode: "direct",
            data: "random",
            engine: "uring",
            engine_note: None,
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
            warnings: vec![],
            findings: vec![],
            diskstats: vec![],
            device_bytes: None,
            repeats: None,
            spread: None,
            stamp: None,
            verify: None,
            samples: Vec::new(),
            histogram: None,
        }
    }

    #[test]
    fn warnings_every_test_has_are_shared() {
        let w = |k: &str, m: &str| Warning::new(k, m);
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
    fn latency_from_histogram() {
        let mut h = Histogram::<u64>::new_with_bounds(1, 3_600_000_000_000, 3).unwrap();
        for v in 1..=1000u64 {
            h.record(v * 1000).unwrap();
        }
        let l = Latency::from_histogram(&h);
        assert_eq!(l.min, 1000);
        assert!((l.p50 as i64 - 500_000).abs() < 1000, "{l:?}");
        assert!((l.p99 as i64 - 990_000).abs() < 2000, "{l:?}");
        assert!(l.max >= 1_000_000 && l.max < 1_001_000);
    }

    #[test]
    fn an_outlier_names_the_processes_seen_during_it() {
        let mut slow = run(100e6);
        slow.warnings.push(Warning::new(
            "busy_processes",
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
