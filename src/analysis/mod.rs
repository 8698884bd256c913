//! What a run's figures mean. Each room takes a job, what the engine measured and the counters
//! read around it, and returns data (warnings and findings, with the numbers behind them), so
//! the command line, the TUI and the reports say the same thing:
//!
//! - [`findings`]: the one model of what blkscope concluded (a kind that carries its meaning,
//!   the evidence, the words), a file per source: the diskstats, how the test ran, what it read
//!   that held nothing, other processes, the device's settings;
//! - [`unwritten`]: how much of a region holds nothing (never written, holes), looked at before
//!   a read test;
//! - [`explain`]: the `dd` and `fio` lines that match a job;
//! - [`live`]: the same findings over a test so far, for the live view;
//! - [`sweep`]: the points of a sweep and where the curve bends;
//! - [`traced`]: what the block layer's tracepoints said: whose each device's I/O was, and
//!   where the test's time went.
//!
//! [`analyze_run`] puts them together for one run of a job.

pub mod explain;
pub mod findings;
pub mod live;
pub mod steps;
pub mod sweep;
pub mod traced;
pub mod unwritten;

use serde::{Deserialize, Serialize};

use crate::engine::target::OpenTarget;
use crate::engine::{Data, EngineKind, Job, Mode, Probe, Run};
use crate::stats::{IostatX, Snapshot};
use crate::sysroot::SysRoot;
use findings::others::{self, OtherIo};
use findings::{Activity, Finding, Kind, Moved};
use traced::TraceSummary;
use unwritten::Unwritten;

/// Something the user should know about a result.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct Warning {
    pub kind: Kind,
    pub message: String,
}

impl Warning {
    pub fn new(kind: Kind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }
}

/// What reached the target's device (for a file: the device holding it) during a run.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct DeviceBytes {
    pub device: String,
    pub read: u64,
    pub written: u64,
}

/// What the analysis of one run says: its warnings (the job's own, then each finding's), the
/// findings with their numbers, and the diskstats of the devices under the test.
#[derive(Debug, Clone, Default)]
pub struct Analysis {
    pub warnings: Vec<Warning>,
    pub findings: Vec<Finding>,
    /// The target's device and its related devices over the run, in `iostat -x` terms.
    pub diskstats: Vec<IostatX>,
    pub device_bytes: Option<DeviceBytes>,
    /// The block layer's trace of the run, or why it was not traced.
    pub trace: Option<TraceSummary>,
}

impl Analysis {
    /// Adds a finding and its warning.
    fn add(&mut self, f: Finding) {
        self.warnings.push(Warning::new(f.kind, f.message.clone()));
        self.findings.push(f);
    }

    /// Puts the findings and warnings in the order of what they do to the figure
    /// ([`findings::order`]).
    fn order(&mut self) {
        findings::order(&mut self.findings);
        self.warnings.sort_by_key(|w| w.kind.effect());
    }
}

/// How much of what a read test will read holds nothing, looked at before its first I/O (for
/// a mixed test, its writes would change the answer).
pub fn unwritten_before(root: &SysRoot, target: &OpenTarget, job: &Job) -> Option<Unwritten> {
    job.op
        .reads()
        .then(|| unwritten::probe(root, &target.store, job.offset, target.plan.total))
        .flatten()
}

/// Analyses one run of `job` on `target` (named `path` by the user): the job's own warnings,
/// the diskstats findings, other processes, memory under the target, partial file system
/// blocks, io-wq, and reads of what held nothing (`unwritten`, from [`unwritten_before`]).
pub fn analyze_run(
    root: &SysRoot,
    job: &Job,
    (path, target): (&str, &OpenTarget),
    run: &Run,
    unwritten: Option<&Unwritten>,
    trace: TraceSummary,
) -> Analysis {
    let m = &run.measured;
    let ours = m.read_bytes + m.write_bytes;
    let mut out = Analysis {
        warnings: job_warnings(job, run.engine_used, m.engine_probe.as_ref()),
        trace: Some(trace),
        ..Analysis::default()
    };
    let (p0, p1) = &run.counters.procs;
    // Who else did I/O: exactly, per device, from the trace (and elsewhere, from
    // /proc/PID/io); without a trace, /proc/PID/io alone.
    let others = OtherIo::between(root, p0, p1, ours);
    let traced = out.trace.as_ref().filter(|t| t.traced());
    let from_trace = traced.and_then(|t| others::traced_finding(t, job, ours, others.as_ref()));
    if let Some((a, b)) = &run.counters.disk {
        let other_read = others.as_ref().map_or(0.0, |o| o.read_bytes);
        let moved = Moved {
            read_bytes: m.read_bytes,
            write_bytes: m.write_bytes,
        };
        diskstats_findings(root, job, target, (a, b), moved, other_read, &mut out);
    }
    if let Some(f) = from_trace.or_else(|| others.map(|o| o.finding(ours))) {
        out.add(f);
    }
    for f in how_it_ran(root, job, path, target, run, unwritten, &out) {
        out.add(f);
    }
    out.order();
    out
}

