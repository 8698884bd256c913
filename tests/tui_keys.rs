//! Key handling on the TUI's state, without a terminal: each key in each view does what the
//! footer says it does.

use std::path::PathBuf;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use blkscope::SysRoot;
use blkscope::device::{DiscoverOptions, discover};
use blkscope::engine::Mode;
use blkscope::ui::app::{Action, App, Focus, Overlay, Screen};

fn app(fixture: &str) -> App {
    let root = SysRoot::at(format!(
        "{}/tests/fixtures/{fixture}",
        env!("CARGO_MANIFEST_DIR")
    ));
    let tree = discover(&root, &DiscoverOptions::default()).unwrap();
    App::new(tree, PathBuf::from("/srv/scratch"))
}

fn k(c: KeyCode) -> KeyEvent {
    KeyEvent::new(c, KeyModifiers::NONE)
}

fn ch(c: char) -> KeyEvent {
    k(KeyCode::Char(c))
}

fn footer_keys(a: &App) -> Vec<&'static str> {
    a.footer().into_iter().map(|(k, _)| k).collect()
}

fn select(a: &mut App, device: &str) {
    while a.target().device.as_deref() != Some(device) {
        let before = a.selected_target;
        a.on_key(ch('j'));
        assert_ne!(before, a.selected_target, "{device} not found");
    }
}

#[test]
fn main_view_moves_switches_panes_and_opens_things() {
    let mut a = app("lvm-on-partition");
    let f = footer_keys(&a);
    for key in ["↑↓", "Tab", "r", "e", "x", "d", "v", "?", "q"] {
        assert!(f.contains(&key), "footer lacks {key}: {f:?}");
    }
    assert!(
        a.target().is_scratch(),
        "the scratch file is first and selected"
    );
    assert_eq!(
        a.test().id,
        "seq-write",
        "sequential write is selected by default"
    );
    a.on_key(ch('j'));
    assert_eq!(a.target().device.as_deref(), Some("sda"));
    a.on_key(k(KeyCode::Down));
    assert_eq!(a.target().device.as_deref(), Some("sda1"));
    a.on_key(ch('k'));
    a.on_key(k(KeyCode::Up));
    a.on_key(k(KeyCode::Up));
    assert_eq!(a.selected_target, 0, "stops at the top");
    a.on_key(k(KeyCode::Tab));
    assert_eq!(a.focus, Focus::Tests);
    a.on_key(ch('j'));
    assert_eq!(a.test().id, "seq-read");
    assert_eq!(a.selected_target, 0, "moving tests leaves the device alone");
    // Tab goes on through the properties and the iostat panel, and back to the devices.
    a.on_key(k(KeyCode::Tab));
    assert_eq!(a.focus, Focus::Properties);
    a.on_key(k(KeyCode::Tab));
    assert_eq!(a.focus, Focus::Iostat);
    a.on_key(k(KeyCode::BackTab));
    assert_eq!(a.focus, Focus::Properties);
    a.on_key(k(KeyCode::Tab));
    a.on_key(k(KeyCode::Tab));
    assert_eq!(a.focus, Focus::Devices);
    a.on_key(k(KeyCode::Enter));
    assert_eq!(
        a.focus,
        Focus::Tests,
        "Enter on a device goes on to the tests"
    );
    a.on_key(k(KeyCode::Enter));
    assert!(
        matches!(a.overlay, Overlay::Form(_)),
        "Enter on a test opens its form"
    );
    a.on_key(k(KeyCode::Esc));
    assert_eq!(a.overlay, Overlay::None);
    a.on_key(ch('e'));
    assert!(matches!(a.overlay, Overlay::Form(_)));
    a.on_key(k(KeyCode::Esc));
    a.on_key(ch('?'));
    assert_eq!(a.overlay, Overlay::Help);
    assert_eq!(footer_keys(&a), ["Esc"]);
    a.on_key(k(KeyCode::Esc));
    assert_eq!(a.overlay, Overlay::None);
    // No results in this session: `v` shows the saved runs (the loop reopens them); with
    // none saved it stays and says so.
    assert_eq!(a.on_key(ch('v')), Action::Reopen);
    a.add_reopened(Vec::new());
    assert_eq!(a.screen, Screen::Main, "no results yet");
    let status = a.status.as_deref().unwrap();
    assert!(status.contains("no saved runs"), "{status}");
    assert_eq!(a.on_key(ch('q')), Action::Quit);
}

