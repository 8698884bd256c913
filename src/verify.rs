//! Reading back what a write run put on the target. Every 512-byte sector a random-data write
//! leaves carries its own byte offset, the job's run stamp (its seed), and body bytes that are
//! the same for every write of the job (`engine::pattern::body_pattern`), so everything can be checked
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
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::time::Instant;

use serde::{Deserialize, Serialize};

pub use crate::engine::pattern::{Stamp, StampJob};
use crate::engine::pattern::{body_pattern, stamp};
use crate::sys::AlignedBuf;

/// Where a verify reads (and a capacity check writes). Shared with a reader thread.
pub trait BlockIo: Sync {
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

/// Why a range is bad.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BadKind {
    /// Reading (or, in a capacity check, writing) it failed.
    IoError,
    /// This run's data from another offset: the device stored the write elsewhere, or maps two
    /// addresses to one place (fake capacity wraps around).
    WrongOffset,
    /// All zeros: the write never reached the medium, or was discarded since (TRIM, a thin
    /// volume).
    Zeroed,
    /// Neither zeros nor this run's data: what was there before the write (so the write was
    /// lost), or garbage.
    Foreign,
    /// Its own offset, but another run's stamp: an older write, not this run's (a write that
    /// was acknowledged and then lost).
    WrongStamp,
    /// Its own offset and stamp, but the rest of it differs.
    Corrupt,
}

impl BadKind {
    pub const ALL: [BadKind; 6] = [
        BadKind::IoError,
        BadKind::WrongOffset,
        BadKind::Zeroed,
        BadKind::Foreign,
        BadKind::WrongStamp,
        BadKind::Corrupt,
    ];

    /// Its cell in [`bad_range_map`].
    pub fn letter(self) -> char {
        match self {
            BadKind::IoError => 'X',
            BadKind::WrongOffset => 'o',
            BadKind::Zeroed => 'z',
            BadKind::Foreign => 'f',
            BadKind::WrongStamp => 's',
            BadKind::Corrupt => 'c',
        }
    }

    /// Its name, as JSON and the listing give it.
    pub fn name(self) -> &'static str {
        match self {
            BadKind::IoError => "io_error",
            BadKind::WrongOffset => "wrong_offset",
            BadKind::Zeroed => "zeroed",
            BadKind::Foreign => "foreign",
            BadKind::WrongStamp => "wrong_stamp",
            BadKind::Corrupt => "corrupt",
        }
    }

    /// What a sector of this kind tells, in one line.
    pub fn meaning(self) -> &'static str {
        match self {
            BadKind::IoError => {
                "the device failed to read it (or, in a capacity check, to write it)"
            }
            BadKind::WrongOffset => {
                "this run's data from another offset: the device stored the write elsewhere, \
                 or maps two addresses to one place (fake capacity wraps around)"
            }
            BadKind::Zeroed => {
                "all zeros: the write never reached the medium, or was discarded since (TRIM, a \
                 thin volume)"
            }
            BadKind::Foreign => {
                "neither zeros nor this run's data: what was there before (the write was lost), \
                 or garbage"
            }
            BadKind::WrongStamp => {
                "its own offset with an older run's stamp: the older write is there, this \
                 run's was lost"
            }
            BadKind::Corrupt => "this run's offset and stamp, but the rest differs: damaged data",
        }
    }
}

/// The map's key: each kind's letter and name.
pub fn map_legend() -> String {
    BadKind::ALL
        .iter()
        .map(|k| match k {
            BadKind::IoError => "X I/O error".to_string(),
            k => format!("{} {}", k.letter(), k.name().replace('_', " ")),
        })
        .collect::<Vec<_>>()
        .join(", ")
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

const CHUNK: usize = 1 << 20;

/// What a sector should hold, and how it differs. All zeros is told apart first: a zeroed
/// sector at offset 0 would otherwise pass for its own offset with a wrong stamp.
fn classify(sector: &[u8], off: u64, seed: u64, body: &[u8]) -> Option<BadKind> {
    let got_off = u64::from_le_bytes(sector[..8].try_into().unwrap_or([0; 8]));
    let got_seed = u64::from_le_bytes(sector[8..16].try_into().unwrap_or([0; 8]));
    if got_off == off && got_seed == seed {
        (sector[16..] != body[16..]).then_some(BadKind::Corrupt)
    } else if sector.iter().all(|&b| b == 0) {
        Some(BadKind::Zeroed)
    } else if got_off == off {
        Some(BadKind::WrongStamp)
    } else if got_seed == seed {
        Some(BadKind::WrongOffset)
    } else {
        Some(BadKind::Foreign)
    }
}

/// A chunk read for checking: where, how much, which job, which blocks were read, and the
/// blocks that failed.
struct Chunk {
    buf: AlignedBuf,
    off: u64,
    n: usize,
    job: usize,
    ok: Vec<bool>,
    failed: Vec<(u64, u64)>,
}

/// Two readers take alternate chunks, so two reads are in flight (the device is kept as busy
/// as a plain QD1 read with registered buffers keeps it, although each pread pins its pages);
/// the checker takes the chunks back in order.
const READERS: usize = 2;

/// What the reader threads share: where to read, what to read, and when to stop.
struct Readers<'a> {
    io: &'a dyn BlockIo,
    how: &'a ReadBack<'a>,
    /// The byte ranges written, each with its job.
    written: &'a [(u64, u64, usize)],
    /// The unit a failed read is retried in, to find the bad blocks.
    granularity: u64,
    errors: AtomicU64,
    stopped: Mutex<Option<String>>,
}

