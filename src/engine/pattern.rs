//! What a job writes and where: the order of its offsets (sequential, or every block once per
//! pass in a random order), the bytes of a random-data write (a body from the job's seed, and
//! each sector stamped with its own offset and the run), and the [`Stamp`] that records it.
//! Writing (the job threads) and reading back (`crate::verify`) both use this one module, so
//! what is checked is exactly what was written.

use serde::{Deserialize, Serialize};

use super::job::Op;
use crate::sys::Dir;

/// A permutation of the blocks of a region: random order, every block once per pass, as fio's
/// random map does. Four Feistel rounds over the next power of two, walking the cycle past
/// values outside the region; deterministic from the key, so `verify` can tell which blocks an
/// interrupted pass wrote.
#[derive(Debug, Clone, Copy)]
pub struct Shuffle {
    blocks: u64,
    half_bits: u32,
    key: u64,
}

impl Shuffle {
    pub fn new(blocks: u64, key: u64) -> Self {
        let bits = 64 - blocks.max(2).saturating_sub(1).leading_zeros();
        Self {
            blocks: blocks.max(1),
            half_bits: bits.div_ceil(2).max(1),
            key,
        }
    }

    fn round(x: u64, k: u64) -> u64 {
        let mut h = x.wrapping_add(k).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h ^= h >> 29;
        h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h ^ (h >> 32)
    }

    fn feistel(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half_bits) - 1;
        let (mut l, mut r) = (x >> self.half_bits, x & mask);
        for i in 0..4u64 {
            let f = Self::round(r, self.key ^ i.wrapping_mul(0xA24B_AED4_963E_E407)) & mask;
            (l, r) = (r, l ^ f);
        }
        (l << self.half_bits) | r
    }

    /// The `i`th block of the order (`i` below the number of blocks).
    pub fn at(&self, i: u64) -> u64 {
        let mut x = if i < self.blocks { i } else { i % self.blocks };
        loop {
            x = self.feistel(x);
            if x < self.blocks {
                return x;
            }
        }
    }
}

/// The key of a job's random order, from its seed.
pub fn shuffle_key(seed: u64) -> u64 {
    seed ^ 0x5eed_f00d_cafe_d00d
}

/// What a random-data write puts in every sector after its 16-byte stamp: the same bytes in
/// every write of a job (so they can be regenerated from the seed to verify, and no buffer has
/// to be kept): bs bytes from the job's seed.
pub fn body_pattern(seed: u64, bs: usize) -> Vec<u8> {
    let mut v = vec![0u8; bs];
    fastrand::Rng::with_seed(seed ^ 0xda7a).fill(&mut v);
    v
}

/// Chooses a job's offsets and directions.
pub(crate) struct Pattern {
    pub(crate) op: Op,
    pub(crate) bs: u64,
    pub(crate) start: u64,
    pub(crate) blocks: u64,
    /// The position in the pass: the next block, or for random ops the next index into the
    /// shuffled order.
    pub(crate) next: u64,
    pub(crate) remaining: Option<u64>,
    pub(crate) rng: fastrand::Rng,
    pub(crate) rwmixread: u8,
    pub(crate) shuffle: Shuffle,
}

impl Pattern {
    pub(crate) fn next(&mut self) -> Option<(u64, Dir)> {
        if let Some(r) = self.remaining.as_mut() {
            if *r == 0 {
                return None;
            }
            *r -= 1;
        }
        // The position in the pass, wrapped by comparison: a 64-bit division an I/O (two for
        // random) cost ~40 cycles each on older x86. Random offsets take the shuffled block
        // at that position, sequential ones the block itself.
        let at = self.next;
        self.next += 1;
        if self.next >= self.blocks {
            self.next = 0;
        }
        let block = if self.op.is_random() {
            self.shuffle.at(at)
        } else {
            at
        };
        let dir = match self.op {
            Op::Read | Op::Randread => Dir::Read,
            Op::Write | Op::Randwrite => Dir::Write,
            Op::Randrw => {
                if self.rng.u8(0..100) < self.rwmixread {
                    Dir::Read
                } else {
                    Dir::Write
                }
            }
        };
        Some((self.start + block * self.bs, dir))
    }
}

