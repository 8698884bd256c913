//! The TUI's views drawn into ratatui's TestBackend on fixture device trees, at 80x24 and
//! 120x40, compared with insta snapshots (tests/snapshots). Numbers that would change from run to
//! run come from fixed synthetic samples and results, so nothing needs filtering.

mod common;

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;

use blkscope::SysRoot;
use blkscope::device::{DiscoverOptions, discover};
use blkscope::engine::result::Sample;
use blkscope::engine::{self, Job, TargetSpec};
use blkscope::session;
use blkscope::stats::IostatX;
use blkscope::ui::Look;
use blkscope::ui::app::{Action, App, Overlay, Screen};
use blkscope::ui::render::draw;

/// A doctor's finding with these words.
fn found(
    kind: blkscope::doctor::Kind,
    severity: blkscope::doctor::Severity,
    words: &str,
) -> blkscope::doctor::Finding {
    // Made up: words without the evidence they would say (a real finding's numbers are checked
    // against its evidence when it is made).
    blkscope::doctor::Finding {
        kind,
        device: None,
        severity: Some(severity),
        message: words.to_string(),
        numbers: Default::default(),
    }
}

const COLOR: Look = Look {
    color: true,
    ascii: false,
};
const ASCII: Look = Look {
    color: false,
    ascii: true,
};

fn app(fixture: &str) -> App {
    let root = SysRoot::at(format!(
        "{}/tests/fixtures/{fixture}",
        env!("CARGO_MANIFEST_DIR")
    ));
    let tree = discover(&root, &DiscoverOptions::default()).unwrap();
    let mut a = App::new(tree, PathBuf::from("/srv/scratch"));
    a.watched = vec!["sda".into()];
    a.diskstats = vec![IostatX {
        disk_device: "sda".into(),
        r_s: 12.0,
        w_s: 3480.0,
        rkb_s: 48.0,
        wkb_s: 445_440.0,
        w_await: 0.43,
        aqu_sz: 1.49,
        util: 70.04,
        ..Default::default()
    }];
    a
}

/// A real run of a 1 MiB write on a scratch file: a result to fix figures on.
fn tiny_run() -> (blkscope::engine::TargetInfo, blkscope::result::RunResult) {
    let dir = tempfile::tempdir().unwrap();
    let job = Job {
        size: Some(engine::job::SizeSpec::Bytes(1 << 20)),
        ..Job::default()
    };
    let spec = TargetSpec {
        path: dir.path().to_str().unwrap().into(),
        ..Default::default()
    };
    session::run_job(
        &SysRoot::live(),
        &spec,
        &job,
        Arc::new(AtomicBool::new(false)),
        |_| {},
    )
    .unwrap()
}

fn key(c: KeyCode) -> KeyEvent {
    KeyEvent::new(c, KeyModifiers::NONE)
}

fn press(a: &mut App, keys: &[KeyCode]) {
    for k in keys {
        a.on_key(key(*k));
    }
}

fn screen(a: &App, w: u16, h: u16, look: Look) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| draw(f, a, look)).unwrap();
    t.backend().to_string()
}

/// Every character on the screen is ASCII (what a console without a Unicode font can show).
fn assert_ascii_only(name: &str, s: &str) {
    for (n, line) in s.lines().enumerate() {
        if let Some(c) = line.chars().find(|c| !c.is_ascii()) {
            panic!(
                "{name}: {c:?} (U+{:04X}) on line {n}: {line}\n{s}",
                c as u32
            );
        }
    }
}

/// The view at 80x24 and 120x40 in colour, and at 80x24 in ASCII (checked ASCII-only).
fn both(name: &str, a: &App) {
    insta::assert_snapshot!(format!("{name}_80x24"), screen(a, 80, 24, COLOR));
    insta::assert_snapshot!(format!("{name}_120x40"), screen(a, 120, 40, COLOR));
    let s = screen(a, 80, 24, ASCII);
    assert_ascii_only(name, &s);
    insta::assert_snapshot!(format!("ascii_{name}_80x24"), s);
}

fn select(a: &mut App, device: &str) {
    let i = a
        .targets
        .iter()
        .position(|t| t.device.as_deref() == Some(device))
        .unwrap();
    for _ in 0..i {
        a.on_key(key(KeyCode::Down));
    }
    assert_eq!(a.target().device.as_deref(), Some(device));
}

fn samples(n: usize) -> Vec<Sample> {
    (1..=n)
        .map(|i| {
            let mbps = 400.0 + (i % 5) as f64 * 20.0;
            Sample {
                elapsed_s: i as f64 * 0.5,
                interval_s: 0.5,
                bytes: (mbps * 0.5e6) as u64,
                ios: (mbps * 0.5) as u64,
                bytes_per_sec: mbps * 1e6,
                iops: mbps,
                p50_ns: 2_400_000,
                p99_ns: 4_100_000,
                total_bytes: (i as u64) * 210_000_000,
                progress: Some(i as f64 * 0.05),
                ramp: false,
                read_bytes: 0,
                write_bytes: (mbps * 0.5e6) as u64,
                // Most I/Os near 2.4 ms (bucket 13), a tail at 4 ms and, later, at 40 ms.
                lat_buckets: {
                    let mut b = vec![0u32; blkscope::engine::result::LAT_BUCKETS];
                    let ios = (mbps * 0.5) as u32;
                    b[13] = ios * 9 / 10;
                    b[14] = ios - b[13] - u32::from(i > 4);
                    b[18] = u32::from(i > 4);
                    b
                },
                q2d_p50_ns: None,
                d2c_p50_ns: None,
                others_traced: Vec::new(),
                split_why: None,
                steps: None,
                stopping: None,
                waiting: None,
            }
        })
        .collect()
}

#[test]
fn device_list() {
    both("device_list", &app("lvm-on-partition"));
}

#[test]
fn properties_of_a_device() {
    let mut a = app("nvme-namespaces");
    select(&mut a, "nvme0n1");
    both("properties", &a);
}

#[test]
fn form_with_an_invalid_value() {
    let mut a = app("lvm-on-partition");
    // e, to the iodepth field, type 0, Enter: refused with the reason, value unchanged.
    press(
        &mut a,
        &[
            KeyCode::Char('e'),
            KeyCode::Down,
            KeyCode::Down,
            KeyCode::Down,
            KeyCode::Enter,
        ],
    );
    press(
        &mut a,
        &[KeyCode::Backspace, KeyCode::Char('0'), KeyCode::Enter],
    );
    match &a.overlay {
        Overlay::Form(f) => assert!(f.error.as_deref().unwrap().contains("1 to 4096")),
        o => panic!("{o:?}"),
    }
    assert_eq!(a.test().job.iodepth, 1);
    both("form_invalid", &a);
}

