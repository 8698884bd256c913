//! Reading back what a write run put on the target. Every 512-byte sector a random-data write
//! leaves carries its own byte offset, the job's run stamp (its seed), and body bytes that are
//! the same for every write of the job (`worker::body_pattern`), so everything can be checked
//! from the seed without keeping the data: right after the run (`--verify`), or later, after a
//! reboot or a power cut (`blkscope verify --stamp RUN`). The same code checks capacity, as f3
//! does: stamped blocks over the advertised size, read back; high offsets that fail or come back
//! carrying low offsets' stamps give the real usable size.
//!
//! The device is reached through [`BlockIo`], so a device that wraps around (fake-capacity
//! flash) can be modelled in memory for tests.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::worker::{Shuffle, body_pattern, shuffle_key, stamp};
use crate::sys::AlignedBuf;

/// Where a verify reads (and a capacity check writes).
pub trait BlockIo {
    fn read_at(&self, buf: &mut [u8], off: u64) -> io::Result<usize>;
    fn write_at(&self, buf: &[u8], off: u64) -> io::Result<usize>;
}

impl BlockIo for File {
    fn read_at(&self, buf: &mut [u8], off: u64) -> io::Result<usize> {
        FileExt::read_at(self, buf, off)
    }
    fn write_at(&self, buf: &[u8], off: u64) -> io::Result<usize> {
        FileExt::write_at(self, buf, off)
    }
}

/// What one job of a write run put where: enough to check it later, not the data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StampJob {
    /// The job's region: `len` bytes from `start`.
    pub start: u64,
    pub len: u64,
    pub bs: u64,
    /// The run stamp in every sector, and the seed of the body bytes and the random order.
    pub seed: u64,
    /// Writes completed (acknowledged), the ramp included.
    pub writes: u64,
    /// Random order (every block once per pass), else sequential from `start`.
    pub random: bool,
}

/// What a write run put on its target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    pub jobs: Vec<StampJob>,
}

impl Stamp {
    /// The byte ranges the run wrote, in order of offset, each with its job.
    pub fn written(&self) -> Vec<(u64, u64, usize)> {
        let mut out = Vec::new();
        for (j, s) in self.jobs.iter().enumerate() {
            let bs = s.bs.max(1);
            let blocks = s.len / bs;
            if blocks == 0 || s.writes == 0 {
                continue;
            }
            if s.writes >= blocks {
                out.push((s.start, blocks * bs, j));
            } else if !s.random {
                out.push((s.start, s.writes * bs, j));
            } else {
                let sh = Shuffle::new(blocks, shuffle_key(s.seed));
                let mut b: Vec<u64> = (0..s.writes).map(|i| sh.at(i)).collect();
                b.sort_unstable();
                let mut run: Option<(u64, u64)> = None;
                for x in b {
                    run = match run {
                        Some((first, n)) if first + n == x => Some((first, n + 1)),
                        Some((first, n)) => {
                            out.push((s.start + first * bs, n * bs, j));
                            Some((x, 1))
                        }
                        None => Some((x, 1)),
                    };
                }
                if let Some((first, n)) = run {
                    out.push((s.start + first * bs, n * bs, j));
                }
            }
        }
        out.sort_by_key(|r| r.0);
        out
    }
}

/// Why a range is bad.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BadKind {
    /// Reading (or, in a capacity check, writing) it failed.
    IoError,
    /// A sector that carries another offset than its own: written elsewhere, wrapped around,
    /// zeroed, or never written.
    WrongOffset,
    /// Its own offset, but another run's stamp: an older write, not this run's (a write that
    /// was acknowledged and then lost).
    WrongStamp,
    /// Its own offset and stamp, but the rest of it differs.
    Corrupt,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BadRange {
    pub offset: u64,
    pub length: u64,
    pub kind: BadKind,
}

/// At most this many ranges are listed (adjacent bad sectors of one kind merge into one).
pub const MAX_RANGES: usize = 1000;

/// The outcome of reading back.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct VerifyReport {
    pub sectors_checked: u64,
    pub sectors_bad: u64,
    pub bad_ranges: Vec<BadRange>,
    /// More bad ranges than [`MAX_RANGES`]: the list is cut.
    #[serde(default)]
    pub ranges_cut: bool,
    /// I/O errors met (each a range of `io_error`).
    #[serde(default)]
    pub io_errors: u64,
    /// Why it stopped before the end (cancelled, too many errors), if it did.
    #[serde(default)]
    pub stopped: Option<String>,
    /// Bytes read back, and how fast.
    #[serde(default)]
    pub bytes_read: u64,
    #[serde(default)]
    pub seconds: f64,
}

impl VerifyReport {
    pub fn is_bad(&self) -> bool {
        self.sectors_bad > 0 || self.io_errors > 0
    }

    fn bad(&mut self, offset: u64, length: u64, kind: BadKind) {
        if kind == BadKind::IoError {
            self.io_errors += 1;
        }
        self.sectors_bad += length.div_ceil(512);
        if let Some(last) = self.bad_ranges.last_mut()
            && last.kind == kind
            && last.offset + last.length == offset
        {
            last.length += length;
            return;
        }
        if self.bad_ranges.len() < MAX_RANGES {
            self.bad_ranges.push(BadRange {
                offset,
                length,
                kind,
            });
        } else {
            self.ranges_cut = true;
        }
    }
}

