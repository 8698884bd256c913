//! The block layer's own tracepoints, read while a test runs: who did each I/O on the devices
//! under the test (the test, the kernel, or another process, by pid), and where the test's
//! I/Os spent their time (queue to issue, issue to completion). /proc/PID/io cannot tie bytes
//! to a device and /proc/diskstats cannot tie them to a process; `block:block_bio_queue`,
//! `block_rq_issue` and `block_rq_complete` carry both.
//!
//! A tracefs instance of blkscope's own (`instances/blkscope-PID`, tracefs mounted if nothing
//! had), filtered to the devices of the target's tree, so that nothing else that traces is
//! disturbed; no BPF, no daemon. The instance is removed when the [`Tracer`] is dropped, and one
//! left by a blkscope killed outright is removed at the next start ([`remove_stale`]).
//!
//! A tracepoint costs CPU on every I/O, and reading its text more: a trace that sees more than
//! [`MAX_EVENTS_PER_SEC`] stops after its first [`SAMPLE_FOR`] and keeps that sample
//! (`mode: sampled`); below it, the whole test is traced.

pub mod event;
pub mod tally;

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

pub use tally::{Moved, Submitter, Tally, Who, kernel_thread};

use crate::sysroot::SysRoot;

/// Instances blkscope makes are named this and the process id.
pub const INSTANCE_PREFIX: &str = "blkscope-";

/// Above this many events a second (three an I/O on a request-based device: about 3.3K IOPS;
/// one on a bio-based one such as zram) the trace keeps a sample
/// (`BLKSCOPE_TRACE_MAX_RATE` sets another, for measuring what a full trace costs:
/// bench/trace_cost.sh).
pub const MAX_EVENTS_PER_SEC: f64 = 10_000.0;

/// [`MAX_EVENTS_PER_SEC`], or what `BLKSCOPE_TRACE_MAX_RATE` says.
pub fn max_events_per_sec() -> f64 {
    std::env::var("BLKSCOPE_TRACE_MAX_RATE")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(MAX_EVENTS_PER_SEC)
}
/// How long a trace runs before its rate is judged, and what a sample keeps.
pub const SAMPLE_FOR: Duration = Duration::from_millis(250);

/// Tracing is on unless `--no-trace` (or `BLKSCOPE_NO_TRACE=1`) turned it off.
static OFF: AtomicBool = AtomicBool::new(false);

/// Turns tracing off for this process (`--no-trace`).
pub fn turn_off() {
    OFF.store(true, Ordering::Relaxed);
}

/// Whether tests are traced (`--no-trace` or `BLKSCOPE_NO_TRACE=1` say no).
pub fn wanted() -> bool {
    !OFF.load(Ordering::Relaxed) && std::env::var("BLKSCOPE_NO_TRACE").as_deref() != Ok("1")
}

/// Where tracefs is, mounting it at /sys/kernel/tracing where the kernel has it but nothing
/// mounted it (a rescue system).
fn tracefs(root: &SysRoot) -> Result<PathBuf, String> {
    if !root.is_live() {
        return Err("not on the live system (--root)".into());
    }
    let main = PathBuf::from("/sys/kernel/tracing");
    for p in [&main, &PathBuf::from("/sys/kernel/debug/tracing")] {
        if p.join("instances").is_dir() {
            return Ok(p.clone());
        }
    }
    if !main.is_dir() {
        return Err("the kernel has no tracefs (/sys/kernel/tracing)".into());
    }
    crate::sys::mount_tracefs(&main).map_err(|e| format!("mounting tracefs: {e}"))?;
    if main.join("instances").is_dir() {
        Ok(main)
    } else {
        Err("tracefs has no instances directory".into())
    }
}

/// Removes the instances of blkscopes that are gone (killed outright, so their Drop never
/// ran); returns how many.
pub fn remove_stale(root: &SysRoot) -> usize {
    tracefs(root).map_or(0, |base| remove_stale_in(&base))
}

/// [`remove_stale`] where tracefs is mounted already, without mounting it: what every start of
/// blkscope does (`list` and `stat` too), so that an instance a killed blkscope left does not
/// record its devices' I/O until the next test.
pub fn remove_stale_mounted(root: &SysRoot) -> usize {
    if !root.is_live() {
        return 0;
    }
    ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]
        .iter()
        .map(Path::new)
        .filter(|p| p.join("instances").is_dir())
        .map(remove_stale_in)
        .sum()
}

