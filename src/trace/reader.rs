//! The thread that reads a trace while the test runs: throughout when events come slowly
//! enough, in windows spread over the run when they come faster than a trace may cost.
//!
//! A window is open until it holds more events than [`super::MAX_EVENTS_PER_SEC`] allows for
//! [`WINDOW_EVERY`] and they came faster than that rate, or until it is [`SAMPLE_FOR`] old; then
//! the events are turned off (not only the recording: an enabled tracepoint costs even
//! unrecorded), the window's events are read, and the next window opens [`WINDOW_EVERY`] after
//! this one did. Every window counts the test and the others alike, so their shares hold for
//! the whole run, and a neighbour that starts in the middle is in the windows after it started.
//! Some windows also time the test's I/Os (all three block events on: [`times_ios`]); the
//! others have `block_bio_queue` alone, enough to say who queued what, and hold as many fewer
//! events as their I/Os make.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::counted::{Counted, DeviceBytes};
use super::programs::Programs;
use super::raw::{Item, Pipes};
use super::tally::Tally;
use super::text::Text;
use super::{EVENTS, Live, LiveView, SAMPLE_FOR, max_events_per_sec};

/// How often a window opens once the trace is kept in windows.
pub const WINDOW_EVERY: Duration = Duration::from_secs(1);

/// Every this many windows one has all three block events on and times the test's I/Os (the
/// first, then the fifth, ...); the others have only `block_bio_queue`: who moved what on each
/// device, at a third of the events an I/O on a device that makes requests (a window that
/// costs as much sees three times its I/Os), at about half the reader's CPU an event.
pub const TIMED_EVERY: usize = 4;

/// Windows time the test's I/Os until they have done so this long: a fast test's window holds
/// its events for 20 ms, and one window's split then stands on a few thousand I/Os of one
/// moment (a scheduler's Q2D, tests/trace.rs, came out 34 us in one run and 6 us in the next).
pub const TIMED_AT_LEAST: Duration = Duration::from_millis(100);

/// How often an open window's events are counted (the kernel's per-CPU counts, not the text).
const CHECK_EVERY: Duration = Duration::from_millis(10);

/// How a trace was kept: throughout, or in windows.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Coverage {
    /// Kept in windows, because events came faster than [`super::MAX_EVENTS_PER_SEC`].
    pub windowed: bool,
    /// The trace's start and end, and each window's (ns of the trace's clock, monotonic): a
    /// process that was there for part of the run is scaled by the windows of its own time.
    pub start_ns: u64,
    pub end_ns: u64,
    pub windows_ns: Vec<(u64, u64)>,
    /// Which of `windows_ns` had all three block events on, so that the test's I/Os were timed
    /// in them (the split, the steps: `times_ios`); the others had `block_bio_queue` only
    /// (who moved what). One missing is taken as timed.
    pub timed: Vec<bool>,
    /// How the events were read: `pages` (the ring buffer's, `raw`) or `text` (the kernel's
    /// printing of them).
    pub read_as: &'static str,
}

impl Coverage {
    /// The windows the events were on in (1 when they were on throughout).
    pub fn windows(&self) -> u32 {
        self.windows_ns.len() as u32
    }

    /// Seconds the events were on, over all windows.
    pub fn traced(&self) -> f64 {
        let ns: u64 = self
            .windows_ns
            .iter()
            .map(|&(a, b)| b.saturating_sub(a))
            .sum();
        ns as f64 / 1e9
    }

    /// The windows in which the test's I/Os were timed.
    pub fn timed_windows(&self) -> Vec<(u64, u64)> {
        (self.windows_ns.iter().enumerate())
            .filter(|(i, _)| self.timed.get(*i).copied().unwrap_or(true))
            .map(|(_, w)| *w)
            .collect()
    }

    /// Seconds of the windows in which the test's I/Os were timed.
    pub fn timed_seconds(&self) -> f64 {
        let ns: u64 = (self.timed_windows().iter())
            .map(|&(a, b)| b.saturating_sub(a))
            .sum();
        ns as f64 / 1e9
    }

