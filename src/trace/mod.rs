//! The block layer's own tracepoints, read while a test runs: who did each I/O on the devices
//! under the test (the test, the kernel, or another process, by pid), and where the test's
//! I/Os spent their time (queue to issue, issue to completion). /proc/PID/io cannot tie bytes
//! to a device and /proc/diskstats cannot tie them to a process; `block:block_bio_queue`,
//! `block_rq_issue` and `block_rq_complete` carry both.
//!
//! The events come from BPF programs of blkscope's own on those tracepoints' raw forms
//! (`bpf::events`, read by `programs`), which the kernel detaches when blkscope's descriptors
//! close, however it ends. Where the kernel will not run them (no BPF, no BTF), from a tracefs
//! instance of blkscope's own (`instances/blkscope-PID`, tracefs mounted if nothing had),
//! filtered to the devices of the target's tree, so that nothing else that traces is
//! disturbed; no daemon either way. The instance is removed when the [`Tracer`] is dropped,
//! and one left by a blkscope killed outright is removed at the next start ([`remove_stale`]).
//! An instance's events are read as the ring buffer's pages (`raw`), or where those cannot be
//! as the kernel's text (`text`, its lines parsed by `event`).
//!
//! A tracepoint costs CPU on every I/O, and reading its events more: a trace that sees more
//! than [`MAX_EVENTS_PER_SEC`] is kept in windows spread over the run (`reader`, `mode:
//! sampled`), with the devices' diskstats over the same time (`counted`) for the windows'
//! shares to be scaled to; below it, the whole test is traced.

pub mod below;
pub mod bpf;
mod counted;
pub mod event;
pub mod pick;
mod programs;
mod raw;
mod reader;
pub mod tally;
mod text;

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

pub use below::FileBelow;
pub use counted::DeviceBytes;
pub use reader::{Coverage, TIMED_EVERY, WINDOW_EVERY};
pub use tally::{FileOf, Moved, Part, Row, Stepped, Submitter, Tally, Who};

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

/// The kernel's buffer for each CPU, in KiB: a second and a half of events at the rate a
/// trace may keep (a trace kept throughout is read once a second), all on one CPU, at 80 bytes
/// an event (a record and its header), from 1 MiB to 8 MiB. Each KiB is allocated when the
/// trace starts and freed when it ends (docs/architecture.md).
fn buffer_kb(rate: f64) -> u64 {
    ((rate * 1.5 * 80.0 / 1024.0) as u64).clamp(1024, 8192)
}

/// The size to give an instance's buffers whose own are `has` KiB a CPU (None where it could
/// not be read): only a larger one than they have (the kernel's default, 1410 KiB, holds the
/// default rate's), since each resize allocates and resets the buffers.
fn buffer_to_set(has: Option<u64>, needed: u64) -> Option<u64> {
    (has.is_none_or(|kb| kb < needed)).then_some(needed)
}

/// How long a window of a trace kept in windows is open at the most.
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
    let _ = fs::write(dir.join("events/enable"), "0");
    fs::remove_dir(dir)
}

/// The events blkscope reads.
const EVENTS: [&str; 3] = ["block_bio_queue", "block_rq_issue", "block_rq_complete"];

/// When processes begin and end (few beside block I/O, and kept on between windows).
const LIFE_EVENTS: [&str; 2] = ["sched_process_fork", "sched_process_exit"];

/// What the trace has seen so far, shared with whoever shows it live.
pub type Live = Arc<std::sync::Mutex<LiveView>>;

/// The trace so far: the test's median Q2D and D2C (ns), and who moved what on each device
/// (for the analysis of the test so far). Empty until the trace has been read once
/// (no window in `coverage`).
#[derive(Debug, Clone, Default)]
pub struct LiveView {
    pub split: Option<(u64, u64)>,
    /// Each device and submitter, with what it moved.
    pub rows: Vec<Row>,
    /// The test's process.
    pub own: u32,
    pub coverage: Coverage,
    pub events: u64,
    pub lost: u64,
    /// Some of the test's bios timed at each step so far ([`Stepped`]), shared: a live view is
    /// copied for every sample.
    pub stepped: Arc<Vec<Stepped>>,
    /// What diskstats says each device moved so far (kept in windows only: the windows'
    /// figures are scaled to it).
    pub device_bytes: Vec<DeviceBytes>,
}

