//! The block layer's events and processes' lives, written by programs on their raw
//! tracepoints into a ring buffer that this process reads in place: what a tracefs instance
//! gives, without making one (about 6 ms a run) and with a window's events turned on and off by
//! a word in a map (no code rewritten, no other CPU interrupted). docs/architecture.md, "The
//! trace's events from BPF programs".
//!
//! Five programs share three maps: `switch` (which events are on: [`QUEUE`], [`REQUESTS`],
//! [`LIVES`]), the ring, and `lost` (records the full ring refused). Each block event's program
//! reads the kernel's struct (`bio`, `request`) at offsets from the kernel's BTF, keeps it where
//! its device (and for a disk below a loop device, its sector) is asked for, and writes a
//! [`Record`] of [`RECORD`] bytes.

use std::ffi::CStr;
use std::io;
use std::os::fd::{AsFd, OwnedFd};

use super::asm::*;
pub use super::layout::{Layout, OpFlags};
use super::layout::{POINTS, Typed};
use crate::sys::bpf::{self, Map, Ring};

/// The switch's bits: `block_bio_queue` on, `block_rq_issue` and `block_rq_complete` on,
/// `sched_process_fork` and `sched_process_exit` on.
pub const QUEUE: u64 = 1;
pub const REQUESTS: u64 = 2;
pub const LIVES: u64 = 4;

/// A record's bytes: ts 0, sector 8, dev 16, sectors 20, pid 24, tgid 28, opf 32, kind 36,
/// comm 40, child 56.
pub const RECORD: usize = 64;

/// Which program wrote a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    Queue = 0,
    Issue = 1,
    Complete = 2,
    Fork = 3,
    Exit = 4,
}

/// One record as the programs write it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    pub which: Which,
    /// ns of the monotonic clock.
    pub ts_ns: u64,
    pub sector: u64,
    /// The kernel's device number (major << 20 | minor), as tracefs records it.
    pub dev: u32,
    pub sectors: u32,
    /// The thread that ran the tracepoint and its process.
    pub pid: u32,
    pub tgid: u32,
    /// The bio's or request's operation and flags (`blk_opf_t`).
    pub opf: u32,
    pub comm: [u8; 16],
    /// The new thread of a fork.
    pub child: u32,
}

impl Record {
    /// A record's bytes as a program wrote them; None where they are not one.
    pub fn parse(b: &[u8]) -> Option<Record> {
        let w = |at: usize| Some(u32::from_ne_bytes(b.get(at..at + 4)?.try_into().ok()?));
        let d = |at: usize| Some(u64::from_ne_bytes(b.get(at..at + 8)?.try_into().ok()?));
        let which = match w(36)? {
            0 => Which::Queue,
            1 => Which::Issue,
            2 => Which::Complete,
            3 => Which::Fork,
            4 => Which::Exit,
            _ => return None,
        };
        Some(Record {
            which,
            ts_ns: d(0)?,
            sector: d(8)?,
            dev: w(16)?,
            sectors: w(20)?,
            pid: w(24)?,
            tgid: w(28)?,
            opf: w(32)?,
            comm: b.get(40..56)?.try_into().ok()?,
            child: w(56)?,
        })
    }
}

/// What the programs keep: every device in `whole` (kernel numbers), and on the others the
/// sectors in `ranges` (device, first, end); everything where both are empty.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub whole: Vec<u32>,
    pub ranges: Vec<(u32, u64, u64)>,
}

// The stack (below R10): the record at -64, a word for a pointer read and two for a disk's
// numbers below it, then the struct's head (as long as the program reads of it: the
// verifier's time grows with the stack it tracks, 450 us a program with 256 bytes set aside
// for any head).
const REC: i16 = -64;
const PTR: i16 = REC - 8;
const MAJOR: i16 = PTR - 8;
const MINOR: i16 = MAJOR - 8;
/// The most of a struct's head a program copies.
const HEAD_MAX: u32 = 256;

