//! The TUI across hosts, on its state alone: each host a top-level node with the devices its
//! own `list --json` gave (fixture trees sent through JSON, as over ssh), its iostat panel fed
//! by its own stream, the same safety dialogs, and tests handed to the host's blkscope.

use std::path::PathBuf;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use blkscope::SysRoot;
use blkscope::device::{DeviceTree, DiscoverOptions, WriteSafety, discover};
use blkscope::stats::IostatX;
use blkscope::ui::app::{Action, App, Overlay, RemoteDone, Screen};

/// A fixture tree as a host's blkscope would send it: serialised, then read back.
fn tree(fixture: &str) -> DeviceTree {
    let root = SysRoot::at(format!(
        "{}/tests/fixtures/{fixture}",
        env!("CARGO_MANIFEST_DIR")
    ));
    let t = discover(&root, &DiscoverOptions::default()).unwrap();
    let json = serde_json::to_string(&t).unwrap();
    serde_json::from_str(&json).expect("a tree reads back from its JSON")
}

fn screen(a: &App) -> String {
    let mut t = ratatui::Terminal::new(ratatui::backend::TestBackend::new(100, 30)).unwrap();
    let look = blkscope::ui::Look {
        color: false,
        ascii: true,
    };
    t.draw(|f| blkscope::ui::render::draw(f, a, look)).unwrap();
    t.backend().to_string()
}

fn ch(c: char) -> KeyEvent {
    KeyEvent::new(KeyCode::Char(c), KeyModifiers::NONE)
}

fn enter() -> KeyEvent {
    KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)
}

/// db1 (LVM on a partition), db2 (NVMe namespaces), db3 unreachable.
fn three_hosts() -> App {
    let labels = ["db1", "root@db2:2222", "db3"].map(String::from);
    let mut a = App::for_hosts(&labels, PathBuf::from("/srv/scratch"));
    a.on_host_tree("db1", Ok(tree("lvm-on-partition")));
    a.on_host_tree("root@db2:2222", Ok(tree("nvme-namespaces")));
    a.on_host_tree(
        "db3",
        Err("db3: ssh: connect to host db3 port 22: Connection refused".into()),
    );
    a
}

fn select(a: &mut App, host: &str, device: &str) {
    while a.selected_target > 0 {
        a.on_key(ch('k'));
    }
    while (a.target().host.as_deref(), a.target().device.as_deref()) != (Some(host), Some(device)) {
        let before = a.selected_target;
        a.on_key(ch('j'));
        assert_ne!(before, a.selected_target, "{host}:{device} not found");
    }
}

#[test]
fn each_host_is_a_top_level_node_with_its_own_devices() {
    let labels = ["db1", "db2"].map(String::from);
    let mut a = App::for_hosts(&labels, PathBuf::from("/srv/scratch"));
    let rows: Vec<_> = a
        .targets
        .iter()
        .map(|t| (t.label.clone(), t.badges.clone()))
        .collect();
    println!("before any host answered: {rows:?}");
    assert_eq!(a.targets.len(), 2, "only the two hosts' nodes: {rows:?}");
    assert!(a.targets.iter().all(|t| t.is_host()));
    assert!(
        !a.targets.iter().any(|t| t.is_scratch()),
        "no local scratch file"
    );

    a.on_host_tree("db2", Ok(tree("nvme-namespaces")));
    a.on_host_tree("db1", Ok(tree("lvm-on-partition")));
    let rows: Vec<_> = a
        .targets
        .iter()
        .map(|t| (t.host.clone().unwrap(), t.label.clone(), t.depth))
        .collect();
    println!("{rows:#?}");
    // The order given on the command line, each host's devices beneath it, one level deeper
    // than on the host itself.
    assert_eq!(rows[0], ("db1".into(), "db1".into(), 0));
    assert_eq!(rows[1], ("db1".into(), "sda".into(), 1));
    let db2 = rows.iter().position(|r| r.1 == "db2").expect("db2's node");
    assert!(rows[1..db2].iter().all(|r| r.0 == "db1" && r.2 >= 1));
    assert!(rows[db2 + 1..].iter().all(|r| r.0 == "db2" && r.2 >= 1));
    assert!(
        rows.iter()
            .any(|r| r.0 == "db1" && r.1 == "dm-0" && r.2 == 3)
    );
    assert!(rows.iter().any(|r| r.0 == "db2" && r.1 == "nvme0n2"));
    // A host that answers later does not move the selection.
    select(&mut a, "db2", "nvme0n2");
    a.on_host_tree("db1", Ok(tree("lvm-on-partition")));
    assert_eq!(a.target().full_label(), "db2:nvme0n2");
}

