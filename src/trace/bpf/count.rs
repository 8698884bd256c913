//! The counting program and its maps: each bio queued on the devices asked for, while the
//! switch is on, adds its bytes and one bio to its (device, process, operation) entry.

use std::io;
use std::os::fd::{AsFd, OwnedFd};

use super::asm::*;
use super::events::Layout;
use crate::sys::bpf::{self, Map};

/// What one process queued on one device in one operation (the kernel's REQ_OP: 0 read, 1
/// write, 2 flush, 3 discard, ...), counted in the kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counted {
    pub dev: (u32, u32),
    pub tgid: u32,
    pub op: u8,
    pub bytes: u64,
    pub bios: u64,
}

/// The program at work on `block_bio_queue` and its maps, until dropped.
pub struct Counter {
    switch: Map,
    counts: Map,
    _prog: OwnedFd,
    _link: OwnedFd,
}

const HASH: u32 = 1;
const ARRAY: u32 = 2;
const RAW_TRACEPOINT: u32 = 17;
/// Entries the counts' map holds: (device, process, operation) triples seen in one run.
const ENTRIES: u32 = 4096;

// The program's stack (below R10): the key (device, tgid, op) at -16, a zeroed value at -32,
// the device number at -40, the switch's key at -44, the bio's head below -48.
const KEY: i16 = -16;
const ZERO: i16 = -32;
const DEV: i16 = -40;
const SWITCH_KEY: i16 = -44;

/// The counting program: `switch` and `counts` are the maps' descriptors, `devices` the
/// kernel's numbers (major << 20 | minor) of the devices to count (all where empty).
fn program(l: &Layout, switch: i32, counts: i32, devices: &[u32]) -> Vec<u64> {
    let bio_at = -48 - l.bio_head() as i16;
    let mut p = vec![load64(R6, R1, 0), store32_imm(R10, SWITCH_KEY, 0)];
    p.extend(load_map(R1, switch));
    p.extend([
        mov(R2, R10),
        add_imm(R2, i32::from(SWITCH_KEY)),
        call(MAP_LOOKUP),
    ]);
    let mut read = vec![
        mov(R1, R10),
        add_imm(R1, i32::from(bio_at)),
        mov_imm(R2, l.bio_head() as i32),
        mov(R3, R6),
        call(PROBE_READ_KERNEL),
        load64(R3, R10, bio_at + l.bi_bdev as i16),
        add_imm(R3, l.bd_dev as i32),
        mov(R1, R10),
        add_imm(R1, i32::from(DEV)),
        mov_imm(R2, 4),
        call(PROBE_READ_KERNEL),
        load32(R7, R10, DEV),
    ];
    let keep = count(l, counts, bio_at);
    // Each device: on to the count where it is this bio's; past the count where none is.
    let n = devices.len() as i16;
    for (i, &d) in devices.iter().enumerate() {
        read.push(jeq32_imm(R7, d, n - i as i16));
    }
    if n > 0 {
        read.push(ja(keep.len() as i16));
    }
    let body = [read, keep].concat();
    // Off: past everything to the return.
    p.extend([
        jeq_imm(R0, 0, body.len() as i16 + 2),
        load64(R1, R0, 0),
        jeq_imm(R1, 0, body.len() as i16),
    ]);
    p.extend(body);
    p.extend([mov_imm(R0, 0), exit()]);
    p
}

/// The key made from the bio and its process, then its entry's bytes and bios added to.
fn count(l: &Layout, counts: i32, bio_at: i16) -> Vec<u64> {
    let mut c = vec![
        store32(R10, KEY, R7),
        call(GET_CURRENT_PID_TGID),
        rsh_imm(R0, 32),
        store32(R10, KEY + 4, R0),
        load32(R1, R10, bio_at + l.bi_opf as i16),
        and_imm(R1, 0xff),
        store32(R10, KEY + 8, R1),
        load32(R8, R10, bio_at + l.bi_size as i16),
    ];
    let lookup = |c: &mut Vec<u64>| {
        c.extend(load_map(R1, counts));
        c.extend([mov(R2, R10), add_imm(R2, i32::from(KEY)), call(MAP_LOOKUP)]);
    };
    let mut insert = vec![store64_imm(R10, ZERO, 0), store64_imm(R10, ZERO + 8, 0)];
    insert.extend(load_map(R1, counts));
    insert.extend([
        mov(R2, R10),
        add_imm(R2, i32::from(KEY)),
        mov(R3, R10),
        add_imm(R3, i32::from(ZERO)),
        mov_imm(R4, 1), // BPF_NOEXIST: another CPU may have made it meanwhile
        call(MAP_UPDATE),
    ]);
    lookup(&mut insert);
    let add = [
        atomic_add64(R0, 0, R8),
        mov_imm(R1, 1),
        atomic_add64(R0, 8, R1),
    ];
    lookup(&mut c);
    c.push(jne_imm(R0, 0, insert.len() as i16 + 1));
    c.extend(insert);
    c.push(jeq_imm(R0, 0, add.len() as i16));
    c.extend(add);
    c
}

impl Counter {
    /// Loads the program and starts counting the bios queued on `devices` (major, minor),
    /// every device where empty.
    pub fn start(devices: &[(u32, u32)]) -> io::Result<Self> {
        let layout = Layout::of_kernel()?;
        let switch = Map::create(ARRAY, 4, 8, 1)?;
        let counts = Map::create(HASH, 12, 16, ENTRIES)?;
        Self::set(&switch, true)?;
        let devs: Vec<u32> = devices.iter().map(|&(a, b)| (a << 20) | b).collect();
        let code = program(&layout, switch.raw_fd(), counts.raw_fd(), &devs);
        let prog = bpf::prog_load(RAW_TRACEPOINT, &code)?;
        let link = bpf::raw_tracepoint_open(c"block_bio_queue", prog.as_fd())?;
        Ok(Self {
            switch,
            counts,
            _prog: prog,
            _link: link,
        })
    }

    fn set(switch: &Map, on: bool) -> io::Result<()> {
        switch.update(&0u32.to_ne_bytes(), &u64::from(on).to_ne_bytes())
    }

    /// Turns counting on or off (the program returns at once while off).
    pub fn switch(&self, on: bool) -> io::Result<()> {
        Self::set(&self.switch, on)
    }

    /// Every entry counted so far.
    pub fn counted(&self) -> io::Result<Vec<Counted>> {
        let (mut out, mut key, mut next, mut value) = (Vec::new(), None, [0u8; 12], [0u8; 16]);
        let map = &self.counts;
        while map.next_key(key.as_ref().map(|k: &[u8; 12]| &k[..]), &mut next)? {
            if map.lookup(&next, &mut value)? {
                let w = |b: &[u8]| u32::from_ne_bytes(b.try_into().unwrap_or_default());
                let d = |b: &[u8]| u64::from_ne_bytes(b.try_into().unwrap_or_default());
                let dev = w(&next[0..4]);
                out.push(Counted {
                    dev: (dev >> 20, dev & 0xf_ffff),
                    tgid: w(&next[4..8]),
                    op: next[8],
                    bytes: d(&value[0..8]),
                    bios: d(&value[8..16]),
                });
            }
            key = Some(next);
        }
        Ok(out)
    }
}
