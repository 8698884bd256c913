//! Targets a user can get wrong: each gives one line on stderr naming the problem and the fix,
//! a non-zero exit, nothing on stdout, and no panic. File targets are always clear.

mod common;

use common::*;

/// Runs blkscope, expects exit `code` with one line on stderr holding `needle`; that line.
fn one_line_error(args: &[&str], code: i32, needle: &str) -> String {
    let out = blkscope(args);
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(code), "{args:?}: {err}");
    assert!(out.stdout.is_empty(), "{args:?} wrote to stdout");
    assert_eq!(err.lines().count(), 1, "{args:?}: one line, got: {err}");
    assert!(err.contains(needle), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

#[test]
fn nonexistent_path() {
    one_line_error(&["check", "/nonexistent/blkscope-disk"], 2, "no such file");
}

#[test]
fn a_saved_run_named_by_a_path_that_is_not_there() {
    // It used to look the path up among the saved runs' ids: "no saved run '/nonexistent/...'
    // in ~/.local/share/blkscope/runs".
    one_line_error(
        &["report", "/nonexistent/blkscope-run.json"],
        2,
        "no such file /nonexistent/blkscope-run.json",
    );
    one_line_error(
        &["compare", "./nope.json", "last"],
        2,
        "no such file ./nope.json",
    );
    one_line_error(&["report", "/tmp"], 2, "/tmp is not a file");
}

#[test]
fn a_device_name_that_is_not_there_is_a_usage_error() {
    // Exit 2, as for a path that is not there (it was 1, "failed at run time").
    for cmd in ["stat", "doctor"] {
        one_line_error(
            &[cmd, "nosuchdisk-blkscope"],
            2,
            "is not a block device blkscope can see",
        );
    }
}

#[test]
fn dev_null_is_a_character_device() {
    one_line_error(&["check", "/dev/null"], 2, "character device");
    one_line_error(&["check", "/dev/null", "--json"], 2, "block device");
}

#[test]
fn a_fifo_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("pipe");
    sh("mkfifo", &[fifo.to_str().unwrap()]);
    one_line_error(
        &["check", fifo.to_str().unwrap()],
        2,
        "neither a block device",
    );
}

#[test]
fn usage_errors_keep_clap_status_2() {
    let out = blkscope(&["check"]);
    assert_eq!(out.status.code(), Some(2));
    let out = blkscope(&["frobnicate"]);
    assert_eq!(out.status.code(), Some(2));
    // It printed nothing and exited 0.
    let out = blkscope(&["stat", "--count", "0"]);
    let err = String::from_utf8_lossy(&out.stderr);
    println!("stat --count 0: {:?} {err}", out.status.code());
    assert_eq!(out.status.code(), Some(2));
    assert!(err.contains("0 reports nothing"), "{err}");
    assert!(out.stdout.is_empty());
    // A negative size is said as one (clap's own tip would be to pass it after `--`, which
    // makes it the target).
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    for (opt, v) in [("--size", "-5"), ("--offset", "-1M"), ("--bs", "-4k")] {
        let out = blkscope(&["run", d, opt, v]);
        let err = String::from_utf8_lossy(&out.stderr);
        println!("{opt} {v}: {:?} {err}", out.status.code());
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains(&format!("'{v}' is not a size")), "{err}");
        assert!(!err.contains("tip:"), "{err}");
    }
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        0,
        "nothing written"
    );
}

#[test]
fn directory_is_a_clear_file_target() {
    let dir = tempfile::tempdir().unwrap();
    let (r, code) = blkscope_json(&["check", dir.path().to_str().unwrap(), "--json"]);
    assert_eq!(code, 0);
    assert_eq!(r["write_safety"], "clear");
    assert_eq!(r["target_kind"], "file");
    assert_eq!(reason_codes(&r), ["file_target"]);
}

#[test]
fn existing_file_is_clear_but_protected() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("data.bin");
    std::fs::write(&f, b"keep me").unwrap();
    let (r, code) = blkscope_json(&["check", f.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0);
    assert_eq!(r["write_safety"], "clear");
    assert_eq!(reason_codes(&r), ["existing_file"]);
    assert!(
        r["reasons"][0]["detail"]
            .as_str()
            .unwrap()
            .contains("--force")
    );
    // The text's last line says --force too (it said "A write test may run.", as for a
    // directory).
    let out = blkscope(&["check", f.to_str().unwrap()]);
    let text = stdout_of(&out);
    println!("{text}");
    assert_eq!(
        text.lines().last(),
        Some("A write test may run with --force (it overwrites the file).")
    );
    let out = blkscope(&["check", dir.path().to_str().unwrap()]);
    assert_eq!(
        stdout_of(&out).lines().last(),
        Some("A write test may run.")
    );
    // check never writes.
    assert_eq!(std::fs::read(&f).unwrap(), b"keep me");
}

