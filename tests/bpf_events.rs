//! The trace's events from BPF programs (`trace::bpf::events`) on real loop devices: a dd's
//! bios queued, issued and completed, each with its device, sector, size and direction as
//! tracefs records them; the dd's fork and exit; nothing from a device not asked for, nor while
//! the switch is off; the programs gone with the events. Each test runs the block programs
//! both ways they read the kernel's structs (`Style`), and the default is the typed one where
//! the kernel can check it.

mod common;

use blkscope::trace::bpf::events::{
    Events, Filter, LIVES, Layout, QUEUE, REQUESTS, Record, Style, Which,
};
use common::*;

const MIB: u64 = 1 << 20;

/// One test at a time: each checks that the process's BPF descriptors go with its `Events`,
/// and the other's would be among them (a CI run failed so).
static ONE: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE.lock().unwrap_or_else(|e| e.into_inner())
}

fn devno((major, minor): (u32, u32)) -> u32 {
    (major << 20) | minor
}

/// The programs for `filter` in `style`, or None (a skip, said) where the kernel will not run
/// them outside CI, or (typed) where it is older than the cast they need.
fn start(filter: &Filter, style: Style) -> Option<Events> {
    if style == Style::Typed && Layout::of_kernel().is_ok_and(|l| !l.typed()) {
        eprintln!("SKIPPED (typed): this kernel's BTF has no bpf_rdonly_cast (before 6.2)");
        return None;
    }
    match Events::start_with(filter, 1 << 20, style) {
        Ok(e) => Some(e),
        Err(e) if !required() => {
            eprintln!("SKIPPED: the kernel would not run the trace's programs: {e}");
            None
        }
        Err(e) => panic!("the trace's programs: {e}"),
    }
}

/// Every record the ring holds.
fn drained(e: &mut Events) -> Vec<Record> {
    let mut v = Vec::new();
    while e.drain(usize::MAX, |r| v.push(r)) {}
    v
}

/// `test` for each style, one test at a time, where loop devices and dd can be had.
fn each_style(test: fn(Style)) {
    if !require(true, &["losetup", "dd"]) {
        return;
    }
    let _one = one_at_a_time();
    for style in [Style::Typed, Style::Raw] {
        println!("--- {style:?}");
        test(style);
    }
}

/// Where the kernel can check typed programs, they are what the trace loads.
#[test]
fn the_programs_are_typed_where_the_kernel_can_check_them() {
    if !require(true, &[]) {
        return;
    }
    let _one = one_at_a_time();
    let typed = Layout::of_kernel().is_ok_and(|l| l.typed());
    let got = Events::start(&Filter::default(), 1 << 16).map(|e| e.style);
    println!("the kernel has bpf_rdonly_cast: {typed}; the default loaded {got:?}");
    let want = if typed { Style::Typed } else { Style::Raw };
    assert_eq!(got.ok(), Some(want));
}

#[test]
fn a_dds_bios_and_life_are_recorded_as_tracefs_would() {
    each_style(dds_bios_and_life);
}

