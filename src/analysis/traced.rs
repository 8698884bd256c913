//! What the block layer's tracepoints said of a test (`crate::trace`): who did the I/O on each
//! device under it, and where the test's own I/Os spent their time. Findings that compare the
//! test with /proc/diskstats ask it whose the I/O was, so that another process's reads are not
//! taken for the test's.

use std::collections::BTreeMap;

use serde::Serialize;

use super::steps::{self, Steps};
use crate::engine::TimedIo;
use crate::engine::job::{Job, Mode};
use crate::engine::result::Latency;
use crate::trace::{Coverage, DeviceBytes, FileOf, LiveOther, LiveView, Row, Traced, Who};

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
    /// Of `seconds`, those of the windows that timed the test's I/Os (all three block events
    /// on: the split and the steps come from them); the other windows counted who moved what.
    /// Kept in windows only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timed_seconds: Option<f64>,
    /// How the events were read: `pages` (each CPU's ring buffer, as the kernel keeps it) or
    /// `text` (as the kernel prints it; a kernel whose pages blkscope cannot read).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_as: Option<&'static str>,
    /// The run's time over the windows': what the figures of a process there all along were
    /// multiplied by to speak for the whole run (one there for part of it: by its own time).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scaled_by: Option<f64>,
    pub events: u64,
    /// Events the kernel dropped because the reader fell behind.
    pub lost: u64,
    /// The CPU time of blkscope's thread that read the trace (its parsing, its wakes, turning
    /// the events on and off for each window), in seconds: most of what a trace costs the test's
    /// process; the kernel's recording of each event is in the thread that caused it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reader_cpu_s: Option<f64>,
    /// Who moved what on each device, most first.
    pub submitters: Vec<SubmitterIo>,
    /// The test's own I/Os: from entering the block layer to going to the driver (Q2D: the
    /// scheduler and the queue), and from there to completion (D2C: the device). Left out when
    /// events were lost: requests would be matched with the wrong events.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub q2d_ns: Option<Latency>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub d2c_ns: Option<Latency>,
    /// Why there is no split, where the test was traced and there is none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub split_why: Option<String>,
    /// Where all the time of a middle I/O went, from the engine's submission to its seeing
    /// the completion ([`steps`](super::steps)); else why not (`steps_why`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<Steps>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps_why: Option<String>,
}

/// What a loop device under the test asked of the disk below it, in its backing file
/// ([`TraceSummary::below`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Below {
    pub loop_device: String,
    pub file: String,
    pub disk: String,
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// The kernel threads that did it, the first three seen.
    pub threads: Vec<String>,
}

/// What the test moved on its own device by the engine's count, in each direction where that
/// I/O reaches the device as bios of the test's own (O_DIRECT; writes with O_DSYNC or O_SYNC):
/// where windows saw none of it, the device's counters hold it all the same, and it is not
/// another process's to be given ([`TraceSummary::fit_to_counters`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OwnBytes {
    pub device: String,
    pub read_bytes: Option<u64>,
    pub write_bytes: Option<u64>,
}

impl OwnBytes {
    /// `job`'s bytes so far (`read`, `written`) on `device`, the target's.
    pub fn of(job: &Job, device: &str, read: u64, written: u64) -> Self {
        let direct = job.mode == Mode::Direct;
        let sync_writes = direct || matches!(job.mode, Mode::Dsync | Mode::Sync);
        Self {
            device: device.to_string(),
            read_bytes: direct.then_some(read),
            write_bytes: sync_writes.then_some(written),
        }
    }
}

/// What one process did on one device while the test ran.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SubmitterIo {
    /// The device: a partition, where the I/O was in one, and then its disk.
    pub device: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disk: Option<String>,
    /// The loop device whose backing file the I/O was in, on `device` (a kernel thread's
    /// there served the loop device; another process's was on its file directly).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backing_file_of: Option<FileOf>,
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
    /// How many like it each one seen stands for in a total (1 when traced throughout, or
    /// there for a whole window's period): one that lived a tenth of a second between windows
    /// a second apart was likely missed, and so were others like it ([`scale`]).
    #[serde(skip)]
    pub weight: f64,
}

