//! The block layer's tracepoints on real loop devices: another process reading the device a
//! write test writes is named and not taken for read-modify-write (the test's own is said to
//! be its own in stats_findings.rs); the tracefs instance is gone after SIGTERM, and one left
//! by kill -9 goes at the next start.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::*;

const MIB: u64 = 1 << 20;

fn findings(doc: &serde_json::Value) -> Vec<String> {
    finding_kinds(first_result(doc))
}

/// Tracing needs root and tracefs; a kernel without tracefs is a reason to skip (or, in CI, to
/// fail).
fn traced(doc: &serde_json::Value) -> bool {
    let t = &first_result(doc)["trace"];
    println!("trace: {} {}", t["mode"], t["why"]);
    if t["mode"] == "off" {
        assert!(!required(), "CI: the block layer must be traced here: {t}");
        eprintln!("SKIPPED: not traced here: {}", t["why"]);
        return false;
    }
    true
}

#[test]
fn a_reader_beside_a_write_test_is_named_and_not_taken_for_read_modify_write() {
    if !require(true, &["losetup", "dd"]) {
        return;
    }
    let lo = Loop::new(256 * MIB, None, false);
    let (r0, _) = diskstats_sectors(&lo.name);
    let _reader = Reader::start(lo.dev());
    wait_until(10, "the reader to read", || {
        diskstats_sectors(&lo.name).0 > r0 + 4096
    });
    let (doc, code) = blkscope_json(&[
        "run",
        lo.dev(),
        "--op",
        "write",
        "--bs",
        "1M",
        "--runtime",
        "1s",
        "--confirm",
        &lo.name,
        "--no-save",
        "--json",
    ]);
    assert_eq!(code, 0, "{doc}");
    if !traced(&doc) {
        return;
    }
    let r = first_result(&doc);
    let ds = &r["diskstats"][0];
    println!("diskstats: r/s {} w/s {}", ds["r/s"], ds["w/s"]);
    assert!(
        ds["r/s"].as_f64().unwrap() > 0.0,
        "the device was read meanwhile: {ds}"
    );
    assert!(
        !findings(&doc).contains(&"read_modify_write".into()),
        "the reader's reads are not the test's: {r}"
    );
    let busy = finding_of(r, "busy_processes").unwrap_or_else(|| panic!("no busy_processes: {r}"));
    let m = busy["message"].as_str().unwrap();
    println!("{m}");
    assert!(
        m.contains("dd (pid ") && m.contains(&format!("on {}", lo.name)),
        "names the reader and the device: {m}"
    );
    assert!(m.contains("no read-modify-write"), "{m}");
    let subs = r["trace"]["submitters"].as_array().unwrap();
    assert!(
        subs.iter().any(|s| s["who"] == "other"
            && s["comm"] == "dd"
            && s["read_bytes"].as_u64() > Some(0)),
        "{subs:?}"
    );
    assert!(
        subs.iter().any(|s| s["who"] == "test"
            && s["write_bytes"].as_u64() > Some(0)
            && s["read_bytes"] == 0),
        "{subs:?}"
    );
}

/// The instances directory of the mounted tracefs (blkscope mounts it when it first traces).
fn instances() -> Option<PathBuf> {
    ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"]
        .iter()
        .map(|p| Path::new(p).join("instances"))
        .find(|p| p.is_dir())
}

#[test]
fn the_instance_is_gone_after_sigterm_and_after_kill_9_at_the_next_start() {
    if !require(true, &["losetup"]) {
        return;
    }
    let lo = Loop::new(64 * MIB, None, false);
    let run = |secs: &str| {
        bin()
            .args([
                "run",
                lo.dev(),
                "--op",
                "read",
                "--bs",
                "64k",
                "--runtime",
                secs,
                "--no-save",
            ])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    for signal in ["-TERM", "-KILL"] {
        let mut child = run("30s");
        let dir = || {
            instances()
                .map(|i| i.join(format!("blkscope-{}", child.id())))
                .filter(|p| p.is_dir())
        };
        let mut seen = None;
        wait_until(10, "the run's tracefs instance", || {
            seen = dir();
            seen.is_some()
        });
        let seen = seen.unwrap();
        println!("{signal}: {}", seen.display());
        Command::new("kill")
            .args([signal, &child.id().to_string()])
            .status()
            .unwrap();
        let status = child.wait().unwrap();
        println!("exited: {status:?}");
        if signal == "-TERM" {
            assert!(!seen.exists(), "removed on SIGTERM: {}", seen.display());
        } else {
            assert!(seen.exists(), "kill -9 leaves it: {}", seen.display());
            // The next start removes it.
            let out = bin()
                .args([
                    "run",
                    lo.dev(),
                    "--op",
                    "read",
                    "--bs",
                    "64k",
                    "--size",
                    "1M",
                    "--no-save",
                ])
                .output()
                .unwrap();
            assert!(out.status.success(), "{out:?}");
            assert!(!seen.exists(), "a stale instance goes at the next start");
        }
    }
    let left: Vec<String> = std::fs::read_dir(instances().expect("tracefs mounted by blkscope"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("blkscope-"))
        .filter(|n| {
            n.strip_prefix("blkscope-")
                .and_then(|p| p.parse::<u32>().ok())
                .is_some_and(|p| !Path::new(&format!("/proc/{p}")).exists())
        })
        .collect();
    assert!(left.is_empty(), "instances of dead blkscopes: {left:?}");
}
