//! The diskstats findings, through `analyze`, from counters and traces made up here.

use super::util::others_busy;
use super::*;
use crate::analysis::traced::{SubmitterIo, TraceSummary};
use crate::engine::job::{Mode, Op};
use crate::trace::tally::Who;

#[test]
fn flushes_a_direct_test_did_not_ask_for_say_whose_they_may_be() {
    let d = Counters {
        writes: 512,
        sectors_written: 4096,
        flushes: 300,
        ..Default::default()
    };
    let moved = Moved {
        read_bytes: 0,
        write_bytes: 131_072,
    };
    let mut a = act(d, 2.0);
    a.traced = Some(crate::analysis::traced::TraceSummary::off("--no-trace"));
    let f = analyze(&job(Op::Write, 4096, Mode::Direct), moved, &a, 4096);
    let fl = f.iter().find(|f| f.kind == "flushes").expect("flushes");
    println!("{}", fl.message);
    assert!(
        fl.message
            .contains("this test's mode asks for none, and another process may have asked")
            && fl
                .message
                .contains("not traced: --no-trace; whose flushes these were cannot be told")
            && fl.message.contains(
                "each makes the drive write its volatile cache (write cache: write back) before"
            ),
        "{}",
        fl.message
    );
    // On a loop device, in its words: a flush syncs the backing file; a sync test's
    // write-cache note speaks of the file, not of a drive.
    a.loop_device = true;
    let f = analyze(&job(Op::Write, 4096, Mode::Dsync), moved, &a, 4096);
    let words: Vec<&str> = f
        .iter()
        .filter(|f| f.kind == "flushes" || f.kind == "write_cache")
        .map(|f| f.message.as_str())
        .collect();
    println!("{words:#?}");
    assert_eq!(words.len(), 2, "{words:?}");
    assert!(
        words.iter().all(|m| !m.contains("the drive"))
            && words[0]
                .contains("until loop0 has synced its backing file (write cache: write back)"),
        "{words:?}"
    );
}

#[test]
fn another_process_busy_on_the_device_is_named_beside_util() {
    let with = |other: u64| {
        let mut a = act(Counters::default(), 2.0);
        a.traced = Some(traced_throughout(vec![
            io(Who::Test, "blkscope", 10, 100 << 20),
            io(Who::Other, "dd", 4503, other),
        ]));
        others_busy(&a, "loop0", &mut Evidence::new())
    };
    let m = with(300 << 20);
    println!("{m}");
    assert!(
        m.contains("Other processes moved 300M of the 400M on loop0")
            && m.contains("dd (pid 4503) 300M"),
        "{m}"
    );
    assert_eq!(with(5 << 20), "", "under a tenth: the test's, near enough");
    assert_eq!(
        others_busy(
            &act(Counters::default(), 2.0),
            "loop0",
            &mut Evidence::new()
        ),
        "",
        "no trace"
    );
}

#[test]
fn a_sync_tests_flushes_are_the_traces_count_not_a_share_of_merged_ones() {
    // 64 dsync writes beside a dd sending 1005 flushes, as a fresh CI run's finding named
    // them; its 46 are 770 x 64 / 1069: diskstats counted fewer flush requests than the
    // trace's flush bios (the kernel merges flushes sent together into one request).
    let j = job(Op::Write, 1 << 20, Mode::Dsync);
    let d = Counters {
        writes: 64 + 1005,
        sectors_written: 64 * 2048,
        flushes: 770,
        ms_flushing: 120,
        ..Default::default()
    };
    let flushes = |traced: TraceSummary| {
        let mut a = act(d, 0.25);
        a.traced = Some(traced);
        let moved = Moved {
            read_bytes: 0,
            write_bytes: 64 << 20,
        };
        let f = analyze(&j, moved, &a, 4096);
        let fl = f.iter().find(|f| f.kind == "flushes").expect("flushes");
        println!("{}", fl.message);
        fl.numbers.num("flushes")
    };
    let mut test = io(Who::Test, "blkscope", 10, 0);
    test.flushes = 64;
    let mut dd = io(Who::Other, "dd", 4503, 0);
    dd.flushes = 1005;
    // Throughout: the test's 64, where a share of diskstats' said 46.
    assert_eq!(
        flushes(traced_throughout(vec![test.clone(), dd.clone()])),
        64.0
    );
    // In windows too (the summary's flushes scaled to the run with its writes): the test's
    // 64, where the share of diskstats' these windows saw said 46 (and in tests/trace.rs'
    // runs, 20 and 94).
    let windows = TraceSummary {
        mode: "sampled",
        windows: 2,
        ..traced_throughout(vec![test, dd])
    };
    assert_eq!(flushes(windows), 64.0);
}