#[test]
fn an_unreachable_host_says_why_and_runs_nothing() {
    let mut a = three_hosts();
    // The host that failed comes first: the worst first.
    assert_eq!(a.targets[0].label, "db3", "{:?}", a.targets[0]);
    a.selected_target = 0;
    let t = a.target().clone();
    println!("{t:?}");
    assert!(t.is_host());
    assert_eq!(t.badges, ["DOWN"]);
    assert!(t.reasons[0].contains("Connection refused"), "{t:?}");
    assert_eq!(a.on_key(ch('r')), Action::None);
    let status = a.status.clone().unwrap_or_default();
    println!("status: {status}");
    assert!(
        status.contains("db3 cannot be reached") && status.contains("Connection refused"),
        "{status}"
    );
    assert_eq!(a.screen, Screen::Main);

    // A host that answered: its node is not a target either.
    a.selected_target = a.targets.iter().position(|t| t.label == "db1").unwrap();
    assert_eq!(a.on_key(ch('r')), Action::None);
    let status = a.status.clone().unwrap_or_default();
    assert!(status.contains("select one of its devices"), "{status}");
}

#[test]
fn the_iostat_panel_shows_the_selected_devices_host() {
    let mut a = three_hosts();
    select(&mut a, "db1", "sda2");
    println!("watched on db1:sda2: {:?}", a.watched);
    assert!(a.watched.contains(&"sda2".to_string()));
    assert!(a.watched.contains(&"dm-0".to_string()), "its holders too");
    let row = |name: &str, w: f64| IostatX {
        disk_device: name.into(),
        w_s: w,
        ..Default::default()
    };
    // The other host's figures for a device of the same name change nothing here.
    a.on_host_stats("root@db2:2222", Ok(vec![row("sda2", 999.0)]));
    assert!(a.diskstats.is_empty(), "{:?}", a.diskstats);
    a.on_host_stats("db1", Ok(vec![row("sda2", 12.0), row("sdb", 5.0)]));
    let shown: Vec<_> = a
        .diskstats
        .iter()
        .map(|x| (x.disk_device.clone(), x.w_s))
        .collect();
    println!("shown: {shown:?}");
    assert_eq!(shown, [("sda2".to_string(), 12.0)]);
    // Moving to another host's device shows that host's latest report.
    select(&mut a, "root@db2:2222", "nvme0n2");
    assert!(a.diskstats.is_empty(), "{:?}", a.diskstats);
    a.on_host_stats("root@db2:2222", Ok(vec![row("nvme0n2", 7.0)]));
    assert_eq!(a.diskstats.len(), 1);
    assert_eq!(a.diskstats[0].w_s, 7.0);
}