impl SubmitterIo {
    /// Where its I/O was, in words: "loop0p2", "loop0's backing file on vda".
    pub fn place(&self) -> String {
        match &self.backing_file_of {
            Some(f) => format!("{}'s backing file on {}", f.loop_device, self.device),
            None => self.device.clone(),
        }
    }

    /// `n` of its figures, as a total counts it.
    pub fn counted(&self, n: u64) -> u64 {
        (n as f64 * self.weight).round() as u64
    }
}

impl TraceSummary {
    /// Traced throughout the test (not in windows): its counts are the test's whole.
    pub fn throughout(&self) -> bool {
        self.mode == "on"
    }

    /// Not traced, and why.
    pub fn off(why: impl Into<String>) -> Self {
        Self {
            mode: "off",
            why: Some(why.into()),
            seconds: 0.0,
            of_seconds: 0.0,
            windows: 0,
            timed_seconds: None,
            read_as: None,
            scaled_by: None,
            events: 0,
            lost: 0,
            reader_cpu_s: None,
            submitters: Vec::new(),
            q2d_ns: None,
            d2c_ns: None,
            split_why: None,
            steps: None,
            steps_why: None,
        }
    }

    /// The summary of a finished trace; `own`: what the test moved by the engine's count.
    pub fn of(t: &Traced, own: Option<&OwnBytes>) -> Self {
        let rows = t.tally.rows(&t.devices);
        let mut s = Self::of_rows(&rows, t.tally.own(), &t.coverage, t.tally.events, t.lost);
        s.fit_to_counters(&t.device_bytes, own);
        s.reader_cpu_s = (t.reader_cpu_ns > 0).then(|| t.reader_cpu_ns as f64 / 1e9);
        // Requests are matched with their events by device and sector: with events lost, some
        // would be matched with another request's.
        if t.lost == 0 && !t.tally.q2d.is_empty() {
            s.q2d_ns = Some(Latency::from_histogram(&t.tally.q2d));
            s.d2c_ns = Some(Latency::from_histogram(&t.tally.d2c));
        } else {
            s.split_why = Some(s.no_split());
        }
        s
    }

    /// The parts of a middle I/O's time: the engine's timed I/Os (`engine`, none where its
    /// I/Os are not its bios) paired with the trace's; else why not.
    pub fn with_steps(mut self, engine: &[TimedIo], t: &Traced) -> Self {
        // Events lost leave some I/Os unpaired, not paired wrongly: a pair needs the bio's
        // three times at the I/O's sector inside the I/O's own (as the live view pairs them).
        match steps::of_sampled(engine, &t.tally.stepped, &t.coverage) {
            Ok(s) => self.steps = Some(s),
            Err(paired) => {
                self.steps_why = Some(if engine.is_empty() {
                    "the test's I/Os are not its bios (I/O through the page cache, or a file \
                     whose blocks its file system does not place on one device): the block \
                     layer's times cannot be paired with the test's"
                        .into()
                } else if let Some(why) = &self.split_why {
                    why.clone()
                } else {
                    format!(
                        "{paired} of the test's I/Os were found in the trace, too few to tell a \
                         middle one's time"
                    )
                })
            }
        }
        self
    }

    /// Why the test's time is not split between the queue and the device.
    fn no_split(&self) -> String {
        let requests: u64 = self
            .submitters
            .iter()
            .filter(|s| s.who == Who::Test)
            .map(|s| s.ios)
            .sum();
        if self.lost > 0 {
            format!(
                "the kernel dropped {} events, and requests would be matched with the wrong ones",
                self.lost
            )
        } else if requests == 0 {
            "the device made no requests of the test's I/O (a bio-based driver such as zram, \
             dm or md passes bios on): there is no queue to time"
                .into()
        } else {
            "none of the test's requests was seen from queue to completion".into()
        }
    }

