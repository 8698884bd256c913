//! The `blkscope` command line: clap definitions and the headless commands.

use std::io::{self, Write};
use std::path::PathBuf;

use clap::{Parser, Subcommand};

/// Like eprintln!, but a closed stderr (a dropped SSH session) is not a panic.
macro_rules! say {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($t)*);
    }};
}

use crate::device::{self, Device, DeviceTree, DiscoverOptions, SafetyReport, WriteSafety};
use crate::engine::job::{SizeSpec, parse_duration, parse_size, parse_size_or_percent};
use crate::engine::{self, Data, EngineKind, Job, Mode, Op, RunResult, TargetSpec};
use crate::sysroot::SysRoot;
use crate::units::fmt_size;

#[derive(Debug, Parser)]
#[command(
    name = "blkscope",
    version,
    about = "Test and watch Linux block devices honestly",
    long_about = "Test and watch Linux block devices honestly: every device with the properties \
                  that decide how to test it, a safety check before any write, and (in later \
                  versions) io_uring tests with live iostat -x figures."
)]
pub struct Cli {
    /// Read sysfs and procfs under this directory instead of / (for fixture trees and chroots).
    #[arg(long, global = true, value_name = "DIR")]
    pub root: Option<PathBuf>,

    /// Where the TUI's scratch file goes (default: the current directory).
    #[arg(long, value_name = "DIR")]
    pub dir: Option<PathBuf>,

    /// Draw the TUI with ASCII and dot markers instead of line drawing and braille (automatic
    /// on TERM=linux, vt100 and dumb).
    #[arg(long)]
    pub ascii: bool,

