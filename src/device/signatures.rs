//! A small read-only probe for on-disk signatures, so the safety check knows whether a device
//! carries a partition table, a file system, a swap area or a RAID/LVM/LUKS member.
//!
//! Offsets and magics follow util-linux's libblkid (`libblkid/src/superblocks/*.c` and
//! `partitions/*.c`); the offset reported for each signature is where its magic sits, which is
//! what `wipefs -n` prints, so the two can be compared (see `tests/signatures.rs`).
//! We do not link libblkid: it is not a Rust crate, it would make the binary depend on a shared
//! library that rescue systems may lack, and the handful of magics the safety check needs is small.

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

/// What the sampled regions of a device hold: the blank test. "I recognise no format" is not
/// "it is empty": a device is blank only when every byte read is the same (zeros, or 0xff from
/// a fresh flash erase).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum Blank {
    /// Every byte read (`bytes_read` of them) is `byte`.
    Blank { byte: u8, bytes_read: u64 },
    /// Not blank: the first byte that differs from the device's first byte is at `offset`.
    Data { offset: u64 },
    /// Not read, and why.
    Unknown { why: String },
}

impl Blank {
    pub fn unknown(why: impl Into<String>) -> Self {
        Blank::Unknown { why: why.into() }
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
    /// (`backup`: a GPT's header in the last sector, an ext backup superblock, btrfs's mirror).
    pub found: String,
}

/// Where partitions usually begin, in bytes: 63 sectors (old DOS tables, 512- and 4096-byte
/// sectors), and 1 MiB and its multiples up to 16 MiB (2048 sectors; 2048 4096-byte sectors is
/// 8 MiB).
pub const PARTITION_STARTS: [u64; 8] = [
    63 * 512,
    63 * 4096,
    1 << 20,
    2 << 20,
    3 << 20,
    4 << 20,
    8 << 20,
    16 << 20,
];

/// The places a format that begins at one of them keeps a copy of its superblock is looked
/// for from: the device's start, and where partitions most often begin (2048 sectors of 512
/// and of 4096 bytes).
const BACKUPS_FROM: [u64; 3] = [0, 1 << 20, 8 << 20];

/// Looks for a format behind a wiped partition table: at the places partitions usually begin,
/// then for the copies formats keep (a GPT's backup header in the last sector; ext's backup
/// superblocks and btrfs's mirror). The first found; None when nothing is there. `f` may be
/// opened with O_DIRECT (every read is 4 KiB aligned); a buffered `f` has what was read dropped
/// from the page cache again. Reads about 0.6 MiB in 24 reads at most.
pub fn probe_hidden(f: &File, size: u64, sector: u32) -> io::Result<Option<Hidden>> {
    let lbs = (sector as u64).max(512);
    for &start in PARTITION_STARTS
        .iter()
        .filter(|&&p| p < size && p % lbs == 0)
    {
        let head = read_aligned(f, start, HEAD_LEN.min((size - start) as usize))?;
        let mut found = Vec::new();
        probe_filesystems(&head, &mut found);
        probe_md_head(&head, &mut found);
        if let Some(s) = found.into_iter().min_by_key(|s| s.offset) {
            return Ok(Some(Hidden {
                kind: s.kind,
                start,
                offset: start + s.offset,
                usage: s.usage,
                found: "partition".into(),
            }));
        }
    }
    if let Some(h) = gpt_backup(f, size, sector)? {
        return Ok(Some(h));
    }
    for start in BACKUPS_FROM {
        if let Some(h) = backup_superblock(f, size, start)? {
            return Ok(Some(h));
        }
    }
    Ok(None)
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

/// A GPT's backup header ("EFI PART") in the device's last sector.
fn gpt_backup(f: &File, size: u64, sector: u32) -> io::Result<Option<Hidden>> {
    let sectors: &[u64] = match sector {
        512 | 4096 => &[sector as u64],
        _ => &[512, 4096],
    };
    for &lbs in sectors {
        if size < 2 * lbs {
            continue;
        }
        let last = size - lbs;
        if read_aligned(f, last, 8)? == b"EFI PART" {
            return Ok(Some(Hidden {
                kind: "gpt".into(),
                start: 0,
                offset: last,
                usage: Usage::PartitionTable,
                found: "backup".into(),
            }));
        }
    }
    Ok(None)
}

/// An ext backup superblock (in block group 1, for 1, 2 and 4 KiB blocks) or btrfs's first
/// mirror (64 MiB) of a file system that begins at `start`.
fn backup_superblock(f: &File, size: u64, start: u64) -> io::Result<Option<Hidden>> {
    // ext: group 1 starts at block 8193 (1 KiB blocks), 16384 (2 KiB) or 32768 (4 KiB); the
    // magic 0xEF53 is at +0x38 and the group of the copy at +0x5A (s_block_group_nr 1).
    for (block, len) in [(8193u64, 1024u64), (16384, 2048), (32768, 4096)] {
        let at = start + block * len;
        if at + 0x60 > size {
            continue;
        }
        let b = read_aligned(f, at, 0x60)?;
        if le16(&b, 0x38) == Some(0xEF53) && le16(&b, 0x5A) == Some(1) {
            return Ok(Some(Hidden {
                kind: "ext".into(),
                start,
                offset: at + 0x38,
                usage: Usage::Filesystem,
                found: "backup".into(),
            }));
        }
    }
    let mirror = start + 0x400_0040;
    if mirror + 8 <= size && read_aligned(f, mirror, 8)? == b"_BHRfS_M" {
        return Ok(Some(Hidden {
            kind: "btrfs".into(),
            start,
            offset: mirror,
            usage: Usage::Filesystem,
            found: "backup".into(),
        }));
    }
    Ok(None)
}

/// The blank test reads the first and the last MiB ...
pub const BLANK_EDGE: u64 = 1 << 20;
/// ... the rest of the first 16 MiB densely, where partitions begin and file systems keep their
/// metadata (a young ext4 or XFS has little else) ...
pub const BLANK_DENSE_END: u64 = 16 << 20;
/// ... there, this many bytes every [`BLANK_DENSE_STEP`] ...
pub const BLANK_DENSE_LEN: u64 = 16 << 10;
pub const BLANK_DENSE_STEP: u64 = 512 << 10;
/// ... and this many regions beyond, at fixed fractions of the size ...
pub const BLANK_SAMPLES: u64 = 64;
/// ... of this many bytes each: 6 MiB in all at most.
pub const BLANK_SAMPLE_LEN: u64 = 48 << 10;

/// The (offset, length) regions the blank test reads on a device of `size` bytes, in order,
/// inside the device, 4 KiB aligned, without overlap.
pub fn blank_regions(size: u64) -> Vec<(u64, u64)> {
    let inner = BLANK_EDGE..size.saturating_sub(BLANK_EDGE);
    let mut want: Vec<(u64, u64)> = Vec::new();
    if inner.end > inner.start {
        let dense_end = BLANK_DENSE_END.min(inner.end);
        want.extend(
            (inner.start..dense_end)
                .step_by(BLANK_DENSE_STEP as usize)
                .map(|at| (at, BLANK_DENSE_LEN)),
        );
        for k in 1..=BLANK_SAMPLES {
            let at = (size as u128 * k as u128 / (BLANK_SAMPLES + 1) as u128) as u64 & !0xfff;
            want.push((at.max(inner.start), BLANK_SAMPLE_LEN));
        }
    }
    want.sort_unstable();
    let mut v = vec![(0, BLANK_EDGE.min(size))];
    for (at, len) in want {
        // In order, without overlap, inside the part between the two ends.
        let start = at.max(v.last().map_or(0, |&(o, l)| o + l));
        let end = (at + len).min(inner.end);
        if end > start {
            v.push((start, end - start));
        }
    }
    if size > BLANK_EDGE {
        let tail = size - BLANK_EDGE.min(size - BLANK_EDGE);
        let start = tail.max(v.last().map(|&(o, l)| o + l).unwrap_or(0));
        if size > start {
            v.push((start, size - start));
        }
    }
    v
}

/// Reads the blank test's regions of `f` (a device or image of `size` bytes), 64 KiB at a time
/// so that data near the start ends it early. A region cut short by the end of the file (a
/// fixture's short image) counts as far as it was read. What it read is dropped from the page
/// cache again, so a buffered test afterwards finds the device as cold as it was.
pub fn scan_blank(f: &File, size: u64) -> io::Result<Blank> {
    let regions = blank_regions(size);
    let r = scan_regions(f, &regions, &mut vec![0u8; 64 << 10]);
    for &(off, len) in &regions {
        let _ = crate::sys::drop_cache_range(f, off, len);
    }
    r
}

/// [`scan_blank`] through a descriptor opened with O_DIRECT: the page cache is not touched at
/// all (nothing to drop, nothing of others' dropped), and it is faster. Regions are 4 KiB
/// aligned; the last one of a device whose size is not is read as far as O_DIRECT allows.
pub fn scan_blank_direct(f: &File, size: u64) -> io::Result<Blank> {
    let regions: Vec<(u64, u64)> = blank_regions(size)
        .into_iter()
        .map(|(o, l)| (o, l / 4096 * 4096))
        .filter(|r| r.1 > 0)
        .collect();
    let mut buf = crate::sys::AlignedBuf::new(64 << 10, 4096);
    scan_regions(f, &regions, buf.as_mut_slice())
}

fn scan_regions(f: &File, regions: &[(u64, u64)], buf: &mut [u8]) -> io::Result<Blank> {
    const STEP: usize = 64 << 10;
    let mut first: Option<u8> = None;
    let mut read = 0u64;
    // The same byte as the device's first, to compare whole reads at memcmp speed.
    let mut same = vec![0u8; STEP];
    for &(off, len) in regions {
        let mut pos = off;
        while pos < off + len {
            let n = (off + len - pos).min(STEP as u64) as usize;
            let got = read_into(f, &mut buf[..n], pos)?;
            if got == 0 {
                break;
            }
            let b = &buf[..got];
            let b0 = *first.get_or_insert_with(|| {
                same.fill(b[0]);
                b[0]
            });
            if b != &same[..got] {
                let i = b.iter().position(|&x| x != b0).unwrap_or(0);
                return Ok(Blank::Data {
                    offset: pos + i as u64,
                });
            }
            read += got as u64;
            pos += got as u64;
            if got < n {
                break;
            }
        }
    }
    Ok(match first {
        Some(byte) => Blank::Blank {
            byte,
            bytes_read: read,
        },
        None => Blank::unknown("nothing could be read from it"),
    })
}

/// How much of the start of a device is read: enough for btrfs (64 KiB + 0x40), swap with
/// 64 KiB pages (0xfff6) and iso9660 (32 KiB + 1).
const HEAD_LEN: usize = 0x11000;
const MD_RESERVED: u64 = 0x10000;

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

/// Probes an open device or image of `size` bytes whose logical sector is `sector` bytes
/// (for an image file pass 0: both 512 and 4096 are tried for GPT, as sfdisk writes files
/// with 512-byte sectors).
pub fn probe(f: &File, size: u64, sector: u32) -> io::Result<Vec<Signature>> {
    let head = read_region(f, 0, HEAD_LEN.min(size as usize))?;
    let mut found = Vec::new();

    probe_filesystems(&head, &mut found);
    probe_md(f, &head, size, &mut found)?;
    probe_tail(f, size, &mut found)?;
    probe_partition_tables(f, &head, size, sector, &mut found)?;

    found.sort_by_key(|s| s.offset);
    Ok(found)
}

/// The signatures the start of a device (`head`, [`HEAD_LEN`] bytes) shows.
fn probe_filesystems(head: &[u8], found: &mut Vec<Signature>) {
    probe_linux(head, found);
    probe_windows_and_media(head, found);
    probe_other_filesystems(head, found);
}

/// Linux's common formats: ext, XFS, btrfs, swap, LVM and LUKS.
fn probe_linux(head: &[u8], found: &mut Vec<Signature>) {
    // ext2/3/4: superblock at 1024, s_magic 0xEF53 at +0x38 (libblkid ext.c).
    if le16(head, 0x438) == Some(0xEF53) {
        found.push(Signature::new(ext_flavour(head), 0x438, Usage::Filesystem));
    }
    if has(head, 0, b"XFSB") {
        found.push(Signature::new("xfs", 0, Usage::Filesystem));
    }
    // btrfs: kboff 64, sboff 0x40.
    if has(head, 0x10040, b"_BHRfS_M") {
        found.push(Signature::new("btrfs", 0x10040, Usage::Filesystem));
    }
    // swap: the magic ends the first page, for page sizes 4K to 64K.
    for off in [0xff6usize, 0x1ff6, 0x3ff6, 0x7ff6, 0xfff6] {
        if has(head, off, b"SWAPSPACE2") || has(head, off, b"SWAP-SPACE") {
            found.push(Signature::new("swap", off as u64, Usage::Swap));
            break;
        }
    }
    // LVM2 PV label: "LABELONE" in one of the first four sectors, type "LVM2 001" at +0x18,
    // and the label's own sector number recorded in it (libblkid lvm.c).
    for sector in 0..4u64 {
        let off = (sector * 512) as usize;
        if has(head, off, b"LABELONE")
            && le64(head, off + 8) == Some(sector)
            && has(head, off + 0x18, b"LVM2 001")
        {
            found.push(Signature::new(
                "LVM2_member",
                off as u64 + 0x18,
                Usage::Raid,
            ));
            break;
        }
    }
    // LUKS1/LUKS2 primary header at 0; a LUKS2 secondary header at one of fixed offsets, its
    // own offset recorded (big endian) at +0x100 (luks.c). wipefs lists both.
    if has(head, 0, b"LUKS\xba\xbe") {
        found.push(Signature::new("crypto_LUKS", 0, Usage::Crypto));
    }
    for off in [0x4000usize, 0x8000, 0x10000] {
        if has(head, off, b"SKUL\xba\xbe") && be64(head, off + 0x100) == Some(off as u64) {
            found.push(Signature::new("crypto_LUKS", off as u64, Usage::Crypto));
            break;
        }
    }
}

/// Windows' and removable media's: NTFS, FAT, ISO 9660, exFAT, BitLocker.
fn probe_windows_and_media(head: &[u8], found: &mut Vec<Signature>) {
    // NTFS: OEM id at 3.
    if has(head, 3, b"NTFS    ") {
        found.push(Signature::new("ntfs", 3, Usage::Filesystem));
    }
    // vfat: a jump instruction, a FAT type string and the boot-sector marker (vfat.c magics).
    // libblkid (and so wipefs) records both the jump byte at 0 and the type string.
    if matches!(head.first(), Some(0xEB) | Some(0xE9)) && le16(head, 0x1FE) == Some(0xAA55) {
        let fat32 = [&b"MSWIN"[..], b"FAT32   "];
        let fat16 = [&b"MSDOS"[..], b"FAT16   ", b"FAT12   ", b"FAT     "];
        let at = if fat32.iter().any(|m| has(head, 0x52, m)) {
            Some(0x52)
        } else if fat16.iter().any(|m| has(head, 0x36, m)) {
            Some(0x36)
        } else {
            None
        };
        if let Some(off) = at {
            found.push(Signature::new("vfat", 0, Usage::Filesystem));
            found.push(Signature::new("vfat", off, Usage::Filesystem));
            found.push(Signature::new("vfat", 0x1FE, Usage::Filesystem));
        }
    }
    // iso9660: primary volume descriptor at 32 KiB, "CD001" at +1.
    if has(head, 0x8001, b"CD001") {
        found.push(Signature::new("iso9660", 0x8001, Usage::Filesystem));
    }
    // exFAT: OEM name "EXFAT   " at 3 (exfat.c). Its boot sector ends in 0x55AA too.
    if has(head, 3, b"EXFAT   ") {
        found.push(Signature::new("exfat", 3, Usage::Filesystem));
    }
    // BitLocker: "-FVE-FS-" at 3 (bitlocker.c); the volume header of Windows 7 and later.
    if has(head, 3, b"-FVE-FS-") {
        found.push(Signature::new("BitLocker", 3, Usage::Crypto));
    }
}

/// The rest: f2fs, erofs, squashfs, jfs, reiserfs, nilfs2, bcache(fs), APFS, BlueStore, UDF.
fn probe_other_filesystems(head: &[u8], found: &mut Vec<Signature>) {
    // f2fs: superblock at 1 KiB, magic 0xF2F52010 (f2fs.c).
    if le32(head, 0x400) == Some(0xF2F5_2010) {
        found.push(Signature::new("f2fs", 0x400, Usage::Filesystem));
    }
    // erofs: superblock at 1 KiB, magic 0xE0F5E1E2 (erofs.c).
    if le32(head, 0x400) == Some(0xE0F5_E1E2) {
        found.push(Signature::new("erofs", 0x400, Usage::Filesystem));
    }
    // squashfs 4 (little endian): "hsqs" at 0 (squashfs.c); version 3 and older, squashfs3.
    if has(head, 0, b"hsqs") {
        let kind = if le16(head, 28).is_some_and(|major| major < 4) {
            "squashfs3"
        } else {
            "squashfs"
        };
        found.push(Signature::new(kind, 0, Usage::Filesystem));
    }
    // jfs: "JFS1" at 32 KiB (jfs.c).
    if has(head, 0x8000, b"JFS1") {
        found.push(Signature::new("jfs", 0x8000, Usage::Filesystem));
    }
    // reiserfs 3.6 / 3.5 / jr: the magic at 64 KiB + 52 (reiserfs.c).
    for magic in [&b"ReIsEr2Fs"[..], b"ReIsEr3Fs", b"ReIsErFs"] {
        if has(head, 0x10034, magic) {
            found.push(Signature::new("reiserfs", 0x10034, Usage::Filesystem));
            break;
        }
    }
    // nilfs2: superblock at 1 KiB, magic 0x3434 at +6 (nilfs.c); the backup at the end is
    // looked for by probe_tail.
    if le16(head, 0x406) == Some(0x3434) && le32(head, 0x400 + 8).is_some_and(|l| l >= 0x100) {
        found.push(Signature::new("nilfs2", 0x406, Usage::Filesystem));
    }
    // bcache: its uuid magic at 4 KiB + 24 (bcache.c).
    if has(head, 0x1018, &BCACHE_MAGIC) {
        found.push(Signature::new("bcache", 0x1018, Usage::Raid));
    }
    // bcachefs: the same magic 4 KiB + 24, or its own uuid (bcache.c, bcachefs superblock).
    if has(head, 0x1018, &BCACHEFS_MAGIC) {
        found.push(Signature::new("bcachefs", 0x1018, Usage::Filesystem));
    }
    // apfs: the container superblock's "NXSB" at 32 (apfs.c).
    if has(head, 32, b"NXSB") {
        found.push(Signature::new("apfs", 32, Usage::Filesystem));
    }
    // Ceph BlueStore: "bluestore block device" at 0 (bluestore.c).
    if has(head, 0, b"bluestore block device") {
        found.push(Signature::new("ceph_bluestore", 0, Usage::Filesystem));
    }
    // UDF: a volume recognition sequence at 32 KiB: "BEA01", then "NSR02" or "NSR03" in one of
    // the next descriptors (2 KiB apart, or one logical block apart) (udf.c).
    if has(head, 0x8001, b"BEA01") {
        let nsr = (1..=16usize).flat_map(|k| [0x8000 + k * 0x800, 0x8000 + k * 0x200]);
        if nsr
            .into_iter()
            .any(|o| has(head, o + 1, b"NSR02") || has(head, o + 1, b"NSR03"))
        {
            found.push(Signature::new("udf", 0x8001, Usage::Filesystem));
        }
    }
}

/// bcache's superblock magic (bcache.c `BCACHE_SB_MAGIC`).
const BCACHE_MAGIC: [u8; 16] = [
    0xc6, 0x85, 0x73, 0xf6, 0x4e, 0x1a, 0x45, 0xca, 0x82, 0x65, 0xf5, 0x7f, 0x48, 0xba, 0x6d, 0x81,
];
/// bcachefs's own superblock magic (bcache.c `BCACHEFS_SB_MAGIC`).
const BCACHEFS_MAGIC: [u8; 16] = [
    0xc6, 0x85, 0x73, 0xf6, 0x66, 0xce, 0x90, 0xa9, 0xd9, 0x6a, 0x60, 0xcf, 0x80, 0x3d, 0xf7, 0xef,
];

fn be64(buf: &[u8], off: usize) -> Option<u64> {
    at(buf, off, 8).map(|b| u64::from_be_bytes(b.try_into().unwrap_or([0; 8])))
}

/// ext2, ext3, ext4 or jbd, by feature flags, as libblkid's ext.c tells them apart.
fn ext_flavour(head: &[u8]) -> &'static str {
    const SB: usize = 0x400;
    let fc = le32(head, SB + 0x5C).unwrap_or(0);
    let fi = le32(head, SB + 0x60).unwrap_or(0);
    let frc = le32(head, SB + 0x64).unwrap_or(0);
    const HAS_JOURNAL: u32 = 0x4;
    const JOURNAL_DEV: u32 = 0x8;
    const EXT3_RO_SUPP: u32 = 0x1 | 0x2 | 0x4;
    const EXT3_INCOMPAT_SUPP: u32 = 0x2 | 0x4 | 0x10;
    if fi & JOURNAL_DEV != 0 {
        "jbd"
    } else if frc & !EXT3_RO_SUPP != 0 || fi & !EXT3_INCOMPAT_SUPP != 0 {
        "ext4"
    } else if fc & HAS_JOURNAL != 0 {
        "ext3"
    } else {
        "ext2"
    }
}

/// md RAID superblocks (linux_raid.c): v0.90 in the last 64 KiB-aligned 64 KiB, v1.0 8 KiB
/// before the 4 KiB-aligned end, v1.1 at 0, v1.2 at 4 KiB. Magic 0xa92b4efc, little endian.
/// Signatures kept at the end of a device: the nilfs2 backup superblock, in the last 4 KiB
/// block (nilfs.c `NILFS_SB2_OFFSET_BYTES`), magic 0x3434 at +6.
fn probe_tail(f: &File, size: u64, found: &mut Vec<Signature>) -> io::Result<()> {
    if size < 0x2000 {
        return Ok(());
    }
    let sb2 = ((size >> 12) - 1) << 12;
    let b = read_region(f, sb2, 16)?;
    if le16(&b, 6) == Some(0x3434) && le32(&b, 8).is_some_and(|l| l >= 0x100) {
        found.push(Signature::new("nilfs2", sb2 + 6, Usage::Filesystem));
    }
    Ok(())
}

fn probe_md(f: &File, head: &[u8], size: u64, found: &mut Vec<Signature>) -> io::Result<()> {
    const MAGIC: u32 = 0xa92b4efc;
    if size < MD_RESERVED {
        return Ok(());
    }
    let v1_ok = |buf: &[u8], off: u64| {
        le32(buf, 0) == Some(MAGIC) && le32(buf, 4) == Some(1) && le64(buf, 144) == Some(off >> 9)
    };
    let v090 = (size & !(MD_RESERVED - 1)) - MD_RESERVED;
    let b = read_region(f, v090, 8)?;
    if le32(&b, 0) == Some(MAGIC) || b.get(0..4) == Some(&MAGIC.to_be_bytes()[..]) {
        found.push(Signature::new("linux_raid_member", v090, Usage::Raid));
        return Ok(());
    }
    if size >= 0x2000 {
        let v10 = (size & !0xfff) - 0x2000;
        let b = read_region(f, v10, 152)?;
        if v1_ok(&b, v10) {
            found.push(Signature::new("linux_raid_member", v10, Usage::Raid));
            return Ok(());
        }
    }
    probe_md_head(head, found);
    Ok(())
}

/// md superblocks 1.1 and 1.2, at the start of a member (0 and 4 KiB in).
fn probe_md_head(head: &[u8], found: &mut Vec<Signature>) {
    const MAGIC: u32 = 0xa92b4efc;
    for off in [0u64, 0x1000] {
        if let Some(b) = head.get(off as usize..)
            && le32(b, 0) == Some(MAGIC)
            && le32(b, 4) == Some(1)
            && le64(b, 144) == Some(off >> 9)
        {
            found.push(Signature::new("linux_raid_member", off, Usage::Raid));
            return;
        }
    }
}

fn probe_partition_tables(
    f: &File,
    head: &[u8],
    size: u64,
    sector: u32,
    found: &mut Vec<Signature>,
) -> io::Result<()> {
    let sectors: &[u64] = match sector {
        0 => &[512, 4096],
        512 => &[512],
        4096 => &[4096],
        n => &[n as u64, 512],
    };
    let boot_marker = le16(head, 0x1FE) == Some(0xAA55);
    let mut gpt = false;
    for &lbs in sectors {
        if has(head, lbs as usize, b"EFI PART") {
            found.push(Signature::new("gpt", lbs, Usage::PartitionTable));
            if size >= 2 * lbs {
                let last = size - lbs;
                let b = read_region(f, last, 8)?;
                if b == b"EFI PART" {
                    found.push(Signature::new("gpt", last, Usage::PartitionTable));
                }
            }
            gpt = true;
            break;
        }
    }
    if !boot_marker {
        return Ok(());
    }
    // The four MBR entries at 0x1BE, 16 bytes each: boot flag and type.
    let entries: Vec<(u8, u8)> = (0..4)
        .filter_map(|i| {
            let e = 0x1BE + i * 16;
            Some((*head.get(e)?, *head.get(e + 4)?))
        })
        .collect();
    let protective = entries.iter().any(|&(_, t)| t == 0xEE);
    if protective || gpt {
        found.push(Signature::new("PMBR", 0x1FE, Usage::PartitionTable));
        return Ok(());
    }
    // As libblkid's partitions/dos.c: boot flags must be 0 or 0x80; a FAT, NTFS or exFAT boot sector
    // also ends in 0x55AA and is not a partition table; nor is an empty MBR on an LVM PV.
    let is_boot_sector_fs = found
        .iter()
        .any(|s| ["vfat", "ntfs", "exfat", "BitLocker"].contains(&s.kind.as_str()));
    let flags_valid = entries.iter().all(|&(flag, _)| flag == 0 || flag == 0x80);
    let empty = entries.iter().all(|&(_, t)| t == 0);
    let lvm = found.iter().any(|s| s.kind == "LVM2_member");
    if !is_boot_sector_fs && flags_valid && !(lvm && empty) {
        found.push(Signature::new("dos", 0x1FE, Usage::PartitionTable));
    }
    Ok(())
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
            scan_blank(&f, 4 << 20).unwrap(),
            Blank::Blank { byte: 0, .. }
        ));
        let f = image(4 << 20, &[(3 << 20, b"x")]);
        assert_eq!(
            scan_blank(&f, 4 << 20).unwrap(),
            Blank::Data { offset: 3 << 20 }
        );
    }
}
