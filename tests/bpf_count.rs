//! Counting in the kernel (`trace::bpf`) on real loop devices: a dd's direct reads and writes
//! counted by its process, device and direction, exactly as dd did them; a device not asked
//! for not counted; nothing counted while switched off; the program gone with the counter.

mod common;

use blkscope::trace::bpf::{Counted, Counter};
use common::*;

const MIB: u64 = 1 << 20;

/// What `pid` did on `dev` in operation `op`: (bytes, bios).
fn by(c: &[Counted], pid: u32, dev: (u32, u32), op: u8) -> (u64, u64) {
    c.iter()
        .filter(|x| x.tgid == pid && x.dev == dev && x.op == op)
        .fold((0, 0), |(b, n), x| (b + x.bytes, n + x.bios))
}

/// What starting and ending a counter costs this thread (the BTF's offsets, the maps, the
/// verifier, the attach; the detach): medians of ten, printed for docs/architecture.md (`cargo
/// test --release --test bpf_count -- --nocapture`), not asserted.
fn cost_of_a_counter(dev: (u32, u32)) {
    let (mut start, mut end) = (Vec::new(), Vec::new());
    for _ in 0..10 {
        let t = thread_cpu();
        let c = Counter::start(&[dev]).unwrap();
        let t2 = thread_cpu();
        drop(c);
        start.push(t2 - t);
        end.push(thread_cpu() - t2);
    }
    let ms = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2] * 1e3
    };
    println!(
        "a counter's CPU, medians of ten: start {:.3} ms, end {:.3} ms",
        ms(&mut start),
        ms(&mut end)
    );
}

#[test]
fn a_dds_direct_reads_and_writes_are_counted_by_its_process_device_and_direction() {
    if !require(true, &["losetup", "dd"]) {
        return;
    }
    let (a, b) = (
        Loop::new(64 * MIB, None, false),
        Loop::new(64 * MIB, None, false),
    );
    let (da, db) = (dev_of(&a.name), dev_of(&b.name));
    let counter = match Counter::start(&[da]) {
        Ok(c) => c,
        Err(e) if !required() => {
            eprintln!("SKIPPED: the kernel would not run the counting program: {e}");
            return;
        }
        Err(e) => panic!("the counting program: {e}"),
    };
    let reader = dd(&format!(
        "if={} of=/dev/null bs=64k count=100 iflag=direct",
        a.dev()
    ));
    let writer = dd(&format!(
        "if=/dev/zero of={} bs=4k count=50 oflag=direct",
        a.dev()
    ));
    let elsewhere = dd(&format!(
        "if={} of=/dev/null bs=64k count=10 iflag=direct",
        b.dev()
    ));
    counter.switch(false).unwrap();
    let unseen = dd(&format!(
        "if={} of=/dev/null bs=64k count=10 iflag=direct",
        a.dev()
    ));
    let c = counter.counted().unwrap();
    println!("{c:#?}");
    assert_eq!(
        by(&c, reader, da, 0),
        (100 * 65536, 100),
        "the reader's reads"
    );
    assert_eq!(
        by(&c, writer, da, 1),
        (50 * 4096, 50),
        "the writer's writes"
    );
    assert_eq!(by(&c, writer, da, 0), (0, 0), "the writer read nothing");
    assert_eq!(by(&c, elsewhere, db, 0), (0, 0), "a device not asked for");
    assert_eq!(by(&c, unseen, da, 0), (0, 0), "switched off");
    println!("descriptors: {:?}", bpf_fds());
    assert!(
        bpf_fds()
            .iter()
            .any(|l| l.contains("bpf_link") || l.contains("bpf-link")),
        "{:?}",
        bpf_fds()
    );
    drop(counter);
    assert_eq!(
        bpf_fds(),
        Vec::<String>::new(),
        "the program went with the counter"
    );
    cost_of_a_counter(da);
}

/// This thread's CPU time so far, in seconds (CLOCK_THREAD_CPUTIME_ID: the scheduler's own
/// count, where getrusage's here moves in 4 ms ticks).
fn thread_cpu() -> f64 {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes only into the timespec we hand it.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    t.tv_sec as f64 + t.tv_nsec as f64 / 1e9
}
