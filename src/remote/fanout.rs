//! Many hosts, a bounded number at a time (`--fanout`, 32 by default as pdsh's): a pool of
//! workers takes the hosts in order, each host's command runs over one ssh connection (with
//! the push ahead of it on the same channel), a refusal during key exchange is tried again
//! after a pause and narrows the fan-out for a while (sshd's MaxStartups drops connections at
//! random once too many are in key exchange: fewer at once is what gets through), and each
//! outcome is handed over the moment it is known.

use std::io::{BufRead, BufReader, Read};
use std::process::Child;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use super::failures::Cause;
use super::host::Host;
use super::push::{Binary, answer, release_script};
use super::ssh::{HostOutcome, Ssh, drain, piped, shell_quote, ssh_command, wait_child};

/// pdsh's and ClusterShell's default.
pub const DEFAULT_FANOUT: u16 = 32;
/// Tries after the first for a transient refusal.
pub const RETRIES: u32 = 5;
/// The fan-out never narrows below this.
const NARROWEST: usize = 4;

/// How many workers may start a host now: a quarter fewer after each refusal during key
/// exchange, one more after each host that got through, never more than the width.
struct Throttle {
    allowed: AtomicUsize,
    width: usize,
}

impl Throttle {
    fn refused(&self) {
        let _ = self
            .allowed
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |a| {
                Some((a * 3 / 4).max(NARROWEST.min(self.width)))
            });
    }

    fn through(&self) {
        let _ = self
            .allowed
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |a| {
                Some((a + 1).min(self.width))
            });
    }

    /// Waits until worker `w` may start a host, or no host is left to start, or the run is
    /// cancelled.
    fn wait_turn(&self, w: usize, cancel: &AtomicBool, left: &dyn Fn() -> bool) {
        while w >= self.allowed.load(Ordering::SeqCst) && left() && !cancel.load(Ordering::Relaxed)
        {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// How the hosts are run (at most `ssh.fanout` connections at once).
pub struct Fanout<'a> {
    pub ssh: &'a Ssh,
    /// The binary to push, prepared once.
    pub push: Option<&'a Binary>,
    pub cancel: Arc<AtomicBool>,
    /// Ask each host for the figures of the table across hosts (`BLKSCOPE_FLEET_SUMMARY=1`).
    pub summary: bool,
}

/// What hears of each host as it finishes (its index and outcome), and of the progress every
/// half second (`None`).
pub type Each<'e> = dyn FnMut(Option<(usize, &HostOutcome)>, Progress) + 'e;

/// How far a fan-out has got.
#[derive(Debug, Clone, Copy, Default)]
pub struct Progress {
    pub done: usize,
    pub failed: usize,
    pub running: usize,
    pub waiting: usize,
}

impl Fanout<'_> {
    /// Runs blkscope with `args_for(host)` on every host, `ssh.fanout` at a time; `each` hears of
    /// every host as it finishes (its index in `hosts`, its outcome, the progress), and of the
    /// progress every half second (`None`). Returns the outcomes in the order of `hosts`.
    pub fn run(
        &self,
        hosts: &[Host],
        args_for: &(dyn Fn(&Host) -> Vec<String> + Sync),
        each: &mut Each,
    ) -> Vec<HostOutcome> {
        let next = AtomicUsize::new(0);
        let running = AtomicUsize::new(0);
        let (tx, rx) = mpsc::channel::<(usize, HostOutcome)>();
        let mut outcomes: Vec<Option<HostOutcome>> = vec![None; hosts.len()];
        let width = self.ssh.fanout.clamp(1, hosts.len().max(1));
        let throttle = Throttle {
            allowed: AtomicUsize::new(width),
            width,
        };
        std::thread::scope(|s| {
            for w in 0..width {
                let tx = tx.clone();
                let (next, running, throttle) = (&next, &running, &throttle);
                s.spawn(move || {
                    loop {
                        throttle.wait_turn(w, &self.cancel, &|| {
                            next.load(Ordering::SeqCst) < hosts.len()
                        });
                        let i = next.fetch_add(1, Ordering::SeqCst);
                        let Some(h) = hosts.get(i) else { break };
                        running.fetch_add(1, Ordering::SeqCst);
                        let o = self.host_with_retries(h, &args_for(h), throttle);
                        running.fetch_sub(1, Ordering::SeqCst);
                        if tx.send((i, o)).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(tx);
            let mut p = Progress::default();
            loop {
                let started = next.load(Ordering::SeqCst).min(hosts.len());
                p.running = running.load(Ordering::SeqCst);
                p.waiting = hosts.len() - started;
                match rx.recv_timeout(Duration::from_millis(500)) {
                    Ok((i, o)) => {
                        p.done += 1;
                        p.failed += usize::from(o.error().is_some());
                        p.running = running.load(Ordering::SeqCst);
                        each(Some((i, &o)), p);
                        outcomes[i] = Some(o);
                    }
                    Err(mpsc::RecvTimeoutError::Timeout) => each(None, p),
                    Err(mpsc::RecvTimeoutError::Disconnected) => break,
                }
            }
        });
        outcomes
            .into_iter()
            .zip(hosts)
            .map(|(o, h)| {
                o.unwrap_or_else(|| {
                    HostOutcome::failed(&h.label, "the worker running ssh failed".into())
                })
            })
            .collect()
    }

    /// One host, tried again after a transient refusal (0.5, 1, 2, 4, 4 s, with jitter).
    fn host_with_retries(&self, host: &Host, args: &[String], throttle: &Throttle) -> HostOutcome {
        let t = Instant::now();
        let mut attempt = 1;
        loop {
            let mut o = self.host_once(host, args);
            o.attempts = attempt;
            o.seconds = t.elapsed().as_secs_f64();
            let transient = Cause::of(&o).transient();
            if transient {
                throttle.refused();
            } else {
                throttle.through();
            }
            if attempt > RETRIES || !transient || self.cancelled() {
                return o;
            }
            let pause = 500u64 << (attempt - 1).min(3);
            std::thread::sleep(Duration::from_millis(pause + fastrand::u64(0..pause)));
            attempt += 1;
        }
    }

    fn cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }

    /// One try: the push (when asked) and the command, over one connection.
    fn host_once(&self, host: &Host, args: &[String]) -> HostOutcome {
        let env = if self.summary {
            "BLKSCOPE_FLEET_SUMMARY=1 "
        } else {
            ""
        };
        let remote = match self.push {
            Some(bin) => format!(
                "{}; {env}{}; s=$?; {}; exit $s",
                bin.acquire_script(),
                remote_line("\"$b\"", args),
                release_script()
            ),
            None => format!("{env}{}", remote_line(&remote_bin(self.ssh), args)),
        };
        match piped(ssh_command(self.ssh, host, &remote)) {
            Ok(child) => self.finish(host, child),
            Err(e) => HostOutcome::not_started(&host.label, &e),
        }
    }

    /// Sends the binary when the host asks for it, then waits for the command to end.
    fn finish(&self, host: &Host, mut child: Child) -> HostOutcome {
        let t = Instant::now();
        let err = child.stderr.take().map(drain);
        let (first_tx, first_rx) = mpsc::channel::<String>();
        let expect_marker = self.push.is_some();
        let out = child.stdout.take().map(|o| {
            std::thread::spawn(move || {
                let mut r = BufReader::new(o);
                if expect_marker {
                    let mut line = String::new();
                    let _ = r.read_line(&mut line);
                    let _ = first_tx.send(line.trim().to_string());
                }
                let mut v = Vec::new();
                let _ = r.read_to_end(&mut v);
                String::from_utf8_lossy(&v).into_owned()
            })
        });
        let deadline = self.ssh.timeout.map(|d| t + d);
        let mut pushed = None;
        if let Some(bin) = self.push {
            // The first line comes once the connection is up; ssh gives up by itself on a host
            // that never answers (ConnectTimeout), which ends the line too.
            let line = loop {
                match first_rx.recv_timeout(Duration::from_millis(100)) {
                    Ok(l) => break l,
                    Err(mpsc::RecvTimeoutError::Disconnected) => break String::new(),
                    Err(mpsc::RecvTimeoutError::Timeout) => {
                        if self.cancelled() || deadline.is_some_and(|d| Instant::now() >= d) {
                            break String::new();
                        }
                    }
                }
            };
            pushed = answer(&line, bin, child.stdin.as_mut());
        }
        let code = wait_child(&mut child, &self.cancel, deadline);
        HostOutcome {
            pushed,
            ..HostOutcome::ended(host, code, out, err, t)
        }
    }
}

/// Calls `f` on each of `items`, `width` at a time, each on a worker of a scoped pool.
pub fn pool<T: Sync>(width: usize, items: &[T], f: &(dyn Fn(&T) + Sync)) {
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..width.clamp(1, items.len().max(1)) {
            s.spawn(|| {
                while let Some(item) = items.get(next.fetch_add(1, Ordering::SeqCst)) {
                    f(item);
                }
            });
        }
    });
}

/// The blkscope to run on a host that is not pushed to: the one named, or `blkscope` on its
/// PATH.
pub fn remote_bin(ssh: &Ssh) -> String {
    shell_quote(if ssh.remote_bin.is_empty() {
        "blkscope"
    } else {
        &ssh.remote_bin
    })
}

/// The remote command line: blkscope with `args`, stopping when the channel's input closes.
pub fn remote_line(bin: &str, args: &[String]) -> String {
    let quoted: Vec<String> = args.iter().map(|a| shell_quote(a)).collect();
    format!("BLKSCOPE_EXIT_ON_EOF=1 {bin} {}", quoted.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Narrowed by refusals, a worker past the allowed width waits, and goes once no host is
    /// left to start (it waited forever before: a fan-out that hung at its end).
    #[test]
    fn the_throttle_narrows_widens_and_lets_idle_workers_go_at_the_end() {
        let t = Throttle {
            allowed: AtomicUsize::new(32),
            width: 32,
        };
        for _ in 0..20 {
            t.refused();
        }
        let narrow = t.allowed.load(Ordering::SeqCst);
        t.through();
        let widened = t.allowed.load(Ordering::SeqCst);
        println!("after 20 refusals: {narrow}; after one host through: {widened}");
        assert_eq!((narrow, widened), (NARROWEST, NARROWEST + 1));
        let never = AtomicBool::new(false);
        let start = Instant::now();
        t.wait_turn(31, &never, &|| false);
        assert!(
            start.elapsed() < Duration::from_secs(1),
            "{:?}",
            start.elapsed()
        );
    }
}
