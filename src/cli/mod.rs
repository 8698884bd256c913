//! The `blkscope` command line: [`args`] holds the clap definitions, this module parses and
//! dispatches and maps errors to exit statuses, and [`commands`] has one file per subcommand
//! that turns its arguments into library calls and prints. What a TUI or a remote host would
//! also need lives in the library (session, suite, runs, output), not here.

pub mod args;
pub mod commands;

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
    // Settings a blkscope that was killed outright (kill -9) left changed go back first.
    if root.is_live() && crate::sys::geteuid() == 0 {
        for (dev, what, value) in crate::tuning::restore_stale(&root) {
            say!(
                "blkscope: put {what} of {dev} back to {value}, as a blkscope that was killed left it"
            );
        }
    }
    let stdout = io::stdout();
    let mut out = stdout.lock();
    if !cli.host.is_empty() || cli.hosts_file.is_some() {
        return commands::hosts::run(&cli, &mut out);
    }
    match cli.command {
        None => commands::tui::run(&root, cli.dir, cli.ascii, cli.fps, !cli.no_mouse, &mut out),
        Some(Command::List {
            json,
            no_signatures,
            ascii,
            all,
        }) => commands::list::run(&root, json, no_signatures, ascii, all, &mut out),
        Some(Command::Check { target, json }) => {
            commands::check::run(&root, &target, json, &mut out)
        }
        Some(Command::Run(args)) => commands::run::run(&root, &args, &mut out),
        Some(Command::Suites { json }) => commands::suite::list(json, &mut out),
        Some(Command::Suite {
            name,
            target,
            repeat,
            confirm,
            force,
            json,
            ndjson,
            no_save,
            verify,
            allow_cache_toggle,
            cpus,
        }) => {
            let spec = crate::engine::TargetSpec {
                path: target,
                confirm,
                force,
            };
            let opts = commands::suite::SuiteOpts {
                repeat,
                json,
                ndjson,
                no_save,
                verify,
                allow_cache_toggle,
                cpus,
            };
            commands::suite::run(&root, &name, &spec, &opts, &mut out)
        }
        Some(Command::Explain {
            name,
            target,
            logical_block_size,
        }) => commands::explain::run(&name, &target, logical_block_size, &mut out),
        Some(Command::Runs { last, json }) => commands::runs::run(last as usize, json, &mut out),
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
            commands::report::run(&run, &format, chart.as_deref(), test.as_deref(), &mut out)
        }
        Some(Command::Compare { a, b, json, format }) => {
            let ssh = crate::remote::Ssh {
                config: cli.ssh_config.clone(),
                push: None,
                remote_bin: cli.remote_blkscope.clone().unwrap_or_default(),
            };
            commands::compare::run(&a, &b, json, &format, &ssh, &mut out)
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
            commands::lab::run(&root, &a, &mut out)
        }
        Some(Command::Completions { shell }) => commands::man::completions(shell, &mut out),
        Some(Command::Man) => commands::man::man(&mut out),
        Some(Command::Sweep {
            target,
            qd,
            bs,
            op,
            block,
            depth,
            runtime,
            size,
            mode,
            confirm,
            json,
            no_save,
            cpus,
        }) => {
            use crate::sweep::Param;
            let (param, values, block, depth) =
                crate::sweep::resolve(qd.as_deref(), bs.as_deref(), block, depth)
                    .map_err(crate::Error::Usage)?;
            let base = crate::engine::Job {
                op: op.unwrap_or(match param {
                    Param::Iodepth => crate::engine::Op::Randread,
                    Param::Bs => crate::engine::Op::Read,
                }),
                bs: block,
                iodepth: depth,
                runtime: Some(runtime),
                size: size.map(crate::engine::job::SizeSpec::Text),
                mode,
                cpus,
                ..Default::default()
            };
            let suite = crate::sweep::suite(param, &values, &base);
            let spec = crate::engine::TargetSpec {
                path: target,
                confirm,
                force: false,
            };
            let opts = commands::suite::SuiteOpts {
                repeat: Some(1),
                json,
                ndjson: false,
                no_save,
                verify: false,
                allow_cache_toggle: false,
                cpus: None,
            };
            commands::suite::run_suite(&root, &suite, &spec, &opts, &mut out)
        }
        Some(Command::Doctor { devices, json }) => {
            commands::doctor::run(&root, &devices, json, &mut out)
        }
        Some(Command::Verify {
            target,
            stamp,
            capacity,
            confirm,
            max_errors,
            json,
        }) => commands::verify::run(
            &root,
            &commands::verify::VerifyArgs {
                target,
                stamp,
                capacity,
                confirm,
                max_errors,
                json,
            },
            &mut out,
        ),
        Some(Command::Stat {
            devices,
            interval,
            count,
            json,
        }) => commands::stat::run(&root, &devices, interval, count, json, &mut out),
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

/// Prints pretty JSON and a newline.
pub(crate) fn print_json<T: serde::Serialize>(
    out: &mut impl Write,
    v: &T,
) -> Result<(), crate::Error> {
    serde_json::to_writer_pretty(&mut *out, v).map_err(|e| stdout_err(e.into()))?;
    println(out, "")
}
