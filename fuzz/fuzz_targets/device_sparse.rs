//! A device of any size up to 16 TiB (a sparse file on tmpfs), with the input's bytes placed
//! where the hidden-signature probe looks for copies (ext's sparse groups, XFS's secondaries,
//! btrfs's mirrors, NTFS's backup): the probe's arithmetic over sizes and fields it reads
//! from the device. No panic, no hang, nothing found outside the device.
#![no_main]

use std::os::unix::fs::FileExt;

use blkscope::device::signatures::{backup_offsets, probe_hidden};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 10 {
        return;
    }
    let size = u64::from_le_bytes(data[..8].try_into().unwrap()) % (16 << 40);
    let sector = [512u32, 4096][(data[8] & 1) as usize];
    let places = backup_offsets(size, sector);
    let f = tempfile::tempfile_in("/dev/shm")
        .or_else(|_| tempfile::tempfile())
        .expect("a temporary file");
    f.set_len(size).expect("size");
    // The rest: (which place, 512 bytes) pairs.
    for chunk in data[9..].chunks(513) {
        let Some((&k, bytes)) = chunk.split_first() else {
            continue;
        };
        if let Some(&at) = places.get(k as usize % places.len().max(1)) {
            let n = bytes.len().min(size.saturating_sub(at) as usize);
            f.write_all_at(&bytes[..n], at).expect("write");
        }
    }
    if let Some(h) = probe_hidden(&f, size, sector).expect("hidden") {
        assert!(h.offset < size && h.start <= h.offset, "{h:?} in {size}");
    }
});
