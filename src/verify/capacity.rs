//! The capacity check, as f3 does it: stamped blocks over the advertised size (all of it, or
//! spread over it), read back; high offsets that fail or come back holding low offsets' stamps
//! give the real usable size.

use super::*;
use crate::engine::pattern::{body_pattern, stamp};
use crate::sys::AlignedBuf;
use serde::{Deserialize, Serialize};
use std::io;
use std::sync::atomic::Ordering;
use std::time::Instant;

/// How thoroughly a capacity check covers the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CapacityMode {
    /// Stamped blocks over the whole advertised size.
    Full,
    /// Stamped blocks spread over it (quick).
    Sampled,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CapacityHow {
    /// Everything came back.
    Ok,
    /// Offsets from `usable_bytes` on fail.
    IoError,
    /// Offsets wrap around: what was written at `usable_bytes` and above came back at lower
    /// offsets (fake-capacity flash).
    Wrap,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Capacity {
    pub advertised_bytes: u64,
    pub usable_bytes: u64,
    pub how: CapacityHow,
}

/// A capacity check's blocks: (offset, length), in order.
pub(super) fn capacity_blocks(size: u64, mode: CapacityMode, g: u64) -> Vec<(u64, u64)> {
    let g = g.max(512);
    match mode {
        CapacityMode::Full => {
            let step = 1u64 << 20;
            let mut v = Vec::new();
            let mut off = 0;
            while off + g <= size {
                let len = step.min((size - off) / g * g);
                v.push((off, len));
                off += len;
            }
            v
        }
        CapacityMode::Sampled => {
            const N: u64 = 1024;
            let len = (64u64 << 10).min(size / g * g).max(g);
            let mut starts: Vec<u64> = (0..N)
                .map(|k| (size as u128 * k as u128 / N as u128) as u64 / g * g)
                .filter(|&o| o + len <= size)
                .collect();
            if size >= len {
                starts.push((size - len) / g * g);
            }
            starts.sort_unstable();
            starts.dedup();
            // A block ends where the next begins: one written over another's start would
            // leave that one's sectors holding the later block's body, and read back as corrupt
            // (the last two of a 100M device's overlapped by 28K: "56 bad, corrupt").
            let ends = starts.iter().skip(1).copied().chain([size]);
            starts
                .iter()
                .zip(ends)
                .map(|(&o, next)| (o, len.min(next - o) / g * g))
                .filter(|&(_, l)| l > 0)
                .collect()
        }
    }
}

/// Writes stamped blocks over `size` bytes of `io` (all of it, or spread samples), reads them
/// back, and says how much of the advertised size really holds data. Destructive: the caller
/// has made sure the device may be written.
pub fn capacity(
    io: &dyn BlockIo,
    size: u64,
    mode: CapacityMode,
    how: &ReadBack,
) -> (Capacity, VerifyReport) {
    let t0 = Instant::now();
    let seed = fastrand::u64(..) | 1;
    let blocks = capacity_blocks(size, mode, how.granularity);
    let max_len = blocks.iter().map(|b| b.1).max().unwrap_or(512) as usize;
    // One body pattern for the largest block; a block of any length uses its start.
    let body = body_pattern(seed, max_len);
    let mut rep = VerifyReport::default();
    let mut buf = AlignedBuf::new(max_len.max(4096), 4096);
    let mut first_io_error: Option<u64> = None;
    let mut write_errors = 0u64;
    // Write phase.
    for &(off, len) in &blocks {
        if how.cancel.load(Ordering::Relaxed) {
            rep.stopped = Some("cancelled".into());
            break;
        }
        if write_errors >= how.max_errors {
            rep.stopped = Some(format!("{write_errors} write errors (--max-errors)"));
            break;
        }
        let b = &mut buf.as_mut_slice()[..len as usize];
        b.copy_from_slice(&body[..len as usize]);
        stamp(b, off, seed);
        let mut done = 0usize;
        while done < b.len() {
            match io.write_at(&b[done..], off + done as u64) {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => break,
            }
        }
        if done < b.len() {
            write_errors += 1;
            let at = off + done as u64 / 512 * 512;
            first_io_error.get_or_insert(at);
            rep.bad(at, off + len - at, BadKind::IoError);
        }
    }
    // Read phase: blocks whose write failed are already bad.
    let mut wrap: Option<u64> = None;
    let write_fail = first_io_error;
    for &(off, len) in blocks.iter().filter(|b| write_fail.is_none_or(|e| b.0 < e)) {
        if how.cancel.load(Ordering::Relaxed) {
            rep.stopped = Some("cancelled".into());
            break;
        }
        let b = &mut buf.as_mut_slice()[..len as usize];
        rep.bytes_read += len;
        if read_full(io, b, off).is_err() {
            rep.bad(off, len, BadKind::IoError);
            first_io_error = Some(first_io_error.map_or(off, |e| e.min(off)));
            continue;
        }
        for (i, sector) in b.chunks(512).enumerate() {
            let so = off + i as u64 * 512;
            rep.sectors_checked += 1;
            let in_block = i * 512;
            if let Some(kind) = classify(sector, so, seed, &body[in_block..in_block + 512]) {
                rep.bad(so, 512, kind);
                // Our own stamp from another offset: the device maps both to one place; the
                // distance between them is (a multiple of) its real size.
                if kind == BadKind::WrongOffset {
                    let got_off = u64::from_le_bytes(sector[..8].try_into().unwrap_or([0; 8]));
                    let d = got_off.abs_diff(so);
                    wrap = Some(wrap.map_or(d, |w| w.min(d)));
                }
            }
        }
    }
    rep.seconds = t0.elapsed().as_secs_f64();
    let (usable, how_) = match (first_io_error, wrap) {
        (None, None) => (size, CapacityHow::Ok),
        (Some(e), Some(w)) if w < e => (w, CapacityHow::Wrap),
        (Some(e), _) => (e, CapacityHow::IoError),
        (None, Some(w)) => (w, CapacityHow::Wrap),
    };
    (
        Capacity {
            advertised_bytes: size,
            usable_bytes: usable.min(size),
            how: how_,
        },
        rep,
    )
}
