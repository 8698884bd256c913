//! Which of a test's I/Os are timed at every step, from the engine's submission through the
//! block layer's queue and the device back to the engine: those whose first sector (512-byte
//! units, on the device the trace sees) passes one test that the engine and the trace's
//! tally both apply, each to what it sees. The engine keeps its I/Os' submission and
//! completion times, the tally the block layer's three times of the same I/Os, and the
//! analysis pairs them by sector and time (`crate::analysis::steps`).
//!
//! Each side keeps a bounded number: when its store is full it keeps half (`tighten`). The
//! test is nested (what level `n + 1` keeps, level `n` kept), so whichever side went further,
//! the I/Os both kept are those of the stricter level, spread over the whole run.

/// The test at a level: level 0 keeps every sector, each level half of the one before.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pick {
    level: u32,
}

/// How many timed I/Os a side keeps at most (32 bytes each).
pub const MAX_TIMED: usize = 1 << 15;

impl Pick {
    pub fn level(&self) -> u32 {
        self.level
    }

    /// Whether an I/O at `sector` is timed at this level: the first `level` bits of a mix of
    /// its sector are zero (a sequential test's sectors are spread as a random one's are).
    #[inline]
    pub fn keeps(&self, sector: u64) -> bool {
        mix(sector).leading_zeros() >= self.level
    }

    /// Keeps half as many from now on, and drops from `kept` what this level no longer keeps.
    pub fn tighten<T>(&mut self, kept: &mut Vec<T>, sector: impl Fn(&T) -> u64) {
        self.level += 1;
        let p = *self;
        kept.retain(|t| p.keeps(sector(t)));
    }

    /// Keeps `t` where this level keeps its sector, in `kept` of at most [`MAX_TIMED`].
    #[inline]
    pub fn keep<T>(&mut self, kept: &mut Vec<T>, t: T, sector: impl Fn(&T) -> u64) {
        if !self.keeps(sector(&t)) {
            return;
        }
        kept.push(t);
        while kept.len() >= MAX_TIMED && self.level < 64 {
            self.tighten(kept, &sector);
        }
    }
}

/// splitmix64's finalizer: a sector's bits spread over the whole word.
#[inline]
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_are_nested_and_halve() {
        let sectors: Vec<u64> = (0..100_000u64).map(|i| i * 8).collect();
        let at = |level| {
            let p = Pick { level };
            sectors.iter().filter(|&&s| p.keeps(s)).count()
        };
        let counts: Vec<usize> = (0..6).map(at).collect();
        println!("kept at levels 0..6: {counts:?}");
        assert_eq!(counts[0], sectors.len());
        for w in counts.windows(2) {
            let ratio = w[1] as f64 / w[0] as f64;
            assert!((0.45..0.55).contains(&ratio), "{counts:?}");
        }
        let (two, three) = (Pick { level: 2 }, Pick { level: 3 });
        assert!(sectors.iter().all(|&s| !three.keeps(s) || two.keeps(s)));
    }

    #[test]
    fn a_full_store_keeps_half_and_stays_bounded() {
        let mut p = Pick::default();
        let mut kept = Vec::new();
        for s in 0..(MAX_TIMED as u64 * 5) {
            p.keep(&mut kept, s * 8, |&s| s);
        }
        println!("level {} kept {}", p.level(), kept.len());
        assert!(kept.len() < MAX_TIMED && kept.len() > MAX_TIMED / 8);
        assert!(p.level() >= 2);
        assert!(kept.iter().all(|&s| p.keeps(s)));
    }
}