    /// Whether the open window (else the last) times the test's I/Os.
    fn last_timed(&self) -> bool {
        self.timed.last().copied().unwrap_or(true)
    }

    /// Seconds from the trace's start to its end.
    pub fn total(&self) -> f64 {
        self.end_ns.saturating_sub(self.start_ns) as f64 / 1e9
    }

    /// When the open window opened (None between windows).
    fn open_since(&self) -> Option<u64> {
        self.windows_ns.last().filter(|w| w.1 == 0).map(|w| w.0)
    }

    /// The open window ends at `ns`.
    fn end_window(&mut self, ns: u64) {
        if let Some(w) = self.windows_ns.last_mut().filter(|w| w.1 == 0) {
            w.1 = ns;
        }
    }

    /// What the windows saw of the time from `from` to `to` multiplies into the whole of it:
    /// that time over the windows' part of it (None where no window fell in it).
    pub fn factor(&self, from: u64, to: u64) -> Option<f64> {
        let (from, to) = (from.max(self.start_ns), to.min(self.end_ns));
        let seen: u64 = self
            .windows_ns
            .iter()
            .map(|&(a, b)| b.min(to).saturating_sub(a.max(from)))
            .sum();
        (to > from && seen > 0).then(|| (to - from) as f64 / seen as f64)
    }
}

/// What the tracer tells its reader while the trace runs: to stop, and when the run is
/// planned to end (ns of the monotonic clock; 0 while unknown), so that no window opens that
/// could not fill before it.
#[derive(Debug, Default)]
pub struct Control {
    pub stop: AtomicBool,
    pub ends_ns: AtomicU64,
}

/// What the reader hands back: the tally, how it was kept, the events the kernel lost.
pub struct Kept {
    pub tally: Tally,
    pub coverage: Coverage,
    pub lost: u64,
    pub device_bytes: Vec<DeviceBytes>,
    /// The reader thread's CPU time, start to end (ns): its parsing, its wakes, its turning the
    /// events on and off (the events' recording is in the threads that caused them).
    pub reader_cpu_ns: u64,
}

/// Where the events are read from: BPF programs' ring (`programs`), or a tracefs instance's
/// pages for each CPU (`raw`), or its text where the pages cannot be read as `raw` expects.
pub enum Source {
    Programs(Box<Programs>),
    Raw(Box<Pipes>),
    Text(Text),
}

/// The reader's state between its wakes.
struct Reader<'a> {
    source: Source,
    dir: PathBuf,
    stats: Stats,
    switches: Switches,
    live: &'a Live,
    names: &'a [((u32, u32), String)],
    tally: Tally,
    /// The devices' diskstats since the trace began, for a trace kept in windows.
    counted: Counted,
    lost: u64,
    started: Instant,
    /// When the trace was last read to its end.
    drained_at: Instant,
    coverage: Coverage,
    max_rate: f64,
    /// How long the next window should take to hold a window's events, at the last one's rate.
    filled_in: Duration,
    /// The events read before the open window opened.
    events_at_open: u64,
    /// Events an I/O to one of them that queues its bio, as the first window saw them: a window
    /// with `block_bio_queue` only may hold this many times fewer events for the same I/Os.
    per_bio: f64,
}

