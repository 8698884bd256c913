//! The `blkscope` command line: [`args`] holds the clap definitions, this module parses and
//! dispatches and maps errors to exit statuses, and [`commands`] has one file per subcommand
//! that turns its arguments into library calls and prints. What a TUI or a remote host would
//! also need lives in the library (session, suite, runs, output), not here.

pub mod args;
pub mod commands;
pub mod exit;
pub mod signals;

use std::io::{self, Write};

pub use args::{Cli, Command, RunArgs};

use crate::sysroot::SysRoot;

/// Like eprintln!, but a closed stderr (a dropped SSH session) is not a panic.
macro_rules! say {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($t)*);
    }};
}
pub(crate) use say;

/// Runs the command line; returns the process exit status.
pub fn run(cli: Cli) -> Result<i32, crate::Error> {
    let root = cli.root.clone().map(SysRoot::at).unwrap_or_default();
    if cli.no_trace {
        crate::trace::turn_off();
    }
    // Settings a blkscope that was killed outright (kill -9) left changed go back first, and
    // the tracing instance it left (which records its devices' I/O until removed) goes.
    if root.is_live() && crate::sys::geteuid() == 0 {
        crate::trace::remove_stale_mounted(&root);
        for (dev, what, value) in crate::tuning::restore_stale(&root) {
            say!(
                "blkscope: put {what} of {dev} back to {value}, as a blkscope that was killed left it"
            );
        }
    }
    let stdout = io::stdout();
    let mut out = stdout.lock();
    if !cli.host.is_empty() || cli.hosts_file.is_some() || !cli.inventory.is_empty() {
        return commands::hosts::run(&cli, &mut out);
    }
    dispatch(cli, &root, &mut out)
}

/// The ssh client as the global options set it (for `compare HOST:RUN`).
fn ssh_of(cli: &Cli) -> crate::remote::Ssh {
    crate::remote::Ssh {
        config: cli.ssh_config.clone(),
        push: None,
        remote_bin: cli.remote_blkscope.clone().unwrap_or_default(),
        connect_timeout: cli.connect_timeout,
        timeout: cli.timeout,
        fanout: usize::from(cli.fanout),
    }
}

/// Calls the command's own code with its arguments.
fn dispatch(cli: Cli, root: &SysRoot, out: &mut impl Write) -> Result<i32, crate::Error> {
    let ssh = ssh_of(&cli);
    match cli.command {
        None => commands::tui::run(root, cli.dir, cli.ascii, cli.fps, !cli.no_mouse, out),
        Some(Command::List {
            json,
            ndjson,
            no_signatures,
            ascii,
            all,
        }) => {
            let json = json_or_ndjson(json, ndjson);
            commands::list::run(root, json, no_signatures, ascii, all, out)
        }
        Some(Command::Check {
            target,
            json,
            ndjson,
            full,
        }) => commands::check::run(root, &target, json_or_ndjson(json, ndjson), full, out),
        Some(Command::Run(args)) => commands::run::run(root, &args, out),
        Some(Command::Suites { json }) => commands::suite::list(json, out),
        Some(Command::Suite(a)) => commands::suite::run(root, &a.name, &a.spec(), &a.opts(), out),
        Some(Command::Explain {
            name,
            target,
            logical_block_size,
        }) => commands::explain::run(&name, &target, logical_block_size, out),
        Some(Command::Runs { last, json }) => commands::runs::run(last as usize, json, out),
        Some(Command::Report {
            run,
            format,
            chart,
            test,
            fleet,
        }) => {
            if fleet {
                return Err(crate::Error::Usage(
                    "--fleet compares the same run over hosts: give them with --host".into(),
                ));
            }
            commands::report::run(&run, &format, chart.as_deref(), test.as_deref(), out)
        }
        Some(Command::Compare { a, b, json, format }) => {
            commands::compare::run(&a, &b, json, &format, &ssh, out)
        }
        Some(Command::Lab {
            size,
            partitioned,
            json,
            cleanup,
            dir,
        }) => {
            let a = commands::lab::LabArgs {
                size,
                partitioned,
                json,
                cleanup,
                dir,
                ascii: cli.ascii,
                fps: cli.fps,
                mouse: !cli.no_mouse,
            };
            commands::lab::run(root, &a, out)
        }
        Some(Command::Learn(a)) => {
            commands::learn::run(root, &a, cli.ascii, cli.fps, !cli.no_mouse, out)
        }
        Some(Command::Completions { shell }) => commands::man::completions(shell, out),
        Some(Command::Man) => commands::man::man(out),
        Some(Command::Sweep(a)) => commands::suite::sweep(root, a, out),
        Some(Command::Doctor {
            devices,
            json,
            ndjson,
            watch: true,
            interval,
            count,
        }) => {
            let json = json_or_ndjson(json, ndjson);
            commands::doctor::watch(root, &devices, json, interval, count, out)
        }
        Some(Command::Doctor {
            devices,
            json,
            ndjson,
            ..
        }) => commands::doctor::run(root, &devices, json_or_ndjson(json, ndjson), out),
        Some(Command::Verify(a)) => commands::verify::run(root, &a, out),
        Some(Command::Stat {
            devices,
            interval,
            count,
            json,
        }) => commands::stat::run(root, &devices, interval, count, json, out),
    }
}

/// An error writing to stdout (a closed pipe, a full disk).
pub(crate) fn stdout_err(e: io::Error) -> crate::Error {
    crate::Error::io(std::path::Path::new("<stdout>"), e)
}

/// Prints text that already ends in a newline (or nothing).
pub(crate) fn print(out: &mut impl Write, s: &str) -> Result<(), crate::Error> {
    out.write_all(s.as_bytes()).map_err(stdout_err)
}

/// Prints one line.
pub(crate) fn println(out: &mut impl Write, s: &str) -> Result<(), crate::Error> {
    writeln!(out, "{s}").map_err(stdout_err)
}

/// Set by `--ndjson` on a command that prints one document: that document on one line.
static ONE_LINE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// `json || ndjson`, remembering that the document goes on one line for `--ndjson`.
fn json_or_ndjson(json: bool, ndjson: bool) -> bool {
    if ndjson {
        ONE_LINE.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    json || ndjson
}

/// Prints pretty JSON and a newline (on one line after `--ndjson`), in one write: stdout
/// writes each line as it comes, and a run's document has about 1500 of them.
pub(crate) fn print_json<T: serde::Serialize>(
    out: &mut impl Write,
    v: &T,
) -> Result<(), crate::Error> {
    let mut doc = if ONE_LINE.load(std::sync::atomic::Ordering::Relaxed) {
        serde_json::to_vec(v)
    } else {
        serde_json::to_vec_pretty(v)
    }
    .map_err(|e| stdout_err(e.into()))?;
    doc.push(b'\n');
    out.write_all(&doc).map_err(stdout_err)?;
    out.flush().map_err(stdout_err)
}
