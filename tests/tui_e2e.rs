//! The real binary in tmux at 80x24, as a person would use it: the scratch file is selected,
//! the runtime is shortened in the form, `r` runs a sequential write, the chart and then the
//! results (with dd and fio lines) appear, `q` quits; the terminal is restored (alternate screen
//! off, cursor shown) and the scratch file is gone. Also: SIGTERM and SIGHUP mid-test.

mod common;

use std::time::{Duration, Instant};

use common::*;

fn scratch_files(dir: &std::path::Path) -> usize {
    std::fs::read_dir(dir).unwrap().count()
}

#[test]
fn run_a_sequential_write_and_quit() {
    if !require(false, &["tmux", "pgrep"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let t = Tmux::start(dir.path(), "NO_COLOR=1", "");
    let s = t.wait_for(&["Devices", "Tests", "scratch file"], 20);
    assert!(
        s.contains(">scratch file"),
        "the scratch file is selected:\n{s}"
    );
    assert!(
        s.contains(">Seq write"),
        "sequential write is selected:\n{s}"
    );
    // Shorten the runtime to 2 s in the form: e, down twice, Enter, clear, type, Enter, Esc.
    t.keys(&["e", "Down", "Down", "Enter"]);
    t.keys(&[
        "BSpace", "BSpace", "BSpace", "BSpace", "BSpace", "2", "s", "Enter",
    ]);
    let s = t.wait_for(&["runtime   2s"], 5);
    assert!(!s.contains("refused"), "{s}");
    t.keys(&["Escape", "r"]);
    let s = t.wait_for(&["Seq write on scratch file", "IOPS", "ETA"], 10);
    assert!(
        s.contains("iostat -x"),
        "the diskstats panel is beside the chart:\n{s}"
    );
    assert_eq!(
        scratch_files(dir.path()),
        1,
        "the test's file exists while it runs"
    );
    let s = t.wait_for(&["Results", "dd:", "fio:", "saved as"], 20);
    assert!(s.contains("Seq write"), "{s}");
    assert!(s.contains("saved as"), "the run was saved:\n{s}");
    let saved = std::fs::read_dir(test_home().join("data/blkscope/runs"))
        .unwrap()
        .count();
    assert!(saved >= 1);
    t.keys(&["q"]);
    let s = t.wait_for(&["BLKSCOPE-EXITED"], 10);
    assert!(!s.contains("Devices"), "the main screen is back:\n{s}");
    assert_eq!(t.display("#{alternate_on}"), "0", "alternate screen left");
    assert_eq!(t.display("#{cursor_flag}"), "1", "cursor shown");
    assert_eq!(scratch_files(dir.path()), 0, "scratch file removed");
}

fn killed_mid_test(sig: i32) {
    let dir = tempfile::tempdir().unwrap();
    let t = Tmux::start(dir.path(), "", "");
    t.wait_for(&["Devices"], 20);
    t.keys(&["r"]);
    t.wait_for(&["ETA"], 10);
    assert_eq!(scratch_files(dir.path()), 1);
    let pid = t.pid();
    let sent = Instant::now();
    // SAFETY: signalling the blkscope process this test started.
    unsafe { libc::kill(pid, sig) };
    t.wait_for(&["BLKSCOPE-EXITED"], 5);
    let took = sent.elapsed();
    assert_eq!(t.display("#{alternate_on}"), "0", "alternate screen left");
    assert_eq!(t.display("#{cursor_flag}"), "1", "cursor shown");
    assert_eq!(scratch_files(dir.path()), 0, "scratch file removed");
    // The goal is 200 ms; polling tmux adds its own delay, so allow some slack here.
    assert!(took < Duration::from_secs(2), "took {took:?}");
}

#[test]
fn sigterm_mid_test_restores_and_cleans_up() {
    if !require(false, &["tmux", "pgrep"]) {
        return;
    }
    killed_mid_test(libc::SIGTERM);
}

#[test]
fn sighup_mid_test_restores_and_cleans_up() {
    if !require(false, &["tmux", "pgrep"]) {
        return;
    }
    killed_mid_test(libc::SIGHUP);
}

#[test]
fn a_panic_mid_test_stops_the_engine_and_restores_the_terminal() {
    if !require(false, &["tmux", "pgrep"]) {
        return;
    }
    // The panic key exists in debug builds only (as `cargo test` builds); a release build of
    // the tests (`cargo test --release`) has nothing to press.
    if !cfg!(debug_assertions) {
        eprintln!("SKIPPED: BLKSCOPE_DEBUG_PANIC_KEY is compiled into debug builds only");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let t = Tmux::start(
        dir.path(),
        "RUST_BACKTRACE=0 BLKSCOPE_DEBUG_PANIC_KEY=P",
        "",
    );
    t.wait_for(&["Devices"], 20);
    t.keys(&["r"]);
    t.wait_for(&["ETA"], 10);
    assert_eq!(scratch_files(dir.path()), 1);
    t.keys(&["P"]);
    let s = t.wait_for(&["BLKSCOPE-EXITED"], 5);
    assert!(
        s.contains("BLKSCOPE_DEBUG_PANIC_KEY pressed"),
        "the panic is reported:\n{s}"
    );
    assert_eq!(t.display("#{alternate_on}"), "0", "alternate screen left");
    assert_eq!(t.display("#{cursor_flag}"), "1", "cursor shown");
    assert_eq!(scratch_files(dir.path()), 0, "scratch file removed");
}

#[test]
fn stdout_not_a_terminal_prints_the_list() {
    let out = bin().output().unwrap();
    assert!(out.status.success());
    let s = stdout_of(&out);
    assert!(s.starts_with("NAME"), "{s}");
    assert!(
        s.contains("not a terminal") && s.contains("blkscope run"),
        "{s}"
    );
}

/// A suite run from the TUI is saved like one from the command line, and its rows say so.
#[test]
fn a_suite_run_from_the_tui_is_saved() {
    if !require(false, &["tmux", "pgrep"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let suites = home.path().join("config/blkscope/suites");
    std::fs::create_dir_all(&suites).unwrap();
    std::fs::write(
        suites.join("quick.toml"),
        "name = \"quick\"\ntitle = \"Quick\"\nabout = \"one short write\"\nfound = \"-\"\n\
         repeat = 1\n[[test]]\nname = \"w\"\nop = \"write\"\nbs = \"1M\"\nsize = \"8M\"\n",
    )
    .unwrap();
    let env = format!(
        "NO_COLOR=1 XDG_CONFIG_HOME={0}/config XDG_DATA_HOME={0}/data",
        home.path().display()
    );
    let t = Tmux::start(dir.path(), &env, "");
    t.wait_for(&["Devices", "Tests"], 20);
    // The user's suite is the last entry of the tests pane.
    t.keys(&["Tab"]);
    for _ in 0..30 {
        t.keys(&["j"]);
    }
    let s = t.wait_for(&[">suite quick"], 5);
    assert!(s.contains(">suite quick"), "the suite is selected:\n{s}");
    t.keys(&["r"]);
    let s = t.wait_for(&["Results", "quick/w"], 20);
    assert!(
        s.contains("saved as"),
        "the suite's row says it was saved:\n{s}"
    );
    let runs: Vec<_> = std::fs::read_dir(home.path().join("data/blkscope/runs"))
        .unwrap()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect();
    assert_eq!(runs.len(), 1, "one saved run: {runs:?}");
    let v: serde_json::Value = serde_json::from_str(&runs[0]).unwrap();
    assert_eq!(v["kind"], "suite", "{v}");
    assert_eq!(v["name"], "quick", "{v}");
    assert_eq!(v["tests"][0]["name"], "w", "{v}");
    t.keys(&["q"]);
    t.wait_for(&["BLKSCOPE-EXITED"], 10);
}

/// A resize during a run keeps the run and redraws at the new size; below 64x18 it says so,
/// and it comes back when the window grows again.
#[test]
fn a_resize_mid_run_keeps_the_run() {
    if !require(false, &["tmux", "pgrep"]) {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let t = Tmux::start(dir.path(), "NO_COLOR=1", "");
    t.wait_for(&["Devices"], 20);
    t.keys(&["r"]);
    t.wait_for(&["ETA"], 10);
    t.resize(120, 40);
    let widest = |s: &str| {
        s.lines()
            .map(|l| l.trim_end().chars().count())
            .max()
            .unwrap_or(0)
    };
    let mut s = String::new();
    wait_until(10, "a redraw at 120 columns", || {
        s = t.screen();
        widest(&s) > 100 && s.contains("ETA")
    });
    t.resize(50, 12);
    let s = t.wait_for(&["too small"], 10);
    assert!(s.contains("50x12"), "{s}");
    t.resize(80, 24);
    let s = t.wait_for(&["ETA", "Seq write on scratch file"], 10);
    assert!(!s.contains("too small"), "{s}");
    assert_eq!(scratch_files(dir.path()), 1, "the run went on");
    t.keys(&["Escape"]);
    t.wait_for(&["Results"], 10);
    t.keys(&["q"]);
    t.wait_for(&["BLKSCOPE-EXITED"], 10);
    assert_eq!(scratch_files(dir.path()), 0);
}

/// The TUI asks the terminal for mouse reports (tmux's mouse flags say so), not with
/// --no-mouse, and turns them off again on the way out.
#[test]
fn mouse_capture_and_no_mouse() {
    if !require(false, &["tmux", "pgrep"]) {
        return;
    }
    for (args, want) in [("", "1"), ("--no-mouse", "0")] {
        let dir = tempfile::tempdir().unwrap();
        let t = Tmux::start(dir.path(), "", args);
        t.wait_for(&["Devices"], 20);
        assert_eq!(
            t.display("#{mouse_any_flag}"),
            want,
            "mouse tracking with {args:?}"
        );
        t.keys(&["q"]);
        t.wait_for(&["BLKSCOPE-EXITED"], 10);
        assert_eq!(
            t.display("#{mouse_any_flag}"),
            "0",
            "tracking off after quitting"
        );
    }
}