/// Reads `source` of the instance at `dir` until told to stop, then what is left.
pub fn read_pipe(
    source: Source,
    dir: &Path,
    control: &Control,
    live: &Live,
    names: &[((u32, u32), String)],
    tally: Tally,
    counted: Counted,
) -> Kept {
    let now = Instant::now();
    let read_as = match source {
        Source::Programs(_) => "bpf",
        Source::Raw(_) => "pages",
        Source::Text(_) => "text",
    };
    // The programs have their own count and switch; an instance's are files.
    let (stats, switches) = match source {
        Source::Programs(_) => (Stats(Vec::new()), Switches(Vec::new())),
        _ => (Stats::open(dir), Switches::open(dir)),
    };
    let mut r = Reader {
        source,
        dir: dir.to_path_buf(),
        stats,
        switches,
        live,
        names,
        tally,
        counted,
        lost: 0,
        started: now,
        drained_at: now,
        coverage: {
            let ns = crate::sys::monotonic_ns();
            Coverage {
                start_ns: ns,
                windows_ns: vec![(ns, 0)],
                timed: vec![true],
                read_as,
                ..Coverage::default()
            }
        },
        max_rate: max_events_per_sec(),
        filled_in: CHECK_EVERY,
        events_at_open: 0,
        per_bio: 1.0,
    };
    let mut next = now + CHECK_EVERY;
    while !control.stop.load(Ordering::Relaxed) {
        // Asleep until the next wake, or until the tracer stops it (it unparks this thread):
        // a wake costs the test's machine a context switch and a timer, so there are no more
        // than the windows need.
        let wait = next.saturating_duration_since(Instant::now());
        if !wait.is_zero() {
            std::thread::park_timeout(wait);
            continue;
        }
        next = match r.wake(control.ends_ns.load(Ordering::Relaxed)) {
            Ok(after) => Instant::now() + after,
            Err(_) => break,
        };
    }
    r.finish()
}