/// How to read back: the granularity of I/O-error retries (the logical block size), the
/// errors after which to stop, and a cancel flag.
pub struct ReadBack<'a> {
    pub granularity: u64,
    pub max_errors: u64,
    pub cancel: &'a AtomicBool,
}

const CHUNK: usize = 4 << 20;

/// What a sector should hold, and how it differs.
fn classify(sector: &[u8], off: u64, seed: u64, body: &[u8]) -> Option<BadKind> {
    let got_off = u64::from_le_bytes(sector[..8].try_into().unwrap_or([0; 8]));
    let got_seed = u64::from_le_bytes(sector[8..16].try_into().unwrap_or([0; 8]));
    if got_off != off {
        Some(BadKind::WrongOffset)
    } else if got_seed != seed {
        Some(BadKind::WrongStamp)
    } else if sector[16..] != body[16..] {
        Some(BadKind::Corrupt)
    } else {
        None
    }
}

/// Reads back what `stamp` says was written, through `io`.
pub fn verify(io: &dyn BlockIo, stamp: &Stamp, how: &ReadBack) -> VerifyReport {
    let t0 = Instant::now();
    let mut rep = VerifyReport::default();
    let bodies: Vec<Vec<u8>> = stamp
        .jobs
        .iter()
        .map(|j| body_pattern(j.seed, j.bs as usize))
        .collect();
    let mut buf = AlignedBuf::new(CHUNK, 4096);
    'ranges: for (start, len, j) in stamp.written() {
        let job = &stamp.jobs[j];
        let body = &bodies[j];
        let mut off = start;
        while off < start + len {
            if how.cancel.load(Ordering::Relaxed) {
                rep.stopped = Some("cancelled".into());
                break 'ranges;
            }
            if rep.io_errors >= how.max_errors {
                rep.stopped = Some(format!("{} I/O errors (--max-errors)", rep.io_errors));
                break 'ranges;
            }
            let n = ((start + len - off) as usize).min(CHUNK);
            let got = read_checked(io, &mut buf.as_mut_slice()[..n], off, how, &mut rep);
            rep.bytes_read += n as u64;
            for (k, ok) in got.iter().enumerate() {
                let at = off + (k as u64) * how.granularity.max(512);
                if !ok {
                    continue;
                }
                let g = how.granularity.max(512) as usize;
                let from = k * g;
                for (i, sector) in buf.as_slice()[from..(from + g).min(n)]
                    .chunks(512)
                    .enumerate()
                {
                    let so = at + i as u64 * 512;
                    if sector.len() < 512 {
                        break;
                    }
                    rep.sectors_checked += 1;
                    let in_block = ((so - job.start) % job.bs) as usize;
                    let expect = &body[in_block..in_block + 512];
                    if let Some(kind) = classify(sector, so, job.seed, expect) {
                        rep.bad(so, 512, kind);
                    }
                }
            }
            off += n as u64;
        }
    }
    rep.seconds = t0.elapsed().as_secs_f64();
    rep
}

/// Reads `buf.len()` bytes at `off`; on an error, block by block (`granularity`), recording
/// each failing block as `io_error`. Returns, per block, whether it was read.
fn read_checked(
    io: &dyn BlockIo,
    buf: &mut [u8],
    off: u64,
    how: &ReadBack,
    rep: &mut VerifyReport,
) -> Vec<bool> {
    let g = how.granularity.max(512) as usize;
    let blocks = buf.len().div_ceil(g);
    if read_full(io, buf, off).is_ok() {
        return vec![true; blocks];
    }
    let mut ok = Vec::with_capacity(blocks);
    for (k, piece) in buf.chunks_mut(g).enumerate() {
        let at = off + (k * g) as u64;
        let r = read_full(io, piece, at).is_ok();
        if !r {
            rep.bad(at, piece.len() as u64, BadKind::IoError);
            rep.sectors_checked += (piece.len() as u64).div_ceil(512);
        }
        ok.push(r);
    }
    ok
}