/// The diskstats of the devices under the test, summed up in `iostat -x` terms, and what they
/// mean: each measured finding replaces the job's a-priori warning of the same kind.
fn diskstats_findings(
    root: &SysRoot,
    job: &Job,
    target: &OpenTarget,
    (a, b): (&Snapshot, &Snapshot),
    moved: Moved,
    other_read: f64,
    out: &mut Analysis,
) {
    let seconds = b.at.saturating_duration_since(a.at).as_secs_f64();
    let devices = deltas(target, a, b);
    let mut stats_off = Vec::new();
    for (name, d) in &devices {
        let mut x = crate::stats::compute(name, d, seconds);
        x.stats_off = crate::stats::iostats_disabled(root, name);
        if x.stats_off {
            stats_off.push(name.clone());
        }
        // A device with queue/iostats 0 may count its I/O or not (a loop device counted
        // nothing of an 8M write test, "read 0B and wrote 0B"; zram, a bio driver, still
        // counted its writes here), and nothing tells which: its bytes are not said, and the
        // next device under the test says them.
        if out.device_bytes.is_none() && !x.stats_off {
            out.device_bytes = Some(DeviceBytes {
                device: name.clone(),
                read: d.sectors_read * 512,
                written: d.sectors_written * 512,
            });
        }
        out.diskstats.push(x);
    }
    let mut activity = activity(target, devices, seconds, stats_off);
    activity.other_read_bytes = Some(other_read);
    activity.ended = true;
    activity.traced = out.trace.clone();
    let found = findings::analyze(job, moved, &activity, crate::sys::page_size());
    for f in &found {
        out.warnings.retain(|w| w.kind != f.kind);
        out.warnings.push(Warning::new(f.kind, f.message.clone()));
    }
    out.findings = found;
}

/// The counter deltas of the devices under `target` between two readings, in its watch order
/// (a device missing from either reading is left out).
pub(crate) fn deltas(
    target: &OpenTarget,
    a: &Snapshot,
    b: &Snapshot,
) -> Vec<(String, crate::stats::iostat::Counters)> {
    target
        .watch
        .iter()
        .filter_map(|n| Some((n.clone(), b.devices.get(n)?.delta(a.devices.get(n)?))))
        .collect()
}

/// What the devices under `target` did over `seconds` (their counter deltas), with what the
/// target is: the context of the diskstats findings, at the end of a test and while it runs.
pub(crate) fn activity(
    target: &OpenTarget,
    devices: Vec<(String, crate::stats::iostat::Counters)>,
    seconds: f64,
    stats_off: Vec<String>,
) -> Activity {
    Activity {
        devices,
        seconds,
        stats_off,
        logical_block_size: target.info.logical_block_size.unwrap_or(512),
        // A file's: the device that holds it.
        write_cache: target
            .info
            .write_cache
            .clone()
            .or_else(|| target.holding.as_ref().and_then(|d| d.write_cache.clone())),
        loop_device: target
            .info
            .device
            .as_deref()
            .is_some_and(crate::device::is_loop),
        in_ram: target
            .info
            .device
            .as_deref()
            .is_some_and(crate::device::in_ram),
        below_count: target.below_count,
        fs_block: target.fs_block.clone(),
        other_read_bytes: None,
        ended: false,
        traced: None,
    }
}

/// Findings known before the test's first I/O, which stand from its first sample to its
/// result: memory under the target (it changes what every other figure means) and reads of
/// regions never written (`unwritten`, from [`unwritten_before`]).
pub fn known_before(
    job: &Job,
    path: &str,
    target: &OpenTarget,
    unwritten: Option<&Unwritten>,
) -> Vec<Finding> {
    let info = &target.info;
    let block = info.device.as_deref().filter(|_| info.kind == "block");
    let cache_below = target
        .cache_below
        .as_ref()
        .map(|c| findings::device::cache_below(block, c));
    let never_written =
        unwritten.and_then(|u| findings::unwritten::finding(job, path, &target.store, u));
    cache_below.into_iter().chain(never_written).collect()
}

