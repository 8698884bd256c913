//! `--host` / `--hosts-file`: the command runs on every host at once through ssh. Human output
//! is grouped by host; `--json` prints `{"hosts": [{"host", "ok", "error", ...the command's own
//! JSON...}]}`. The exit status is non-zero when a host failed (or the worst verdict otherwise).

use std::io::Write;

use crate::cli::{Cli, Command, print, print_json, say};
use crate::remote::{Host, Ssh, forwarded_args, host_json, read_hosts_file, run_all};

pub fn run(cli: &Cli, out: &mut impl Write) -> Result<i32, crate::Error> {
    match &cli.command {
        Some(
            Command::List { .. }
            | Command::Check { .. }
            | Command::Stat { .. }
            | Command::Run(_)
            | Command::Suite { .. }
            | Command::Suites { .. }
            | Command::Doctor { .. }
            | Command::Explain { .. }
            | Command::Sweep { .. }
            | Command::Report { .. }
            | Command::Runs { .. }
            | Command::Verify { .. },
        ) => {}
        // The terminal UI over the hosts.
        None => {}
        Some(_) => {
            return Err(crate::Error::Usage(
                "this command runs here only: --host takes list, check, stat, run, suite, \
                 suites, doctor, explain, sweep, report, runs and verify"
                    .into(),
            ));
        }
    }
    let mut hosts: Vec<Host> = cli
        .host
        .iter()
        .map(|h| Host::parse(h).map_err(crate::Error::Usage))
        .collect::<Result<_, _>>()?;
    if let Some(f) = &cli.hosts_file {
        hosts.extend(read_hosts_file(f)?);
    }
    if hosts.is_empty() {
        return Err(crate::Error::Usage(
            "no hosts: the hosts file lists none".into(),
        ));
    }
    let push = match cli.push.as_deref() {
        None => None,
        Some("") => Some(
            std::env::current_exe()
                .map_err(|e| crate::Error::io(std::path::Path::new("blkscope"), e))?,
        ),
        Some(p) => Some(std::path::PathBuf::from(p)),
    };
    let ssh = Ssh {
        config: cli.ssh_config.clone(),
        push,
        remote_bin: cli.remote_blkscope.clone().unwrap_or_default(),
    };
    if cli.command.is_none() {
        return super::tui::run_on(
            &crate::sysroot::SysRoot::default(),
            cli.dir.clone(),
            cli.ascii,
            cli.fps,
            !cli.no_mouse,
            (hosts, ssh),
            out,
        );
    }
    if let Some(Command::Report {
        run,
        fleet: true,
        format,
        ..
    }) = &cli.command
    {
        return fleet(&hosts, &ssh, run, format == "json", out);
    }
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let json = argv.iter().any(|a| a == "--json" || a == "--ndjson");
    let cancel = crate::session::cancel_on_signals();
    let results = run_all(&hosts, &ssh, &|h| forwarded_args(&argv, h), cancel);
    for r in &results {
        if let Some(e) = r.error() {
            say!("blkscope: host {e}");
        }
    }
    if json {
        let v: Vec<serde_json::Value> = results.iter().map(host_json).collect();
        print_json(out, &serde_json::json!({ "hosts": v }))?;
    } else {
        for r in &results {
            print(out, &format!("== {} ==\n", r.host))?;
            print(out, &r.stdout)?;
            if !r.stdout.ends_with('\n') && !r.stdout.is_empty() {
                print(out, "\n")?;
            }
            for l in r.stderr.lines().filter(|l| !l.trim().is_empty()) {
                if r.error().is_none() {
                    say!("{}: {l}", r.host);
                }
            }
        }
    }
    let failed = results.iter().any(|r| r.error().is_some());
    let worst = results
        .iter()
        .map(|r| r.code)
        .filter(|c| (3..=6).contains(c))
        .max();
    Ok(if failed { 1 } else { worst.unwrap_or(0) })
}

/// `report RUN --fleet` over the hosts: each host's saved run RUN, one row per host per test.
fn fleet(
    hosts: &[Host],
    ssh: &Ssh,
    run: &str,
    json: bool,
    out: &mut impl Write,
) -> Result<i32, crate::Error> {
    let mut runs = Vec::new();
    let mut failed = false;
    for h in hosts {
        match crate::remote::fetch_run(ssh, h, run) {
            Ok(r) => runs.push((h.label.clone(), r)),
            Err(e) => {
                failed = true;
                say!("blkscope: host {e}");
            }
        }
    }
    let rows = crate::runs::fleet(&runs);
    if json {
        print_json(out, &serde_json::json!({ "fleet": rows }))?;
    } else {
        let mut t = format!(
            "{:<28} {:<20} {:>10} {:>10} {:>10}\n",
            "test", "host", "MB/s", "IOPS", "p99 us"
        );
        for r in &rows {
            for (h, mb, iops, p99) in &r.hosts {
                let mark = if r.outliers.contains(h) {
                    "  outlier"
                } else {
                    ""
                };
                t.push_str(&format!(
                    "{:<28} {:<20} {:>10.1} {:>10.0} {:>10.1}{mark}\n",
                    r.test, h, mb, iops, p99
                ));
            }
            t.push_str(&format!(
                "{:<28} {:<20} {:>10.1}   spread {:.1}% across hosts\n",
                "",
                "median",
                r.median_mb_s,
                r.spread * 100.0
            ));
        }
        print(out, &t)?;
    }
    Ok(if failed { 1 } else { 0 })
}