#[test]
fn confirm_dialog() {
    let mut a = app("nvme-namespaces");
    select(&mut a, "nvme0n2");
    assert_eq!(a.on_key(key(KeyCode::Char('r'))), Action::None);
    press(&mut a, &[KeyCode::Char('n'), KeyCode::Char('v')]);
    both("confirm", &a);
    // It says what was seen on the device, as the properties pane lists it.
    let s = screen(&a, 80, 24, ASCII);
    assert!(
        s.contains("destroys what /dev/nvme0n2 holds:")
            && s.contains("- ext4 file system signature at offset 0x438"),
        "{s}"
    );
}

#[test]
fn blocked_refusal() {
    let mut a = app("lvm-on-partition");
    select(&mut a, "sda");
    a.on_key(key(KeyCode::Char('r')));
    assert!(matches!(a.overlay, Overlay::Refused { .. }));
    both("refused", &a);
}

#[test]
fn run_view_mid_test() {
    let mut a = app("lvm-on-partition");
    let action = a.on_key(key(KeyCode::Char('r')));
    assert!(matches!(action, Action::Start { .. }));
    assert_eq!(a.screen, Screen::Run);
    // The analysis so far (as the session hands it over with each sample) found that the
    // device read half as much as the test wrote: the reads light up, with the finding.
    let job = a.test().job.clone();
    for s in samples(8) {
        a.on_sample(s, live_findings(&job, 800 << 20, 1600 << 20));
    }
    both("run", &a);
    insta::assert_snapshot!("run_rmw_80x24", screen(&a, 80, 24, ASCII));
    // The panel's own reads (12 r/s, 48 kB/s: a probe, not the test) are no read-modify-write
    // by the same analysis: nothing is said.
    let s = samples(9).pop().unwrap();
    a.on_sample(s, live_findings(&job, 48 << 10, 1600 << 20));
    let s = screen(&a, 80, 24, ASCII);
    println!("{s}");
    assert!(!s.contains("read-modify-write"), "{s}");
}

fn picture(a: &App, w: u16, h: u16) -> String {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| draw(f, a, COLOR)).unwrap();
    common::svg::picture(t.backend().buffer())
}

/// The pictures in README.md and docs/tui.md are what the program draws now: the device list
/// of a disk with a partition under LVM, and a write test in its seventh second with a
/// read-modify-write found. `BLKSCOPE_WRITE_DOCS=1 cargo test --test tui_views pictures`
/// draws them again.
#[test]
fn the_documents_pictures_are_current() {
    let mut a = app("lvm-on-partition");
    let devices = picture(&a, 100, 28);
    assert!(devices.contains("sda"), "{devices}");
    common::current("docs/pictures/devices.svg", &devices);
    a.on_key(key(KeyCode::Char('r')));
    let job = a.test().job.clone();
    for s in samples(14) {
        a.on_sample(s, live_findings(&job, 800 << 20, 1600 << 20));
    }
    let run = picture(&a, 100, 28);
    assert!(run.contains("read-modify-write"), "{run}");
    common::current("docs/pictures/run.svg", &run);
    println!("{} and {} bytes", devices.len(), run.len());
}

/// What the analysis makes of a write test on sda so far, when sda read `read` bytes while the
/// test wrote `written`.
fn live_findings(job: &Job, read: u64, written: u64) -> Vec<blkscope::analysis::findings::Finding> {
    use blkscope::analysis::findings::{Activity, Moved, analyze};
    let counters = blkscope::stats::iostat::Counters {
        reads: read / 4096,
        sectors_read: read / 512,
        writes: written >> 20,
        sectors_written: written / 512,
        io_ticks: 2800,
        weighted_ms: 4200,
        ..Default::default()
    };
    let act = Activity {
        devices: vec![("sda".into(), counters)],
        seconds: 4.0,
        stats_off: vec![],
        logical_block_size: 512,
        write_cache: None,
        in_ram: false,
        loop_device: false,
        below_count: 1,
        fs_block: None,
        other_read_bytes: Some(0.0),
        ended: true,
        traced: None,
    };
    let moved = Moved {
        read_bytes: 0,
        write_bytes: written,
    };
    analyze(job, moved, &act, 4096)
}

#[test]
fn the_run_view_splits_the_time_into_queue_and_device_live() {
    let mut a = app("lvm-on-partition");
    a.on_key(key(KeyCode::Char('r')));
    let mut v = samples(4);
    // Untraced so far: no split line.
    for s in v.drain(..2) {
        a.on_sample(s, Vec::new());
    }
    let before = screen(&a, 80, 24, ASCII);
    assert!(!before.contains("p50 queue"), "{before}");
    for mut s in v {
        s.q2d_p50_ns = Some(15_000);
        s.d2c_p50_ns = Some(360_000);
        a.on_sample(s, Vec::new());
    }
    let shot = screen(&a, 80, 24, ASCII);
    println!("{shot}");
    let line = shot
        .lines()
        .find(|l| l.contains("p50 queue"))
        .unwrap_or_else(|| panic!("no split: {shot}"));
    // 15 of 375 us in the queue: under a tenth of the bar, the rest the device's.
    assert!(
        line.contains("p50 queue 15 us |==========| device 360 us"),
        "{line}"
    );
    let mut s = samples(1).pop().unwrap();
    s.q2d_p50_ns = Some(300_000);
    s.d2c_p50_ns = Some(100_000);
    // Who else did I/O, by the trace: named with the device, instead of /proc's guess.
    s.others_traced = vec![blkscope::trace::LiveOther {
        comm: "dd".into(),
        pid: 4503,
        device: "loop0".into(),
        bytes: 256 << 20,
        read_bytes: 256 << 20,
        write_bytes: 0,
    }];
    a.on_sample(s, Vec::new());
    let shot = screen(&a, 80, 24, ASCII);
    println!("{shot}");
    assert!(shot.contains("|########==|"), "{shot}");
    assert!(
        shot.contains("other I/O (trace):") && shot.contains("dd 4503 read 256M on loop0"),
        "{shot}"
    );
    // Once the engine's times are paired with the trace's: all of a middle I/O's time, at 80
    // columns whole.
    let mut s = samples(1).pop().unwrap();
    s.steps = Some(Box::new(blkscope::engine::result::Steps {
        timed: 6513,
        middle: 1302,
        total_ns: 64_630,
        submit_ns: 715,
        queue_ns: 377,
        device_ns: 54_976,
        complete_ns: 8_562,
        ..Default::default()
    }));
    a.on_sample(s, Vec::new());
    let shot = screen(&a, 80, 24, ASCII);
    println!("{shot}");
    assert!(
        shot.contains("us: 65 = sub 0.7 + q 0.4 + dev 55 + done 8.6"),
        "{shot}"
    );
    assert!(!shot.contains("parts of the windows'"), "{shot}");
    // A sampled trace whose windows' I/Os took 3.24x as long as the rest: the parts are
    // theirs, on a line under them; at 1.13x nothing is said.
    for (inside, said) in [(1_600_000, true), (557_100, false)] {
        let mut s = samples(1).pop().unwrap();
        s.steps = Some(Box::new(blkscope::engine::result::Steps {
            timed: 1380,
            middle: 276,
            total_ns: 1_530_000,
            submit_ns: 21_000,
            queue_ns: 4_000,
            device_ns: 1_466_000,
            complete_ns: 39_000,
            in_windows_p50_ns: Some(inside),
            between_p50_ns: Some(493_000),
        }));
        a.on_sample(s, Vec::new());
        let shot = screen(&a, 80, 24, ASCII);
        println!("{shot}");
        assert!(
            shot.contains("us: 1530 = sub 21 + q 4.0 + dev 1466 + done 39"),
            "{shot}"
        );
        assert_eq!(
            shot.contains("parts of the windows' I/Os: 3.25x the rest"),
            said,
            "{shot}"
        );
    }
}

