//! Many machines through the OpenSSH client the user already has (their keys, ~/.ssh/config,
//! jump hosts, ControlMaster): blkscope runs itself on each host over `ssh` in BatchMode (it
//! never prompts), all hosts at once, and collects what each remote blkscope prints. No daemon,
//! no port of our own, no ssh library. Safety is decided on each host by the blkscope there.
//!
//! A remote run cancels when the connection goes: the remote blkscope watches its standard
//! input (`BLKSCOPE_EXIT_ON_EOF=1`), which is the ssh channel; Ctrl-C here kills the ssh
//! processes, the channels close, and every remote run stops and removes its scratch file.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// A host as named: `[USER@]HOST[:PORT]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    pub user: Option<String>,
    pub name: String,
    pub port: Option<u16>,
    /// As the user wrote it (the label in output, and in `--confirm HOST:DEV`).
    pub label: String,
}

impl Host {
    pub fn parse(s: &str) -> Result<Host, String> {
        let t = s.trim();
        // ssh reads a word that begins with '-' as an option (-oProxyCommand=... runs a
        // command here), whatever blkscope meant by it.
        if t.starts_with('-') || t.contains("@-") {
            return Err(format!(
                "'{t}' is not a host: it begins with '-', which ssh would read as an option; \
                 use [USER@]HOST[:PORT]"
            ));
        }
        if t.is_empty() || t.contains(char::is_whitespace) {
            return Err(format!("'{s}' is not a host: use [USER@]HOST[:PORT]"));
        }
        let (user, rest) = match t.split_once('@') {
            Some((u, r)) if !u.is_empty() => (Some(u.to_string()), r),
            Some(_) => return Err(format!("'{s}': an empty user before @")),
            None => (None, t),
        };
        let (name, port) = match rest.rsplit_once(':') {
            // [::1]:22 style, or a bare IPv6 address: no port split inside brackets.
            Some((h, p)) if !h.contains(':') || h.ends_with(']') => {
                let port = p
                    .parse::<u16>()
                    .map_err(|_| format!("'{s}': port '{p}' is not a number from 1 to 65535"))?;
                (h.trim_matches(['[', ']']).to_string(), Some(port))
            }
            _ => (rest.to_string(), None),
        };
        if name.is_empty() {
            return Err(format!("'{s}': no host name"));
        }
        Ok(Host {
            user,
            name,
            port,
            label: t.to_string(),
        })
    }

    fn destination(&self) -> String {
        match &self.user {
            Some(u) => format!("{u}@{}", self.name),
            None => self.name.clone(),
        }
    }
}

/// Hosts from a file: one a line, `#` comments and blank lines ignored.
pub fn read_hosts_file(path: &Path) -> Result<Vec<Host>, crate::Error> {
    let text = std::fs::read_to_string(path).map_err(|e| crate::Error::io(path, e))?;
    text.lines()
        .enumerate()
        .map(|(i, l)| (i, l.split('#').next().unwrap_or("").trim()))
        .filter(|(_, l)| !l.is_empty())
        .map(|(i, l)| {
            Host::parse(l)
                .map_err(|e| crate::Error::Usage(format!("{}:{}: {e}", path.display(), i + 1)))
        })
        .collect()
}

/// How to reach the hosts.
#[derive(Debug, Clone, Default)]
pub struct Ssh {
    /// An ssh config file (`ssh -F`); the user's own ~/.ssh/config otherwise.
    pub config: Option<PathBuf>,
    /// Copy this blkscope to each host first (to a private temporary directory, removed
    /// afterwards), for hosts that have none.
    pub push: Option<PathBuf>,
    /// The blkscope to run on the hosts (default: `blkscope` on their PATH).
    pub remote_bin: String,
}

/// Quotes a word for the remote shell.
pub fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./:=,@%+".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

fn ssh_command(ssh: &Ssh, host: &Host, remote: &str) -> Command {
    let mut c = Command::new("ssh");
    c.args(["-o", "BatchMode=yes", "-o", "ConnectTimeout=10"]);
    if let Some(f) = &ssh.config {
        c.arg("-F").arg(f);
    }
    if let Some(p) = host.port {
        c.arg("-p").arg(p.to_string());
    }
    // `--` ends ssh's options: the destination is never read as one.
    c.arg("--").arg(host.destination()).arg(remote);
    c
}

/// What one host said.
#[derive(Debug, Clone)]
pub struct HostOutcome {
    pub host: String,
    /// The remote blkscope's exit status (255: ssh could not connect or run it).
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl HostOutcome {
    /// ssh itself failed (unreachable, refused key, no blkscope there).
    pub fn transport_failed(&self) -> bool {
        self.code == 255 || self.code == 127 || self.code == -1
    }

    /// One line naming the host and what went wrong, when something did.
    pub fn error(&self) -> Option<String> {
        let last = self
            .stderr
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("")
            .trim()
            .to_string();
        match self.code {
            0 => None,
            127 => Some(format!(
                "{}: blkscope is not installed there (or not on its PATH): add --push to copy \
                 this one over for the run",
                self.host
            )),
            255 | -1 => Some(format!(
                "{}: {}",
                self.host,
                if last.is_empty() {
                    "ssh failed".to_string()
                } else {
                    last
                }
            )),
            // A verdict (3 confirm, 4 blocked, 5 doctor problem, 6 verify bad): not an error.
            3..=6 => None,
            _ => Some(format!(
                "{}: {}",
                self.host,
                if last.is_empty() {
                    format!("exit status {}", self.code)
                } else {
                    last
                }
            )),
        }
    }
}

fn drain(mut r: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = r.read_to_end(&mut v);
        String::from_utf8_lossy(&v).into_owned()
    })
}