    /// Redraw the TUI at most this many times a second.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=60))]
    pub fps: u32,

    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// List every block device, tree-ordered like lsblk, with its write safety.
    List {
        /// Print {"devices": [...]} as JSON.
        #[arg(long)]
        json: bool,
        /// Do not read device nodes for signatures (faster; no root needed).
        #[arg(long)]
        no_signatures: bool,
        /// Draw the tree with ASCII instead of line-drawing characters.
        #[arg(long)]
        ascii: bool,
        /// Also list empty loop devices and RAM disks (lsblk hides them too).
        #[arg(long, short)]
        all: bool,
    },
    /// Say whether a write test may run on TARGET, and why.
    ///
    /// Exit status: 0 clear, 3 confirm (the device name must be typed back), 4 blocked.
    Check {
        /// A block device (/dev/sdb or sdb), a directory, or a regular file.
        target: String,
        /// Print {"target", "write_safety", "reasons": [...]} as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show /proc/diskstats in `iostat -x` terms, every interval (like `iostat -x -d -y`).
    Stat {
        /// Devices by name (sda) or path (/dev/sda); none means every whole device.
        devices: Vec<String>,
        /// Time between reports (e.g. 1s, 500ms).
        #[arg(long, default_value = "1s", value_parser = parse_duration)]
        interval: std::time::Duration,
        /// Stop after N reports (default: until Ctrl-C).
        #[arg(long)]
        count: Option<u64>,
        /// One JSON object per report: {"timestamp", "devices": [...]}, with sysstat's keys.
        #[arg(long)]
        json: bool,
    },
    /// Run a test on TARGET (a block device, a directory for a scratch file, or a file).
    ///
    /// Exit status: 0 done, 1 failed at run time, 2 invalid job, 3 confirmation missing,
    /// 4 blocked.
    Run(RunArgs),
    /// List the suites: the articles' recipes, and yours from $XDG_CONFIG_HOME/blkscope/suites.
    Suites {
        #[arg(long)]
        json: bool,
    },
    /// Run a suite on TARGET, each test repeated (default: the suite's own count, usually 3).
    Suite {
        name: String,
        target: String,
        #[arg(long)]
        repeat: Option<u32>,
        #[arg(long, value_name = "NAME")]
        confirm: Option<String>,
        #[arg(long)]
        force: bool,
        #[arg(long)]
        json: bool,
        /// Do not save the run in $XDG_DATA_HOME/blkscope/runs.
        #[arg(long)]
        no_save: bool,
    },
    /// Explain a suite or a test: the dd and fio lines, what each flag does, the trap it avoids,
    /// and what the article found. NAME: a suite, SUITE/TEST, or a built-in test (seq-write, ...).
    Explain {
        name: String,
        /// The target to put in the command lines.
        #[arg(long, default_value = "/dev/sdX")]
        target: String,
        /// The target's logical block size, for tests sized in logical blocks.
        #[arg(long, default_value_t = 512)]
        logical_block_size: u64,
    },
    /// Export a saved run (a path, an id, or `last`) as Markdown, CSV or JSON.
    Report {
        run: String,
        #[arg(long, default_value = "md", value_parser = ["md", "csv", "json"])]
        format: String,
    },
    /// Make throwaway loop devices (512- and 4096-byte sectors) to practise on, and open the TUI
    /// with them; everything is removed on exit (or at the next start, after a crash).
    Lab {
        /// Size of each lab device.
        #[arg(long, default_value = "256M", value_parser = parse_size)]
        size: u64,
        /// Give each device a GPT with two partitions.
        #[arg(long)]
        partitioned: bool,
        /// Print the devices as one JSON line and wait for Ctrl-C or SIGTERM instead of opening
        /// the TUI (for scripts).
        #[arg(long)]
        json: bool,
        /// Only remove labs left by a blkscope that did not exit cleanly.
        #[arg(long)]
        cleanup: bool,
    },
    /// Compare two saved runs test by test: throughput, IOPS and latency, with the ratio.
    Compare {
        a: String,
        b: String,
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    /// A block device (/dev/sdb), a directory (a scratch file is created there and removed), or
    /// an existing file (writes need --force).
    pub target: String,
    /// read, write, randread, randwrite or randrw.
    #[arg(long, default_value = "write", value_parser = parse_op)]
    pub op: Op,
    /// Block size: 512, 4k, 1M, 1G (K/M/G powers of 1024; KB/MB/GB powers of 1000).
    #[arg(long, default_value = "1M", value_parser = parse_size)]
    pub bs: u64,
    /// Bytes over all jobs, or a percentage of the device (default 1G, or the whole target if
    /// smaller; with --runtime, the whole target).
    #[arg(long, value_parser = parse_size_or_percent)]
    pub size: Option<crate::engine::job::Sized>,
    /// Run for this long (e.g. 10s) instead of once over the size.
    #[arg(long, value_parser = parse_duration)]
    pub runtime: Option<std::time::Duration>,
    /// Run this long first without counting it (e.g. 2s).
    #[arg(long, value_parser = parse_duration)]
    pub ramp: Option<std::time::Duration>,
    /// I/Os in flight per job (io_uring).
    #[arg(long, default_value_t = 1)]
    pub iodepth: u32,
    /// Concurrent jobs (threads), each in its own region: job j starts at offset + j x region.
    #[arg(long, default_value_t = 1)]
    pub jobs: u32,
    /// Where the first region starts.
    #[arg(long, default_value = "0", value_parser = parse_size)]
    pub offset: u64,
    /// direct (O_DIRECT), dsync (O_DSYNC), sync (O_SYNC), fdatasync (buffered + fdatasync at the
    /// end, timed), buffered (no sync: measures RAM), nocache (reads after dropping the cache).
    #[arg(long, default_value = "direct", value_parser = parse_mode)]
    pub mode: Mode,
    /// random (incompressible, unique per block) or zero (compresses: flatters some storage).
    #[arg(long, default_value = "random", value_parser = parse_data)]
    pub data: Data,
    /// uring (io_uring) or psync (pread/pwrite).
    #[arg(long, default_value = "uring", value_parser = parse_engine)]
    pub engine: EngineKind,
    /// For randrw: percent of I/Os that read.
    #[arg(long, default_value_t = 50)]
    pub rwmixread: u8,
    /// Use io_uring SQPOLL (a kernel thread polls the queue; costs a core).
    #[arg(long)]
    pub sqpoll: bool,
    /// Interval between live samples (--ndjson).
    #[arg(long, default_value = "100ms", value_parser = parse_duration)]
    pub interval: std::time::Duration,
    /// Run the test N times and report min/median/max.
    #[arg(long, default_value_t = 1)]
    pub repeat: u32,
    /// The device name, typed back, to allow a write on a device that carries data.
    #[arg(long, value_name = "NAME")]
    pub confirm: Option<String>,
    /// Allow a write test to overwrite an existing regular file named as TARGET.
    #[arg(long)]
    pub force: bool,
    /// Print {"version": 1, "target": {...}, "results": [...]} at the end.
    #[arg(long, conflicts_with = "ndjson")]
    pub json: bool,
    /// Stream one JSON object per interval sample, then the result object.
    #[arg(long)]
    pub ndjson: bool,
    /// Do not save the run in $XDG_DATA_HOME/blkscope/runs.
    #[arg(long)]
    pub no_save: bool,
}

fn parse_op(s: &str) -> Result<Op, String> {
    serde_json::from_value(serde_json::Value::String(s.to_ascii_lowercase()))
        .map_err(|_| format!("'{s}': use read, write, randread, randwrite or randrw"))
}

fn parse_mode(s: &str) -> Result<Mode, String> {
    serde_json::from_value(serde_json::Value::String(s.to_ascii_lowercase()))
        .map_err(|_| format!("'{s}': use direct, dsync, sync, fdatasync, buffered or nocache"))
}

fn parse_data(s: &str) -> Result<Data, String> {
    serde_json::from_value(serde_json::Value::String(s.to_ascii_lowercase()))
        .map_err(|_| format!("'{s}': use random or zero"))
}

fn parse_engine(s: &str) -> Result<EngineKind, String> {
    match s.to_ascii_lowercase().as_str() {
        "uring" | "io_uring" => Ok(EngineKind::Uring),
        "psync" | "sync" | "pread" => Ok(EngineKind::Psync),
        _ => Err(format!("'{s}': use uring or psync")),
    }
}

impl RunArgs {
    pub fn job(&self) -> Job {
        Job {
            op: self.op,
            bs: self.bs,
            iodepth: self.iodepth,
            jobs: self.jobs,
            offset: self.offset,
            size: self.size.map(SizeSpec::Text),
            runtime: self.runtime,
            ramp: self.ramp,
            mode: self.mode,
            data: self.data,
            engine: self.engine,
            rwmixread: self.rwmixread,
            sqpoll: self.sqpoll,
            interval: Some(self.interval),
            drop_cache_first: false,
        }
    }
}

/// Runs the command line; returns the process exit status.
pub fn run(cli: Cli) -> Result<i32, crate::Error> {
    let root = cli.root.map(SysRoot::at).unwrap_or_default();
    let stdout = io::stdout();
    let mut out = stdout.lock();
    match cli.command {
        None => {
            use std::io::IsTerminal;
            if io::stdout().is_terminal() && io::stdin().is_terminal() {
                drop(out);
                let dir = match cli.dir {
                    Some(d) => d,
                    None => std::env::current_dir()
                        .map_err(|e| crate::Error::io(std::path::Path::new("."), e))?,
                };
                if !dir.is_dir() {
                    return Err(crate::Error::TargetNotFound { path: dir });
                }
                crate::ui::run(crate::ui::UiOptions {
                    root,
                    dir,
                    fps: cli.fps,
                    look: crate::ui::look_from_env(cli.ascii),
                    lab: Vec::new(),
                })?;
                return Ok(0);
            }
            let tree = device::discover(&root, &DiscoverOptions::default())?.listed(false);
            write_table(&mut out, &tree, !utf8_locale())?;
            writeln_io(
                &mut out,
                "\nstdout is not a terminal, so the interactive view did not start. Headless: \
                 `blkscope list --json`, `blkscope check TARGET`, `blkscope run TARGET --json`, \
                 `blkscope stat --json` (see `blkscope --help`).",
            )?;
            Ok(0)
        }
        Some(Command::List {
            json,
            no_signatures,
            ascii,
            all,
        }) => {
            let opts = DiscoverOptions {
                skip_signatures: no_signatures,
                ..Default::default()
            };
            let tree = device::discover(&root, &opts)?.listed(all);
            if json {
                write_json(&mut out, &tree)?;
            } else {
                write_table(&mut out, &tree, ascii || !utf8_locale())?;
            }
            Ok(0)
        }
        Some(Command::Check { target, json }) => {
            let report = device::safety::check(&root, &target)?;
            if json {
                write_json(&mut out, &report)?;
            } else {
                write_check(&mut out, &report)?;
            }
            Ok(report.write_safety.exit_code())
        }
        Some(Command::Run(args)) => run_cmd(&root, &args, &mut out),
        Some(Command::Suites { json }) => suites_cmd(json, &mut out),
        Some(Command::Suite {
            name,
            target,
            repeat,
            confirm,
            force,
            json,
            no_save,
        }) => {
            let spec = TargetSpec {
                path: target,
                confirm,
                force,
            };
            suite_cmd(&root, &name, &spec, repeat, json, no_save, &mut out)
        }
        Some(Command::Explain {
            name,
            target,
            logical_block_size,
        }) => explain_cmd(&name, &target, logical_block_size, &mut out),
        Some(Command::Report { run, format }) => {
            let path = crate::report::resolve(&run).map_err(crate::Error::Usage)?;
            let v = crate::report::load(&path).map_err(crate::Error::Usage)?;
            let text = crate::report::render(&v, &format).map_err(crate::Error::Usage)?;
            write!(out, "{text}").map_err(stdout_err)?;
            Ok(0)
        }
        Some(Command::Compare { a, b, json }) => compare_cmd(&a, &b, json, &mut out),
        Some(Command::Lab {
            size,
            partitioned,
            json,
            cleanup,
        }) => {
            if cleanup {
                let n = crate::lab::cleanup_stale();
                writeln_io(&mut out, &format!("removed {n} leftover lab device(s)"))?;
                return Ok(0);
            }
            let lab = crate::lab::Lab::create(&crate::lab::LabOptions { size, partitioned })?;
            use std::io::IsTerminal;
            if !json && io::stdout().is_terminal() && io::stdin().is_terminal() {
                drop(out);
                let names = lab
                    .devices
                    .iter()
                    .map(|d| (d.name.clone(), format!("lab, {}-byte sectors", d.sector)))
                    .collect();
                let r = crate::ui::run(crate::ui::UiOptions {
                    root,
                    dir: lab.dir.clone(),
                    fps: cli.fps,
                    look: crate::ui::look_from_env(cli.ascii),
                    lab: names,
                });
                drop(lab);
                r?;
                return Ok(0);
            }
            let cancel = cancel_on_signals();
            if json {
                let v = serde_json::json!({"dir": lab.dir, "devices": lab.devices});
                writeln_io(&mut out, &v.to_string())?;
            } else {
                for d in &lab.devices {
                    writeln_io(
                        &mut out,
                        &format!(
                            "{}  {}-byte sectors  over {}",
                            d.path,
                            d.sector,
                            d.backing.display()
                        ),
                    )?;
                }
                writeln_io(&mut out, "The lab stays until Ctrl-C (or SIGTERM).")?;
            }
            out.flush().map_err(stdout_err)?;
            while !cancel.load(std::sync::atomic::Ordering::Relaxed) {
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            drop(lab);
            say!("blkscope: lab removed");
            Ok(0)
        }
        Some(Command::Stat {
            devices,
            interval,
            count,
            json,
        }) => stat_cmd(&root, &devices, interval, count, json, &mut out),
    }
}

/// Cancels on Ctrl-C, SIGTERM and SIGHUP; a second Ctrl-C exits at once.
fn cancel_on_signals() -> std::sync::Arc<std::sync::atomic::AtomicBool> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let cancel = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM, SIGHUP] {
        let _ = signal_hook::flag::register_conditional_shutdown(sig, 130, cancel.clone());
        let _ = signal_hook::flag::register(sig, cancel.clone());
    }
    cancel
}

fn run_cmd(root: &SysRoot, args: &RunArgs, out: &mut impl Write) -> Result<i32, crate::Error> {
    use std::io::IsTerminal;
    let job = args.job();
    let spec = TargetSpec {
        path: args.target.clone(),
        confirm: args.confirm.clone(),
        force: args.force,
    };
    let cancel = cancel_on_signals();
    let show_bar = io::stderr().is_terminal() && !args.ndjson;
    let mut results = Vec::new();
    let mut target_info = None;
    for i in 0..args.repeat.max(1) {
        if cancel.load(std::sync::atomic::Ordering::Relaxed) {
            break;
        }
        let bar = show_bar.then(|| {
            let b = indicatif::ProgressBar::new(1000);
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "{prefix} [{bar:30}] {percent:>3}% {msg} ETA {eta}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            b.set_prefix(format!("run {}/{}", i + 1, args.repeat.max(1)));
            b
        });
        let mut ndjson_err = None;
        let r = engine::run(root, &spec, &job, cancel.clone(), |s| {
            if let Some(b) = &bar {
                b.set_position((s.progress.unwrap_or(0.0) * 1000.0) as u64);
                b.set_message(format!(
                    "{}/s {:.0} IOPS",
                    fmt_size(s.bytes_per_sec as u64),
                    s.iops
                ));
            }
            if args.ndjson && ndjson_err.is_none() {
                let mut v = serde_json::to_value(s).unwrap_or_default();
                v["type"] = "sample".into();
                v["run"] = (i + 1).into();
                if let Err(e) = writeln!(out, "{v}").and_then(|_| out.flush()) {
                    ndjson_err = Some(e);
                }
            }
        });
        if let Some(b) = &bar {
            b.finish_and_clear();
        }
        if let Some(e) = ndjson_err {
            return Err(stdout_err(e));
        }
        let (info, result) = match r {
            Ok(x) => x,
            Err(e) => {
                say!("blkscope: {e}");
                return Ok(e.exit_code());
            }
        };
        if !args.json && !args.ndjson {
            write_result_human(out, &info, &result, i + 1, args.repeat)?;
        }
        target_info = Some(info);
        results.push(result);
    }
    let failed = results.iter().any(|r| r.error.is_some() || r.cancelled);
    let result = if results.len() > 1 {
        engine::report::with_repeats(results)
    } else if let Some(r) = results.pop() {
        r
    } else {
        return Ok(1);
    };
    if args.repeat > 1 && !args.json && !args.ndjson {
        write_spread_human(out, &result)?;
    }
    if !args.no_save {
        save_run(
            "run",
            &job.label(),
            root,
            target_info.as_ref(),
            &[(job.label(), &job, &result)],
        );
    }
    let doc = serde_json::json!({
        "version": 1,
        "target": target_info,
        "results": [result],
    });
    if args.json {
        write_json(out, &doc)?;
    } else if args.ndjson {
        let mut d = doc;
        d["type"] = "result".into();
        writeln_io(out, &d.to_string())?;
    }
    Ok(if failed { 1 } else { 0 })
}

/// The devices `stat` reports on, in order; an unknown name is an error.
fn stat_devices(root: &SysRoot, names: &[String]) -> Result<Vec<String>, crate::Error> {
    let snap = crate::stats::Snapshot::read(root)?;
    if names.is_empty() {
        let tree = device::discover(
            root,
            &DiscoverOptions {
                skip_signatures: true,
                ..Default::default()
            },
        )?;
        return Ok(tree
            .listed(false)
            .devices
            .iter()
            .filter(|d| !d.is_partition() && snap.devices.contains_key(&d.name))
            .map(|d| d.name.clone())
            .collect());
    }
    names
        .iter()
        .map(|n| {
            let name = n.strip_prefix("/dev/").unwrap_or(n);
            let name = std::fs::canonicalize(n)
                .ok()
                .filter(|_| root.is_live() && n.starts_with('/'))
                .and_then(|p| p.file_name().map(|f| f.to_string_lossy().into_owned()))
                .unwrap_or_else(|| name.to_string());
            if snap.devices.contains_key(&name) {
                Ok(name)
            } else {
                Err(crate::Error::UnknownDevice {
                    path: PathBuf::from(n),
                    detail: format!(
                        "it is not in {}; `blkscope list` shows the devices",
                        root.proc("diskstats").display()
                    ),
                })
            }
        })
        .collect()
}

fn stat_cmd(
    root: &SysRoot,
    names: &[String],
    interval: std::time::Duration,
    count: Option<u64>,
    json: bool,
    out: &mut impl Write,
) -> Result<i32, crate::Error> {
    let wanted = stat_devices(root, names)?;
    let cancel = cancel_on_signals();
    let mut sampler = crate::stats::Sampler::new(root.clone());
    sampler.prime()?;
    let mut n = 0u64;
    while count.is_none_or(|c| n < c) {
        // Sleep in short steps so Ctrl-C ends it promptly.
        let until = std::time::Instant::now() + interval;
        while std::time::Instant::now() < until {
            if cancel.load(std::sync::atomic::Ordering::Relaxed) {
                return Ok(0);
            }
            std::thread::sleep(
                until
                    .saturating_duration_since(std::time::Instant::now())
                    .min(std::time::Duration::from_millis(50)),
            );
        }
        let all = sampler.sample()?;
        let rows: Vec<&crate::stats::IostatX> = wanted
            .iter()
            .filter_map(|w| all.iter().find(|x| &x.disk_device == w))
            .collect();
        if json {
            let doc = serde_json::json!({
                "timestamp": rfc3339_now(),
                "devices": rows,
            });
            writeln_io(out, &doc.to_string())?;
        } else {
            write_iostat_table(out, &rows)?;
        }
        out.flush().map_err(stdout_err)?;
        n += 1;
    }
    Ok(0)
}

/// The current time as `YYYY-MM-DDTHH:MM:SSZ` (UTC).
pub fn rfc3339_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let (days, rem) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// An `iostat -x -d` table.
fn write_iostat_table(
    out: &mut impl Write,
    rows: &[&crate::stats::IostatX],
) -> Result<(), crate::Error> {
    let cols = [
        "r/s", "rkB/s", "rrqm/s", "%rrqm", "r_await", "rareq-sz", "w/s", "wkB/s", "wrqm/s",
        "%wrqm", "w_await", "wareq-sz", "d/s", "dkB/s", "drqm/s", "%drqm", "d_await", "dareq-sz",
        "f/s", "f_await", "aqu-sz", "%util",
    ];
    let mut header = format!("{:<16}", "Device");
    for c in cols {
        header.push_str(&format!(" {c:>8}"));
    }
    writeln_io(out, &header)?;
    for x in rows {
        if x.stats_off {
            writeln_io(
                out,
                &format!(
                    "{:<16} statistics off (queue/iostats = 0): no figures",
                    x.disk_device
                ),
            )?;
            continue;
        }
        let v = [
            x.r_s, x.rkb_s, x.rrqm_s, x.rrqm, x.r_await, x.rareq_sz, x.w_s, x.wkb_s, x.wrqm_s,
            x.wrqm, x.w_await, x.wareq_sz, x.d_s, x.dkb_s, x.drqm_s, x.drqm, x.d_await, x.dareq_sz,
            x.f_s, x.f_await, x.aqu_sz, x.util,
        ];
        let mut line = format!("{:<16}", x.disk_device);
        for n in v {
            line.push_str(&format!(" {n:>8.2}"));
        }
        writeln_io(out, &line)?;
    }
    writeln_io(out, "")
}

/// Saves a run (a failure to save is a warning on stderr, not an error of the run).
fn save_run(
    kind: &str,
    name: &str,
    root: &SysRoot,
    target: Option<&engine::TargetInfo>,
    tests: &[(String, &Job, &RunResult)],
) {
    let device = target.and_then(|t| t.device.clone()).and_then(|n| {
        // Properties only: reading signatures now would put reads of our own into the
        // device's diskstats right after the test.
        let opts = DiscoverOptions {
            skip_signatures: true,
            ..Default::default()
        };
        device::discover(root, &opts)
            .ok()
            .and_then(|tree| tree.get(&n).cloned())
    });
    let saved: Vec<crate::report::SavedTest> = tests
        .iter()
        .map(|(n, j, r)| crate::report::SavedTest {
            name: n.clone(),
            job: j,
            result: r,
        })
        .collect();
    match crate::report::save(kind, name, target, device.as_ref(), &saved) {
        Ok(p) => say!("blkscope: saved {}", p.display()),
        Err(e) => say!("blkscope: warning: could not save the run: {e}"),
    }
}

fn suites_cmd(json: bool, out: &mut impl Write) -> Result<i32, crate::Error> {
    let suites = crate::suite::all().map_err(|e| crate::Error::Usage(e.to_string()))?;
    if json {
        let v: Vec<_> = suites
            .iter()
            .map(|s| {
                serde_json::json!({
                    "name": s.name, "title": s.title, "source": s.source, "about": s.about,
                    "repeat": s.repeat, "tests": s.tests.iter().map(|t| &t.name).collect::<Vec<_>>(),
                    "origin": s.origin,
                })
            })
            .collect();
        return write_json(out, &v).map(|_| 0);
    }
    for s in &suites {
        let origin = if s.origin == "builtin" {
            String::new()
        } else {
            format!("  [{}]", s.origin)
        };
        writeln_io(
            out,
            &format!(
                "{:<12} {} ({} tests, {} runs each){origin}",
                s.name,
                s.title,
                s.tests.len(),
                s.repeat
            ),
        )?;
    }
    writeln_io(
        out,
        "\nRun one: blkscope suite NAME TARGET   Explain one: blkscope explain NAME",
    )?;
    Ok(0)
}

fn suite_cmd(
    root: &SysRoot,
    name: &str,
    spec: &TargetSpec,
    repeat: Option<u32>,
    json: bool,
    no_save: bool,
    out: &mut impl Write,
) -> Result<i32, crate::Error> {
    let suite = crate::suite::find(name)
        .map_err(|e| crate::Error::Usage(e.to_string()))?
        .ok_or_else(|| {
            crate::Error::Usage(format!("no suite '{name}'; `blkscope suites` lists them"))
        })?;
    let repeat = repeat.unwrap_or(suite.repeat);
    let cancel = cancel_on_signals();
    let progress = |t: &str, i: u32, n: u32| {
        if !json {
            say!("blkscope: {}: {t} (run {i}/{n})", suite.name);
        }
    };
    let outcome =
        match crate::suite::run_suite(root, &suite, spec, repeat, cancel, progress, |_| {}) {
            Ok(o) => o,
            Err(e) => {
                say!("blkscope: {e}");
                return Ok(e.exit_code());
            }
        };
    if !no_save {
        let tests: Vec<(String, &Job, &RunResult)> = outcome
            .tests
            .iter()
            .map(|(t, j, r)| (t.name.clone(), j, r))
            .collect();
        save_run("suite", &suite.name, root, outcome.target.as_ref(), &tests);
    }
    let failed = outcome.cancelled
        || outcome
            .tests
            .iter()
            .any(|(_, _, r)| r.error.is_some() || r.cancelled);
    if json {
        let tests: Vec<_> = outcome
            .tests
            .iter()
            .map(|(t, j, r)| serde_json::json!({"name": t.name, "about": t.about, "job": j, "result": r}))
            .collect();
        write_json(
            out,
            &serde_json::json!({
                "version": 1, "suite": suite.name, "title": suite.title, "repeat": repeat,
                "target": outcome.target, "tests": tests, "cancelled": outcome.cancelled,
            }),
        )?;
        return Ok(if failed { 1 } else { 0 });
    }
    let target = outcome
        .target
        .as_ref()
        .map(|t| t.path.clone())
        .unwrap_or_else(|| spec.path.clone());
    writeln_io(
        out,
        &format!("{} on {target} ({repeat} run(s) each)", suite.title),
    )?;
    writeln_io(
        out,
        &format!(
            "  {:<28} {:>10} {:>19} {:>9} {:>9} {:>7}",
            "test", "MB/s", "(min-max)", "IOPS", "p99", "spread"
        ),
    )?;
    for (t, _, r) in &outcome.tests {
        let (lo, hi, spread) = match &r.spread {
            Some(s) => (
                s.bytes_per_sec.min / 1e6,
                s.bytes_per_sec.max / 1e6,
                format!("{:.1}%", s.relative_spread * 100.0),
            ),
            None => (r.bytes_per_sec / 1e6, r.bytes_per_sec / 1e6, "-".into()),
        };
        let med = r
            .spread
            .as_ref()
            .map(|s| s.bytes_per_sec.median)
            .unwrap_or(r.bytes_per_sec);
        writeln_io(
            out,
            &format!(
                "  {:<28} {:>10.1} {:>19} {:>9.0} {:>9} {:>7}",
                t.name,
                med / 1e6,
                format!("({lo:.1}-{hi:.1})"),
                r.iops,
                fmt_ns(r.latency_ns.p99 as f64),
                spread
            ),
        )?;
        if r.streams.len() > 1 {
            let s: Vec<String> = r
                .streams
                .iter()
                .map(|s| format!("job {} {:.1} MB/s", s.job, s.bytes_per_sec / 1e6))
                .collect();
            writeln_io(out, &format!("      per stream: {}", s.join(", ")))?;
        }
        if let Some(d) = &r.device_bytes {
            writeln_io(
                out,
                &format!(
                    "      {} read {} and wrote {} while it ran",
                    d.device,
                    fmt_size(d.read),
                    fmt_size(d.written)
                ),
            )?;
        }
        for w in &r.warnings {
            writeln_io(out, &format!("      [{}] {}", w.kind, w.message))?;
        }
        if let Some(e) = &r.error {
            writeln_io(out, &format!("      error: {} {}", e.op, e.message))?;
        }
    }
    if let Some(found) = &suite.found {
        writeln_io(out, &format!("\nWhat the article found: {found}"))?;
    }
    if outcome.cancelled {
        writeln_io(out, "cancelled: the suite stopped early")?;
    }
    Ok(if failed { 1 } else { 0 })
}

fn explain_job(
    out: &mut impl Write,
    name: &str,
    about: Option<&str>,
    job: &Job,
    target: &str,
) -> Result<(), crate::Error> {
    let total = match job.size {
        Some(SizeSpec::Bytes(b)) | Some(SizeSpec::Text(crate::engine::job::Sized::Bytes(b))) => b,
        _ => crate::engine::job::DEFAULT_SIZE,
    };
    writeln_io(out, &format!("{name}: {}", job.label()))?;
    if let Some(a) = about {
        writeln_io(out, &format!("  {a}"))?;
    }
    let mut run = format!(
        "blkscope run {target} --op {} --bs {} --iodepth {} --jobs {} --mode {}",
        job.op.as_str(),
        job.bs,
        job.iodepth,
        job.jobs,
        job.mode.as_str()
    );
    if let Some(s) = job.size {
        run.push_str(&format!(" --size {}", s.resolve(0).max(total)));
    }
    if let Some(r) = job.runtime {
        run.push_str(&format!(" --runtime {}ms", r.as_millis()));
    }
    if job.data == Data::Zero {
        run.push_str(" --data zero");
    }
    writeln_io(out, &format!("  blkscope: {run}"))?;
    match engine::explain::dd_command(job, target, total) {
        Ok(dd) => writeln_io(out, &format!("  dd:       {dd}"))?,
        Err(why) => writeln_io(out, &format!("  dd:       (none: {why})"))?,
    }
    writeln_io(
        out,
        &format!(
            "  fio:      {}",
            engine::explain::fio_command(job, target, total)
        ),
    )?;
    for n in engine::explain::flag_notes(job) {
        writeln_io(out, &format!("    - {n}"))?;
    }
    for t in engine::explain::traps(job) {
        writeln_io(out, &format!("  trap: {t}"))?;
    }
    Ok(())
}

fn explain_cmd(
    name: &str,
    target: &str,
    lbs: u64,
    out: &mut impl Write,
) -> Result<i32, crate::Error> {
    let suites = crate::suite::all().map_err(|e| crate::Error::Usage(e.to_string()))?;
    let (suite_name, test_name) = match name.split_once('/') {
        Some((s, t)) => (s, Some(t)),
        None => (name, None),
    };
    if let Some(s) = suites.iter().find(|s| s.name == suite_name) {
        if test_name.is_none() {
            writeln_io(out, &format!("{}: {}", s.name, s.title))?;
            if let Some(src) = &s.source {
                writeln_io(out, &format!("From: {src}"))?;
            }
            writeln_io(out, &s.about)?;
            if let Some(f) = &s.found {
                writeln_io(out, &format!("What the article found: {f}"))?;
            }
            writeln_io(out, &format!("Each test runs {} time(s).\n", s.repeat))?;
        }
        let mut shown = 0;
        for t in &s.tests {
            if test_name.is_some_and(|n| n != t.name) {
                continue;
            }
            explain_job(out, &t.name, t.about.as_deref(), &t.job(lbs), target)?;
            writeln_io(out, "")?;
            shown += 1;
        }
        if shown == 0 {
            return Err(crate::Error::Usage(format!(
                "suite {} has no test '{}'; `blkscope explain {}` lists them",
                s.name,
                test_name.unwrap_or(""),
                s.name
            )));
        }
        return Ok(0);
    }
    if let Some(p) = engine::presets::builtin(lbs)
        .into_iter()
        .find(|p| p.id == name)
    {
        explain_job(out, p.name, Some(p.about), &p.job, target)?;
        return Ok(0);
    }
    Err(crate::Error::Usage(format!(
        "no suite or test '{name}'; `blkscope suites` lists suites; tests: {}",
        engine::presets::builtin(lbs)
            .iter()
            .map(|p| p.id)
            .collect::<Vec<_>>()
            .join(", ")
    )))
}

fn compare_cmd(a: &str, b: &str, json: bool, out: &mut impl Write) -> Result<i32, crate::Error> {
    let load = |r: &str| {
        crate::report::resolve(r)
            .and_then(|p| crate::report::load(&p))
            .map_err(crate::Error::Usage)
    };
    let (va, vb) = (load(a)?, load(b)?);
    let diffs = crate::report::compare(&va, &vb);
    if diffs.is_empty() {
        return Err(crate::Error::Usage(format!(
            "{} and {} have no test in common",
            va["id"].as_str().unwrap_or(a),
            vb["id"].as_str().unwrap_or(b)
        )));
    }
    if json {
        write_json(out, &diffs)?;
        return Ok(0);
    }
    writeln_io(
        out,
        &format!(
            "A: {}\nB: {}",
            va["id"].as_str().unwrap_or(a),
            vb["id"].as_str().unwrap_or(b)
        ),
    )?;
    writeln_io(
        out,
        &format!(
            "{:<28} {:<7} {:>12} {:>12} {:>7}",
            "test", "", "A", "B", "B/A"
        ),
    )?;
    for d in &diffs {
        writeln_io(
            out,
            &format!(
                "{:<28} {:<7} {:>12.1} {:>12.1} {:>7}",
                d.test,
                d.metric,
                d.a,
                d.b,
                d.ratio.map(|r| format!("{r:.2}x")).unwrap_or("-".into())
            ),
        )?;
    }
    Ok(0)
}

fn fmt_ns(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.2} s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.2} ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.1} us", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