#[test]
fn results_with_dd_and_fio() {
    let mut a = app("lvm-on-partition");
    a.on_key(key(KeyCode::Char('r')));
    // A real run of a small job, with the volatile figures fixed afterwards.
    let dir = tempfile::tempdir().unwrap();
    let job = Job {
        size: Some(engine::job::SizeSpec::Bytes(4 << 20)),
        mode: engine::Mode::Buffered,
        ..Job::default()
    };
    let spec = TargetSpec {
        path: dir.path().to_str().unwrap().into(),
        ..Default::default()
    };
    let (mut info, mut r) = session::run_job(
        &SysRoot::live(),
        &spec,
        &job,
        Arc::new(AtomicBool::new(false)),
        |_| {},
    )
    .unwrap();
    info.test_file = None;
    r.bytes_per_sec = 1_234_500_000.0;
    r.iops = 1177.0;
    r.latency_ns.p50 = 650_000;
    r.latency_ns.p99 = 1_900_000;
    r.findings.clear();
    r.warnings.retain(|w| w.kind == "page_cache");
    r.warnings[0].message = "buffered writes without a sync measure the page cache (RAM)".into();
    r.diskstats.clear();
    // Whether the host's writeback reached its disk while the trace ran is the machine's.
    r.trace = None;
    a.run.as_mut().unwrap().job.runtime = Some(std::time::Duration::from_secs(10));
    a.on_finished(Ok((info.clone(), r.clone())));
    assert_eq!(a.screen, Screen::Results);
    both("results", &a);
    // A run timed at every step says where a middle I/O's time went.
    let mut t = blkscope::analysis::traced::TraceSummary::off("made up");
    t.mode = "on";
    t.steps = Some(blkscope::analysis::steps::Steps {
        timed: 5180,
        middle: 1036,
        total_ns: 746_063,
        submit_ns: 2_422,
        queue_ns: 397,
        device_ns: 727_496,
        complete_ns: 15_748,
        in_windows_p50_ns: Some(748_000),
        between_p50_ns: Some(744_000),
    });
    r.trace = Some(t);
    a.on_finished(Ok((info, r)));
    let s = screen(&a, 120, 40, COLOR);
    println!("{s}");
    assert!(
        s.contains("where a middle I/O's 746.1 us went (1036 of 5180 timed): submitting 2.4 us,")
            && s.contains("device 727.5 us, completing")
            && s.contains("1.01x"),
        "{s}"
    );
}

#[test]
fn help() {
    let mut a = app("md-raid1");
    a.on_key(key(KeyCode::Char('?')));
    both("help", &a);
}

/// The help shows every row of the table of the view it was opened over (the same table the
/// keys are dispatched from and the footer is drawn from), and every footer key is in it.
#[test]
fn the_help_names_every_binding_of_its_view() {
    use blkscope::ui::app::bindings::View;
    let mut a = app("lvm-on-partition");
    let mut seen = Vec::new();
    for (view, keys) in [
        (View::Lists, vec![]),
        (View::Properties, vec![KeyCode::Tab, KeyCode::Tab]),
        (View::Iostat, vec![KeyCode::Tab]),
        (
            View::Run,
            vec![
                KeyCode::Esc,
                KeyCode::BackTab,
                KeyCode::BackTab,
                KeyCode::BackTab,
                KeyCode::Char('r'),
            ],
        ),
    ] {
        press(&mut a, &keys);
        assert_eq!(a.screen_view(), view, "{keys:?}");
        let footer = a.footer();
        a.on_key(key(KeyCode::Char('?')));
        for look in [COLOR, ASCII] {
            let s = screen(&a, 100, 40, look);
            let joined = s.split_whitespace().collect::<Vec<_>>().join(" ");
            for b in view.table() {
                let name = if look == ASCII { b.ascii } else { b.label };
                assert!(
                    joined.contains(&format!("{name} {}", b.help)),
                    "{view:?}: {name} {} not in the help:\n{s}",
                    b.help
                );
            }
            for (k, _) in &footer {
                assert!(
                    view.table().iter().any(|b| b.label == *k),
                    "{view:?}: footer key {k} has no row"
                );
            }
        }
        a.on_key(key(KeyCode::Esc));
        seen.push(view);
    }
    println!("help checked over {seen:?}");
}

#[test]
fn too_small_terminal() {
    let a = app("md-raid1");
    insta::assert_snapshot!("too_small_50x12", screen(&a, 50, 12, COLOR));
}

#[test]
fn ascii_mode() {
    let a = app("lvm-on-partition");
    let s = screen(&a, 80, 24, ASCII);
    assert!(
        !s.contains('─') && !s.contains('│') && !s.contains('┌'),
        "{s}"
    );
    insta::assert_snapshot!("ascii_device_list_80x24", s);
    let mut a = a;
    a.on_key(key(KeyCode::Char('r')));
    let job = a.test().job.clone();
    for s in samples(8) {
        a.on_sample(s, live_findings(&job, 800 << 20, 1600 << 20));
    }
    let s = screen(&a, 80, 24, ASCII);
    assert_ascii_only("run", &s);
    insta::assert_snapshot!("ascii_run_80x24", s);
    assert_ascii_only("too small", &screen(&a, 50, 12, ASCII));
}

