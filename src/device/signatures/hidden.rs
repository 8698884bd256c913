//! Signatures hidden behind a zeroed start: a GPT's backup header at the end, and file systems'
//! backup superblocks at the partition starts a table would have had.

use super::*;
use std::fs::File;
use std::io;

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
pub(super) const BACKUPS_FROM: [u64; 3] = [0, 1 << 20, 8 << 20];

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

/// A GPT's backup header ("EFI PART") in the device's last sector.
pub(super) fn gpt_backup(f: &File, size: u64, sector: u32) -> io::Result<Option<Hidden>> {
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
pub(super) fn backup_superblock(f: &File, size: u64, start: u64) -> io::Result<Option<Hidden>> {
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
