//! The signature probe: the first 68 KiB and the tail of a device read once, and the magics of
//! partition tables, file systems, swap and RAID/LVM/LUKS members looked for there.

use super::*;
use std::fs::File;
use std::io;

/// How much of the start of a device is read: enough for btrfs (64 KiB + 0x40), swap with
/// 64 KiB pages (0xfff6) and iso9660 (32 KiB + 1).
pub(super) const HEAD_LEN: usize = 0x11000;

pub(super) const MD_RESERVED: u64 = 0x10000;

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
pub(super) fn probe_filesystems(head: &[u8], found: &mut Vec<Signature>) {
    probe_linux(head, found);
    probe_windows_and_media(head, found);
    probe_other_filesystems(head, found);
}

/// Linux's common formats: ext, XFS, btrfs, swap, LVM and LUKS.
pub(super) fn probe_linux(head: &[u8], found: &mut Vec<Signature>) {
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
pub(super) fn probe_windows_and_media(head: &[u8], found: &mut Vec<Signature>) {
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
pub(super) fn probe_other_filesystems(head: &[u8], found: &mut Vec<Signature>) {
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
pub(super) const BCACHE_MAGIC: [u8; 16] = [
    0xc6, 0x85, 0x73, 0xf6, 0x4e, 0x1a, 0x45, 0xca, 0x82, 0x65, 0xf5, 0x7f, 0x48, 0xba, 0x6d, 0x81,
];

/// bcachefs's own superblock magic (bcache.c `BCACHEFS_SB_MAGIC`).
pub(super) const BCACHEFS_MAGIC: [u8; 16] = [
    0xc6, 0x85, 0x73, 0xf6, 0x66, 0xce, 0x90, 0xa9, 0xd9, 0x6a, 0x60, 0xcf, 0x80, 0x3d, 0xf7, 0xef,
];

/// ext2, ext3, ext4 or jbd, by feature flags, as libblkid's ext.c tells them apart.
pub(super) fn ext_flavour(head: &[u8]) -> &'static str {
    ext_flavour_sb(head.get(0x400..).unwrap_or_default())
}

/// [`ext_flavour`] of a superblock `sb` (a backup's, say) that begins at its first byte.
pub(super) fn ext_flavour_sb(sb: &[u8]) -> &'static str {
    let fc = le32(sb, 0x5C).unwrap_or(0);
    let fi = le32(sb, 0x60).unwrap_or(0);
    let frc = le32(sb, 0x64).unwrap_or(0);
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
pub(super) fn probe_tail(f: &File, size: u64, found: &mut Vec<Signature>) -> io::Result<()> {
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

pub(super) fn probe_md(
    f: &File,
    head: &[u8],
    size: u64,
    found: &mut Vec<Signature>,
) -> io::Result<()> {
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
pub(super) fn probe_md_head(head: &[u8], found: &mut Vec<Signature>) {
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

pub(super) fn probe_partition_tables(
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
