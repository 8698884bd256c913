//! A device that stops completing what a test issued: a loop device over a file on an ext4 file
//! system that is frozen (`fsfreeze`) while the test writes. The first interrupt cancels and the
//! samples say what the run still waits for; a second one exits at once and says so.
//! (Root and loop devices: the devices are made here and removed on drop.)

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use common::*;

const MIB: u64 = 1 << 20;

/// A loop device (direct I/O) over a file on a mounted ext4 file system, which can be frozen.
struct OverAFileSystem {
    dev: String,
    mount: Mount,
    _disk: Loop,
}

impl OverAFileSystem {
    fn new() -> Self {
        let disk = Loop::new(64 * MIB, None, false);
        sh("mkfs.ext4", &["-q", "-F", disk.dev()]);
        let mount = Mount::new(disk.dev());
        let file = mount.dir.path().join("inner.img");
        let path = file.to_str().unwrap();
        sh("fallocate", &["-l", "16M", path]);
        let out = sh("losetup", &["--find", "--show", "--direct-io=on", path]);
        let dev = stdout_of(&out).trim().to_string();
        Self {
            dev,
            mount,
            _disk: disk,
        }
    }

    fn name(&self) -> &str {
        self.dev.trim_start_matches("/dev/")
    }
}

impl Drop for OverAFileSystem {
    fn drop(&mut self) {
        // Thawed first: a frozen file system holds the detach (and the unmount) for ever.
        thaw(self.mount.dir.path());
        let _ = Command::new("losetup")
            .env("PATH", path_with_sbin())
            .args(["-d", &self.dev])
            .status();
    }
}

/// Root, loop devices and the tools that make and freeze the file system under one (or a
/// printed reason to skip; a failure where privileged tests are required).
fn can_freeze() -> bool {
    require(true, &["losetup", "mkfs.ext4", "fsfreeze", "fallocate"])
}

fn thaw(dir: &Path) {
    let _ = Command::new("fsfreeze")
        .env("PATH", path_with_sbin())
        .args(["-u"])
        .arg(dir)
        .stderr(Stdio::null())
        .status();
}

/// The file system frozen until drop.
struct Frozen(PathBuf);

impl Frozen {
    fn new(dir: &Path) -> Self {
        sh("fsfreeze", &["-f", dir.to_str().unwrap()]);
        Self(dir.to_path_buf())
    }
}

impl Drop for Frozen {
    fn drop(&mut self) {
        thaw(&self.0);
    }
}

/// The blkscope under test; on drop (a failed test) thawed by then, killed and waited for.
struct Running(Option<Child>);

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