#[test]
fn ctrl_c_quits_at_once_everywhere() {
    let mut a = app("md-raid1");
    a.on_key(ch('e'));
    let c = KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL);
    assert_eq!(a.on_key(c), Action::QuitNow);
    let mut a = app("md-raid1");
    a.on_key(ch('r'));
    assert_eq!(a.on_key(c), Action::QuitNow);
}

#[test]
fn r_on_the_scratch_file_starts_directly() {
    let mut a = app("md-raid1");
    match a.on_key(ch('r')) {
        Action::Start { spec, job } => {
            assert_eq!(spec.path, "/srv/scratch");
            assert_eq!(spec.confirm, None);
            assert_eq!(job.mode, Mode::Direct);
            assert!(job.runtime.is_some());
        }
        x => panic!("{x:?}"),
    }
    assert_eq!(a.screen, Screen::Run);
    let f = footer_keys(&a);
    assert!(f.contains(&"Esc") && f.contains(&"q"), "{f:?}");
    assert_eq!(a.on_key(k(KeyCode::Esc)), Action::Cancel);
    assert!(a.run.as_ref().unwrap().cancelling);
    assert_eq!(a.on_key(ch('q')), Action::Quit);
}

#[test]
fn blocked_device_refuses_writes_but_allows_reads() {
    let mut a = app("lvm-on-partition");
    select(&mut a, "sda");
    assert_eq!(a.on_key(ch('r')), Action::None);
    match &a.overlay {
        Overlay::Refused { device, reasons } => {
            assert_eq!(device, "sda");
            assert!(reasons.iter().any(|r| r.contains("mounted")));
        }
        o => panic!("{o:?}"),
    }
    assert_eq!(footer_keys(&a), ["↑↓ PgUp/PgDn", "Esc"]);
    a.on_key(k(KeyCode::Esc));
    assert_eq!(a.overlay, Overlay::None);
    // The read test next to it runs.
    a.on_key(k(KeyCode::Tab));
    a.on_key(ch('j'));
    assert_eq!(a.test().id, "seq-read");
    match a.on_key(ch('r')) {
        Action::Start { spec, .. } => assert_eq!(spec.path, "/dev/sda"),
        x => panic!("{x:?}"),
    }
}

#[test]
fn confirm_device_needs_its_name_typed() {
    let mut a = app("nvme-namespaces");
    select(&mut a, "nvme0n2");
    assert_eq!(a.on_key(ch('r')), Action::None);
    assert!(matches!(a.overlay, Overlay::Confirm { .. }));
    for c in "nvme0n1".chars() {
        a.on_key(ch(c));
    }
    assert_eq!(a.on_key(k(KeyCode::Enter)), Action::None, "wrong name");
    match &a.overlay {
        Overlay::Confirm { error, .. } => assert!(error.as_deref().unwrap().contains("nvme0n2")),
        o => panic!("{o:?}"),
    }
    a.on_key(k(KeyCode::Backspace));
    a.on_key(ch('2'));
    match a.on_key(k(KeyCode::Enter)) {
        Action::Start { spec, .. } => {
            assert_eq!(spec.path, "/dev/nvme0n2");
            assert_eq!(spec.confirm.as_deref(), Some("nvme0n2"));
        }
        x => panic!("{x:?}"),
    }
    // Esc in the dialog starts nothing.
    let mut a = app("nvme-namespaces");
    select(&mut a, "nvme0n2");
    a.on_key(ch('r'));
    assert_eq!(a.on_key(k(KeyCode::Esc)), Action::None);
    assert_eq!(a.overlay, Overlay::None);
    assert_eq!(a.screen, Screen::Main);
}

