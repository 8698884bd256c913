//! `iostat -x` columns from two /proc/diskstats readings, computed as sysstat does
//! (iostat.c / rd_stats.c). A sector in diskstats is always 512 bytes.

use procfs_core::DiskStat;
use serde::{Deserialize, Serialize};

/// The counters blkscope uses from one diskstats line (fields 1-11, 12-15 discards, 16-17
/// flushes; missing newer fields read as 0).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    pub reads: u64,
    pub reads_merged: u64,
    pub sectors_read: u64,
    pub ms_reading: u64,
    pub writes: u64,
    pub writes_merged: u64,
    pub sectors_written: u64,
    pub ms_writing: u64,
    pub in_flight: u64,
    pub io_ticks: u64,
    pub weighted_ms: u64,
    pub discards: u64,
    pub discards_merged: u64,
    pub sectors_discarded: u64,
    pub ms_discarding: u64,
    pub flushes: u64,
    pub ms_flushing: u64,
}

impl From<&DiskStat> for Counters {
    fn from(d: &DiskStat) -> Self {
        Self {
            reads: d.reads,
            reads_merged: d.merged,
            sectors_read: d.sectors_read,
            ms_reading: d.time_reading,
            writes: d.writes,
            writes_merged: d.writes_merged,
            sectors_written: d.sectors_written,
            ms_writing: d.time_writing,
            in_flight: d.in_progress,
            io_ticks: d.time_in_progress,
            weighted_ms: d.weighted_time_in_progress,
            discards: d.discards.unwrap_or(0),
            discards_merged: d.discards_merged.unwrap_or(0),
            sectors_discarded: d.sectors_discarded.unwrap_or(0),
            ms_discarding: d.time_discarding.unwrap_or(0),
            flushes: d.flushes.unwrap_or(0),
            ms_flushing: d.time_flushing.unwrap_or(0),
        }
    }
}

impl Counters {
    /// Whether any cumulative counter went backwards (the device was re-created): the caller
    /// then starts over from `self` as the new baseline.
    pub fn went_backwards(&self, prev: &Counters) -> bool {
        let pairs = [
            (self.reads, prev.reads),
            (self.reads_merged, prev.reads_merged),
            (self.sectors_read, prev.sectors_read),
            (self.ms_reading, prev.ms_reading),
            (self.writes, prev.writes),
            (self.writes_merged, prev.writes_merged),
            (self.sectors_written, prev.sectors_written),
            (self.ms_writing, prev.ms_writing),
            (self.io_ticks, prev.io_ticks),
            (self.weighted_ms, prev.weighted_ms),
            (self.discards, prev.discards),
            (self.sectors_discarded, prev.sectors_discarded),
            (self.flushes, prev.flushes),
        ];
        pairs.iter().any(|(c, p)| c < p)
    }

    /// Field-wise difference, negative deltas clamped to 0.
    pub fn delta(&self, prev: &Counters) -> Counters {
        let d = |a: u64, b: u64| a.saturating_sub(b);
        Counters {
            reads: d(self.reads, prev.reads),
            reads_merged: d(self.reads_merged, prev.reads_merged),
            sectors_read: d(self.sectors_read, prev.sectors_read),
            ms_reading: d(self.ms_reading, prev.ms_reading),
            writes: d(self.writes, prev.writes),
            writes_merged: d(self.writes_merged, prev.writes_merged),
            sectors_written: d(self.sectors_written, prev.sectors_written),
            ms_writing: d(self.ms_writing, prev.ms_writing),
            in_flight: self.in_flight,
            io_ticks: d(self.io_ticks, prev.io_ticks),
            weighted_ms: d(self.weighted_ms, prev.weighted_ms),
            discards: d(self.discards, prev.discards),
            discards_merged: d(self.discards_merged, prev.discards_merged),
            sectors_discarded: d(self.sectors_discarded, prev.sectors_discarded),
            ms_discarding: d(self.ms_discarding, prev.ms_discarding),
            flushes: d(self.flushes, prev.flushes),
            ms_flushing: d(self.ms_flushing, prev.ms_flushing),
        }
    }
}