/// [`remove_stale`] in the tracefs at `base`.
fn remove_stale_in(base: &Path) -> usize {
    let Ok(dir) = fs::read_dir(base.join("instances")) else {
        return 0;
    };
    dir.flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            // `blkscope-PID`, or `blkscope-PID.N` for a second trace of the same process.
            let rest = name.strip_prefix(INSTANCE_PREFIX)?;
            let pid: u32 = rest.split('.').next()?.parse().ok()?;
            (pid != std::process::id() && !crate::sys::pid_alive(pid)).then(|| e.path())
        })
        .filter(|p| remove_instance(p).is_ok())
        .count()
}

/// Turns an instance's events off and removes it (the kernel frees its buffers).
fn remove_instance(dir: &Path) -> io::Result<()> {
    let _ = fs::write(dir.join("tracing_on"), "0");
    let _ = fs::write(dir.join("events/block/enable"), "0");
    fs::remove_dir(dir)
}

/// The events blkscope reads.
const EVENTS: [&str; 3] = ["block_bio_queue", "block_rq_issue", "block_rq_complete"];

/// What the trace has seen so far, shared with whoever shows it live.
pub type Live = Arc<std::sync::Mutex<LiveView>>;

/// The trace so far: the test's median Q2D and D2C (ns), and the other processes' bytes.
#[derive(Debug, Clone, Default)]
pub struct LiveView {
    pub split: Option<(u64, u64)>,
    pub others: Vec<LiveOther>,
}

/// Another process's I/O on the traced devices since the trace began.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LiveOther {
    pub comm: String,
    pub pid: u32,
    pub device: String,
    pub bytes: u64,
    #[serde(default)]
    pub read_bytes: u64,
    #[serde(default)]
    pub write_bytes: u64,
}

/// What a finished trace saw.
pub struct Traced {
    pub tally: Tally,
    /// The devices traced, by (major, minor), with their names.
    pub devices: Vec<((u32, u32), String)>,
    /// Stopped after a sample because events came faster than [`MAX_EVENTS_PER_SEC`].
    pub sampled: bool,
    /// Events the kernel could not keep (the reader fell behind).
    pub lost: u64,
}

/// A trace under way: the instance, and the thread that reads it.
pub struct Tracer {
    dir: PathBuf,
    stop: Arc<AtomicBool>,
    /// The test's median Q2D and D2C so far (ns), as the reader last drained the events.
    live: Live,
    reader: Option<JoinHandle<(Tally, bool, u64)>>,
    devices: Vec<((u32, u32), String)>,
}