#[test]
fn a_live_samples_flushes_are_the_tests_so_far_not_the_last_reads() {
    // The trace was last read when the test had written 32M with 32 flushes; the engine has
    // written 128M now, and diskstats counted 140 flushes: the sample says 128, where it said
    // the last read's 32 beside this moment's rates (57 at 1.0 s of a test that had sent 2145).
    let j = job(Op::Write, 1 << 20, Mode::Dsync);
    let d = Counters {
        writes: 128,
        sectors_written: 128 * 2048,
        flushes: 140,
        ms_flushing: 20,
        ..Default::default()
    };
    let mut test = io(Who::Test, "blkscope", 10, 0);
    (test.write_bytes, test.flushes) = (32 << 20, 32);
    let mut a = act(d, 1.0);
    a.traced = Some(traced_throughout(vec![test]));
    let moved = Moved {
        read_bytes: 0,
        write_bytes: 128 << 20,
    };
    let f = analyze(&j, moved, &a, 4096);
    let fl = f.iter().find(|f| f.kind == "flushes").expect("flushes");
    println!("{}", fl.message);
    assert_eq!(fl.numbers.num("flushes"), 128.0, "{}", fl.message);
}

/// What `pid` (`comm`) read on loop0, as a trace's submitter.
fn io(who: Who, comm: &str, pid: u32, read_bytes: u64) -> SubmitterIo {
    SubmitterIo {
        device: "loop0".into(),
        disk: None,
        backing_file_of: None,
        who,
        pid,
        comm: comm.into(),
        read_bytes,
        write_bytes: 0,
        ios: 1,
        flushes: 0,
        ancestors: Vec::new(),
        weight: 1.0,
    }
}

/// A 2 s test traced throughout, its submitters `submitters`.
fn traced_throughout(submitters: Vec<SubmitterIo>) -> TraceSummary {
    TraceSummary {
        mode: "on",
        why: None,
        seconds: 2.0,
        of_seconds: 2.0,
        windows: 1,
        read_as: Some("pages"),
        events: 10,
        submitters,
        ..TraceSummary::off("")
    }
}

fn act(d: Counters, seconds: f64) -> Activity {
    Activity {
        devices: vec![("loop0".into(), d)],
        seconds,
        stats_off: vec![],
        logical_block_size: 4096,
        write_cache: Some("write back".into()),
        in_ram: false,
        loop_device: false,
        below_count: 1,
        fs_block: None,
        other_read_bytes: Some(0.0),
        ended: true,
        traced: None,
    }
}

pub(in crate::analysis::findings) fn job(op: Op, bs: u64, mode: Mode) -> Job {
    Job {
        op,
        bs,
        mode,
        ..Job::default()
    }
}