#[test]
fn the_same_safety_dialogs_then_the_hosts_blkscope_runs_it() {
    let mut a = three_hosts();
    // Blocked on db1 (mounted): refused here, nothing sent.
    select(&mut a, "db1", "sda1");
    assert_eq!(a.target().safety, WriteSafety::Blocked);
    assert_eq!(a.on_key(ch('r')), Action::None);
    assert!(
        matches!(&a.overlay, Overlay::Refused { device, .. } if device == "sda1"),
        "{:?}",
        a.overlay
    );
    a.on_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));

    // Confirm on db2 (an ext4 signature): the name must be typed, then the host runs it with
    // --confirm.
    select(&mut a, "root@db2:2222", "nvme0n2");
    assert_eq!(a.target().safety, WriteSafety::Confirm);
    assert_eq!(a.on_key(ch('r')), Action::None);
    assert!(matches!(&a.overlay, Overlay::Confirm { device, .. } if device == "nvme0n2"));
    for c in "nvme0n1".chars() {
        a.on_key(ch(c));
    }
    assert_eq!(
        a.on_key(enter()),
        Action::None,
        "the wrong name starts nothing"
    );
    for _ in 0..7 {
        a.on_key(KeyEvent::new(KeyCode::Backspace, KeyModifiers::NONE));
    }
    for c in "nvme0n2".chars() {
        a.on_key(ch(c));
    }
    let act = a.on_key(enter());
    println!("{act:?}");
    let Action::StartRemote { host, args } = act else {
        panic!("not a remote start: {act:?}");
    };
    assert_eq!(host, "root@db2:2222");
    assert_eq!(&args[..2], ["run", "/dev/nvme0n2"]);
    let confirm = args
        .iter()
        .position(|x| x == "--confirm")
        .expect("--confirm");
    assert_eq!(args[confirm + 1], "nvme0n2");
    assert!(args.contains(&"--ndjson".to_string()));
    assert_eq!(a.screen, Screen::Run);
    assert_eq!(a.run.as_ref().unwrap().target, "root@db2:2222:nvme0n2");

    // Clear on db1 (blank): no dialog, no --confirm.
    a.screen = Screen::Main;
    select(&mut a, "db1", "sdb");
    assert_eq!(a.target().safety, WriteSafety::Clear);
    let Action::StartRemote { host, args } = a.on_key(ch('r')) else {
        panic!("a clear device starts at once")
    };
    assert_eq!(host, "db1");
    assert!(!args.contains(&"--confirm".to_string()), "{args:?}");
}

