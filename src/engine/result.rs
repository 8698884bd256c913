//! What a run measures: live interval samples (serde, for `--ndjson`), latency summaries and
//! heatmap buckets, and the figures of the whole run ([`Measured`]).

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::job::EngineKind;

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
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
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
    /// The block layer's trace so far, where it runs: the test's requests' median time in the
    /// queue (Q2D) and in the device (D2C), nanoseconds. Set by the session for live views.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub q2d_p50_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub d2c_p50_ns: Option<u64>,
    /// Other processes' bytes on the traced devices since the trace began (at most three),
    /// where the trace runs throughout.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub others_traced: Vec<crate::trace::LiveOther>,
    /// Why the trace so far has no split, where it runs and has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub split_why: Option<String>,
    /// Where a middle I/O's time went so far, submission to completion (the engine's times
    /// paired with the trace's: `analysis::steps`). Set by the session for live views.
    /// (Boxed: most samples have none, and a sample travels in every live message.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steps: Option<Box<Steps>>,
    /// What the jobs still wait for once they have been told to stop (a cancel, the run's
    /// time up) and have waited [`STOPPING_SAID_AFTER`] for it: a device that does not
    /// complete what was issued holds the run until it does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopping: Option<Stopping>,
    /// The I/Os in flight at the interval's end when none completed in it: the jobs waited
    /// for the device the whole interval (`analysis::findings::stall` adds such intervals up).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub waiting: Option<u32>,
}

impl Sample {
    /// For an interval in which none of the test's I/Os completed: "none completed: 16 I/Os
    /// in flight" (what a live view says instead of a rate and a latency it does not have).
    pub fn none_completed(&self) -> Option<String> {
        (self.ios == 0).then(|| match self.waiting {
            Some(n) => format!(
                "none completed: {} in flight",
                crate::units::count(n as usize, "I/O")
            ),
            None => "none completed".into(),
        })
    }
}

/// How long the jobs wait for what they issued before a sample says so.
pub const STOPPING_SAID_AFTER: std::time::Duration = std::time::Duration::from_secs(1);

/// A run that has stopped issuing and still waits for the device.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq)]
pub struct Stopping {
    /// Seconds since the jobs were told to stop (or the first of them stopped issuing).
    pub waited_s: f64,
    /// Whether a cancel stopped them (Ctrl-C, Esc); else the run's time or its bytes are done.
    pub cancelled: bool,
    /// The I/Os issued and not yet completed, over the jobs still running.
    pub in_flight: u32,
    /// Whether a job waits for its final fdatasync (`--mode fdatasync`).
    pub flushing: bool,
}

impl Stopping {
    /// One line for a progress bar or the run view: "cancelled: 8 I/Os still in flight
    /// after 3 s".
    pub fn line(&self) -> String {
        let why = if self.cancelled {
            "cancelled"
        } else {
            "stopping"
        };
        let ios = crate::units::count(self.in_flight as usize, "I/O");
        let what = match (self.in_flight, self.flushing) {
            (0, true) => "the final fdatasync still running".to_string(),
            (_, false) => format!("{ios} still in flight"),
            (_, true) => format!("{ios} in flight and a final fdatasync"),
        };
        format!("{why}: {what} after {:.0} s", self.waited_s)
    }
}