impl LiveView {
    /// Whether the trace has been read at all yet.
    pub fn read(&self) -> bool {
        !self.coverage.windows_ns.is_empty()
    }
}

/// Another process's I/O on the traced devices since the trace began, as a live sample
/// carries it.
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
    /// Kept in windows because events came faster than [`MAX_EVENTS_PER_SEC`] (`sampled`),
    /// or throughout.
    pub coverage: Coverage,
    /// Events the kernel could not keep (the reader fell behind).
    pub lost: u64,
    /// What diskstats says each device moved while the trace ran (kept in windows only).
    pub device_bytes: Vec<DeviceBytes>,
    /// The CPU time of the thread that read the trace (ns).
    pub reader_cpu_ns: u64,
}

/// A trace under way: the instance (none where BPF programs trace), and the thread that
/// reads it.
pub struct Tracer {
    dir: Option<PathBuf>,
    control: Arc<reader::Control>,
    /// The test's median Q2D and D2C so far (ns), as the reader last drained the events.
    live: Live,
    reader: Option<JoinHandle<reader::Kept>>,
    devices: Vec<((u32, u32), String)>,
}

impl Tracer {
    /// Starts tracing the block devices `names` (kernel names): by BPF programs where the
    /// kernel runs them, else in a tracefs instance of its own (`BLKSCOPE_TRACE_VIA=bpf` or
    /// `tracefs` asks for one). Needs root; says why not in one line.
    pub fn start(root: &SysRoot, names: &[String]) -> Result<Tracer, String> {
        if crate::sys::geteuid() != 0 {
            return Err("tracing the block layer needs root".into());
        }
        if !root.is_live() {
            return Err("not on the live system (--root)".into());
        }
        let devices: Vec<((u32, u32), String)> = names
            .iter()
            .filter_map(|n| Some((devno(root, n)?, n.clone())))
            .collect();
        if devices.is_empty() {
            return Err("no block device to trace under the target".into());
        }
        // A disk without blk-mq's `mq` directory makes no requests (zram, dm, md).
        let bio_based: Vec<(u32, u32)> = devices
            .iter()
            .filter(|(_, n)| !root.sys(format!("class/block/{n}/mq")).exists())
            .map(|(d, _)| *d)
            .collect();
        let (mut devices, parts) = with_partitions(root, devices);
        // A loop device's backing file: its disk is traced where the file lies on it.
        let files = below::files_below(root, &devices);
        let whole: Vec<(u32, u32)> = devices.iter().map(|(d, _)| *d).collect();
        for f in &files {
            if !devices.iter().any(|(d, _)| *d == f.disk) {
                devices.push((f.disk, f.disk_name.clone()));
            }
        }
        let (source, dir) = match Via::asked() {
            Via::Bpf => (programs(&whole, &files, &parts)?, None),
            Via::Tracefs => instance(root, &devices, &whole, &files)?,
            Via::Either => match programs(&whole, &files, &parts) {
                Ok(source) => (source, None),
                Err(_) => instance(root, &devices, &whole, &files)?,
            },
        };
        let mut tracer = Tracer {
            dir,
            control: Arc::default(),
            live: Live::default(),
            reader: None,
            devices,
        };
        let (control, dir) = (
            tracer.control.clone(),
            tracer.dir.clone().unwrap_or_default(),
        );
        let live = tracer.live.clone();
        let names = tracer.devices.clone();
        let whole_named: Named = names
            .iter()
            .filter(|(d, _)| whole.contains(d))
            .cloned()
            .collect();
        let counted = counted::Counted::begin(root, &whole_named, &parts);
        let tally = Tally::new(std::process::id())
            .with_parts(parts)
            .with_files(files, &whole)
            .with_bio_based(bio_based);
        let reader = std::thread::Builder::new()
            .name("blkscope-trace".into())
            .spawn(move || reader::read_pipe(source, &dir, &control, &live, &names, tally, counted))
            .map_err(|e| format!("starting the trace reader: {e}"))?;
        tracer.reader = Some(reader);
        Ok(tracer)
    }

