//! The static binary for rescue systems (`scripts/build-static`): statically linked, stripped,
//! under 8 MiB, and working in an empty root file system that holds only the binary, with
//! /proc, /sys and /dev mounted: `list`, `check`, `stat`, a `run` on a scratch file, and the TUI.

mod common;

use std::path::Path;
use std::process::Command;

use common::*;

#[test]
fn the_static_binary_runs_in_an_empty_chroot() {
    if !require(true, &["chroot", "strip", "ldd", "tmux", "mount"]) {
        return;
    }
    let out_dir = tempfile::tempdir().unwrap();
    let bin = out_dir.path().join("blkscope");
    let st = Command::new("bash")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/build-static"))
        .env("OUT", &bin)
        .status()
        .unwrap();
    assert!(st.success(), "scripts/build-static failed");
    let size = std::fs::metadata(&bin).unwrap().len();
    assert!(size < 8 << 20, "{size} bytes");
    let ldd = Command::new("ldd").arg(&bin).output().unwrap();
    let l = format!(
        "{}{}",
        String::from_utf8_lossy(&ldd.stdout),
        String::from_utf8_lossy(&ldd.stderr)
    );
    assert!(
        l.contains("statically linked") || l.contains("not a dynamic executable"),
        "ldd: {l}"
    );

    let c = Chroot::new(&bin, false);
    let entries: Vec<String> = std::fs::read_dir(c.dir.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    let mut sorted = entries.clone();
    sorted.sort();
    assert_eq!(
        sorted,
        ["blkscope", "dev", "proc", "sys", "tmp"],
        "nothing else in the root"
    );

    let ok = |args: &[&str]| ok_stdout(&c.blkscope(args), args);
    let list = ok(&["list", "--ascii"]);
    assert!(list.starts_with("NAME") && list.contains("WRITE"), "{list}");
    assert!(ok(&["check", "/tmp"]).contains("clear"));
    let stat = ok(&["stat", "--count", "1", "--interval", "100ms"]);
    assert!(stat.contains("r/s") && stat.contains("%util"), "{stat}");
    let run = ok(&["run", "/tmp", "--size", "8M", "--bs", "64k", "--no-save"]);
    assert!(run.contains("IOPS") && run.contains("latency"), "{run}");
    assert!(ok(&["--version"]).contains("commit"));

    // The TUI starts in the chroot and quits cleanly. (The session goes before the chroot's
    // mounts: it is dropped first.)
    let cmd = format!(
        "chroot {} /blkscope --dir /tmp; echo BLKSCOPE-EXITED; sleep 30",
        c.dir.path().display()
    );
    let t = Tmux::command(&cmd, &[("PATH", &path_with_sbin())]);
    t.wait_for(&["Devices", "Tests"], 20);
    t.keys(&["q"]);
    t.wait_for(&["BLKSCOPE-EXITED"], 10);
    assert!(Path::new(&bin).exists());
}