/// The parts of a middle I/O's time, ns.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq, Eq)]
pub struct Steps {
    /// I/Os timed at every step (the engine's and the trace's times paired).
    pub timed: u64,
    /// Of them, those in the middle, whose parts these are.
    pub middle: u64,
    /// Their mean time from submission to completion: the four parts' sum.
    pub total_ns: u64,
    /// From the engine's submission to entering the block layer.
    pub submit_ns: u64,
    /// In the queue and the scheduler (Q2D).
    pub queue_ns: u64,
    /// In the device (D2C).
    pub device_ns: u64,
    /// From the device's completion to the engine's seeing it.
    pub complete_ns: u64,
    /// Where the trace was kept in windows: the median time of the engine's timed I/Os
    /// submitted in the windows that timed them (all three block events on) and of those
    /// submitted outside them (what the trace's events cost the I/Os it saw, whose parts
    /// these are).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_windows_p50_ns: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub between_p50_ns: Option<u64>,
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

/// What one run of a job measured: its figures, time series and histogram, and what it wrote
/// where. The findings, the read-back and the spread over repeats are added above the engine
/// (`crate::result::RunResult`).
#[derive(Debug, Clone)]
pub struct Measured {
    pub op: &'static str,
    pub bs: u64,
    pub iodepth: u32,
    pub jobs: u32,
    pub mode: &'static str,
    pub data: &'static str,
    /// The engine that ran (`uring` or `psync`).
    pub engine: &'static str,
    /// Why blkscope picked this engine, when the job left the choice to it (`--engine auto`).
    pub engine_why: Option<String>,
    /// What the probe that chose the engine measured, when there was one ([`super::probe`]).
    pub engine_probe: Option<Probe>,
    /// Why io_uring was not used, when the job asked for it.
    pub engine_note: Option<String>,
    /// Completions were reaped by polling the device's poll queues (`--hipri`: io_uring's
    /// IOPOLL), not by an interrupt each.
    pub polled: bool,
    /// The kernel handed the first I/Os to its io-wq workers, so the rest were sent to them as
    /// submitted (IOSQE_ASYNC; fio's `--force_async=1`).
    pub to_workers: bool,
    /// The job polled its ring for completions instead of sleeping (a shallow ring whose
    /// completions came faster than a wake): its thread's CPU stayed busy while it waited.
    pub busy_polled: bool,
    /// The job woke for a few completions at a time instead of a share of its ring: its
    /// trial found that faster, or as fast at less CPU, on this device (`engine/few.rs`).
    pub few_per_wake: bool,
    /// The CPUs the job threads (and their io-wq workers) were bound to (`--cpus`), as a list
    /// such as `0-3,6`; absent when they could run anywhere.
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
    /// What a random-data write put where (offsets, stamps, seeds): enough to read it back
    /// later with `blkscope verify --stamp`.
    pub stamp: Option<super::pattern::Stamp>,
    /// Every interval of the run (time, bytes, I/Os, read/write split, p50/p99, latency
    /// buckets): the time series charts and heatmaps are drawn from.
    pub samples: Vec<Sample>,
    /// The whole run's latency histogram ([`encode_histogram`]).
    pub histogram: Option<String>,
}

impl Measured {
    /// The engine and why blkscope took it, when the job left the choice to it: "psync (one
    /// I/O in flight per job: a pread/pwrite loop costs least; --engine uring forces io_uring)".
    pub fn engine_chosen(&self) -> Option<String> {
        Some(engine_chosen(self.engine, self.engine_why.as_deref()?))
    }
}

/// `engine` and `why` blkscope chose it, with how to choose the other (a saved run's words too).
pub fn engine_chosen(engine: &str, why: &str) -> String {
    let other = if engine == "psync" {
        "--engine uring forces io_uring"
    } else {
        "--engine psync forces pread/pwrite"
    };
    format!("{engine} ({why}; {other})")
}

#[derive(Debug, Clone, Serialize)]
pub struct Stream {
    pub job: u32,
    pub offset: u64,
    pub bytes: u64,
    pub seconds: f64,
    pub bytes_per_sec: f64,
}

/// What `auto`'s probe measured (`engine::probe`): each path's IOPS and CPU per I/O over the
/// same job.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Probe {
    /// How long each path's counted part ran (its IOPS: the median of its 10 ms slices).
    pub seconds: f64,
    /// io_uring at the job's depth, through the kernel's io-wq workers.
    pub ring_iops: f64,
    /// pread/pwrite, one I/O at a time per job.
    pub loop_iops: f64,
    /// The whole process's CPU time (its io-wq workers' too) over each path's I/Os, ramps
    /// included, in microseconds.
    pub ring_cpu_us: f64,
    pub loop_cpu_us: f64,
}

impl Probe {
    /// The ring's IOPS over the loop's, and its CPU per I/O over the loop's.
    pub fn ratios(&self) -> (f64, f64) {
        (
            self.ring_iops / self.loop_iops,
            self.ring_cpu_us / self.loop_cpu_us,
        )
    }

    /// [`Probe::ratios`] where both are figures (each path's IOPS and CPU time moved): else
    /// None, and the probe's choice is the faster.
    pub fn timed_ratios(&self) -> Option<(f64, f64)> {
        let (rate, cost) = self.ratios();
        [rate, cost]
            .iter()
            .all(|x| x.is_finite() && *x > 0.0)
            .then_some((rate, cost))
    }

    /// The path taken: the one that does more I/Os a second for its CPU per I/O. The faster,
    /// unless its CPU per I/O is up by more than its rate (io-wq's workers on a second CPU for
    /// a tenth more IOPS); as fast, the cheaper; a tie, the loop (the least overhead). Without
    /// both CPU figures, the faster.
    pub fn winner(&self) -> EngineKind {
        let ring_wins = match self.timed_ratios() {
            Some((rate, cost)) => rate > cost,
            None => self.ring_iops > self.loop_iops,
        };
        if ring_wins {
            EngineKind::Uring
        } else {
            EngineKind::Psync
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_run_waiting_for_the_device_says_for_what() {
        let st = |cancelled, in_flight, flushing| {
            Stopping {
                waited_s: 2.6,
                cancelled,
                in_flight,
                flushing,
            }
            .line()
        };
        for (line, want) in [
            (
                st(true, 8, false),
                "cancelled: 8 I/Os still in flight after 3 s",
            ),
            (
                st(true, 1, false),
                "cancelled: 1 I/O still in flight after 3 s",
            ),
            (
                st(false, 0, true),
                "stopping: the final fdatasync still running after 3 s",
            ),
            (
                st(false, 2, true),
                "stopping: 2 I/Os in flight and a final fdatasync after 3 s",
            ),
        ] {
            assert_eq!(line, want);
        }
    }
}