    /// The test's median Q2D and D2C so far, updated as the trace is read (at 0.25 s, then
    /// every second).
    pub fn live(&self) -> Live {
        self.live.clone()
    }

    /// The run is planned to end `after` from now (a test of a given runtime): no window opens
    /// that the end would cut short of filling.
    pub fn ends_in(&self, after: Duration) {
        let at = crate::sys::monotonic_ns().saturating_add(after.as_nanos() as u64);
        self.control.ends_ns.store(at, Ordering::Relaxed);
    }

    /// Stops the trace, reads what is left and removes the instance.
    pub fn stop(mut self) -> Traced {
        if let Some(dir) = &self.dir {
            let _ = fs::write(dir.join("tracing_on"), "0");
        }
        self.control.stop.store(true, Ordering::Relaxed);
        let kept = self
            .reader
            .take()
            .and_then(|h| {
                h.thread().unpark();
                h.join().ok()
            })
            .unwrap_or_else(|| reader::Kept {
                tally: Tally::new(std::process::id()),
                coverage: Coverage::default(),
                lost: 0,
                device_bytes: Vec::new(),
                reader_cpu_ns: 0,
            });
        Traced {
            tally: kept.tally,
            devices: std::mem::take(&mut self.devices),
            coverage: kept.coverage,
            lost: kept.lost,
            device_bytes: kept.device_bytes,
            reader_cpu_ns: kept.reader_cpu_ns,
        }
    }
}

impl Drop for Tracer {
    fn drop(&mut self) {
        self.control.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.reader.take() {
            h.thread().unpark();
            let _ = h.join();
        }
        if let Some(dir) = &self.dir {
            let _ = remove_instance(dir);
        }
    }
}

/// How a trace reads the block layer's events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Via {
    Bpf,
    Tracefs,
    /// BPF programs where the kernel runs them, else a tracefs instance.
    Either,
}

impl Via {
    /// What `BLKSCOPE_TRACE_VIA` asks for (`bpf`, `tracefs`), or either.
    fn asked() -> Via {
        match std::env::var("BLKSCOPE_TRACE_VIA").as_deref() {
            Ok("bpf") => Via::Bpf,
            Ok("tracefs") => Via::Tracefs,
            _ => Via::Either,
        }
    }
}

/// The events from BPF programs, the first window's (all three block events) on: nothing to
/// remove afterwards, also when blkscope is killed.
fn programs(
    whole: &[(u32, u32)],
    files: &[FileBelow],
    parts: &[Part],
) -> Result<reader::Source, String> {
    let kernel = |(maj, min): (u32, u32)| (maj << 20) | min;
    let mut ranges: Vec<(u32, u64, u64)> = Vec::new();
    for (disk, all) in below::disks_below(files, whole) {
        let coarse = below::coarse(&all, PROGRAM_RANGES);
        ranges.extend(coarse.iter().map(|&(a, b)| (kernel(disk), a, b)));
    }
    let filter = bpf::Filter {
        whole: whole.iter().map(|&d| kernel(d)).collect(),
        ranges,
    };
    // The queue's program reads a bio's partition where tracefs names its disk (`bio_dev`).
    let disks = parts.iter().map(|p| (p.dev, p.disk)).collect();
    let mut p = programs::Programs::start(&filter, max_events_per_sec(), disks)
        .map_err(|e| format!("loading the trace's BPF programs: {e}"))?;
    if !p.set(EVENTS.len(), true) {
        return Err("turning the trace's BPF programs on failed".into());
    }
    Ok(reader::Source::Programs(Box::new(p)))
}

/// A disk below a loop device's ranges in the programs' filter, at most: each is six
/// instructions at every event on that disk.
const PROGRAM_RANGES: usize = 64;

/// A tracefs instance of the trace's own, set up and turned on, and its events' source.
fn instance(
    root: &SysRoot,
    devices: &Named,
    whole: &[(u32, u32)],
    files: &[FileBelow],
) -> Result<(reader::Source, Option<PathBuf>), String> {
    let base = tracefs(root)?;
    remove_stale_in(&base);
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
    let set_up = set_up(&dir, &filter(devices, whole, files)).and_then(|()| {
        // BLKSCOPE_TRACE_TEXT=1 reads the kernel's text, for measuring what the pages save.
        let text = std::env::var_os("BLKSCOPE_TRACE_TEXT").is_some_and(|v| v == "1");
        match (!text).then(|| raw::Pipes::open(&dir, &base)) {
            Some(Ok(pipes)) => Ok(reader::Source::Raw(Box::new(pipes))),
            _ => text::Text::open(&dir).map(reader::Source::Text),
        }
    });
    match set_up {
        Ok(source) => Ok((source, Some(dir))),
        Err(e) => {
            let _ = remove_instance(&dir);
            Err(format!("setting up {}: {e}", dir.display()))
        }
    }
}

