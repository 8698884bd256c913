//! What /proc says, as text blkscope parses: /proc/diskstats, /proc/self/mountinfo,
//! /proc/swaps, /proc/PID/io, and the block layer's trace lines (and the tally over them). The
//! first byte picks which. No panic, whatever the kernel (or a fixture tree) writes.
#![no_main]

use std::time::Instant;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    match which % 5 {
        0 => {
            let _ = blkscope::stats::Snapshot::parse(&text, Instant::now());
        }
        1 => {
            let _ = blkscope::device::mounts::MountTable::parse(&text);
        }
        2 => {
            let _ = blkscope::device::mounts::SwapTable::parse(&text);
        }
        3 => {
            let _ = blkscope::stats::procs::parse_io(&text);
        }
        _ => {
            let mut tally = blkscope::trace::tally::Tally::new(1);
            for line in text.lines() {
                if let Some(e) = blkscope::trace::event::parse(line) {
                    tally.add(&e);
                }
            }
        }
    }
});