fn read_full(io: &dyn BlockIo, buf: &mut [u8], off: u64) -> io::Result<()> {
    let mut got = 0;
    while got < buf.len() {
        match io.read_at(&mut buf[got..], off + got as u64) {
            Ok(0) => return Err(io::Error::from(io::ErrorKind::UnexpectedEof)),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

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
fn capacity_blocks(size: u64, mode: CapacityMode, g: u64) -> Vec<(u64, u64)> {
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
            let mut v: Vec<(u64, u64)> = (0..N)
                .map(|k| ((size as u128 * k as u128 / N as u128) as u64 / g * g, len))
                .filter(|&(o, l)| o + l <= size)
                .collect();
            if size >= len {
                v.push(((size - len) / g * g, len));
            }
            v.dedup_by_key(|x| x.0);
            v
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
                let got_off = u64::from_le_bytes(sector[..8].try_into().unwrap_or([0; 8]));
                let got_seed = u64::from_le_bytes(sector[8..16].try_into().unwrap_or([0; 8]));
                // Our own stamp from another offset: the device maps both to one place; the
                // distance between them is (a multiple of) its real size.
                if kind == BadKind::WrongOffset && got_seed == seed {
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

/// A map of bad ranges over a device of `size` bytes in `width` cells: `.` good (or not
/// checked), `X` an I/O error, `o` wrong offset, `s` wrong stamp, `c` corrupt.
pub fn bad_range_map(rep: &VerifyReport, size: u64, width: usize) -> String {
    let mut cells = vec!['.'; width.max(1)];
    if size == 0 {
        return cells.into_iter().collect();
    }
    for r in &rep.bad_ranges {
        let c = match r.kind {
            BadKind::IoError => 'X',
            BadKind::WrongOffset => 'o',
            BadKind::WrongStamp => 's',
            BadKind::Corrupt => 'c',
        };
        let a = (r.offset as u128 * cells.len() as u128 / size as u128) as usize;
        let b = ((r.offset + r.length.max(1) - 1) as u128 * cells.len() as u128 / size as u128)
            as usize;
        for cell in cells
            .iter_mut()
            .take(b.min(width.max(1) - 1) + 1)
            .skip(a.min(width.max(1) - 1))
        {
            // An I/O error shows over the other kinds.
            if *cell != 'X' {
                *cell = c;
            }
        }
    }
    cells.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// A device that advertises `advertised` bytes but keeps only `real`, wrapping around, as
    /// fake-capacity flash does.
    struct Wrapping {
        data: Mutex<Vec<u8>>,
    }

    impl BlockIo for Wrapping {
        fn read_at(&self, buf: &mut [u8], off: u64) -> io::Result<usize> {
            let d = self.data.lock().unwrap();
            for (i, b) in buf.iter_mut().enumerate() {
                *b = d[((off as usize) + i) % d.len()];
            }
            Ok(buf.len())
        }
        fn write_at(&self, buf: &[u8], off: u64) -> io::Result<usize> {
            let mut d = self.data.lock().unwrap();
            let n = d.len();
            for (i, b) in buf.iter().enumerate() {
                d[((off as usize) + i) % n] = *b;
            }
            Ok(buf.len())
        }
    }

    fn how(cancel: &AtomicBool) -> ReadBack<'_> {
        ReadBack {
            granularity: 512,
            max_errors: 1000,
            cancel,
        }
    }

    #[test]
    fn a_device_that_wraps_around_is_found_out() {
        let cancel = AtomicBool::new(false);
        for mode in [CapacityMode::Full, CapacityMode::Sampled] {
            let dev = Wrapping {
                data: Mutex::new(vec![0; 8 << 20]),
            };
            let (cap, rep) = capacity(&dev, 64 << 20, mode, &how(&cancel));
            assert_eq!(cap.how, CapacityHow::Wrap, "{mode:?}: {cap:?}");
            assert_eq!(cap.usable_bytes, 8 << 20, "{mode:?}: {cap:?}");
            assert!(rep.is_bad());
        }
        // A true device: everything comes back.
        let dev = Wrapping {
            data: Mutex::new(vec![0; 8 << 20]),
        };
        let (cap, rep) = capacity(&dev, 8 << 20, CapacityMode::Full, &how(&cancel));
        assert_eq!(cap.how, CapacityHow::Ok, "{cap:?}");
        assert_eq!(cap.usable_bytes, 8 << 20);
        assert!(!rep.is_bad(), "{rep:?}");
        assert_eq!(rep.sectors_checked, (8 << 20) / 512);
    }

    #[test]
    fn written_ranges_of_sequential_and_random_jobs() {
        let seq = StampJob {
            start: 1 << 20,
            len: 8 << 20,
            bs: 1 << 20,
            seed: 5,
            writes: 3,
            random: false,
        };
        let s = Stamp {
            jobs: vec![seq.clone()],
        };
        assert_eq!(s.written(), [(1 << 20, 3 << 20, 0)]);
        let full = Stamp {
            jobs: vec![StampJob { writes: 20, ..seq }],
        };
        assert_eq!(full.written(), [(1 << 20, 8 << 20, 0)]);
        let rnd = Stamp {
            jobs: vec![StampJob {
                start: 0,
                len: 64 << 10,
                bs: 4096,
                seed: 9,
                writes: 5,
                random: true,
            }],
        };
        let w = rnd.written();
        let total: u64 = w.iter().map(|r| r.1).sum();
        assert_eq!(total, 5 * 4096, "{w:?}");
    }

    #[test]
    fn the_map_places_ranges() {
        let rep = VerifyReport {
            bad_ranges: vec![
                BadRange {
                    offset: 0,
                    length: 10,
                    kind: BadKind::Corrupt,
                },
                BadRange {
                    offset: 90,
                    length: 10,
                    kind: BadKind::IoError,
                },
            ],
            ..Default::default()
        };
        assert_eq!(bad_range_map(&rep, 100, 10), "c........X");
    }
}