/// The instance's options, filter and events: the test's devices only.
fn set_up(dir: &Path, filter: &str) -> io::Result<()> {
    let w = |f: &str, v: &str| fs::write(dir.join(f), v);
    w("tracing_on", "0")?;
    w("options/record-tgid", "1")?;
    w("trace_clock", "mono")?;
    let has = fs::read_to_string(dir.join("buffer_size_kb"))
        .ok()
        .and_then(|s| s.trim().parse().ok());
    if let Some(kb) = buffer_to_set(has, buffer_kb(max_events_per_sec())) {
        w("buffer_size_kb", &kb.to_string())?;
    }
    for e in EVENTS {
        w(&format!("events/block/{e}/filter"), filter)?;
    }
    // BLKSCOPE_TRACE_SOFT=1 keeps them registered between windows, for measuring.
    if std::env::var_os("BLKSCOPE_TRACE_SOFT").is_some_and(|v| v == "1") {
        soft_mode(dir);
    }
    for e in EVENTS {
        w(&format!("events/block/{e}/enable"), "1")?;
    }
    // Without them a process is taken to have been there all along (a kernel built
    // without the sched events still traces).
    for e in LIFE_EVENTS {
        let _ = w(&format!("events/sched/{e}/enable"), "1");
    }
    w("tracing_on", "1")
}

/// The events' filter: the devices in `whole`, and of the others (disks below loop devices)
/// the sectors of the loop devices' files, [`FILTER_RANGES`] ranges in all.
fn filter(devices: &Named, whole: &[(u32, u32)], files: &[FileBelow]) -> String {
    let dev = |(maj, min): (u32, u32)| format!("dev == {}", (maj << 20) | min);
    let mut any: Vec<String> = devices
        .iter()
        .filter(|(d, _)| whole.contains(d))
        .map(|(d, _)| dev(*d))
        .collect();
    let disks = below::disks_below(files, whole);
    let plain = any.len();
    let each = FILTER_RANGES / disks.len().max(1);
    for (disk, all) in disks {
        let ranges = below::coarse(&all, each)
            .iter()
            .map(|(a, b)| format!("(sector >= {a} && sector < {b})"))
            .collect::<Vec<_>>()
            .join(" || ");
        any.push(format!("({} && ({ranges}))", dev(disk)));
    }
    let joined = any.join(" || ");
    if joined.len() < MAX_FILTER {
        return joined;
    }
    // Too long for the kernel: those disks whole (the tally still counts only the files).
    let whole_disks = files.iter().map(|f| dev(f.disk));
    let mut any: Vec<String> = any.into_iter().take(plain).chain(whole_disks).collect();
    any.sort_unstable();
    any.dedup();
    any.join(" || ")
}

/// A filter's length at most: the kernel takes less than a page.
const MAX_FILTER: usize = 4000;

/// The files' ranges in the filter, at most (a filter is a page at most, each range about 45
/// characters, and the devices take some).
const FILTER_RANGES: usize = 48;

/// Puts the instance's block events in the kernel's soft mode where it can (only for measuring:
/// `BLKSCOPE_TRACE_SOFT=1`): each is the target of a trigger that never fires
/// (`enable_event:block:EVENT:0` on `block_rq_requeue`), so its tracepoint stays registered from
/// here to the instance's removal, and writing its `enable` file only flips a flag that the
/// event checks first. A window then opens and closes without registering three tracepoints
/// (which rewrites the kernel's code and interrupts every CPU), but every block event of the
/// machine pays the check between windows, and on a device that makes requests that cost the
/// test more than registering at each window does (docs/tracing.md).
fn soft_mode(dir: &Path) {
    let trigger = dir.join("events/block/block_rq_requeue/trigger");
    // Appended: opening a trigger file to truncate it removes the event's triggers.
    let add = |e: &str| {
        fs::OpenOptions::new()
            .append(true)
            .open(&trigger)
            .and_then(|mut f| {
                io::Write::write_all(&mut f, format!("enable_event:block:{e}:0").as_bytes())
            })
    };
    for e in EVENTS {
        let _ = add(e);
    }
}

