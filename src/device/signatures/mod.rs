//! A small read-only probe for on-disk signatures, so the safety check knows whether a device
//! carries a partition table, a file system, a swap area or a RAID/LVM/LUKS member.
//!
//! Offsets and magics follow util-linux's libblkid (`libblkid/src/superblocks/*.c` and
//! `partitions/*.c`); the offset reported for each signature is where its magic sits, which is
//! what `wipefs -n` prints, so the two can be compared (see `tests/signatures.rs`).
//! We do not link libblkid: it is not a Rust crate, it would make the binary depend on a shared
//! library that rescue systems may lack, and the handful of magics the safety check needs is small.
//!
//! [`probe`] finds the signatures, [`blank`] says whether a device is all zeros where sampled
//! (and [`whole`] where every byte is read), [`hidden`] looks for formats behind a zeroed
//! start, at the places [`backups`] knows; this file has their types and the byte readers
//! they share.

mod backups;
mod blank;
mod hidden;
mod probe;
mod whole;
pub use backups::copy_name;
pub use blank::*;
pub use hidden::*;
pub use probe::*;
pub use whole::*;

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

use serde::{Deserialize, Serialize};

/// What a signature means for a write test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Usage {
    PartitionTable,
    Filesystem,
    Swap,
    Raid,
    Crypto,
}

/// One signature found on a device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signature {
    /// libblkid's name for it: `gpt`, `PMBR`, `dos`, `ext4`, `xfs`, `btrfs`, `swap`,
    /// `LVM2_member`, `linux_raid_member`, `crypto_LUKS`, `vfat`, `ntfs`, `iso9660`, ...
    #[serde(rename = "type")]
    pub kind: String,
    /// Byte offset of the magic from the start of the device.
    pub offset: u64,
    pub usage: Usage,
}

impl Signature {
    fn new(kind: &str, offset: u64, usage: Usage) -> Self {
        Self {
            kind: kind.to_string(),
            offset,
            usage,
        }
    }
}

/// What the regions read of a device hold: the blank test. "I recognise no format" is not
/// "it is empty": a device is blank only when every byte read is zero, or every one is 0xff (a
/// fresh flash erase).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Blank {
    /// Every byte read (`bytes_read` of them, at `places` places, in `seconds`) is `byte`;
    /// `read` says how the places were chosen.
    Blank {
        byte: u8,
        bytes_read: u64,
        #[serde(default)]
        read: Coverage,
        #[serde(default)]
        places: u64,
        #[serde(default)]
        seconds: f64,
    },
    /// Not blank: the first byte that is data is at `offset`.
    Data { offset: u64 },
    /// Not read, and why.
    Unknown { why: String },
}

/// How the blank test chose what to read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Coverage {
    /// Its edges, the first 16 MiB densely, and 64 places between: what a young file system
    /// or a partition table would show, not data in between.
    #[default]
    Sampled,
    /// The samples and every data extent of a loop device's backing file: the rest of the file
    /// is holes, which read as zeros, so this is as good as a whole read.
    DataExtents,
    /// Every byte.
    Whole,
}

impl Blank {
    pub fn unknown(why: impl Into<String>) -> Self {
        Blank::Unknown { why: why.into() }
    }

    /// How a blank device was judged, in a few words: "read whole (1G in 0.8 s)", "every data
    /// extent of its backing file read (5.5M at 95 places)", "blank where sampled (5.5M at 95
    /// places)". None when it is not blank.
    pub fn judged(&self) -> Option<String> {
        use crate::units::{count, fmt_size};
        let Blank::Blank {
            bytes_read,
            read,
            places,
            seconds,
            ..
        } = self
        else {
            return None;
        };
        let (size, at) = (fmt_size(*bytes_read), count(*places as usize, "place"));
        Some(match read {
            Coverage::Whole => format!("read whole ({size} in {seconds:.1} s)"),
            Coverage::DataExtents => {
                format!("every data extent of its backing file read ({size} at {at})")
            }
            Coverage::Sampled => format!("blank where sampled ({size} at {at})"),
        })
    }
}

/// A format found where nothing at the start of the device says so: where a partition
/// usually begins, or at a copy a format keeps elsewhere. What `dd if=/dev/zero bs=1M count=1`,
/// `sgdisk --zap-all` or a new empty table leaves behind: the partitions' data, intact and
/// recoverable (testdisk), on a device whose start reads as blank.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hidden {
    /// libblkid's name for it (`ext4`, `xfs`, `crypto_LUKS`, `gpt`, ...).
    #[serde(rename = "type")]
    pub kind: String,
    /// Where the format begins (a partition's start; for a copy, where its original is).
    pub start: u64,
    /// Where its magic was seen.
    pub offset: u64,
    pub usage: Usage,
    /// What was found: the format at a partition's start (`partition`), or a copy it keeps
    /// (`backup`: a GPT's header in the last sector, an ext backup superblock, an XFS secondary
    /// superblock, a btrfs mirror, NTFS's backup boot sector).
    pub found: String,
    /// The tool that recovers it from there (`e2fsck -b 24577 -B 1024`, `xfs_repair`,
    /// `testdisk`, ...).
    #[serde(default)]
    pub recover: String,
}