/// The maps' descriptors, as the programs name them.
#[derive(Debug, Clone, Copy)]
struct Maps {
    switch: i32,
    ring: i32,
    lost: i32,
}

/// Why a program could not be written: a struct's head larger than the stack's room for it,
/// or a jump past an i16 (a filter of thousands of ranges).
fn too_big() -> io::Error {
    io::Error::other("a trace program too large to write")
}

/// How the block programs read the kernel's structs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Copied to the stack by `bpf_probe_read_kernel` (a raw tracepoint's program; any
    /// kernel with BTF).
    Raw,
    /// Plain loads from the struct's pointer cast to its type (the `bpf_rdonly_cast` kfunc,
    /// 6.2 and later), which the verifier turns into loads that read 0 where the address
    /// faults: no helper's call for each read, as quick to load (docs/architecture.md, "The
    /// programs' reads by a cast").
    Typed,
}

/// The program for `which`, its block structs read as `typed` says (None: raw).
fn program(
    l: &Layout,
    which: Which,
    maps: Maps,
    filter: &Filter,
    typed: Option<&Typed>,
) -> io::Result<Vec<u64>> {
    let mut a = Asm::new();
    let out = a.label();
    a.push(mov(R6, R1));
    let bit = match which {
        Which::Queue => QUEUE,
        Which::Issue | Which::Complete => REQUESTS,
        Which::Fork | Which::Exit => LIVES,
    };
    // The switch, read straight from its map's value: off, out at once.
    a.extend(load_map_value(R1, maps.switch, 0));
    a.push(load64(R1, R1, 0));
    a.push(and_imm(R1, bit as i32));
    a.jump(jeq_imm(R1, 0, 0), out);
    for i in 0..RECORD as i16 / 8 {
        a.push(store64_imm(R10, REC + 8 * i, 0));
    }
    match (which, typed) {
        (Which::Queue, Some(t)) => read_bio_typed(&mut a, l, t),
        (Which::Queue, None) => read_bio(&mut a, l)?,
        (Which::Issue | Which::Complete, Some(t)) => {
            read_request_typed(&mut a, l, t, which == Which::Complete)
        }
        (Which::Issue | Which::Complete, None) => {
            read_request(&mut a, l, which == Which::Complete)?
        }
        (Which::Fork, _) => {
            // The new thread's pid: the second argument's.
            a.push(load64(R3, R6, 8));
            a.push(add_imm(R3, l.task_pid as i32));
            read_into(&mut a, REC + 56, 4);
        }
        (Which::Exit, _) => {}
    }
    if matches!(which, Which::Queue | Which::Issue | Which::Complete) {
        keep_only(&mut a, filter, out);
        a.push(store64(R10, REC + 8, R8));
        a.push(store32(R10, REC + 16, R7));
    }
    write_record(&mut a, which, maps, out);
    a.bind(out);
    a.extend([mov_imm(R0, 0), exit()]);
    a.finish().ok_or_else(too_big)
}

/// The record's time, thread, process, kind and name (not a completion's: the thread it ran
/// in is whichever it interrupted, and nothing reads it), then the record into the ring (or
/// one more lost where the ring is full); on to `out`.
fn write_record(a: &mut Asm, which: Which, maps: Maps, out: Label) {
    a.push(call(KTIME_GET_NS));
    a.push(store64(R10, REC, R0));
    a.push(call(GET_CURRENT_PID_TGID));
    a.push(store32(R10, REC + 24, R0));
    a.push(rsh_imm(R0, 32));
    a.push(store32(R10, REC + 28, R0));
    a.push(store32_imm(R10, REC + 36, which as i32));
    if which != Which::Complete {
        a.extend([
            mov(R1, R10),
            add_imm(R1, i32::from(REC) + 40),
            mov_imm(R2, 16),
            call(GET_CURRENT_COMM),
        ]);
    }
    a.extend(load_map(R1, maps.ring));
    a.extend([
        mov(R2, R10),
        add_imm(R2, i32::from(REC)),
        mov_imm(R3, RECORD as i32),
        mov_imm(R4, 1), // BPF_RB_NO_WAKEUP: the reader looks on its own clock
        call(RINGBUF_OUTPUT),
    ]);
    a.jump(jeq_imm(R0, 0, 0), out);
    a.extend(load_map_value(R1, maps.lost, 0));
    a.extend([mov_imm(R2, 1), atomic_add64(R1, 0, R2)]);
}