#[test]
fn form_refuses_invalid_values_and_keeps_valid_ones() {
    let mut a = app("nvme-namespaces");
    a.on_key(ch('e'));
    let f = footer_keys(&a);
    assert!(f.contains(&"Enter") && f.contains(&"Esc"), "{f:?}");
    // bs: Enter edits; a value that does not parse is refused.
    a.on_key(k(KeyCode::Enter));
    for _ in 0..4 {
        a.on_key(k(KeyCode::Backspace));
    }
    for c in "3x".chars() {
        a.on_key(ch(c));
    }
    a.on_key(k(KeyCode::Enter));
    match &a.overlay {
        Overlay::Form(f) => {
            assert!(f.error.as_deref().unwrap().contains("unknown unit"));
            assert!(f.editing.is_some(), "still editing after a refusal");
        }
        o => panic!("{o:?}"),
    }
    // Direct I/O needs a multiple of the block size: 1000 is refused with the fix.
    for _ in 0..2 {
        a.on_key(k(KeyCode::Backspace));
    }
    for c in "1000".chars() {
        a.on_key(ch(c));
    }
    a.on_key(k(KeyCode::Enter));
    match &a.overlay {
        Overlay::Form(f) => assert!(f.error.as_deref().unwrap().contains("multiple"), "{f:?}"),
        o => panic!("{o:?}"),
    }
    for _ in 0..4 {
        a.on_key(k(KeyCode::Backspace));
    }
    for c in "64k".chars() {
        a.on_key(ch(c));
    }
    a.on_key(k(KeyCode::Enter));
    assert_eq!(a.test().job.bs, 65536);
    // mode cycles with Right and Left.
    for _ in 0..5 {
        a.on_key(k(KeyCode::Down));
    }
    a.on_key(k(KeyCode::Right));
    assert_eq!(a.test().job.mode, Mode::Dsync);
    a.on_key(k(KeyCode::Left));
    assert_eq!(a.test().job.mode, Mode::Direct);
    a.on_key(k(KeyCode::Esc));
    assert_eq!(a.overlay, Overlay::None);
    assert_eq!(a.test().job.bs, 65536, "the edit stays for the session");
}

#[test]
fn results_view_keys() {
    let mut a = app("md-raid1");
    a.on_key(ch('r'));
    a.on_finished(Err(
        "cannot open /srv/scratch: No such file or directory".into()
    ));
    assert_eq!(a.screen, Screen::Results);
    assert_eq!(a.results.len(), 1);
    assert!(a.results[0].fio.starts_with("fio --name=blkscope"));
    let f = footer_keys(&a);
    for key in ["↑↓", "r", "Esc", "q"] {
        assert!(f.contains(&key), "{f:?}");
    }
    assert!(
        matches!(a.on_key(ch('r')), Action::Start { .. }),
        "r runs again"
    );
    a.on_finished(Err("again".into()));
    assert_eq!(a.selected_result, 1);
    a.on_key(ch('k'));
    assert_eq!(a.selected_result, 0);
    a.on_key(ch('j'));
    assert_eq!(a.selected_result, 1);
    a.on_key(k(KeyCode::Esc));
    assert_eq!(a.screen, Screen::Main);
    a.on_key(ch('v'));
    assert_eq!(a.screen, Screen::Results);
}

#[test]
fn sync_latency_follows_the_logical_block_size() {
    let mut a = app("lvm-on-partition");
    select(&mut a, "sda");
    let p = a.tests.iter().find(|p| p.id == "sync-latency").unwrap();
    assert_eq!(p.job.bs, 512);
    assert_eq!(p.job.mode, Mode::Dsync);
}

#[test]
fn lab_devices_are_marked_and_selected() {
    let mut a = app("md-raid1");
    a.mark_lab(&[("sdd".into(), "lab, 4096-byte sectors".into())]);
    assert_eq!(a.target().device.as_deref(), Some("sdd"));
    assert_eq!(a.target().badges[0], "LAB");
    assert_eq!(a.target().model.as_deref(), Some("lab, 4096-byte sectors"));
}

#[test]
fn suites_are_offered_in_the_test_picker() {
    let mut a = app("lvm-on-partition");
    a.on_key(k(KeyCode::Tab));
    for _ in 0..a.tests.len() {
        a.on_key(ch('j'));
    }
    assert_eq!(a.selected_suite().unwrap().name, "dd-classic");
    // The form is for single tests.
    a.on_key(ch('e'));
    assert_eq!(a.overlay, Overlay::None);
    assert!(a.status.as_deref().unwrap().contains("runs as written"));
    // On the scratch file it starts; progress and results come per test.
    match a.on_key(ch('r')) {
        Action::StartSuite { spec, suite } => {
            assert_eq!(spec.path, "/srv/scratch");
            assert_eq!(suite.name, "dd-classic");
        }
        x => panic!("{x:?}"),
    }
    a.on_suite_progress("write 1G bs=1M dsync", 2, 3);
    assert_eq!(
        a.run.as_ref().unwrap().test,
        "dd-classic: write 1G bs=1M dsync (2/3)"
    );
    assert_eq!(a.run.as_ref().unwrap().job.mode, Mode::Dsync);
    a.on_suite_finished(Err("stopped".into()));
    assert_eq!(a.screen, Screen::Results);
    assert_eq!(a.results.last().unwrap().test, "dd-classic");

    // A writing suite on a blocked device is refused; the read-only hdparm-t is not.
    let mut a = app("lvm-on-partition");
    select(&mut a, "sda");
    a.on_key(k(KeyCode::Tab));
    for _ in 0..a.tests.len() + 2 {
        a.on_key(ch('j'));
    }
    assert_eq!(a.selected_suite().unwrap().name, "cache-trap");
    assert_eq!(a.on_key(ch('r')), Action::None);
    assert!(matches!(a.overlay, Overlay::Refused { .. }));
    a.on_key(k(KeyCode::Esc));
    while a.selected_suite().unwrap().name != "hdparm-t" {
        let before = a.selected_test;
        a.on_key(ch('j'));
        assert_ne!(before, a.selected_test, "hdparm-t is in the picker");
    }
    assert!(matches!(a.on_key(ch('r')), Action::StartSuite { .. }));
}