fn fmt_rate(bps: f64) -> String {
    format!(
        "{:.1} MiB/s ({:.1} MB/s)",
        bps / (1 << 20) as f64,
        bps / 1e6
    )
}

fn write_result_human(
    out: &mut impl Write,
    info: &engine::TargetInfo,
    r: &RunResult,
    run: u32,
    of: u32,
) -> Result<(), crate::Error> {
    let which = if of > 1 {
        format!(" (run {run}/{of})")
    } else {
        String::new()
    };
    writeln_io(
        out,
        &format!(
            "{} {} QD{} x{} {} {} data on {} via {}{which}",
            r.op,
            fmt_size(r.bs),
            r.iodepth,
            r.jobs,
            r.mode,
            r.data,
            info.test_file.as_deref().unwrap_or(&info.path),
            r.engine
        ),
    )?;
    writeln_io(
        out,
        &format!(
            "  {} in {:.3} s: {}, {:.0} IOPS",
            fmt_size(r.bytes),
            r.seconds,
            fmt_rate(r.bytes_per_sec),
            r.iops
        ),
    )?;
    let l = &r.latency_ns;
    writeln_io(
        out,
        &format!(
            "  latency: min {}  mean {}  p50 {}  p99 {}  p99.9 {}  max {}",
            fmt_ns(l.min as f64),
            fmt_ns(l.mean),
            fmt_ns(l.p50 as f64),
            fmt_ns(l.p99 as f64),
            fmt_ns(l.p99_9 as f64),
            fmt_ns(l.max as f64)
        ),
    )?;
    writeln_io(
        out,
        &format!(
            "  cpu: {:.2} s user, {:.2} s system ({:.2} us per I/O)",
            r.cpu.user_s, r.cpu.system_s, r.cpu.per_io_us
        ),
    )?;
    if r.streams.len() > 1 {
        for s in &r.streams {
            writeln_io(
                out,
                &format!(
                    "  job {} at offset {}: {} in {:.3} s, {}",
                    s.job,
                    fmt_size(s.offset),
                    fmt_size(s.bytes),
                    s.seconds,
                    fmt_rate(s.bytes_per_sec)
                ),
            )?;
        }
    }
    if let Some(n) = &r.engine_note {
        writeln_io(out, &format!("  note: {n}"))?;
    }
    for w in &r.warnings {
        writeln_io(out, &format!("  warning [{}]: {}", w.kind, w.message))?;
    }
    if let Some(e) = &r.error {
        writeln_io(
            out,
            &format!(
                "  error: {} {}{}",
                e.op,
                e.message,
                e.offset
                    .map(|o| format!(" at offset {o}"))
                    .unwrap_or_default()
            ),
        )?;
    }
    if r.cancelled {
        writeln_io(out, "  cancelled: the figures above are partial")?;
    }
    Ok(())
}