/// Copies `bin` to a private temporary directory on `host` (in its $TMPDIR, /tmp without one);
/// returns its path there.
fn push(ssh: &Ssh, host: &Host, bin: &Path) -> Result<String, String> {
    let bytes = std::fs::read(bin).map_err(|e| format!("{}: {e}", bin.display()))?;
    let mut c = ssh_command(
        ssh,
        host,
        "d=$(mktemp -d \"${TMPDIR:-/tmp}/blkscope.XXXXXXXX\") && cat > \"$d/blkscope\" && \
         chmod 700 \"$d/blkscope\" && echo \"$d\"",
    );
    let mut child = c
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("ssh: {e}"))?;
    let out = child.stdout.take().map(drain);
    let err = child.stderr.take().map(drain);
    if let Some(mut i) = child.stdin.take() {
        let _ = i.write_all(&bytes);
    }
    let status = child.wait().map_err(|e| e.to_string())?;
    let out = out.and_then(|h| h.join().ok()).unwrap_or_default();
    let err = err.and_then(|h| h.join().ok()).unwrap_or_default();
    if !status.success() {
        return Err(format!(
            "copying blkscope over failed: {}",
            err.lines().last().unwrap_or("ssh failed")
        ));
    }
    let dir = out.trim().to_string();
    let name = dir.rsplit('/').next().unwrap_or("");
    if !dir.starts_with('/') || !name.starts_with("blkscope.") || dir.contains(char::is_whitespace)
    {
        return Err(format!("copying blkscope over: unexpected answer '{dir}'"));
    }
    Ok(dir)
}

/// Runs blkscope with `args_for(host)` on every host at once. `cancel` (Ctrl-C) kills the ssh
/// processes; the remote runs then see their input close and stop.
pub fn run_all(
    hosts: &[Host],
    ssh: &Ssh,
    args_for: &dyn Fn(&Host) -> Vec<String>,
    cancel: Arc<AtomicBool>,
) -> Vec<HostOutcome> {
    let handles: Vec<_> = hosts
        .iter()
        .map(|h| {
            let (h, ssh, args, cancel) = (h.clone(), ssh.clone(), args_for(h), cancel.clone());
            std::thread::spawn(move || run_one(&h, &ssh, &args, &cancel))
        })
        .collect();
    handles
        .into_iter()
        .zip(hosts)
        .map(|(t, h)| {
            t.join().unwrap_or_else(|_| HostOutcome {
                host: h.label.clone(),
                code: -1,
                stdout: String::new(),
                stderr: "the thread running ssh failed".into(),
            })
        })
        .collect()
}

/// The blkscope to run on a host: the pushed copy, the one named, or `blkscope` on its PATH.
fn remote_bin(ssh: &Ssh, pushed: Option<&str>) -> String {
    match pushed {
        Some(dir) => format!("{dir}/blkscope"),
        None => shell_quote(if ssh.remote_bin.is_empty() {
            "blkscope"
        } else {
            &ssh.remote_bin
        }),
    }
}

/// The remote command line: blkscope with `args`, stopping when the channel's input closes.
fn remote_line(bin: &str, args: &[String]) -> String {
    let quoted: Vec<String> = args.iter().map(|a| shell_quote(a)).collect();
    format!("BLKSCOPE_EXIT_ON_EOF=1 {bin} {}", quoted.join(" "))
}

fn piped(mut c: Command) -> std::io::Result<Child> {
    c.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
}

