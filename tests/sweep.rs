//! Sweeps: `blkscope sweep TARGET --qd LIST | --bs LIST` runs the test at each value, every
//! test object carries its job with the swept value, and the result names the knee (or says
//! there is none); bad lists are one line and exit 2.

mod common;

use common::*;

#[test]
fn a_queue_depth_sweep_names_its_points_and_knee() {
    let dir = tempfile::tempdir().unwrap();
    let (doc, code) = blkscope_json(&[
        "sweep",
        dir.path().to_str().unwrap(),
        "--qd",
        "1,4,16",
        "--runtime",
        "300ms",
        "--size",
        "16M",
        "--no-save",
        "--json",
    ]);
    assert_eq!(code, 0, "{doc}");
    let qds: Vec<u64> = doc["tests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["job"]["iodepth"].as_u64().unwrap())
        .collect();
    assert_eq!(qds, [1, 4, 16], "{doc}");
    let s = &doc["sweep"][0];
    assert_eq!(s["param"], "iodepth", "{s}");
    assert_eq!(s["op"], "randread", "{s}");
    let pts = s["points"].as_array().unwrap();
    assert_eq!(pts.len(), 3);
    assert!(pts.iter().all(|p| p["iops"].as_f64().unwrap() > 0.0), "{s}");
    // The knee is a point of the sweep, or null with a reason in the human form.
    if !s["knee"].is_null() {
        let v = s["knee"]["value"].as_u64().unwrap();
        assert!(qds.contains(&v), "{s}");
    }
    let out = blkscope(&[
        "sweep",
        dir.path().to_str().unwrap(),
        "--bs",
        "4k,64k",
        "--runtime",
        "200ms",
        "--size",
        "16M",
        "--no-save",
    ]);
    let text = stdout_of(&out);
    assert!(out.status.success(), "{out:?}");
    assert!(text.contains("read by bs:"), "{text}");
    assert!(text.contains("knee"), "{text}");
}

#[test]
fn bad_sweep_lists_are_one_line_and_exit_2() {
    for args in [
        &["sweep", "/tmp", "--qd", "1"][..],
        &["sweep", "/tmp", "--qd", "1,x"],
        &["sweep", "/tmp", "--bs", "4q,8k"],
        &["sweep", "/tmp"],
    ] {
        let out = blkscope(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        assert!(out.stdout.is_empty());
    }
}

/// A point (or a suite's test) that cannot run is refused before the first one runs (or
/// writes): one line naming it, exit 2, nothing on stdout. On a block device the device's own
/// limits are checked too (here a fixture's 512-byte sectors and its 512M sda1; the device
/// itself is never opened).
#[test]
fn a_bad_point_is_refused_before_any_point_runs() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = format!(
        "{}/tests/fixtures/lvm-on-partition",
        env!("CARGO_MANIFEST_DIR")
    );
    let d = dir.path().to_str().unwrap();
    for (args, needle) in [
        (
            &["sweep", d, "--qd", "1,0", "--runtime", "200ms", "--no-save"][..],
            "QD0: iodepth 0",
        ),
        (
            &[
                "sweep",
                d,
                "--bs",
                "4k,2G",
                "--runtime",
                "200ms",
                "--no-save",
            ],
            "bs 2G: bs 2G is too large",
        ),
        (
            &[
                "--root",
                &fixture,
                "sweep",
                "/dev/sdb",
                "--bs",
                "4k,256",
                "--runtime",
                "1s",
            ],
            "bs 256B: with direct I/O, bs must be a multiple of the logical block size 512 bytes: 256 bytes is not; use --bs 512",
        ),
        // A problem every point shares is said once, naming them all (sda1 has 512M).
        (
            &[
                "--root",
                &fixture,
                "sweep",
                "/dev/sda1",
                "--qd",
                "1,2",
                "--size",
                "1G",
            ],
            "QD1, QD2: size 1G does not fit: the target has 512M from offset 0; use --size 512M",
        ),
        // A suite's sizes are its own: it says how large a device it needs, once.
        (
            &[
                "--root",
                &fixture,
                "suite",
                "dd-classic",
                "/dev/sda1",
                "--no-save",
            ],
            "needs 1G of the device and sda1 has 512M: run the suite on a device of at least \
             1G (`blkscope lab --size 1G`",
        ),
    ] {
        let out = blkscope(args);
        let err = String::from_utf8_lossy(&out.stderr);
        println!("{args:?}: exit {:?}, stderr {err}", out.status.code());
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}: {out:?}");
        assert_eq!(
            err.lines().count(),
            1,
            "{args:?}: nothing ran before the refusal: {err}"
        );
        assert!(err.contains(needle), "{args:?}: {err}");
    }
    // Nothing was laid out in the directory either.
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

/// `--qd 1,2 --bs 8k` sweeps depths at 8K (as `run` and fio spell the block size; it was
/// refused: "--qd cannot be used with --bs"), and `--bs 4k,8k --qd 2` sizes at QD2. Both
/// lists, or no list, are one line and exit 2.
#[test]
fn a_single_value_of_the_other_option_is_what_stays_fixed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let common = ["--runtime", "200ms", "--size", "16M", "--no-save", "--json"];
    for (lists, key, want) in [
        (["--qd", "1,2", "--bs", "8k"], "bs", 8192),
        (["--bs", "4k,8k", "--qd", "2"], "iodepth", 2),
    ] {
        let mut args = vec!["sweep", d];
        args.extend(lists);
        args.extend(common);
        let (doc, code) = blkscope_json(&args);
        assert_eq!(code, 0, "{args:?}: {doc}");
        let got: Vec<u64> = doc["tests"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["job"][key].as_u64().unwrap())
            .collect();
        println!("{lists:?}: {key} = {got:?}");
        assert_eq!(got, [want, want], "{doc}");
    }
    for (args, needle) in [
        (
            &["sweep", d, "--qd", "1,2", "--bs", "4k,8k"][..],
            "a sweep varies one thing",
        ),
        (&["sweep", d, "--qd", "2", "--bs", "4k"], "is one point"),
    ] {
        let out = blkscope(args);
        let err = String::from_utf8_lossy(&out.stderr);
        println!("{args:?}: {err}");
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(needle) && err.lines().count() == 1, "{err}");
        assert!(out.stdout.is_empty());
    }
}
