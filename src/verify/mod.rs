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
//!
//! [`read_back`] checks a write, [`capacity`] a device's size; this file has what both report.
//! The text and the map of bad ranges are in `output::text`.

mod capacity;
mod read_back;
pub use capacity::*;
pub use read_back::*;

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use serde::{Deserialize, Serialize};

pub use crate::engine::pattern::{Stamp, StampJob};

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::pattern::{body_pattern, stamp};
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, Ordering};

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
        // Sampled too: a healthy loop device of 100M came back with "56 bad: 28672 bytes at
        // offset 0x63f0000: corrupt", the last two blocks written over each other.
        for size in [8u64 << 20, 100 << 20, 126 << 20] {
            let dev = Wrapping {
                data: Mutex::new(vec![0; size as usize]),
            };
            let (cap, rep) = capacity(&dev, size, CapacityMode::Sampled, &how(&cancel));
            println!("{size}: {cap:?}, {} checked", rep.sectors_checked);
            assert_eq!(cap.how, CapacityHow::Ok, "{size}: {cap:?}");
            assert!(!rep.is_bad(), "{size}: {rep:?}");
        }
    }

    /// Sampled blocks lie one after another, never over each other, the last at the end.
    #[test]
    fn sampled_blocks_do_not_overlap() {
        for size in [
            4096,
            8 << 20,
            (100 << 20) + 512,
            100 << 20,
            126 << 20,
            512 << 20,
            (1 << 40) + 4096,
        ] {
            for g in [512, 4096] {
                let b = capacity_blocks(size, CapacityMode::Sampled, g);
                assert!(!b.is_empty(), "{size}");
                for w in b.windows(2) {
                    assert!(w[0].0 + w[0].1 <= w[1].0, "{size}/{g}: {w:?}");
                }
                let last = b[b.len() - 1];
                assert!(last.0 + last.1 <= size, "{size}/{g}: {last:?}");
                assert!(
                    size - (last.0 + last.1) < g,
                    "{size}/{g}: ends at the end: {last:?}"
                );
                assert!(b.iter().all(|&(o, l)| o % g == 0 && l % g == 0 && l > 0));
                assert!(b.len() <= 1025, "{size}: {} blocks", b.len());
            }
        }
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
