//! Many machines through the OpenSSH client the user already has (their keys, ~/.ssh/config,
//! jump hosts, ControlMaster): blkscope runs itself on each host over `ssh` in BatchMode (it
//! never prompts), a bounded number at a time, and collects what each remote blkscope prints.
//! No daemon, no port of our own, no ssh library. Safety is decided on each host by the
//! blkscope there.
//!
//! A remote run cancels when the connection goes: the remote blkscope watches its standard
//! input (`BLKSCOPE_EXIT_ON_EOF=1`), which is the ssh channel; Ctrl-C here kills the ssh
//! processes, the channels close, and every remote run stops and removes its scratch file.

mod failures;
mod fanout;
mod host;
mod inventory;
mod link;
mod push;
mod ssh;

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

pub use failures::{Cause, group, group_line};
pub use fanout::{DEFAULT_FANOUT, Fanout, Progress, pool};
pub use host::{Host, MOST_HOSTS};
pub use inventory::{read_hosts_file, read_inventory};
pub use link::Link;
pub use push::Binary;
pub use ssh::{HostOutcome, Ssh, TIMED_OUT, shell_quote};

/// Runs blkscope with `args` on one host to the end (no push).
pub fn run_on(host: &Host, ssh: &Ssh, args: &[String]) -> HostOutcome {
    let f = Fanout {
        ssh,
        push: None,
        cancel: Arc::new(AtomicBool::new(false)),
        summary: false,
    };
    let args = args.to_vec();
    f.run(
        std::slice::from_ref(host),
        &|_| args.clone(),
        &mut |_, _| {},
    )
    .pop()
    .unwrap_or_else(|| HostOutcome::failed(&host.label, "not run".into()))
}

/// A saved run of `host` (`report RUN --format json` there), read as saved runs are here.
pub fn fetch_run(ssh: &Ssh, host: &Host, run: &str) -> Result<crate::runs::SavedRun, String> {
    let args = report_args(run);
    parse_run(&run_on(host, ssh, &args), run)
}

/// `report RUN --format json`.
pub fn report_args(run: &str) -> Vec<String> {
    vec![
        "report".to_string(),
        run.to_string(),
        "--format".into(),
        "json".into(),
    ]
}

/// The saved run a host's `report RUN --format json` printed.
pub fn parse_run(o: &HostOutcome, run: &str) -> Result<crate::runs::SavedRun, String> {
    if let Some(e) = o.error() {
        return Err(e);
    }
    crate::runs::parse(&o.stdout, &format!("{}:{run}", o.host))
}

/// The arguments to pass on: the command line less the options that choose hosts, with
/// `--confirm HOST:DEV` turned into `--confirm DEV` for that host and dropped for the others.
pub fn forwarded_args(argv: &[String], host: &Host) -> Vec<String> {
    let takes_value = [
        "--host",
        "--hosts-file",
        "--inventory",
        "--ssh-config",
        "--remote-blkscope",
        "--fanout",
        "--connect-timeout",
        "--timeout",
    ];
    let mut out = Vec::new();
    let mut i = 0;
    while i < argv.len() {
        let a = &argv[i];
        if takes_value.contains(&a.as_str()) {
            i += 2;
            continue;
        }
        if takes_value.iter().any(|t| a.starts_with(&format!("{t}=")))
            || a == "--push"
            || a.starts_with("--push=")
        {
            i += 1;
            continue;
        }
        if a == "--confirm" || a.starts_with("--confirm=") {
            let (v, step) = match a.strip_prefix("--confirm=") {
                Some(v) => (v.to_string(), 1),
                None => (argv.get(i + 1).cloned().unwrap_or_default(), 2),
            };
            match v.split_once(':') {
                Some((h, dev)) if h == host.label || h == host.name => {
                    out.push("--confirm".into());
                    out.push(dev.to_string());
                }
                Some(_) => {}
                None => {
                    out.push("--confirm".into());
                    out.push(v);
                }
            }
            i += step;
            continue;
        }
        out.push(a.clone());
        i += 1;
    }
    out
}

/// One host's output as JSON: the object it printed (or its lines, for NDJSON), with `host`,
/// `ok` and `error`.
pub fn host_json(o: &HostOutcome) -> serde_json::Value {
    let mut v = match serde_json::from_str::<serde_json::Value>(o.stdout.trim()) {
        Ok(serde_json::Value::Object(m)) => serde_json::Value::Object(m),
        Ok(other) => serde_json::json!({ "output": other }),
        Err(_) => {
            let lines: Vec<serde_json::Value> = o
                .stdout
                .lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect();
            if lines.is_empty() {
                serde_json::json!({})
            } else {
                serde_json::json!({ "output": lines })
            }
        }
    };
    let err = o.error();
    let failed = err.is_some();
    v["host"] = o.host.clone().into();
    v["ok"] = err.is_none().into();
    v["error"] = err
        .map(serde_json::Value::from)
        .unwrap_or(serde_json::Value::Null);
    v["exit_status"] = o.code.into();
    v["cause"] = if failed {
        Cause::of(o).name().into()
    } else {
        serde_json::Value::Null
    };
    v["attempts"] = o.attempts.into();
    v["seconds"] = (((o.seconds * 1000.0).round()) / 1000.0).into();
    if let Some(p) = o.pushed {
        v["pushed"] = p.into();
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confirm_names_host_and_device() {
        let argv: Vec<String> = [
            "--host",
            "a",
            "--host=b",
            "--push",
            "run",
            "/dev/sdb",
            "--confirm",
            "b:sdb",
            "--json",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let a = Host::parse("a").unwrap();
        let b = Host::parse("b").unwrap();
        assert_eq!(forwarded_args(&argv, &a), ["run", "/dev/sdb", "--json"]);
        assert_eq!(
            forwarded_args(&argv, &b),
            ["run", "/dev/sdb", "--confirm", "sdb", "--json"]
        );
    }
}
