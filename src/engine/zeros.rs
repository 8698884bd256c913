//! What the reads of a job brought back: a sample of them, looked at for blocks of zeros. The
//! analysis (`crate::analysis::unwritten`) says what the counts mean.

/// A read is looked at for zeros every this many bytes read at most (the first one too): every
/// 1024th 4 KiB read, every 4th 1 MiB read. Over a region under 128 MiB, more often: see
/// [`ZeroSampler::for_region`].
pub const ZERO_SAMPLE_EVERY: u64 = 4 << 20;
/// The least distance between two samples: every 16th 4 KiB read at most.
const ZERO_SAMPLE_MIN_EVERY: u64 = 64 << 10;
/// Bytes looked at from the start of a sampled block (its cost: docs/architecture.md).
const ZERO_SAMPLE_BYTES: usize = 64 << 10;

/// Samples what reads returned for blocks of zeros: what a device hands back for blocks that
/// were never written or were discarded, often without reading its medium. One read every
/// [`ZERO_SAMPLE_EVERY`] bytes (or less, over a small region), its first 64 KiB; an addition
/// and a branch a read otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ZeroSampler {
    bytes: u64,
    next: u64,
    /// Bytes read between two samples.
    pub every: u64,
    /// Blocks looked at.
    pub sampled: u64,
    /// Of those, all zeros.
    pub zero: u64,
}

impl Default for ZeroSampler {
    fn default() -> Self {
        Self {
            bytes: 0,
            next: 0,
            every: ZERO_SAMPLE_EVERY,
            sampled: 0,
            zero: 0,
        }
    }
}

impl ZeroSampler {
    /// A sampler for one pass over a job's region of `region` bytes: 32 samples a pass where
    /// the region is under 128 MiB (one every 4 MiB would be under the 8 that `zeros_read`
    /// needs below 32 MiB), but no closer than 64 KiB.
    pub fn for_region(region: u64) -> Self {
        Self {
            every: (region / 32).clamp(ZERO_SAMPLE_MIN_EVERY, ZERO_SAMPLE_EVERY),
            ..Self::default()
        }
    }

    /// Counts a completed read of `len` bytes; looks at its data (`block`, called only then)
    /// when another `every` bytes were read.
    #[inline]
    pub fn see<'a>(&mut self, len: u64, block: impl FnOnce() -> &'a [u8]) {
        self.bytes += len;
        if self.bytes <= self.next {
            return;
        }
        self.next += self.every;
        let b = block();
        let b = &b[..b.len().min(ZERO_SAMPLE_BYTES)];
        self.sampled += 1;
        // OR-folds of 64 bytes vectorise; an early exit per byte would not.
        if b.chunks(64).all(|c| c.iter().fold(0u8, |a, &x| a | x) == 0) {
            self.zero += 1;
        }
    }

    /// Adds another job's samples (the jobs of a run have regions of one size, so sample alike).
    pub fn add(&mut self, other: &ZeroSampler) {
        self.bytes += other.bytes;
        self.sampled += other.sampled;
        self.zero += other.zero;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_zero_sampler_looks_at_one_read_in_4_mib_and_only_then_at_its_data() {
        let zeros = vec![0u8; 4096];
        let mut data = zeros.clone();
        data[4095] = 1;
        let (mut z, mut looked) = (ZeroSampler::default(), 0);
        for _ in 0..4096 {
            z.see(4096, || {
                looked += 1;
                &zeros
            });
        }
        // Reads 1, 1025, 2049 and 3073 of 4096 (16 MiB).
        println!("{z:?}, data looked at {looked} times");
        assert_eq!((z.sampled, z.zero, looked), (4, 4, 4));
        let mut d = ZeroSampler::default();
        for _ in 0..4096 {
            d.see(4096, || &data);
        }
        assert_eq!(
            (d.sampled, d.zero),
            (4, 0),
            "a single non-zero byte is data"
        );
        // 1 MiB reads: every fourth; only the first 64 KiB is looked at.
        let mut big = vec![0u8; 1 << 20];
        big[(1 << 20) - 1] = 1;
        let mut m = ZeroSampler::default();
        for _ in 0..16 {
            m.see(1 << 20, || &big);
        }
        assert_eq!((m.sampled, m.zero), (4, 4));
        z.add(&d);
        assert_eq!((z.sampled, z.zero), (8, 4));
    }

    #[test]
    fn a_small_region_is_sampled_32_times_a_pass() {
        let every = |region: u64| ZeroSampler::for_region(region).every;
        println!(
            "every: 16M {}, 64M {}, 1G {}, 1M {}",
            every(16 << 20),
            every(64 << 20),
            every(1 << 30),
            every(1 << 20)
        );
        assert_eq!(every(16 << 20), 512 << 10);
        assert_eq!(every(64 << 20), 2 << 20);
        assert_eq!(every(128 << 20), ZERO_SAMPLE_EVERY);
        assert_eq!(every(1 << 30), ZERO_SAMPLE_EVERY);
        assert_eq!(every(1 << 20), 64 << 10, "no closer than 64 KiB");
        // One pass of 4 KiB reads over 16 MiB: 32 samples (4 at one every 4 MiB, under the 8
        // that zeros_read needs).
        let zeros = [0u8; 4096];
        let mut z = ZeroSampler::for_region(16 << 20);
        for _ in 0..4096 {
            z.see(4096, || &zeros);
        }
        println!("{z:?}");
        assert_eq!((z.sampled, z.zero), (32, 32));
    }
}