#[test]
fn results_compare_and_reopen() {
    let mut a = app("md-raid1");
    let job = serde_json::to_value(&a.tests[0].job).unwrap();
    let saved = |id: &str, mbs: f64| {
        let lat = serde_json::json!({"min": 500, "mean": 1100.0, "p50": 1000, "p90": 1500,
            "p99": 2000, "p99_9": 2500, "p99_99": 3000, "max": 4000});
        let doc = serde_json::json!({
            "schema": "blkscope-run/1", "id": id, "created": "2026-11-22T00:00:00Z",
            "kind": "run", "name": "Seq write",
            "target": {"path": "/srv/scratch", "device": null, "size_bytes": 268435456u64},
            "device": null,
            "tests": [{
                "name": "Seq write",
                "job": job.clone(),
                "result": {"bytes_per_sec": mbs * 1e6, "iops": mbs, "latency_ns": lat, "warnings": []}
            }]
        });
        serde_json::from_value::<blkscope::runs::SavedRun>(doc).unwrap()
    };
    let runs = vec![
        saved("20261122T000000Z-a", 400.0),
        saved("20261122T000100Z-b", 500.0),
    ];
    a.add_reopened(runs.clone());
    assert_eq!(a.screen, Screen::Results);
    assert_eq!(a.results.len(), 2);
    assert_eq!(a.status.as_deref(), Some("reopened 2 saved results"));
    assert_eq!(a.results[1].saved_id.as_deref(), Some("20261122T000100Z-b"));
    assert!(
        a.results[1]
            .fio
            .starts_with("fio --name=blkscope --filename=/srv/scratch")
    );
    // As the live result showed it: the target's name (not a path cut short at 80 columns),
    // the dd line of what the timed run moved, its engine line and notes.
    let mut r = runs[1].clone();
    r.tests[0].result.bytes = Some(4 << 20);
    r.tests[0].result.engine = Some("psync".into());
    r.tests[0].result.engine_why = Some("one I/O in flight per job".into());
    r.tests[0].result.warnings = vec![blkscope::analysis::Warning::new(
        blkscope::analysis::findings::Kind::PageCache,
        "buffered writes measure RAM",
    )];
    r.id = "20261122T000150Z-n".into();
    let mut b = app("md-raid1");
    b.add_reopened(vec![r]);
    let row = &b.results[0];
    let notes: Vec<String> = row
        .engine_chosen()
        .map(|c| format!("engine: {c}"))
        .into_iter()
        .chain(
            row.warnings()
                .iter()
                .map(|w| format!("[{}] {}", w.kind, w.message)),
        )
        .collect();
    println!("{} | {} | {notes:?}", row.target, row.dd);
    assert_eq!(row.target, "scratch");
    assert!(
        row.dd.contains("count=4 ") && !row.dd.contains("no dd"),
        "{}",
        row.dd
    );
    assert!(row.fio.contains("--ioengine=psync"), "{}", row.fio);
    assert_eq!(
        notes,
        [
            "engine: psync (one I/O in flight per job; --engine uring forces io_uring)",
            "[page_cache] buffered writes measure RAM"
        ]
    );
    assert_eq!(a.on_key(ch('c')), Action::None);
    let s = a.status.clone().unwrap();
    assert!(s.contains("#2 vs #1") && s.contains("MB/s 1.25x"), "{s}");
    a.on_key(ch('k'));
    a.on_key(ch('c'));
    assert!(a.status.as_deref().unwrap().contains("no earlier result"));
    assert_eq!(a.on_key(ch('o')), Action::Reopen);
    let f = footer_keys(&a);
    assert!(f.contains(&"c") && f.contains(&"o"), "{f:?}");
    // Reopened again, with one saved since: only that one is added.
    let mut more = runs.clone();
    more.push(saved("20261122T000200Z-c", 450.0));
    a.add_reopened(more);
    assert_eq!(a.results.len(), 3, "{:?}", a.status);
    assert_eq!(a.status.as_deref(), Some("reopened 1 saved result"));
    a.add_reopened(runs);
    assert_eq!(a.results.len(), 3, "nothing twice: {:?}", a.status);
    println!("{:?}", a.status);
    assert_eq!(
        a.status.as_deref(),
        Some("nothing to add: the 2 newest saved runs are all already shown")
    );
}