#[test]
fn rmw_for_small_buffered_writes() {
    // 100 MB written in 512-byte buffered writes; the device read 100 MB in 4 KiB reads.
    let d = Counters {
        reads: 25_000,
        sectors_read: 200_000,
        writes: 1000,
        sectors_written: 200_000,
        ..Default::default()
    };
    let moved = Moved {
        read_bytes: 0,
        write_bytes: 102_400_000,
    };
    let f = analyze(
        &job(Op::Write, 512, Mode::Fdatasync),
        moved,
        &act(d, 2.0),
        4096,
    );
    let rmw = f
        .iter()
        .find(|f| f.kind == "read_modify_write")
        .expect("rmw");
    assert_eq!(rmw.numbers["device_read_bytes"], 102_400_000.0);
    assert!(rmw.message.contains("--bs 4K"), "{}", rmw.message);
    assert!(rmw.message.contains("part of a 4096-byte page-cache block"));
    // In a file on a file system with 1K blocks, the block it reads is the file system's.
    let mut a = act(d, 2.0);
    a.fs_block = Some(FsBlock {
        fs: Some("ext4".into()),
        size: 1024,
        unwritten: false,
    });
    let f = analyze(&job(Op::Write, 512, Mode::Fdatasync), moved, &a, 4096);
    let rmw = f.iter().find(|f| f.kind == "read_modify_write").unwrap();
    println!("{}", rmw.message);
    assert!(
        rmw.message.contains("part of a 1024-byte block of ext4")
            && rmw.message.contains("multiple of 1024 (--bs 1K)"),
        "{}",
        rmw.message
    );
    // Other processes that read half as much or more may have made the reads.
    let mut a = act(d, 2.0);
    a.other_read_bytes = Some(60e6);
    let f = analyze(&job(Op::Write, 512, Mode::Fdatasync), moved, &a, 4096);
    let rmw = f.iter().find(|f| f.kind == "read_modify_write").unwrap();
    assert!(
        rmw.message.ends_with(
            "so some or all of these reads may be theirs: run it again when they are done."
        ),
        "{}",
        rmw.message
    );
    assert_eq!(rmw.numbers["other_read_bytes"], 60e6);
    a.other_read_bytes = Some(10e6);
    let f = analyze(&job(Op::Write, 512, Mode::Fdatasync), moved, &a, 4096);
    let rmw = f.iter().find(|f| f.kind == "read_modify_write").unwrap();
    assert!(!rmw.message.contains("may be theirs"), "{}", rmw.message);
    assert!(!rmw.numbers.contains_key("other_read_bytes"));
    // No reads at 4 KiB: no finding.
    let d = Counters {
        writes: 1000,
        sectors_written: 200_000,
        ..Default::default()
    };
    let f = analyze(
        &job(Op::Write, 4096, Mode::Fdatasync),
        moved,
        &act(d, 2.0),
        4096,
    );
    assert!(f.iter().all(|f| f.kind != "read_modify_write"));
    // Reads during a read test are not read-modify-write.
    let d = Counters {
        reads: 25_000,
        sectors_read: 200_000,
        ..Default::default()
    };
    let f = analyze(
        &job(Op::Read, 512, Mode::Buffered),
        moved,
        &act(d, 2.0),
        4096,
    );
    assert!(f.iter().all(|f| f.kind != "read_modify_write"));
}

/// Read-modify-write with a trace that names two other readers: each one's pid and bytes
/// are the evidence's (a fresh-clone CI run named "cargo (pid 21294) read 104K" with
/// neither in it, and the sentence check stopped the test).
#[test]
fn other_readers_beside_traced_rmw_are_named_from_the_evidence() {
    let d = Counters {
        reads: 25_000,
        sectors_read: 200_000,
        writes: 1000,
        sectors_written: 200_000,
        ..Default::default()
    };
    let mut a = act(d, 2.0);
    a.traced = Some(traced_throughout(vec![
        io(Who::Test, "blkscope", 10, 90 << 20),
        io(Who::Other, "dd", 4503, 6 << 20),
        io(Who::Other, "cat", 4510, 3 << 20),
    ]));
    let moved = Moved {
        read_bytes: 0,
        write_bytes: 102_400_000,
    };
    let f = analyze(&job(Op::Write, 512, Mode::Fdatasync), moved, &a, 4096);
    let rmw = f.iter().find(|f| f.kind == "read_modify_write").unwrap();
    println!("{} {:?}", rmw.message, rmw.numbers);
    assert!(
        rmw.message
            .contains("dd (pid 4503) read 6M, cat (pid 4510) read 3M"),
        "{}",
        rmw.message
    );
    assert_eq!(
        super::super::told::unexplained(&rmw.message, &rmw.numbers),
        Vec::<String>::new()
    );
}

#[test]
fn a_little_foreign_reading_is_not_rmw() {
    // 264 KiB read by another program's probe while 16 MiB were written.
    let d = Counters {
        reads: 3,
        sectors_read: 528,
        writes: 4096,
        sectors_written: 32768,
        ..Default::default()
    };
    let moved = Moved {
        read_bytes: 0,
        write_bytes: 16 << 20,
    };
    let f = analyze(
        &job(Op::Randwrite, 4096, Mode::Direct),
        moved,
        &act(d, 1.0),
        4096,
    );
    assert!(f.iter().all(|f| f.kind != "read_modify_write"), "{f:?}");
}