/// probe_read_kernel(R10 + `to`, `len`, R3).
fn read_into(a: &mut Asm, to: i16, len: i32) {
    a.extend([
        mov(R1, R10),
        add_imm(R1, i32::from(to)),
        mov_imm(R2, len),
        call(PROBE_READ_KERNEL),
    ]);
}

/// The first `head` bytes of the struct the first argument points to, copied below the
/// scratch words; where they start on the stack.
fn copy_head(a: &mut Asm, head: u32) -> io::Result<i16> {
    if head > HEAD_MAX {
        return Err(too_big());
    }
    let at = MINOR - head as i16;
    a.push(load64(R3, R6, 0));
    read_into(a, at, head as i32);
    Ok(at)
}

/// The bio (the first argument): R7 its device, R8 its sector; its sectors and opf in the
/// record.
fn read_bio(a: &mut Asm, l: &Layout) -> io::Result<()> {
    let at = copy_head(a, l.bio_head())?;
    a.push(load64(R3, R10, at + l.bi_bdev as i16));
    a.push(add_imm(R3, l.bd_dev as i32));
    read_into(a, REC + 16, 4);
    a.extend([
        load32(R7, R10, REC + 16),
        load64(R8, R10, at + l.bi_sector as i16),
        load32(R1, R10, at + l.bi_size as i16),
        rsh_imm(R1, 9),
        store32(R10, REC + 20, R1),
        load32(R1, R10, at + l.bi_opf as i16),
        store32(R10, REC + 32, R1),
    ]);
    Ok(())
}

/// The request (the first argument): R7 its disk's number (0 without one), R8 its sector; its
/// sectors (at completion, the bytes completed: the third argument) and opf in the record.
fn read_request(a: &mut Asm, l: &Layout, complete: bool) -> io::Result<()> {
    let at = copy_head(a, l.rq_head())?;
    // rq->q->disk, then its major and first minor (a failed read leaves zeros).
    a.push(load64(R3, R10, at + l.rq_q as i16));
    a.push(add_imm(R3, l.q_disk as i32));
    read_into(a, PTR, 8);
    a.push(load64(R9, R10, PTR));
    let (major, minor) = match disk_numbers_together(l) {
        // Side by side (as `struct gendisk` has them since 2.6): one read of both.
        Some((first, major, minor)) => {
            a.extend([mov(R3, R9), add_imm(R3, first as i32)]);
            read_into(a, MAJOR, 8);
            (MAJOR + major, MAJOR + minor)
        }
        None => {
            a.extend([mov(R3, R9), add_imm(R3, l.disk_major as i32)]);
            read_into(a, MAJOR, 4);
            a.extend([mov(R3, R9), add_imm(R3, l.disk_first_minor as i32)]);
            read_into(a, MINOR, 4);
            (MAJOR, MINOR)
        }
    };
    a.extend([
        load32(R7, R10, major),
        lsh_imm(R7, 20),
        load32(R1, R10, minor),
        or(R7, R1),
        load64(R8, R10, at + l.rq_sector as i16),
        load32(R1, R10, at + l.rq_cmd_flags as i16),
        store32(R10, REC + 32, R1),
    ]);
    if complete {
        a.push(load64(R1, R6, 16));
    } else {
        a.push(load32(R1, R10, at + l.rq_data_len as i16));
    }
    a.extend([rsh_imm(R1, 9), store32(R10, REC + 20, R1)]);
    Ok(())
}