impl Tracer {
    /// Starts tracing the block devices `names` (kernel names) in an instance of its own.
    /// Needs root and tracefs; says why not in one line.
    pub fn start(root: &SysRoot, names: &[String]) -> Result<Tracer, String> {
        if crate::sys::geteuid() != 0 {
            return Err("tracing the block layer needs root".into());
        }
        let base = tracefs(root)?;
        remove_stale_in(&base);
        let devices: Vec<((u32, u32), String)> = names
            .iter()
            .filter_map(|n| Some((devno(root, n)?, n.clone())))
            .collect();
        if devices.is_empty() {
            return Err("no block device to trace under the target".into());
        }
        // One instance a trace: a process's first is `blkscope-PID`, one beside it (the TUI's
        // doctor pane while a test runs) `blkscope-PID.N`.
        static TRACES: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = TRACES.fetch_add(1, Ordering::Relaxed);
        let name = match n {
            0 => format!("{INSTANCE_PREFIX}{}", std::process::id()),
            n => format!("{INSTANCE_PREFIX}{}.{n}", std::process::id()),
        };
        let dir = base.join("instances").join(name);
        if dir.exists() {
            let _ = remove_instance(&dir);
        }
        fs::create_dir(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        let mut tracer = Tracer {
            dir,
            stop: Arc::new(AtomicBool::new(false)),
            live: Live::default(),
            reader: None,
            devices,
        };
        tracer
            .set_up()
            .map_err(|e| format!("setting up {}: {e}", tracer.dir.display()))?;
        let pipe = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(tracer.dir.join("trace_pipe"))
            .map_err(|e| format!("opening trace_pipe: {e}"))?;
        let (stop, on) = (tracer.stop.clone(), tracer.dir.join("tracing_on"));
        let live = tracer.live.clone();
        let names = tracer.devices.clone();
        let reader = std::thread::Builder::new()
            .name("blkscope-trace".into())
            .spawn(move || read_pipe(pipe, &stop, &on, &live, &names))
            .map_err(|e| format!("starting the trace reader: {e}"))?;
        tracer.reader = Some(reader);
        Ok(tracer)
    }

    /// The instance's options, filter and events: the test's devices only.
    fn set_up(&self) -> io::Result<()> {
        let w = |f: &str, v: &str| fs::write(self.dir.join(f), v);
        w("tracing_on", "0")?;
        w("options/record-tgid", "1")?;
        w("trace_clock", "mono")?;
        w("buffer_size_kb", "8192")?;
        let filter = self
            .devices
            .iter()
            .map(|((maj, min), _)| format!("dev == {}", (maj << 20) | min))
            .collect::<Vec<_>>()
            .join(" || ");
        for e in EVENTS {
            w(&format!("events/block/{e}/filter"), &filter)?;
            w(&format!("events/block/{e}/enable"), "1")?;
        }
        w("tracing_on", "1")
    }

    /// The test's median Q2D and D2C so far, updated as the trace is read (at 0.25 s, then
    /// every second).
    pub fn live(&self) -> Live {
        self.live.clone()
    }

    /// Stops the trace, reads what is left and removes the instance.
    pub fn stop(mut self) -> Traced {
        let _ = fs::write(self.dir.join("tracing_on"), "0");
        self.stop.store(true, Ordering::Relaxed);
        let (tally, sampled, lost) = self
            .reader
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_else(|| (Tally::new(std::process::id()), false, 0));
        Traced {
            tally,
            devices: std::mem::take(&mut self.devices),
            sampled,
            lost,
        }
    }
}

impl Drop for Tracer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.reader.take() {
            let _ = h.join();
        }
        let _ = remove_instance(&self.dir);
    }
}

