//! diskstats in iostat -x terms on real loop devices: `blkscope stat --json` against
//! `iostat -x -o JSON` under the same load, and the findings a test run raises (or must not).

mod common;

use std::process::{Command, Stdio};

use common::*;

const MIB: u64 = 1 << 20;

fn findings(doc: &serde_json::Value) -> Vec<String> {
    finding_kinds(&doc["results"][0])
}

fn finding<'a>(doc: &'a serde_json::Value, kind: &str) -> &'a serde_json::Value {
    finding_of(&doc["results"][0], kind)
        .unwrap_or_else(|| panic!("no {kind} finding in {}", doc["results"][0]["findings"]))
}

fn close(a: f64, b: f64, rel: f64, abs: f64) -> bool {
    (a - b).abs() <= abs || (a - b).abs() <= rel * a.abs().max(b.abs())
}

#[test]
fn stat_json_agrees_with_iostat() {
    if !require(true, &["losetup", "iostat"]) {
        return;
    }
    let lo = Loop::new(512 * MIB, None, false);
    // A steady load: 4 KiB random reads at QD4 for long enough to cover both samplers.
    let mut load = bin()
        .args([
            "run",
            lo.dev(),
            "--op",
            "randread",
            "--bs",
            "4k",
            "--iodepth",
            "4",
            "--runtime",
            "7s",
            "--json",
        ])
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    // Both samplers start once the load is under way.
    let (r0, _) = diskstats_sectors(&lo.name);
    wait_until(10, "the load to reach the device", || {
        diskstats_sectors(&lo.name).0 > r0 + 2048
    });
    let iostat = Command::new("iostat")
        .args(["-x", "-d", "-y", "-o", "JSON", &lo.name, "1", "4"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let ours = blkscope(&[
        "stat",
        &lo.name,
        "--json",
        "--interval",
        "1s",
        "--count",
        "4",
    ]);
    let theirs = iostat.wait_with_output().unwrap();
    let _ = load.wait();
    assert!(ours.status.success());
    let theirs: serde_json::Value = serde_json::from_slice(&theirs.stdout).unwrap();
    let theirs = theirs["sysstat"]["hosts"][0]["statistics"]
        .as_array()
        .unwrap()
        .clone();
    let ours: Vec<serde_json::Value> = stdout_of(&ours)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(ours.len(), 4);
    assert_eq!(theirs.len(), 4);
    // The two samplers' seconds start a few milliseconds apart, so one interval's figures
    // differ by what the load did in those milliseconds (more when other tests load the
    // machine). Over the intervals both saw under load, those edges cancel but for the first
    // and the last: compare the sums.
    let keys = ["r/s", "rkB/s", "rareq-sz", "aqu-sz", "util", "r_await"];
    let mut sums = std::collections::BTreeMap::<&str, (f64, f64)>::new();
    let mut compared = 0;
    for (t, o) in theirs.iter().zip(&ours) {
        let t = &t["disk"][0];
        let o = &o["devices"][0];
        assert_eq!(o["disk_device"], lo.name.as_str());
        // The same keys as sysstat.
        let tk: std::collections::BTreeSet<&String> = t.as_object().unwrap().keys().collect();
        let ok: std::collections::BTreeSet<&String> = o.as_object().unwrap().keys().collect();
        assert_eq!(ok, tk, "key sets differ");
        let f = |v: &serde_json::Value, k: &str| v[k].as_f64().unwrap();
        println!(
            "interval: iostat {:?} blkscope {:?}",
            keys.map(|k| f(t, k)),
            keys.map(|k| f(o, k))
        );
        if f(t, "r/s") < 1000.0 || f(o, "r/s") < 1000.0 {
            continue; // the load had not started or already ended in this interval
        }
        for k in keys {
            let e = sums.entry(k).or_default();
            e.0 += f(t, k);
            e.1 += f(o, k);
        }
        compared += 1;
    }
    for (k, (t, o)) in &sums {
        println!("{k}: iostat {t:.2} blkscope {o:.2} (sums over {compared} intervals)");
        // iostat prints 2 decimals: a small value may differ by its rounding.
        let abs = if ["aqu-sz", "util", "r_await"].contains(k) {
            0.02 * compared as f64
        } else {
            0.01
        };
        assert!(close(*t, *o, 0.02, abs), "{k}: iostat {t} blkscope {o}");
    }
    assert!(compared >= 2, "the load covered at least two intervals");
}

/// The live view's notes are the analysis of the test so far: the session hands each sample
/// over with the same findings the result ends with (read-modify-write here), before the run
/// ends (once the trace has been read), and none from the counters before half a second has
/// passed.
#[test]
fn live_findings_are_the_results_findings_so_far() {
    use blkscope::analysis::findings::{Finding, Kind};
    use blkscope::engine::{Job, Mode, Op, Sample, TargetSpec};
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;
    if !require(true, &["losetup"]) {
        return;
    }
    struct Seen(Vec<(f64, Vec<Kind>)>);
    impl blkscope::session::Observer for Seen {
        fn wants_findings(&self) -> bool {
            true
        }
        fn sample(&mut self, s: &Sample, f: &[Finding]) {
            self.0
                .push((s.elapsed_s, f.iter().map(|f| f.kind).collect()));
        }
    }
    let lo = Loop::new(256 * MIB, Some(4096), false);
    let job = Job {
        op: Op::Write,
        bs: 512,
        mode: Mode::Fdatasync,
        engine: blkscope::engine::EngineKind::Psync,
        runtime: Some(std::time::Duration::from_secs(2)),
        ..Job::default()
    };
    let spec = TargetSpec {
        path: lo.dev().to_string(),
        confirm: Some(lo.name.clone()),
        force: false,
    };
    let root = blkscope::SysRoot::live();
    let mut seen = Seen(Vec::new());
    let cancel = Arc::new(AtomicBool::new(false));
    let out = blkscope::session::run_test(&root, &spec, "live", &job, 1, cancel, &mut seen)
        .expect("the run");
    let result = &out.tests[0].result;
    let last = seen.0.iter().rev().find(|(_, k)| !k.is_empty());
    println!(
        "{} samples; live at the end: {last:?}; result: {:?}",
        seen.0.len(),
        result.findings.iter().map(|f| f.kind).collect::<Vec<_>>()
    );
    assert!(
        result
            .findings
            .iter()
            .any(|f| f.kind == Kind::ReadModifyWrite),
        "the result: {:?}",
        result.findings
    );
    let live_rmw: Vec<f64> = seen
        .0
        .iter()
        .filter(|(_, k)| k.contains(&Kind::ReadModifyWrite))
        .map(|(t, _)| *t)
        .collect();
    println!("live read_modify_write at {live_rmw:?} s");
    // Live: in a sample while the run ran. Not by a set time: the findings wait for the
    // trace's first read, 0.5 s in here when idle and 1.5 s in a CI run whose neighbours (the
    // other tests of this file) held the CPU.
    assert!(
        !live_rmw.is_empty(),
        "read-modify-write said live, in a sample while the run ran: {live_rmw:?}"
    );
    // Before half a second nothing is judged from the counters; what was known before the
    // first I/O (the page cache under this loop device without direct I/O) is said from the
    // first sample, as the result says it.
    assert!(
        result.findings.iter().any(|f| f.kind == Kind::BackingCache),
        "the result: {:?}",
        result.findings
    );
    assert!(
        seen.0
            .iter()
            .filter(|(t, _)| *t < 0.4)
            .all(|(_, k)| k == &[Kind::BackingCache]),
        "only what was known before the run, before half a second: {:?}",
        seen.0.iter().take(5).collect::<Vec<_>>()
    );
}

#[test]
fn small_buffered_writes_cause_read_modify_write_and_aligned_ones_do_not() {
    if !require(true, &["losetup"]) {
        return;
    }
    // A cold 4096-byte-sector device: nothing of it is cached yet.
    let lo = Loop::new(128 * MIB, Some(4096), false);
    let (doc, code) = blkscope_json(&[
        "run",
        lo.dev(),
        "--op",
        "write",
        "--bs",
        "512",
        "--mode",
        "fdatasync",
        "--engine",
        "psync",
        "--size",
        "16M",
        "--confirm",
        &lo.name,
        "--json",
    ]);
    assert_eq!(code, 0, "{doc}");
    let rmw = finding(&doc, "read_modify_write");
    let read = rmw["numbers"]["device_read_bytes"].as_f64().unwrap();
    // Measured: as many bytes read as written.
    assert!(read >= 0.9 * (16 * MIB) as f64, "read {read}");
    let m = rmw["message"].as_str().unwrap();
    assert!(m.contains("4096"));
    // Traced (root, tracefs), the reads are said to be the test's own.
    let mode = &doc["results"][0]["trace"]["mode"];
    println!("trace {mode}: {m}");
    if mode != "off" {
        assert!(m.contains("these reads were the test's"), "{m}");
        assert_eq!(rmw["numbers"]["traced"], 1.0);
    } else {
        assert!(
            !required(),
            "CI: the block layer must be traced: {}",
            doc["results"][0]["trace"]
        );
    }
    assert!(
        doc["results"][0]["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w["kind"] == "read_modify_write")
    );

    // 4096-byte buffered writes on a fresh region: no reads.
    let (doc, _) = blkscope_json(&[
        "run",
        lo.dev(),
        "--op",
        "write",
        "--bs",
        "4k",
        "--mode",
        "fdatasync",
        "--engine",
        "psync",
        "--offset",
        "32M",
        "--size",
        "16M",
        "--confirm",
        &lo.name,
        "--json",
    ]);
    assert!(
        !findings(&doc).contains(&"read_modify_write".into()),
        "{doc}"
    );
    // Aligned 4096-byte direct writes: no reads either.
    let (doc, _) = blkscope_json(&[
        "run",
        lo.dev(),
        "--op",
        "randwrite",
        "--bs",
        "4k",
        "--iodepth",
        "8",
        "--offset",
        "64M",
        "--size",
        "16M",
        "--confirm",
        &lo.name,
        "--json",
    ]);
    assert!(
        !findings(&doc).contains(&"read_modify_write".into()),
        "{doc}"
    );
    let ds = &doc["results"][0]["diskstats"][0];
    assert_eq!(ds["disk_device"], lo.name.as_str());
    assert_eq!(ds["r/s"], 0.0);
}

#[test]
fn dsync_writes_raise_flushes() {
    if !require(true, &["losetup"]) {
        return;
    }
    let lo = Loop::new(64 * MIB, None, false);
    let (doc, code) = blkscope_json(&[
        "run",
        lo.dev(),
        "--op",
        "write",
        "--bs",
        "4k",
        "--mode",
        "dsync",
        "--size",
        "2M",
        "--confirm",
        &lo.name,
        "--json",
    ]);
    assert_eq!(code, 0, "{doc}");
    let f = finding(&doc, "flushes");
    // One flush per O_DSYNC write (512 writes).
    assert!(f["numbers"]["flushes"].as_f64().unwrap() >= 512.0, "{f}");
    assert!(f["message"].as_str().unwrap().contains("O_DSYNC"));
    // Direct writes without sync flags: no flushes.
    let (doc, _) = blkscope_json(&[
        "run",
        lo.dev(),
        "--op",
        "write",
        "--bs",
        "64k",
        "--size",
        "8M",
        "--confirm",
        &lo.name,
        "--json",
    ]);
    assert!(!findings(&doc).contains(&"flushes".into()), "{doc}");
}

#[test]
fn buffered_writes_without_sync_measure_memory() {
    if !require(true, &["losetup"]) {
        return;
    }
    let lo = Loop::new(128 * MIB, None, false);
    let (doc, code) = blkscope_json(&[
        "run",
        lo.dev(),
        "--op",
        "write",
        "--bs",
        "1M",
        "--mode",
        "buffered",
        "--size",
        "64M",
        "--confirm",
        &lo.name,
        "--json",
    ]);
    assert_eq!(code, 0, "{doc}");
    let f = finding(&doc, "page_cache");
    let reached = f["numbers"]["device_write_bytes"].as_f64().unwrap();
    assert!(reached < 0.5 * (64 * MIB) as f64, "{f}");
    // The same write with fdatasync reaches the device: no finding.
    let (doc, _) = blkscope_json(&[
        "run",
        lo.dev(),
        "--op",
        "write",
        "--bs",
        "1M",
        "--mode",
        "fdatasync",
        "--size",
        "64M",
        "--confirm",
        &lo.name,
        "--json",
    ]);
    assert!(!findings(&doc).contains(&"page_cache".into()), "{doc}");
}

/// `--mode nocache` and `--mode fdatasync` keep the page cache out of one pass over a region:
/// a timed run over a small one wrapped around it and measured memory, with no word (by hand,
/// 41.1G read from a 16M region in 2 s, 18.6M of it from the device; 33.7G written, 16M
/// reached it). The region is filled first, so the reads are of data. A neighbour reading the
/// device only adds to what it read; the runs move gigabytes to its megabytes.
#[test]
fn a_timed_run_over_a_small_region_in_nocache_or_fdatasync_mode_is_the_page_cache_trap() {
    if !require(true, &["losetup"]) {
        return;
    }
    let lo = Loop::new(64 * MIB, None, false);
    sh("losetup", &["--direct-io=on", lo.dev()]);
    fill(lo.dev(), &lo.name, "8M");
    let run = |op: &str, mode: &str, timed: bool| {
        let mut args = vec![
            "run",
            lo.dev(),
            "--op",
            op,
            "--bs",
            "64k",
            "--mode",
            mode,
            "--size",
            "8M",
        ];
        if timed {
            args.extend(["--runtime", "1s"]);
        }
        args.extend(["--confirm", &lo.name, "--json", "--no-save"]);
        let (doc, code) = blkscope_json(&args);
        assert_eq!(code, 0, "{doc}");
        let r = &doc["results"][0];
        println!(
            "{op} {mode} timed {timed}: {} read, {} written; findings {:?}",
            r["read_bytes"],
            r["write_bytes"],
            findings(&doc)
        );
        doc
    };
    let doc = run("read", "nocache", true);
    let f = finding(&doc, "page_cache");
    let (device, test) = (
        f["numbers"]["device_read_bytes"].as_f64().unwrap(),
        f["numbers"]["test_read_bytes"].as_f64().unwrap(),
    );
    assert!(device < 0.5 * test, "{f}");
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("which --mode nocache empties before the run only"),
        "{f}"
    );
    let doc = run("write", "fdatasync", true);
    let f = finding(&doc, "page_cache");
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("the final fdatasync wrote only the last copy of each"),
        "{f}"
    );
    // One pass each: the device's own figures, no finding.
    for (op, mode) in [("read", "nocache"), ("write", "fdatasync")] {
        let doc = run(op, mode, false);
        assert!(!findings(&doc).contains(&"page_cache".into()), "{doc}");
    }
}

#[test]
fn statistics_off_is_said_not_shown_as_idle() {
    if !require(true, &["losetup"]) {
        return;
    }
    let lo = Loop::new(64 * MIB, None, false);
    struct Knob(String);
    impl Drop for Knob {
        fn drop(&mut self) {
            let _ = std::fs::write(&self.0, "1");
        }
    }
    let knob = Knob(format!("/sys/block/{}/queue/iostats", lo.name));
    std::fs::write(&knob.0, "0").unwrap();
    let (doc, _) = blkscope_json(&["run", lo.dev(), "--size", "8M", "--json"]);
    // Other processes' I/O (a neighbour) may add busy_processes, how the kernel issued the
    // writes io_worker_wakeups, and the loop device's page cache backing_cache (none is from
    // diskstats); of the diskstats findings, only stats_off may be there: zeros must not read
    // as "no read-modify-write".
    let f: Vec<String> = findings(&doc)
        .into_iter()
        .filter(|k| !["busy_processes", "io_worker_wakeups", "backing_cache"].contains(&k.as_str()))
        .collect();
    assert_eq!(f, ["stats_off"], "{doc}");
    assert_eq!(doc["results"][0]["diskstats"][0]["stats_off"], true);
    // Nor are its counters the bytes the device moved (this loop device counted 0B of the 8M
    // written): the result names none.
    assert!(
        doc["results"][0]["device_bytes"].is_null(),
        "device_bytes: {}",
        doc["results"][0]["device_bytes"]
    );
    let out = blkscope(&["stat", &lo.name, "--count", "1", "--interval", "100ms"]);
    assert!(
        stdout_of(&out).contains("statistics off"),
        "{}",
        stdout_of(&out)
    );
    // `list --json` says it too: the switch, and whether diskstats counts the device.
    let d = listed(&lo.name);
    assert_eq!(
        (&d["iostats"], &d["io_figures"]),
        (&false.into(), &false.into()),
        "{d}"
    );
}

/// One device's entry in `list --json`.
fn listed(name: &str) -> serde_json::Value {
    let (v, code) = blkscope_json(&["list", "--json"]);
    assert_eq!(code, 0, "{v}");
    let d = device(&v, name);
    println!(
        "{name} in list --json: iostats {}, io_figures {}",
        d["iostats"], d["io_figures"]
    );
    d.clone()
}

/// zram is created with queue/iostats 0 and counts its I/O all the same (the kernel's other
/// devices honour the switch: the test above), so its figures are shown, not "off".
#[test]
fn zram_counts_its_io_with_iostats_0() {
    if !require(true, &[]) {
        return;
    }
    let Some(z) = Zram::new(64 * MIB) else {
        return;
    };
    let knob = format!("/sys/block/{}/queue/iostats", z.name);
    println!("{knob} as created: {:?}", std::fs::read_to_string(&knob));
    // The device is the test's own and removed at the end: no need to restore the switch.
    std::fs::write(&knob, "0").unwrap();
    let (doc, code) = blkscope_json(&[
        "run",
        z.dev(),
        "--op",
        "write",
        "--bs",
        "1M",
        "--size",
        "8M",
        "--confirm",
        &z.name,
        "--no-save",
        "--json",
    ]);
    assert_eq!(code, 0, "{doc}");
    let r = &doc["results"][0];
    assert!(!findings(&doc).contains(&"stats_off".into()), "{doc}");
    assert_eq!(r["diskstats"][0]["disk_device"], z.name.as_str(), "{doc}");
    assert!(
        r["diskstats"][0]["stats_off"].is_null(),
        "{}",
        r["diskstats"][0]
    );
    // Nothing else writes to a zram device of the test's own: exact.
    assert_eq!(
        r["device_bytes"]["device"],
        z.name.as_str(),
        "{}",
        r["device_bytes"]
    );
    assert_eq!(
        r["device_bytes"]["written"],
        8 * MIB,
        "{}",
        r["device_bytes"]
    );
    let out = blkscope(&["stat", &z.name, "--count", "1", "--interval", "100ms"]);
    let t = stdout_of(&out);
    println!("{t}");
    assert!(
        t.lines().any(|l| l.starts_with(&z.name)) && !t.contains("statistics off"),
        "{t}"
    );
    let d = listed(&z.name);
    assert_eq!(
        (&d["iostats"], &d["io_figures"]),
        (&false.into(), &true.into()),
        "{d}"
    );
    let (d, _) = blkscope_json(&["doctor", &z.name, "--json"]);
    assert!(
        !finding_kinds(&d["devices"][0]).contains(&"stats_off".into()),
        "{d}"
    );
    // Its write cache setting means no flush, not durability: it is RAM.
    let wc = finding_of(&d["devices"][0], "write_cache").expect("doctor's write_cache");
    assert!(wc["message"].as_str().unwrap().contains("in RAM"), "{wc}");
    let (doc, code) = blkscope_json(&[
        "run",
        z.dev(),
        "--op",
        "write",
        "--mode",
        "dsync",
        "--bs",
        "4k",
        "--size",
        "1M",
        "--confirm",
        &z.name,
        "--no-save",
        "--json",
    ]);
    assert_eq!(code, 0, "{doc}");
    let wc = finding(&doc, "write_cache");
    assert!(wc["message"].as_str().unwrap().contains("in RAM"), "{wc}");
}

#[test]
fn stat_table_and_errors() {
    if !require(true, &["losetup"]) {
        return;
    }
    let lo = Loop::new(16 * MIB, None, false);
    let out = blkscope(&["stat", lo.dev(), "--count", "2", "--interval", "100ms"]);
    assert!(out.status.success());
    let t = stdout_of(&out);
    assert_eq!(
        t.matches("Device ").count(),
        2,
        "one table per interval: {t}"
    );
    assert!(t.contains("%util") && t.contains("aqu-sz") && t.contains("f_await"));
    assert!(t.lines().any(|l| l.starts_with(&lo.name)));
    let out = blkscope(&["stat", "/dev/nosuchdisk", "--count", "1"]);
    // A usage error, as a path that is not there is.
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(err.lines().count(), 1);
    assert!(err.contains("blkscope list"), "{err}");
}

/// The never_written finding of a read test on `target`, printed, or None.
fn never_written(args: &[&str]) -> Option<serde_json::Value> {
    let (doc, code) = blkscope_json(args);
    assert_eq!(code, 0, "blkscope {args:?}: {doc}");
    let f = finding_of(&doc["results"][0], "never_written").cloned();
    println!("blkscope {args:?}: never_written = {f:?}");
    f
}

/// A short 4K random read test of `target`, unsaved, as JSON.
fn randread_300ms(target: &str) -> [&str; 10] {
    [
        "run",
        target,
        "--op",
        "randread",
        "--bs",
        "4k",
        "--runtime",
        "300ms",
        "--no-save",
        "--json",
    ]
}

/// Fills `target` (device `name`) with random data (1M direct writes); once written it carries
/// data, so the name is typed back.
fn fill(target: &str, name: &str, size: &str) {
    let (doc, code) = blkscope_json(&[
        "run",
        target,
        "--op",
        "write",
        "--bs",
        "1M",
        "--size",
        size,
        "--confirm",
        name,
        "--no-save",
        "--json",
    ]);
    assert_eq!(code, 0, "fill {target}: {doc}");
}

#[test]
fn reads_of_a_zram_device_never_written_are_a_finding_until_it_is_filled() {
    if !require(true, &[]) {
        return;
    }
    let Some(z) = Zram::new(64 * MIB) else {
        return;
    };
    let read = randread_300ms(z.dev());
    let f = never_written(&read).expect("a never_written finding on an empty zram");
    // Nothing writes to a zram device of the test's own: exact.
    assert_eq!(f["device"], z.name.as_str());
    assert_eq!(f["numbers"]["stored_bytes"], 0.0);
    assert_eq!(f["numbers"]["unwritten_bytes"], (64 * MIB) as f64);
    let msg = f["message"].as_str().unwrap();
    assert!(
        msg.contains(&format!(
            "blkscope run {} --op write --bs 1M --size 64M",
            z.dev()
        )),
        "{msg}"
    );
    // Half written: at least the other half is said.
    fill(z.dev(), &z.name, "32M");
    let f = never_written(&read).expect("a finding with half the device written");
    assert_eq!(f["numbers"]["unwritten_bytes"], (32 * MIB) as f64);
    // The written half alone, or the whole device filled: no finding.
    assert_eq!(
        never_written(&[
            "run",
            z.dev(),
            "--op",
            "read",
            "--bs",
            "1M",
            "--size",
            "32M",
            "--no-save",
            "--json",
        ]),
        None
    );
    fill(z.dev(), &z.name, "64M");
    assert_eq!(never_written(&read), None);
}

#[test]
fn reads_of_holes_in_a_loop_devices_backing_file_are_a_finding_until_it_is_filled() {
    if !require(true, &["losetup"]) {
        return;
    }
    let lo = Loop::new(32 * MIB, None, false);
    let read = [
        "run",
        lo.dev(),
        "--op",
        "read",
        "--bs",
        "1M",
        "--no-save",
        "--json",
    ];
    let f = never_written(&read).expect("a never_written finding over a sparse image");
    assert_eq!(f["device"], lo.name.as_str());
    // A neighbour's probe reads the device but reads allocate nothing: all holes.
    assert_eq!(f["numbers"]["unwritten_bytes"], (32 * MIB) as f64);
    assert!(
        f["message"].as_str().unwrap().contains(lo.image.path_str()),
        "the backing file is named: {f}"
    );
    // Known before the first I/O, it is said live from the first sample on, word for word as
    // the result says it (the live view said nothing of it while a test read 10 GB/s of holes).
    let mut live = read[..6].to_vec();
    live.extend(["--runtime", "300ms", "--no-save", "--ndjson"]);
    let (samples, doc) = ndjson(&String::from_utf8_lossy(&blkscope(&live).stdout));
    let first = samples.first().expect("a sample");
    println!("first sample's findings: {}", first["findings"]);
    let said = first["findings"]
        .as_array()
        .and_then(|f| f.iter().find(|x| x["kind"] == "never_written"))
        .expect("never_written in the first sample");
    let result =
        finding_of(&doc["results"][0], "never_written").expect("never_written in the result");
    assert_eq!(said["message"], result["message"], "{said} / {result}");
    fill(lo.dev(), &lo.name, "32M");
    assert_eq!(never_written(&read), None);
    let (doc, _) = blkscope_json(&read);
    assert!(
        !findings(&doc).contains(&"zeros_read".into()),
        "random data read back is not zeros: {doc}"
    );
}

#[test]
fn reads_of_zeros_written_are_a_finding_where_no_hole_tells() {
    use std::os::unix::fs::FileExt;
    if !require(true, &["losetup"]) {
        return;
    }
    // Zeros written into the image: allocated, no holes, so never_written cannot say; what the
    // reads bring back can.
    let image = Image::new(64 * MIB);
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(&image.path)
        .unwrap();
    f.write_all_at(&vec![0u8; 64 * MIB as usize], 0).unwrap();
    f.sync_all().unwrap();
    let lo = Loop::over(image, None, false);
    // Once over the device, not for a time, so the samples are the same on a machine of any
    // speed: 32 a pass over a region under 128 MiB. 64 MiB of 64k reads: one every 2 MiB. 16 MiB
    // of 4k random reads: one every 512 KiB (at one every 4 MiB that was 4, under the 8
    // needed, and nothing was said).
    for (op, bs, size, every) in [
        ("read", "64k", None, "2M"),
        ("randread", "4k", Some("16M"), "512K"),
    ] {
        let mut args = vec![
            "run",
            lo.dev(),
            "--op",
            op,
            "--bs",
            bs,
            "--no-save",
            "--json",
        ];
        if let Some(size) = size {
            args.extend(["--size", size]);
        }
        let (doc, code) = blkscope_json(&args);
        assert_eq!(code, 0, "{doc}");
        println!("{args:?}: findings {}", doc["results"][0]["findings"]);
        assert!(!findings(&doc).contains(&"never_written".into()), "{doc}");
        let z = finding(&doc, "zeros_read");
        // Each read looked at (the first too) was zeros.
        assert_eq!(z["numbers"]["sampled_blocks"], 32.0, "{z}");
        assert_eq!(z["numbers"]["zero_blocks"], 32.0, "{z}");
        assert_eq!(z["device"], lo.name.as_str());
        let said = format!("one every {every} read");
        assert!(
            z["message"].as_str().unwrap().contains(&said),
            "{said}: {z}"
        );
    }
}

#[test]
fn reads_of_holes_in_a_named_file_are_a_finding() {
    use std::os::unix::fs::FileExt;
    // No root needed: a sparse file of 16 MiB with its first 4 MiB written.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sparse");
    let f = std::fs::File::create(&path).unwrap();
    f.set_len(16 * MIB).unwrap();
    f.write_all_at(&vec![0x5a; 4 * MIB as usize], 0).unwrap();
    f.sync_all().unwrap();
    let p = path.to_str().unwrap();
    let f = never_written(&randread_300ms(p)).expect("a never_written finding in a sparse file");
    let unwritten = f["numbers"]["unwritten_bytes"].as_f64().unwrap();
    // The file system may allocate a little past what was written; never less.
    assert!(
        (11 * MIB) as f64 <= unwritten && unwritten <= (12 * MIB) as f64,
        "unwritten {unwritten}: {f}"
    );
    assert!(
        f["message"].as_str().unwrap().contains("--force"),
        "the fill command overwrites a file, which needs --force: {f}"
    );
    // The written part alone: no finding.
    assert_eq!(
        never_written(&[
            "run",
            p,
            "--op",
            "read",
            "--bs",
            "1M",
            "--size",
            "4M",
            "--no-save",
            "--json",
        ]),
        None
    );
}

/// The finding of `kind` in a short read test of `target`, printed, or None.
fn finding_in_read(target: &str, kind: &str) -> Option<serde_json::Value> {
    let args = [
        "run",
        target,
        "--op",
        "read",
        "--bs",
        "1M",
        "--size",
        "8M",
        "--runtime",
        "200ms",
        "--no-save",
        "--json",
    ];
    let (doc, code) = blkscope_json(&args);
    assert_eq!(code, 0, "blkscope {args:?}: {doc}");
    let f = finding_of(&doc["results"][0], kind).cloned();
    println!("blkscope {args:?}: {kind} = {f:?}");
    f
}

#[test]
fn memory_under_the_target_is_a_finding() {
    if !require(true, &["losetup", "mkfs.ext4", "mount"]) {
        return;
    }
    // A loop device attached without direct I/O (losetup's default): its I/O goes through the
    // backing file's page cache.
    let lo = Loop::new(32 * MIB, None, false);
    let f = finding_in_read(lo.dev(), "backing_cache").expect("a buffered loop device");
    assert_eq!(f["device"], lo.name.as_str());
    let msg = f["message"].as_str().unwrap();
    for part in [
        format!("{} is a loop device over {}", lo.name, lo.image.path_str()),
        format!("losetup --direct-io=on {}", lo.dev()),
    ] {
        assert!(msg.contains(&part), "{part:?} in {msg}");
    }
    // The same device switched to direct I/O: no finding, as far as the kernel took the switch
    // (a backing file system without O_DIRECT keeps dio at 0, and then the finding stays).
    sh("losetup", &["--direct-io=on", lo.dev()]);
    let dio = std::fs::read_to_string(format!("/sys/block/{}/loop/dio", lo.name)).unwrap();
    println!("{}: loop/dio = {}", lo.name, dio.trim());
    assert_eq!(
        finding_in_read(lo.dev(), "backing_cache").is_some(),
        dio.trim() == "0",
        "the finding follows loop/dio"
    );
    // A scratch file in a file system on a buffered loop device.
    let fs = Loop::new(256 * MIB, None, false);
    sh("mkfs.ext4", &["-q", fs.dev()]);
    let m = Mount::new(fs.dev());
    let f = finding_in_read(m.dir.path().to_str().unwrap(), "backing_cache")
        .expect("a file on a buffered loop device");
    let msg = f["message"].as_str().unwrap();
    let head = format!("the test's file is on {}, a loop device over", fs.name);
    assert!(msg.starts_with(&head), "{head:?} starts {msg}");
    assert!(
        finding_in_read(m.dir.path().to_str().unwrap(), "memory_fs").is_none(),
        "ext4 is not in memory"
    );
    // A loop device over a file in RAM: direct I/O on or not, it is memory.
    let ram = Tmpfs::new("48m");
    let dir = tempfile::tempdir_in(ram.path_str()).unwrap();
    let path = dir.path().join("ram.img");
    std::fs::File::create(&path)
        .unwrap()
        .set_len(32 * MIB)
        .unwrap();
    let lo = Loop::over(Image { dir, path }, None, false);
    sh("losetup", &["--direct-io=on", lo.dev()]);
    let dio = std::fs::read_to_string(format!("/sys/block/{}/loop/dio", lo.name)).unwrap();
    println!("{} over a tmpfs file: loop/dio = {}", lo.name, dio.trim());
    let f = finding_in_read(lo.dev(), "backing_cache").expect("a loop device over a tmpfs file");
    let msg = f["message"].as_str().unwrap();
    let head = format!(
        "{} is a loop device over {} (on a tmpfs: RAM) {} direct I/O: its blocks are in memory",
        lo.name,
        lo.image.path_str(),
        if dio.trim() == "1" { "with" } else { "without" }
    );
    assert!(msg.starts_with(&head), "{head:?} starts {msg}");
    // `list` (and the TUI's Properties, from the same field) names the file system under it.
    let (l, _) = blkscope_json(&["list", "--json"]);
    let listed = device(&l, &lo.name);
    println!("list: loop_backing_fs {}", listed["loop_backing_fs"]);
    assert_eq!(listed["loop_backing_fs"], "tmpfs", "{listed}");
    let (v, _) = blkscope_json(&["doctor", lo.dev(), "--json"]);
    let d = finding_of(&v["devices"][0], "backing_cache").unwrap_or_else(|| panic!("{v}"));
    println!("doctor: {d}");
    assert!(
        d["message"]
            .as_str()
            .unwrap()
            .contains("with direct I/O or without"),
        "{d}"
    );
    drop(lo);
    // A file system in RAM: no device under it at all.
    let t = Tmpfs::new("128m");
    let f = finding_in_read(t.path_str(), "memory_fs").expect("a tmpfs");
    let msg = f["message"].as_str().unwrap();
    assert!(msg.contains("on a tmpfs, a file system in RAM"), "{msg}");
    assert!(
        finding_in_read(t.path_str(), "backing_cache").is_none(),
        "no loop device under a tmpfs"
    );
}

/// A random write test's JSON on a scratch file in `dir`.
fn randwrite_in(dir: &str, bs: &str) -> serde_json::Value {
    let args = [
        "run",
        dir,
        "--op",
        "randwrite",
        "--bs",
        bs,
        "--iodepth",
        "16",
        "--size",
        "16M",
        "--json",
    ];
    let (doc, code) = blkscope_json(&args);
    assert_eq!(code, 0, "{args:?}: {doc}");
    doc
}

#[test]
fn direct_writes_of_part_of_a_file_system_block_are_a_finding() {
    if !require(true, &["losetup", "mkfs.ext4", "mkfs.xfs", "mount"]) {
        return;
    }
    // 512-byte sectors, so that 2K direct writes are allowed; 4K file system blocks.
    for (fs, mkfs) in [
        ("ext4", vec!["-q", "-F", "-b", "4096"]),
        ("xfs", vec!["-q", "-f", "-b", "size=4096"]),
    ] {
        let lo = Loop::new(320 * MIB, Some(512), false);
        let mut args = mkfs.clone();
        args.push(lo.dev());
        sh(&format!("mkfs.{fs}"), &args);
        let m = Mount::new(lo.dev());
        let dir = m.dir.path().to_str().unwrap();
        let doc = randwrite_in(dir, "2k");
        let r = &doc["results"][0];
        println!(
            "{fs} 2k: {} IOPS, findings {:?}, diskstats {}",
            r["iops"],
            findings(&doc),
            r["diskstats"]
        );
        let f = finding(&doc, "partial_fs_block");
        let msg = f["message"].as_str().unwrap();
        let head = format!("bs 2K is not a multiple of the 4K blocks of {fs} under the file");
        assert!(msg.starts_with(&head), "{head:?} starts {msg}");
        assert!(msg.contains("Use --bs 4k to measure"), "{msg}");
        assert_eq!(f["device"], lo.name.as_str(), "{f}");
        assert_eq!(f["numbers"]["fs_block"], 4096.0, "{f}");
        assert_eq!(f["numbers"]["in_flight_asked"], 16.0, "{f}");
        // A multiple of the block: no finding.
        let doc = randwrite_in(dir, "4k");
        let r = &doc["results"][0];
        println!(
            "{fs} 4k: {} IOPS, findings {:?}, diskstats {}",
            r["iops"],
            findings(&doc),
            r["diskstats"]
        );
        assert!(
            !findings(&doc).iter().any(|k| k == "partial_fs_block"),
            "{fs} 4k: {:?}",
            findings(&doc)
        );
    }
}

/// On a console a warning is its kind and first sentence (a 900-character paragraph would bury
/// the result); `blkscope explain KIND` says what the kind means and gives the whole of what
/// the newest saved run said, as --json does.
#[test]
fn a_warning_is_one_sentence_and_explain_gives_the_rest() {
    if !require(true, &["losetup"]) {
        return;
    }
    let lo = Loop::new(128 * MIB, None, false);
    let runs = SavedRuns::new();
    let text = runs.ok(&[
        "run",
        lo.dev(),
        "--op",
        "write",
        "--bs",
        "1M",
        "--mode",
        "buffered",
        "--size",
        "64M",
        "--confirm",
        &lo.name,
    ]);
    println!("{text}");
    let line = text
        .lines()
        .find(|l| l.contains("warning [page_cache]: only"))
        .unwrap_or_else(|| panic!("no measured page_cache warning:\n{text}"));
    assert!(
        line.trim_end()
            .ends_with("so the result measured memory, not the device."),
        "the first sentence, whole: {line}"
    );
    assert!(
        !text.contains("not the device. Use --mode fdatasync"),
        "the rest is not printed"
    );
    assert!(text.contains("blkscope explain KIND"), "{text}");
    let explained = runs.ok(&["explain", "page_cache"]);
    println!("{explained}");
    assert!(explained.starts_with("page_cache: "), "{explained}");
    assert!(explained.contains("In saved run"), "{explained}");
    let whole: String = explained.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        whole
            .contains("not the device. Use --mode fdatasync (dd conv=fdatasync) or --mode direct."),
        "the whole message: {explained}"
    );
    assert!(
        explained.lines().all(|l| l.chars().count() <= 80),
        "{explained}"
    );
}