fn write_spread_human(out: &mut impl Write, r: &RunResult) -> Result<(), crate::Error> {
    if let Some(s) = &r.spread {
        writeln_io(
            out,
            &format!(
                "{} runs: min {}  median {}  max {}  (spread {:.1}% of the median)",
                s.runs,
                fmt_rate(s.bytes_per_sec.min),
                fmt_rate(s.bytes_per_sec.median),
                fmt_rate(s.bytes_per_sec.max),
                s.relative_spread * 100.0
            ),
        )?;
        writeln_io(
            out,
            &format!(
                "         IOPS min {:.0}  median {:.0}  max {:.0}",
                s.iops.min, s.iops.median, s.iops.max
            ),
        )?;
    }
    Ok(())
}

fn stdout_err(e: io::Error) -> crate::Error {
    crate::Error::io(std::path::Path::new("<stdout>"), e)
}

fn writeln_io(out: &mut impl Write, s: &str) -> Result<(), crate::Error> {
    writeln!(out, "{s}").map_err(stdout_err)
}

fn write_json<T: serde::Serialize>(out: &mut impl Write, v: &T) -> Result<(), crate::Error> {
    serde_json::to_writer_pretty(&mut *out, v).map_err(|e| stdout_err(e.into()))?;
    writeln_io(out, "")
}