/// One device's `iostat -x` line. Serialised with sysstat's own JSON key names, so scripts
/// written for `iostat -o JSON` read it unchanged.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct IostatX {
    pub disk_device: String,
    #[serde(rename = "r/s")]
    pub r_s: f64,
    #[serde(rename = "w/s")]
    pub w_s: f64,
    #[serde(rename = "d/s")]
    pub d_s: f64,
    #[serde(rename = "f/s")]
    pub f_s: f64,
    #[serde(rename = "rkB/s")]
    pub rkb_s: f64,
    #[serde(rename = "wkB/s")]
    pub wkb_s: f64,
    #[serde(rename = "dkB/s")]
    pub dkb_s: f64,
    #[serde(rename = "rrqm/s")]
    pub rrqm_s: f64,
    #[serde(rename = "wrqm/s")]
    pub wrqm_s: f64,
    #[serde(rename = "drqm/s")]
    pub drqm_s: f64,
    pub rrqm: f64,
    pub wrqm: f64,
    pub drqm: f64,
    pub r_await: f64,
    pub w_await: f64,
    pub d_await: f64,
    pub f_await: f64,
    #[serde(rename = "rareq-sz")]
    pub rareq_sz: f64,
    #[serde(rename = "wareq-sz")]
    pub wareq_sz: f64,
    #[serde(rename = "dareq-sz")]
    pub dareq_sz: f64,
    #[serde(rename = "aqu-sz")]
    pub aqu_sz: f64,
    pub util: f64,
    /// `queue/iostats` is 0: the kernel keeps no figures, so zeros here mean nothing.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stats_off: bool,
    /// The counters went backwards (device re-created); this interval is a new baseline.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub reset: bool,
}

/// The `iostat -x -d` columns, in sysstat's order, as its header names them.
pub const COLUMNS: [&str; 22] = [
    "r/s", "rkB/s", "rrqm/s", "%rrqm", "r_await", "rareq-sz", "w/s", "wkB/s", "wrqm/s", "%wrqm",
    "w_await", "wareq-sz", "d/s", "dkB/s", "drqm/s", "%drqm", "d_await", "dareq-sz", "f/s",
    "f_await", "aqu-sz", "%util",
];

impl IostatX {
    /// The value of a column by its `iostat -x` header (`r/s`, `%util`, ...); None for a name
    /// that is not one of [`COLUMNS`].
    pub fn column(&self, name: &str) -> Option<f64> {
        Some(match name {
            "r/s" => self.r_s,
            "rkB/s" => self.rkb_s,
            "rrqm/s" => self.rrqm_s,
            "%rrqm" => self.rrqm,
            "r_await" => self.r_await,
            "rareq-sz" => self.rareq_sz,
            "w/s" => self.w_s,
            "wkB/s" => self.wkb_s,
            "wrqm/s" => self.wrqm_s,
            "%wrqm" => self.wrqm,
            "w_await" => self.w_await,
            "wareq-sz" => self.wareq_sz,
            "d/s" => self.d_s,
            "dkB/s" => self.dkb_s,
            "drqm/s" => self.drqm_s,
            "%drqm" => self.drqm,
            "d_await" => self.d_await,
            "dareq-sz" => self.dareq_sz,
            "f/s" => self.f_s,
            "f_await" => self.f_await,
            "aqu-sz" => self.aqu_sz,
            "%util" => self.util,
            _ => return None,
        })
    }
}

fn per(n: u64, d: u64) -> f64 {
    if d == 0 { 0.0 } else { n as f64 / d as f64 }
}

fn pct(part: u64, other: u64) -> f64 {
    let all = part + other;
    if all == 0 {
        0.0
    } else {
        part as f64 * 100.0 / all as f64
    }
}