/// The properties pane scrolls (j/k once it has the focus), and says which lines it shows;
/// the iostat panel scrolls sideways through all the related devices (h/l).
#[test]
fn properties_and_iostat_panes_scroll() {
    let mut a = app("lvm-on-partition");
    select(&mut a, "sda");
    a.diskstats.clear();
    let s = screen(&a, 80, 24, COLOR);
    assert!(s.contains("Properties 1-8 of"), "{s}");
    press(&mut a, &[KeyCode::Tab, KeyCode::Tab]);
    press(&mut a, &[KeyCode::Char('j'), KeyCode::Char('j')]);
    let s = screen(&a, 80, 24, COLOR);
    assert!(s.contains("Properties 3-10 of"), "{s}");
    // Far past the end: it stops at the last page.
    for _ in 0..50 {
        press(&mut a, &[KeyCode::Down]);
    }
    let s = screen(&a, 80, 24, COLOR);
    let total: String = s
        .split("Properties ")
        .nth(1)
        .and_then(|t| t.split(" of ").nth(1))
        .map(|t| t.chars().take_while(char::is_ascii_digit).collect())
        .unwrap();
    assert!(s.contains(&format!("-{total} of {total}")), "{s}");
    insta::assert_snapshot!("properties_scrolled_80x24", s);
    // sda has five related devices; the panel shows three and scrolls to the others.
    assert_eq!(a.watched.len(), 5, "{:?}", a.watched);
    press(&mut a, &[KeyCode::Tab]);
    // The panel's head row: the line after its title.
    let head = |s: &str| {
        let l: Vec<&str> = s.lines().collect();
        let t = l
            .iter()
            .position(|x| x.contains("iostat -x (1 s)"))
            .unwrap();
        l[t + 1].split("││").nth(1).unwrap_or(l[t + 1]).to_string()
    };
    let s = screen(&a, 80, 24, COLOR);
    assert!(s.contains("iostat -x (1 s) 1-3 of 5"), "{s}");
    let h = head(&s);
    assert!(h.contains("sda1") && !h.contains("dm-1"), "{h}");
    press(&mut a, &[KeyCode::Char('l'), KeyCode::Right]);
    let s = screen(&a, 80, 24, COLOR);
    assert!(s.contains("iostat -x (1 s) 3-5 of 5"), "{s}");
    let h = head(&s);
    assert!(h.contains("dm-0") && h.contains("dm-1"), "{h}");
    insta::assert_snapshot!("iostat_scrolled_80x24", s);
    let f: Vec<&str> = a.footer().into_iter().map(|(k, _)| k).collect();
    assert!(f.contains(&"←→/hl"), "{f:?}");
}

/// A device whose kernel keeps no figures (queue/iostats 0 on a loop or SCSI disk) says so at
/// the top of the iostat panel, where an 80x24 screen still shows it, instead of a column of
/// bare "off".
#[test]
fn the_iostat_panel_says_why_a_device_has_no_figures() {
    let mut a = app("lvm-on-partition");
    a.diskstats[0].stats_off = true;
    let s = screen(&a, 80, 24, COLOR);
    println!("{s}");
    let l: Vec<&str> = s.lines().collect();
    let t = l
        .iter()
        .position(|x| x.contains("iostat -x (1 s)"))
        .expect("the panel");
    assert!(
        l[t + 2].contains("off: no kernel figures for sda")
            && l[t + 3].contains("(its queue/iostats is 0)"),
        "the two lines right under the head row: {:?}",
        &l[t..t + 4]
    );
    assert!(
        l[t + 4].contains("r/s") && l[t + 4].contains("off"),
        "{:?}",
        l[t + 4]
    );
    a.diskstats[0].stats_off = false;
    let s = screen(&a, 80, 24, COLOR);
    assert!(!s.contains("no kernel figures"), "only when off: {s}");
}

/// Clicks select the pane and the row under the pointer, the wheel moves or scrolls the pane
/// under it, as drawn (the same layout as the drawing).
#[test]
fn the_mouse_selects_and_scrolls() {
    use blkscope::ui::app::{Focus, Hit};
    use blkscope::ui::render::hit_test;
    use ratatui::layout::Rect;
    let mut a = app("lvm-on-partition");
    let area = Rect::new(0, 0, 80, 24);
    let s = screen(&a, 80, 24, COLOR);
    // Find sdb's row on the screen and click it.
    let y = s.lines().position(|l| l.contains(" sdb ")).unwrap() as u16;
    let hit = hit_test(&a, area, 5, y);
    assert!(matches!(hit, Hit::Pane(Focus::Devices, Some(_))), "{hit:?}");
    a.on_click(hit);
    assert_eq!(a.target().device.as_deref(), Some("sdb"));
    // A click on the "Two writers" test selects it and moves the focus there.
    let y = s.lines().position(|l| l.contains(" Two writers")).unwrap() as u16;
    a.on_click(hit_test(&a, area, 5, y));
    assert_eq!(a.focus, Focus::Tests);
    assert_eq!(a.test().name, "Two writers");
    // The wheel over the devices moves their selection, whatever has the focus.
    let y = s.lines().position(|l| l.contains("scratch file")).unwrap() as u16;
    a.on_wheel(hit_test(&a, area, 5, y), -1);
    assert_eq!(a.target().device.as_deref(), Some("dm-1"));
    assert_eq!(a.focus, Focus::Tests);
    // Below the minimum size nothing is hit.
    assert_eq!(hit_test(&a, Rect::new(0, 0, 50, 12), 5, 5), Hit::Nothing);
}

#[test]
fn explain_pane() {
    let mut a = app("lvm-on-partition");
    a.on_key(key(KeyCode::Char('x')));
    both("explain", &a);
}

/// A verified run with bad ranges shows them on a map over the device, in the results.
#[test]
fn results_show_the_bad_range_map() {
    use blkscope::verify::{BadKind, BadRange, Stamp, StampJob, VerifyReport};
    let mut a = app("lvm-on-partition");
    a.on_key(key(KeyCode::Char('r')));
    let (info, mut r) = tiny_run();
    r.warnings.clear();
    r.stamp = Some(Stamp {
        jobs: vec![StampJob {
            start: 0,
            len: 100 << 20,
            bs: 1 << 20,
            seed: 1,
            writes: 100,
            random: false,
        }],
    });
    r.verify = Some(VerifyReport {
        sectors_checked: 204_800,
        sectors_bad: 2048,
        bad_ranges: vec![BadRange {
            offset: 90 << 20,
            length: 1 << 20,
            kind: BadKind::IoError,
        }],
        io_errors: 1,
        ..Default::default()
    });
    a.on_finished(Ok((info, r)));
    let s = screen(&a, 80, 24, ASCII);
    assert!(
        s.contains("verify: 204800 sectors checked, 2048 bad"),
        "{s}"
    );
    let map = s.lines().find(|l| l.contains("map [")).expect("a map line");
    let cells: String = map
        .split('[')
        .nth(1)
        .unwrap()
        .split(']')
        .next()
        .unwrap()
        .into();
    let x = cells.find('X').expect("an X");
    assert!(
        x * 10 >= cells.len() * 8,
        "the bad range is near the end: {map}"
    );
}