#[test]
fn flushes_and_util() {
    let d = Counters {
        writes: 512,
        sectors_written: 4096,
        flushes: 256,
        ms_flushing: 128,
        io_ticks: 1990,
        weighted_ms: 2000,
        ..Default::default()
    };
    let moved = Moved {
        read_bytes: 0,
        write_bytes: 131_072,
    };
    let f = analyze(&job(Op::Write, 512, Mode::Dsync), moved, &act(d, 2.0), 4096);
    let fl = f.iter().find(|f| f.kind == "flushes").expect("flushes");
    assert_eq!(fl.numbers["flushes"], 256.0);
    assert_eq!(fl.numbers["f/s"], 128.0);
    assert_eq!(fl.numbers["f_await"], 0.5);
    assert!(fl.message.contains("O_DSYNC"));
    let wc = f
        .iter()
        .find(|f| f.kind == "write_cache")
        .expect("write_cache");
    assert!(
        wc.message.contains("volatile write cache"),
        "{}",
        wc.message
    );
    assert_eq!(wc.numbers["write_back"], 1.0);
    let u = f
        .iter()
        .find(|f| f.kind == "util_saturation")
        .expect("util");
    assert!(u.message.contains("not capacity"), "{}", u.message);
    assert!(u.message.contains("--iodepth 32"), "{}", u.message);
    assert_eq!(u.numbers["util"], 99.5);
    // The same device figures under a test that kept 8 in flight: the depth did not reach
    // the device, so a deeper queue is not the advice.
    let mut deep = job(Op::Write, 512, Mode::Dsync);
    deep.iodepth = 8;
    let f = analyze(&deep, moved, &act(d, 2.0), 4096);
    let u = f
        .iter()
        .find(|f| f.kind == "util_saturation")
        .expect("util");
    println!("{}", u.message);
    assert!(
        u.message
            .contains("kept 8 I/Os in flight, yet the device had 1.0")
            && u.message.contains("--jobs N")
            && !u.message.contains("--iodepth 32"),
        "{}",
        u.message
    );
}

/// A sync write on zram or a RAM disk: the cache setting means no flush, not durability.
#[test]
fn sync_writes_to_ram_are_not_durable() {
    let d = Counters {
        writes: 512,
        sectors_written: 4096,
        io_ticks: 10,
        ..Default::default()
    };
    let moved = Moved {
        read_bytes: 0,
        write_bytes: 2_097_152,
    };
    let mut a = act(d, 1.0);
    a.write_cache = Some("write through".into());
    a.in_ram = true;
    let f = analyze(&job(Op::Write, 4096, Mode::Dsync), moved, &a, 4096);
    let wc = f
        .iter()
        .find(|f| f.kind == "write_cache")
        .expect("write_cache");
    println!("{}", wc.message);
    assert!(
        wc.message.contains("in RAM") && wc.message.contains("power loss"),
        "{}",
        wc.message
    );
    assert!(!wc.message.contains("reach the media"), "{}", wc.message);
    assert_eq!(wc.numbers["in_ram"], 1.0);
    assert!(crate::device::in_ram("zram1") && crate::device::in_ram("ram0"));
    assert!(!crate::device::in_ram("sda") && !crate::device::in_ram("loop0"));
}

#[test]
fn page_cache_and_stats_off() {
    let d = Counters {
        writes: 10,
        sectors_written: 2048,
        ..Default::default()
    };
    let moved = Moved {
        read_bytes: 0,
        write_bytes: 64 << 20,
    };
    let f = analyze(
        &job(Op::Write, 1 << 20, Mode::Buffered),
        moved,
        &act(d, 1.0),
        4096,
    );
    let pc = f
        .iter()
        .find(|f| f.kind == "page_cache")
        .expect("page_cache");
    // The fix is options the command line takes.
    assert!(
        pc.message
            .contains("Use --mode fdatasync (dd conv=fdatasync) or --mode direct."),
        "{}",
        pc.message
    );
    // With the sync, what was written reached the device.
    let synced = Counters {
        writes: 64,
        sectors_written: 64 * 2048,
        ..Default::default()
    };
    let f = analyze(
        &job(Op::Write, 1 << 20, Mode::Fdatasync),
        moved,
        &act(synced, 1.0),
        4096,
    );
    assert!(f.iter().all(|f| f.kind != "page_cache"), "{f:?}");
    let mut a = act(d, 1.0);
    a.stats_off = vec!["loop0".into()];
    let f = analyze(&job(Op::Write, 1 << 20, Mode::Buffered), moved, &a, 4096);
    assert_eq!(f.len(), 1);
    assert_eq!(f[0].kind, "stats_off");
}

