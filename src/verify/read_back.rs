//! Reading a stamped write back: chunks read by two readers ahead of the checker, each sector
//! classified against what the stamp says it should hold, bad ranges merged as they come.

use super::*;
use crate::engine::pattern::{body_pattern, stamp};
use crate::sys::AlignedBuf;
use std::io;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::time::Instant;

/// How to read back: the granularity of I/O-error retries (the logical block size), the
/// errors after which to stop, and a cancel flag.
pub struct ReadBack<'a> {
    pub granularity: u64,
    pub max_errors: u64,
    pub cancel: &'a AtomicBool,
}

pub(super) const CHUNK: usize = 1 << 20;

/// What a sector should hold, and how it differs. All zeros is told apart first: a zeroed
/// sector at offset 0 would otherwise pass for its own offset with a wrong stamp.
pub(super) fn classify(sector: &[u8], off: u64, seed: u64, body: &[u8]) -> Option<BadKind> {
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
pub(super) struct Chunk {
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
pub(super) const READERS: usize = 2;

/// What the reader threads share: where to read, what to read, and when to stop.
pub(super) struct Readers<'a> {
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
pub(super) fn check_chunk(
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
pub(super) fn expected_chunk(out: &mut [u8], off: u64, n: usize, job: &StampJob, body: &[u8]) {
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
pub(super) fn read_checked(
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

pub(super) fn read_full(io: &dyn BlockIo, buf: &mut [u8], off: u64) -> io::Result<()> {
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