/// The devices with the partitions of each (named, so that I/O in one is said to be there),
/// and where each partition lies on its disk: the block layer's events name the disk.
fn with_partitions(root: &SysRoot, mut devices: Named) -> (Named, Vec<Part>) {
    let mut parts = Vec::new();
    for (disk, name) in devices.clone() {
        for e in fs::read_dir(root.sys(format!("class/block/{name}")))
            .into_iter()
            .flatten()
            .flatten()
        {
            let part = e.file_name().to_string_lossy().into_owned();
            // A partition's directory is named after its disk (sda1, nvme0n1p1, loop0p1); the
            // disk's attributes beside them are not read as partitions.
            if !part.starts_with(name.as_str()) {
                continue;
            }
            let at = |f: &str| crate::sysroot::read_u64(&e.path().join(f));
            let (Some(start), Some(size), Some(dev)) =
                (at("start"), at("size"), devno(root, &part))
            else {
                continue;
            };
            parts.push(Part {
                disk,
                start,
                end: start + size,
                dev,
            });
            if !devices.iter().any(|(d, _)| *d == dev) {
                devices.push((dev, part));
            }
        }
    }
    (devices, parts)
}

/// Devices by (major, minor), with their kernel names.
type Named = Vec<((u32, u32), String)>;

/// (major, minor) of a block device by kernel name, from sysfs.
fn devno(root: &SysRoot, name: &str) -> Option<(u32, u32)> {
    crate::sysroot::read_devno(&root.sys(format!("class/block/{name}/dev")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kernels_buffer_holds_a_second_and_a_half_at_the_rate_limit() {
        let kb = [1.0, MAX_EVENTS_PER_SEC, 40_000.0, 1e12].map(buffer_kb);
        println!("{kb:?}");
        assert_eq!(kb, [1024, 1171, 4687, 8192]);
        // An instance's own 1410 KiB hold the default's; a raised limit, or a size that could
        // not be read, is set.
        let set = [(Some(1410), 1171), (Some(1410), 4687), (None, 1171)]
            .map(|(has, needed)| buffer_to_set(has, needed));
        println!("{set:?}");
        assert_eq!(set, [None, Some(4687), Some(1171)]);
    }

    fn file(disk: (u32, u32), n: u64) -> FileBelow {
        FileBelow {
            loop_dev: (7, 0),
            file: "/tmp/a.img".into(),
            disk,
            disk_name: "vda".into(),
            ranges: (0..n).map(|i| (i * 1000, i * 1000 + 8)).collect(),
        }
    }

    /// A fragmented backing file's ranges are joined to fit a page; with too many devices for
    /// that, its disk is filtered whole (the tally still counts only the file's sectors).
    #[test]
    fn the_filter_fits_a_page_and_covers_the_file() {
        let loop0 = vec![((7, 0), "loop0".to_string())];
        let f = filter(&loop0, &[(7, 0)], &[file((254, 0), 1000)]);
        println!("{} characters: {}...", f.len(), &f[..120]);
        assert!(f.len() < MAX_FILTER);
        assert!(f.starts_with(&format!("dev == {} || (dev == {} && (", 7 << 20, 254 << 20)));
        assert!(f.contains("(sector >= 0 && sector < "), "{f}");
        assert!(
            f.ends_with(&format!("sector < {})))", 999 * 1000 + 8)),
            "{f}"
        );
        let many: Named = (0..200).map(|i| ((7, i), format!("loop{i}"))).collect();
        let whole: Vec<(u32, u32)> = many.iter().map(|(d, _)| *d).collect();
        let f = filter(&many, &whole, &[file((254, 0), 1000)]);
        println!("{} characters with 200 devices", f.len());
        assert!(f.contains(&format!("dev == {}", 254 << 20)) && !f.contains("sector"));
    }
}