    /// The summary of the trace so far, as its reader last handed it out (None before it has
    /// read anything); `own`: what the test has moved so far by the engine's count.
    pub fn so_far(v: &LiveView, own: Option<&OwnBytes>) -> Option<Self> {
        v.read().then(|| {
            let mut s = Self::of_rows(&v.rows, v.own, &v.coverage, v.events, v.lost);
            s.fit_to_counters(&v.device_bytes, own);
            if v.split.is_none() {
                s.split_why = Some(s.no_split());
            }
            s
        })
    }

    /// Who moved what, the test being process `own`, kept as `coverage` says; without the
    /// split. In windows, each row is scaled to its time in the run ([`scale`]).
    fn of_rows(rows: &[Row], own: u32, c: &Coverage, events: u64, lost: u64) -> Self {
        let mut submitters: Vec<SubmitterIo> = rows
            .iter()
            .map(|r| {
                let m = &r.moved;
                let mut s = SubmitterIo {
                    device: r.device.clone(),
                    disk: r.disk.clone(),
                    backing_file_of: r.file.clone(),
                    who: if r.who.0 == own {
                        Who::Test
                    } else if m.kernel {
                        Who::Kernel
                    } else {
                        Who::Other
                    },
                    pid: r.who.0,
                    comm: m.comm.clone(),
                    read_bytes: m.read_bytes,
                    write_bytes: m.write_bytes,
                    ios: m.ios,
                    flushes: m.flushes,
                    ancestors: m.ancestors.clone(),
                    weight: 1.0,
                };
                if c.windowed {
                    scale(&mut s, r, c);
                }
                s
            })
            .collect();
        most_first(&mut submitters);
        let (seconds, of_seconds) = (c.traced(), c.total());
        let timed = c.timed_seconds();
        Self {
            mode: if c.windowed { "sampled" } else { "on" },
            why: c.windowed.then(|| {
                format!(
                    "more than {:.0} block events a second: traced in {} window{} of up to {:.2} \
                     s, one every {:.0} s ({seconds:.2} s of {of_seconds:.2} s; the test's I/Os \
                     timed in {timed:.2} s of them, the rest counting only who queued what), so \
                     that tracing would not cost the test its speed; what each process moved is \
                     scaled to its own time in the run, then to what each device moved by its \
                     diskstats",
                    crate::trace::max_events_per_sec(),
                    c.windows(),
                    if c.windows() == 1 { "" } else { "s" },
                    crate::trace::SAMPLE_FOR.as_secs_f64(),
                    crate::trace::WINDOW_EVERY.as_secs_f64(),
                )
            }),
            seconds,
            of_seconds,
            windows: c.windows(),
            timed_seconds: c.windowed.then_some(timed),
            read_as: (!c.read_as.is_empty()).then_some(c.read_as),
            scaled_by: (c.windowed && seconds > 0.0).then(|| of_seconds / seconds),
            events,
            lost,
            reader_cpu_s: None,
            submitters,
            q2d_ns: None,
            d2c_ns: None,
            split_why: None,
            steps: None,
            steps_why: None,
        }
    }

