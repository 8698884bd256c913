//! What the block layer's tracepoints said of a test (`crate::trace`): who did the I/O on each
//! device under it, and where the test's own I/Os spent their time. Findings that compare the
//! test with /proc/diskstats ask it whose the I/O was, so that another process's reads are not
//! taken for the test's.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::engine::result::Latency;
use crate::trace::{Traced, Who, kernel_thread};

/// The trace of one run, as results and reports carry it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TraceSummary {
    /// `on` (the whole test), `sampled` (its first part: events came faster than a trace may
    /// cost) or `off` (not traced, and why).
    pub mode: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// The time the events cover.
    pub seconds: f64,
    pub events: u64,
    /// Events the kernel dropped because the reader fell behind.
    pub lost: u64,
    /// Who moved what on each device, most first.
    pub submitters: Vec<SubmitterIo>,
    /// The test's own I/Os: from entering the block layer to going to the driver (Q2D: the
    /// scheduler and the queue), and from there to completion (D2C: the device). Left out when
    /// events were lost: requests would be matched with the wrong events.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub q2d_ns: Option<Latency>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub d2c_ns: Option<Latency>,
}

/// What one process did on one device while the test ran.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct SubmitterIo {
    pub device: String,
    pub who: Who,
    pub pid: u32,
    pub comm: String,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub ios: u64,
    pub flushes: u64,
}

impl TraceSummary {
    /// Not traced, and why.
    pub fn off(why: impl Into<String>) -> Self {
        Self {
            mode: "off",
            why: Some(why.into()),
            seconds: 0.0,
            events: 0,
            lost: 0,
            submitters: Vec::new(),
            q2d_ns: None,
            d2c_ns: None,
        }
    }

    /// The summary of a finished trace.
    pub fn of(t: &Traced) -> Self {
        let name = |dev: (u32, u32)| {
            t.devices
                .iter()
                .find(|(d, _)| *d == dev)
                .map_or_else(|| format!("{}:{}", dev.0, dev.1), |(_, n)| n.clone())
        };
        let mut submitters: Vec<SubmitterIo> = t
            .tally
            .by
            .iter()
            .map(|((dev, who), m)| SubmitterIo {
                device: name(*dev),
                who: if t.tally.is_own(*who) {
                    Who::Test
                } else if kernel_thread(who.0, &m.comm) {
                    Who::Kernel
                } else {
                    Who::Other
                },
                pid: who.0,
                comm: process_name(who.0).unwrap_or_else(|| m.comm.clone()),
                read_bytes: m.read_bytes,
                write_bytes: m.write_bytes,
                ios: m.ios,
                flushes: m.flushes,
            })
            .collect();
        submitters.sort_by(|a, b| {
            (b.read_bytes + b.write_bytes)
                .cmp(&(a.read_bytes + a.write_bytes))
                .then(a.pid.cmp(&b.pid))
        });
        // Requests are matched with their events by device and sector: with events lost, some
        // would be matched with another request's.
        let timed = t.lost == 0 && !t.tally.q2d.is_empty();
        let seconds = match t.tally.first_ns {
            Some(f) => t.tally.last_ns.saturating_sub(f) as f64 / 1e9,
            None => 0.0,
        };
        Self {
            mode: if t.sampled { "sampled" } else { "on" },
            why: t.sampled.then(|| {
                format!(
                    "more than {:.0} block events a second: the first {:.2} s were traced, so \
                     that tracing would not cost the test its speed",
                    crate::trace::max_events_per_sec(),
                    crate::trace::SAMPLE_FOR.as_secs_f64()
                )
            }),
            seconds,
            events: t.tally.events,
            lost: t.lost,
            submitters,
            q2d_ns: timed.then(|| Latency::from_histogram(&t.tally.q2d)),
            d2c_ns: timed.then(|| Latency::from_histogram(&t.tally.d2c)),
        }
    }

    /// Whether it says whose the I/O was.
    pub fn traced(&self) -> bool {
        self.mode != "off"
    }

    /// Bytes read on `device` that may be the test's: its own, and the kernel's (which works
    /// for whoever) in the share `kernel_share` of them that is taken for the test's.
    pub fn reads_not_others(&self, device: &str, kernel_share: f64) -> u64 {
        self.not_others(device, kernel_share, |s| s.read_bytes)
    }