/// `d` opens the doctor pane for the selected device: examining first, then the findings with
/// their severity in words (NO_COLOR) and colour.
#[test]
fn the_doctor_pane() {
    use blkscope::doctor::{Kind, Severity};
    let mut a = app("misaligned");
    select(&mut a, "sdf");
    assert_eq!(
        a.on_key(key(KeyCode::Char('d'))),
        Action::Doctor {
            device: "sdf".into(),
            host: None,
        }
    );
    let s = screen(&a, 80, 24, COLOR);
    assert!(s.contains("Doctor: sdf") && s.contains("examining"), "{s}");
    a.on_doctor(
        "sdf",
        Ok(vec![
            found(
                Kind::Misaligned,
                Severity::Problem,
                "sdf1 starts at byte 32256 (sector 63), not a multiple of the physical block size 4096",
            ),
            found(Kind::WriteCache, Severity::Info, "volatile write cache (write back)"),
        ]),
    );
    both("doctor", &a);
    let s = screen(&a, 80, 24, ASCII);
    assert!(s.contains("[problem] misaligned: sdf1"), "{s}");
    // Then, every second, who does I/O on it now (by the block layer's trace).
    let top = blkscope::doctor::watch::Interval {
        seconds: 1.0,
        sampled: false,
        lost: 0,
        rows: vec![blkscope::doctor::watch::TopRow {
            device: "sdf".into(),
            pid: 4503,
            comm: "dd".into(),
            kernel: false,
            read_bytes_per_sec: 268435456.0,
            write_bytes_per_sec: 0.0,
            iops: 256.0,
            d2c_mean_us: Some(812.0),
            backing_file_of: None,
        }],
    };
    a.on_doctor_top("sdb", Ok(top.clone()));
    assert!(a.doctor_top.is_none(), "another device's top is not kept");
    a.on_doctor_top("sdf", Ok(top));
    let s = screen(&a, 80, 24, ASCII);
    println!("{s}");
    assert!(s.contains("I/O now (block layer trace, 1.00 s)"), "{s}");
    assert!(
        s.contains("dd") && s.contains("4503") && s.contains("r 256M/s"),
        "{s}"
    );
    assert!(s.contains("D2C 812 us"), "{s}");
    a.on_key(key(KeyCode::Esc));
    assert_eq!(a.overlay, Overlay::None);
}

/// While a test runs, the side panel names the other processes doing I/O.
#[test]
fn the_run_view_names_other_processes_doing_io() {
    let mut a = app("lvm-on-partition");
    a.on_key(key(KeyCode::Char('r')));
    for s in samples(4) {
        a.on_sample(s, Vec::new());
    }
    a.busy = vec![blkscope::stats::procs::BusyProcess {
        pid: 4242,
        comm: "updatedb".into(),
        read_bytes_per_sec: 30e6,
        write_bytes_per_sec: 0.0,
        bytes: 30_000_000,
        devices: vec!["sda".into()],
    }];
    let s = screen(&a, 120, 40, COLOR);
    assert!(
        // The line wraps in the notes' 30 columns: "... on" and then the device.
        s.contains("other I/O now (/proc):")
            && s.contains("updatedb 4242 read 28.6M/s on")
            && s.contains("│sda "),
        "{s}"
    );
}

/// A test cancelled on a device that does not complete what it issued: the run view says what
/// it still waits for, and no ETA (the device decides); a quit then says why blkscope has not
/// exited.
#[test]
fn a_run_that_waits_for_the_device_says_so() {
    let mut a = app("lvm-on-partition");
    a.on_key(key(KeyCode::Char('r')));
    for s in samples(4) {
        a.on_sample(s, Vec::new());
    }
    a.on_key(key(KeyCode::Esc));
    let mut s = samples(5).pop().unwrap();
    s.stopping = Some(blkscope::engine::result::Stopping {
        waited_s: 3.2,
        cancelled: true,
        in_flight: 8,
        flushing: false,
    });
    a.on_sample(s, Vec::new());
    let shown = screen(&a, 80, 24, ASCII);
    println!("{shown}");
    assert!(
        shown.contains("cancelled: 8 I/Os still in flight after 3 s") && shown.contains("ETA -"),
        "{shown}"
    );
    let said = a.still_in_flight();
    println!("{said}");
    assert!(
        said.contains("has not completed the test's last 8 I/Os; blkscope exits when it does"),
        "{said}"
    );
}

/// A device that completes nothing while the test runs: the live figures say none completed
/// and how many wait (no "p50 0 ns"), and the stall finding the analysis made is shown.
#[test]
fn a_run_whose_device_holds_its_ios_says_none_completed_and_the_stall() {
    use blkscope::analysis::findings::stall::Stalls;
    let mut a = app("lvm-on-partition");
    a.on_key(key(KeyCode::Char('r')));
    let mut all = samples(4);
    for (i, s) in samples(16).into_iter().skip(4).enumerate() {
        all.push(Sample {
            bytes: 0,
            ios: 0,
            bytes_per_sec: 0.0,
            iops: 0.0,
            p50_ns: 0,
            p99_ns: 0,
            read_bytes: 0,
            write_bytes: 0,
            lat_buckets: Vec::new(),
            waiting: Some(32 - u32::from(i == 0)),
            ..s
        });
    }
    let mut stalls = Stalls::default();
    let job = blkscope::engine::Job::default();
    for s in all {
        stalls.see(&s);
        let found = stalls.finding(&job, "sda2").into_iter().collect();
        a.on_sample(s, found);
    }
    let shown = screen(&a, 80, 24, ASCII);
    println!("{shown}");
    assert!(
        shown.contains("0 IOPS, none completed: 32 I/Os in flight"),
        "{shown}"
    );
    assert!(!shown.contains("p50 0 ns"), "{shown}");
    assert!(shown.contains("none of the test's I/Os"), "{shown}");
}

