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

/// At most this many bytes of a loop device's backing file's data extents are read by the
/// blank test of one device (`check`, the check before a write) ...
pub const EXTENT_BUDGET: u64 = 64 << 20;

/// ... and of each device `list` reads (64 loop devices over files of zeros: 4 GiB to read
/// at 64 MiB each; docs/architecture.md).
pub const EXTENT_BUDGET_LIST: u64 = 4 << 20;

/// The regions of `extents` (offsets in the device) to read within `budget` bytes, and whether
/// that is all of them. Over budget, each extent's start, where written data begins, an equal
/// share each (at least 4 KiB).
pub fn extent_regions(extents: &[(u64, u64)], budget: u64) -> (Vec<(u64, u64)>, bool) {
    let total: u64 = extents.iter().map(|e| e.1).sum();
    if total <= budget {
        return (extents.to_vec(), true);
    }
    let share = (budget / extents.len().max(1) as u64).max(4096) & !0xfff;
    let mut v = Vec::new();
    let mut left = budget;
    for &(at, len) in extents {
        let n = len.min(share).min(left);
        if n == 0 {
            break;
        }
        v.push((at, n));
        left -= n;
    }
    (v, false)
}

/// `a` and `b` as one list in order, without overlap, 4 KiB aligned where `a` is.
pub fn merge_regions(a: &[(u64, u64)], b: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut all: Vec<(u64, u64)> = a.iter().chain(b).copied().filter(|r| r.1 > 0).collect();
    all.sort_unstable();
    let mut v: Vec<(u64, u64)> = Vec::new();
    for (at, len) in all {
        match v.last_mut() {
            Some(last) if at <= last.0 + last.1 => {
                last.1 = last.1.max(at + len - last.0);
            }
            _ => v.push((at, len)),
        }
    }
    v
}

/// What the blank test reads beyond its samples: a loop device's backing file's data extents,
/// and whether they are all of them.
#[derive(Debug, Clone, Default)]
pub struct Extra {
    pub regions: Vec<(u64, u64)>,
    pub complete: bool,
}

/// Reads the blank test's regions of `f` (a device or image of `size` bytes), and `extra`'s,
/// 64 KiB at a time so that data near the start ends it early. A region cut short by the end
/// of the file (a fixture's short image) counts as far as it was read. What it read is dropped
/// from the page cache again, so a buffered test afterwards finds the device as cold as it was.
pub fn scan_blank(f: &File, size: u64, extra: &Extra) -> io::Result<Blank> {
    let regions = merge_regions(&blank_regions(size), &extra.regions);
    let r = scan_regions(f, &regions, &mut vec![0u8; 64 << 10], coverage(extra));
    for &(off, len) in &regions {
        let _ = crate::sys::drop_cache_range(f, off, len);
    }
    r
}

/// [`scan_blank`] through a descriptor opened with O_DIRECT: the page cache is not touched at
/// all (nothing to drop, nothing of others' dropped), and it is faster. Regions are 4 KiB
/// aligned; the last one of a device whose size is not is read as far as O_DIRECT allows.
pub fn scan_blank_direct(f: &File, size: u64, extra: &Extra) -> io::Result<Blank> {
    let aligned: Vec<(u64, u64)> = extra
        .regions
        .iter()
        .map(|&(o, l)| (o & !0xfff, (o + l + 0xfff) & !0xfff))
        .map(|(o, e)| (o, e.min(size & !0xfff).saturating_sub(o)))
        .collect();
    let regions: Vec<(u64, u64)> = merge_regions(&blank_regions(size), &aligned)
        .into_iter()
        .map(|(o, l)| (o, l / 4096 * 4096))
        .filter(|r| r.1 > 0)
        .collect();
    let mut buf = crate::sys::AlignedBuf::new(64 << 10, 4096);
    scan_regions(f, &regions, buf.as_mut_slice(), coverage(extra))
}

/// How the places of a scan with `extra` were chosen.
fn coverage(extra: &Extra) -> Coverage {
    if extra.complete {
        Coverage::DataExtents
    } else {
        Coverage::Sampled
    }
}

/// Reads `regions` of `f` into `buf` and says what they hold; a blank answer says how its
/// places were chosen (`read`), how many there were and how long they took.
fn scan_regions(
    f: &File,
    regions: &[(u64, u64)],
    buf: &mut [u8],
    read: Coverage,
) -> io::Result<Blank> {
    const STEP: usize = 64 << 10;
    let t = std::time::Instant::now();
    let mut first: Option<u8> = None;
    let mut bytes_read = 0u64;
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
            if let Some(at) = not_blank(b, &mut first, &mut same) {
                return Ok(Blank::Data { offset: pos + at });
            }
            bytes_read += got as u64;
            pos += got as u64;
            if got < n {
                break;
            }
        }
    }
    Ok(match first {
        Some(byte) => Blank::Blank {
            byte,
            bytes_read,
            read,
            places: regions.len() as u64,
            seconds: t.elapsed().as_secs_f64(),
        },
        None => Blank::unknown("nothing could be read from it"),
    })
}

/// Where in `b` the first byte of data is, if any: blank is all zeros, or all 0xff (a fresh
/// flash erase), and the same byte throughout (`first`, the device's first byte, once seen;
/// `same`, a buffer of it at least as long as `b`).
pub(super) fn not_blank(b: &[u8], first: &mut Option<u8>, same: &mut [u8]) -> Option<u64> {
    let b0 = *b.first()?;
    if first.is_none() && b0 != 0 && b0 != 0xff {
        return Some(0);
    }
    let byte = *first.get_or_insert_with(|| {
        same.fill(b0);
        b0
    });
    if b != &same[..b.len()] {
        return b.iter().position(|&x| x != byte).map(|i| i as u64);
    }
    None
}
