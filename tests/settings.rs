//! Suites that change a device setting and must put it back: `suite scheduler` (every
//! scheduler the device offers, side by side) and `suite write-cache` (on, off, as it was). The
//! original comes back at the end, on SIGTERM mid-suite, and after `kill -9` at the next start.

mod common;

use std::process::Stdio;

use common::*;

const MIB: u64 = 1 << 20;

fn scheduler(name: &str) -> String {
    let s = std::fs::read_to_string(format!("/sys/block/{name}/queue/scheduler")).unwrap();
    blkscope::device::active_scheduler(&s).unwrap()
}

/// Sets a loop device's scheduler for a test; the guard puts back the one it had when dropped
/// (before the device is detached: bind it after the `Loop`). A loop device keeps its scheduler
/// across detach and attach, so without this the next user of the device got the test's.
#[must_use]
fn set_scheduler(name: &str, s: &str) -> SchedulerBack {
    let back = SchedulerBack {
        name: name.to_string(),
        was: scheduler(name),
    };
    std::fs::write(format!("/sys/block/{name}/queue/scheduler"), s).unwrap();
    assert_eq!(scheduler(name), s);
    back
}

struct SchedulerBack {
    name: String,
    was: String,
}

impl Drop for SchedulerBack {
    fn drop(&mut self) {
        let _ = std::fs::write(
            format!("/sys/block/{}/queue/scheduler", self.name),
            &self.was,
        );
    }
}

fn state_files() -> Vec<String> {
    std::fs::read_dir(blkscope::tuning::STATE_DIR)
        .map(|rd| {
            rd.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn every_scheduler_side_by_side_and_the_original_back() {
    if !require(true, &["losetup"]) {
        return;
    }
    let lo = Loop::new(128 * MIB, None, false);
    let _back = set_scheduler(&lo.name, "kyber");
    let all = blkscope::device::available_schedulers(
        &std::fs::read_to_string(format!("/sys/block/{}/queue/scheduler", lo.name)).unwrap(),
    );
    let (doc, code) = blkscope_json(&["suite", "scheduler", lo.dev(), "--no-save", "--json"]);
    assert_eq!(code, 0, "{doc}");
    let tests = doc["tests"].as_array().unwrap();
    assert_eq!(tests.len(), 3 * all.len(), "{doc}");
    for s in &all {
        let under: Vec<&serde_json::Value> = tests
            .iter()
            .filter(|t| t["scheduler"] == s.as_str())
            .collect();
        assert_eq!(under.len(), 3, "{s}: {doc}");
        assert!(
            under
                .iter()
                .all(|t| t["result"]["iops"].as_f64().unwrap() > 0.0)
        );
    }
    assert_eq!(scheduler(&lo.name), "kyber", "the original is back");
    // The human table has a column per scheduler.
    let out = blkscope(&["suite", "scheduler", "/nonexistent"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

/// Starts the scheduler suite and waits until it has switched away from `original`.
fn suite_switched(lo: &Loop, original: &str) -> std::process::Child {
    let child = bin()
        .args(["suite", "scheduler", lo.dev(), "--no-save"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_until(20, "the suite to switch the scheduler", || {
        scheduler(&lo.name) != original
    });
    child
}

#[test]
fn sigterm_mid_suite_puts_the_scheduler_back() {
    if !require(true, &["losetup"]) {
        return;
    }
    let lo = Loop::new(64 * MIB, None, false);
    let _back = set_scheduler(&lo.name, "kyber");
    let child = suite_switched(&lo, "kyber");
    // SAFETY: signalling the blkscope process this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(scheduler(&lo.name), "kyber", "put back on SIGTERM");
    assert!(
        !state_files()
            .iter()
            .any(|f| f.starts_with(&format!("{}-", lo.name))),
        "{:?}",
        state_files()
    );
}

#[test]
fn after_kill_9_the_next_start_puts_the_scheduler_back() {
    if !require(true, &["losetup"]) {
        return;
    }
    let lo = Loop::new(64 * MIB, None, false);
    let _back = set_scheduler(&lo.name, "kyber");
    let mut child = suite_switched(&lo, "kyber");
    child.kill().unwrap();
    child.wait().unwrap();
    // Another test of this file may start a blkscope meanwhile, and that start puts it back
    // too; otherwise it is still changed, with a state file saying what to put back.
    let mine = |f: &String| f.starts_with(&format!("{}-", lo.name));
    let left = state_files().iter().any(mine);
    if scheduler(&lo.name) != "kyber" {
        assert!(
            left,
            "kill -9 left it changed, and a state file: {:?}",
            state_files()
        );
        let out = blkscope(&["stat", "--count", "1", "--interval", "10ms"]);
        let err = String::from_utf8_lossy(&out.stderr);
        let restored_here = err.contains(&format!("of {} back to kyber", lo.name));
        assert!(
            restored_here || scheduler(&lo.name) == "kyber",
            "the next start puts it back: {err}"
        );
    }
    assert_eq!(scheduler(&lo.name), "kyber", "put back at the next start");
    assert!(!state_files().iter().any(mine), "{:?}", state_files());
}

#[test]
fn write_cache_needs_permission_and_comes_back() {
    if !require(true, &["losetup"]) {
        return;
    }
    let lo = Loop::new(64 * MIB, None, false);
    let wc = format!("/sys/block/{}/queue/write_cache", lo.name);
    let before = std::fs::read_to_string(&wc).unwrap();
    let out = blkscope(&["suite", "write-cache", lo.dev(), "--no-save"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("--allow-cache-toggle") && err.contains("30x"),
        "{err}"
    );
    let (doc, code) = blkscope_json(&[
        "suite",
        "write-cache",
        lo.dev(),
        "--allow-cache-toggle",
        "--no-save",
        "--json",
    ]);
    assert_eq!(code, 0, "{doc}");
    let caches: Vec<&str> = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["write_cache"].as_str().unwrap())
        .collect();
    assert_eq!(&caches[..2], ["on", "off"], "{doc}");
    assert_eq!(std::fs::read_to_string(&wc).unwrap(), before, "put back");
}