/// What `blkscope run DIR --ndjson` really prints, run here on a scratch file.
fn real_ndjson_run() -> (String, String, blkscope::engine::job::Job) {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_blkscope"))
        .env("XDG_DATA_HOME", dir.path().join("data"))
        .args(["run", dir.path().to_str().unwrap()])
        .args(["--op", "write", "--bs", "64k", "--size", "4M", "--ndjson"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    let job = blkscope::engine::job::Job {
        bs: 65536,
        size: Some(blkscope::engine::job::SizeSpec::Bytes(4 << 20)),
        ..Default::default()
    };
    (stdout, stderr, job)
}

#[test]
fn a_finished_remote_run_becomes_a_result_and_its_writes_are_remembered() {
    let (stdout, stderr, job) = real_ndjson_run();
    let done = RemoteDone::parse(&stdout, &stderr, &job).unwrap();
    println!("saved as {:?}; {} test(s)", done.saved_id, done.tests.len());
    assert_eq!(done.tests.len(), 1);
    assert!(
        done.saved_id.is_some(),
        "the id from 'saved PATH': {stderr}"
    );
    let (_, _, res, moved) = &done.tests[0];
    assert_eq!(*moved, Some(4 << 20));
    assert!(res.bytes_per_sec > 0.0 && res.iops > 0.0);

    let mut a = three_hosts();
    select(&mut a, "db1", "sdb");
    let Action::StartRemote { args, .. } = a.on_key(ch('r')) else {
        panic!()
    };
    assert!(!args.contains(&"--confirm".to_string()));
    // As the host said of a blank block device it wrote to.
    let mut done = done;
    done.write_safety = Some(WriteSafety::Clear);
    if let Some(t) = done.target.as_mut() {
        t.kind = "block".into();
    }
    a.on_remote_finished(Ok(done));
    let row = a.results.last().unwrap();
    println!(
        "{} {} {:?} {:?}",
        row.test,
        row.target,
        row.saved_id,
        row.figures()
    );
    assert_eq!(a.screen, Screen::Results);
    assert_eq!(row.target, "db1:sdb");
    assert!(row.saved_id.as_deref().unwrap().starts_with("db1:"));
    assert!(row.figures().unwrap().mb_s > 0.0);
    assert!(row.fio.contains("--filename=/dev/sdb"), "{}", row.fio);
    // Its time series came with it: `g` draws its charts as for a run here.
    println!("{} samples", row.samples().len());
    assert!(!row.samples().is_empty());
    a.on_key(ch('g'));
    let s = screen(&a);
    println!("{s}");
    assert!(
        s.contains("MB/s") && !s.contains("no time series"),
        "the charts of a run on a host"
    );
    // The data on sdb is now the session's own: the next write needs no typing, and the host
    // is told so.
    a.screen = Screen::Main;
    let Action::StartRemote { args, .. } = a.on_key(ch('r')) else {
        panic!()
    };
    println!("{args:?}");
    let i = args
        .iter()
        .position(|x| x == "--confirm")
        .expect("--confirm");
    assert_eq!(args[i + 1], "sdb");
    // ... but only on that host: the same name on another host is another disk.
    a.screen = Screen::Main;
    a.on_host_tree("root@db2:2222", Ok(tree("lvm-on-partition")));
    select(&mut a, "root@db2:2222", "sdb");
    let Action::StartRemote { args, .. } = a.on_key(ch('r')) else {
        panic!()
    };
    assert!(!args.contains(&"--confirm".to_string()), "{args:?}");
}

#[test]
fn a_refused_or_failed_remote_run_says_why() {
    let mut a = three_hosts();
    select(&mut a, "db1", "sdb");
    a.on_key(ch('r'));
    // The host found data the list did not show: ask for the name, as for any such device.
    a.on_remote_needs_confirm("db1: blkscope: /dev/sdb carries data; add --confirm sdb to go on");
    assert_eq!(a.screen, Screen::Main);
    assert!(matches!(&a.overlay, Overlay::Confirm { device, .. } if device == "sdb"));
    assert!(a.status.as_deref().unwrap().contains("carries data"));
    a.on_key(KeyEvent::new(KeyCode::Esc, KeyModifiers::NONE));
    a.on_key(ch('r'));
    a.on_remote_finished(Err("db1: Connection closed by remote host".into()));
    let row = a.results.last().unwrap();
    assert_eq!(
        row.error.as_deref(),
        Some("db1: Connection closed by remote host")
    );
    // Printed results that cannot be read are an error, not a row of zeros.
    assert!(RemoteDone::parse("not json\n", "", &Default::default()).is_err());
}

/// A sweep run on a host shows its sweep in the results as one run here does: each row knows
/// its series and its point.
#[test]
fn a_sweep_on_a_host_shows_its_sweep() {
    let (stdout, stderr, job) = real_ndjson_run();
    let mut done = RemoteDone::parse(&stdout, &stderr, &job).unwrap();
    let (name, job, res, moved) = done.tests[0].clone();
    done.tests = [(1, 10_000.0), (4, 40_000.0), (16, 42_000.0)]
        .into_iter()
        .map(|(qd, iops)| {
            let mut r = res.clone();
            r.iops = iops;
            let mut j = job.clone();
            j.iodepth = qd;
            (format!("{name} QD{qd}"), j, r, moved)
        })
        .collect();
    let mut a = three_hosts();
    select(&mut a, "db1", "sdb");
    let Action::StartRemote { .. } = a.on_key(ch('r')) else {
        panic!()
    };
    a.on_remote_finished(Ok(done));
    let points: Vec<Option<(usize, usize)>> = a
        .results
        .iter()
        .map(|r| r.sweep.as_ref().map(|(s, i)| (s.points.len(), *i)))
        .collect();
    println!("{points:?}");
    assert_eq!(points, [Some((3, 0)), Some((3, 1)), Some((3, 2))]);
    let s = screen(&a);
    println!("{s}");
    assert!(s.contains("sweep: write by iodepth"), "{s}");
}
