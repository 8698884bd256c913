//! `blkscope lab`: throwaway loop devices with 512- and 4096-byte sectors, removed on exit,
//! after SIGTERM, and (after kill -9) by the next start.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::time::Duration;

use common::*;

fn start(extra: &[&str]) -> (Child, serde_json::Value) {
    start_in(&[], extra)
}

/// A lab with these environment variables set; its stderr is kept for the test to read.
fn start_in(env: &[(&str, &std::path::Path)], extra: &[&str]) -> (Child, serde_json::Value) {
    let mut args = vec!["lab", "--json", "--size", "64M"];
    args.extend_from_slice(extra);
    let mut cmd = bin();
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .args(&args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&line).unwrap_or_else(|e| {
        let mut err = String::new();
        let _ = std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err);
        panic!("lab printed {line:?} ({e}), and on stderr {err:?}")
    });
    (child, v)
}

fn gone(v: &serde_json::Value) {
    for d in v["devices"].as_array().unwrap() {
        let name = d["name"].as_str().unwrap();
        let backing = d["backing"].as_str().unwrap();
        let current = std::fs::read_to_string(format!("/sys/block/{name}/loop/backing_file"))
            .unwrap_or_default();
        assert_ne!(current.trim(), backing, "{name} still uses the lab's file");
        assert!(
            !std::path::Path::new(backing).exists(),
            "{backing} left behind"
        );
    }
    let dir = v["dir"].as_str().unwrap();
    assert!(!std::path::Path::new(dir).exists(), "{dir} left behind");
}