    /// Bytes written on `device` that may be the test's: its own, and the kernel's in
    /// `kernel_share` (writeback of the test's buffered writes is the kernel's).
    pub fn writes_not_others(&self, device: &str, kernel_share: f64) -> u64 {
        self.not_others(device, kernel_share, |s| s.write_bytes)
    }

    /// `bytes` of the test's and the kernel's (in `kernel_share`) on `device`.
    fn not_others(&self, device: &str, kernel_share: f64, bytes: fn(&SubmitterIo) -> u64) -> u64 {
        self.on(device)
            .map(|s| match s.who {
                Who::Test => bytes(s),
                Who::Kernel => (bytes(s) as f64 * kernel_share) as u64,
                Who::Other => 0,
            })
            .sum()
    }

    /// Other processes' bytes on `device`, and each of them named ("dd (pid 4503) 256M"),
    /// most first, at most three.
    pub fn others_moved(&self, device: &str) -> (u64, Vec<(String, u32, u64)>) {
        let mut v: Vec<(String, u32, u64)> = self
            .others_on(device)
            .map(|o| (o.comm.clone(), o.pid, o.read_bytes + o.write_bytes))
            .filter(|o| o.2 > 0)
            .collect();
        v.sort_by_key(|o| std::cmp::Reverse(o.2));
        let all = v.iter().map(|o| o.2).sum();
        v.truncate(3);
        (all, v)
    }

    /// Flush requests (bios with a preflush, or empty flushes) queued on `device` that may be
    /// the test's: its own, and the kernel's in `kernel_share` (a journal's flush for the
    /// test's fdatasync is the kernel's); and all of them, whoever sent them.
    pub fn flushes_on(&self, device: &str, kernel_share: f64) -> (f64, u64) {
        let mut ours = 0.0;
        let mut all = 0;
        for s in self.on(device) {
            all += s.flushes;
            ours += match s.who {
                Who::Test => s.flushes as f64,
                Who::Kernel => s.flushes as f64 * kernel_share,
                Who::Other => 0.0,
            };
        }
        (ours, all)
    }

    /// The test's share of all the bytes moved on `device` (1 where nothing moved): how much of
    /// what the kernel did below it is taken for the test's.
    pub fn test_share(&self, device: &str) -> f64 {
        let (mut test, mut all) = (0u64, 0u64);
        for s in self.on(device) {
            let b = s.read_bytes + s.write_bytes;
            all += b;
            if s.who == Who::Test {
                test += b;
            }
        }
        if all == 0 {
            1.0
        } else {
            test as f64 / all as f64
        }
    }

    /// The test's own reads, on every traced device.
    pub fn test_reads(&self) -> u64 {
        self.submitters
            .iter()
            .filter(|s| s.who == Who::Test)
            .map(|s| s.read_bytes)
            .sum()
    }

    /// Every byte read on `device`, whoever read it.
    pub fn reads_all(&self, device: &str) -> u64 {
        self.on(device).map(|s| s.read_bytes).sum()
    }

    /// Other processes' I/O on `device` (reads and writes), most first.
    pub fn others_on<'a>(&'a self, device: &'a str) -> impl Iterator<Item = &'a SubmitterIo> {
        self.on(device).filter(|s| s.who == Who::Other)
    }

    /// Other processes' I/O on any traced device, summed per process: (comm, pid, read,
    /// written).
    pub fn others(&self) -> Vec<(String, u32, u64, u64)> {
        let mut by: BTreeMap<u32, (String, u64, u64)> = BTreeMap::new();
        for s in self.submitters.iter().filter(|s| s.who == Who::Other) {
            let e = by.entry(s.pid).or_insert((s.comm.clone(), 0, 0));
            e.1 += s.read_bytes;
            e.2 += s.write_bytes;
        }
        let mut v: Vec<_> = by.into_iter().map(|(p, (c, r, w))| (c, p, r, w)).collect();
        v.sort_by_key(|b| std::cmp::Reverse(b.2 + b.3));
        v
    }

    fn on<'a>(&'a self, device: &'a str) -> impl Iterator<Item = &'a SubmitterIo> {
        self.submitters.iter().filter(move |s| s.device == device)
    }
}

/// A process's name, from /proc (a thread's comm names the thread: `iou-wrk-501`).
pub fn process_name(pid: u32) -> Option<String> {
    std::fs::read_to_string(format!("/proc/{pid}/comm"))
        .ok()
        .map(|s| s.trim().to_string())
}
