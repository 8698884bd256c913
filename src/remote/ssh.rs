//! The OpenSSH client as blkscope runs it: BatchMode (it never prompts), a connect timeout,
//! the destination after `--`; and what one host said when its command ended.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::host::Host;

/// How to reach the hosts.
#[derive(Debug, Clone)]
pub struct Ssh {
    /// An ssh config file (`ssh -F`); the user's own ~/.ssh/config otherwise.
    pub config: Option<PathBuf>,
    /// Copy this blkscope to each host first (to a private directory there, removed
    /// afterwards), for hosts that have none.
    pub push: Option<PathBuf>,
    /// The blkscope to run on the hosts (default: `blkscope` on their PATH).
    pub remote_bin: String,
    /// Seconds ssh waits for a host to connect and greet (ssh's ConnectTimeout).
    pub connect_timeout: u32,
    /// How long a host's command may take before it is stopped; none: as long as it takes.
    pub timeout: Option<Duration>,
    /// At most this many hosts at once.
    pub fanout: usize,
}

impl Default for Ssh {
    fn default() -> Self {
        Ssh {
            config: None,
            push: None,
            remote_bin: String::new(),
            connect_timeout: 10,
            timeout: None,
            fanout: usize::from(super::fanout::DEFAULT_FANOUT),
        }
    }
}

/// The exit status of a command that ran out of `--timeout` (stopped here).
pub const TIMED_OUT: i32 = -2;

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

/// `ssh` reaching `host` to run `remote` there.
pub fn ssh_command(ssh: &Ssh, host: &Host, remote: &str) -> Command {
    let mut c = Command::new("ssh");
    c.args(["-o", "BatchMode=yes", "-o"])
        .arg(format!("ConnectTimeout={}", ssh.connect_timeout.max(1)));
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

/// `c` started with its input, output and errors piped.
pub fn piped(mut c: Command) -> std::io::Result<Child> {
    c.stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
}

/// What one host said.
#[derive(Debug, Clone, Default)]
pub struct HostOutcome {
    pub host: String,
    /// The remote blkscope's exit status (255: ssh could not connect or run it; -1: ssh could
    /// not be started here; [`TIMED_OUT`]).
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    /// How many times ssh was started (more than once after a transient refusal).
    pub attempts: u32,
    /// With --push: whether the binary was sent, or found there from this run's earlier copy.
    pub pushed: Option<&'static str>,
    /// From the first attempt to the end.
    pub seconds: f64,
}

impl HostOutcome {
    /// An outcome for a host that ssh never reached, with why.
    pub fn failed(host: &str, why: String) -> HostOutcome {
        HostOutcome {
            host: host.to_string(),
            code: -1,
            stderr: why,
            attempts: 1,
            ..Default::default()
        }
    }

    /// ssh itself failed (unreachable, refused key, no blkscope there, timed out).
    pub fn transport_failed(&self) -> bool {
        matches!(self.code, 255 | 127 | -1 | TIMED_OUT)
    }

    /// An outcome for a host whose ssh could not be started here.
    pub fn not_started(host: &str, e: &std::io::Error) -> HostOutcome {
        HostOutcome::failed(host, format!("ssh: {e} (is the OpenSSH client installed?)"))
    }

    /// The outcome of a command that ended with `code`: what the threads reading its output
    /// collected, and the time since `since`.
    pub fn ended(
        host: &Host,
        code: i32,
        out: Option<std::thread::JoinHandle<String>>,
        err: Option<std::thread::JoinHandle<String>>,
        since: Instant,
    ) -> HostOutcome {
        HostOutcome {
            host: host.label.clone(),
            code,
            stdout: out.and_then(|h| h.join().ok()).unwrap_or_default(),
            stderr: err.and_then(|h| h.join().ok()).unwrap_or_default(),
            attempts: 1,
            pushed: None,
            seconds: since.elapsed().as_secs_f64(),
        }
    }

    /// The last line of what it printed on stderr.
    pub fn last_error_line(&self) -> &str {
        self.stderr
            .lines()
            .rev()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("")
    }

    /// One line naming the host and what went wrong, when something did.
    pub fn error(&self) -> Option<String> {
        match self.code {
            // A verdict (3 confirm, 4 blocked, 5 doctor problem, 6 verify bad): not an error.
            0 | 3..=6 => None,
            _ => Some(format!(
                "{}: {}",
                self.host,
                super::failures::Cause::of(self).says(self)
            )),
        }
    }
}

/// A thread that reads `r` to its end.
pub fn drain(mut r: impl Read + Send + 'static) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = r.read_to_end(&mut v);
        String::from_utf8_lossy(&v).into_owned()
    })
}

/// Waits for `child` to end (its output read by others) and gives its exit status. `cancel`
/// (Ctrl-C) and `deadline` close its input and kill it: the remote run then sees its channel
/// close and stops.
pub fn wait_child(child: &mut Child, cancel: &AtomicBool, deadline: Option<Instant>) -> i32 {
    // Keep stdin open: the remote run ends when it closes.
    let stdin = child.stdin.take();
    loop {
        match child.try_wait() {
            Ok(Some(st)) => return st.code().unwrap_or(-1),
            Ok(None) => {}
            Err(_) => return -1,
        }
        let late = deadline.is_some_and(|d| Instant::now() >= d);
        if cancel.load(Ordering::Relaxed) || late {
            drop(stdin);
            let _ = child.kill();
            let st = child.wait().ok().and_then(|s| s.code()).unwrap_or(1);
            return if late {
                TIMED_OUT
            } else if st == 0 {
                1
            } else {
                st
            };
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits for `child` and collects what it printed.
pub fn wait(host: &Host, mut child: Child, cancel: &AtomicBool, ssh: &Ssh) -> HostOutcome {
    let out = child.stdout.take().map(drain);
    let err = child.stderr.take().map(drain);
    let t = Instant::now();
    let code = wait_child(&mut child, cancel, ssh.timeout.map(|d| t + d));
    HostOutcome::ended(host, code, out, err, t)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(args.contains(&"ConnectTimeout=10".to_string()), "{args:?}");
    }

    #[test]
    fn quoting_for_the_remote_shell() {
        assert_eq!(shell_quote("/dev/sdb"), "/dev/sdb");
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), "'it'\\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