/// `l` in the run view: the latency heatmap over time and the histogram with p50/p99/p99.9.
#[test]
fn the_latency_view() {
    let mut a = app("lvm-on-partition");
    a.on_key(key(KeyCode::Char('r')));
    for s in samples(30) {
        a.on_sample(s, Vec::new());
    }
    a.on_key(key(KeyCode::Char('l')));
    assert!(a.latency_view);
    let s = screen(&a, 80, 24, COLOR);
    assert!(
        s.contains("latency over time") && s.contains("latency histogram"),
        "{s}"
    );
    assert!(s.contains("<p50") && s.contains("p99"), "{s}");
    assert!(
        s.contains('@') || s.contains('%'),
        "the dense row is drawn dark: {s}"
    );
    both("latency", &a);
    a.on_key(key(KeyCode::Char('l')));
    assert!(!a.latency_view);
}

/// `g` in the results: the selected run's charts again (throughput, heatmap, histogram).
#[test]
fn results_show_a_runs_charts() {
    let mut a = app("lvm-on-partition");
    a.on_key(key(KeyCode::Char('r')));
    let (info, mut r) = tiny_run();
    r.samples = samples(40);
    a.on_finished(Ok((info, r)));
    a.on_key(key(KeyCode::Char('g')));
    let s = screen(&a, 120, 40, ASCII);
    assert!(s.contains("MB/s") && s.contains("latency over time"), "{s}");
    assert!(s.contains("<p50"), "{s}");
    assert_ascii_only("results charts", &s);
}

/// After `c`, the charts (`g`) draw the earlier run of the same test on the same axes.
#[test]
fn compare_overlays_two_runs_in_the_charts() {
    let mut a = app("lvm-on-partition");
    for n in [20, 30] {
        a.on_key(key(KeyCode::Esc));
        a.on_key(key(KeyCode::Char('r')));
        let (info, mut r) = tiny_run();
        r.samples = samples(n);
        a.on_finished(Ok((info, r)));
    }
    assert_eq!(a.results.len(), 2);
    a.on_key(key(KeyCode::Char('c')));
    assert!(
        a.status.as_deref().unwrap_or("").contains("#2 vs #1"),
        "{:?}",
        a.status
    );
    a.on_key(key(KeyCode::Char('g')));
    let s = screen(&a, 120, 40, COLOR);
    assert!(s.contains("this run (line) and the earlier (dots)"), "{s}");
}

/// Findings that run past the explanation pane can be read to their end: the title says which
/// lines are shown, PgDn/PgUp and the wheel scroll, and another result starts at its top.
#[test]
fn a_long_explanation_scrolls() {
    use blkscope::analysis::Warning;
    use blkscope::analysis::findings::Kind;
    use blkscope::ui::app::Hit;
    use blkscope::ui::render::hit_test;
    use ratatui::layout::Rect;
    let mut a = app("lvm-on-partition");
    a.on_key(key(KeyCode::Char('r')));
    let (info, mut r) = tiny_run();
    r.warnings = (1..=9)
        .map(|i| {
            Warning::new(
                Kind::Zeros,
                format!(
                    "finding {i}: {} end of finding {i}",
                    "a sentence long enough to wrap over the width of the pane. ".repeat(2)
                ),
            )
        })
        .collect();
    a.on_finished(Ok((info.clone(), r.clone())));
    let s = screen(&a, 80, 24, ASCII);
    println!("{s}");
    assert!(s.contains("9 notes"), "the table counts the findings:\n{s}");
    assert!(s.contains("dd: "), "the command lines come first:\n{s}");
    assert!(
        s.contains("lines 1-"),
        "the title says a part is shown:\n{s}"
    );
    assert!(
        !s.contains("end of finding 9"),
        "the last finding is below:\n{s}"
    );
    // PgDn to the end: the last finding's last words are on the screen.
    for _ in 0..5 {
        a.on_key(key(KeyCode::PageDown));
        screen(&a, 80, 24, ASCII);
    }
    let s = screen(&a, 80, 24, ASCII);
    println!("{s}");
    assert!(s.contains("end of finding 9"), "scrolled to the end:\n{s}");
    assert!(!s.contains("dd: "), "the top is scrolled away:\n{s}");
    // PgUp back to the top.
    for _ in 0..5 {
        a.on_key(key(KeyCode::PageUp));
    }
    let s = screen(&a, 80, 24, ASCII);
    assert!(
        s.contains("dd: ") && s.contains("lines 1-"),
        "back at the top:\n{s}"
    );
    // The wheel over the pane scrolls it a line at a time.
    let area = Rect::new(0, 0, 80, 24);
    let y = s.lines().position(|l| l.contains("fio: ")).unwrap() as u16;
    let hit = hit_test(&a, area, 10, y);
    assert_eq!(hit, Hit::Notes);
    a.on_wheel(hit, 1);
    let s = screen(&a, 80, 24, ASCII);
    assert!(
        s.contains("lines 2-") && !s.contains("dd: "),
        "one line down:\n{s}"
    );
    // With the charts shown in its place, PgDn leaves the explanation where it was.
    a.on_key(key(KeyCode::Char('g')));
    a.on_key(key(KeyCode::PageDown));
    a.on_key(key(KeyCode::Char('g')));
    let s = screen(&a, 80, 24, ASCII);
    assert!(s.contains("lines 2-"), "still one line down:\n{s}");
    // A second result is selected when it arrives, and its explanation starts at the top.
    a.on_key(key(KeyCode::Esc));
    a.on_key(key(KeyCode::Char('r')));
    a.on_finished(Ok((info, r)));
    let s = screen(&a, 80, 24, ASCII);
    println!("{s}");
    assert_eq!(a.selected_result, 1);
    assert!(
        s.contains("dd: ") && s.contains("lines 1-"),
        "the new result from its top:\n{s}"
    );
}

/// A doctor pane longer than the screen scrolls: its title says which lines are shown,
/// Down/PgDn and the wheel move it, it stops at the end, and the next pane opens at its top.
#[test]
fn a_long_doctor_pane_scrolls() {
    use blkscope::doctor::{Kind, Severity};
    use blkscope::ui::render::hit_test;
    use ratatui::layout::Rect;
    let mut a = app("misaligned");
    select(&mut a, "sdf");
    a.on_key(key(KeyCode::Char('d')));
    let findings = (1..=30)
        .map(|i| found(Kind::InUse, Severity::Info, &format!("finding number {i}")))
        .collect();
    a.on_doctor("sdf", Ok(findings));
    let s = screen(&a, 80, 24, ASCII);
    println!("{s}");
    assert!(s.contains("Doctor: sdf: lines 1-20 of 30"), "{s}");
    assert!(
        s.contains("finding number 1\n") || s.contains("finding number 1 "),
        "{s}"
    );
    assert!(!s.contains("finding number 30"), "{s}");
    // Past the end it stops at the last line.
    for _ in 0..3 {
        a.on_key(key(KeyCode::PageDown));
        screen(&a, 80, 24, ASCII);
    }
    let s = screen(&a, 80, 24, ASCII);
    println!("{s}");
    assert!(
        s.contains("lines 11-30 of 30") && s.contains("finding number 30"),
        "{s}"
    );
    // Up one line, then the wheel (anywhere: the pane covers the screen) down one.
    a.on_key(key(KeyCode::Up));
    assert!(screen(&a, 80, 24, ASCII).contains("lines 10-29 of 30"));
    a.on_wheel(hit_test(&a, Rect::new(0, 0, 80, 24), 40, 12), 1);
    assert!(screen(&a, 80, 24, ASCII).contains("lines 11-30 of 30"));
    // Closed and opened again: from the top.
    a.on_key(key(KeyCode::Esc));
    a.on_key(key(KeyCode::Char('x')));
    let s = screen(&a, 80, 24, ASCII);
    assert!(s.contains("Explain:") && !s.contains(": lines 11-"), "{s}");
    assert_eq!(a.overlay_scroll, 0);
}

