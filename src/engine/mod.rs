//! The I/O engine: runs a [`Job`] on a target with io_uring (or pread/pwrite), streams
//! [`Sample`]s while it runs and returns a [`RunResult`]. It knows nothing of any UI: callers
//! pass a closure for samples and an `AtomicBool` to cancel.
//!
//! Threads: one named OS thread per job (`blkscope-job-N`), each with its own ring; the calling
//! thread samples their interval figures and calls back.

pub mod cpus;
pub mod explain;
pub mod findings;
pub mod job;
pub mod presets;
pub mod result;
pub mod target;
pub mod unwritten;
pub mod verify;
pub mod worker;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub use job::{Data, EngineKind, Job, Mode, Op};
pub use result::{RunResult, Sample, Warning};
pub use target::{TargetInfo, TargetSpec};

use crate::device::safety::SafetyReport;
use crate::sysroot::SysRoot;
use worker::{IntervalAcc, WorkerSpec, new_histogram, run_worker};

/// Why a run did not start (or could not go on).
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{}", .0.join("; "))]
    Invalid(Vec<String>),
    #[error("write test refused: {} is blocked: {}", .0.target, reasons(.0))]
    Blocked(Box<SafetyReport>),
    #[error("{} carries data ({}): a write test destroys it; add --confirm {} to go on", .0.target, reasons(.0), .0.device.as_deref().unwrap_or("NAME"))]
    ConfirmationNeeded(Box<SafetyReport>),
    #[error("cannot open {}: {source}", path.display())]
    Open {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Device(#[from] crate::Error),
}

fn reasons(r: &SafetyReport) -> String {
    r.reasons
        .iter()
        .filter(|x| x.code.severity().is_some())
        .map(|x| x.detail.clone())
        .collect::<Vec<_>>()
        .join("; ")
}

impl RunError {
    /// 2 invalid job, 3 confirmation missing, 4 blocked, 1 anything else.
    pub fn exit_code(&self) -> i32 {
        match self {
            RunError::Invalid(_) => 2,
            RunError::ConfirmationNeeded(_) => 3,
            RunError::Blocked(_) => 4,
            RunError::Open { .. } => 1,
            RunError::Device(e) => e.exit_code(),
        }
    }
}

/// Says why io_uring could not be set up, reading kernel.io_uring_disabled where it matters.
pub fn uring_unavailable_note(e: &std::io::Error) -> String {
    let sysctl = std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled")
        .ok()
        .map(|s| s.trim().to_string());
    let why = match (e.raw_os_error(), sysctl.as_deref()) {
        (Some(libc::ENOSYS), _) => {
            "the kernel has no io_uring, or a seccomp filter (e.g. a container's) blocks it"
                .to_string()
        }
        (Some(libc::EPERM), Some("2")) => "kernel.io_uring_disabled = 2 turns it off".to_string(),
        (Some(libc::EPERM), Some("1")) => {
            "kernel.io_uring_disabled = 1 allows it only to the io_uring_group or CAP_SYS_ADMIN"
                .to_string()
        }
        _ => format!("io_uring_setup failed: {e}"),
    };
    format!("io_uring unavailable ({why}); fell back to pread/pwrite")
}

/// Set `BLKSCOPE_DISABLE_URING=1` to run with pread/pwrite as where io_uring_setup fails (to
/// test or demonstrate the fallback); the note says it was the variable.
fn uring_disabled_by_env() -> bool {
    std::env::var("BLKSCOPE_DISABLE_URING").as_deref() == Ok("1")
}

/// Other processes that moved more than 1% of the test's bytes (and 1 MiB) while it ran.
struct OtherIo {
    busy: Vec<crate::stats::procs::BusyProcess>,
    /// Bytes they moved.
    bytes: u64,
    /// Bytes they read: reads the device counted during a write test may be theirs.
    read_bytes: f64,
}

impl OtherIo {
    fn between(
        root: &SysRoot,
        a: &crate::stats::procs::ProcSnapshot,
        b: &crate::stats::procs::ProcSnapshot,
        ours: u64,
    ) -> Option<Self> {
        let busy = crate::stats::procs::busy(root, a, b, &[std::process::id()]);
        let bytes: u64 = busy.iter().map(|p| p.bytes).sum();
        if busy.is_empty() || (bytes as f64) <= 0.01 * ours as f64 || bytes < (1 << 20) {
            return None;
        }
        let seconds = b.at.saturating_duration_since(a.at).as_secs_f64();
        let read_bytes = busy.iter().map(|p| p.read_bytes_per_sec).sum::<f64>() * seconds;
        Some(Self {
            busy,
            bytes,
            read_bytes,
        })
    }

    /// The finding naming them (pid, command, rate), so that an odd result points at its cause.
    fn finding(&self, ours: u64) -> findings::Finding {
        let names: Vec<String> = self
            .busy
            .iter()
            .take(3)
            .map(|p| {
                format!(
                    "{} (pid {}) {} read, {} written per second",
                    p.comm,
                    p.pid,
                    crate::units::fmt_size(p.read_bytes_per_sec as u64),
                    crate::units::fmt_size(p.write_bytes_per_sec as u64)
                )
            })
            .collect();
        findings::Finding {
            kind: "busy_processes",
            device: String::new(),
            message: format!(
                "other processes moved {} ({:.0}% of the test's bytes) while it ran: {}; they \
                 share the devices and the CPU with the test",
                crate::units::fmt_size(self.bytes),
                self.bytes as f64 * 100.0 / ours.max(1) as f64,
                names.join("; ")
            ),
            numbers: [
                ("other_bytes", self.bytes as f64),
                ("other_read_bytes", self.read_bytes),
                ("processes", self.busy.len() as f64),
                ("share", self.bytes as f64 / ours.max(1) as f64),
            ]
            .into(),
        }
    }
}

/// Runs `job` on the target once.
pub fn run(
    root: &SysRoot,
    spec: &TargetSpec,
    job: &Job,
    cancel: Arc<AtomicBool>,
    mut on_sample: impl FnMut(&Sample),
) -> Result<(TargetInfo, RunResult), RunError> {
    let target = target::open(root, spec, job, &cancel)?;
    if job.mode == Mode::Nocache || job.drop_cache_first {
        let _ = crate::sys::drop_cache(&target.file);
    }
    let plan = target.plan;
    // How much of what a read test reads held nothing when it began (reads do not change it).
    let unwritten = job
        .op
        .reads()
        .then(|| unwritten::probe(root, &target.store, job.offset, plan.total))
        .flatten();
    let mut engine = job.engine;
    let mut engine_note = None;
    if engine == EngineKind::Uring && uring_disabled_by_env() {
        engine = EngineKind::Psync;
        // Not "unavailable": the user asked for it, and the kernel's io_uring was never tried.
        engine_note = Some(
            "io_uring not used: BLKSCOPE_DISABLE_URING=1 is set; ran with pread/pwrite".to_string(),
        );
    }

    // Other processes' I/O over the run (/proc/PID/io), to tell what else moved data.
    let procs0 = crate::stats::procs::ProcSnapshot::read(root);
    // diskstats of the devices under the test, from just before the first I/O.
    let snap0 = (!target.watch.is_empty())
        .then(|| crate::stats::Snapshot::read(root).ok())
        .flatten();
    let start = Instant::now();
    let ramp = job.ramp.unwrap_or_default();
    let ramp_end = start + ramp;
    let deadline = job.runtime.map(|r| ramp_end + r);
    let interval = job.interval.unwrap_or(Duration::from_millis(100));
    let cpu0 = crate::sys::cpu_times();
    let run_seed = fastrand::u64(..);

    let mut accs = Vec::new();
    let mut handles = Vec::new();
    for j in 0..job.jobs {
        let file = target.file.try_clone().map_err(|e| RunError::Open {
            path: PathBuf::from(&spec.path),
            source: e,
        })?;
        let acc = Arc::new(Mutex::new(IntervalAcc::new()));
        accs.push(acc.clone());
        let ws = WorkerSpec {
            op: job.op,
            bs: job.bs,
            iodepth: if engine == EngineKind::Psync {
                1
            } else {
                job.iodepth
            },
            region_start: job.offset + j as u64 * plan.region,
            region_len: plan.region,
            deadline,
            ramp_end,
            data: job.data,
            rwmixread: job.rwmixread,
            fdatasync_at_end: job.mode == Mode::Fdatasync && job.op.writes(),
            sqpoll: job.sqpoll,
            hipri: job.hipri,
            engine,
            seed: run_seed.wrapping_add(j as u64 * 0x9E37_79B9_7F4A_7C15),
            cpus: job.cpus.clone(),
        };
        let cancel = cancel.clone();
        let h = std::thread::Builder::new()
            .name(format!("blkscope-job-{j}"))
            .spawn(move || run_worker(ws, file, cancel, acc))
            .map_err(|e| RunError::Open {
                path: PathBuf::from(&spec.path),
                source: e,
            })?;
        handles.push(h);
    }

    // Sample until every worker is done.
    let mut last = start;
    let mut next_tick = start + interval;
    let mut total_bytes = 0u64;
    let mut interval_hist = worker::new_interval_histogram();
    // The time series the result keeps (and charts are drawn from).
    let mut series: Vec<Sample> = Vec::new();
    loop {
        let all_done = handles.iter().all(|h| h.is_finished());
        let now = Instant::now();
        if now < next_tick && !all_done {
            std::thread::sleep((next_tick - now).min(Duration::from_millis(20)));
            continue;
        }
        let (mut bytes, mut ios, mut read) = (0u64, 0u64, 0u64);
        interval_hist.reset();
        for a in &accs {
            if let Ok(mut a) = a.lock() {
                bytes += a.bytes;
                read += a.read_bytes;
                a.read_bytes = 0;
                ios += a.ios;
                total_bytes += a.total_bytes;
                let _ = interval_hist.add(&a.hist);
                a.bytes = 0;
                a.ios = 0;
                a.total_bytes = 0;
                a.hist.reset();
            }
        }
        let dt = now.duration_since(last).as_secs_f64().max(1e-9);
        if ios > 0 || !all_done {
            let progress = (deadline.is_none() && plan.total > 0)
                .then(|| (total_bytes as f64 / plan.total as f64).min(1.0))
                .or_else(|| {
                    deadline.map(|d| {
                        (now.duration_since(start).as_secs_f64()
                            / d.duration_since(start).as_secs_f64().max(1e-9))
                        .min(1.0)
                    })
                });
            let sample = Sample {
                elapsed_s: now.duration_since(start).as_secs_f64(),
                interval_s: dt,
                bytes,
                ios,
                bytes_per_sec: bytes as f64 / dt,
                iops: ios as f64 / dt,
                p50_ns: if ios > 0 {
                    interval_hist.value_at_quantile(0.5)
                } else {
                    0
                },
                p99_ns: if ios > 0 {
                    interval_hist.value_at_quantile(0.99)
                } else {
                    0
                },
                total_bytes,
                progress,
                ramp: now < ramp_end,
                read_bytes: read,
                write_bytes: bytes - read.min(bytes),
                lat_buckets: if ios > 0 {
                    result::lat_buckets(&interval_hist)
                } else {
                    Vec::new()
                },
            };
            on_sample(&sample);
            series.push(sample);
        }
        last = now;
        next_tick = now + interval;
        if all_done {
            break;
        }
    }

    let outcomes: Vec<_> = handles
        .into_iter()
        .map(|h| h.join().expect("worker thread panicked"))
        .collect();
    let cpu1 = crate::sys::cpu_times();
    // Before the target is closed: closing a block device flushes its page cache, which would
    // hide what buffered writes left in memory.
    let snap1 = snap0
        .as_ref()
        .and_then(|_| crate::stats::Snapshot::read(root).ok());
    let cancelled = cancel.load(Ordering::Relaxed);
    let procs1 = crate::stats::procs::ProcSnapshot::read(root);

    let mut hist = new_histogram();
    let (mut read_bytes, mut write_bytes, mut ios) = (0u64, 0u64, 0u64);
    let mut from: Option<Instant> = None;
    let mut to: Option<Instant> = None;
    let mut error = None;
    let mut streams = Vec::new();
    for (j, o) in outcomes.iter().enumerate() {
        let _ = hist.add(&o.hist);
        read_bytes += o.read_bytes;
        write_bytes += o.write_bytes;
        ios += o.ios;
        from = match (from, o.counted_from) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        to = match (to, o.counted_to) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        if error.is_none() {
            error = o.error.clone();
        }
        if engine_note.is_none() {
            engine_note = o.engine_note.clone();
        }
        let secs = match (o.counted_from, o.counted_to) {
            (Some(a), Some(b)) => b.duration_since(a).as_secs_f64(),
            _ => 0.0,
        };
        let b = o.read_bytes + o.write_bytes;
        streams.push(result::Stream {
            job: j as u32,
            offset: job.offset + j as u64 * plan.region,
            bytes: b,
            seconds: secs,
            bytes_per_sec: if secs > 0.0 { b as f64 / secs } else { 0.0 },
        });
    }
    let engine_used = outcomes.first().map(|o| o.engine_used).unwrap_or(engine);
    // Each job counted its own (io-wq workers are per thread).
    let io_workers = outcomes.iter().map(|o| o.io_workers).sum();
    let seconds = match (from, to) {
        (Some(a), Some(b)) => b.duration_since(a).as_secs_f64(),
        _ => 0.0,
    };
    let bytes = read_bytes + write_bytes;
    // Every I/O done, the ramp's too: the live samples count them all (the last one drains
    // what the jobs handed over when they finished).
    let ios_done: u64 = series.iter().map(|s| s.ios).sum();
    let user = (cpu1.0 - cpu0.0).as_secs_f64();
    let system = (cpu1.1 - cpu0.1).as_secs_f64();
    let expected = plan.total;
    let partial =
        cancelled || error.is_some() || (deadline.is_none() && bytes < expected && ramp.is_zero());

    let result = RunResult {
        op: job.op.as_str(),
        bs: job.bs,
        iodepth: job.iodepth,
        jobs: job.jobs,
        mode: job.mode.as_str(),
        data: match job.data {
            Data::Random => "random",
            Data::Zero => "zero",
        },
        engine: engine_used.as_str(),
        engine_note,
        cpus: job.cpus.as_ref().map(|c| c.to_string()),
        bytes,
        ios,
        read_bytes,
        write_bytes,
        seconds,
        bytes_per_sec: if seconds > 0.0 {
            bytes as f64 / seconds
        } else {
            0.0
        },
        iops: if seconds > 0.0 {
            ios as f64 / seconds
        } else {
            0.0
        },
        latency_ns: result::Latency::from_histogram(&hist),
        cpu: result::Cpu {
            user_s: user,
            system_s: system,
            // The CPU time is the whole run's, the ramp's too: over every I/O it did. (Over
            // the counted I/Os alone, `--ramp 2s --runtime 10s` showed 20% more per I/O.)
            per_io_us: if ios_done > 0 {
                (user + system) * 1e6 / ios_done as f64
            } else {
                0.0
            },
        },
        streams,
        partial,
        cancelled,
        error,
        warnings: job_warnings(job, engine_used),
        findings: Vec::new(),
        diskstats: Vec::new(),
        device_bytes: None,
        repeats: None,
        spread: None,
        stamp: None,
        verify: None,
        samples: series,
        histogram: result::encode_histogram(&hist),
    };
    let mut result = result;
    if job.op.writes() && job.data == Data::Random && job.op != Op::Randrw {
        result.stamp = Some(verify::Stamp {
            jobs: outcomes
                .iter()
                .enumerate()
                .map(|(j, o)| verify::StampJob {
                    start: job.offset + j as u64 * plan.region,
                    len: plan.region,
                    bs: job.bs,
                    seed: run_seed.wrapping_add(j as u64 * 0x9E37_79B9_7F4A_7C15),
                    writes: o.writes_done,
                    random: job.op.is_random(),
                })
                .collect(),
        });
    }
    if job.verify
        && let Some(stamp) = &result.stamp
    {
        let granularity = target.info.logical_block_size.unwrap_or(512);
        result.verify = Some(match target.reopen_for_reading() {
            Ok(f) => verify::verify(
                &f,
                stamp,
                &verify::ReadBack {
                    granularity,
                    max_errors: job.max_errors.unwrap_or(1000),
                    cancel: &cancel,
                },
            ),
            Err(e) => verify::VerifyReport {
                stopped: Some(format!("cannot open the target to read it back: {e}")),
                ..Default::default()
            },
        });
    }
    let ours = result.read_bytes + result.write_bytes;
    let others = OtherIo::between(root, &procs0, &procs1, ours);
    if let (Some(a), Some(b)) = (&snap0, &snap1) {
        let other_read = others.as_ref().map_or(0.0, |o| o.read_bytes);
        explain(root, job, &target, a, b, other_read, &mut result);
    }
    if let Some(f) = others.map(|o| o.finding(ours)) {
        result
            .warnings
            .push(Warning::new(f.kind, f.message.clone()));
        result.findings.push(f);
    }
    let issue = findings::Issue {
        uring: engine_used == EngineKind::Uring,
        io_workers,
        cpus_available: crate::sys::allowed_cpus().map_or(1, |c| c.len()),
        mean_latency_ns: result.latency_ns.mean,
        halt_poll_ns: findings::halt_poll_ns(root),
    };
    let device = target.info.device.clone().unwrap_or_default();
    let never_written = unwritten
        .as_ref()
        .and_then(|u| unwritten::finding(job, &spec.path, &target.store, u));
    // Where the store could not say, what the reads brought back: zeros. Not on a scratch file
    // laid out with the zeros the user asked for (`--data zero`, which has its own warning).
    let laid_out_zeros = job.data == Data::Zero && target.info.test_file.is_some();
    let zeros_read = (never_written.is_none() && !laid_out_zeros).then(|| {
        let mut zeros = unwritten::ZeroSampler::for_region(plan.region);
        for o in &outcomes {
            zeros.add(&o.zeros);
        }
        let file = target.info.kind == "file";
        unwritten::zeros_finding(job, &spec.path, &device, file, plan.total, &zeros)
    });
    // Memory under the target first: it changes what every other figure means.
    let block = target
        .info
        .device
        .as_deref()
        .filter(|_| target.info.kind == "block");
    let cache_below = target
        .cache_below
        .as_ref()
        .map(|c| findings::cache_below(block, c));
    // The device holding a file: how many requests it had in flight (none when its statistics
    // are off).
    let aqu_sz = result
        .diskstats
        .iter()
        .find(|x| x.disk_device == device && !x.stats_off)
        .map(|x| x.aqu_sz);
    let partial_block = target.fs_block.as_ref().and_then(|fs| {
        let written = result
            .device_bytes
            .as_ref()
            .filter(|b| b.device == device)
            .map(|b| (b.written, result.write_bytes));
        findings::partial_fs_block(job, fs, &device, aqu_sz, written)
    });
    for f in cache_below
        .into_iter()
        .chain(partial_block)
        .chain(findings::io_worker_wakeups(job, issue, &device))
        .chain(never_written)
        .chain(zeros_read.flatten())
    {
        result
            .warnings
            .push(Warning::new(f.kind, f.message.clone()));
        result.findings.push(f);
    }
    let info = target.info.clone();
    drop(target);
    Ok((info, result))
}

/// Adds the diskstats summary and findings of the devices under the test to `result`.
fn explain(
    root: &SysRoot,
    job: &Job,
    target: &target::OpenTarget,
    a: &crate::stats::Snapshot,
    b: &crate::stats::Snapshot,
    other_read: f64,
    result: &mut RunResult,
) {
    use findings::{Activity, Moved, analyze};
    let seconds = b.at.saturating_duration_since(a.at).as_secs_f64();
    let mut devices = Vec::new();
    let mut stats_off = Vec::new();
    for name in &target.watch {
        if let (Some(p), Some(c)) = (a.devices.get(name), b.devices.get(name)) {
            let d = c.delta(p);
            let mut x = crate::stats::compute(name, &d, seconds);
            x.stats_off = crate::stats::iostats_disabled(root, name);
            if x.stats_off {
                stats_off.push(name.clone());
            }
            // A device with queue/iostats 0 may count its I/O or not (a loop device counted
            // nothing of an 8M write test, "read 0B and wrote 0B"; zram, a bio driver, still
            // counted its writes here), and nothing tells which: its bytes are not said, and the
            // next device under the test says them.
            if result.device_bytes.is_none() && !x.stats_off {
                result.device_bytes = Some(result::DeviceBytes {
                    device: name.clone(),
                    read: d.sectors_read * 512,
                    written: d.sectors_written * 512,
                });
            }
            result.diskstats.push(x);
            devices.push((name.clone(), d));
        }
    }
    let activity = Activity {
        devices,
        seconds,
        stats_off,
        logical_block_size: target.info.logical_block_size.unwrap_or(512),
        write_cache: target.info.write_cache.clone(),
        in_ram: target
            .info
            .device
            .as_deref()
            .is_some_and(crate::device::in_ram),
        below_count: target.below_count,
        fs_block: target.fs_block.clone(),
        other_read_bytes: other_read,
    };
    let moved = Moved {
        read_bytes: result.read_bytes,
        write_bytes: result.write_bytes,
    };
    let findings = analyze(job, moved, &activity, crate::sys::page_size());
    for f in &findings {
        // A measured finding replaces the a-priori warning of the same kind.
        result.warnings.retain(|w| w.kind != f.kind);
        result
            .warnings
            .push(Warning::new(f.kind, f.message.clone()));
    }
    result.findings = findings;
}

/// What the job's own settings make a reader of its result need to know.
pub fn job_warnings(job: &Job, engine: EngineKind) -> Vec<Warning> {
    let mut w = Vec::new();
    if job.mode == Mode::Buffered && job.op.writes() {
        w.push(Warning::new(
            "page_cache",
            "buffered writes without a sync measure the page cache (RAM), not the device; \
             use --mode fdatasync (dd conv=fdatasync) or --mode direct",
        ));
    }
    if matches!(job.mode, Mode::Buffered | Mode::Fdatasync) && job.op.reads() {
        w.push(Warning::new(
            "page_cache",
            "buffered reads may come from the page cache; use --mode nocache or --mode direct",
        ));
    }
    if job.data == Data::Zero && job.op.writes() {
        w.push(Warning::new(
            "zeros",
            "zeros compress: a compressing file system (ZFS, btrfs), zram or an SSD controller \
             will flatter this result; use --data random (the default)",
        ));
    }
    if engine == EngineKind::Psync && job.iodepth > 1 {
        w.push(Warning::new(
            "psync_iodepth",
            format!(
                "pread/pwrite are synchronous: iodepth {} ran as 1 per job",
                job.iodepth
            ),
        ));
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

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
            for w in job_warnings(&job, EngineKind::Uring) {
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

    #[test]
    fn the_fallback_note_names_why_io_uring_failed() {
        let enosys = uring_unavailable_note(&std::io::Error::from_raw_os_error(libc::ENOSYS));
        assert!(
            enosys.contains("seccomp") && enosys.contains("fell back to pread/pwrite"),
            "{enosys}"
        );
        let other = uring_unavailable_note(&std::io::Error::from_raw_os_error(libc::ENOMEM));
        assert!(other.contains("io_uring_setup failed"), "{other}");
    }
}
