//! Scratch files and signals: SIGINT, SIGTERM and SIGHUP are honoured in every phase of a run
//! (just after the scratch file is made, while it is laid out, while I/O runs): prompt exit,
//! status 1, no file left. The scratch file is reopened through its descriptor, so a path
//! swapped for a symlink meanwhile is not written through; and it is removed only if the path
//! still names it. Stale scratch files of killed runs are removed by the next `run`.
//! (No root needed: the targets are directories.)

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use common::*;

fn scratch_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(".blkscope-"))
        })
        .collect()
}

fn spawn(dir: &std::path::Path, pause_ms: u64, args: &[&str]) -> Child {
    bin()
        .arg("run")
        .arg(dir)
        .args(args)
        .env("BLKSCOPE_DEBUG_SCRATCH_PAUSE_MS", pause_ms.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// Sends `sig` and checks: exit status 1 within 3 s, no scratch file left.
fn signal_and_check(child: Child, sig: i32, dir: &std::path::Path, phase: &str) {
    // SAFETY: signalling the blkscope process this test started.
    unsafe { libc::kill(child.id() as i32, sig) };
    let t = Instant::now();
    let out = child.wait_with_output().unwrap();
    let took = t.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(1),
        "signal {sig} {phase}: status {:?}, stderr: {err}",
        out.status
    );
    assert!(
        took < Duration::from_secs(3),
        "signal {sig} {phase}: took {took:?}"
    );
    let left = scratch_files(dir);
    assert!(left.is_empty(), "signal {sig} {phase}: left {left:?}");
}

#[test]
fn signals_in_every_phase_exit_1_and_leave_no_file() {
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // Just after the scratch file is created (held there by the debug pause).
        let dir = tempfile::tempdir().unwrap();
        let child = spawn(dir.path(), 20_000, &["--size", "16M"]);
        wait_until(10, "the scratch file", || {
            !scratch_files(dir.path()).is_empty()
        });
        signal_and_check(child, sig, dir.path(), "after the file was created");

        // While a read test's file is laid out (1 GiB takes a while; the signal lands in it).
        let dir = tempfile::tempdir().unwrap();
        let child = spawn(dir.path(), 0, &["--op", "read", "--size", "1G"]);
        wait_until(10, "the scratch file", || {
            !scratch_files(dir.path()).is_empty()
        });
        signal_and_check(child, sig, dir.path(), "while laying out");

        // While the I/O runs: after the first live sample.
        let dir = tempfile::tempdir().unwrap();
        let mut child = spawn(
            dir.path(),
            0,
            &[
                "--op",
                "randwrite",
                "--bs",
                "4k",
                "--size",
                "16M",
                "--runtime",
                "60s",
                "--ndjson",
            ],
        );
        let mut first = String::new();
        BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut first)
            .unwrap();
        assert!(first.contains("\"sample\""), "{first}");
        signal_and_check(child, sig, dir.path(), "while running");
    }
}

#[test]
fn a_scratch_path_swapped_for_a_symlink_is_not_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    // The victim stands for a disk (/dev/sda) that a symlink could point at.
    let victim = elsewhere.path().join("victim");
    let content: Vec<u8> = (0..(2 << 20)).map(|i| (i % 251) as u8).collect();
    std::fs::write(&victim, &content).unwrap();
    let child = spawn(dir.path(), 1500, &["--size", "1M", "--bs", "64k"]);
    wait_until(10, "the scratch file", || {
        !scratch_files(dir.path()).is_empty()
    });
    let path = scratch_files(dir.path()).remove(0);
    let moved = elsewhere.path().join("moved");
    std::fs::rename(&path, &moved).unwrap();
    std::os::unix::fs::symlink(&victim, &path).unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        std::fs::read(&victim).unwrap() == content,
        "the file behind the symlink was written"
    );
    assert!(
        std::fs::symlink_metadata(&path).is_ok(),
        "the symlink is not blkscope's: left where it was"
    );
    // The writes went to the file blkscope created (now moved away).
    let written = std::fs::read(&moved).unwrap();
    assert!(
        written.iter().any(|&b| b != 0),
        "the test wrote its own file"
    );
}

#[test]
fn stale_scratch_files_go_at_the_next_run() {
    let dir = tempfile::tempdir().unwrap();
    // A pid that runs no process.
    let dead = (400_000..4_000_000u32)
        .find(|p| !std::path::Path::new(&format!("/proc/{p}")).exists())
        .unwrap();
    let stale = dir.path().join(format!(".blkscope-{dead}-0.tmp"));
    std::fs::write(&stale, b"left by a killed run").unwrap();
    let mine = dir.path().join(".blkscope-notapid.tmp");
    std::fs::write(&mine, b"not a scratch file name").unwrap();
    let out = blkscope(&[
        "run",
        dir.path().to_str().unwrap(),
        "--size",
        "1M",
        "--no-save",
    ]);
    assert!(out.status.success(), "{out:?}");
    assert!(!stale.exists(), "the stale scratch file is removed");
    assert!(mine.exists(), "other files are left alone");
}