impl Reader<'_> {
    /// One wake: close, open or read, and how long until the next; `ends_ns`: when the run is
    /// planned to end (0: not known).
    fn wake(&mut self, ends_ns: u64) -> io::Result<Duration> {
        let now = Instant::now();
        let Some(since) = self.coverage.open_since() else {
            // Between windows: the next opens WINDOW_EVERY after the last one did, and is
            // first looked at when the last one had filled; none opens that the run's end
            // would cut short of filling.
            if ends_before_filling(ends_ns, crate::sys::monotonic_ns(), self.filled_in) {
                return Ok(WINDOW_EVERY);
            }
            self.open_window();
            return Ok(self.filled_in.clamp(CHECK_EVERY, SAMPLE_FOR));
        };
        let age = Duration::from_nanos(crate::sys::monotonic_ns().saturating_sub(since));
        let budget = self.budget();
        if self.too_fast(now, budget) || self.coverage.windowed && age >= SAMPLE_FOR {
            self.close_window();
            self.drain(usize::MAX)?;
            if self.coverage.windows_ns.len() == 1 {
                let queues = self.tally.queues.max(1) as f64;
                self.per_bio = (self.tally.events as f64 / queues).max(1.0);
            }
            // At this window's rate the next one holds a window's events in this long (its
            // age is when it was looked at, later than it filled: taken as it is, each window
            // would be looked at first no sooner than the last, and a slow one would hold
            // every later one open as long).
            let held = self.tally.events.saturating_sub(self.events_at_open).max(1) as f64;
            self.filled_in = age.mul_f64((budget / held).min(1.0));
            self.publish();
            let next = since + WINDOW_EVERY.as_nanos() as u64;
            return Ok(Duration::from_nanos(
                next.saturating_sub(crate::sys::monotonic_ns()),
            ));
        }
        if self.coverage.windowed || now.duration_since(self.started) < SAMPLE_FOR {
            return Ok(CHECK_EVERY);
        }
        // Throughout, the trace is read after SAMPLE_FOR and then once a second: a thread that
        // parses while the test runs takes a CPU from it. At most a wake's worth: a reader
        // slower than the events (a debug build at 50000 a second) still hands out the split
        // so far; what it leaves waits in the kernel's buffer.
        let more = self.drain(DRAIN_PER_WAKE)?;
        self.publish();
        Ok(if more {
            Duration::from_millis(20)
        } else {
            Duration::from_secs(1)
        })
    }

    /// Whether the events held since the last read are more than a window may keep (a second's
    /// worth at the most a trace may cost, so that windows one a second cost that on average),
    /// and came faster than that (judged by the kernel's own count: parsing them to know would
    /// take a CPU from the test). While the trace is on throughout, from [`SAMPLE_FOR`] on,
    /// their rate alone: a first window held until it had a second's events kept 1.25 s of a
    /// test at 10-40K events a second, most of what a trace of a 3 s test cost.
    fn too_fast(&self, now: Instant, budget: f64) -> bool {
        let held = self.buffered() as f64;
        let seconds = now.duration_since(self.drained_at).as_secs_f64();
        let rate = held / seconds;
        if !self.coverage.windowed && now.duration_since(self.started) >= SAMPLE_FOR {
            return rate > self.max_rate;
        }
        held > budget && rate > budget / WINDOW_EVERY.as_secs_f64()
    }

    /// The events the open window may hold: a second's at the most a trace may cost, and for a
    /// window with `block_bio_queue` only, as many fewer as its I/Os make fewer events.
    fn budget(&self) -> f64 {
        let full = self.max_rate * WINDOW_EVERY.as_secs_f64();
        if self.coverage.last_timed() {
            full
        } else {
            full / self.per_bio
        }
    }

    /// Turns the events off: the window is over, and the trace is kept in windows from now on.
    /// Each event's own file: the block system's walks every event the kernel has.
    fn close_window(&mut self) {
        self.coverage.end_window(crate::sys::monotonic_ns());
        self.switch(EVENTS.len(), false);
        self.coverage.windowed = true;
    }

    /// Turns the events on for a new window; bios left open by the last one are forgotten
    /// (their later events would be matched across the gap).
    fn open_window(&mut self) {
        let timed = times_ios(
            self.coverage.windows_ns.len(),
            self.coverage.timed_seconds(),
        );
        let on = if timed { EVENTS.len() } else { 1 };
        self.tally.forget_open(!timed);
        self.events_at_open = self.tally.events;
        if self.switch(on, true) {
            self.coverage
                .windows_ns
                .push((crate::sys::monotonic_ns(), 0));
            self.coverage.timed.push(timed);
        }
    }

    /// Reads what the pipe holds now (at most about `limit` bytes) into the tally; true when it
    /// stopped at the limit with more to read.
    fn drain(&mut self, limit: usize) -> io::Result<bool> {
        let more = match &mut self.source {
            Source::Programs(p) => {
                let tally = &mut self.tally;
                let (lost, more) = p.drain(limit, |item| match item {
                    Item::Io(e) => tally.add(&e),
                    Item::Life(l) => tally.life(l),
                });
                self.lost += lost;
                more
            }
            Source::Raw(pipes) => {
                let tally = &mut self.tally;
                let (lost, more) = pipes.drain(limit, |item| match item {
                    Item::Io(e) => tally.add(&e),
                    Item::Life(l) => tally.life(l),
                })?;
                self.lost += lost;
                more
            }
            Source::Text(text) => text.drain(limit, &mut self.tally, &mut self.lost)?,
        };
        if !more {
            self.drained_at = Instant::now();
        }
        Ok(more)
    }

    /// Events the kernel holds that the reader has not read.
    fn buffered(&self) -> u64 {
        match &self.source {
            Source::Programs(p) => p.held(),
            _ => self.stats.buffered(),
        }
    }

    /// Turns the first `n` block events on or off; whether each took it.
    fn switch(&mut self, n: usize, on: bool) -> bool {
        match &mut self.source {
            Source::Programs(p) => p.set(n, on),
            _ => self.switches.set(n, on),
        }
    }

    fn publish(&self) {
        let mut view = live_view(&self.tally, self.names);
        view.coverage = self.coverage_now();
        view.lost = self.lost;
        view.device_bytes = self.device_bytes();
        if let Ok(mut l) = self.live.lock() {
            *l = view;
        }
    }

    /// How the trace has been kept so far.
    fn coverage_now(&self) -> Coverage {
        let mut c = self.coverage.clone();
        let now = crate::sys::monotonic_ns();
        c.end_ns = now;
        c.end_window(now);
        c
    }

    /// The trace is over: the open window closes, what is left is read.
    fn finish(mut self) -> Kept {
        match &mut self.source {
            Source::Programs(p) => p.off(),
            _ => {
                let _ = fs::write(self.dir.join("tracing_on"), "0");
            }
        }
        let now = crate::sys::monotonic_ns();
        self.coverage.end_window(now);
        self.coverage.end_ns = now;
        let device_bytes = self.device_bytes();
        let _ = self.drain(usize::MAX);
        Kept {
            reader_cpu_ns: crate::sys::thread_cpu_ns(),
            device_bytes,
            tally: self.tally,
            coverage: self.coverage,
            lost: self.lost,
        }
    }

    /// What diskstats says the devices moved so far, where the trace is kept in windows.
    fn device_bytes(&self) -> Vec<DeviceBytes> {
        if self.coverage.windowed {
            self.counted.so_far()
        } else {
            Vec::new()
        }
    }
}

