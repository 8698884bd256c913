//! The event loop's side of `--host`: connecting to the hosts, streaming each one's
//! `stat --json`, and running tests there with their samples streamed back (`run --ndjson`).
//! Everything goes through the user's own `ssh` (see [`crate::remote`]); the remote blkscope
//! stops when its channel closes, so killing an ssh here cancels what it ran there.

use std::io::{BufRead, BufReader, Read};
use std::process::Child;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::mpsc::UnboundedSender;

use super::EngineMsg;
use crate::engine::result::Sample;
use crate::remote::{Binary, Host, HostOutcome, Link, Ssh};

/// Connects to the hosts, `--fanout` at a time, on a thread of its own; each sends its link
/// and its devices when it answers. A pushed binary is read once for them all.
pub(super) fn connect(hosts: &[Host], ssh: &Ssh, tx: &UnboundedSender<EngineMsg>) {
    let labels: Vec<String> = hosts.iter().map(|h| h.label.clone()).collect();
    let (hosts, ssh, tx2) = (hosts.to_vec(), ssh.clone(), tx.clone());
    let spawned = std::thread::Builder::new()
        .name("blkscope-hosts".into())
        .spawn(move || {
            let bin = ssh.push.as_deref().map(Binary::prepare);
            crate::remote::pool(ssh.fanout, &hosts, &|h: &Host| {
                let r = match &bin {
                    Some(Err(e)) => Err(format!("--push: {e}")),
                    _ => Link::open(h, &ssh, bin.as_ref().and_then(|b| b.as_ref().ok())),
                };
                let r = r.and_then(|l| l.list().map(|t| (l, t)));
                let _ = tx2.send(EngineMsg::HostUp(h.label.clone(), Box::new(r)));
            });
        });
    if let Err(e) = spawned {
        for label in labels {
            let why = format!("cannot start a thread for it: {e}");
            let _ = tx.send(EngineMsg::HostUp(label, Box::new(Err(why))));
        }
    }
}

/// The last non-empty line of `text`.
fn last_line(text: &str) -> Option<String> {
    text.lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(str::to_string)
}

/// Streams the host's `stat --json` for `devices`, one report a second, as `HostStats`; when the
/// stream ends, why. The ssh process is returned, to be killed when the TUI quits.
pub(super) fn stream_stats(
    link: &Link,
    devices: &[String],
    tx: &UnboundedSender<EngineMsg>,
) -> std::io::Result<Child> {
    let mut args: Vec<String> = vec!["stat".into(), "--json".into(), "--interval".into()];
    args.push("1s".into());
    args.extend(devices.iter().cloned());
    let mut child = link.spawn(&args)?;
    let out = child.stdout.take();
    let mut err = child.stderr.take();
    let (label, tx) = (link.host.label.clone(), tx.clone());
    std::thread::Builder::new()
        .name("blkscope-hoststat".into())
        .spawn(move || {
            if let Some(out) = out {
                for line in BufReader::new(out).lines() {
                    let Ok(line) = line else { break };
                    let v: Result<serde_json::Value, _> = serde_json::from_str(&line);
                    if let Ok(devs) = v.and_then(|v| serde_json::from_value(v["devices"].clone()))
                        && tx
                            .send(EngineMsg::HostStats(label.clone(), Ok(devs)))
                            .is_err()
                    {
                        return;
                    }
                }
            }
            let mut why = String::new();
            if let Some(e) = err.as_mut() {
                let _ = e.read_to_string(&mut why);
            }
            let why = last_line(&why).unwrap_or_else(|| "the connection closed".into());
            let _ = tx.send(EngineMsg::HostStats(
                label,
                Err(format!("iostat stream ended: {why}")),
            ));
        })?;
    Ok(child)
}