/// R0 = the first argument as a pointer to struct `id`, untrusted: `bpf_rdonly_cast`.
fn cast_first_argument(a: &mut Asm, t: &Typed, id: u32) {
    a.extend([
        load64(R1, R6, 0),
        mov_imm(R2, id as i32),
        call_kfunc(t.cast),
    ]);
}

/// As [`read_bio`], by plain loads from the bio cast to untrusted (`typed`): the verifier turns
/// each into a load that reads 0 where the address faults, as a failed probe read does.
fn read_bio_typed(a: &mut Asm, l: &Layout, t: &Typed) {
    cast_first_argument(a, t, t.bio);
    a.extend([
        load64(R3, R0, l.bi_bdev as i16),
        load32(R7, R3, l.bd_dev as i16),
        load64(R8, R0, l.bi_sector as i16),
        load32(R1, R0, l.bi_size as i16),
        rsh_imm(R1, 9),
        store32(R10, REC + 20, R1),
        load32(R1, R0, l.bi_opf as i16),
        store32(R10, REC + 32, R1),
    ]);
}

/// As [`read_request`], by plain loads from the request cast to untrusted (`typed`).
fn read_request_typed(a: &mut Asm, l: &Layout, t: &Typed, complete: bool) {
    cast_first_argument(a, t, t.request);
    a.extend([
        load64(R3, R0, l.rq_q as i16),
        load64(R3, R3, l.q_disk as i16),
        load32(R7, R3, l.disk_major as i16),
        lsh_imm(R7, 20),
        load32(R1, R3, l.disk_first_minor as i16),
        or(R7, R1),
        load64(R8, R0, l.rq_sector as i16),
        load32(R1, R0, l.rq_cmd_flags as i16),
        store32(R10, REC + 32, R1),
    ]);
    if complete {
        a.push(load64(R1, R6, 16));
    } else {
        a.push(load32(R1, R0, l.rq_data_len as i16));
    }
    a.extend([rsh_imm(R1, 9), store32(R10, REC + 20, R1)]);
}

/// Where a disk's major and first minor lie in one 8-byte word of `struct gendisk`: the word's
/// offset, and each number's place in it (each a helper call less at every request event:
/// about 20 ns, docs/architecture.md).
fn disk_numbers_together(l: &Layout) -> Option<(u32, i16, i16)> {
    let first = l.disk_major.min(l.disk_first_minor);
    let last = l.disk_major.max(l.disk_first_minor);
    (last == first + 4).then(|| {
        (
            first,
            (l.disk_major - first) as i16,
            (l.disk_first_minor - first) as i16,
        )
    })
}

/// On to the rest where R7 (device) and R8 (sector) pass `filter`, else to `out`. The
/// comparisons are made on R2, a value computed from them (a device xor'd with the one asked
/// for, a sector less a range's first), never on R7 and R8 themselves: a jump narrows what the
/// verifier knows of the register it compares, and paths that meet at the rest with R7 or R8
/// known differently are each verified to the end (the programs' verifying took 0.4-0.6 ms
/// each with nine ranges).
fn keep_only(a: &mut Asm, filter: &Filter, out: Label) {
    if filter.whole.is_empty() && filter.ranges.is_empty() {
        return;
    }
    let keep = a.label();
    for &d in &filter.whole {
        a.extend([mov(R2, R7), xor32_imm(R2, d)]);
        a.jump(jeq32_imm(R2, 0, 0), keep);
    }
    for &(d, first, end) in &filter.ranges {
        let next = a.label();
        a.extend([mov(R2, R7), xor32_imm(R2, d)]);
        a.jump(jne32_imm(R2, 0, 0), next);
        // sector - first < end - first, unsigned: a sector before the range wraps past it.
        a.push(mov(R2, R8));
        a.extend(mov64_imm(R1, first));
        a.push(sub(R2, R1));
        a.extend(mov64_imm(R1, end.saturating_sub(first)));
        a.jump(jge(R2, R1, 0), next);
        a.jump(ja(0), keep);
        a.bind(next);
    }
    a.jump(ja(0), out);
    a.bind(keep);
}