/// The trace so far: the test's median split, and everyone's bytes for the analysis so far.
fn live_view(tally: &Tally, names: &[((u32, u32), String)]) -> LiveView {
    let split = (!tally.q2d.is_empty() && !tally.d2c.is_empty()).then(|| {
        (
            tally.q2d.value_at_quantile(0.5),
            tally.d2c.value_at_quantile(0.5),
        )
    });
    LiveView {
        split,
        rows: tally.rows(names),
        own: tally.own(),
        events: tally.events,
        stepped: std::sync::Arc::new(tally.stepped.clone()),
        ..LiveView::default()
    }
}

/// Whether a run planned to end at `ends_ns` (0: not known) ends before a window opened at
/// `now_ns` would hold its events, `filled_in` at the last window's rate: such a window costs
/// its events' turning on and off (a third of the reader's CPU in a fast 3 s run) for a
/// sliver of the run.
fn ends_before_filling(ends_ns: u64, now_ns: u64, filled_in: Duration) -> bool {
    ends_ns != 0 && ends_ns.saturating_sub(now_ns) < filled_in.as_nanos() as u64
}

/// Whether the `n`th window (from 0) times the test's I/Os (all three block events on), the
/// windows before it having timed them for `timed` seconds: every [`TIMED_EVERY`]th, and each
/// until they have been timed for [`TIMED_AT_LEAST`].
fn times_ios(n: usize, timed: f64) -> bool {
    n.is_multiple_of(TIMED_EVERY) || timed < TIMED_AT_LEAST.as_secs_f64()
}

/// Each CPU's `stats` of the instance, held open: the kernel writes them anew at each read
/// from the start, and an open at every look (with the directory read to find them) cost the
/// reader 65-90 us a look, ten looks a window (docs/architecture.md).
struct Stats(Vec<fs::File>);

impl Stats {
    fn open(dir: &Path) -> Stats {
        let mut cpus: Vec<PathBuf> = fs::read_dir(dir.join("per_cpu"))
            .map(|d| d.flatten().map(|c| c.path().join("stats")).collect())
            .unwrap_or_default();
        cpus.sort();
        Stats(cpus.iter().filter_map(|p| fs::File::open(p).ok()).collect())
    }

    /// Events the instance's buffers hold now (not yet read), over its CPUs.
    fn buffered(&self) -> u64 {
        use std::os::unix::fs::FileExt;
        let mut buf = [0u8; 1024];
        self.0
            .iter()
            .filter_map(|f| {
                let n = f.read_at(&mut buf, 0).ok()?;
                Some(entries(&buf[..n]))
            })
            .sum()
    }
}

/// The block events' `enable` files, [`EVENTS`]' order, held open: a window turns its events
/// on and off through them (a write by path walked tracefs to each file at every window).
struct Switches(Vec<io::Result<fs::File>>);

impl Switches {
    fn open(dir: &Path) -> Switches {
        let open = |e: &str| {
            let path = dir.join(format!("events/block/{e}/enable"));
            fs::OpenOptions::new().write(true).open(path)
        };
        Switches(EVENTS.iter().map(|e| open(e)).collect())
    }

    /// Turns the first `n` events on or off; whether each of them took it.
    fn set(&self, n: usize, on: bool) -> bool {
        use std::os::unix::fs::FileExt;
        let value: &[u8] = if on { b"1" } else { b"0" };
        // Every one is written, also after one that failed (a window's end turns all off).
        let took: Vec<bool> = (self.0.iter().take(n))
            .map(|f| f.as_ref().is_ok_and(|f| f.write_at(value, 0).is_ok()))
            .collect();
        took.iter().all(|&ok| ok)
    }
}