/// (major, minor) of a block device by kernel name, from sysfs.
fn devno(root: &SysRoot, name: &str) -> Option<(u32, u32)> {
    let s = fs::read_to_string(root.sys(format!("class/block/{name}/dev"))).ok()?;
    let (a, b) = s.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

/// Reads `pipe` until told to stop, then what is left: the tally, whether it kept a sample
/// only, and the events the kernel reported lost. It wakes rarely (once after the sample's
/// time, then once a second, draining what the kernel buffered meanwhile): a thread that wakes
/// every few milliseconds beside a test moves the test's threads between CPUs, and one that
/// parses a fast trace while the test runs takes a CPU from it.
fn read_pipe(
    mut pipe: File,
    stop: &AtomicBool,
    tracing_on: &Path,
    live: &Live,
    names: &[((u32, u32), String)],
) -> (Tally, bool, u64) {
    let mut tally = Tally::new(std::process::id());
    let mut buf = vec![0u8; 1 << 16];
    let mut carry = String::new();
    let (started, mut sampled, mut lost) = (Instant::now(), false, 0u64);
    let max_rate = max_events_per_sec();
    let dir = tracing_on
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let mut next = started + SAMPLE_FOR;
    loop {
        while !stop.load(Ordering::Relaxed) && Instant::now() < next {
            std::thread::sleep(Duration::from_millis(10));
        }
        if stop.load(Ordering::Relaxed) {
            break;
        }
        // Past the sample's time, judged by the kernel's own count (parsing a fast trace here
        // would take a CPU from the test): a trace that comes too fast stops, and what the
        // buffer holds is the sample, read once the test is done. The events are turned off,
        // not only the recording: an enabled tracepoint costs even unrecorded.
        if !sampled {
            let rate = buffered_events(&dir) as f64 / started.elapsed().as_secs_f64();
            if rate > max_rate {
                let _ = fs::write(tracing_on, "0");
                let _ = fs::write(dir.join("events/block/enable"), "0");
                sampled = true;
                next = Instant::now() + Duration::from_secs(3600);
                continue;
            }
        }
        // At most a wake's worth: a reader slower than the events (a debug build at 50000 a
        // second) still hands out the split so far; what it leaves waits in the kernel's buffer.
        let drained = drain(
            &mut pipe,
            &mut buf,
            &mut carry,
            &mut tally,
            &mut lost,
            DRAIN_PER_WAKE,
        );
        let Ok(more) = drained else {
            break;
        };
        let view = live_view(&tally, names);
        if let Ok(mut l) = live.lock() {
            *l = view;
        }
        // More waiting: back soon, before the kernel's buffer fills.
        next = Instant::now()
            + if more {
                Duration::from_millis(20)
            } else {
                Duration::from_secs(1)
            };
    }
    let _ = drain(
        &mut pipe,
        &mut buf,
        &mut carry,
        &mut tally,
        &mut lost,
        usize::MAX,
    );
    (tally, sampled, lost)
}

/// The trace so far: the test's median split, and the other processes (not kernel threads,
/// which work for whoever) by bytes, most first.
fn live_view(tally: &Tally, names: &[((u32, u32), String)]) -> LiveView {
    let split = (!tally.q2d.is_empty() && !tally.d2c.is_empty()).then(|| {
        (
            tally.q2d.value_at_quantile(0.5),
            tally.d2c.value_at_quantile(0.5),
        )
    });
    let mut others: Vec<LiveOther> = tally
        .by
        .iter()
        .filter(|((_, who), m)| !tally.is_own(*who) && !tally::kernel_thread(who.0, &m.comm))
        .map(|((dev, who), m)| LiveOther {
            comm: m.comm.clone(),
            pid: who.0,
            device: names
                .iter()
                .find(|(d, _)| d == dev)
                .map_or_else(|| format!("{}:{}", dev.0, dev.1), |(_, n)| n.clone()),
            bytes: m.read_bytes + m.write_bytes,
            read_bytes: m.read_bytes,
            write_bytes: m.write_bytes,
        })
        .filter(|o| o.bytes > 0)
        .collect();
    others.sort_by_key(|o| std::cmp::Reverse(o.bytes));
    others.truncate(3);
    LiveView { split, others }
}

/// Events the instance's buffers hold now, and those it had to drop, over its CPUs.
fn buffered_events(dir: &Path) -> u64 {
    let Ok(cpus) = fs::read_dir(dir.join("per_cpu")) else {
        return 0;
    };
    cpus.flatten()
        .filter_map(|c| fs::read_to_string(c.path().join("stats")).ok())
        .flat_map(|s| {
            s.lines()
                .filter_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    matches!(k.trim(), "entries" | "overrun" | "dropped events")
                        .then(|| v.trim().parse::<u64>().ok())
                        .flatten()
                })
                .collect::<Vec<_>>()
        })
        .sum()
}

/// The most a reader takes from the pipe at one wake while the trace runs (text, about 100000
/// events).
const DRAIN_PER_WAKE: usize = 8 << 20;

/// Reads what the pipe holds now (at most `limit` bytes) into the tally; true when it stopped
/// at the limit with more to read.
fn drain(
    pipe: &mut File,
    buf: &mut [u8],
    carry: &mut String,
    tally: &mut Tally,
    lost: &mut u64,
    limit: usize,
) -> io::Result<bool> {
    let mut taken = 0usize;
    loop {
        if taken >= limit {
            return Ok(true);
        }
        match pipe.read(buf) {
            Ok(0) => return Ok(false),
            Ok(n) => {
                taken += n;
                carry.push_str(&String::from_utf8_lossy(&buf[..n]));
                let end = carry.rfind('\n').map_or(0, |i| i + 1);
                for line in carry[..end].lines() {
                    match event::parse(line) {
                        Some(e) => tally.add(&e),
                        None => *lost += lost_in(line),
                    }
                }
                carry.drain(..end);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// The count of a `CPU:N [LOST M EVENTS]` line.
fn lost_in(line: &str) -> u64 {
    line.split_once("[LOST ")
        .and_then(|(_, r)| r.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}