#[test]
fn x_explains_the_selected_test_or_suite() {
    let mut a = app("md-raid1");
    a.on_key(ch('x'));
    match &a.overlay {
        Overlay::Explain { title, lines } => {
            assert!(title.contains("Seq write"));
            assert!(
                lines
                    .iter()
                    .any(|l| l.starts_with("fio: fio --name=blkscope"))
            );
            assert!(lines.iter().any(|l| l.starts_with("trap:")));
        }
        o => panic!("{o:?}"),
    }
    assert_eq!(footer_keys(&a), ["↑↓ PgUp/PgDn", "Esc"]);
    a.on_key(k(KeyCode::Esc));
    assert_eq!(a.overlay, Overlay::None);
    a.on_key(k(KeyCode::Tab));
    for _ in 0..a.tests.len() + 4 {
        a.on_key(ch('j'));
    }
    a.on_key(ch('x'));
    match &a.overlay {
        Overlay::Explain { title, lines } => {
            assert!(title.starts_with("rmw-sweep"), "{title}");
            assert!(
                lines
                    .iter()
                    .any(|l| l.starts_with("What the article found"))
            );
        }
        o => panic!("{o:?}"),
    }
}

#[test]
fn marking_a_lab_device_sets_sync_latency_to_its_block_size() {
    let mut a = app("lvm-on-partition");
    a.mark_lab(&[("sdb".into(), "lab, 512-byte sectors".into())]);
    let p = a.tests.iter().find(|p| p.id == "sync-latency").unwrap();
    assert_eq!(p.job.bs, 512);
}

/// After a write on a device that was blank when it started, the device holds the session's own
/// data: the next write there starts without the name typed again (the engine, which checks
/// again, sees data now and would otherwise refuse it).
#[test]
fn a_device_written_after_it_was_seen_blank_needs_no_second_confirmation() {
    let mut a = app("lvm-on-partition");
    select(&mut a, "sdb");
    match a.on_key(ch('r')) {
        Action::Start { spec, .. } => assert_eq!(spec.confirm, None, "blank: no confirmation"),
        other => panic!("{other:?}"),
    }
    // A real (tiny) run on a scratch file stands in for the result of the write on sdb.
    let dir = tempfile::tempdir().unwrap();
    let job = blkscope::engine::Job {
        size: Some(blkscope::engine::job::SizeSpec::Bytes(1 << 20)),
        ..Default::default()
    };
    let spec = blkscope::engine::TargetSpec {
        path: dir.path().to_str().unwrap().into(),
        ..Default::default()
    };
    let (_, r) = blkscope::session::run_job(
        &SysRoot::default(),
        &spec,
        &job,
        std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false)),
        |_| {},
    )
    .unwrap();
    let info = blkscope::engine::TargetInfo {
        path: "/dev/sdb".into(),
        kind: "block",
        device: Some("sdb".into()),
        size_bytes: 2 << 40,
        logical_block_size: Some(512),
        physical_block_size: Some(4096),
        rotational: Some(true),
        write_cache: None,
        scheduler: None,
        test_file: None,
        write_safety: blkscope::device::WriteSafety::Clear,
    };
    a.on_finished(Ok((info, r)));
    a.on_key(k(KeyCode::Esc));
    match a.on_key(ch('r')) {
        Action::Start { spec, .. } => {
            assert_eq!(spec.confirm.as_deref(), Some("sdb"), "{spec:?}")
        }
        other => panic!("{other:?}"),
    }
}