/// Selects suite `name` in the tests pane.
fn select_suite(a: &mut App, name: &str) {
    a.on_key(key(KeyCode::Tab));
    for _ in 0..a.tests.len() + 20 {
        if a.selected_suite().is_some_and(|s| s.name == name) {
            break;
        }
        a.on_key(key(KeyCode::Down));
    }
    assert_eq!(a.selected_suite().map(|s| s.name.as_str()), Some(name));
}

/// Selects suite `name` and starts it (the TUI asks the engine to run it).
fn start_suite(a: &mut App, name: &str) {
    select_suite(a, name);
    assert!(matches!(
        a.on_key(key(KeyCode::Char('r'))),
        Action::StartSuite { .. }
    ));
}

/// The started suite finished with `tests` and was saved as `id`: the results are shown.
fn suite_saved(
    a: &mut App,
    info: blkscope::engine::TargetInfo,
    tests: Vec<blkscope::session::TestOutcome>,
    id: &str,
) {
    a.on_suite_saved(
        Ok(blkscope::session::Outcome {
            target: Some(info),
            tests,
            cancelled: false,
            ..Default::default()
        }),
        Some(id.into()),
    );
    assert_eq!(a.screen, Screen::Results);
}

/// A sweep's results show the sweep: a bar a point, this result's point marked, the knee named
/// (the TUI's form of `blkscope sweep`'s table), on an 80x24 screen and in ASCII.
#[test]
fn a_sweep_result_shows_its_curve_and_knee() {
    let mut a = app("lvm-on-partition");
    start_suite(&mut a, "qd-sweep");
    let (info, base) = tiny_run();
    // IOPS doubles up to QD4 at the same latency, then saturates while latency doubles.
    let tests = [
        (1, 20_000.0, 50.0),
        (2, 40_000.0, 50.0),
        (4, 80_000.0, 50.0),
        (8, 85_000.0, 94.0),
    ]
    .into_iter()
    .map(|(qd, iops, lat_us)| {
        let mut r = base.clone();
        r.iops = iops;
        r.bytes_per_sec = iops * 4096.0;
        r.latency_ns.mean = lat_us * 1e3;
        r.latency_ns.p99 = (lat_us * 2e3) as u64;
        r.warnings.clear();
        blkscope::session::TestOutcome {
            name: format!("QD{qd}"),
            about: None,
            job: Job {
                op: engine::Op::Randread,
                bs: 4096,
                iodepth: qd,
                ..Job::default()
            },
            result: r,
            setting: None,
        }
    })
    .collect();
    suite_saved(&mut a, info, tests, "20261124T000000Z-qd-sweep-1");
    let s = screen(&a, 80, 24, COLOR);
    println!("{s}");
    assert!(s.contains("sweep: randread by iodepth"), "{s}");
    let point = |s: &str, label: &str| -> String {
        s.lines()
            .find(|l| l.contains(&format!(" {label} ")) && l.contains("IOPS"))
            .unwrap_or_else(|| panic!("no {label} line: {s}"))
            .to_string()
    };
    // The last result (QD8) is selected and marked; the knee is at QD4.
    assert!(point(&s, "QD8").contains(">   QD8"), "{s}");
    assert!(point(&s, "QD4").contains("<- knee"), "{s}");
    assert!(s.contains("knee at QD4: from QD4 to QD8"), "{s}");
    // Up one result: the mark moves to QD4.
    a.on_key(key(KeyCode::Up));
    let s = screen(&a, 80, 24, COLOR);
    assert!(
        point(&s, "QD4").contains(">   QD4") && !point(&s, "QD8").contains('>'),
        "{s}"
    );
    let s = screen(&a, 80, 24, ASCII);
    assert_ascii_only("sweep", &s);
    assert!(point(&s, "QD8").contains('#'), "{s}");
}

/// A suite that can tell whether its trap bit (zeros-trap: zeros against random data) says so
/// under each of its results: "What this run found".
#[test]
fn a_trap_suite_says_what_this_run_found() {
    // Before the run, its explanation says what will be compared.
    let mut x = app("lvm-on-partition");
    select_suite(&mut x, "zeros-trap");
    x.on_key(key(KeyCode::Char('x')));
    let s = screen(&x, 100, 32, COLOR);
    assert!(s.contains("After the run blkscope says whether"), "{s}");
    let mut a = app("lvm-on-partition");
    start_suite(&mut a, "zeros-trap");
    let (info, base) = tiny_run();
    let tests = [("zeros", 8000e6), ("random data", 1000e6)]
        .into_iter()
        .map(|(name, rate)| {
            let mut r = base.clone();
            r.bytes_per_sec = rate;
            r.warnings.clear();
            blkscope::session::TestOutcome {
                name: name.into(),
                about: None,
                job: Job {
                    op: engine::Op::Write,
                    bs: 1 << 20,
                    ..Job::default()
                },
                result: r,
                setting: None,
            }
        })
        .collect();
    suite_saved(&mut a, info, tests, "20261124T000000Z-zeros-trap-1");
    let s = screen(&a, 100, 32, COLOR);
    println!("{s}");
    assert!(
        s.contains("What this run found: Zeros ran 8.0x as fast as"),
        "{s}"
    );
    // Under the other result too: it is the suite's finding.
    a.on_key(key(KeyCode::Up));
    let s = screen(&a, 100, 32, COLOR);
    assert!(s.contains("What this run found: Zeros ran 8.0x"), "{s}");
}