fn dds_bios_and_life(style: Style) {
    let (a, b) = (
        Loop::new(64 * MIB, None, false),
        Loop::new(64 * MIB, None, false),
    );
    let (da, db) = (devno(dev_of(&a.name)), devno(dev_of(&b.name)));
    let filter = Filter {
        whole: vec![da],
        ranges: Vec::new(),
    };
    let Some(mut events) = start(&filter, style) else {
        return;
    };
    println!("layout: {:?}", events.layout);
    let before = dd(&format!(
        "if={} of=/dev/null bs=64k count=5 iflag=direct",
        a.dev()
    ));
    events.set(QUEUE | REQUESTS | LIVES).unwrap();
    let reader = dd(&format!(
        "if={} of=/dev/null bs=64k count=10 skip=3 iflag=direct",
        a.dev()
    ));
    let writer = dd(&format!(
        "if=/dev/zero of={} bs=4k count=6 oflag=direct,dsync",
        a.dev()
    ));
    let elsewhere = dd(&format!(
        "if={} of=/dev/null bs=64k count=10 iflag=direct",
        b.dev()
    ));
    events.set(0).unwrap();
    let after = dd(&format!(
        "if={} of=/dev/null bs=64k count=5 iflag=direct",
        a.dev()
    ));
    let got = drained(&mut events);
    let flags = events.layout.flags;
    let letters = |r: &Record| {
        let mut b = [0u8; 8];
        let n = flags.rwbs(r.opf, &mut b);
        String::from_utf8_lossy(&b[..n]).into_owned()
    };
    for r in got.iter().take(60) {
        println!(
            "{:?} ts {} dev {}:{} {} {} + {} pid {} tgid {} {:?} child {}",
            r.which,
            r.ts_ns,
            r.dev >> 20,
            r.dev & 0xfffff,
            letters(r),
            r.sector,
            r.sectors,
            r.pid,
            r.tgid,
            String::from_utf8_lossy(&r.comm).trim_end_matches('\0'),
            r.child
        );
    }
    let of = |w: Which, pid: u32| -> Vec<&Record> {
        got.iter()
            .filter(|r| r.which == w && (pid == 0 || r.tgid == pid))
            .collect()
    };
    // The reader's ten 64K reads from sector 384 on, each one bio of 128 sectors.
    let queued = of(Which::Queue, reader);
    let sectors: Vec<u64> = queued.iter().map(|r| r.sector).collect();
    assert_eq!(sectors, (0..10).map(|i| 384 + 128 * i).collect::<Vec<_>>());
    assert!(
        queued
            .iter()
            .all(|r| r.dev == da && r.sectors == 128 && letters(r).starts_with('R'))
    );
    assert!(queued.iter().all(|r| r.comm.starts_with(b"dd\0")));
    // The writer's six writes, synchronous; dsync adds a flush after each (a preflush alone).
    let wrote: Vec<String> = of(Which::Queue, writer)
        .iter()
        .map(|r| letters(r))
        .collect();
    println!("the writer's bios: {wrote:?}");
    assert_eq!(
        wrote.iter().filter(|l| l.starts_with('W')).count(),
        6,
        "{wrote:?}"
    );
    // Every read's request issued and completed on the device, with its sector.
    for w in [Which::Issue, Which::Complete] {
        let at: Vec<u64> = of(w, 0)
            .iter()
            .filter(|r| r.dev == da && letters(r).starts_with('R'))
            .map(|r| r.sector)
            .collect();
        assert!(sectors.iter().all(|s| at.contains(s)), "{w:?} at {at:?}");
    }
    // Timestamps are the monotonic clock's, in order for each bio: queued, issued, completed.
    let first = sectors[0];
    let ts = |w: Which| {
        of(w, 0)
            .iter()
            .find(|r| r.sector == first && r.dev == da)
            .unwrap()
            .ts_ns
    };
    assert!(ts(Which::Queue) <= ts(Which::Issue) && ts(Which::Issue) <= ts(Which::Complete));
    // Each dd's fork and its exit.
    for pid in [reader, writer, elsewhere] {
        assert!(
            of(Which::Fork, 0).iter().any(|r| r.child == pid),
            "fork of {pid}"
        );
        assert!(
            of(Which::Exit, pid).iter().any(|r| r.pid == pid),
            "exit of {pid}"
        );
    }
    // Nothing from the other device, nor before the switch went on or after it went off.
    assert!(got.iter().all(|r| r.dev != db), "the other device");
    for pid in [elsewhere, before, after] {
        assert!(of(Which::Queue, pid).is_empty(), "{pid}'s bios");
    }
    assert_eq!(events.lost(), 0);
    assert!(!bpf_fds().is_empty());
    drop(events);
    assert_eq!(
        bpf_fds(),
        Vec::<String>::new(),
        "the programs went with the events"
    );
}

/// A filter's ranges keep a device's bios that start inside them and no others: before the
/// range (whose difference from its first sector wraps past it), at its end, and on another
/// device.
#[test]
fn a_ranges_bios_are_kept_and_no_others() {
    each_style(ranges_bios_kept);
}

fn ranges_bios_kept(style: Style) {
    let (a, b) = (
        Loop::new(64 * MIB, None, false),
        Loop::new(64 * MIB, None, false),
    );
    let (da, db) = (devno(dev_of(&a.name)), devno(dev_of(&b.name)));
    // Sectors 128-255 of b (the second 64K), and 1024-1151 (the ninth).
    let filter = Filter {
        whole: Vec::new(),
        ranges: vec![(db, 128, 256), (db, 1024, 1152)],
    };
    let Some(mut events) = start(&filter, style) else {
        return;
    };
    events.set(QUEUE).unwrap();
    let mut readers = Vec::new();
    for skip in [0, 1, 2, 7, 8, 9] {
        let args = format!(
            "if={} of=/dev/null bs=64k count=1 skip={skip} iflag=direct",
            b.dev()
        );
        readers.push(dd(&args));
    }
    let elsewhere = dd(&format!(
        "if={} of=/dev/null bs=64k count=1 skip=1 iflag=direct",
        a.dev()
    ));
    events.set(0).unwrap();
    let got = drained(&mut events);
    let kept: Vec<(u32, u64)> = got
        .iter()
        .filter(|r| r.which == Which::Queue)
        .map(|r| (r.dev, r.sector))
        .collect();
    println!("kept (device, sector): {kept:?}");
    assert_eq!(kept, [(db, 128), (db, 1024)]);
    assert!(got.iter().all(|r| r.tgid != elsewhere && r.dev != da));
}