/// The form's verify field toggles with Enter or Left/Right (h/l), and a read test refuses it
/// with the reason.
#[test]
fn the_form_toggles_verify() {
    let mut a = app("lvm-on-partition");
    a.on_key(ch('e'));
    for _ in 0..8 {
        a.on_key(ch('j'));
    }
    assert_eq!(a.field_value(8), "no");
    a.on_key(k(KeyCode::Enter));
    assert!(a.test().job.verify, "Enter toggles it on for a write test");
    a.on_key(ch('h'));
    assert!(!a.test().job.verify, "h toggles it back");
    a.on_key(k(KeyCode::Esc));
    // Seq read: verify is refused, with the reason, and the job stays as it was.
    a.on_key(k(KeyCode::Tab));
    a.on_key(ch('j'));
    a.on_key(ch('e'));
    for _ in 0..8 {
        a.on_key(ch('j'));
    }
    a.on_key(k(KeyCode::Enter));
    assert!(!a.test().job.verify);
    match &a.overlay {
        Overlay::Form(f) => {
            assert!(
                f.error.as_deref().unwrap_or("").contains("--verify"),
                "{f:?}"
            )
        }
        o => panic!("{o:?}"),
    }
}

/// The form's cpus field takes a CPU list ("all" clears it), refuses one this process may not
/// use with the reason, and the run the form starts carries it.
#[test]
fn the_form_sets_the_cpus() {
    let mut a = app("lvm-on-partition");
    a.on_key(ch('e'));
    for _ in 0..9 {
        a.on_key(ch('j'));
    }
    assert_eq!(a.field_value(9), "all");
    let type_in = |a: &mut App, text: &str| {
        a.on_key(k(KeyCode::Enter));
        // Clear what the field shows, then type.
        for _ in 0..8 {
            a.on_key(k(KeyCode::Backspace));
        }
        for c in text.chars() {
            a.on_key(ch(c));
        }
        a.on_key(k(KeyCode::Enter));
    };
    type_in(&mut a, "0");
    assert_eq!(a.field_value(9), "0");
    let cpus = a.test().job.cpus.clone().expect("cpus set");
    assert_eq!(cpus.cpus(), &[0]);

    // CPU 1023: not one a test machine lets this process use.
    type_in(&mut a, "1023");
    let err = match &a.overlay {
        Overlay::Form(f) => f.error.clone().unwrap_or_default(),
        o => panic!("{o:?}"),
    };
    println!("refused: {err}");
    assert!(err.contains("not 1023"), "{err}");
    a.on_key(k(KeyCode::Esc));
    assert_eq!(a.field_value(9), "0", "the refused value was not kept");

    type_in(&mut a, "all");
    assert_eq!(a.test().job.cpus, None);
}

/// Typed lines take a shell's editing keys: Ctrl-U clears, Ctrl-W drops the last word, and no
/// Ctrl or Alt key types its letter (Ctrl-U typed a 'u' into the form's value).
#[test]
fn typed_lines_take_ctrl_u_and_ctrl_w() {
    let ctrl = |c: char| KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL);
    let mut a = app("lvm-on-partition");
    a.on_key(ch('e'));
    assert_eq!(a.field_value(0), "1M");
    a.on_key(k(KeyCode::Enter));
    a.on_key(ctrl('u'));
    for c in "64k".chars() {
        a.on_key(ch(c));
    }
    a.on_key(KeyEvent::new(KeyCode::Char('x'), KeyModifiers::ALT));
    a.on_key(k(KeyCode::Enter));
    let err = match &a.overlay {
        Overlay::Form(f) => f.error.clone(),
        o => panic!("{o:?}"),
    };
    assert_eq!(err, None, "the field held: {:?}", a.field_value(0));
    assert_eq!(a.test().job.bs, 64 * 1024, "{}", a.field_value(0));
    a.on_key(k(KeyCode::Esc));
    // The name a write asks for.
    a.overlay = Overlay::Confirm {
        device: "sdb".into(),
        typed: String::new(),
        error: None,
    };
    for c in "sdb oops".chars() {
        a.on_key(ch(c));
    }
    a.on_key(ctrl('w'));
    let typed = |a: &App| match &a.overlay {
        Overlay::Confirm { typed, .. } => typed.clone(),
        o => panic!("{o:?}"),
    };
    assert_eq!(typed(&a), "sdb ");
    a.on_key(ctrl('u'));
    assert_eq!(typed(&a), "");
}