#[test]
fn a_neighbours_writes_do_not_hide_the_page_cache_trap_traced_throughout_or_in_windows() {
    // 64M written by the test into the page cache; 96M reached loop0 by diskstats, 8M of it
    // the kernel's writeback and the rest dd's.
    let d = Counters {
        writes: 96,
        sectors_written: 96 * 2048,
        ..Default::default()
    };
    let moved = Moved {
        read_bytes: 0,
        write_bytes: 64 << 20,
    };
    let writer = |who, comm, pid, mib: u64| SubmitterIo {
        write_bytes: mib << 20,
        ..io(who, comm, pid, 0)
    };
    let page_cache = |t: Option<TraceSummary>| {
        let mut a = act(d, 1.0);
        a.traced = t;
        let f = analyze(&job(Op::Write, 1 << 20, Mode::Buffered), moved, &a, 4096);
        f.into_iter().find(|f| f.kind == "page_cache")
    };
    assert!(page_cache(None).is_none(), "untraced, dd's writes hide it");
    // Traced throughout: the figures are the trace's.
    let on = traced_throughout(vec![
        writer(Who::Kernel, "kworker/u8:2", 90, 8),
        writer(Who::Other, "dd", 4503, 88),
    ]);
    let pc = page_cache(Some(on.clone())).expect("page_cache traced throughout");
    println!("{}", pc.message);
    assert_eq!(pc.numbers["device_write_bytes"], (8 << 20) as f64);
    assert_eq!(pc.numbers["others_write_bytes"], (88 << 20) as f64);
    assert!(
        pc.message
            .starts_with("only 8M of the 64M written reached loop0")
            && pc.message.contains(
                "(The block layer's trace: other processes wrote 88M there meanwhile, not \
                 counted.)"
            ),
        "{}",
        pc.message
    );
    // In windows: the windows saw 2M of the kernel's and 22M of dd's; diskstats' 96M is
    // shared as they saw it.
    let windows = TraceSummary {
        mode: "sampled",
        windows: 3,
        seconds: 0.3,
        submitters: vec![
            writer(Who::Kernel, "kworker/u8:2", 90, 2),
            writer(Who::Other, "dd", 4503, 22),
        ],
        ..on.clone()
    };
    let pc = page_cache(Some(windows.clone())).expect("page_cache in windows");
    println!("{}", pc.message);
    assert_eq!(pc.numbers["device_write_bytes"], (8 << 20) as f64);
    assert_eq!(pc.numbers["others_write_bytes"], (88 << 20) as f64);
    assert_eq!(pc.numbers["trace_windows"], 3.0);
    assert!(
        pc.message.contains(
            "(The block layer's trace, in 3 windows over the run, each process's share of them \
             taken for the whole run: other processes wrote 88M there meanwhile, not counted.)"
        ),
        "{}",
        pc.message
    );
    // Windows that saw no writes cannot say whose diskstats' were: no trap claimed.
    let none = TraceSummary {
        submitters: vec![],
        ..windows
    };
    assert!(page_cache(Some(none)).is_none());
}