/// A loop device's properties name its backing file and whether its I/O goes through that
/// file's page cache (then a test on it measures memory), or not.
#[test]
fn a_loop_devices_properties_say_its_file_and_direct_io() {
    let root = SysRoot::at(format!(
        "{}/tests/fixtures/lvm-on-partition",
        env!("CARGO_MANIFEST_DIR")
    ));
    let mut tree = discover(&root, &DiscoverOptions::default()).unwrap();
    let sdb = tree.devices.iter_mut().find(|d| d.name == "sdb").unwrap();
    sdb.loop_backing_file = Some("/srv/disk.img".into());
    for (dio, says) in [
        (Some(false), "/srv/disk.img (no direct I/O: page cache)"),
        (Some(true), "/srv/disk.img (direct I/O)"),
    ] {
        let mut tree = tree.clone();
        tree.devices
            .iter_mut()
            .find(|d| d.name == "sdb")
            .unwrap()
            .loop_direct_io = dio;
        let mut a = App::new(tree, PathBuf::from("/srv/scratch"));
        let mut s = String::new();
        for _ in 0..10 {
            s = screen(&a, 140, 32, COLOR);
            if s.contains("/dev/sdb disk") {
                break;
            }
            a.on_key(key(KeyCode::Down));
        }
        println!("{s}");
        let line = s
            .lines()
            .find(|l| l.contains("backing"))
            .unwrap_or_else(|| panic!("no backing line: {s}"));
        assert!(line.contains(says), "{says:?} in {line}");
        if dio == Some(true) {
            assert!(!line.contains("page cache"), "{line}");
        }
    }
}

/// On a console (TERM=linux, ASCII key names) at 80 columns every view's footer is shown whole:
/// its last key (quit, back, close or cancel) is never cut ("q qui"), and where the keys do not
/// all fit, those before the last two give way. The views without a snapshot of their own in
/// ASCII get one here.
#[test]
fn every_footer_fits_80_columns_in_ascii() {
    let footer = |name: &str, a: &App| {
        let s = screen(a, 80, 24, ASCII);
        assert_ascii_only(name, &s);
        let line = s
            .lines()
            .last()
            .unwrap()
            .trim_matches('"')
            .trim_end()
            .to_string();
        let (k, d) = *a.footer().last().unwrap();
        let k = k.replace("↑↓", "j/k").replace("←→", "h/l");
        let last = if d.is_empty() { k } else { format!("{k} {d}") };
        println!("{name:>18}: {line}");
        assert!(
            line.ends_with(&last) && line.chars().count() <= 80,
            "{name}: the footer ends in {last:?} uncut\n{s}"
        );
        s
    };
    let mut a = app("lvm-on-partition");
    footer("devices", &a);
    for (i, name) in ["tests", "properties", "iostat"].iter().enumerate() {
        a.on_key(key(KeyCode::Tab));
        let s = footer(name, &a);
        if i > 0 {
            insta::assert_snapshot!(format!("ascii_{name}_focus_80x24"), s);
        }
    }
    let mut a = app("lvm-on-partition");
    a.on_key(key(KeyCode::Char('e')));
    insta::assert_snapshot!("ascii_form_80x24", footer("form", &a));
    a.on_key(key(KeyCode::Enter));
    footer("form, editing", &a);
    let mut a = app("nvme-namespaces");
    select(&mut a, "nvme0n2");
    a.on_key(key(KeyCode::Char('r')));
    footer("confirm", &a);
    for (fixture, k, name) in [
        ("lvm-on-partition", 'x', "explain"),
        ("md-raid1", '?', "help"),
    ] {
        let mut a = app(fixture);
        a.on_key(key(KeyCode::Char(k)));
        footer(name, &a);
    }
    let mut a = app("lvm-on-partition");
    select(&mut a, "sda");
    a.on_key(key(KeyCode::Char('r')));
    footer("refused", &a);
    let mut a = app("lvm-on-partition");
    a.on_key(key(KeyCode::Char('r')));
    for s in samples(8) {
        a.on_sample(s, Vec::new());
    }
    footer("run", &a);
    a.on_key(key(KeyCode::Char('l')));
    footer("run, latency", &a);
    let (info, r) = tiny_run();
    a.on_finished(Ok((info, r)));
    footer("results", &a);
    a.on_key(key(KeyCode::Char('g')));
    footer("results, charts", &a);
}

/// `b` reads the selected device whole (`check --full` in the TUI): progress, rate and ETA in
/// the status line, `b` again stops it, and what the read found becomes the device's verdict
/// and reasons in the tree.
#[test]
fn b_reads_the_device_whole_and_its_verdict_follows() {
    use blkscope::device::{Reason, ReasonCode, WriteSafety};
    let mut a = app("misaligned");
    select(&mut a, "sdf");
    assert_eq!(
        a.on_key(key(KeyCode::Char('b'))),
        Action::ReadWhole {
            device: "sdf".into()
        }
    );
    a.on_whole_progress(1 << 20, 4 << 20);
    let s = screen(&a, 80, 24, ASCII);
    println!("{s}");
    assert!(s.contains("reading sdf whole: 1M of 4M at "), "{s}");
    assert!(s.contains("(b stops)"), "{s}");
    assert_eq!(a.on_key(key(KeyCode::Char('b'))), Action::StopWholeRead);
    // What the read found: data between the samples.
    let why = "not blank: non-zero data at offset 0x12c00000; no known format";
    let mut d = a.tree.get("sdf").unwrap().clone();
    d.write_safety = WriteSafety::Confirm;
    d.safety_reasons = vec![Reason {
        code: ReasonCode::Data,
        detail: why.into(),
    }];
    let root = SysRoot::at(format!(
        "{}/tests/fixtures/misaligned",
        env!("CARGO_MANIFEST_DIR")
    ));
    let mut report = blkscope::device::safety::check(&root, "sdf").unwrap();
    report.write_safety = WriteSafety::Confirm;
    report.reasons = d.safety_reasons.clone();
    a.on_whole_read(Ok((report, Some(d))));
    let t = a.target();
    assert_eq!(
        (t.safety, t.badges.clone()),
        (WriteSafety::Confirm, vec!["DATA"]),
        "{:?}",
        t.reasons
    );
    let s = screen(&a, 80, 24, ASCII);
    println!("{s}");
    assert!(s.contains("sdf (sdf): confirm: not blank"), "{s}");
    assert!(a.whole_read.is_none());
    // On a host's device, or the scratch file: said, and nothing started.
    a.on_key(key(KeyCode::Home));
    for _ in 0..a.selected_target {
        a.on_key(key(KeyCode::Up));
    }
    assert_eq!(a.on_key(key(KeyCode::Char('b'))), Action::None);
    assert!(
        a.status
            .as_deref()
            .unwrap_or_default()
            .contains("select a block device"),
        "{:?}",
        a.status
    );
}
