//! A host held for a whole session (the terminal UI): blkscope pushed once (when asked) and
//! each command run over its own ssh connection, the user's ControlMaster making them cheap.

use std::io::{BufRead, BufReader, Read};
use std::process::Child;
use std::sync::atomic::AtomicBool;

use super::fanout::{remote_bin, remote_line};
use super::host::Host;
use super::push::{Binary, answer, is_link_path, release_at};
use super::ssh::{HostOutcome, Ssh, piped, shell_quote, ssh_command, wait};

/// A host held for a whole session (the terminal UI): with `--push`, blkscope is copied over
/// once and removed by [`Link::close`].
#[derive(Debug, Clone)]
pub struct Link {
    pub host: Host,
    ssh: Ssh,
    bin: String,
    pushed: Option<String>,
}

impl Link {
    /// Copies `push` over first (prepared once for all the hosts), unless the host holds it
    /// already.
    pub fn open(host: &Host, ssh: &Ssh, push: Option<&Binary>) -> Result<Link, String> {
        let pushed = match push {
            Some(bin) => Some(acquire(ssh, host, bin).map_err(|e| format!("{}: {e}", host.label))?),
            None => None,
        };
        Ok(Link {
            host: host.clone(),
            ssh: ssh.clone(),
            bin: match &pushed {
                Some(path) => shell_quote(path),
                None => remote_bin(ssh),
            },
            pushed,
        })
    }

    /// ssh running blkscope with `args` on the host, its input and output piped. The remote
    /// blkscope stops when the input closes (or this ssh is killed).
    pub fn spawn(&self, args: &[String]) -> std::io::Result<Child> {
        piped(ssh_command(
            &self.ssh,
            &self.host,
            &remote_line(&self.bin, args),
        ))
    }

    /// Runs blkscope with `args` on the host to the end.
    pub fn run(&self, args: &[String], cancel: &AtomicBool) -> HostOutcome {
        match self.spawn(args) {
            Ok(child) => wait(&self.host, child, cancel, &self.ssh),
            Err(e) => HostOutcome::not_started(&self.host.label, &e),
        }
    }

    /// The host's newest `n` saved runs, oldest first, each with its id as `HOST:ID`
    /// (`runs --json` there, then `report ID --format json` for each), and a line for each
    /// that could not be read.
    pub fn saved_runs(&self, n: usize) -> (Vec<crate::runs::SavedRun>, Vec<String>) {
        let label = &self.host.label;
        let never = AtomicBool::new(false);
        let o = self.run(
            &[
                "runs".into(),
                "--json".into(),
                "--last".into(),
                n.to_string(),
            ],
            &never,
        );
        if let Some(e) = o.error() {
            return (Vec::new(), vec![e]);
        }
        let ids: Vec<String> = match serde_json::from_str::<serde_json::Value>(&o.stdout) {
            Ok(v) => v["runs"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|r| r["id"].as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default(),
            Err(e) => return (Vec::new(), vec![format!("{label}: runs --json: {e}")]),
        };
        let (mut runs, mut errors) = (Vec::new(), Vec::new());
        for id in ids {
            let args = [
                "report".into(),
                id.clone(),
                "--format".into(),
                "json".into(),
            ];
            let o = self.run(&args, &never);
            let from = format!("{label}:{id}");
            match o
                .error()
                .map_or_else(|| crate::runs::parse(&o.stdout, &from), Err)
            {
                Ok(mut r) => {
                    r.id = from;
                    runs.push(r);
                }
                Err(e) => errors.push(e),
            }
        }
        (runs, errors)
    }

    /// The host's devices (`list --json` there).
    pub fn list(&self) -> Result<crate::device::DeviceTree, String> {
        let o = self.run(&["list".into(), "--json".into()], &AtomicBool::new(false));
        if let Some(e) = o.error() {
            return Err(e);
        }
        serde_json::from_str(&o.stdout).map_err(|e| {
            format!(
                "{}: `blkscope list --json` there printed something else ({e}): is it an \
                 older blkscope? --push copies this one over",
                self.host.label
            )
        })
    }

    /// Lets go of the pushed copy, if any (removed when no other session holds it).
    pub fn close(&self) {
        if let Some(path) = &self.pushed {
            let c = ssh_command(&self.ssh, &self.host, &release_at(path));
            if let Ok(child) = piped(c) {
                let _ = wait(&self.host, child, &AtomicBool::new(false), &self.ssh);
            }
        }
    }
}

/// The host's own link to `bin`: taken from the private cache there, or sent; its path.
fn acquire(ssh: &Ssh, host: &Host, bin: &Binary) -> Result<String, String> {
    let remote = format!("{}; echo \"$b\"", bin.acquire_script());
    let mut child = piped(ssh_command(ssh, host, &remote)).map_err(|e| format!("ssh: {e}"))?;
    let err = child.stderr.take().map(super::ssh::drain);
    let mut out = BufReader::new(child.stdout.take().ok_or("ssh: no output")?);
    let mut first = String::new();
    let _ = out.read_line(&mut first);
    let mut stdin = child.stdin.take();
    answer(&first, bin, stdin.as_mut());
    drop(stdin);
    let mut rest = String::new();
    let _ = out.read_to_string(&mut rest);
    let status = child.wait().map_err(|e| e.to_string())?;
    let err = err.and_then(|h| h.join().ok()).unwrap_or_default();
    if !status.success() {
        return Err(format!(
            "copying blkscope over failed: {}",
            err.lines().last().unwrap_or("ssh failed")
        ));
    }
    let path = rest.trim().to_string();
    if !is_link_path(&path) {
        return Err(format!("copying blkscope over: unexpected answer '{path}'"));
    }
    Ok(path)
}