/// `blkscope run` writing to `lo` with `job` and `more` arguments, its outputs piped.
fn write_to(lo: &OverAFileSystem, job: &[&str], more: &[&str]) -> Running {
    let child = bin()
        .args(["run", &lo.dev, "--op", "write"])
        .args(job)
        .args(more)
        .args(["--confirm", lo.name(), "--no-save"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    Running(Some(child))
}

/// The child's status once it has ended, which it must within `secs` of `after`.
fn ended_within(child: &mut Child, secs: u64, after: &str) -> std::process::ExitStatus {
    let t = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        assert!(
            t.elapsed() < Duration::from_secs(secs),
            "no end {secs} s after {after}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Lines of the child's stdout and stderr as they come, stderr's marked `err: `.
fn lines_of(child: &mut Child) -> Receiver<String> {
    let (tx, rx) = std::sync::mpsc::channel();
    let out = child.stdout.take().unwrap();
    let err = child.stderr.take().unwrap();
    let pass = |r: Box<dyn std::io::Read + Send>, mark: &'static str| {
        let tx = tx.clone();
        std::thread::spawn(move || {
            for l in BufReader::new(r).lines().map_while(Result::ok) {
                if tx.send(format!("{mark}{l}")).is_err() {
                    return;
                }
            }
        });
    };
    pass(Box::new(out), "");
    pass(Box::new(err), "err: ");
    rx
}

/// The first line within `secs` for which `want` holds.
fn line_where(rx: &Receiver<String>, secs: u64, what: &str, want: impl Fn(&str) -> bool) -> String {
    let t = Instant::now();
    let mut seen = Vec::new();
    loop {
        let left = Duration::from_secs(secs).saturating_sub(t.elapsed());
        match rx.recv_timeout(left) {
            Ok(l) if want(&l) => return l,
            Ok(l) => seen.push(l),
            Err(RecvTimeoutError::Timeout) | Err(RecvTimeoutError::Disconnected) => {
                let last: Vec<_> = seen.iter().rev().take(3).collect();
                panic!("no line with {what} in {secs} s; the last lines: {last:#?}");
            }
        }
    }
}

/// The first NDJSON sample within `secs` for which `want` holds.
fn sample_where(
    rx: &Receiver<String>,
    secs: u64,
    what: &str,
    want: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let l = line_where(rx, secs, what, |l| {
        let v: serde_json::Value = serde_json::from_str(l).unwrap_or_default();
        v["type"] == "sample" && want(&v)
    });
    serde_json::from_str(&l).unwrap()
}

fn signal(child: &Child, sig: i32) {
    // SAFETY: signalling the blkscope process this test started.
    unsafe { libc::kill(child.id() as i32, sig) };
}

/// A write test (`--ndjson` or `--json`) on a loop device whose file system is frozen once it
/// writes, then SIGINT: what the run says it waits for (the `stopping` sample's JSON, or the
/// line on stderr); then a second SIGINT, which must end it with 130 and its line.
fn cancel_a_stalled_write(output: &str, said: impl Fn(&Receiver<String>) -> String) {
    let lo = OverAFileSystem::new();
    // A loop device's counters outlive its attachment: a number used before starts above 0.
    let (_, written) = diskstats_sectors(lo.name());
    let mut running = write_to(
        &lo,
        &[
            "--bs",
            "64k",
            "--iodepth",
            "8",
            "--mode",
            "direct",
            "--engine",
            "uring",
        ],
        &["--runtime", "60s", output],
    );
    let child = running.0.as_mut().unwrap();
    let rx = lines_of(child);
    wait_until(20, "the test to write", || {
        diskstats_sectors(lo.name()).1 > written + 2048
    });
    let frozen = Frozen::new(lo.mount.dir.path());
    signal(child, libc::SIGINT);
    // The ring's I/Os wait in the frozen file system: after a second the run says so.
    let words = said(&rx);
    println!("{output}: {words}");
    // Still running while the device holds its I/Os.
    assert!(
        child.try_wait().unwrap().is_none(),
        "ended before a second interrupt"
    );
    signal(child, libc::SIGINT);
    let t = Instant::now();
    let status = ended_within(child, 10, "a second interrupt");
    // Said before the exit: in the channel by now, or on its way.
    let last = line_where(&rx, 10, "the second interrupt's line", |l| {
        l.starts_with("err: blkscope: a second interrupt")
    });
    println!("status {status:?} after {:?}: {last}", t.elapsed());
    assert_eq!(status.code(), Some(130), "{last}");
    assert!(last.contains("exiting at once, without waiting"), "{last}");
    drop(frozen);
}

#[test]
fn a_stalled_runs_samples_say_what_it_waits_for_and_a_second_interrupt_exits() {
    if !can_freeze() {
        return;
    }
    cancel_a_stalled_write("--ndjson", |rx| {
        let v = sample_where(rx, 15, "stopping", |v| v["stopping"].is_object());
        let st = &v["stopping"];
        assert_eq!(st["cancelled"], true, "{st}");
        let n = st["in_flight"].as_u64().unwrap_or(0);
        assert!((1..=8).contains(&n), "in flight: {st}");
        assert!(st["waited_s"].as_f64().unwrap_or(0.0) >= 1.0, "{st}");
        st.to_string()
    });
}

#[test]
fn without_a_progress_bar_a_stalled_run_says_so_on_stderr() {
    if !can_freeze() {
        return;
    }
    cancel_a_stalled_write("--json", |rx| {
        line_where(rx, 15, "the wait said on stderr", |l| {
            l.starts_with("err: blkscope: cancelled: ")
                && l.contains(" still in flight after ")
                && l.ends_with(" s (Ctrl-C again exits without waiting)")
        })
    });
}

/// A buffered write with its final fdatasync (`--mode fdatasync`, bounded by size) on a loop
/// device whose file system is frozen: the writes land in the page cache, the fdatasync waits,
/// and the run says so without any signal; thawed, it ends with its result.
#[test]
fn a_final_fdatasync_that_waits_is_said_and_the_run_ends_when_it_is_done() {
    if !can_freeze() {
        return;
    }
    let lo = OverAFileSystem::new();
    let frozen = Frozen::new(lo.mount.dir.path());
    let mut running = write_to(
        &lo,
        &["--bs", "1M", "--size", "16M", "--mode", "fdatasync"],
        &["--engine", "psync", "--json"],
    );
    let child = running.0.as_mut().unwrap();
    let rx = lines_of(child);
    let said = line_where(&rx, 20, "the fdatasync's wait said", |l| {
        l.starts_with("err: blkscope: stopping: the final fdatasync still running after ")
    });
    println!("{said}");
    assert!(child.try_wait().unwrap().is_none(), "ended while frozen");
    drop(frozen);
    let status = ended_within(child, 20, "the thaw");
    let mut out = String::new();
    while let Ok(l) = rx.recv_timeout(Duration::from_secs(2)) {
        if !l.starts_with("err: ") {
            out.push_str(&l);
        }
    }
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap_or_default();
    let r = &doc["results"][0];
    println!(
        "status {status:?}; written {}, cancelled {}",
        r["write_bytes"], r["cancelled"]
    );
    assert_eq!(status.code(), Some(0), "{out}");
    assert_eq!(r["write_bytes"], 16 << 20, "{out}");
}

/// The `stall` finding of a sample or result, if it has one.
fn stall_of(findings: &serde_json::Value) -> Option<serde_json::Value> {
    findings
        .as_array()?
        .iter()
        .find(|f| f["kind"] == "stall")
        .cloned()
}

/// A write test on a loop device whose file system is frozen for a few seconds while it runs:
/// while it waits, the live samples say the stall with its length, start and I/Os in flight;
/// thawed, the run ends and its result says the same stall, from the same samples. A run on
/// the same device before the freeze has none.
#[test]
fn a_stall_is_said_live_and_in_the_result_with_the_same_start_and_ios() {
    if !can_freeze() {
        return;
    }
    let lo = OverAFileSystem::new();
    let job = [
        "--bs",
        "64k",
        "--iodepth",
        "8",
        "--mode",
        "direct",
        "--engine",
        "uring",
    ];
    let mut quiet = write_to(&lo, &job, &["--runtime", "1s", "--json"]);
    let out = quiet.0.take().unwrap().wait_with_output().unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let found = &doc["results"][0]["findings"];
    println!("unfrozen: {found}");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(stall_of(found), None, "a stall in a run nothing held");

    let mut running = write_to(&lo, &job, &["--runtime", "8s", "--ndjson"]);
    let child = running.0.as_mut().unwrap();
    let rx = lines_of(child);
    // Frozen in the middle: once its samples have seen writes complete for half a second.
    let before = sample_where(&rx, 20, "writes for half a second", |v| {
        v["elapsed_s"].as_f64().unwrap_or(0.0) >= 0.5 && v["ios"].as_u64().unwrap_or(0) > 0
    });
    let frozen = Frozen::new(lo.mount.dir.path());
    println!("frozen after the sample at {} s", before["elapsed_s"]);
    let live = sample_where(&rx, 15, "a live stall", |v| {
        stall_of(&v["findings"]).is_some()
    });
    let live = stall_of(&live["findings"]).unwrap();
    println!("live: {live}");
    // Another second of it before the thaw: the result's is longer than the first said.
    std::thread::sleep(Duration::from_secs(1));
    drop(frozen);
    let status = ended_within(child, 30, "the thaw");
    let mut last = String::new();
    while let Ok(l) = rx.recv_timeout(Duration::from_secs(2)) {
        if !l.starts_with("err: ") {
            last = l;
        }
    }
    let doc: serde_json::Value = serde_json::from_str(&last).unwrap_or_default();
    let r = &doc["results"][0];
    let end = stall_of(&r["findings"]);
    println!(
        "status {status:?}; the result's: {end:?}; max latency {}",
        r["latency_ns"]["max"]
    );
    assert_eq!(status.code(), Some(0), "{last}");
    let end = end.expect("the result's stall");
    let (l, e) = (&live["numbers"], &end["numbers"]);
    let n = l["in_flight"].as_u64().unwrap_or(0);
    assert!((1..=8).contains(&n), "in flight: {l}");
    assert_eq!(e["in_flight"], l["in_flight"], "{e} against {l}");
    assert_eq!(e["from_s"], l["from_s"], "the same stall: {e} against {l}");
    assert!(
        e["from_s"].as_f64().unwrap_or(0.0) >= before["elapsed_s"].as_f64().unwrap_or(1.0) - 0.2,
        "from the freeze on: {e}, frozen after the sample at {}",
        before["elapsed_s"]
    );
    assert!(l["stalled_s"].as_f64().unwrap_or(0.0) >= 1.0, "{l}");
    assert!(
        e["stalled_s"].as_f64().unwrap_or(0.0) >= l["stalled_s"].as_f64().unwrap_or(0.0) + 0.9,
        "the result counts the second after the live one: {e} against {l}"
    );
    assert_eq!(end["device"], lo.name(), "{end}");
    // Its words: the stall's figures, and that the run's figures count it.
    let words = end["message"].as_str().unwrap_or_default();
    assert!(
        words.starts_with("none of the test's I/Os completed for "),
        "{words}"
    );
    assert!(
        words.ends_with("the run's figures count that wait"),
        "{words}"
    );
}

/// A write test started on a frozen file system under a loop device: nothing completes until
/// the thaw, a second after the run's time is up, and the held I/Os are all the run has. Its
/// result says the stall from its start (the held I/Os' own latency is no measure of the
/// device's pace).
#[test]
fn a_run_frozen_from_its_start_has_a_stall_from_its_start() {
    if !can_freeze() {
        return;
    }
    let lo = OverAFileSystem::new();
    let frozen = Frozen::new(lo.mount.dir.path());
    let mut running = write_to(
        &lo,
        &["--bs", "4k", "--iodepth", "4", "--mode", "direct"],
        &["--runtime", "2s", "--json"],
    );
    std::thread::sleep(Duration::from_secs(3));
    drop(frozen);
    let child = running.0.take().unwrap();
    let out = child.wait_with_output().unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let r = &doc["results"][0];
    let stall = stall_of(&r["findings"]);
    println!(
        "status {:?}; {} I/Os, max latency {}; {stall:?}",
        out.status, r["ios"], r["latency_ns"]["max"]
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stall = stall.expect("a stall");
    let n = &stall["numbers"];
    assert!(n["from_s"].as_f64().unwrap_or(9.0) < 0.25, "{n}");
    assert!(n["stalled_s"].as_f64().unwrap_or(0.0) >= 2.0, "{n}");
    assert_eq!(n["in_flight"], 4, "{n}");
}