#[test]
fn unreadable_directory_as_non_root() {
    if !require(true, &["setpriv"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let locked = dir.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(
        dir.path(),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    let out = blkscope_as_nobody(&["check", locked.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("permission denied"), "{err}");
}

#[test]
fn no_subcommand_prints_the_list_and_how_to_go_on() {
    let root = format!("{}/tests/fixtures/md-raid1", env!("CARGO_MANIFEST_DIR"));
    let out = blkscope(&["--root", &root]);
    assert!(out.status.success());
    let text = stdout_of(&out);
    assert!(text.contains("md0"));
    assert!(text.contains("blkscope list --json"));
}

#[test]
fn the_tui_over_hosts_without_a_terminal_says_what_to_run_instead() {
    // stdout is a pipe here: no TUI, and no ssh started either.
    one_line_error(
        &["--host", "127.0.0.9"],
        2,
        "needs a terminal; headless, give a command",
    );
}

/// `blkscope explain dd-classic` (a few KiB of output, no device) writing into `stdout`: its
/// exit status and stderr.
fn explain_into(stdout: std::process::Stdio) -> (Option<i32>, String) {
    let out = bin()
        .args(["explain", "dd-classic"])
        .stdout(stdout)
        .output()
        .expect("run blkscope");
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    println!("status {:?}, stderr: {err:?}", out.status.code());
    (out.status.code(), err)
}

#[test]
fn a_full_disk_under_stdout_is_said_once() {
    let full = std::fs::OpenOptions::new()
        .write(true)
        .open("/dev/full")
        .expect("/dev/full");
    let (code, err) = explain_into(full.into());
    assert_eq!(code, Some(1));
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    // It said the cause twice: `<stdout>: No space left on device (os error 28): No space
    // left on device (os error 28)`.
    assert_eq!(err.matches("No space left on device").count(), 1, "{err}");
}

#[test]
fn a_reader_that_stopped_reading_gets_no_message_and_status_141() {
    let (reader, writer) = std::io::pipe().expect("pipe");
    // Closed before blkscope writes a byte, so every write fails with EPIPE.
    drop(reader);
    let (code, err) = explain_into(writer.into());
    assert_eq!(code, Some(141));
    assert!(err.is_empty(), "no message, got: {err}");
}

#[test]
fn a_typo_is_said_before_the_device_name_is_asked_for() {
    // A fixture's sdf (partitioned: confirm); the device itself is never opened.
    let fixture = format!("{}/tests/fixtures/misaligned", env!("CARGO_MANIFEST_DIR"));
    let on_sdf = |job: &[&str], code, needle| {
        let mut args = vec!["--root", &fixture, "run", "/dev/sdf"];
        args.extend_from_slice(job);
        one_line_error(&args, code, needle);
    };
    // It asked for `--confirm sdf` first (exit 3), and only then said the typo.
    on_sdf(
        &["--op", "randrw", "--rwmixread", "150"],
        2,
        "rwmixread 150 is not a percentage",
    );
    on_sdf(
        &["--op", "write", "--bs", "100"],
        2,
        "100 bytes is not; use --bs 512",
    );
    // Without one, the name is asked for.
    on_sdf(
        &["--op", "randwrite", "--size", "1M"],
        3,
        "add --confirm sdf",
    );
    // An existing file: the typo before --force.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("f");
    std::fs::write(&file, vec![0u8; 1 << 20]).unwrap();
    let f = file.to_str().unwrap();
    one_line_error(
        &["run", f, "--op", "randrw", "--rwmixread", "150"],
        2,
        "rwmixread 150 is not a percentage",
    );
    one_line_error(&["run", f, "--op", "write"], 2, "add --force");
}

/// A directory whose file system has less free than blkscope leaves (64M) has no room for any
/// scratch file: the fix is another directory, not a --size or --offset (it used to say "use
/// an --offset well below 0B"). A 16M tmpfs of the test's own.
#[test]
fn a_directory_with_no_room_at_all_says_so() {
    if !require(true, &["mount"]) {
        return;
    }
    let fs = Tmpfs::new("16m");
    let d = fs.path_str();
    for args in [
        vec!["run", d, "--size", "1M", "--no-save"],
        vec!["run", d, "--offset", "1M", "--size", "1M", "--no-save"],
    ] {
        let err = one_line_error(&args, 2, "there is no room for a scratch file here");
        println!("{args:?}: {err}");
        assert!(!err.contains("--offset well below"), "{err}");
        assert!(!err.contains("use --size"), "{err}");
        let left: Vec<_> = std::fs::read_dir(fs.dir.path()).unwrap().collect();
        assert!(left.is_empty(), "nothing written: {left:?}");
    }
}

/// A scratch file larger than the directory's room is refused in one line, before anything
/// is created, with a fix that works: a --size in whole MiB that fits (rounded down), or,
/// when --offset alone is past the room, a smaller --offset (no --size could fit then).
#[test]
fn a_scratch_file_too_large_for_its_directory_names_the_fix() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    for (args, fix) in [
        (vec!["--size", "900T"], "use --size "),
        (
            vec!["--offset", "900T", "--size", "1M"],
            "use an --offset well below ",
        ),
    ] {
        let mut all = vec!["run", d, "--no-save"];
        all.extend(&args);
        let err = one_line_error(&all, 2, "scratch file does not fit");
        println!("{args:?}: {err}");
        assert!(err.contains(fix), "{err}");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert!(left.is_empty(), "nothing written: {left:?}");
        if fix == "use --size " {
            // Whole MiB, so that the figure is not rounded up past the room.
            let figure = err.split(fix).nth(1).unwrap().split(' ').next().unwrap();
            let mib = figure.strip_suffix('M').and_then(|m| m.parse::<u64>().ok());
            assert!(mib.is_some_and(|m| m > 0), "{figure} in {err}");
        }
    }
}

/// Options that only mean something with another are refused without it, as a user who gave
/// them meant something the run would not have done: `--rwmixread` outside `--op randrw` (fio
/// ignores it there) and `--max-errors` without `--verify`.
#[test]
fn options_that_do_nothing_without_another_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().to_str().unwrap();
    let err = one_line_error(
        &[
            "run",
            d,
            "--op",
            "randread",
            "--rwmixread",
            "70",
            "--no-save",
        ],
        2,
        "--rwmixread 70 sets the share of reads in --op randrw; --op randread does not mix",
    );
    println!("{err}");
    let out = blkscope(&["run", d, "--op", "read", "--max-errors", "3", "--no-save"]);
    let err = String::from_utf8_lossy(&out.stderr);
    println!("{err}");
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("--verify"), "{err}");
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert!(left.is_empty(), "nothing written: {left:?}");
}

/// `blkscope run /dev/$DISK` with DISK unset names /dev/: a test there would write its file
/// into the device directory (devtmpfs, RAM). Refused, as every directory or file on devtmpfs,
/// sysfs and procfs is, in one line that says what was probably meant; nothing is written.
#[test]
fn the_device_directory_and_the_kernels_file_systems_are_not_targets() {
    let scratch_in_dev = || {
        std::fs::read_dir("/dev")
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().starts_with(".blkscope-"))
            .count()
    };
    let before = scratch_in_dev();
    for cmd in ["check", "run"] {
        one_line_error(&[cmd, "/dev/"], 2, "/dev/ is the device directory");
        one_line_error(&[cmd, "/dev"], 2, "an empty variable?");
    }
    one_line_error(&["suite", "dd-classic", "/dev/"], 2, "name a device in it");
    one_line_error(&["sweep", "/dev/", "--qd", "1,2"], 2, "name a device in it");
    // A directory of device names (by-id where udev made it, else another on devtmpfs).
    let sub = ["/dev/disk/by-id/", "/dev/mapper/", "/dev/cpu/", "/dev/net/"]
        .into_iter()
        .find(|d| {
            let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
            std::path::Path::new(d).is_dir()
                && !mounts
                    .lines()
                    .any(|l| l.split(' ').nth(4) == Some(d.trim_end_matches('/')))
        });
    match sub {
        Some(d) => {
            let e = one_line_error(&["check", d], 2, "a directory of device names");
            assert!(e.contains("name a device in it"), "{e}");
        }
        None => println!("no subdirectory of /dev on devtmpfs here; /dev/ itself was checked"),
    }
    let e = one_line_error(&["run", "/sys/block", "--size", "1M"], 2, "on sysfs");
    assert!(e.contains("not a disk"), "{e}");
    one_line_error(&["run", "/proc/self", "--op", "read"], 2, "on proc");
    one_line_error(&["check", "/proc/cpuinfo"], 2, "a file on proc");
    assert_eq!(scratch_in_dev(), before, "nothing was written into /dev");
    // /dev/shm is a tmpfs: a directory like /tmp, allowed (the run says it is RAM).
    let out = blkscope(&["check", "/dev/shm", "--json"]);
    println!("check /dev/shm: {}", stdout_of(&out));
    assert!(out.status.success(), "{out:?}");
}