fn utf8_locale() -> bool {
    ["LC_ALL", "LC_CTYPE", "LANG"]
        .iter()
        .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
        .is_some_and(|v| {
            let v = v.to_ascii_lowercase();
            v.contains("utf-8") || v.contains("utf8")
        })
}

/// Tree prefixes (`├─`, `└─`, `│ `) for devices in tree order.
fn tree_prefixes(devices: &[Device], ascii: bool) -> Vec<String> {
    let (tee, ell, bar) = if ascii {
        ("|-", "`-", "| ")
    } else {
        ("├─", "└─", "│ ")
    };
    let is_last = |i: usize| {
        let d = devices[i].depth;
        devices[i + 1..]
            .iter()
            .find(|x| x.depth <= d)
            .is_none_or(|x| x.depth < d)
    };
    let mut open: Vec<bool> = Vec::new(); // per depth: does a later sibling follow?
    let mut out = Vec::with_capacity(devices.len());
    for (i, d) in devices.iter().enumerate() {
        if d.depth == 0 {
            out.push(String::new());
            open.clear();
            continue;
        }
        open.truncate(d.depth - 1);
        let mut s = String::new();
        for &o in open.iter() {
            s.push_str(if o { bar } else { "  " });
        }
        let last = is_last(i);
        s.push_str(if last { ell } else { tee });
        open.push(!last);
        out.push(s);
    }
    out
}