#[test]
fn lab_devices_are_made_used_and_removed_on_sigterm() {
    if !require(true, &["losetup"]) {
        return;
    }
    let (child, v) = start(&[]);
    let devs = v["devices"].as_array().unwrap();
    assert_eq!(devs.len(), 2);
    let mut sizes = Vec::new();
    for d in devs {
        let name = d["name"].as_str().unwrap();
        let lbs: u64 =
            std::fs::read_to_string(format!("/sys/block/{name}/queue/logical_block_size"))
                .unwrap()
                .trim()
                .parse()
                .unwrap();
        assert_eq!(lbs, d["sector"].as_u64().unwrap());
        sizes.push(lbs);
    }
    assert_eq!(sizes, [512, 4096]);
    // The raw-device read-modify-write demo on the 4096-byte lab device: no confirmation needed.
    let dev4k = devs[1]["path"].as_str().unwrap();
    let (doc, code) = blkscope_json(&[
        "run",
        dev4k,
        "--bs",
        "512",
        "--mode",
        "fdatasync",
        "--engine",
        "psync",
        "--size",
        "4M",
        "--json",
        "--no-save",
    ]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(
        doc["results"][0]["findings"][0]["kind"], "read_modify_write",
        "{doc}"
    );
    stop(child, &v);
}

#[test]
fn a_killed_lab_is_removed_by_the_next_start() {
    if !require(true, &["losetup", "sfdisk", "partx"]) {
        return;
    }
    let (mut child, v) = start(&["--partitioned"]);
    for d in v["devices"].as_array().unwrap() {
        let p1 = format!("{}p1", d["path"].as_str().unwrap());
        assert!(
            std::path::Path::new(&p1).exists(),
            "{p1}: partitioned, whatever the sector size"
        );
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let out = bin().args(["lab", "--cleanup"]).output().unwrap();
    println!("lab --cleanup: {}", stdout_of(&out));
    assert!(out.status.success());
    // Usually "removed 2"; a TUI or `lab --cleanup` of another test starting in between may
    // have removed it first, so what counts is that it is gone.
    assert!(stdout_of(&out).contains("removed "), "{}", stdout_of(&out));
    gone(&v);
}

#[test]
fn the_lab_needs_root_and_says_so() {
    if !require(true, &["setpriv"]) {
        return;
    }
    let out = blkscope_as_nobody(&["lab", "--json"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("sudo blkscope lab"), "{err}");
    assert!(out.stdout.is_empty());
}

/// The lab's TUI in tmux, then the session is killed (a hang-up, as when SSH drops): the lab
/// must be removed at once, not only at the next start.
#[test]
fn a_hung_up_lab_tui_removes_its_devices() {
    if !require(true, &["losetup", "tmux"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let t = Tmux::start(dir.path(), "", "lab --size 32M");
    t.wait_for(&["LAB"], 20);
    // The lab's state file is named after the blkscope process.
    let state = format!("/run/blkscope/labs/{}.json", t.pid());
    let lab: Option<serde_json::Value> = std::fs::read_to_string(&state)
        .ok()
        .map(|t| serde_json::from_str(&t).unwrap());
    let lab = lab.expect("the lab TUI started and recorded its devices");
    assert_eq!(lab["devices"].as_array().unwrap().len(), 2);
    drop(t); // kills the session: a hang-up
    let start = std::time::Instant::now();
    // The cleanup removes the files, then their directory: wait for both (the directory once
    // outlived the files by a moment here, and the check below caught it in between).
    loop {
        let left = lab["devices"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| std::path::Path::new(d["backing"].as_str().unwrap()).exists())
            || std::path::Path::new(lab["dir"].as_str().unwrap()).exists();
        if !left {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "lab still there after a hang-up"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    gone(&lab);
}

/// A lab larger than where its files live (often a tmpfs, i.e. memory) is refused before
/// anything is made: one line with a size that fits, exit 2, no device attached, no file left.
/// The free space is read from `df` just before; neighbours filling the directory in between
/// only make the request larger than what is free.
#[test]
fn a_lab_that_would_not_fit_is_refused_before_anything_is_made() {
    if !require(true, &["df"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let df = std::process::Command::new("df")
        .args(["--output=avail", "-B1"])
        .arg(dir.path())
        .output()
        .unwrap();
    let free: u64 = stdout_of(&df)
        .lines()
        .nth(1)
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or_else(|| panic!("df said {df:?}"));
    // Two devices of this size need twice what is free.
    let size = format!("{}M", free.div_ceil(1 << 20));
    for (size, needle) in [
        (size.as_str(), "use --size "),
        ("0", "a lab device needs at least 1M"),
    ] {
        let out = blkscope(&[
            "lab",
            "--json",
            "--size",
            size,
            "--dir",
            dir.path().to_str().unwrap(),
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        println!("lab --size {size} with {free} bytes free: {err}");
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{err}");
        assert!(out.stdout.is_empty());
    }
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "nothing made in the directory: {left:?}");
    // No lab device appeared (other tests' loop devices may come and go meanwhile, so only
    // a device backed by a file in our directory would count).
    let now = std::fs::read_dir("/sys/block").unwrap();
    for e in now.flatten() {
        let b = std::fs::read_to_string(e.path().join("loop/backing_file")).unwrap_or_default();
        assert!(
            !b.starts_with(dir.path().to_str().unwrap()),
            "{:?} is backed by {b}",
            e.file_name()
        );
    }
}

/// The file system type of a directory, as `stat -f` names it ("tmpfs", "ext2/ext3", ...).
fn fs_type(dir: &std::path::Path) -> String {
    let out = std::process::Command::new("stat")
        .args(["-f", "-c", "%T"])
        .arg(dir)
        .output()
        .unwrap();
    stdout_of(&out).trim().to_string()
}

/// SIGTERM to a lab, its stderr, and a check that it removed everything.
fn stop(mut child: Child, v: &serde_json::Value) -> String {
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let mut err = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
    assert!(child.wait().unwrap().success(), "{err}");
    gone(v);
    err
}

/// A lab over files in RAM measures memory (the backing_cache finding on every result). By
/// default the lab's files go to the first of $XDG_RUNTIME_DIR, $TMPDIR (/tmp) and /var/tmp
/// that is not a tmpfs, here past an $XDG_RUNTIME_DIR on a tmpfs; a --dir on a tmpfs is
/// honoured and said to be in RAM, on stderr and in the JSON.
#[test]
fn a_lab_keeps_out_of_ram_or_says_it_is_in_ram() {
    if !require(true, &["losetup", "stat", "mount"]) {
        return;
    }
    // Two 64M devices and the 10% (at least 64M) blkscope leaves free.
    let ram = Tmpfs::new("256m");
    let mut disk = tempfile::tempdir().unwrap();
    if fs_type(disk.path()) == "tmpfs" {
        disk = tempfile::tempdir_in("/var/tmp").unwrap();
    }
    let disk_fs = fs_type(disk.path());
    println!(
        "XDG_RUNTIME_DIR on {}, TMPDIR on {disk_fs}",
        fs_type(ram.dir.path())
    );
    assert_ne!(disk_fs, "tmpfs", "no directory on a disk to test with");

    let (child, v) = start_in(
        &[("XDG_RUNTIME_DIR", ram.dir.path()), ("TMPDIR", disk.path())],
        &[],
    );
    println!("default: {v}");
    let dir = v["dir"].as_str().unwrap();
    assert!(dir.starts_with(disk.path().to_str().unwrap()), "{v}");
    assert!(v["in_ram"].is_null(), "{v}");
    let err = stop(child, &v);
    println!("stderr: {err:?}");
    assert!(!err.contains("in RAM"), "{err}");

    let (child, v) = start_in(&[], &["--dir", ram.path_str()]);
    println!("--dir on a tmpfs: {v}");
    assert!(
        v["dir"].as_str().unwrap().starts_with(ram.path_str()),
        "{v}"
    );
    assert_eq!(v["in_ram"], "tmpfs", "{v}");
    let err = stop(child, &v);
    println!("stderr: {err:?}");
    assert!(
        err.contains("in RAM (tmpfs") && err.contains("--dir"),
        "{err}"
    );

    let out = blkscope(&["lab", "--json", "--dir", "/nonexistent/blkscope-lab-dir"]);
    let err = String::from_utf8_lossy(&out.stderr);
    println!("--dir that is not there: {err}");
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("not a directory"), "{err}");
    assert!(out.stdout.is_empty());
}

/// A lab directory no state file accounts for (a lab on a disk outlives the reboot that
/// empties /run) is removed by `lab --cleanup` once its process is gone, and only then.
#[test]
fn lab_directories_left_by_a_reboot_are_removed() {
    if !require(true, &["losetup"]) {
        return;
    }
    let base = tempfile::tempdir().unwrap();
    // A PID no process has: above the kernel's pid_max.
    let dead = base.path().join("blkscope-lab-99999999");
    std::fs::create_dir(&dead).unwrap();
    std::fs::write(dead.join("lab-512.img"), b"x").unwrap();
    // This test's own PID: alive, so left alone; and a directory that is not a lab's.
    let alive = base
        .path()
        .join(format!("blkscope-lab-{}", std::process::id()));
    std::fs::create_dir(&alive).unwrap();
    let other = base.path().join("blkscope-lab-notes");
    std::fs::create_dir(&other).unwrap();
    let out = blkscope_with("TMPDIR", base.path(), &["lab", "--cleanup"]);
    println!(
        "{}{}",
        stdout_of(&out),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success());
    assert!(
        stdout_of(&out).contains("1 lab directory"),
        "{}",
        stdout_of(&out)
    );
    assert!(!dead.exists(), "{dead:?} left");
    assert!(
        alive.exists() && other.exists(),
        "only the dead lab's directory goes"
    );
}
