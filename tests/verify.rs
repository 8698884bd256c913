//! Reading back what was written: `run --verify`, `blkscope verify --stamp` after the fact
//! (sectors overwritten, zeroed, corrupted and replaced by an older run's data are each named
//! with their kind), and `verify --capacity` on a loop device over a tmpfs smaller than the
//! device (the real usable size within 1%, the bad-range map starting there).

mod common;

use std::os::unix::fs::FileExt;

use common::*;

const MIB: u64 = 1 << 20;

#[test]
fn a_clean_write_verifies_with_nothing_bad() {
    if !require(true, &["losetup"]) {
        return;
    }
    let lo = Loop::new(64 * MIB, None, false);
    for op in ["write", "randwrite"] {
        let (doc, code) = blkscope_json(&[
            "run",
            lo.dev(),
            "--op",
            op,
            "--bs",
            "64k",
            "--iodepth",
            "8",
            "--size",
            "32M",
            "--verify",
            "--confirm",
            &lo.name,
            "--no-save",
            "--json",
        ]);
        assert_eq!(code, 0, "{op}: {doc}");
        let v = &doc["results"][0]["verify"];
        assert_eq!(v["sectors_checked"], 32 * MIB / 512, "{op}: {v}");
        assert_eq!(v["sectors_bad"], 0, "{op}: {v}");
        assert_eq!(v["bad_ranges"].as_array().unwrap().len(), 0, "{op}: {v}");
    }
    // Mixed tests and zeros cannot be verified: one line, exit 2.
    for extra in [&["--op", "randrw"][..], &["--data", "zero"][..]] {
        let mut args = vec![
            "run",
            lo.dev(),
            "--size",
            "1M",
            "--verify",
            "--confirm",
            &lo.name,
        ];
        args.extend_from_slice(extra);
        let out = blkscope(&args);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {out:?}");
    }
}