/// The `list` table, readable at 80 columns.
pub fn write_table(
    out: &mut impl Write,
    tree: &DeviceTree,
    ascii: bool,
) -> Result<(), crate::Error> {
    let prefixes = tree_prefixes(&tree.devices, ascii);
    let mut lines = vec![format!(
        "{:<18} {:>7} {:<5} {:>9} {:<4} {:<8} {}",
        "NAME", "SIZE", "TYPE", "LOG/PHY", "ROTA", "WRITE", "NOTES"
    )];
    for (d, pre) in tree.devices.iter().zip(&prefixes) {
        let mut why: Vec<String> = Vec::new();
        let mut badges: Vec<&str> = d.safety_reasons.iter().map(|r| r.code.badge()).collect();
        badges.dedup();
        if !badges.is_empty() {
            why.push(badges.join(","));
        }
        if !d.mountpoints.is_empty() {
            why.push(d.mountpoints.join(","));
        }
        if d.swap {
            why.push("[SWAP]".into());
        }
        if let Some(sig) = d.signatures.first() {
            why.push(sig.kind.clone());
        }
        if let Some(m) = &d.model {
            why.push(m.clone());
        } else if let Some(b) = &d.loop_backing_file {
            why.push(b.clone());
        } else if let Some(dm) = &d.dm_name {
            why.push(dm.clone());
        }
        let name = format!("{pre}{}", d.name);
        let line = format!(
            "{:<18} {:>7} {:<5} {:>9} {:<4} {:<8} {}",
            name,
            fmt_size(d.size_bytes),
            d.lsblk_type,
            format!("{}/{}", d.logical_block_size, d.physical_block_size),
            if d.rotational { "yes" } else { "no" },
            d.write_safety.as_str(),
            why.join(" ")
        );
        lines.push(line);
    }
    for l in lines {
        writeln_io(out, &truncate_cols(&l, 80))?;
    }
    Ok(())
}

