//! The blank test: is a device all zeros where it was sampled (its edges densely, the rest at
//! spread places)? Only a device seen blank is `clear` without a typed confirmation.

use super::*;
use std::fs::File;
use std::io;

/// The blank test reads the first and the last MiB ...
pub const BLANK_EDGE: u64 = 1 << 20;

/// ... the rest of the first 16 MiB densely, where partitions begin and file systems keep their
/// metadata (a young ext4 or XFS has little else) ...
pub const BLANK_DENSE_END: u64 = 16 << 20;

/// ... there, this many bytes every [`BLANK_DENSE_STEP`] ...
pub const BLANK_DENSE_LEN: u64 = 16 << 10;

pub const BLANK_DENSE_STEP: u64 = 512 << 10;

/// ... and this many regions beyond, at fixed fractions of the size ...
pub const BLANK_SAMPLES: u64 = 64;

/// ... of this many bytes each: 6 MiB in all at most.
pub const BLANK_SAMPLE_LEN: u64 = 48 << 10;

/// The (offset, length) regions the blank test reads on a device of `size` bytes, in order,
/// inside the device, 4 KiB aligned, without overlap.
pub fn blank_regions(size: u64) -> Vec<(u64, u64)> {
    let inner = BLANK_EDGE..size.saturating_sub(BLANK_EDGE);
    let mut want: Vec<(u64, u64)> = Vec::new();
    if inner.end > inner.start {
        let dense_end = BLANK_DENSE_END.min(inner.end);
        want.extend(
            (inner.start..dense_end)
                .step_by(BLANK_DENSE_STEP as usize)
                .map(|at| (at, BLANK_DENSE_LEN)),
        );
        for k in 1..=BLANK_SAMPLES {
            let at = (size as u128 * k as u128 / (BLANK_SAMPLES + 1) as u128) as u64 & !0xfff;
            want.push((at.max(inner.start), BLANK_SAMPLE_LEN));
        }
    }
    want.sort_unstable();
    let mut v = vec![(0, BLANK_EDGE.min(size))];
    for (at, len) in want {
        // In order, without overlap, inside the part between the two ends.
        let start = at.max(v.last().map_or(0, |&(o, l)| o + l));
        let end = (at + len).min(inner.end);
        if end > start {
            v.push((start, end - start));
        }
    }
    if size > BLANK_EDGE {
        let tail = size - BLANK_EDGE.min(size - BLANK_EDGE);
        let start = tail.max(v.last().map(|&(o, l)| o + l).unwrap_or(0));
        if size > start {
            v.push((start, size - start));
        }
    }
    v
}

/// Reads the blank test's regions of `f` (a device or image of `size` bytes), 64 KiB at a time
/// so that data near the start ends it early. A region cut short by the end of the file (a
/// fixture's short image) counts as far as it was read. What it read is dropped from the page
/// cache again, so a buffered test afterwards finds the device as cold as it was.
pub fn scan_blank(f: &File, size: u64) -> io::Result<Blank> {
    let regions = blank_regions(size);
    let r = scan_regions(f, &regions, &mut vec![0u8; 64 << 10]);
    for &(off, len) in &regions {
        let _ = crate::sys::drop_cache_range(f, off, len);
    }
    r
}

/// [`scan_blank`] through a descriptor opened with O_DIRECT: the page cache is not touched at
/// all (nothing to drop, nothing of others' dropped), and it is faster. Regions are 4 KiB
/// aligned; the last one of a device whose size is not is read as far as O_DIRECT allows.
pub fn scan_blank_direct(f: &File, size: u64) -> io::Result<Blank> {
    let regions: Vec<(u64, u64)> = blank_regions(size)
        .into_iter()
        .map(|(o, l)| (o, l / 4096 * 4096))
        .filter(|r| r.1 > 0)
        .collect();
    let mut buf = crate::sys::AlignedBuf::new(64 << 10, 4096);
    scan_regions(f, &regions, buf.as_mut_slice())
}

pub(super) fn scan_regions(f: &File, regions: &[(u64, u64)], buf: &mut [u8]) -> io::Result<Blank> {
    const STEP: usize = 64 << 10;
    let mut first: Option<u8> = None;
    let mut read = 0u64;
    // The same byte as the device's first, to compare whole reads at memcmp speed.
    let mut same = vec![0u8; STEP];
    for &(off, len) in regions {
        let mut pos = off;
        while pos < off + len {
            let n = (off + len - pos).min(STEP as u64) as usize;
            let got = read_into(f, &mut buf[..n], pos)?;
            if got == 0 {
                break;
            }
            let b = &buf[..got];
            let b0 = *first.get_or_insert_with(|| {
                same.fill(b[0]);
                b[0]
            });
            if b != &same[..got] {
                let i = b.iter().position(|&x| x != b0).unwrap_or(0);
                return Ok(Blank::Data {
                    offset: pos + i as u64,
                });
            }
            read += got as u64;
            pos += got as u64;
            if got < n {
                break;
            }
        }
    }
    Ok(match first {
        Some(byte) => Blank::Blank {
            byte,
            bytes_read: read,
        },
        None => Blank::unknown("nothing could be read from it"),
    })
}
