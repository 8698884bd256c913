//! Many machines through OpenSSH: the tests start their own sshd on 127.0.0.1 and 127.0.0.2 at
//! a free port, with keys made in a temporary directory and a temporary ssh config (never a
//! system service, never an address off this machine). Two "hosts" share one kernel; that is
//! enough for the plumbing: JSON collected per host, human output grouped by host, an
//! unreachable host named while the others go on, --push, --confirm HOST:DEV, and Ctrl-C
//! stopping every remote run without leaving scratch files. Host aliases `h*` in the ssh config
//! all lead to 127.0.0.1: a fleet of many names on one sshd, for the fan-out's bounds, the
//! push's cache, and results as they come.

mod common;

use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use common::*;

const MIB: u64 = 1 << 20;

/// An sshd of the test's own, listening on 127.0.0.1 and 127.0.0.2; killed on drop.
struct Sshd {
    child: Child,
    dir: tempfile::TempDir,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Sshd {
    fn start() -> Option<Self> {
        let sshd = ["/usr/sbin/sshd", "/sbin/sshd"]
            .into_iter()
            .find(|p| Path::new(p).exists())?;
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        for (k, t) in [("host_key", "ed25519"), ("client_key", "ed25519")] {
            let st = Command::new("ssh-keygen")
                .args(["-q", "-t", t, "-N", "", "-f"])
                .arg(d.join(k))
                .status()
                .unwrap();
            assert!(st.success());
        }
        std::fs::copy(d.join("client_key.pub"), d.join("authorized_keys")).unwrap();
        // The hosts' $TMPDIR (where --push puts its copy): this sshd's own.
        std::fs::create_dir(d.join("tmp")).unwrap();
        let port = free_port();
        std::fs::write(
            d.join("sshd_config"),
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nListenAddress 127.0.0.2\n\
                 HostKey {}\nAuthorizedKeysFile {}\nPidFile {}\nUsePAM no\nStrictModes no\n\
                 PermitRootLogin prohibit-password\nPasswordAuthentication no\n\
                 KbdInteractiveAuthentication no\nSubsystem sftp internal-sftp\n\
                 SetEnv XDG_DATA_HOME={} TMPDIR={}\n",
                d.join("host_key").display(),
                d.join("authorized_keys").display(),
                d.join("sshd.pid").display(),
                d.join("data").display(),
                d.join("tmp").display()
            ),
        )
        .unwrap();
        std::fs::write(
            d.join("ssh_config"),
            format!(
                "Host h*\n  HostName 127.0.0.1\nHost *\n  User root\n  Port {port}\n  IdentityFile {}\n  IdentitiesOnly yes\n  \
                 UserKnownHostsFile /dev/null\n  StrictHostKeyChecking no\n  LogLevel ERROR\n",
                d.join("client_key").display()
            ),
        )
        .unwrap();
        // sshd insists on its privilege separation directory.
        let _ = std::fs::create_dir_all("/run/sshd");
        let child = Command::new(sshd)
            .arg("-D")
            .arg("-e")
            .arg("-f")
            .arg(d.join("sshd_config"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let s = Sshd { child, dir };
        wait_until(10, "sshd to listen", || {
            std::net::TcpStream::connect(("127.0.0.2", port)).is_ok()
        });
        Some(s)
    }

    fn config(&self) -> PathBuf {
        self.dir.path().join("ssh_config")
    }

    /// What `--push` holds in the hosts' $TMPDIR: the copies (named for their hash) and each
    /// session's link to one (`HASH.PID`), in the private directory `blkscope-UID` (or a
    /// `blkscope.XXXXXXXX` where that one cannot be used).
    fn pushed(&self) -> Vec<PathBuf> {
        let mut files = Vec::new();
        for d in std::fs::read_dir(self.dir.path().join("tmp"))
            .unwrap()
            .flatten()
        {
            if d.file_name().to_string_lossy().starts_with("blkscope") {
                files.extend(
                    std::fs::read_dir(d.path())
                        .unwrap()
                        .flatten()
                        .map(|e| e.path()),
                );
            }
        }
        files.sort();
        files
    }

    /// The sessions' links among them.
    fn links(&self) -> Vec<PathBuf> {
        self.pushed()
            .into_iter()
            .filter(|p| {
                p.extension()
                    .is_some_and(|e| e.to_string_lossy().parse::<u32>().is_ok())
            })
            .collect()
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn sshd() -> Option<Sshd> {
    if !require(true, &["ssh", "ssh-keygen"]) {
        return None;
    }
    let s = Sshd::start();
    if s.is_none() {
        assert!(
            !required(),
            "BLKSCOPE_REQUIRE_PRIVILEGED_TESTS=1 but sshd is missing (openssh-server)"
        );
        eprintln!("SKIPPED: no sshd (openssh-server)");
    }
    s
}

fn hosts_cmd(s: &Sshd, args: &[&str]) -> Command {
    let mut c = bin();
    c.args(["--host", "127.0.0.1", "--host", "127.0.0.2", "--ssh-config"])
        .arg(s.config())
        .arg("--remote-blkscope")
        .arg(env!("CARGO_BIN_EXE_blkscope"))
        .args(args);
    c
}

#[test]
fn json_from_every_host_and_human_output_grouped() {
    let Some(s) = sshd() else { return };
    let out = hosts_cmd(&s, &["list", "--json"]).output().unwrap();
    let v = ok_json(&out, "blkscope --host");
    let hosts = v["hosts"].as_array().unwrap();
    assert_eq!(hosts.len(), 2, "{v}");
    for (h, want) in hosts.iter().zip(["127.0.0.1", "127.0.0.2"]) {
        assert_eq!(h["host"], want);
        assert_eq!(h["ok"], true, "{h}");
        assert!(!h["devices"].as_array().unwrap().is_empty(), "{h}");
    }
    let out = hosts_cmd(&s, &["check", "/tmp"]).output().unwrap();
    let text = stdout_of(&out);
    assert!(out.status.success(), "{out:?}");
    let a = text.find("== 127.0.0.1 ==").expect(&text);
    let b = text.find("== 127.0.0.2 ==").expect(&text);
    assert!(a < b && text[a..b].contains("clear"), "{text}");
}

#[test]
fn an_unreachable_host_is_one_line_and_the_others_go_on() {
    let Some(s) = sshd() else { return };
    let closed = free_port();
    let out = bin()
        .args(["--host", "127.0.0.1", "--host"])
        .arg(format!("127.0.0.2:{closed}"))
        .arg("--ssh-config")
        .arg(s.config())
        .arg("--remote-blkscope")
        .arg(env!("CARGO_BIN_EXE_blkscope"))
        .args(["list", "--json"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "a host failed: {out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(lines[0].contains(&format!("127.0.0.2:{closed}")), "{err}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["hosts"][0]["ok"], true, "{v}");
    assert_eq!(v["hosts"][1]["ok"], false, "{v}");
    assert!(
        v["hosts"][1]["error"]
            .as_str()
            .unwrap()
            .contains("127.0.0.2"),
        "{v}"
    );
    // No blkscope on the host: said so, with the way out.
    let out = bin()
        .args(["--host", "127.0.0.1", "--ssh-config"])
        .arg(s.config())
        .args(["--remote-blkscope", "/nonexistent/blkscope", "list"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("--push"), "{err}");
}

#[test]
fn push_copies_blkscope_over_and_confirm_names_the_host() {
    let Some(s) = sshd() else { return };
    let lo = Loop::new(32 * MIB, None, false);
    // Give the device data, so a write needs the name typed back.
    let st = Command::new("dd")
        .args([
            "if=/dev/urandom",
            &format!("of={}", lo.dev()),
            "bs=1M",
            "count=1",
            "status=none",
        ])
        .status()
        .unwrap();
    assert!(st.success());
    let run = |confirm: &str| {
        bin()
            .args(["--host", "127.0.0.1", "--ssh-config"])
            .arg(s.config())
            .args([
                "--push",
                "run",
                lo.dev(),
                "--size",
                "4M",
                "--no-save",
                "--json",
            ])
            .args(["--confirm", confirm])
            .output()
            .unwrap()
    };
    // The confirmation names another host: not given here, so refused (exit 3) there.
    let out = run(&format!("127.0.0.9:{}", lo.name));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    assert_eq!(v["hosts"][0]["exit_status"], 3, "{v} {out:?}");
    let out = run(&format!("127.0.0.1:{}", lo.name));
    let v = ok_json(&out, "blkscope --host");
    assert_eq!(v["hosts"][0]["results"][0]["bytes"], 4 * MIB, "{v}");
    // The pushed copy is gone afterwards (a few seconds on, for another alias of the host).
    wait_until(10, "the pushed copy to go", || s.pushed().is_empty());
}

/// A run in `dir` that goes on for a minute unless stopped.
fn a_minute_run(dir: &Path) -> Vec<&str> {
    let dir = dir.to_str().unwrap();
    vec!["run", dir, "--size", "16M", "--runtime", "60s", "--no-save"]
}

#[test]
fn ctrl_c_stops_every_remote_run_and_leaves_no_scratch_file() {
    let Some(s) = sshd() else { return };
    let dir = tempfile::tempdir().unwrap();
    let files = |d: &Path| std::fs::read_dir(d).unwrap().count();
    let child = hosts_cmd(&s, &a_minute_run(dir.path()))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_until(20, "both remote runs to start", || files(dir.path()) == 2);
    // SAFETY: signalling the blkscope process this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let t = Instant::now();
    let out = child.wait_with_output().unwrap();
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    assert_ne!(out.status.code(), Some(0));
    wait_until(10, "the remote runs to remove their scratch files", || {
        files(dir.path()) == 0
    });
}

#[test]
fn compare_across_hosts_and_a_fleet_table() {
    let Some(s) = sshd() else { return };
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let runs = s.dir.path().join("data/blkscope/runs");
    let mut ids = Vec::new();
    for host in ["127.0.0.1", "127.0.0.2"] {
        let out = bin()
            .args(["--host", host, "--ssh-config"])
            .arg(s.config())
            .arg("--remote-blkscope")
            .arg(env!("CARGO_BIN_EXE_blkscope"))
            .args(["run", d, "--size", "8M", "--bs", "64k"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
        let mut now: Vec<String> = std::fs::read_dir(&runs)
            .unwrap()
            .flatten()
            .map(|e| e.path().file_stem().unwrap().to_string_lossy().into_owned())
            .filter(|n| !ids.contains(n))
            .collect();
        assert_eq!(now.len(), 1, "{now:?}");
        ids.push(now.remove(0));
    }
    let out = bin()
        .arg("--ssh-config")
        .arg(s.config())
        .arg("--remote-blkscope")
        .arg(env!("CARGO_BIN_EXE_blkscope"))
        .args(["compare"])
        .arg(format!("127.0.0.1:{}", ids[0]))
        .arg(format!("127.0.0.2:{}", ids[1]))
        .arg("--json")
        .output()
        .unwrap();
    let v = ok_json(&out, "blkscope --host");
    assert!(
        v.as_array().unwrap().iter().any(|d| d["metric"] == "MB/s"),
        "{v}"
    );
    let out = hosts_cmd(&s, &["report", &ids[0], "--fleet", "--format", "json"])
        .output()
        .unwrap();
    let v = ok_json(&out, "blkscope --host");
    let row = &v["fleet"][0];
    assert_eq!(row["hosts"].as_array().unwrap().len(), 2, "{v}");
    assert_eq!(row["spread"], 0.0, "the same run on both: {v}");
    let out = hosts_cmd(&s, &["report", &ids[0], "--fleet"])
        .output()
        .unwrap();
    let text = stdout_of(&out);
    assert!(
        text.contains("127.0.0.2") && text.contains("spread"),
        "{text}"
    );
    // runs lists each host's saved runs (here both hosts share one data directory).
    let out = hosts_cmd(&s, &["runs", "--json"]).output().unwrap();
    let v = ok_json(&out, "blkscope --host");
    for h in v["hosts"].as_array().unwrap() {
        let listed: Vec<&str> = h["runs"]
            .as_array()
            .unwrap_or_else(|| panic!("{h}"))
            .iter()
            .map(|r| r["id"].as_str().unwrap())
            .collect();
        assert_eq!(listed, [ids[0].as_str(), ids[1].as_str()], "{v}");
    }
}

/// Moves the selection down one row and waits until the screen shows it (a capture taken
/// before the redraw would name the row the selection just left).
fn step_down(t: &Tmux, before: &str) {
    t.keys(&["j"]);
    let t0 = Instant::now();
    while t.screen() == before && t0.elapsed() < Duration::from_secs(2) {
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The processes sshd `pid` runs: one per open session.
fn sessions_of(pid: u32) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter(|st| {
            // pid (comm) state ppid ...: comm may hold spaces, so split after the last ')'.
            st.rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|p| p.parse::<u32>().ok())
                == Some(pid)
        })
        .count()
}

#[test]
fn the_tui_shows_each_host_streams_its_iostat_and_runs_a_test_there() {
    let Some(s) = sshd() else { return };
    if !require(true, &["tmux", "losetup", "dd"]) {
        return;
    }
    let lo = Loop::new(64 * MIB, None, false);
    // Data on it, so a write there needs its name typed back.
    let st = Command::new("dd")
        .args(["if=/dev/urandom", &format!("of={}", lo.dev())])
        .args(["bs=1M", "count=1", "oflag=direct", "status=none"])
        .status()
        .unwrap();
    assert!(st.success());
    let remote_runs = s.dir.path().join("data/blkscope/runs");
    let dir = tempfile::tempdir().unwrap();
    let t = Tmux::start(
        dir.path(),
        "",
        &format!(
            "--host 127.0.0.1 --host 127.0.0.2 --host 127.0.0.3:1 --ssh-config {} --push",
            s.config().display(),
        ),
    );
    // Tall enough for both hosts' trees in most cases; the checks below do not rely on it
    // (other tests add loop devices of their own meanwhile).
    t.resize(100, 50);
    let screen = t.wait_for(&["127.0.0.1 ", "device(s)"], 30);
    println!("{screen}");
    // --push: each reachable host holds this blkscope for the whole session; the two "hosts"
    // are one machine, so they share one copy, each with its own link to it.
    wait_until(
        20,
        "a link to the pushed copy for each reachable host",
        || s.links().len() == 2,
    );
    let pushed = s.pushed();
    println!("pushed: {pushed:?}");
    assert_eq!(pushed.len(), 3, "one copy and two links: {pushed:?}");

    // Down the tree: the loop device under the first host, then under the second (each host
    // has its own node and its own devices beneath it).
    let want_dev = format!("/dev/{} loop", lo.name);
    let selected = |host: &str, sc: &str| {
        sc.contains(&format!("host         {host}")) && sc.contains(&want_dev)
    };
    let (mut under_first, mut under_second) = (false, false);
    // A host that answers late adds its devices above the selection: then walk again from the
    // top. Other tests' loop devices may be listed too: as many steps as that takes.
    for _attempt in 0..5 {
        for _ in 0..400 {
            let sc = t.screen();
            under_first |= selected("127.0.0.1", &sc);
            if selected("127.0.0.2", &sc) {
                under_second = true;
                break;
            }
            step_down(&t, &sc);
        }
        if under_first && under_second {
            break;
        }
        println!("walking again from the top:\n{}", t.screen());
        under_second = false;
        std::thread::sleep(Duration::from_millis(500));
        for _ in 0..500 {
            t.keys(&["k"]);
        }
        std::thread::sleep(Duration::from_millis(300));
    }
    assert!(
        under_first && under_second,
        "{want_dev} under 127.0.0.1: {under_first}, under 127.0.0.2: {under_second}:\n{}",
        t.screen()
    );
    // Its iostat panel comes from that host's own `stat --json`, over ssh.
    let screen = t.wait_for(&["r/s", "%util"], 15);
    println!("{screen}");

    // The doctor runs there too.
    t.keys(&["d"]);
    let screen = t.wait_for(&["Doctor:", "backing_cache"], 30);
    println!("{screen}");
    t.keys(&["Escape"]);

    let before = diskstats_sectors(&lo.name).1;
    t.keys(&["r"]);
    t.wait_for(&["Confirm write to"], 10);
    t.keys(&[&lo.name, "Enter"]);
    let screen = t.wait_for(&[&format!("Seq write on 127.0.0.2:{}", lo.name)], 20);
    println!("{screen}");
    let screen = t.wait_for(&["Results", "saved"], 60);
    println!("{screen}");
    let written = (diskstats_sectors(&lo.name).1 - before) * 512;
    println!("written to {}: {written} bytes", lo.name);
    assert!(
        written >= 64 * MIB,
        "the host's blkscope wrote {written} bytes"
    );
    // Saved on the host (its sshd gives it its own XDG_DATA_HOME), not here.
    let saved: Vec<_> = std::fs::read_dir(&remote_runs)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    println!("saved on the host: {saved:?}");
    assert!(
        saved.iter().any(|p| std::fs::read_to_string(p)
            .unwrap_or_default()
            .contains(&format!("/dev/{}", lo.name))),
        "{saved:?}"
    );
    // o fetches the hosts' saved runs, not this machine's. Both hosts share one data
    // directory here, so 127.0.0.1 offers the run just made as its own (new); 127.0.0.2's
    // is the result already shown, and is not added twice.
    t.keys(&["o"]);
    let screen = t.wait_for(&["reopened 1 saved result"], 30);
    println!("{screen}");
    assert!(screen.contains("saved as 127.0.0.1:"), "{screen}");

    // The host nothing listens on is a node too, saying so: at the top (the hosts that
    // failed come first), so the search starts there.
    t.keys(&["Escape"]);
    for _ in 0..60 {
        t.keys(&["PPage"]);
    }
    let mut unreachable = false;
    // Other tests' loop devices may be listed too: as many steps as that takes.
    for _ in 0..400 {
        let sc = t.screen();
        if sc.contains("host         127.0.0.3:1") && sc.contains("unreachable") {
            unreachable = true;
            break;
        }
        step_down(&t, &sc);
    }
    assert!(
        unreachable,
        "127.0.0.3:1 never shown unreachable:\n{}",
        t.screen()
    );

    // Quitting closes every channel: the hosts' `stat` streams end.
    t.keys(&["q"]);
    t.wait_for(&["BLKSCOPE-EXITED"], 15);
    let sshd_pid = s.child.id();
    wait_until(10, "sshd's sessions to close", || {
        sessions_of(sshd_pid) == 0
    });
    // ... and the pushed copy is gone with the last link.
    wait_until(10, "the pushed copy to go", || s.pushed().is_empty());
}

/// A host that begins with '-' would be read by ssh as an option (`-oProxyCommand=...` runs a
/// command on this machine): refused in one line naming the file and the line, before any ssh
/// starts, whether it comes from a hosts file or from --host.
#[test]
fn a_host_that_reads_as_an_option_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let hosts = dir.path().join("hosts");
    std::fs::write(
        &hosts,
        format!(
            "# the fleet\ndb1\n-oProxyCommand=touch {}\n",
            marker.display()
        ),
    )
    .unwrap();
    let out = bin()
        .arg("--hosts-file")
        .arg(&hosts)
        .args(["list", "--json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    println!("{:?}: {err}", out.status);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(out.stdout.is_empty(), "nothing printed on stdout");
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(
        err.contains(&format!("{}:3:", hosts.display())) && err.contains("begins with '-'"),
        "names the file, the line and why: {err}"
    );
    assert!(!marker.exists(), "no ssh ran the option");
    for arg in ["--host=-oProxyCommand=true", "--host=root@-oX=y"] {
        let out = bin().args([arg, "list"]).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        println!("{arg}: {:?}: {err}", out.status);
        assert_eq!(out.status.code(), Some(2), "{arg}: {err}");
        assert!(err.contains("begins with '-'"), "{arg}: {err}");
    }
}

/// 24 names of this machine, 4 at a time, with --push: never more than a few sshd sessions at
/// once, every host answers, the binary is sent to few and found in the private cache by the
/// rest, and nothing is left there afterwards.
#[test]
fn a_fleet_at_a_bounded_fanout_pushes_once_and_leaves_nothing() {
    let Some(s) = sshd() else { return };
    let sshd_pid = s.child.id();
    let (stop, most) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicUsize::new(0)),
    );
    let sampler = {
        let (stop, most) = (stop.clone(), most.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                most.fetch_max(sessions_of(sshd_pid), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let out = bin()
        .args(["--host", "h[01-24]", "--fanout", "4", "--ssh-config"])
        .arg(s.config())
        .args(["--push", "list", "--json", "--no-signatures"])
        .output()
        .unwrap();
    stop.store(true, Ordering::Relaxed);
    sampler.join().unwrap();
    let v = ok_json(&out, "blkscope --host h[01-24] --push");
    let hosts = v["hosts"].as_array().unwrap();
    let labels: Vec<&str> = hosts.iter().map(|h| h["host"].as_str().unwrap()).collect();
    let pushed = |how: &str| hosts.iter().filter(|h| h["pushed"] == how).count();
    let (sent, cached) = (pushed("sent"), pushed("cached"));
    let most = most.load(Ordering::Relaxed);
    println!("hosts {labels:?}; sent {sent}, cached {cached}; most sshd sessions at once: {most}");
    assert_eq!(labels.len(), 24, "{v}");
    assert_eq!((labels[0], labels[23]), ("h01", "h24"));
    assert!(hosts.iter().all(|h| h["ok"] == true), "{v}");
    assert_eq!(sent + cached, 24, "each says how it got blkscope: {v}");
    assert!(sent < 12, "most hosts found this run's copy: sent {sent}");
    assert!(
        most <= 8,
        "at most 4 hosts at once (and a closing one): {most}"
    );
    wait_until(10, "the pushed copy to go", || s.pushed().is_empty());
}

/// A host that never greets is given up after --connect-timeout, two refused hosts are said in
/// one line, and with --ndjson the host that answered is printed while the silent one is
/// still being waited for.
#[test]
fn results_come_as_hosts_finish_and_failures_are_said_once_per_cause() {
    let Some(s) = sshd() else { return };
    // Accepts connections and never says a word.
    let hole = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let hole_port = hole.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for c in hole.incoming() {
            held.push(c);
        }
    });
    let (closed1, closed2) = (free_port(), free_port());
    let mut child = bin()
        .args(["--host", "127.0.0.1", "--host"])
        .arg(format!(
            "127.0.0.1:{hole_port},127.0.0.2:{closed1},127.0.0.3:{closed2}"
        ))
        .args(["--connect-timeout", "8", "--ssh-config"])
        .arg(s.config())
        .arg("--remote-blkscope")
        .arg(env!("CARGO_BIN_EXE_blkscope"))
        .args(["list", "--ndjson", "--no-signatures"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = Vec::new();
    let mut running_when_ok = None;
    for line in lines.by_ref() {
        let v: serde_json::Value = serde_json::from_str(&line.unwrap()).unwrap();
        if v["host"] == "127.0.0.1" {
            running_when_ok = Some(child.try_wait().unwrap().is_none());
        }
        seen.push(v);
    }
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let hosts: Vec<String> = seen.iter().map(|v| v["host"].to_string()).collect();
    println!(
        "{:?}; lines {hosts:?}; printed while running: {running_when_ok:?}\n{err}",
        out.status
    );
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(seen.len(), 4, "a line a host: {hosts:?}");
    assert_eq!(
        running_when_ok,
        Some(true),
        "the answer came before the silent host's end"
    );
    assert_eq!(
        seen.last().unwrap()["host"],
        format!("127.0.0.1:{hole_port}"),
        "the silent host last: {hosts:?}"
    );
    assert_eq!(seen.last().unwrap()["cause"], "connect_timeout");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "one line per cause: {err}");
    assert!(
        lines[0].starts_with("blkscope: 2 hosts: connection refused: is sshd running there")
            && lines[0].ends_with(&format!("127.0.0.2:{closed1}, 127.0.0.3:{closed2}")),
        "{err}"
    );
    assert!(
        lines[1].contains(&format!(
            "host 127.0.0.1:{hole_port}: no answer within the connect timeout"
        )),
        "{err}"
    );
}

/// --timeout stops a host's command that runs on, and the run there stops with it.
#[test]
fn a_command_past_its_timeout_is_stopped_there() {
    let Some(s) = sshd() else { return };
    let dir = tempfile::tempdir().unwrap();
    let t = Instant::now();
    let out = hosts_cmd(
        &s,
        &[&["--timeout", "3s"][..], &a_minute_run(dir.path())].concat(),
    )
    .output()
    .unwrap();
    let took = t.elapsed();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    println!("{:?} after {took:?}: {err}", out.status);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(took < Duration::from_secs(30), "{took:?}");
    assert!(
        err.contains("2 hosts: stopped: it had not finished within --timeout"),
        "{err}"
    );
    let files = || std::fs::read_dir(dir.path()).unwrap().count();
    wait_until(10, "the remote runs to remove their scratch files", || {
        files() == 0
    });
}

/// An Ansible inventory's group, its hosts reached at their ansible_host, labelled by their
/// inventory names; and the doctor's table across hosts.
#[test]
fn an_ansible_group_and_the_doctors_table_across_hosts() {
    let Some(s) = sshd() else { return };
    let dir = tempfile::tempdir().unwrap();
    let inv = dir.path().join("inventory.ini");
    std::fs::write(
        &inv,
        "[storage]\nnas1 ansible_host=127.0.0.1\nnas2 ansible_host=127.0.0.2\n\n\
         [web]\nweb1 ansible_host=192.0.2.1\n",
    )
    .unwrap();
    let out = bin()
        .arg("--inventory")
        .arg(format!("{}:storage", inv.display()))
        .arg("--ssh-config")
        .arg(s.config())
        .arg("--remote-blkscope")
        .arg(env!("CARGO_BIN_EXE_blkscope"))
        .args(["list", "--json", "--no-signatures"])
        .output()
        .unwrap();
    let v = ok_json(&out, "--inventory FILE:storage");
    let labels: Vec<&str> = v["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["host"].as_str().unwrap())
        .collect();
    println!("{labels:?}");
    assert_eq!(labels, ["nas1", "nas2"], "{v}");
    assert!(
        v["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .all(|h| h["ok"] == true),
        "{v}"
    );

    let out = hosts_cmd(&s, &["doctor"]).output().unwrap();
    let text = stdout_of(&out);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    println!("{text}\n{err}");
    assert!(text.contains("== 127.0.0.1 =="), "{text}");
    assert!(text.contains("across 2 hosts, worst first"), "{text}");
    assert!(!err.contains("blkscope-fleet-summary"), "{err}");
    assert!(!text.contains("no figures from"), "{text}");
}