/// The programs and their maps, until dropped (closing them detaches the programs: nothing is
/// left behind, also when the process is killed).
pub struct Events {
    ring: Ring,
    switch: Map,
    lost: Map,
    pub layout: Layout,
    /// How the block programs read their structs.
    pub style: Style,
    /// Each program (its bit and tracepoint) and its attachment while its events are on: a
    /// program attached costs every event of its tracepoint on the machine its dispatch even
    /// while switched off (about 40 ns a bio on zram, docs/architecture.md), so one whose
    /// events are off is detached, as tracefs unregisters an event turned off.
    programs: Vec<(u64, &'static CStr, OwnedFd, Option<OwnedFd>)>,
}

const ARRAY: u32 = 2;
const RAW_TRACEPOINT: u32 = 17;

/// The programs: which, its tracepoint, and the switch's bit that turns it on.
const PROGRAMS: [(Which, &CStr, u64); 5] = [
    (Which::Queue, POINTS[0], QUEUE),
    (Which::Issue, POINTS[1], REQUESTS),
    (Which::Complete, POINTS[2], REQUESTS),
    (Which::Fork, POINTS[3], LIVES),
    (Which::Exit, POINTS[4], LIVES),
];

impl Events {
    /// Loads the five programs with a ring of `ring_bytes` (a power of two), every event off
    /// and no program attached: the block programs typed where the kernel can check them
    /// ([`Style::Typed`]), else raw.
    pub fn start(filter: &Filter, ring_bytes: usize) -> io::Result<Self> {
        let layout = Layout::of_kernel()?;
        if layout.typed.is_some()
            && let Ok(e) = Self::start_as(layout, filter, ring_bytes, Style::Typed)
        {
            return Ok(e);
        }
        Self::start_as(layout, filter, ring_bytes, Style::Raw)
    }

    /// As [`Events::start`], the block programs in `style` (an error where the kernel has not
    /// what it needs).
    pub fn start_with(filter: &Filter, ring_bytes: usize, style: Style) -> io::Result<Self> {
        Self::start_as(Layout::of_kernel()?, filter, ring_bytes, style)
    }

    fn start_as(
        layout: Layout,
        filter: &Filter,
        ring_bytes: usize,
        style: Style,
    ) -> io::Result<Self> {
        let typed = match style {
            Style::Raw => None,
            Style::Typed => Some(layout.typed.ok_or_else(|| {
                io::Error::other("the kernel's BTF has no bpf_rdonly_cast (6.2 and later)")
            })?),
        };
        let ring = Ring::create(ring_bytes)?;
        let switch = Map::create(ARRAY, 4, 8, 1)?;
        let lost = Map::create(ARRAY, 4, 8, 1)?;
        let maps = Maps {
            switch: switch.raw_fd(),
            ring: ring.raw_fd(),
            lost: lost.raw_fd(),
        };
        let mut programs = Vec::new();
        for (which, point, bit) in PROGRAMS {
            let code = program(&layout, which, maps, filter, typed.as_ref())?;
            programs.push((bit, point, bpf::prog_load(RAW_TRACEPOINT, &code)?, None));
        }
        Ok(Self {
            ring,
            switch,
            lost,
            layout,
            style,
            programs,
        })
    }

    /// Turns the events in `bits` on and the others off: the switch's word first (a program
    /// attached reads it), then each program attached or detached.
    pub fn set(&mut self, bits: u64) -> io::Result<()> {
        self.switch
            .update(&0u32.to_ne_bytes(), &bits.to_ne_bytes())?;
        for (bit, point, prog, link) in &mut self.programs {
            let on = bits & *bit != 0;
            if on && link.is_none() {
                *link = Some(bpf::raw_tracepoint_open(point, prog.as_fd())?);
            } else if !on {
                *link = None;
            }
        }
        Ok(())
    }

