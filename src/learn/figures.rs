//! The figures a lesson's claims name (`TEST.FIGURE`), taken from a test's result.

use std::collections::BTreeMap;

use crate::engine::Job;
use crate::result::RunResult;

/// Every figure a claim may name, with what it is.
pub const FIGURES: [(&str, &str); 22] = [
    ("mbps", "throughput, MB/s (10^6 bytes a second)"),
    ("iops", "I/Os a second"),
    ("lat_mean_us", "mean latency of an I/O, microseconds"),
    ("lat_p50_us", "median latency, microseconds"),
    ("lat_p99_us", "99th percentile latency, microseconds"),
    ("qd", "I/Os in flight the test asked for (iodepth x jobs)"),
    ("bs", "block size, bytes"),
    ("seconds", "how long it was measured"),
    (
        "dev_read_mb",
        "MB the device read while the test ran (diskstats)",
    ),
    (
        "dev_write_mb",
        "MB the device wrote while the test ran (diskstats)",
    ),
    ("reads_per_s", "iostat r/s of the device"),
    ("writes_per_s", "iostat w/s of the device"),
    (
        "flushes_per_s",
        "iostat f/s of the device: cache flushes a second",
    ),
    ("util", "iostat %util of the device"),
    (
        "aqu_sz",
        "iostat aqu-sz: requests in the device's queue, on average",
    ),
    (
        "q2d_mean_us",
        "mean time in the block layer before the driver (Q2D; traced runs)",
    ),
    ("q2d_p50_us", "median Q2D, microseconds (traced runs)"),
    ("d2c_mean_us", "mean time in the device (D2C; traced runs)"),
    ("d2c_p50_us", "median D2C, microseconds (traced runs)"),
    ("verify_checked", "sectors read back by --verify"),
    ("verify_bad", "sectors that did not hold what was written"),
    ("cpu_per_io_us", "CPU time per I/O, microseconds"),
];

/// The figures that are the test's settings, not measurements: they do not vary from run to
/// run, and no margin is taken around them.
pub const SETTINGS: [&str; 2] = ["qd", "bs"];

/// The figures of one result; a figure the run has none of (no trace, no read-back) is absent.
pub fn of(job: &Job, r: &RunResult) -> BTreeMap<String, f64> {
    let mut m = BTreeMap::new();
    let mut put = |k: &str, v: f64| {
        if v.is_finite() {
            m.insert(k.to_string(), v);
        }
    };
    put("mbps", r.bytes_per_sec / 1e6);
    put("iops", r.iops);
    put("lat_mean_us", r.latency_ns.mean / 1e3);
    put("lat_p50_us", r.latency_ns.p50 as f64 / 1e3);
    put("lat_p99_us", r.latency_ns.p99 as f64 / 1e3);
    put("qd", (job.iodepth * job.jobs) as f64);
    put("bs", job.bs as f64);
    put("seconds", r.seconds);
    put("cpu_per_io_us", r.cpu.per_io_us);
    if let Some(d) = &r.device_bytes {
        put("dev_read_mb", d.read as f64 / 1e6);
        put("dev_write_mb", d.written as f64 / 1e6);
    }
    let dev = r.device_bytes.as_ref().map(|d| d.device.as_str());
    let x = r
        .diskstats
        .iter()
        .find(|x| Some(x.disk_device.as_str()) == dev)
        .or(r.diskstats.first());
    if let Some(x) = x.filter(|x| !x.stats_off) {
        put("reads_per_s", x.r_s);
        put("writes_per_s", x.w_s);
        put("flushes_per_s", x.f_s);
        put("util", x.util);
        put("aqu_sz", x.aqu_sz);
    }
    if let Some(t) = &r.trace {
        if let Some(q) = &t.q2d_ns {
            put("q2d_mean_us", q.mean / 1e3);
            put("q2d_p50_us", q.p50 as f64 / 1e3);
        }
        if let Some(d) = &t.d2c_ns {
            put("d2c_mean_us", d.mean / 1e3);
            put("d2c_p50_us", d.p50 as f64 / 1e3);
        }
    }
    if let Some(v) = &r.verify {
        put("verify_checked", v.sectors_checked as f64);
        put("verify_bad", v.sectors_bad as f64);
    }
    m
}

/// A figure as a claim's numbers show it: 3 significant figures, no exponent.
pub fn fmt_figure(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 || a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 0.01 {
        format!("{v:.3}")
    } else {
        format!("{v:.2e}")
    }
}