    /// Each device's reads and writes, as the windows share them among those seen, made to
    /// add up to what the device moved by its diskstats over the trace (`counted`, empty when
    /// traced throughout): the windows say who, the kernel's counters how much, between the
    /// windows too. Where the windows saw none of a direction, or the counters none, it is left
    /// as the windows' time made it. Where they saw none of the test's I/O that `own` says
    /// reached a device as its own bios, the counters less the test's bytes are the others'.
    fn fit_to_counters(&mut self, counted: &[DeviceBytes], own: Option<&OwnBytes>) {
        for d in counted {
            let on = |s: &SubmitterIo| s.backing_file_of.is_none() && s.device == d.device;
            let own = own.filter(|o| o.device == d.device);
            let seen = |bytes: fn(&SubmitterIo) -> u64| {
                (self.submitters.iter()).any(|s| on(s) && s.who == Who::Test && bytes(s) > 0)
            };
            let unseen = |m: Option<u64>, bytes: fn(&SubmitterIo) -> u64| match m {
                Some(m) if !seen(bytes) => m,
                _ => 0,
            };
            let reads = d
                .read_bytes
                .saturating_sub(unseen(own.and_then(|o| o.read_bytes), |s| s.read_bytes));
            let writes = d
                .write_bytes
                .saturating_sub(unseen(own.and_then(|o| o.write_bytes), |s| s.write_bytes));
            fit(&mut self.submitters, on, reads, |s| &mut s.read_bytes);
            let before: Vec<u64> = self.submitters.iter().map(|s| s.write_bytes).collect();
            fit(&mut self.submitters, on, writes, |s| &mut s.write_bytes);
            flushes_follow_writes(&mut self.submitters, &before);
        }
        most_first(&mut self.submitters);
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
                device: s.place(),
                bytes: s.read_bytes + s.write_bytes,
                read_bytes: s.read_bytes,
                write_bytes: s.write_bytes,
            })
            .collect()
    }

    /// What each loop device under the test asked of the disk below it: the kernel's I/O in
    /// its backing file (its worker's, and writeback of the file's pages), as a total counts
    /// it. Another process's there is a neighbour's ([`Self::others`]).
    pub fn below(&self) -> Vec<Below> {
        let mut v: Vec<Below> = Vec::new();
        let kernel = self.submitters.iter().filter(|s| s.who == Who::Kernel);
        for s in kernel {
            let Some(f) = &s.backing_file_of else {
                continue;
            };
            let at = match v.iter().position(|b| b.loop_device == f.loop_device) {
                Some(i) => i,
                None => {
                    v.push(Below {
                        loop_device: f.loop_device.clone(),
                        file: f.file.clone(),
                        disk: s.device.clone(),
                        read_bytes: 0,
                        write_bytes: 0,
                        threads: Vec::new(),
                    });
                    v.len() - 1
                }
            };
            let b = &mut v[at];
            b.read_bytes += s.counted(s.read_bytes);
            b.write_bytes += s.counted(s.write_bytes);
            if b.threads.len() < 3 && !b.threads.contains(&s.comm) {
                b.threads.push(s.comm.clone());
            }
        }
        v
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
                Who::Test => s.counted(bytes(s)),
                Who::Kernel => (s.counted(bytes(s)) as f64 * kernel_share) as u64,
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
        let all = self
            .others_on(device)
            .map(|o| o.counted(o.read_bytes + o.write_bytes))
            .sum();
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
            all += s.counted(s.flushes);
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
            all += s.counted(b);
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

    /// The test's own bytes written and flushes sent on `device`.
    pub fn test_writes_and_flushes(&self, device: &str) -> (u64, u64) {
        (self.on(device))
            .filter(|s| s.who == Who::Test)
            .fold((0, 0), |(w, f), s| (w + s.write_bytes, f + s.flushes))
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
        self.on(device).map(|s| s.counted(s.read_bytes)).sum()
    }

    /// Every byte written on `device`, whoever wrote it.
    pub fn writes_all(&self, device: &str) -> u64 {
        self.on(device).map(|s| s.counted(s.write_bytes)).sum()
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

    /// Other processes' bytes on every traced device, as a total counts them: (read, written).
    pub fn others_total(&self) -> (u64, u64) {
        self.submitters
            .iter()
            .filter(|s| s.who == Who::Other)
            .fold((0, 0), |(r, w), s| {
                (r + s.counted(s.read_bytes), w + s.counted(s.write_bytes))
            })
    }

    /// The rows on `device`: on it, or on a partition of it (a disk's diskstats count its
    /// partitions' I/O).
    fn on<'a>(&'a self, device: &'a str) -> impl Iterator<Item = &'a SubmitterIo> {
        self.submitters
            .iter()
            .filter(move |s| s.device == device || s.disk.as_deref() == Some(device))
    }
}

/// Submitters by the bytes they moved, most first.
fn most_first(subs: &mut [SubmitterIo]) {
    subs.sort_by(|a, b| {
        (b.read_bytes + b.write_bytes)
            .cmp(&(a.read_bytes + a.write_bytes))
            .then(a.pid.cmp(&b.pid))
    });
}

/// Scales the figure `of` of the submitters `on` a device so that, as totals count them, they
/// add up to `total` ([`TraceSummary::fit_to_counters`]). Those there for less than the windows'
/// period keep the figures they were seen with (each counts for those like it unseen, by its
/// weight); the rest of the total goes to those there for longer, by their shares in the
/// windows. Where short ones share the device, a rest of less than half or more than twice what
/// the windows gave the long ones says the short ones' count was off, and nothing is changed.
fn fit(
    subs: &mut [SubmitterIo],
    on: impl Fn(&SubmitterIo) -> bool,
    total: u64,
    of: impl Fn(&mut SubmitterIo) -> &mut u64,
) {
    let (mut short, mut long, mut any_short) = (0u64, 0u64, false);
    for s in subs.iter_mut().filter(|s| on(s)) {
        let n = *of(s);
        if s.weight > 1.0 {
            (short, any_short) = (short + s.counted(n), true);
        } else {
            long += n;
        }
    }
    if long == 0 || total == 0 || total <= short {
        return;
    }
    let k = (total - short) as f64 / long as f64;
    if any_short && !(0.5..=2.0).contains(&k) {
        return;
    }
    for s in subs.iter_mut().filter(|s| on(s) && s.weight <= 1.0) {
        let n = of(s);
        *n = (*n as f64 * k).round() as u64;
    }
}

/// Each submitter's flushes scaled as [`fit`] scaled its writes (from `before`, in the same
/// order): a process's flushes go with its writes, as many a written byte as the windows saw.
/// Not fitted to the flushes diskstats counts: the kernel merges flushes sent together into one
/// request, so a flush-heavy neighbour's merging would come off the others' counts.
fn flushes_follow_writes(subs: &mut [SubmitterIo], before: &[u64]) {
    for (s, &b) in subs.iter_mut().zip(before) {
        if b > 0 && s.write_bytes != b {
            s.flushes = (s.flushes as f64 * s.write_bytes as f64 / b as f64).round() as u64;
        }
    }
}

/// A submitter's figures in windows, made to speak for its time in the run: multiplied by that
/// time over the windows' part of it (from when it began, or the trace did, to when it ended,
/// or the trace did). Shares among those there all along stay as the windows saw them; one that
/// was there for a second of ten is not taken for ten seconds' worth. (The test's own measured
/// bytes would give another factor: docs/architecture.md says why not.) One there for less
/// than the windows' period had a chance of (its time and a window's) over the period to be
/// seen at all: in a total it stands for the inverse of that many like it (a shell loop of
/// 0.1 s dds, a fifth of them seen).
fn scale(s: &mut SubmitterIo, r: &Row, c: &Coverage) {
    let from = r.began_ns.unwrap_or(c.start_ns).max(c.start_ns);
    let to = r.ended_ns.unwrap_or(c.end_ns).min(c.end_ns);
    let Some(factor) = c.factor(from, to) else {
        return;
    };
    // There all along (it began and ended outside the trace): it was seen for sure. Otherwise
    // its chance, against the windows' period (or the trace's length, when shorter: a trace of
    // one window).
    if r.began_ns.is_some_and(|b| b > c.start_ns) || r.ended_ns.is_some_and(|e| e < c.end_ns) {
        let window = c.traced() / c.windows().max(1) as f64;
        let period = crate::trace::WINDOW_EVERY.as_secs_f64().min(c.total());
        let lived = to.saturating_sub(from) as f64 / 1e9;
        s.weight = (period / (lived + window)).max(1.0);
    }
    let times = |n: &mut u64| *n = (*n as f64 * factor).round() as u64;
    times(&mut s.read_bytes);
    times(&mut s.write_bytes);
    times(&mut s.ios);
    times(&mut s.flushes);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{Moved, Submitter};

    const SECOND: u64 = 1_000_000_000;

    /// Ten windows of 0.1 s, one a second, over 10 s; the first and every fourth after it
    /// timed the test's I/Os, as the reader opens them.
    fn ten_windows() -> Coverage {
        let s = SECOND;
        Coverage {
            windowed: true,
            start_ns: 0,
            end_ns: 10 * s,
            windows_ns: (0..10).map(|i| (i * s, i * s + s / 10)).collect(),
            timed: (0..10)
                .map(|i| i % crate::trace::TIMED_EVERY == 0)
                .collect(),
            read_as: "pages",
        }
    }

    #[test]
    fn the_summary_says_how_long_the_tests_ios_were_timed_in_windows() {
        let c = ten_windows();
        assert_eq!(
            c.timed_windows(),
            vec![
                (0, SECOND / 10),
                (4 * SECOND, 4 * SECOND + SECOND / 10),
                (8 * SECOND, 8 * SECOND + SECOND / 10)
            ]
        );
        let s = TraceSummary::of_rows(&[], 1, &c, 100, 0);
        let why = s.why.clone().unwrap_or_default();
        println!("{why}");
        assert_eq!((s.seconds, s.timed_seconds), (1.0, Some(0.3)), "{s:?}");
        assert!(why.contains("(1.00 s of 10.00 s; the test's I/Os timed in 0.30 s of them"));
        // One window: one window.
        let one = Coverage {
            windows_ns: vec![(0, SECOND / 10)],
            timed: vec![true],
            end_ns: SECOND / 2,
            ..c.clone()
        };
        let why = TraceSummary::of_rows(&[], 1, &one, 100, 0).why.unwrap();
        assert!(
            why.contains("traced in 1 window of up to 0.25 s, one every 1 s (0.10 s of 0.50 s;"),
            "{why}"
        );
        // Traced throughout: no such figure.
        let whole = Coverage {
            windows_ns: vec![(0, 10 * SECOND)],
            timed: vec![true],
            windowed: false,
            ..c
        };
        assert_eq!(
            TraceSummary::of_rows(&[], 1, &whole, 100, 0).timed_seconds,
            None
        );
    }

    /// Ten windows of 0.1 s, one a second, over 10 s: a process there all along is scaled by
    /// ten; one there for 0.2 s of it, seen in one window for 0.1 s, by two, and in a total it
    /// stands for the 3.3 like it that windows a second apart would have seen one of.
    #[test]
    fn windows_scale_each_process_by_its_own_time_and_totals_by_its_chance_to_be_seen() {
        let (s, c) = (SECOND, ten_windows());
        let row = |pid: u32, bytes: u64, life: Option<(u64, u64)>| Row {
            device: "loop0".into(),
            disk: None,
            file: None,
            who: Submitter(pid),
            moved: Moved {
                comm: "p".into(),
                read_bytes: bytes,
                ..Moved::default()
            },
            began_ns: life.map(|l| l.0),
            ended_ns: life.map(|l| l.1),
        };
        let rows = [
            row(500, 100 << 20, None),
            row(900, 10 << 20, None),
            row(901, 10 << 20, Some((3 * s - s / 10, 3 * s + s / 10))),
        ];
        let t = TraceSummary::of_rows(&rows, 500, &c, 0, 0);
        let by = |pid: u32| t.submitters.iter().find(|x| x.pid == pid).unwrap();
        println!("{:?}", t.submitters);
        assert_eq!(by(500).read_bytes, 1000 << 20);
        assert_eq!((by(900).read_bytes, by(900).weight), (100 << 20, 1.0));
        assert_eq!(
            by(901).read_bytes,
            20 << 20,
            "its 0.2 s, not the run's 10 s"
        );
        assert!(
            (by(901).weight - 1.0 / 0.3).abs() < 1e-9,
            "{}",
            by(901).weight
        );
        let (read, _) = t.others_total();
        let expect = (100u64 << 20) + ((20u64 << 20) as f64 / 0.3).round() as u64;
        assert_eq!(read, expect);
        assert_eq!(t.scaled_by, Some(10.0));
        assert_eq!(c.factor(0, 10 * s), Some(10.0));
        assert_eq!(c.factor(s / 2, s - 1), None, "no window between them");
    }

    /// The windows say who moved what share; diskstats how much in all. The test's reads and
    /// a neighbour's writes on loop0, a short reader there counted for three like it, and the
    /// file below untouched (the disk's counters hold the rest of the disk).
    #[test]
    fn the_windows_shares_add_up_to_what_the_devices_counters_say() {
        let c = ten_windows();
        let row = |pid: u32, (r, w): (u64, u64), file: bool| Row {
            device: if file { "vda" } else { "loop0" }.into(),
            disk: None,
            file: file.then(|| FileOf {
                loop_device: "loop0".into(),
                file: "/f".into(),
            }),
            who: Submitter(pid),
            moved: Moved {
                comm: "p".into(),
                read_bytes: r,
                write_bytes: w,
                ..Moved::default()
            },
            began_ns: None,
            ended_ns: None,
        };
        let rows = [
            row(500, (30, 0), false),
            row(900, (0, 5), false),
            row(901, (10, 0), false),
            row(902, (7, 7), true),
        ];
        let mut t = TraceSummary::of_rows(&rows, 500, &c, 0, 0);
        t.submitters
            .iter_mut()
            .find(|x| x.pid == 901)
            .unwrap()
            .weight = 3.0;
        let on = |n: &str, r: u64, w: u64| DeviceBytes {
            device: n.into(),
            read_bytes: r,
            write_bytes: w,
        };
        t.fit_to_counters(
            &[on("loop0", 750, 80), on("vda", 1_000_000, 1_000_000)],
            None,
        );
        let by = |t: &TraceSummary, pid: u32| {
            let x = t.submitters.iter().find(|x| x.pid == pid).unwrap();
            (x.read_bytes, x.write_bytes)
        };
        println!("{:?}", t.submitters);
        // Seen in the windows (times ten): the test 300, the short reader 100 counted three
        // times; of diskstats' 750, the test's the 450 that the short one leaves.
        assert_eq!(by(&t, 500), (450, 0));
        assert_eq!(by(&t, 901), (100, 0), "the short one as it was seen");
        assert_eq!(
            by(&t, 900),
            (0, 80),
            "the only writer: all of the device's writes"
        );
        assert_eq!(
            by(&t, 902),
            (70, 70),
            "the file below: as the windows' time made it"
        );
        // A direction the counters saw none of is left as it was.
        t.fit_to_counters(&[on("loop0", 0, 0)], None);
        assert_eq!((by(&t, 500), by(&t, 900)), ((450, 0), (0, 80)));
        // A rest beyond twice the long ones' with a short one beside them: its count was off
        // (an unseen burst between the windows), and the figures stay.
        t.fit_to_counters(&[on("loop0", 300 + 1000, 80)], None);
        assert_eq!(by(&t, 500), (450, 0));
        t.fit_to_counters(&[on("loop0", 300 + 810, 80)], None);
        assert_eq!(by(&t, 500), (810, 0));
    }

    /// A window that closed before the test's first write saw only a neighbour writing 4K
    /// blocks with O_DSYNC: the device's writes less the test's own (its O_DSYNC writes are its
    /// bios) are the neighbour's, with its flushes, not all of them (it was given the test's
    /// 64M, and 15594 flushes, in a run of tests/trace.rs). Where the windows saw the test
    /// write, the shares stand.
    #[test]
    fn a_test_the_windows_missed_keeps_its_bytes_from_the_neighbour() {
        let c = ten_windows();
        let row = |pid: u32, w: u64, flushes: u64| Row {
            device: "loop1".into(),
            disk: None,
            file: None,
            who: Submitter(pid),
            moved: Moved {
                comm: "dd".into(),
                write_bytes: w,
                ios: flushes,
                flushes,
                ..Moved::default()
            },
            began_ns: None,
            ended_ns: None,
        };
        let counted = [DeviceBytes {
            device: "loop1".into(),
            read_bytes: 0,
            write_bytes: (64 << 20) + (1 << 20),
        }];
        let job = Job {
            mode: Mode::Dsync,
            ..Job::default()
        };
        let own = OwnBytes::of(&job, "loop1", 0, 64 << 20);
        let writes = |t: &TraceSummary, pid: u32| {
            let x = t.submitters.iter().find(|x| x.pid == pid);
            x.map(|x| (x.write_bytes, x.flushes))
        };
        // Seen for a tenth of the run: 25 of the neighbour's 4K writes, 250 by time.
        let mut t = TraceSummary::of_rows(&[row(900, 25 * 4096, 25)], 500, &c, 0, 0);
        t.fit_to_counters(&counted, Some(&own));
        println!("{:?}", t.submitters);
        assert_eq!(writes(&t, 900), Some((1 << 20, 256)), "the neighbour's 1M");
        // Without the test's count it took the test's bytes.
        let mut t = TraceSummary::of_rows(&[row(900, 25 * 4096, 25)], 500, &c, 0, 0);
        t.fit_to_counters(&counted, None);
        assert_eq!(writes(&t, 900), Some(((64 << 20) + (1 << 20), 16640)));
        // Seen writing, the test keeps its share of the counters' writes.
        let rows = [row(500, 64 << 16, 1), row(900, 25 * 4096, 25)];
        let mut t = TraceSummary::of_rows(&rows, 500, &c, 0, 0);
        t.fit_to_counters(&counted, Some(&own));
        let (test, nb) = (writes(&t, 500).unwrap().0, writes(&t, 900).unwrap().0);
        println!("test {test}, neighbour {nb}");
        assert_eq!(test + nb, (64 << 20) + (1 << 20));
        assert!(test > 40 << 20, "{test}");
        // Buffered writes reach the device as the kernel's: the test's count is not its bios.
        let job = Job {
            mode: Mode::Buffered,
            ..Job::default()
        };
        assert_eq!(OwnBytes::of(&job, "loop1", 0, 64 << 20).write_bytes, None);
    }

    /// Where there is no split, the summary says why: events dropped, or a device that makes
    /// no requests of the test's I/O (zram: its bios are never issued as requests).
    #[test]
    fn no_split_says_why() {
        let c = Coverage {
            windows_ns: vec![(0, 0)],
            ..Coverage::default()
        };
        let zram = Row {
            device: "zram0".into(),
            disk: None,
            file: None,
            who: Submitter(500),
            moved: Moved {
                comm: "blkscope".into(),
                ..Moved::default()
            },
            began_ns: None,
            ended_ns: None,
        };
        let mut t = TraceSummary::of_rows(std::slice::from_ref(&zram), 500, &c, 3, 0);
        println!("{}", t.no_split());
        assert!(t.no_split().contains("bio-based driver such as zram"));
        t.lost = 7;
        assert!(t.no_split().starts_with("the kernel dropped 7 events"));
    }
}