/// Runs blkscope with `args` on the host, sending each `sample` line it prints as a live
/// sample; returns what it printed when it ends. `cancel` kills the ssh, which stops the run
/// there.
pub(super) fn run(
    link: &Link,
    args: &[String],
    cancel: &AtomicBool,
    tx: &UnboundedSender<EngineMsg>,
) -> HostOutcome {
    let label = link.host.label.clone();
    let mut child = match link.spawn(args) {
        Ok(c) => c,
        Err(e) => {
            return HostOutcome::not_started(&label, &e);
        }
    };
    // Kept open until the end: the remote run stops when it closes.
    let stdin = child.stdin.take();
    let err = child.stderr.take().map(|mut e| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = e.read_to_string(&mut s);
            s
        })
    });
    let (ltx, lrx) = std::sync::mpsc::channel::<String>();
    if let Some(out) = child.stdout.take() {
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if ltx.send(line).is_err() {
                    break;
                }
            }
        });
    }
    let mut stdout = String::new();
    let mut cancelled = false;
    loop {
        match lrx.recv_timeout(Duration::from_millis(50)) {
            Ok(line) => {
                if let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) {
                    if v["type"] == "sample" {
                        // What the host's analysis made of the test so far, where it says.
                        let found =
                            serde_json::from_value(v["findings"].clone()).unwrap_or_default();
                        if let Ok(s) = serde_json::from_value::<Sample>(v) {
                            let _ = tx.send(EngineMsg::Sample(s, found));
                        }
                        continue;
                    }
                    if v["type"] == "progress" {
                        let test = v["test"].as_str().unwrap_or("-").to_string();
                        let n = |k: &str| v[k].as_u64().unwrap_or(1) as u32;
                        let _ = tx.send(EngineMsg::SuiteProgress(test, n("run"), n("of")));
                        continue;
                    }
                }
                stdout.push_str(&line);
                stdout.push('\n');
            }
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
        }
        if cancel.load(Ordering::Relaxed) && !cancelled {
            cancelled = true;
            let _ = child.kill();
        }
    }
    drop(stdin);
    let code = child.wait().ok().and_then(|s| s.code()).unwrap_or(-1);
    HostOutcome {
        host: label,
        code: if cancelled && code == 0 { 1 } else { code },
        stdout,
        stderr: err.and_then(|h| h.join().ok()).unwrap_or_default(),
        attempts: 1,
        ..Default::default()
    }
}

/// The ssh processes that stream the hosts' iostat, and the links to close, when the TUI ends.
#[derive(Default)]
pub(super) struct Hosts {
    pub links: std::collections::BTreeMap<String, Link>,
    pub streams: Vec<Child>,
}

impl Hosts {
    /// Stops every stream (the remote `stat`s see their channels close) and removes pushed
    /// copies of blkscope.
    pub fn close(&mut self) {
        for c in &mut self.streams {
            let _ = c.kill();
            let _ = c.wait();
        }
        self.streams.clear();
        let links: Vec<Link> = std::mem::take(&mut self.links).into_values().collect();
        let hs: Vec<_> = links
            .into_iter()
            .map(|l| std::thread::spawn(move || l.close()))
            .collect();
        for h in hs {
            let _ = h.join();
        }
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        self.close();
    }
}

/// A finished remote run as the App reads it: its results, or one line saying why none.
pub(super) fn outcome(
    o: &HostOutcome,
    job: &crate::engine::job::Job,
    cancelled: bool,
) -> Result<super::app::RemoteDone, String> {
    let parsed = super::app::RemoteDone::parse(&o.stdout, &o.stderr, job);
    match parsed {
        Ok(d) if !d.tests.is_empty() => Ok(d),
        _ if cancelled => Err("cancelled".into()),
        _ => Err(o
            .error()
            .or_else(|| last_line(&o.stderr).map(|l| format!("{}: {l}", o.host)))
            .unwrap_or_else(|| format!("{}: exit status {}", o.host, o.code))),
    }
}

/// A device's doctor findings on the host (`doctor DEV --json` there; exit 5 means it found a
/// problem, which is an answer, not a failure).
pub(super) fn doctor(link: &Link, device: &str) -> Result<Vec<crate::doctor::Finding>, String> {
    let args: Vec<String> = vec!["doctor".into(), device.into(), "--json".into()];
    let o = link.run(&args, &AtomicBool::new(false));
    if let Some(e) = o.error() {
        return Err(e);
    }
    let v: serde_json::Value = serde_json::from_str(o.stdout.trim())
        .map_err(|e| format!("{}: the doctor there printed something else: {e}", o.host))?;
    serde_json::from_value(v["devices"][0]["findings"].clone())
        .map_err(|e| format!("{}: the doctor's findings there: {e}", o.host))
}

/// Lists the host's devices again, in the background (a run there changed what they hold).
pub(super) fn relist(link: &Link, tx: &UnboundedSender<EngineMsg>) {
    let (link, tx) = (link.clone(), tx.clone());
    let _ = std::thread::Builder::new()
        .name("blkscope-relist".into())
        .spawn(move || {
            let r = link.list();
            let _ = tx.send(EngineMsg::HostTree(link.host.label.clone(), r));
        });
}