/// Computes the columns from a delta over `dt` seconds, with sysstat's formulas.
pub fn compute(name: &str, d: &Counters, dt: f64) -> IostatX {
    let dt = if dt > 0.0 { dt } else { 1.0 };
    IostatX {
        disk_device: name.to_string(),
        r_s: d.reads as f64 / dt,
        w_s: d.writes as f64 / dt,
        d_s: d.discards as f64 / dt,
        f_s: d.flushes as f64 / dt,
        rkb_s: d.sectors_read as f64 / 2.0 / dt,
        wkb_s: d.sectors_written as f64 / 2.0 / dt,
        dkb_s: d.sectors_discarded as f64 / 2.0 / dt,
        rrqm_s: d.reads_merged as f64 / dt,
        wrqm_s: d.writes_merged as f64 / dt,
        drqm_s: d.discards_merged as f64 / dt,
        rrqm: pct(d.reads_merged, d.reads),
        wrqm: pct(d.writes_merged, d.writes),
        drqm: pct(d.discards_merged, d.discards),
        r_await: per(d.ms_reading, d.reads),
        w_await: per(d.ms_writing, d.writes),
        d_await: per(d.ms_discarding, d.discards),
        f_await: per(d.ms_flushing, d.flushes),
        rareq_sz: per(d.sectors_read, d.reads) / 2.0,
        wareq_sz: per(d.sectors_written, d.writes) / 2.0,
        dareq_sz: per(d.sectors_discarded, d.discards) / 2.0,
        aqu_sz: d.weighted_ms as f64 / 1000.0 / dt,
        util: (d.io_ticks as f64 / 10.0 / dt).min(100.0),
        stats_off: false,
        reset: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(s: &str) -> Counters {
        Counters::from(&DiskStat::from_line(s).unwrap())
    }

    /// Expected values worked out by hand from the formulas in shared/domain-notes.md.
    #[test]
    fn all_columns_by_hand() {
        let a =
            line("8 0 sda 1000 100 80000 500 2000 400 160000 3000 0 900 4000 10 2 800 20 50 25");
        let b =
            line("8 0 sda 1200 150 96000 700 2500 500 200000 4000 2 1400 6000 14 4 1600 28 70 45");
        // Over 2 seconds: reads +200, rmerged +50, rsect +16000, rms +200, writes +500,
        // wmerged +100, wsect +40000, wms +1000, ticks +500, weighted +2000, discards +4,
        // dmerged +2, dsect +800, dms +8, flushes +20, fms +20.
        let x = compute("sda", &b.delta(&a), 2.0);
        assert_eq!(x.r_s, 100.0);
        assert_eq!(x.w_s, 250.0);
        assert_eq!(x.d_s, 2.0);
        assert_eq!(x.f_s, 10.0);
        assert_eq!(x.rkb_s, 4000.0); // 16000 sectors / 2 / 2 s
        assert_eq!(x.wkb_s, 10000.0);
        assert_eq!(x.dkb_s, 200.0);
        assert_eq!(x.rrqm_s, 25.0);
        assert_eq!(x.wrqm_s, 50.0);
        assert_eq!(x.drqm_s, 1.0);
        assert_eq!(x.rrqm, 20.0); // 50 / (50 + 200)
        assert!((x.wrqm - 16.666_666).abs() < 1e-4); // 100 / 600
        assert!((x.drqm - 33.333_333).abs() < 1e-4); // 2 / 6
        assert_eq!(x.r_await, 1.0); // 200 ms / 200
        assert_eq!(x.w_await, 2.0); // 1000 / 500
        assert_eq!(x.d_await, 2.0); // 8 / 4
        assert_eq!(x.f_await, 1.0); // 20 / 20
        assert_eq!(x.rareq_sz, 40.0); // 16000 / 200 / 2 kB
        assert_eq!(x.wareq_sz, 40.0); // 40000 / 500 / 2
        assert_eq!(x.dareq_sz, 100.0); // 800 / 4 / 2
        assert_eq!(x.aqu_sz, 1.0); // 2000 ms / 1000 / 2 s
        assert_eq!(x.util, 25.0); // 500 ms / 10 / 2 s
    }

    #[test]
    fn old_kernels_without_discard_and_flush_fields() {
        let a = line("8 0 sda 10 0 80 5 0 0 0 0 0 10 5");
        let b = line("8 0 sda 20 0 160 15 0 0 0 0 0 20 15");
        let x = compute("sda", &b.delta(&a), 1.0);
        assert_eq!(x.r_s, 10.0);
        assert_eq!((x.d_s, x.f_s, x.f_await, x.d_await), (0.0, 0.0, 0.0, 0.0));
        assert_eq!(x.r_await, 1.0);
        assert_eq!(x.util, 1.0);
    }

    #[test]
    fn idle_device_is_all_zeros_not_nan() {
        let a = line("7 0 loop0 5 0 40 1 0 0 0 0 0 1 1 0 0 0 0 0 0");
        let x = compute("loop0", &a.delta(&a), 1.0);
        let v = serde_json::to_value(&x).unwrap();
        for (k, val) in v.as_object().unwrap() {
            if k != "disk_device" {
                assert_eq!(val.as_f64(), Some(0.0), "{k}");
            }
        }
    }

    #[test]
    fn counters_going_backwards_are_clamped() {
        let big = line("7 0 loop0 5000 0 40000 100 6000 0 48000 200 0 300 300 0 0 0 0 10 5");
        let small = line("7 0 loop0 5 0 40 1 6 0 48 2 0 3 3 0 0 0 0 0 0");
        assert!(small.went_backwards(&big));
        let x = compute("loop0", &small.delta(&big), 1.0);
        assert_eq!(
            (x.r_s, x.w_s, x.rkb_s, x.util, x.aqu_sz),
            (0.0, 0.0, 0.0, 0.0, 0.0)
        );
    }

    #[test]
    fn sysstat_json_keys() {
        let v = serde_json::to_value(IostatX::default()).unwrap();
        let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        for k in [
            "disk_device",
            "r/s",
            "w/s",
            "d/s",
            "f/s",
            "rkB/s",
            "wkB/s",
            "dkB/s",
            "rrqm/s",
            "wrqm/s",
            "drqm/s",
            "rrqm",
            "wrqm",
            "drqm",
            "r_await",
            "w_await",
            "d_await",
            "f_await",
            "rareq-sz",
            "wareq-sz",
            "dareq-sz",
            "aqu-sz",
            "util",
        ] {
            assert!(keys.contains(&k), "missing {k}");
        }
        assert!(!keys.contains(&"stats_off"), "only present when true");
    }
}