fn truncate_cols(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.trim_end().to_string();
    }
    let mut t: String = s.chars().take(n - 1).collect();
    t.push('~');
    t
}

fn write_check(out: &mut impl Write, r: &SafetyReport) -> Result<(), crate::Error> {
    let what = match &r.device {
        Some(d) => format!("{} ({d})", r.target),
        None => r.target.clone(),
    };
    writeln_io(out, &format!("{what}: {}", r.write_safety.as_str()))?;
    for reason in &r.reasons {
        writeln_io(
            out,
            &format!("  [{}] {}", reason.code.badge(), reason.detail),
        )?;
    }
    for note in &r.read_notes {
        writeln_io(out, &format!("  note: {}", note.detail))?;
    }
    let advice = match (r.write_safety, &r.device) {
        (WriteSafety::Clear, _) => "A write test may run.".to_string(),
        (WriteSafety::Confirm, Some(d)) => {
            format!("A write test destroys what is on it: it needs --confirm {d}.")
        }
        (WriteSafety::Confirm, None) => "A write test needs confirmation.".to_string(),
        (WriteSafety::Blocked, _) => "Write tests are refused; read tests are allowed.".to_string(),
    };
    writeln_io(out, &advice)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{Kind, WriteSafety};

    fn dev(name: &str, depth: usize) -> Device {
        Device {
            name: name.into(),
            path: PathBuf::from("/dev").join(name),
            maj_min: "0:0".into(),
            kind: Kind::Disk,
            lsblk_type: "disk".into(),
            size_bytes: 0,
            model: None,
            vendor: None,
            serial: None,
            wwid: None,
            transport: None,
            logical_block_size: 512,
            physical_block_size: 512,
            minimum_io_size: None,
            optimal_io_size: None,
            alignment_offset: None,
            rotational: false,
            removable: false,
            read_only: false,
            scheduler: None,
            schedulers_available: vec![],
            write_cache: None,
            nr_requests: None,
            max_sectors_kb: None,
            max_hw_sectors_kb: None,
            read_ahead_kb: None,
            iostats: None,
            discard: false,
            discard_granularity: None,
            discard_max_bytes: None,
            zoned: None,
            partition_number: None,
            start_sector: None,
            parent: None,
            partitions: vec![],
            holders: vec![],
            slaves: vec![],
            dm_name: None,
            dm_uuid: None,
            md_level: None,
            loop_backing_file: None,
            loop_direct_io: None,
            mountpoints: vec![],
            swap: false,
            signatures: vec![],
            signature_error: None,
            depth,
            write_safety: WriteSafety::Clear,
            safety_reasons: vec![],
        }
    }

    #[test]
    fn tree_prefixes_like_lsblk() {
        let devs = vec![
            dev("sda", 0),
            dev("sda1", 1),
            dev("sda2", 1),
            dev("vg-lv", 2),
            dev("sdb", 0),
            dev("sdb1", 1),
            dev("md0", 2),
            dev("sdb2", 1),
        ];
        let p = tree_prefixes(&devs, true);
        assert_eq!(p, ["", "|-", "`-", "  `-", "", "|-", "| `-", "`-"]);
    }

    #[test]
    fn truncation_marks_cut_lines() {
        assert_eq!(truncate_cols("abc   ", 80), "abc");
        let long = "x".repeat(90);
        let t = truncate_cols(&long, 80);
        assert_eq!(t.chars().count(), 80);
        assert!(t.ends_with('~'));
    }
}