    /// Records written and not yet read.
    pub fn held(&self) -> u64 {
        self.ring.held() / (RECORD as u64 + 8)
    }

    /// Records the full ring refused so far.
    pub fn lost(&self) -> u64 {
        let mut v = [0u8; 8];
        match self.lost.lookup(&0u32.to_ne_bytes(), &mut v) {
            Ok(true) => u64::from_ne_bytes(v),
            _ => 0,
        }
    }

    /// Hands each record written so far to `on`, about `limit` bytes' worth at the most; true
    /// where it stopped at the limit with more to read.
    pub fn drain(&mut self, limit: usize, mut on: impl FnMut(Record)) -> bool {
        self.ring.read(limit, |b| {
            if let Some(r) = Record::parse(b) {
                on(r);
            }
        })
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// 6.18's bits.
    pub(crate) const FLAGS: OpFlags = OpFlags {
        preflush: 1 << 18,
        fua: 1 << 17,
        rahead: 1 << 19,
        sync: 1 << 11,
        meta: 1 << 12,
    };

    /// blktrace's letters as the kernel's `blk_fill_rwbs` makes them (6.18's bits).
    #[test]
    fn an_operations_letters_are_blktraces() {
        let cases = [
            (0, "R"),
            (FLAGS.rahead, "RA"),
            (1 | FLAGS.sync, "WS"),
            (1 | FLAGS.preflush | FLAGS.fua | FLAGS.sync, "FWFS"),
            (2 | FLAGS.preflush, "FF"),
            (3, "D"),
            (9, "N"),
            (1 | FLAGS.meta, "WM"),
        ];
        for (opf, want) in cases {
            let mut b = [0u8; 8];
            let n = FLAGS.rwbs(opf, &mut b);
            let got = String::from_utf8_lossy(&b[..n]).into_owned();
            println!("{opf:#x}: {got}");
            assert_eq!(got, want);
        }
    }

    /// A disk's major and first minor are read at once where they share a word, in either
    /// order; apart, each by itself.
    #[test]
    fn a_disks_numbers_side_by_side_are_read_at_once() {
        let mut w: Vec<u32> = (1..=21).collect();
        let cases = [
            ((0, 4), Some((0, 0, 4))),
            ((12, 8), Some((8, 4, 0))),
            ((0, 16), None),
        ];
        for ((major, minor), want) in cases {
            (w[10], w[11]) = (major, minor);
            let l = Layout::from_words(&w).unwrap();
            let got = disk_numbers_together(&l);
            println!("major at {major}, first minor at {minor}: {got:?}");
            assert_eq!(got, want);
        }
    }

    /// A record's bytes read back field by field.
    #[test]
    fn a_record_parses_as_written() {
        let mut b = [0u8; RECORD];
        b[0..8].copy_from_slice(&5u64.to_ne_bytes());
        b[8..16].copy_from_slice(&(1u64 << 40).to_ne_bytes());
        b[16..20].copy_from_slice(&((7u32 << 20) | 3).to_ne_bytes());
        b[20..24].copy_from_slice(&8u32.to_ne_bytes());
        b[24..28].copy_from_slice(&11u32.to_ne_bytes());
        b[28..32].copy_from_slice(&10u32.to_ne_bytes());
        b[36..40].copy_from_slice(&2u32.to_ne_bytes());
        b[40..42].copy_from_slice(b"dd");
        let r = Record::parse(&b).unwrap();
        println!("{r:?}");
        assert_eq!(
            (r.which, r.ts_ns, r.sector, r.dev, r.sectors, r.pid, r.tgid),
            (Which::Complete, 5, 1 << 40, (7 << 20) | 3, 8, 11, 10)
        );
        assert_eq!(&r.comm[..3], b"dd\0");
        b[36] = 9;
        assert!(Record::parse(&b).is_none());
        assert!(Record::parse(&b[..30]).is_none());
    }
}