impl Readers<'_> {
    /// Why the reading stops before the next chunk, if it does.
    fn stop(&self) -> Option<String> {
        if self.how.cancel.load(Ordering::Relaxed) {
            return Some("cancelled".into());
        }
        let e = self.errors.load(Ordering::Relaxed);
        (e >= self.how.max_errors).then(|| format!("{e} I/O errors (--max-errors)"))
    }

    /// Reader `r`'s share of the chunks (every READERS-th), read into buffers from `free` and
    /// handed to the checker through `full`.
    fn read(&self, r: usize, full: SyncSender<Chunk>, free: Receiver<AlignedBuf>) {
        let mut index = 0usize;
        for &(start, len, j) in self.written {
            let mut off = start;
            while off < start + len {
                let n = ((start + len - off) as usize).min(CHUNK);
                let mine = index % READERS == r;
                index += 1;
                if !mine {
                    off += n as u64;
                    continue;
                }
                if let Some(why) = self.stop() {
                    *self.stopped.lock().unwrap_or_else(|e| e.into_inner()) = Some(why);
                    return;
                }
                let Ok(mut buf) = free.recv() else {
                    return;
                };
                let (ok, failed) =
                    read_checked(self.io, &mut buf.as_mut_slice()[..n], off, self.granularity);
                self.errors
                    .fetch_add(failed.len() as u64, Ordering::Relaxed);
                let chunk = Chunk {
                    buf,
                    off,
                    n,
                    job: j,
                    ok,
                    failed,
                };
                if full.send(chunk).is_err() {
                    return;
                }
                off += n as u64;
            }
        }
    }
}

/// Reads back what `stamp` says was written, through `io`. A reader thread reads the next
/// chunk while this one is checked, so the read-back runs at the device's speed rather than
/// at read plus compare.
pub fn verify(io: &dyn BlockIo, stamp: &Stamp, how: &ReadBack) -> VerifyReport {
    let t0 = Instant::now();
    let mut rep = VerifyReport::default();
    let bodies: Vec<Vec<u8>> = stamp
        .jobs
        .iter()
        .map(|j| body_pattern(j.seed, j.bs as usize))
        .collect();
    let written = stamp.written();
    let readers = Readers {
        io,
        how,
        written: &written,
        granularity: how.granularity.max(512),
        errors: AtomicU64::new(0),
        stopped: Mutex::new(None),
    };
    let mut fulls = Vec::new();
    let mut frees = Vec::new();
    let mut ends = Vec::new();
    for _ in 0..READERS {
        let (full_tx, full_rx) = mpsc::sync_channel::<Chunk>(2);
        let (free_tx, free_rx) = mpsc::channel::<AlignedBuf>();
        for _ in 0..2 {
            let _ = free_tx.send(AlignedBuf::new(CHUNK, 4096));
        }
        fulls.push(full_rx);
        frees.push(free_tx);
        ends.push((full_tx, free_rx));
    }
    let mut expect = vec![0u8; CHUNK];
    std::thread::scope(|scope| {
        let readers = &readers;
        for (r, (full_tx, free_rx)) in ends.into_iter().enumerate() {
            scope.spawn(move || readers.read(r, full_tx, free_rx));
        }
        let mut turn = 0usize;
        while let Ok(c) = fulls[turn % READERS].recv() {
            let free_tx = &frees[turn % READERS];
            turn += 1;
            let (job, body) = (&stamp.jobs[c.job], &bodies[c.job]);
            check_chunk(&mut rep, &c, job, body, readers.granularity, &mut expect);
            let _ = free_tx.send(c.buf);
        }
        // A reader still at work (the other stopped early) sees its channels close and ends.
        fulls.clear();
        frees.clear();
    });
    rep.stopped = readers
        .stopped
        .into_inner()
        .unwrap_or_else(|e| e.into_inner());
    rep.seconds = t0.elapsed().as_secs_f64();
    rep
}