#[test]
fn verify_later_names_every_damaged_range_and_its_kind() {
    if !require(true, &["losetup"]) {
        return;
    }
    let lo = Loop::new(64 * MIB, None, false);
    // An older run's data at the same place, to take sectors from later.
    let out = blkscope(&[
        "run",
        lo.dev(),
        "--size",
        "16M",
        "--bs",
        "64k",
        "--mode",
        "dsync",
    ]);
    assert!(out.status.success(), "{out:?}");
    let img = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&lo.image.path)
        .unwrap();
    let mut older = vec![0u8; 4096];
    img.read_exact_at(&mut older, 12000 * 512).unwrap();
    // The run to check later.
    let out = blkscope(&[
        "run",
        lo.dev(),
        "--size",
        "16M",
        "--bs",
        "64k",
        "--mode",
        "dsync",
        "--verify-later",
        "--confirm",
        &lo.name,
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("cut the power") && err.contains("blkscope verify"),
        "{err}"
    );
    let id = saved_id(&out.stderr);
    // Untouched: all good.
    let (doc, code) = blkscope_json(&["verify", lo.dev(), "--stamp", &id, "--json"]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(doc["verify"]["sectors_checked"], 16 * MIB / 512, "{doc}");
    // Damage, behind the device's back: random bytes over sectors 1000-1001, zeros over
    // 5000-5007, one byte of the body of sector 9000, and the older run's sectors 12000-12007.
    img.write_all_at(&[0x5a; 1024], 1000 * 512).unwrap();
    img.write_all_at(&[0; 4096], 5000 * 512).unwrap();
    let mut s = [0u8; 1];
    img.read_exact_at(&mut s, 9000 * 512 + 100).unwrap();
    img.write_all_at(&[s[0] ^ 0xff], 9000 * 512 + 100).unwrap();
    img.write_all_at(&older, 12000 * 512).unwrap();
    img.sync_all().unwrap();
    let (doc, code) = blkscope_json(&["verify", lo.dev(), "--stamp", &id, "--json"]);
    assert_eq!(code, 6, "{doc}");
    let got: Vec<(u64, u64, String)> = doc["verify"]["bad_ranges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["offset"].as_u64().unwrap() / 512,
                r["length"].as_u64().unwrap() / 512,
                r["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            (1000, 2, "foreign".to_string()),
            (5000, 8, "zeroed".to_string()),
            (9000, 1, "corrupt".to_string()),
            (12000, 8, "wrong_stamp".to_string()),
        ],
        "(sector, sectors, kind): {doc}"
    );
    assert_eq!(doc["verify"]["sectors_bad"], 19, "{doc}");
    // The human form says what each kind found means, with a map, and that the zeroed,
    // foreign and older sectors are acknowledged writes that were lost.
    let out = blkscope(&["verify", lo.dev(), "--stamp", &id]);
    let text = stdout_of(&out);
    assert_eq!(out.status.code(), Some(6));
    assert!(
        text.contains("lost writes: the zeroed, foreign, wrong_stamp sectors were acknowledged as written and do not hold this run's data")
            && text.contains("map [")
            && text.contains("zeroed: all zeros: the write never reached the medium")
            && text.contains("corrupt: this run's offset and stamp, but the rest differs"),
        "{text}"
    );
    // Another device is refused: the stamp names its target.
    let other = Loop::new(64 * MIB, None, false);
    let out = blkscope(&["verify", other.dev(), "--stamp", &id]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

#[test]
fn capacity_of_a_device_over_a_too_small_tmpfs() {
    if !require(true, &["losetup", "mount"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    sh(
        "mount",
        &[
            "-t",
            "tmpfs",
            "-o",
            "size=24m",
            "tmpfs",
            dir.path().to_str().unwrap(),
        ],
    );
    struct Unmount<'a>(&'a std::path::Path);
    impl Drop for Unmount<'_> {
        fn drop(&mut self) {
            umount(self.0);
        }
    }
    let _u = Unmount(dir.path());
    let file = dir.path().join("fake.img");
    std::fs::File::create(&file)
        .unwrap()
        .set_len(64 * MIB)
        .unwrap();
    let out = sh("losetup", &["--find", "--show", file.to_str().unwrap()]);
    let dev = stdout_of(&out).trim().to_string();
    struct Detach(String);
    impl Drop for Detach {
        fn drop(&mut self) {
            let _ = std::process::Command::new("losetup")
                .env("PATH", path_with_sbin())
                .args(["-d", &self.0])
                .status();
        }
    }
    let _d = Detach(dev.clone());
    let (doc, code) = blkscope_json(&["verify", &dev, "--capacity", "full", "--json"]);
    assert_eq!(code, 6, "{doc}");
    let cap = &doc["capacity"];
    assert_eq!(cap["advertised_bytes"], 64 * MIB, "{cap}");
    assert_eq!(cap["how"], "io_error", "{cap}");
    let usable = cap["usable_bytes"].as_u64().unwrap() as f64;
    let real = 24.0 * MIB as f64;
    assert!(
        (usable - real).abs() / real < 0.01,
        "usable {usable} against the tmpfs's {real}: {cap}"
    );
    let first = &doc["verify"]["bad_ranges"][0];
    assert_eq!(first["kind"], "io_error", "{doc}");
    assert_eq!(
        first["offset"].as_u64().unwrap() as f64,
        usable,
        "the map starts there"
    );
}

/// A healthy device of 100M, checked `--capacity sampled`: everything comes back. The last two
/// of its blocks were written over each other, and it said "56 bad: 28672 bytes at offset
/// 0x63f0000 (99.9M): corrupt" and exited 6.
#[test]
fn a_sampled_capacity_check_of_a_healthy_device_finds_nothing_bad() {
    if !require(true, &["losetup"]) {
        return;
    }
    let lo = Loop::new(100 * MIB, None, false);
    let (doc, code) = blkscope_json(&[
        "verify",
        lo.dev(),
        "--capacity",
        "sampled",
        "--confirm",
        &lo.name,
        "--json",
    ]);
    println!("{}", doc["verify"]);
    assert_eq!(code, 0, "{doc}");
    assert_eq!(doc["capacity"]["how"], "ok", "{doc}");
    assert_eq!(
        doc["verify"]["bad_ranges"]
            .as_array()
            .map_or(0, |a| a.len()),
        0,
        "{doc}"
    );
    assert!(
        doc["verify"]["sectors_checked"].as_u64().unwrap() > 100_000,
        "{doc}"
    );
}

#[test]
fn a_suite_with_verify_reads_back_every_write_test() {
    let dir = tempfile::tempdir().unwrap();
    let (doc, code) = blkscope_json(&[
        "suite",
        "cache-trap",
        dir.path().to_str().unwrap(),
        "--repeat",
        "1",
        "--verify",
        "--no-save",
        "--json",
    ]);
    assert_eq!(code, 0, "{doc}");
    let mut checked = 0;
    for t in doc["tests"].as_array().unwrap() {
        let writes = t["job"]["op"] == "write" || t["job"]["op"] == "randwrite";
        let v = &t["result"]["verify"];
        assert_eq!(v.is_object(), writes, "{}: {v}", t["name"]);
        if writes {
            assert_eq!(v["sectors_bad"], 0, "{}: {v}", t["name"]);
            assert!(v["sectors_checked"].as_u64().unwrap() > 0);
            checked += 1;
        }
    }
    assert!(checked >= 2, "{doc}");
}