/// Makes every 512-byte sector of a write unique, so deduplicating storage cannot fold blocks:
/// its first 8 bytes become the sector's own byte offset on the target and the next 8 a run
/// stamp. The rest stays the random fill. (With zero data, buffers stay all zeros.)
pub fn stamp(buf: &mut [u8], offset: u64, run: u64) {
    for (i, sector) in buf.chunks_mut(512).enumerate() {
        if sector.len() >= 16 {
            sector[..8].copy_from_slice(&(offset + (i as u64) * 512).to_le_bytes());
            sector[8..16].copy_from_slice(&run.to_le_bytes());
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_every_sector_with_its_offset() {
        let mut b = vec![0xAAu8; 4096];
        stamp(&mut b, 1 << 20, 7);
        for i in 0..8 {
            let s = &b[i * 512..];
            assert_eq!(
                u64::from_le_bytes(s[..8].try_into().unwrap()),
                (1 << 20) + i as u64 * 512
            );
            assert_eq!(u64::from_le_bytes(s[8..16].try_into().unwrap()), 7);
            assert_eq!(s[16], 0xAA);
        }
    }

    #[test]
    fn sequential_pattern_covers_the_region_once() {
        let mut p = Pattern {
            op: Op::Write,
            bs: 4096,
            start: 8192,
            blocks: 4,
            next: 0,
            remaining: Some(4),
            rng: fastrand::Rng::with_seed(1),
            rwmixread: 50,
            shuffle: Shuffle::new(4, 1),
        };
        let offs: Vec<u64> = std::iter::from_fn(|| p.next().map(|x| x.0)).collect();
        assert_eq!(offs, [8192, 12288, 16384, 20480]);
    }

    #[test]
    fn random_pattern_stays_in_region_and_mixes() {
        let mut p = Pattern {
            op: Op::Randrw,
            bs: 4096,
            start: 1 << 20,
            blocks: 256,
            next: 0,
            remaining: Some(10_000),
            rng: fastrand::Rng::with_seed(1),
            rwmixread: 70,
            shuffle: Shuffle::new(256, 1),
        };
        let mut reads = 0;
        while let Some((off, dir)) = p.next() {
            assert!((1 << 20..(1 << 20) + 256 * 4096).contains(&off) && off % 4096 == 0);
            if dir == Dir::Read {
                reads += 1;
            }
        }
        assert!((6500..7500).contains(&reads), "{reads}");
    }

    #[test]
    fn a_timed_pattern_wraps_to_the_region_start_every_pass() {
        // Time-based (no remaining count): the counters wrap by comparison, not division.
        for op in [Op::Read, Op::Randread] {
            let mut p = Pattern {
                op,
                bs: 512,
                start: 4096,
                blocks: 7,
                next: 0,
                remaining: None,
                rng: fastrand::Rng::with_seed(1),
                rwmixread: 100,
                shuffle: Shuffle::new(7, 3),
            };
            let passes: Vec<Vec<u64>> = (0..3)
                .map(|_| (0..7).map(|_| (p.next().unwrap().0 - 4096) / 512).collect())
                .collect();
            println!("{op:?}: {passes:?}");
            for pass in &passes {
                let mut sorted = pass.clone();
                sorted.sort();
                assert_eq!(
                    sorted,
                    (0..7).collect::<Vec<_>>(),
                    "{op:?}: each block once a pass"
                );
                assert_eq!(pass, &passes[0], "{op:?}: every pass in the same order");
            }
            if op == Op::Read {
                assert_eq!(passes[0], (0..7).collect::<Vec<_>>());
            }
        }
    }

    #[test]
    fn the_random_order_visits_every_block_once_per_pass() {
        for blocks in [1u64, 2, 3, 7, 256, 1000, 4097] {
            let sh = Shuffle::new(blocks, 42);
            let mut seen = vec![false; blocks as usize];
            for i in 0..blocks {
                let b = sh.at(i);
                assert!(b < blocks, "{b} of {blocks}");
                assert!(!seen[b as usize], "{b} twice in {blocks}");
                seen[b as usize] = true;
            }
        }
        // Not in order: a shuffle.
        let sh = Shuffle::new(1000, 7);
        let in_place = (0..1000).filter(|&i| sh.at(i) == i).count();
        assert!(in_place < 20, "{in_place} blocks in place");
    }
}
