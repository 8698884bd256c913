//! Signatures hidden behind a zeroed start: formats where partitions usually begin, a GPT's
//! backup header at the end, and the copies file systems keep further in ([`super::backups`]).

use super::backups::*;
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

/// Looks for a format behind a wiped partition table: at the places partitions usually begin,
/// then for the copies formats keep (a GPT's backup header in the last sector; ext's backup
/// superblocks in every sparse group, XFS's secondary superblocks, btrfs's mirrors, for a
/// format that begins at any of those places; NTFS's backup boot sector at a partition's end).
/// The nearest copy found; None when nothing is there. `f` may be opened with O_DIRECT (every
/// read is 4 KiB aligned); a buffered `f` has what was read dropped from the page cache again.
/// A read that fails (a bad sector) skips that place. Reads 4 KiB at each of [`backup_places`].
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
                recover: "testdisk".into(),
            }));
        }
    }
    if let Some(h) = gpt_backup(f, size, sector)? {
        return Ok(Some(h));
    }
    for p in backup_places(size, sector) {
        let Ok(b) = read_aligned(f, p.at, COPY_LEN) else {
            continue;
        };
        if let Some(h) = recognise(&p, &b) {
            return Ok(Some(h));
        }
    }
    Ok(None)
}

/// Where [`probe_hidden`] looks for copies on a device of `size` bytes with `sector`-byte
/// logical blocks, nearest first: for a format at the device's start or any of
/// [`PARTITION_STARTS`], and NTFS's backup at each end a partition may have.
pub(super) fn backup_places(size: u64, sector: u32) -> Vec<Place> {
    let lbs = (sector as u64).max(512);
    let mut v: Vec<Place> = std::iter::once(0)
        .chain(PARTITION_STARTS.iter().copied())
        .filter(|&p| p < size && p % lbs == 0)
        .flat_map(|start| places(size, start))
        .chain(ntfs_places(size))
        .collect();
    v.sort_by_key(|p| p.at);
    v
}

/// The offsets [`probe_hidden`] reads copies at, nearest first (for fuzzing and tests: data
/// placed there is what the probe judges).
pub fn backup_offsets(size: u64, sector: u32) -> Vec<u64> {
    backup_places(size, sector).iter().map(|p| p.at).collect()
}

/// How many 4 KiB reads [`probe_hidden`] makes at most on a device of `size` bytes.
pub fn hidden_reads(size: u64, sector: u32) -> usize {
    let starts = PARTITION_STARTS.iter().filter(|&&p| p < size).count();
    starts + 2 + backup_places(size, sector).len()
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
                recover: "gdisk or testdisk".into(),
            }));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_stay_few_on_any_size() {
        // Printed for docs/architecture.md: the reads a blank device of each size costs.
        for (size, most) in [
            (16u64 << 20, 40),
            (1 << 30, 400),
            (1 << 40, 1200),
            (1 << 50, 2000),
        ] {
            let n = hidden_reads(size, 512);
            println!("{} bytes: {n} reads of 4 KiB", size);
            assert!(n <= most, "{size}: {n} reads");
        }
        let p = backup_places(1 << 40, 512);
        assert!(p.windows(2).all(|w| w[0].at <= w[1].at), "nearest first");
    }
}