/// Checks one chunk read back: its failed blocks are I/O errors; the rest is compared with what
/// was written, whole (the common case), or sector by sector where it differs.
fn check_chunk(
    rep: &mut VerifyReport,
    c: &Chunk,
    job: &StampJob,
    body: &[u8],
    g: u64,
    expect: &mut [u8],
) {
    rep.bytes_read += c.n as u64;
    for &(at, l) in &c.failed {
        rep.bad(at, l, BadKind::IoError);
        rep.sectors_checked += l.div_ceil(512);
    }
    let data = &c.buf.as_slice()[..c.n];
    // The common case first: build what the chunk should hold (body spans and stamps) and
    // compare it whole; only a chunk that differs is looked at sector by sector.
    if c.failed.is_empty() {
        expected_chunk(expect, c.off, c.n, job, body);
        if data == &expect[..c.n] {
            rep.sectors_checked += (c.n / 512) as u64;
            return;
        }
    }
    for (k, ok) in c.ok.iter().enumerate() {
        if !ok {
            continue;
        }
        let from = k * g as usize;
        let at = c.off + from as u64;
        for (i, sector) in data[from..(from + g as usize).min(c.n)]
            .chunks_exact(512)
            .enumerate()
        {
            let so = at + i as u64 * 512;
            rep.sectors_checked += 1;
            let in_block = ((so - job.start) % job.bs) as usize;
            if let Some(kind) = classify(sector, so, job.seed, &body[in_block..in_block + 512]) {
                rep.bad(so, 512, kind);
            }
        }
    }
}

/// What `n` bytes at `off` of `job`'s region should hold: the body pattern (the same in every
/// block, from the job's start) with each sector's stamp (its offset, the job's seed).
fn expected_chunk(out: &mut [u8], off: u64, n: usize, job: &StampJob, body: &[u8]) {
    let bs = job.bs as usize;
    let mut done = 0;
    while done < n {
        let in_block = ((off + done as u64 - job.start) % job.bs) as usize;
        let span = (bs - in_block).min(n - done);
        out[done..done + span].copy_from_slice(&body[in_block..in_block + span]);
        done += span;
    }
    stamp(&mut out[..n], off, job.seed);
}

