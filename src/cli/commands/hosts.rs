//! `--host` / `--hosts-file` / `--inventory`: the command runs on every host through ssh,
//! `--fanout` at a time. Human output is grouped by host, with one table across hosts for
//! `doctor` and `run`; `--json` prints `{"hosts": [{"host", "ok", "error", ...the command's own
//! JSON...}]}`; `--ndjson` prints each host's object the moment it finishes. On a terminal a
//! progress line counts the hosts; failures are said once per cause. The exit status is
//! non-zero when a host failed (or the worst verdict otherwise).

use std::io::{IsTerminal, Write};

use crate::cli::{Cli, Command, print, print_json, println, say};
use crate::remote::{
    Binary, Fanout, Host, HostOutcome, MOST_HOSTS, Progress, Ssh, forwarded_args, group,
    group_line, host_json, read_hosts_file, read_inventory,
};

use super::fleet_table;

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
    let hosts = gather(cli)?;
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
        connect_timeout: cli.connect_timeout,
        timeout: cli.timeout,
        fanout: usize::from(cli.fanout),
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
    let binary = match &ssh.push {
        Some(p) => Some(Binary::prepare(p).map_err(|e| {
            crate::Error::Usage(format!(
                "--push: {e}: name a blkscope binary that can be read"
            ))
        })?),
        None => None,
    };
    let fan = Fanout {
        ssh: &ssh,
        push: binary.as_ref(),
        cancel: crate::cli::signals::cancel_on_signals(),
        summary: matches!(cli.command, Some(Command::Doctor { .. } | Command::Run(_))),
    };
    if let Some(Command::Report {
        run,
        fleet: true,
        format,
        ..
    }) = &cli.command
    {
        return fleet(&hosts, &fan, run, format == "json", out);
    }
    fan_out(&hosts, &fan, out)
}

/// Every host named: `--host` (patterns too), the hosts file, the inventories; each once, in
/// the order named. Too many is refused before any is reached.
fn gather(cli: &Cli) -> Result<Vec<Host>, crate::Error> {
    let mut hosts = Vec::new();
    for h in &cli.host {
        hosts.extend(Host::parse_pattern(h).map_err(crate::Error::Usage)?);
    }
    if let Some(f) = &cli.hosts_file {
        hosts.extend(read_hosts_file(f)?);
    }
    for inv in &cli.inventory {
        hosts.extend(read_inventory(inv)?);
    }
    let mut seen = std::collections::HashSet::new();
    hosts.retain(|h| seen.insert(h.label.clone()));
    if hosts.is_empty() {
        return Err(crate::Error::Usage(
            "no hosts: the hosts file lists none".into(),
        ));
    }
    if hosts.len() > MOST_HOSTS {
        return Err(crate::Error::Usage(format!(
            "{} hosts: more than {MOST_HOSTS}; is a range mistyped?",
            hosts.len()
        )));
    }
    Ok(hosts)
}

/// A progress line on a terminal: done, failed, running, waiting, and an ETA.
fn progress_bar(total: usize) -> indicatif::ProgressBar {
    if total < 2 || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(total as u64);
    bar.set_style(
        indicatif::ProgressStyle::with_template("{pos}/{len} hosts {wide_msg} ETA {eta}")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    bar
}

fn say_progress(bar: &indicatif::ProgressBar, p: Progress) {
    bar.set_position(p.done as u64);
    bar.set_message(format!(
        "done, {} failed, {} running, {} waiting",
        p.failed, p.running, p.waiting
    ));
}

fn fan_out(hosts: &[Host], fan: &Fanout, out: &mut impl Write) -> Result<i32, crate::Error> {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let ndjson = argv.iter().any(|a| a == "--ndjson");
    let json = argv.iter().any(|a| a == "--json");
    let bar = progress_bar(hosts.len());
    let mut write_err = None;
    let mut results = fan.run(hosts, &|h| forwarded_args(&argv, h), &mut |done, p| {
        say_progress(&bar, p);
        if let (true, Some((_, o))) = (ndjson, done) {
            let mut o = o.clone();
            o.stderr = fleet_table::take(&o.stderr).0;
            let line = host_json(&o).to_string();
            if let Err(e) =
                println(out, &line).and_then(|_| out.flush().map_err(crate::cli::stdout_err))
            {
                write_err.get_or_insert(e);
            }
        }
    });
    bar.finish_and_clear();
    if let Some(e) = write_err {
        return Err(e);
    }
    let mut summaries = Vec::new();
    let mut missing = Vec::new();
    for r in &mut results {
        let (rest, summary) = fleet_table::take(&r.stderr);
        r.stderr = rest;
        match summary {
            Some(s) => summaries.push((r.host.clone(), s)),
            None if r.error().is_none() && fan.summary => missing.push(r.host.clone()),
            None => {}
        }
    }
    if json && !ndjson {
        let v: Vec<serde_json::Value> = results.iter().map(host_json).collect();
        print_json(out, &serde_json::json!({ "hosts": v }))?;
    } else if !ndjson {
        human(&results, out)?;
        print(out, &fleet_table::table(&summaries, &missing))?;
    }
    say_failures(&results);
    let failed = results.iter().any(|r| r.error().is_some());
    let worst = results
        .iter()
        .map(|r| r.code)
        .filter(|c| (3..=6).contains(c))
        .max();
    Ok(if failed { 1 } else { worst.unwrap_or(0) })
}

/// Each host's output under its name, and what it said on stderr (its own errors are said
/// with the failures).
fn human(results: &[HostOutcome], out: &mut impl Write) -> Result<(), crate::Error> {
    for r in results {
        if r.error().is_some() && r.stdout.is_empty() {
            continue;
        }
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
    Ok(())
}

/// The failures, once per cause with the hosts it hit.
fn say_failures(results: &[HostOutcome]) {
    let refs: Vec<&HostOutcome> = results.iter().collect();
    for (cause, hosts) in group(&refs) {
        let one = results.iter().find(|r| hosts.first() == Some(&r.host));
        say!("blkscope: {}", group_line(&cause, &hosts, one));
    }
}

/// `report RUN --fleet` over the hosts: each host's saved run RUN, one row per host per test.
fn fleet(
    hosts: &[Host],
    fan: &Fanout,
    run: &str,
    json: bool,
    out: &mut impl Write,
) -> Result<i32, crate::Error> {
    let args = crate::remote::report_args(run);
    let results = fan.run(hosts, &|_| args.clone(), &mut |_, _| {});
    let mut runs = Vec::new();
    let mut failed = false;
    for o in &results {
        match crate::remote::parse_run(o, run) {
            Ok(r) => runs.push((o.host.clone(), r)),
            Err(e) => {
                failed = true;
                // A host that failed is said with the failures below; one that answered
                // with something else than the run, here.
                if o.error().is_none() {
                    say!("blkscope: host {e}");
                }
            }
        }
    }
    say_failures(&results);
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