/// `len` bytes at `off` (fewer at the end of the device), read in whole 4 KiB blocks into an
/// aligned buffer, so that an O_DIRECT descriptor serves too; then dropped from the page cache.
fn read_aligned(f: &File, off: u64, len: usize) -> io::Result<Vec<u8>> {
    let from = off & !0xfff;
    let to = (off + len as u64 + 0xfff) & !0xfff;
    let mut buf = crate::sys::AlignedBuf::new((to - from) as usize, 4096);
    let got = read_into(f, buf.as_mut_slice(), from)?;
    let _ = crate::sys::drop_cache_range(f, from, to - from);
    let skip = (off - from) as usize;
    Ok(buf.as_slice()[skip.min(got)..got.min(skip + len)].to_vec())
}

/// Reads into `buf` at `off`; fewer bytes at the end of the file. Returns how many.
fn read_into(f: &File, buf: &mut [u8], off: u64) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match f.read_at(&mut buf[got..], off + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Reads `len` bytes at `off`, or fewer at the end of the file.
fn read_region(f: &File, off: u64, len: usize) -> io::Result<Vec<u8>> {
    let mut buf = vec![0u8; len];
    let got = read_into(f, &mut buf, off)?;
    buf.truncate(got);
    Ok(buf)
}

fn at(buf: &[u8], off: usize, len: usize) -> Option<&[u8]> {
    buf.get(off..off.checked_add(len)?)
}

fn le16(buf: &[u8], off: usize) -> Option<u16> {
    at(buf, off, 2).map(|b| u16::from_le_bytes([b[0], b[1]]))
}

fn le32(buf: &[u8], off: usize) -> Option<u32> {
    at(buf, off, 4).map(|b| u32::from_le_bytes(b.try_into().unwrap_or([0; 4])))
}

fn le64(buf: &[u8], off: usize) -> Option<u64> {
    at(buf, off, 8).map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
}

fn has(buf: &[u8], off: usize, magic: &[u8]) -> bool {
    at(buf, off, magic.len()) == Some(magic)
}

fn be32(buf: &[u8], off: usize) -> Option<u32> {
    at(buf, off, 4).map(|b| u32::from_be_bytes(b.try_into().unwrap_or([0; 4])))
}

fn be64(buf: &[u8], off: usize) -> Option<u64> {
    at(buf, off, 8).map(|b| u64::from_be_bytes(b.try_into().unwrap_or([0; 8])))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn image(size: usize, patches: &[(usize, &[u8])]) -> File {
        let mut buf = vec![0u8; size];
        for (off, bytes) in patches {
            buf[*off..*off + bytes.len()].copy_from_slice(bytes);
        }
        let mut f = tempfile::tempfile().expect("tempfile");
        f.write_all(&buf).expect("write");
        f
    }

    fn kinds(f: &File, size: u64) -> Vec<(String, u64)> {
        probe(f, size, 0)
            .expect("probe")
            .into_iter()
            .map(|s| (s.kind, s.offset))
            .collect()
    }

    #[test]
    fn blank_has_nothing() {
        let f = image(1 << 20, &[]);
        assert!(kinds(&f, 1 << 20).is_empty());
    }

    #[test]
    fn tiny_file_does_not_fail() {
        let f = image(100, &[]);
        assert!(kinds(&f, 100).is_empty());
    }

    #[test]
    fn lvm2_label_in_sector_one() {
        // LABELONE, sector_xl = 1, crc, offset, "LVM2 001" at +0x18.
        let mut label = Vec::new();
        label.extend_from_slice(b"LABELONE");
        label.extend_from_slice(&1u64.to_le_bytes());
        label.extend_from_slice(&[0; 8]);
        label.extend_from_slice(b"LVM2 001");
        let f = image(1 << 20, &[(512, &label)]);
        assert_eq!(kinds(&f, 1 << 20), vec![("LVM2_member".into(), 0x218)]);
        // A label claiming the wrong sector is not one.
        let f = image(1 << 20, &[(1024, &label)]);
        assert!(kinds(&f, 1 << 20).is_empty());
    }

    #[test]
    fn md_v1_2_superblock() {
        let mut sb = vec![0u8; 152];
        sb[0..4].copy_from_slice(&0xa92b4efcu32.to_le_bytes());
        sb[4..8].copy_from_slice(&1u32.to_le_bytes());
        sb[144..152].copy_from_slice(&(0x1000u64 >> 9).to_le_bytes());
        let f = image(1 << 20, &[(0x1000, &sb)]);
        assert_eq!(
            kinds(&f, 1 << 20),
            vec![("linux_raid_member".into(), 0x1000)]
        );
    }

    #[test]
    fn md_v0_90_superblock_at_end() {
        let size = (1 << 20) + 5000;
        let off = ((size as u64) & !0xffff) - 0x10000;
        let f = image(size, &[(off as usize, &0xa92b4efcu32.to_le_bytes())]);
        assert_eq!(
            kinds(&f, size as u64),
            vec![("linux_raid_member".into(), off)]
        );
    }

    #[test]
    fn luks_primary_header() {
        let f = image(1 << 20, &[(0, b"LUKS\xba\xbe\x00\x02")]);
        assert_eq!(kinds(&f, 1 << 20), vec![("crypto_LUKS".into(), 0)]);
    }

    #[test]
    fn ext_flavours_by_features() {
        let mk = |compat: u32, incompat: u32, ro: u32| {
            let mut v = vec![0u8; 0x500];
            v[0x438..0x43a].copy_from_slice(&0xEF53u16.to_le_bytes());
            v[0x45C..0x460].copy_from_slice(&compat.to_le_bytes());
            v[0x460..0x464].copy_from_slice(&incompat.to_le_bytes());
            v[0x464..0x468].copy_from_slice(&ro.to_le_bytes());
            v
        };
        assert_eq!(ext_flavour(&mk(0, 0x2, 0x3)), "ext2");
        assert_eq!(ext_flavour(&mk(0x4, 0x2, 0x3)), "ext3");
        assert_eq!(ext_flavour(&mk(0x4, 0x2 | 0x40, 0x3)), "ext4");
        assert_eq!(ext_flavour(&mk(0, 0x8, 0)), "jbd");
    }

    #[test]
    fn dos_table_but_not_fat_boot_sector() {
        // One bootable Linux partition entry and the marker.
        let mut entry = [0u8; 16];
        entry[0] = 0x80;
        entry[4] = 0x83;
        let f = image(1 << 20, &[(0x1BE, &entry), (0x1FE, &[0x55, 0xAA])]);
        assert_eq!(kinds(&f, 1 << 20), vec![("dos".into(), 0x1FE)]);
        // Marker alone with garbage flags: not a table.
        let mut bad = [0u8; 16];
        bad[0] = 0x33;
        bad[4] = 0x83;
        let f = image(1 << 20, &[(0x1BE, &bad), (0x1FE, &[0x55, 0xAA])]);
        assert!(kinds(&f, 1 << 20).is_empty());
    }

    #[test]
    fn formats_known_by_their_magic_only() {
        let cases: [(&str, usize, &[u8]); 4] = [
            ("BitLocker", 3, b"-FVE-FS-"),
            ("apfs", 32, b"NXSB"),
            ("ceph_bluestore", 0, b"bluestore block device"),
            ("bcachefs", 0x1018, &BCACHEFS_MAGIC),
        ];
        for (kind, off, magic) in cases {
            let f = image(1 << 20, &[(off, magic)]);
            let k = kinds(&f, 1 << 20);
            assert!(
                k.iter().any(|(t, o)| t == kind && *o == off as u64),
                "{kind}: {k:?}"
            );
        }
    }

    #[test]
    fn blank_regions_cover_both_ends_the_first_16_mib_and_64_places() {
        let size = 500u64 << 30;
        let r = blank_regions(size);
        assert_eq!(r.first(), Some(&(0, BLANK_EDGE)));
        assert_eq!(r.last(), Some(&(size - BLANK_EDGE, BLANK_EDGE)));
        let dense = r.iter().filter(|x| x.0 < BLANK_DENSE_END).count() - 1;
        assert_eq!(dense, 30, "every 512 KiB from 1 to 16 MiB");
        assert_eq!(r.len(), 2 + 30 + BLANK_SAMPLES as usize);
        let total: u64 = r.iter().map(|x| x.1).sum();
        assert_eq!(total, (5 << 20) + 30 * BLANK_DENSE_LEN);
        for w in r.windows(2) {
            assert!(w[0].0 + w[0].1 <= w[1].0, "in order, no overlap: {w:?}");
        }
        // A device smaller than the two ends is read once, whole.
        assert_eq!(blank_regions(300 << 10), [(0, 300 << 10)]);
        assert_eq!(blank_regions(0), [(0, 0)]);
    }

    #[test]
    fn blank_scan_says_which_byte_and_where_data_starts() {
        let f = image(4 << 20, &[]);
        assert!(matches!(
            scan_blank(&f, 4 << 20, &Extra::default()).unwrap(),
            Blank::Blank { byte: 0, .. }
        ));
        // The only non-zero byte is the first: data at 0, not at the first zero after it.
        let f = image(4 << 20, &[(0, b"x")]);
        assert_eq!(
            scan_blank(&f, 4 << 20, &Extra::default()).unwrap(),
            Blank::Data { offset: 0 }
        );
        let f = image(4 << 20, &[(0, &[0xff; 8192])]);
        assert_eq!(
            scan_blank(&f, 4 << 20, &Extra::default()).unwrap(),
            Blank::Data { offset: 8192 }
        );
        let f = image(4 << 20, &[(3 << 20, b"x")]);
        assert_eq!(
            scan_blank(&f, 4 << 20, &Extra::default()).unwrap(),
            Blank::Data { offset: 3 << 20 }
        );
    }
}