/// The `entries:` of a CPU's `stats`.
fn entries(stats: &[u8]) -> u64 {
    String::from_utf8_lossy(stats)
        .lines()
        .filter_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == "entries").then(|| v.trim().parse::<u64>().ok())?
        })
        .sum()
}

/// The most a reader takes from the pipe at one wake while the trace runs (text, about 100000
/// events).
const DRAIN_PER_WAKE: usize = 8 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_window_and_every_fourth_after_it_time_the_tests_ios() {
        // After a first window of a quarter second.
        let kinds: Vec<bool> = (0..9).map(|n| times_ios(n, 0.25)).collect();
        let (t, f) = (true, false);
        assert_eq!(kinds, [t, f, f, f, t, f, f, f, t]);
        // After windows of 20 ms: until they have timed 0.1 s.
        let kinds: Vec<bool> = (0..9).map(|n| times_ios(n, n as f64 * 0.02)).collect();
        assert_eq!(kinds, [t, t, t, t, t, f, f, f, t]);
    }

    #[test]
    fn no_window_opens_that_the_runs_end_would_cut_short_of_filling() {
        let ms = Duration::from_millis;
        let at = 3_000_000_000;
        // A fast test's windows fill in 30 ms: none opens 6 ms before the end, one 31 ms before.
        let cases = [
            (at + 6_000_000, ms(30), true),
            (at + 31_000_000, ms(30), false),
            // Past the planned end (the run overran it), and an end not known.
            (at - 1, ms(30), true),
            (0, ms(30), false),
        ];
        for (ends, filled_in, skipped) in cases {
            let got = ends_before_filling(ends, at, filled_in);
            println!("ends {ends} ns, now {at} ns, fills in {filled_in:?}: skipped {got}");
            assert_eq!(got, skipped);
        }
    }

    #[test]
    fn a_windows_events_are_turned_on_and_off_through_their_files_held_open() {
        let dir = tempfile::tempdir().unwrap();
        let file = |e: &str| dir.path().join(format!("events/block/{e}/enable"));
        for e in EVENTS {
            fs::create_dir_all(file(e).parent().unwrap()).unwrap();
            fs::write(file(e), "0").unwrap();
        }
        let switches = Switches::open(dir.path());
        let read = || EVENTS.map(|e| fs::read_to_string(file(e)).unwrap());
        // A light window: `block_bio_queue` alone; then a timed one, and its end.
        assert!(switches.set(1, true));
        println!("light window: {:?}", read());
        assert_eq!(read(), ["1", "0", "0"]);
        assert!(switches.set(EVENTS.len(), true));
        println!("timed window: {:?}", read());
        assert_eq!(read(), ["1", "1", "1"]);
        assert!(switches.set(EVENTS.len(), false));
        println!("between windows: {:?}", read());
        assert_eq!(read(), ["0", "0", "0"]);
        // An event whose file is not there: the window is not taken as opened.
        fs::remove_file(file(EVENTS[2])).unwrap();
        let switches = Switches::open(dir.path());
        assert!(switches.set(1, true) && !switches.set(EVENTS.len(), true));
    }

    #[test]
    fn a_cpus_stats_give_the_events_its_buffer_holds() {
        // A CPU's `stats` as 6.18 writes it.
        let stats = b"entries: 4211\noverrun: 0\ncommit overrun: 0\nbytes: 241216\n\
            oldest event ts: 65520.100000\nnow ts: 65520.738718\ndropped events: 0\n\
            read events: 17\n";
        assert_eq!(entries(stats), 4211);
        assert_eq!(entries(b"overrun: 3\n"), 0);
    }

    #[test]
    fn stats_held_open_are_read_anew_from_the_start() {
        // A file written after it was opened: each look reads what it says now.
        let dir = tempfile::tempdir().unwrap();
        let cpu = dir.path().join("per_cpu/cpu0");
        fs::create_dir_all(&cpu).unwrap();
        fs::write(cpu.join("stats"), "entries: 5\n").unwrap();
        let stats = Stats::open(dir.path());
        assert_eq!(stats.buffered(), 5);
        fs::write(cpu.join("stats"), "entries: 12\nbytes: 9\n").unwrap();
        assert_eq!(stats.buffered(), 12);
    }
}