/// Findings from how the test ran rather than from the diskstats: what was known before it
/// ([`known_before`]), partial file system blocks, io-wq wakeups, a stall, then blocks read
/// back as zeros where the store could not say they were never written.
fn how_it_ran(
    root: &SysRoot,
    job: &Job,
    path: &str,
    target: &OpenTarget,
    run: &Run,
    unwritten: Option<&Unwritten>,
    so_far: &Analysis,
) -> Vec<Finding> {
    let m = &run.measured;
    let info = &target.info;
    let device = info.device.clone().unwrap_or_default();
    let issue = findings::Issue {
        uring: run.engine_used == EngineKind::Uring,
        io_workers: run.io_workers,
        cpus_available: crate::sys::allowed_cpus().map_or(1, |c| c.len()),
        mean_latency_ns: m.latency_ns.mean,
        halt_poll_ns: findings::halt_poll_ns(root),
        busy_polled: m.busy_polled,
    };
    let known = known_before(job, path, target, unwritten);
    let never_written = known.iter().any(|f| f.kind == Kind::NeverWritten);
    // Where the store could not say, what the reads brought back: zeros. Not on a scratch file
    // laid out with the zeros the user asked for (`--data zero`, which has its own warning).
    let laid_out_zeros = job.data == Data::Zero && info.test_file.is_some();
    let zeros_read = (!never_written && !laid_out_zeros).then(|| {
        let file = info.kind == "file";
        findings::unwritten::zeros_finding(job, path, &device, file, target.plan.total, &run.zeros)
    });
    // The device holding a file: how many requests it had in flight (none when its statistics
    // are off).
    let aqu_sz = so_far
        .diskstats
        .iter()
        .find(|x| x.disk_device == device && !x.stats_off)
        .map(|x| x.aqu_sz);
    let partial_block = target.fs_block.as_ref().and_then(|fs| {
        let written = so_far
            .device_bytes
            .as_ref()
            .filter(|b| b.device == device)
            .map(|b| (b.written, m.write_bytes));
        findings::partial_fs_block(job, fs, &device, aqu_sz, written)
    });
    known
        .into_iter()
        .chain(partial_block)
        .chain(findings::io_worker_wakeups(job, issue, &device))
        .chain(findings::stall::Stalls::of(&m.samples).finding(job, &device))
        .chain(zeros_read.flatten())
        .collect()
}

/// What the job's own settings make a reader of its result need to know; `probe`: what the
/// probe that chose its engine measured (`engine::probe`).
pub fn job_warnings(job: &Job, engine: EngineKind, probe: Option<&Probe>) -> Vec<Warning> {
    let mut w = Vec::new();
    if job.mode == Mode::Buffered && job.op.writes() {
        w.push(Warning::new(
            Kind::PageCache,
            "buffered writes without a sync measure the page cache (RAM), not the device; \
             use --mode fdatasync (dd conv=fdatasync) or --mode direct",
        ));
    }
    if matches!(job.mode, Mode::Buffered | Mode::Fdatasync) && job.op.reads() {
        w.push(Warning::new(
            Kind::PageCache,
            "buffered reads may come from the page cache; use --mode nocache or --mode direct",
        ));
    }
    if job.data == Data::Zero && job.op.writes() {
        w.push(Warning::new(
            Kind::Zeros,
            "zeros compress: a compressing file system (ZFS, btrfs), zram or an SSD controller \
             will flatter this result; use --data random (the default)",
        ));
    }
    if engine == EngineKind::Psync && job.iodepth > 1 {
        let qd = job.iodepth;
        // The probe's figures are the engine line's; this says what they did to the depth.
        let why = if probe.is_some() {
            format!(
                ", chosen over io_uring's workers by the probe on the engine line; use \
                 --engine uring to keep {qd} in flight through them"
            )
        } else {
            String::new()
        };
        w.push(Warning::new(
            Kind::PsyncIodepth,
            format!("pread/pwrite are synchronous: iodepth {qd} ran as 1 per job{why}"),
        ));
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::Op;

    /// What makes the figure meaningless is said first: reads of holes before %util, in the
    /// findings and in the warnings, and the order found kept within each.
    #[test]
    fn notes_come_in_the_order_of_what_they_do_to_the_figure() {
        let mut a = Analysis::default();
        for k in [
            Kind::UtilSaturation,
            Kind::BusyProcesses,
            Kind::NeverWritten,
            Kind::WriteCache,
            Kind::ReadModifyWrite,
        ] {
            a.add(Finding::new(k, findings::Evidence::new(), |_| {
                k.name().to_string()
            }));
        }
        a.order();
        let kinds: Vec<&str> = a.findings.iter().map(|f| f.kind.name()).collect();
        println!("{kinds:?}");
        assert_eq!(
            kinds,
            [
                "never_written",
                "busy_processes",
                "read_modify_write",
                "util_saturation",
                "write_cache"
            ]
        );
        let warned: Vec<&str> = a.warnings.iter().map(|w| w.kind.name()).collect();
        assert_eq!(warned, kinds);
    }

    /// Each job warning's fix is spelt as the command line takes it ("use data random" was not
    /// an option anyone could type): every `--flag value` in them parses.
    #[test]
    fn job_warnings_name_options_the_command_line_takes() {
        use clap::Parser;
        let jobs = [
            Job {
                op: Op::Write,
                mode: Mode::Buffered,
                data: Data::Zero,
                ..Job::default()
            },
            Job {
                op: Op::Read,
                mode: Mode::Fdatasync,
                ..Job::default()
            },
        ];
        let mut flags = 0;
        for job in jobs {
            for w in job_warnings(&job, EngineKind::Uring, None) {
                println!("{}: {}", w.kind, w.message);
                assert!(w.message.contains("use --"), "{}", w.message);
                let words: Vec<&str> = w.message.split([' ', ',', ')']).collect();
                for pair in words.windows(2).filter(|p| p[0].starts_with("--")) {
                    let argv = ["blkscope", "run", "/dev/x", pair[0], pair[1]];
                    crate::cli::Cli::try_parse_from(argv)
                        .unwrap_or_else(|e| panic!("{argv:?} from {:?}: {e}", w.message));
                    flags += 1;
                }
            }
        }
        assert!(flags >= 5, "{flags} options checked");
    }
}