/// Waits for `child` to end, collecting what it printed; `cancel` closes its input and kills
/// it (the remote run then sees its channel close and stops).
fn wait(host: &Host, mut child: Child, cancel: &AtomicBool) -> HostOutcome {
    // Keep stdin open: the remote run ends when it closes.
    let stdin = child.stdin.take();
    let out = child.stdout.take().map(drain);
    let err = child.stderr.take().map(drain);
    let code = loop {
        match child.try_wait() {
            Ok(Some(st)) => break st.code().unwrap_or(-1),
            Ok(None) => {}
            Err(_) => break -1,
        }
        if cancel.load(Ordering::Relaxed) {
            drop(stdin);
            let _ = child.kill();
            let st = child.wait().ok().and_then(|s| s.code()).unwrap_or(1);
            break if st == 0 { 1 } else { st };
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    HostOutcome {
        host: host.label.clone(),
        code,
        stdout: out.and_then(|h| h.join().ok()).unwrap_or_default(),
        stderr: err.and_then(|h| h.join().ok()).unwrap_or_default(),
    }
}

fn run_one(host: &Host, ssh: &Ssh, args: &[String], cancel: &AtomicBool) -> HostOutcome {
    let fail = |msg: String| HostOutcome {
        host: host.label.clone(),
        code: -1,
        stdout: String::new(),
        stderr: msg,
    };
    let pushed = match &ssh.push {
        Some(bin) => match push(ssh, host, bin) {
            Ok(dir) => Some(dir),
            Err(e) => return fail(e),
        },
        None => None,
    };
    let mut remote = remote_line(&remote_bin(ssh, pushed.as_deref()), args);
    if let Some(dir) = &pushed {
        // Remove the copy whatever the run's outcome.
        remote = format!("{remote}; s=$?; rm -rf {}; exit $s", shell_quote(dir));
    }
    match piped(ssh_command(ssh, host, &remote)) {
        Ok(child) => wait(host, child, cancel),
        Err(e) => fail(format!("ssh: {e} (is the OpenSSH client installed?)")),
    }
}

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
    /// Copies blkscope over first when pushing.
    pub fn open(host: &Host, ssh: &Ssh) -> Result<Link, String> {
        let pushed = match &ssh.push {
            Some(bin) => Some(push(ssh, host, bin).map_err(|e| format!("{}: {e}", host.label))?),
            None => None,
        };
        Ok(Link {
            host: host.clone(),
            ssh: ssh.clone(),
            bin: remote_bin(ssh, pushed.as_deref()),
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
            Ok(child) => wait(&self.host, child, cancel),
            Err(e) => HostOutcome {
                host: self.host.label.clone(),
                code: -1,
                stdout: String::new(),
                stderr: format!("ssh: {e} (is the OpenSSH client installed?)"),
            },
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

    /// Removes the pushed copy, if any.
    pub fn close(&self) {
        if let Some(dir) = &self.pushed {
            let c = ssh_command(
                &self.ssh,
                &self.host,
                &format!("rm -rf {}", shell_quote(dir)),
            );
            if let Ok(child) = piped(c) {
                let _ = wait(&self.host, child, &AtomicBool::new(false));
            }
        }
    }
}

/// A saved run of `host` (`report RUN --format json` there), read as saved runs are here.
pub fn fetch_run(ssh: &Ssh, host: &Host, run: &str) -> Result<crate::runs::SavedRun, String> {
    let args = vec![
        "report".to_string(),
        run.to_string(),
        "--format".into(),
        "json".into(),
    ];
    let o = run_one(host, ssh, &args, &AtomicBool::new(false));
    if let Some(e) = o.error() {
        return Err(e);
    }
    crate::runs::parse(&o.stdout, &format!("{}:{run}", host.label))
}

/// The arguments to pass on: the command line less the options that choose hosts, with
/// `--confirm HOST:DEV` turned into `--confirm DEV` for that host and dropped for the others.
pub fn forwarded_args(argv: &[String], host: &Host) -> Vec<String> {
    let takes_value = [
        "--host",
        "--hosts-file",
        "--ssh-config",
        "--remote-blkscope",
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
    v["host"] = o.host.clone().into();
    v["ok"] = err.is_none().into();
    v["error"] = err
        .map(serde_json::Value::from)
        .unwrap_or(serde_json::Value::Null);
    v["exit_status"] = o.code.into();
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_as_people_write_them() {
        let h = Host::parse("root@db1:2222").unwrap();
        assert_eq!(
            (h.user.as_deref(), h.name.as_str(), h.port),
            (Some("root"), "db1", Some(2222))
        );
        let h = Host::parse("127.0.0.2").unwrap();
        assert_eq!((h.user, h.port), (None, None));
        assert!(Host::parse("a b").is_err());
        assert!(Host::parse("db1:x").is_err());
        assert!(Host::parse("@db1").is_err());
    }

    #[test]
    fn a_host_is_never_an_option_to_ssh() {
        for bad in [
            "-oProxyCommand=touch /tmp/x",
            "-p2222",
            "-oX=y",
            "root@-oX=y",
        ] {
            let e = Host::parse(bad).unwrap_err();
            println!("{bad}: {e}");
            assert!(e.contains("begins with '-'"), "{e}");
        }
        // The destination comes after `--`, and the command after it.
        let h = Host::parse("root@db1:2222").unwrap();
        let c = ssh_command(&Ssh::default(), &h, "blkscope list");
        let args: Vec<String> = c.get_args().map(|a| a.to_string_lossy().into()).collect();
        println!("ssh {args:?}");
        let dd = args.iter().position(|a| a == "--").unwrap();
        assert_eq!(args[dd + 1..], ["root@db1", "blkscope list"]);
        assert!(args[..dd].iter().all(|a| a != "root@db1"), "{args:?}");
    }

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

    #[test]
    fn quoting_for_the_remote_shell() {
        assert_eq!(shell_quote("/dev/sdb"), "/dev/sdb");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