/// Reads `buf.len()` bytes at `off`; on an error, block by block (`g` bytes). Returns, per
/// block, whether it was read, and the (offset, length) of each block that failed.
fn read_checked(
    io: &dyn BlockIo,
    buf: &mut [u8],
    off: u64,
    g: u64,
) -> (Vec<bool>, Vec<(u64, u64)>) {
    let g = g.max(512) as usize;
    let blocks = buf.len().div_ceil(g);
    if read_full(io, buf, off).is_ok() {
        return (vec![true; blocks], Vec::new());
    }
    let mut ok = Vec::with_capacity(blocks);
    let mut failed = Vec::new();
    for (k, piece) in buf.chunks_mut(g).enumerate() {
        let at = off + (k * g) as u64;
        let r = read_full(io, piece, at).is_ok();
        if !r {
            failed.push((at, piece.len() as u64));
        }
        ok.push(r);
    }
    (ok, failed)
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

/// A map of bad ranges over a device of `size` bytes in `width` cells: `.` good (or not
/// checked), otherwise each kind's [`BadKind::letter`] ([`map_legend`]).
pub fn bad_range_map(rep: &VerifyReport, size: u64, width: usize) -> String {
    let mut cells = vec!['.'; width.max(1)];
    if size == 0 {
        return cells.into_iter().collect();
    }
    for r in &rep.bad_ranges {
        let c = r.kind.letter();
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
    fn each_way_a_sector_can_differ_has_its_kind() {
        let seed = 0x1234_5678_9abc_def0;
        let body: Vec<u8> = (0..512u32).map(|i| (i * 7 + 3) as u8).collect();
        let sector = |off: u64, stamp: u64| {
            let mut s = body.clone();
            s[..8].copy_from_slice(&off.to_le_bytes());
            s[8..16].copy_from_slice(&stamp.to_le_bytes());
            s
        };
        let at = 4096;
        let mut damaged = sector(at, seed);
        damaged[300] ^= 1;
        let cases: [(&str, Vec<u8>, Option<BadKind>); 7] = [
            ("as written", sector(at, seed), None),
            ("body changed", damaged, Some(BadKind::Corrupt)),
            (
                "older run here",
                sector(at, seed + 1),
                Some(BadKind::WrongStamp),
            ),
            (
                "this run, elsewhere",
                sector(at + (1 << 30), seed),
                Some(BadKind::WrongOffset),
            ),
            ("zeros", vec![0; 512], Some(BadKind::Zeroed)),
            ("random bytes", vec![0x5a; 512], Some(BadKind::Foreign)),
            (
                "older run elsewhere",
                sector(at + 512, seed + 1),
                Some(BadKind::Foreign),
            ),
        ];
        for (what, s, want) in cases {
            let got = classify(&s, at, seed, &body);
            assert_eq!(got, want, "{what}: got {got:?}");
        }
        // Zeros at offset 0 are zeros, not offset 0 with a wrong stamp.
        let got = classify(&[0; 512], 0, seed, &body);
        assert_eq!(got, Some(BadKind::Zeroed), "zeros at offset 0: got {got:?}");
    }

    #[test]
    fn kind_names_are_the_json_names_and_letters_differ() {
        let mut letters = Vec::new();
        for k in BadKind::ALL {
            let json = serde_json::to_value(k).unwrap();
            assert_eq!(json, k.name(), "{k:?}: JSON {json}, name {}", k.name());
            assert!(
                !letters.contains(&k.letter()),
                "{k:?}: letter {} twice",
                k.letter()
            );
            letters.push(k.letter());
        }
        assert_eq!(
            map_legend(),
            "X I/O error, o wrong offset, z zeroed, f foreign, s wrong stamp, c corrupt"
        );
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

    /// A device whose reads fail from `bad` on.
    struct FailingFrom {
        bad: u64,
        inner: Wrapping,
    }

    impl BlockIo for FailingFrom {
        fn read_at(&self, buf: &mut [u8], off: u64) -> io::Result<usize> {
            if off + buf.len() as u64 > self.bad {
                return Err(io::Error::from_raw_os_error(libc::EIO));
            }
            self.inner.read_at(buf, off)
        }
        fn write_at(&self, buf: &[u8], off: u64) -> io::Result<usize> {
            self.inner.write_at(buf, off)
        }
    }

    #[test]
    fn read_errors_are_ranges_and_max_errors_stops_without_hanging() {
        let cancel = AtomicBool::new(false);
        let seed = 77;
        let body = body_pattern(seed, 1 << 20);
        let mut data = vec![0u8; 16 << 20];
        for (k, c) in data.chunks_mut(1 << 20).enumerate() {
            c.copy_from_slice(&body);
            stamp(c, (k as u64) << 20, seed);
        }
        let stamp_of = Stamp {
            jobs: vec![StampJob {
                start: 0,
                len: 16 << 20,
                bs: 1 << 20,
                seed,
                writes: 16,
                random: false,
            }],
        };
        let dev = FailingFrom {
            bad: 12 << 20,
            inner: Wrapping {
                data: Mutex::new(data),
            },
        };
        // Every block from 12 MiB on fails: merged into one io_error range.
        let all = ReadBack {
            granularity: 512,
            max_errors: u64::MAX,
            cancel: &cancel,
        };
        let rep = verify(&dev, &stamp_of, &all);
        assert_eq!(rep.io_errors, (4 << 20) / 512, "{rep:?}");
        assert_eq!(rep.bad_ranges.len(), 1, "{rep:?}");
        assert_eq!(rep.bad_ranges[0].offset, 12 << 20);
        assert_eq!(rep.bad_ranges[0].kind, BadKind::IoError);
        assert_eq!(rep.sectors_checked, (16 << 20) / 512);
        // With --max-errors 10 it stops early, says why, and returns.
        let few = ReadBack {
            granularity: 512,
            max_errors: 10,
            cancel: &cancel,
        };
        let rep = verify(&dev, &stamp_of, &few);
        assert!(
            rep.stopped.as_deref().unwrap_or("").contains("max-errors"),
            "{rep:?}"
        );
        // Cancelled: stops at once.
        cancel.store(true, Ordering::Relaxed);
        let rep = verify(&dev, &stamp_of, &how(&cancel));
        assert_eq!(rep.stopped.as_deref(), Some("cancelled"));
    }
}
