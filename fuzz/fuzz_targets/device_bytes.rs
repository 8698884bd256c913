//! The bytes of a device, as a stranger's USB stick may hold them: the signature probe (and
//! the partition tables it walks), the hidden-signature probe, the blank test and the whole
//! read, for each logical block size. No panic, no hang, nothing reported past the end.
#![no_main]

use std::io::Write;

use blkscope::device::signatures::{Blank, probe, probe_hidden, read_whole, scan_blank};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // tmpfs: the fuzzer writes nothing to a disk.
    let mut f = tempfile::tempfile_in("/dev/shm")
        .or_else(|_| tempfile::tempfile())
        .expect("a temporary file");
    f.write_all(data).expect("write");
    let size = data.len() as u64;
    for sector in [0u32, 512, 4096] {
        let sigs = probe(&f, size, sector).expect("probe");
        assert!(sigs.iter().all(|s| s.offset < size), "{sigs:?}");
        if let Some(h) = probe_hidden(&f, size, sector).expect("hidden") {
            assert!(h.offset < size && h.start <= h.offset, "{h:?}");
        }
    }
    match scan_blank(&f, size, &Default::default()).expect("blank") {
        Blank::Data { offset } => assert!(offset < size),
        Blank::Blank { bytes_read, .. } => assert!(bytes_read <= size),
        Blank::Unknown { .. } => assert_eq!(size, 0),
    }
    let whole = read_whole(&f, size, &mut |_| true).expect("whole");
    if let Some(Blank::Data { offset }) = whole {
        assert!(offset < size);
    }
});