/// A 16M region written for 2 s with `--mode fdatasync`: the run wrapped around it many times
/// and its final fdatasync wrote each block once (by hand: "33.7G in 2.008 s", 16M reached
/// loop0, no word said before).
#[test]
fn a_timed_fdatasync_run_that_rewrote_its_region_in_the_cache_is_the_page_cache_trap() {
    let d = Counters {
        writes: 16,
        sectors_written: 16 * 2048,
        ..Default::default()
    };
    let moved = Moved {
        read_bytes: 0,
        write_bytes: 3 << 30,
    };
    let j = job(Op::Write, 64 << 10, Mode::Fdatasync);
    let mut a = act(d, 2.0);
    let pc = analyze(&j, moved, &a, 4096)
        .into_iter()
        .find(|f| f.kind == "page_cache")
        .expect("page_cache");
    println!("{}", pc.message);
    assert_eq!(pc.numbers["device_write_bytes"], (16 << 20) as f64);
    assert!(
        pc.message.starts_with(
            "only 16M of the 3G written reached loop0 while the test ran: the test wrote the \
             same blocks again and again (a timed run wraps around its region) and the final \
             fdatasync wrote only the last copy of each"
        ) && pc.message.contains("Give a --size without --runtime"),
        "{}",
        pc.message
    );
    // While it runs its sync is still to come: nothing is judged.
    a.ended = false;
    let live = analyze(&j, moved, &a, 4096);
    assert!(live.iter().all(|f| f.kind != "page_cache"), "{live:?}");
    // One pass: what it wrote reached the device.
    a.ended = true;
    let once = Moved {
        read_bytes: 0,
        write_bytes: 16 << 20,
    };
    let f = analyze(&j, once, &a, 4096);
    assert!(f.iter().all(|f| f.kind != "page_cache"), "{f:?}");
}

/// A 16M region read for 2 s with `--mode nocache` (by hand: 41.1G at 22 GB/s, 18.6M of it
/// from loop0, nothing said before): the cache is emptied before the run, not between passes.
/// A reader of the same device does not hide it where the trace says whose the reads were.
#[test]
fn reads_that_memory_served_are_the_page_cache_trap_whatever_a_neighbour_read() {
    let d = Counters {
        reads: 300,
        sectors_read: 1040 * 2048,
        ..Default::default()
    };
    let moved = Moved {
        read_bytes: 41 << 30,
        write_bytes: 0,
    };
    let pc = |mode, t: Option<TraceSummary>| {
        let mut a = act(d, 2.0);
        a.ended = false;
        a.traced = t;
        let f = analyze(&job(Op::Read, 64 << 10, mode), moved, &a, 4096);
        f.into_iter().find(|f| f.kind == "page_cache")
    };
    assert!(
        pc(Mode::Direct, None).is_none(),
        "direct reads are the device's"
    );
    let trace = traced_throughout(vec![
        io(Who::Test, "blkscope", 7, 16 << 20),
        io(Who::Other, "dd", 4503, 1 << 30),
    ]);
    let f = pc(Mode::Nocache, Some(trace.clone())).expect("page_cache, live too");
    println!("{}", f.message);
    assert_eq!(f.numbers["device_read_bytes"], (16 << 20) as f64);
    assert_eq!(f.numbers["others_read_bytes"], (1 << 30) as f64);
    assert!(
        f.message.starts_with(
            "only 16M of the 41G read came from loop0 while the test ran: the rest came from the \
             page cache, which --mode nocache empties before the run only"
        ) && f
            .message
            .contains("other processes read 1G there meanwhile, not counted.)"),
        "{}",
        f.message
    );
    let f = pc(Mode::Buffered, Some(trace)).expect("buffered");
    assert!(
        f.message
            .contains("Use --mode nocache (one pass over a region) or --mode direct."),
        "{}",
        f.message
    );
    // A file on btrfs may be read from a mirror on another device: not judged; on ext4 it is.
    for (fs, said) in [("btrfs", false), ("ext4", true)] {
        let mut a = act(d, 2.0);
        a.fs_block = Some(crate::engine::target::FsBlock {
            fs: Some(fs.into()),
            size: 4096,
            unwritten: false,
        });
        let f = analyze(&job(Op::Read, 64 << 10, Mode::Nocache), moved, &a, 4096);
        assert_eq!(
            f.iter().any(|f| f.kind == "page_cache"),
            said,
            "{fs}: {f:?}"
        );
    }
    // A region read once (1G, of which diskstats counted 1040M read, readahead's too): not.
    let once = Moved {
        read_bytes: 1 << 30,
        write_bytes: 0,
    };
    let mut a = act(d, 2.0);
    a.traced = None;
    let f = analyze(&job(Op::Read, 64 << 10, Mode::Nocache), once, &a, 4096);
    assert!(f.iter().all(|f| f.kind != "page_cache"), "{f:?}");
}
