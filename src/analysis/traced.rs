//! What the block layer's tracepoints said of a test (`crate::trace`): who did the I/O on each
//! device under it, and where the test's own I/Os spent their time. Findings that compare the
//! test with /proc/diskstats ask it whose the I/O was, so that another process's reads are not
//! taken for the test's.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::engine::result::Latency;
use crate::trace::{Coverage, LiveOther, LiveView, Moved, Submitter, Traced, Who, kernel_thread};

/// The trace of one run, as results and reports carry it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct TraceSummary {
    /// `on` (the whole test), `sampled` (in windows spread over it: events came faster than a
    /// trace may cost) or `off` (not traced, and why).
    pub mode: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why: Option<String>,
    /// The time the events were on, over all windows.
    pub seconds: f64,
    /// The time from the trace's start to its end: `seconds` of it were traced.
    pub of_seconds: f64,
    /// The windows the events were on in (1 when traced throughout).
    pub windows: u32,
    /// What the windows' bytes, I/Os and flushes were multiplied by to speak for the whole run
    /// ([`TraceSummary::calibrate`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scaled_by: Option<f64>,
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
    /// Its parent, the parent's parent, ... (as the trace's reader saw them).
    #[serde(skip)]
    pub ancestors: Vec<u32>,
}

impl TraceSummary {
    /// Not traced, and why.
    pub fn off(why: impl Into<String>) -> Self {
        Self {
            mode: "off",
            why: Some(why.into()),
            seconds: 0.0,
            of_seconds: 0.0,
            windows: 0,
            scaled_by: None,
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
        let rows = t
            .tally
            .by
            .iter()
            .map(|((dev, who), m)| (name(*dev), *who, m));
        let mut s = Self::of_rows(rows, t.tally.own(), &t.coverage, t.tally.events, t.lost);
        // Requests are matched with their events by device and sector: with events lost, some
        // would be matched with another request's.
        if t.lost == 0 && !t.tally.q2d.is_empty() {
            s.q2d_ns = Some(Latency::from_histogram(&t.tally.q2d));
            s.d2c_ns = Some(Latency::from_histogram(&t.tally.d2c));
        }
        s
    }

    /// The summary of the trace so far, as its reader last handed it out (None before it has
    /// read anything).
    pub fn so_far(v: &LiveView) -> Option<Self> {
        let rows = v.moved.iter().map(|(d, who, m)| (d.clone(), *who, m));
        v.read()
            .then(|| Self::of_rows(rows, v.own, &v.coverage, v.events, v.lost))
    }

    /// Who moved what (device, submitter, what), the test being process `own`, kept as
    /// `coverage` says; without the split.
    fn of_rows<'a>(
        rows: impl Iterator<Item = (String, Submitter, &'a Moved)>,
        own: u32,
        c: &Coverage,
        events: u64,
        lost: u64,
    ) -> Self {
        let mut submitters: Vec<SubmitterIo> = rows
            .map(|(device, who, m)| SubmitterIo {
                device,
                who: if who.0 == own {
                    Who::Test
                } else if kernel_thread(who.0, &m.comm) {
                    Who::Kernel
                } else {
                    Who::Other
                },
                pid: who.0,
                comm: m.comm.clone(),
                read_bytes: m.read_bytes,
                write_bytes: m.write_bytes,
                ios: m.ios,
                flushes: m.flushes,
                ancestors: m.ancestors.clone(),
            })
            .collect();
        submitters.sort_by(|a, b| {
            (b.read_bytes + b.write_bytes)
                .cmp(&(a.read_bytes + a.write_bytes))
                .then(a.pid.cmp(&b.pid))
        });
        let (seconds, of_seconds) = (c.traced.as_secs_f64(), c.total.as_secs_f64());
        let mut s = Self {
            mode: if c.windowed { "sampled" } else { "on" },
            why: c.windowed.then(|| {
                format!(
                    "more than {:.0} block events a second: traced in {} windows of up to {:.2} \
                     s, one every {:.0} s ({seconds:.2} s of {of_seconds:.1} s), so that tracing \
                     would not cost the test its speed; what each process moved is scaled to \
                     the run",
                    crate::trace::max_events_per_sec(),
                    c.windows,
                    crate::trace::SAMPLE_FOR.as_secs_f64(),
                    crate::trace::WINDOW_EVERY.as_secs_f64(),
                )
            }),
            seconds,
            of_seconds,
            windows: c.windows,
            scaled_by: None,
            events,
            lost,
            submitters,
            q2d_ns: None,
            d2c_ns: None,
        };
        s.scale_to_run();
        s
    }

    /// A trace kept in windows, made to speak for the whole run: every submitter's bytes, I/Os
    /// and flushes are multiplied by the run's time over the windows', so that shares stay as
    /// the windows saw them. (The test's own bytes would give another factor: they also undo
    /// what the trace slowed the test in the windows, 18% for 4K random writes on a loop
    /// device, but over-count a neighbour the trace slows less; docs/architecture.md.)
    fn scale_to_run(&mut self) {
        if self.mode != "sampled" || self.seconds <= 0.0 {
            return;
        }
        let factor = self.of_seconds / self.seconds;
        let times = |n: &mut u64| *n = (*n as f64 * factor).round() as u64;
        for s in &mut self.submitters {
            times(&mut s.read_bytes);
            times(&mut s.write_bytes);
            times(&mut s.ios);
            times(&mut s.flushes);
        }
        self.scaled_by = Some(factor);
    }

    /// Other processes' I/O on each traced device, most first, at most three: the lines a live
    /// view shows.
    pub fn live_others(&self) -> Vec<LiveOther> {
        self.submitters
            .iter()
            .filter(|s| s.who == Who::Other && s.read_bytes + s.write_bytes > 0)
            .take(3)
            .map(|s| LiveOther {
                comm: s.comm.clone(),
                pid: s.pid,
                device: s.device.clone(),
                bytes: s.read_bytes + s.write_bytes,
                read_bytes: s.read_bytes,
                write_bytes: s.write_bytes,
            })
            .collect()
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
