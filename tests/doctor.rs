//! `blkscope doctor`: SMART from smartctl's JSON (fixtures in the shape smartctl 7 prints for
//! ATA, NVMe and SCSI, healthy and failing), the processes doing I/O (a real dd on a loop device,
//! found by pid), a loop device over the page cache, a misaligned partition (a fixture tree of a
//! 512e disk), and the exit status.

mod common;

use std::process::{Command, Stdio};

use blkscope::doctor::{Severity, smart};
use common::*;

const MIB: u64 = 1 << 20;

fn fixture(name: &str) -> serde_json::Value {
    let p = format!(
        "{}/tests/fixtures/smart/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// (severity, message) of the smart findings.
fn smart_of(name: &str) -> Vec<(Severity, String)> {
    smart::parse(&fixture(name), "sdx")
        .into_iter()
        .map(|f| {
            assert_eq!(f.kind, "smart");
            (f.severity(), f.message)
        })
        .collect()
}

fn has(f: &[(Severity, String)], sev: Severity, words: &str) -> bool {
    f.iter().any(|(s, m)| *s == sev && m.contains(words))
}

#[test]
fn smart_of_healthy_and_failing_drives() {
    let f = smart_of("ata_healthy");
    assert!(f.iter().all(|(s, _)| *s == Severity::Info), "{f:?}");
    assert!(
        has(&f, Severity::Info, "passed") && has(&f, Severity::Info, "21345 power-on hours"),
        "{f:?}"
    );

    let f = smart_of("ata_failing");
    assert!(has(&f, Severity::Problem, "FAILED"), "{f:?}");
    assert!(has(&f, Severity::Problem, "1864 reallocated"), "{f:?}");
    assert!(has(&f, Severity::Problem, "24 pending"), "{f:?}");
    assert!(
        has(&f, Severity::Problem, "24 offline-uncorrectable"),
        "{f:?}"
    );
    assert!(
        has(&f, Severity::Warning, "17 UDMA CRC errors") && has(&f, Severity::Warning, "cable"),
        "{f:?}"
    );
    assert!(
        has(
            &f,
            Severity::Warning,
            "312 entries in the drive's error log"
        ),
        "{f:?}"
    );

    let f = smart_of("nvme_healthy");
    assert!(f.iter().all(|(s, _)| *s == Severity::Info), "{f:?}");
    assert!(
        has(&f, Severity::Info, "2% of the rated write endurance"),
        "{f:?}"
    );
    assert!(has(&f, Severity::Info, "31 unsafe shutdowns"), "{f:?}");

    let f = smart_of("nvme_failing");
    assert!(
        has(
            &f,
            Severity::Problem,
            "critical warning 0x4: reliability is degraded by media errors; back up"
        ),
        "{f:?}"
    );
    assert!(
        has(&f, Severity::Problem, "103% of the rated write endurance"),
        "{f:?}"
    );
    assert!(has(&f, Severity::Problem, "57 media errors"), "{f:?}");
    assert!(has(&f, Severity::Problem, "74 C"), "{f:?}");

    let f = smart_of("scsi_failing");
    assert!(has(&f, Severity::Warning, "34 grown defects"), "{f:?}");
    assert!(has(&f, Severity::Problem, "3 uncorrected errors"), "{f:?}");

    // What smartctl prints for a device it cannot read.
    let v = serde_json::json!({"smartctl": {"exit_status": 2, "messages": [
        {"string": "/dev/vda: Unable to detect device type", "severity": "error"}]}});
    let f = smart::parse(&v, "vda");
    assert_eq!(f[0].kind, "smart_unavailable", "{f:?}");
    assert!(f[0].message.contains("reports no SMART"), "{f:?}");
}

/// A stand-in for smartctl that prints one fixture (the doctor runs it as smartctl).
fn fake_smartctl(dir: &std::path::Path, fixture: &str) -> String {
    let p = dir.join("smartctl");
    let f = format!(
        "{}/tests/fixtures/smart/{fixture}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    std::fs::write(&p, format!("#!/bin/sh\ncat '{f}'\nexit 0\n")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    p.to_string_lossy().into_owned()
}

fn doctor(env: &[(&str, &str)], args: &[&str]) -> (serde_json::Value, i32) {
    let out = bin().args(args).envs(env.iter().copied()).output().unwrap();
    let v = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{args:?}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
    (v, out.status.code().unwrap_or(-1))
}

fn root(fixture: &str) -> String {
    format!("{}/tests/fixtures/{fixture}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn doctor_exit_status_follows_the_worst_finding() {
    let dir = tempfile::tempdir().unwrap();
    let healthy = fake_smartctl(dir.path(), "ata_healthy");
    let (v, code) = doctor(
        &[("BLKSCOPE_SMARTCTL", &healthy)],
        &[
            "--root",
            &root("lvm-on-partition"),
            "doctor",
            "sdb",
            "--json",
        ],
    );
    assert_eq!(code, 0, "{v}");
    let d = &v["devices"][0];
    assert_eq!(d["name"], "sdb");
    assert!(finding_kinds(d).contains(&"smart".into()), "{d}");

    let failing = dir.path().join("f");
    std::fs::create_dir(&failing).unwrap();
    let failing = fake_smartctl(&failing, "ata_failing");
    let (v, code) = doctor(
        &[("BLKSCOPE_SMARTCTL", &failing)],
        &[
            "--root",
            &root("lvm-on-partition"),
            "doctor",
            "sdb",
            "--json",
        ],
    );
    assert_eq!(code, 5, "{v}");
    let f = &v["devices"][0]["findings"][0];
    assert_eq!(f["severity"], "problem", "worst first: {v}");

    // No smartctl: says which package.
    let (v, _) = doctor(
        &[("BLKSCOPE_SMARTCTL", "/nonexistent/smartctl")],
        &[
            "--root",
            &root("lvm-on-partition"),
            "doctor",
            "sdb",
            "--json",
        ],
    );
    let s = v.to_string();
    assert!(
        s.contains("smart_unavailable") && s.contains("smartmontools"),
        "{v}"
    );
}

#[test]
fn a_misaligned_partition_is_a_problem() {
    let (v, code) = doctor(&[], &["--root", &root("misaligned"), "doctor", "--json"]);
    assert_eq!(code, 5, "{v}");
    let d = &v["devices"][0];
    assert_eq!(d["name"], "sdf");
    let f = finding_of(d, "misaligned").unwrap_or_else(|| panic!("{d}"));
    assert_eq!(f["severity"], "problem");
    assert!(f["message"].as_str().unwrap().contains("sdf1"), "{f}");
    assert_eq!(f["numbers"]["start_bytes"], 63 * 512);
    let out = bin()
        .args(["--root", &root("misaligned"), "doctor"])
        .output()
        .unwrap();
    let text = stdout_of(&out);
    assert!(text.contains("[problem] misaligned"), "{text}");
}

#[test]
fn loop_devices_over_the_page_cache_and_not() {
    if !require(true, &["losetup"]) {
        return;
    }
    let buffered = Loop::new(16 * MIB, None, false);
    let img = Image::new(16 * MIB);
    let out = sh(
        "losetup",
        &["--find", "--show", "--direct-io=on", img.path_str()],
    );
    let direct = stdout_of(&out).trim().to_string();
    struct Detach(String);
    impl Drop for Detach {
        fn drop(&mut self) {
            let _ = Command::new("losetup")
                .env("PATH", path_with_sbin())
                .args(["-d", &self.0])
                .status();
        }
    }
    let _d = Detach(direct.clone());
    let (v, _) = doctor(&[], &["doctor", &buffered.name, &direct, "--json"]);
    let b = &v["devices"][0];
    assert!(finding_kinds(b).contains(&"backing_cache".into()), "{b}");
    assert!(
        finding_kinds(b).contains(&"smart_unavailable".into()),
        "{b}"
    );
    let f = finding_of(b, "backing_cache").unwrap_or_else(|| panic!("{b}"));
    assert_eq!(
        f["numbers"]["backing_file"],
        buffered.image.path_str(),
        "{f}"
    );
    let d = &v["devices"][1];
    assert!(
        !finding_kinds(d).contains(&"backing_cache".into()),
        "direct I/O: {d}"
    );
    // A loop device has no cache of its own: its "write back" is its file's (doctor said
    // "writes are acknowledged from the drive's cache").
    for dev in [b, d] {
        let f = finding_of(dev, "write_cache").unwrap_or_else(|| panic!("{dev}"));
        let m = f["message"].as_str().unwrap();
        println!("{m}");
        assert!(
            m.contains("is a loop device over ")
                && m.contains("with no cache of its own")
                && !m.contains("drive"),
            "{f}"
        );
    }
    // Both images are sparse and nothing wrote to them: all holes, which reads there measure.
    for dev in [b, d] {
        let f =
            finding_of(dev, "never_written").unwrap_or_else(|| panic!("no never_written: {dev}"));
        assert_eq!(f["numbers"]["unwritten_bytes"], 16 * MIB, "{f}");
        assert_eq!(f["severity"], "info", "{f}");
    }
}

/// A partition has no queue of its own: the doctor said of a loop device's partition
/// "writes are acknowledged from the drive's cache" and "echo mq-deadline >
/// /sys/block/loopNp1/queue/scheduler", a file that is not there. Its disk's settings, named
/// by its disk.
#[test]
fn a_partitions_queue_settings_are_its_disks() {
    if !require(true, &["losetup", "sfdisk"]) {
        return;
    }
    let lo = Loop::new(64 * MIB, None, true);
    sfdisk(lo.dev(), "label: gpt\n,32M\n");
    let p1 = lo.wait_part(1);
    let (v, _) = doctor(&[], &["doctor", &p1, "--json"]);
    let d = &v["devices"][0];
    let f = finding_of(d, "write_cache").unwrap_or_else(|| panic!("{d}"));
    let m = f["message"].as_str().unwrap();
    println!("{m}");
    assert!(
        m.starts_with(&format!("{} is a loop device over ", lo.name)) && !m.contains("drive"),
        "{f}"
    );
    // A partition of a rotational disk with scheduler none (a fixture tree): the file to
    // write is the disk's.
    let (v, _) = doctor(
        &[],
        &["--root", &root("misaligned"), "doctor", "sdf1", "--json"],
    );
    let d = &v["devices"][0];
    let f = finding_of(d, "scheduler").unwrap_or_else(|| panic!("{d}"));
    println!("{}", f["message"]);
    assert!(
        f["message"]
            .as_str()
            .unwrap()
            .contains("echo mq-deadline > /sys/block/sdf/queue/scheduler"),
        "{f}"
    );
}

/// A child a test started, killed and reaped when the test ends, also when it fails.
struct Kill<'a>(&'a mut std::process::Child);

impl Drop for Kill<'_> {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn a_dd_writing_to_a_loop_device_is_found_by_pid() {
    if !require(true, &["losetup", "dd"]) {
        return;
    }
    let lo = Loop::new(256 * MIB, None, false);
    let mut dd = Command::new("dd")
        .args([
            "if=/dev/zero",
            &format!("of={}", lo.dev()),
            "bs=4k",
            "count=65536",
            "oflag=dsync",
            "status=none",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = dd.id();
    let _k = Kill(&mut dd);
    wait_until(10, "dd to write", || {
        std::fs::read_to_string(format!("/proc/{pid}/io"))
            .ok()
            .and_then(|t| blkscope::stats::procs::parse_io(&t))
            .is_some_and(|io| io.write_bytes > 0)
    });
    let (v, _) = doctor(&[], &["doctor", &lo.name, "--json"]);
    let d = &v["devices"][0];
    let f = finding_of(d, "busy_processes").unwrap_or_else(|| panic!("no busy_processes: {d}"));
    let procs = f["numbers"]["processes"].as_array().unwrap();
    let p = procs
        .iter()
        .find(|p| p["pid"] == pid)
        .unwrap_or_else(|| panic!("dd (pid {pid}) not among {procs:?}"));
    assert_eq!(p["comm"], "dd");
    assert!(p["write_bytes_per_sec"].as_f64().unwrap() > 0.0, "{p}");
    assert_eq!(p["devices"][0], lo.name.as_str());
    // As root with tracefs, from the block layer's trace: exact per device, with the time in
    // the device; /proc/PID/io is the fallback, named as such.
    println!("{}", f["message"]);
    if f["numbers"]["source"] == "/proc/PID/io" {
        assert!(
            !required(),
            "CI: doctor must trace the block layer here: {f}"
        );
        return;
    }
    assert_eq!(f["numbers"]["source"], "the block layer's trace", "{f}");
    assert!(p["d2c_mean_us"].as_f64().unwrap() > 0.0, "{p}");
    assert!(
        f["message"].as_str().unwrap().contains("us in the device"),
        "{f}"
    );
}

/// A shell whose dd child wrote before the first sample and was reaped after it: the kernel
/// adds the child's counters to the shell's /proc/PID/io then, but the shell did not move
/// those bytes in the interval, and it is not named (it was, as doing the dd's I/O).
#[test]
fn a_reaped_childs_io_is_not_its_parents() {
    if !require(true, &["losetup", "dd", "sh"]) {
        return;
    }
    use blkscope::stats::procs::{ProcSnapshot, busy, parse_io};
    let lo = Loop::new(64 * MIB, None, false);
    let dir = tempfile::tempdir().unwrap();
    let done = dir.path().join("done");
    // The shell stops itself at once, so the dd it started is left a zombie, unreaped, until
    // the shell is continued; then `wait` reaps it.
    let script = format!(
        "dd if=/dev/zero of={} bs=1M count=32 oflag=direct status=none & kill -STOP $$; \
         wait; touch {}; sleep 30",
        lo.dev(),
        done.display()
    );
    let mut sh = Command::new("sh").args(["-c", &script]).spawn().unwrap();
    let pid = sh.id();
    let _k = Kill(&mut sh);
    let stat = |p: u32| std::fs::read_to_string(format!("/proc/{p}/stat")).unwrap_or_default();
    let state = |st: &str| {
        let rest = st
            .rsplit_once(')')
            .map(|r| r.1.to_string())
            .unwrap_or_default();
        let f: Vec<String> = rest.split_whitespace().map(String::from).collect();
        (
            f.first().cloned().unwrap_or_default(),
            f.get(1).cloned().unwrap_or_default(),
        )
    };
    // The dd: a child of the shell's, a zombie once it has written everything.
    wait_until(20, "the shell's dd to end, unreaped", || {
        state(&stat(pid)).0 == "T"
            && std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
                let st = stat(e.file_name().to_str().unwrap_or("0").parse().unwrap_or(0));
                let (s, ppid) = state(&st);
                ppid == pid.to_string() && s == "Z"
            })
    });
    let own = || {
        std::fs::read_to_string(format!("/proc/{pid}/io"))
            .ok()
            .and_then(|t| parse_io(&t))
            .map_or(0, |io| io.read_bytes + io.write_bytes)
    };
    let root = blkscope::SysRoot::live();
    let (a, before) = (ProcSnapshot::read(&root), own());
    // SAFETY: signalling the shell this test started.
    unsafe { libc::kill(pid as i32, libc::SIGCONT) };
    wait_until(20, "the shell to reap its dd", || done.exists());
    let (b, after) = (ProcSnapshot::read(&root), own());
    let found = busy(&root, &a, &b, &[std::process::id()]);
    println!(
        "the shell's /proc/{pid}/io grew by {} bytes (its reaped dd's); busy: {found:?}",
        after - before
    );
    assert!(
        after - before >= 32 << 20,
        "the dd's 32M were not added to the shell"
    );
    // What the shell's family did do in the interval (`touch` reading its binary) may show;
    // the dd's 32M, moved before it, may not.
    let credited = found.iter().find(|p| p.pid == pid).map_or(0, |p| p.bytes);
    assert!(
        credited < 1 << 20,
        "the shell (pid {pid}) was credited with {credited} bytes, its reaped child's: {found:?}"
    );
}

/// Another process moving data while a test runs is named in the test's findings.
#[test]
fn a_test_names_other_processes_doing_io() {
    if !require(true, &["losetup"]) {
        return;
    }
    let a = Loop::new(256 * MIB, None, false);
    let b = Loop::new(64 * MIB, None, false);
    let mut other = bin()
        .args([
            "run",
            a.dev(),
            "--op",
            "write",
            "--bs",
            "1M",
            "--runtime",
            "20s",
            "--no-save",
            "--ndjson",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = other.id();
    // Wait until it writes.
    let mut first = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(other.stdout.as_mut().unwrap()),
        &mut first,
    )
    .unwrap();
    let (doc, code) = blkscope_json(&[
        "run",
        b.dev(),
        "--op",
        "write",
        "--bs",
        "4k",
        "--mode",
        "dsync",
        "--runtime",
        "1s",
        "--no-save",
        "--json",
    ]);
    let _ = other.kill();
    let _ = other.wait();
    assert_eq!(code, 0, "{doc}");
    let f = finding_of(&doc["results"][0], "busy_processes")
        .unwrap_or_else(|| panic!("no busy_processes finding: {doc}"));
    let m = f["message"].as_str().unwrap();
    assert!(m.contains(&format!("(pid {pid})")), "{m}");
    assert!(f["numbers"]["share"].as_f64().unwrap() > 0.01, "{f}");
}

#[test]
fn a_directory_or_file_stands_for_the_device_that_holds_it() {
    if !require(true, &["losetup", "mkfs.ext4", "mount"]) {
        return;
    }
    let lo = Loop::new(32 * MIB, None, false);
    sh("mkfs.ext4", &["-q", "-F", lo.dev()]);
    let m = Mount::new(lo.dev());
    let dir = m.dir.path().join("data");
    std::fs::create_dir(&dir).unwrap();
    let file = dir.join("f");
    std::fs::write(&file, b"x").unwrap();
    let smartctl = ("BLKSCOPE_SMARTCTL", "/nonexistent/smartctl");
    for path in [dir.to_str().unwrap(), file.to_str().unwrap()] {
        let (v, code) = doctor(&[smartctl], &["doctor", path, "--json"]);
        println!("doctor {path}: {code} {v}");
        let d = &v["devices"][0];
        assert_eq!(d["name"], lo.name.as_str(), "{d}");
        assert_eq!(d["holds"], path, "{d}");
        // stat takes it too.
        let (s, code) = blkscope_json(&[
            "stat",
            path,
            "--count",
            "1",
            "--interval",
            "100ms",
            "--json",
        ]);
        println!("stat {path}: {code} {s}");
        assert_eq!(code, 0, "{s}");
        assert!(s.to_string().contains(&format!("\"{}\"", lo.name)), "{s}");
    }
    // Its holes are said, but no write is offered for a mounted device.
    let (v, _) = doctor(&[smartctl], &["doctor", lo.dev(), "--json"]);
    let f = finding_of(&v["devices"][0], "never_written").unwrap_or_else(|| panic!("{v}"));
    let msg = f["message"].as_str().unwrap();
    assert!(
        msg.contains("it is in use, so no write test may fill it"),
        "{msg}"
    );
    assert!(!msg.contains("--op write"), "{msg}");
    let out = bin()
        .env(smartctl.0, smartctl.1)
        .args(["doctor", dir.to_str().unwrap()])
        .output()
        .unwrap();
    let text = stdout_of(&out);
    let head = format!("{} ({}, which holds {}):", lo.name, lo.dev(), dir.display());
    assert!(text.starts_with(&head), "{head:?} starts {text}");
    // A file system with no device under it: one line, exit 2.
    let t = Tmpfs::new("4m");
    for cmd in ["doctor", "stat"] {
        let out = bin()
            .env(smartctl.0, smartctl.1)
            .args([cmd, t.path_str()])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        println!("{cmd} on a tmpfs: {:?} {err}", out.status.code());
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains("it is on tmpfs, a file system with no block device under it"),
            "{err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

#[test]
fn reads_by_another_process_during_a_write_test_are_not_taken_for_its_own() {
    if !require(true, &["losetup", "dd"]) {
        return;
    }
    let lo = Loop::new(256 * MIB, None, false);
    sh("losetup", &["--direct-io=on", lo.dev()]);
    // Another process reads the device the test writes (without O_EXCL, so the test may run);
    // it is stopped on drop, also when an assertion fails.
    let reader = Neighbour::reading(&lo);
    let write = |trace: bool| {
        let mut args = vec![
            "run",
            lo.dev(),
            "--op",
            "write",
            "--bs",
            "1M",
            "--size",
            "64M",
            "--runtime",
            "1s",
            "--no-save",
            "--json",
            "--confirm",
            &lo.name,
        ];
        if !trace {
            args.insert(0, "--no-trace");
        }
        blkscope_json(&args)
    };
    // Traced (root here): the reads are the reader's, named per device, and no finding blames
    // the test for them. Without the trace (--no-trace), diskstats cannot tell: the finding
    // says the reads may be theirs, and why it cannot tell.
    let (traced, code_traced) = write(true);
    let (untraced, code) = write(false);
    drop(reader);
    assert_eq!(code_traced, 0, "{traced}");
    let r = &traced["results"][0];
    println!(
        "traced ({}): findings {:?}, device_bytes {}",
        r["trace"]["mode"],
        finding_kinds(r),
        r["device_bytes"]
    );
    if r["trace"]["mode"] != "off" {
        assert!(
            finding_of(r, "read_modify_write").is_none(),
            "the reader's reads are not the test's: {}",
            r["findings"]
        );
        let b = finding_of(r, "busy_processes").unwrap_or_else(|| panic!("{}", r["findings"]));
        let m = b["message"].as_str().unwrap();
        assert!(
            m.contains("dd (pid ") && m.contains("no read-modify-write"),
            "{m}"
        );
    } else {
        assert!(
            !required(),
            "CI: the block layer must be traced: {}",
            r["trace"]
        );
    }
    assert_eq!(code, 0, "{untraced}");
    let r = &untraced["results"][0];
    println!(
        "untraced: findings {:?}, device_bytes {}",
        finding_kinds(r),
        r["device_bytes"]
    );
    let f = finding_of(r, "read_modify_write").unwrap_or_else(|| panic!("{}", r["findings"]));
    let m = f["message"].as_str().unwrap();
    assert!(
        m.contains("so some or all of these reads may be theirs")
            && m.contains("The block layer was not traced: --no-trace"),
        "{m}"
    );
    assert!(
        f["numbers"]["other_read_bytes"].as_f64().unwrap() > 0.0,
        "{f}"
    );
    let w = r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["kind"] == "read_modify_write")
        .unwrap();
    assert_eq!(w["message"], m, "the warning says the same");
}

/// Untraced, a write test on one partition beside a reader of the other: the disk's diskstats
/// count both partitions' reads, the test's partition none, so nothing is called
/// read-modify-write (the disk's reads were taken for the test's before).
#[test]
fn a_reader_of_the_neighbouring_partition_is_no_read_modify_write_untraced() {
    if !require(true, &["losetup", "dd", "sfdisk"]) {
        return;
    }
    let lo = Loop::new(256 * MIB, None, true);
    sh("losetup", &["--direct-io=on", lo.dev()]);
    sfdisk(lo.dev(), "label: gpt\n,100M\n,100M\n");
    let (p1, p2) = (lo.wait_part(1), lo.wait_part(2));
    let name = p1.trim_start_matches("/dev/").to_string();
    let disk_reads = || diskstats_sectors(&lo.name).0;
    let r0 = disk_reads();
    let _reader = Neighbour::reader(&p2);
    wait_until(10, "the reader to read", || disk_reads() > r0 + 4096);
    let args = [
        "--no-trace",
        "run",
        &p1,
        "--op",
        "write",
        "--bs",
        "1M",
        "--size",
        "64M",
        "--runtime",
        "1s",
        "--no-save",
        "--json",
        "--confirm",
        &name,
    ];
    let (doc, code) = blkscope_json(&args);
    assert_eq!(code, 0, "{doc}");
    let r = &doc["results"][0];
    let disk = r["diskstats"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["disk_device"] == lo.name.as_str())
        .cloned()
        .unwrap_or_default();
    println!("findings {:?}; {}: {disk}", finding_kinds(r), lo.name);
    assert!(
        finding_of(r, "read_modify_write").is_none(),
        "the reads on {} were {p2}'s: {}",
        lo.name,
        r["findings"]
    );
}

/// A VM whose idle vCPUs halt at once (haltpoll governing, guest_halt_poll_ns 0) is named as a
/// cost of every low-depth latency; with polling on, or no haltpoll, nothing is said.
#[test]
fn a_vm_whose_idle_cpus_halt_at_once_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("root");
    let st = std::process::Command::new("cp")
        .args(["-a", &root("lvm-on-partition")])
        .arg(&copy)
        .status()
        .unwrap();
    assert!(st.success());
    let params = copy.join("sys/module/haltpoll/parameters");
    let idle = copy.join("sys/devices/system/cpu/cpuidle");
    std::fs::create_dir_all(&params).unwrap();
    std::fs::create_dir_all(&idle).unwrap();
    std::fs::write(idle.join("current_governor_ro"), "haltpoll\n").unwrap();
    let healthy = fake_smartctl(dir.path(), "ata_healthy");
    let run = |poll: Option<&str>| {
        match poll {
            Some(ns) => std::fs::write(params.join("guest_halt_poll_ns"), ns).unwrap(),
            None => {
                let _ = std::fs::remove_file(params.join("guest_halt_poll_ns"));
            }
        }
        let (v, code) = doctor(
            &[("BLKSCOPE_SMARTCTL", &healthy)],
            &["--root", copy.to_str().unwrap(), "doctor", "sdb", "--json"],
        );
        assert_eq!(code, 0, "an info finding does not change the status: {v}");
        println!(
            "guest_halt_poll_ns {poll:?}: {:?}",
            finding_kinds(&v["devices"][0])
        );
        finding_of(&v["devices"][0], "idle_halt").cloned()
    };
    let f = run(Some("0\n")).expect("idle_halt at 0");
    assert_eq!(f["severity"], "info", "{f}");
    let m = f["message"].as_str().unwrap();
    assert!(m.contains("halt at once"), "{f}");
    // What hides it, named for the user who compares with a polling fio.
    assert!(
        m.contains("--sqpoll") && m.contains("--sqthread_poll"),
        "{f}"
    );
    assert!(run(Some("200000\n")).is_none(), "polling on");
    assert!(run(None).is_none(), "no haltpoll module");
}

#[test]
fn doctor_watch_is_a_top_of_who_does_io_with_the_time_in_the_device() {
    if !require(true, &["losetup", "dd"]) {
        return;
    }
    let lo = Loop::new(64 << 20, None, false);
    let _reader = Neighbour::reading(&lo);
    let out = bin()
        .args([
            "doctor",
            "--watch",
            &lo.name,
            "--count",
            "2",
            "--interval",
            "500ms",
            "--json",
        ])
        .output()
        .unwrap();
    let text = ok_stdout(&out, "doctor --watch --json");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "one object per interval: {text}");
    for l in lines {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        println!("{v}");
        let rows = v["rows"].as_array().unwrap();
        let dd = rows
            .iter()
            .find(|r| r["comm"] == "dd")
            .unwrap_or_else(|| panic!("the reader is not in {v}"));
        assert_eq!(dd["device"], lo.name.as_str(), "{dd}");
        assert_eq!(dd["kernel"], false);
        assert!(dd["read_bytes_per_sec"].as_f64().unwrap() > 0.0, "{dd}");
        assert!(dd["iops"].as_f64().unwrap() > 0.0, "{dd}");
        assert!(dd["d2c_mean_us"].as_f64().unwrap() > 0.0, "{dd}");
        // Only the devices asked for.
        assert!(rows.iter().all(|r| r["device"] == lo.name.as_str()), "{v}");
    }
    let text = ok_stdout(
        &bin()
            .args(["doctor", "--watch", &lo.name, "--count", "1"])
            .output()
            .unwrap(),
        "doctor --watch",
    );
    println!("{text}");
    assert!(
        text.contains("PROCESS") && text.contains("D2C mean"),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with(&lo.name) && l.contains(" dd ")),
        "{text}"
    );
    // Without root: one line, nothing traced.
    let out = blkscope_as_nobody(&["doctor", "--watch", &lo.name, "--count", "1"]);
    let err = String::from_utf8_lossy(&out.stderr);
    println!("{:?} {err}", out.status.code());
    assert_eq!(out.status.code(), Some(2));
    assert!(err.contains("needs root"), "{err}");
    assert_eq!(err.trim().lines().count(), 1);
}
