//! Where file systems keep copies of their superblock, and how to tell one: ext's backups in
//! its sparse block groups, XFS's secondaries at its allocation groups' starts, btrfs's mirrors,
//! NTFS's backup boot sector. The places follow from the device's size alone; reading them is
//! [`super::hidden`]'s.

use super::*;

/// What a copy belongs to, with what the place predicts about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Copy {
    /// ext2/3/4's superblock in block group `group`, for blocks of `2^(10 + log)` bytes.
    Ext { group: u64, log: u32 },
    /// XFS's superblock at the start of allocation group `ag`, of `agblocks` 4 KiB blocks.
    Xfs { ag: u64, agblocks: u64 },
    /// A btrfs superblock mirror.
    Btrfs,
    /// NTFS's backup boot sector, in the last sector of its partition (`sector` bytes long).
    Ntfs { sector: u64 },
}

/// A place a copy may be: the format would begin at `start`, the copy is read at `at`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Place {
    pub copy: Copy,
    pub start: u64,
    pub at: u64,
}

/// How many bytes at [`Place::at`] tell the copy.
pub(super) const COPY_LEN: usize = 0x200;

/// ext's block sizes: 1, 2, 4 KiB, and 64 KiB (on machines with 64 KiB pages), as log2 - 10.
const EXT_LOGS: [u32; 4] = [0, 1, 2, 6];

/// Where a partition that runs to the end of the device ends: at the end itself (a DOS table,
/// or a file system on the whole device), before a GPT's backup (33 sectors of 512 bytes, or
/// 5 of 4096), and each of those aligned down to 1 MiB as sfdisk and parted end the last
/// partition.
pub(super) fn partition_ends(size: u64) -> Vec<u64> {
    let mib = |x: u64| x & !((1 << 20) - 1);
    let mut v = vec![
        size,
        mib(size),
        size.saturating_sub(33 * 512),
        // The last usable sector is 34 before the end: the partition ends at or before it.
        mib(size.saturating_sub(34 * 512)),
        size.saturating_sub(5 * 4096),
        mib(size.saturating_sub(6 * 4096)),
    ];
    v.sort_unstable();
    v.dedup();
    v.retain(|&e| e > 0);
    v
}

/// Block groups that keep a backup superblock under sparse_super (every ext4 and most ext2/3):
/// 1 and the powers of 3, 5 and 7, below `groups`, in order.
pub(super) fn sparse_groups(groups: u64) -> Vec<u64> {
    let mut v = vec![1];
    for base in [3u64, 5, 7] {
        let mut g = base;
        while g < groups {
            v.push(g);
            g = match g.checked_mul(base) {
                Some(n) => n,
                None => break,
            };
        }
    }
    v.retain(|&g| g < groups);
    v.sort_unstable();
    v.dedup();
    v
}

/// Every place a copy kept by a format that begins at `start` can be, on a device of `size`
/// bytes, nearest first within each format.
pub(super) fn places(size: u64, start: u64) -> Vec<Place> {
    let mut v = Vec::new();
    for log in EXT_LOGS {
        let block = 1024u64 << log;
        // 8 x block blocks per group (one block of bitmap); 1 KiB blocks begin at block 1.
        let group_bytes = 8 * block * block;
        let first = if log == 0 { 1024 } else { 0 };
        let groups = size.saturating_sub(start + first) / group_bytes + 1;
        for group in sparse_groups(groups) {
            let at = start + first + group * group_bytes;
            if at + COPY_LEN as u64 <= size {
                v.push(Place {
                    copy: Copy::Ext { group, log },
                    start,
                    at,
                });
            }
        }
    }
    for mirror in [64u64 << 20, 256 << 30] {
        if start + mirror + 0x1000 <= size {
            v.push(Place {
                copy: Copy::Btrfs,
                start,
                at: start + mirror,
            });
        }
    }
    v.extend(xfs_places(size, start));
    v
}

/// mkfs.xfs's default geometry for a file system from `start` to each of
/// [`partition_ends`]: 4 KiB blocks, 4 allocation groups of ceil(blocks / 4) up to 4 TiB,
/// groups of 2^28 - 1 blocks beyond (measured with mkfs.xfs 6.x on images of 300 MiB to 5 TiB;
/// docs/architecture.md). Its secondary superblocks at the second group's and the last group's
/// starts: the first is what a zeroed start wipes, the last what survives most.
fn xfs_places(size: u64, start: u64) -> Vec<Place> {
    const MAX_AG: u64 = (1 << 28) - 1;
    let mut v: Vec<Place> = Vec::new();
    for end in partition_ends(size) {
        let Some(blocks) = end.checked_sub(start).map(|b| b / 4096) else {
            continue;
        };
        // XFS needs 300 MiB.
        if blocks < (300 << 20) / 4096 {
            continue;
        }
        let agblocks = blocks.div_ceil(4).min(MAX_AG);
        let agcount = blocks.div_ceil(agblocks);
        for ag in [1, agcount - 1] {
            let at = start + ag * agblocks * 4096;
            let p = Place {
                copy: Copy::Xfs { ag, agblocks },
                start,
                at,
            };
            if ag > 0 && at + COPY_LEN as u64 <= size && !v.contains(&p) {
                v.push(p);
            }
        }
    }
    v
}

/// NTFS's backup boot sector at the last sector of each partition end a device of `size` can
/// have, for sectors of 512 and 4096 bytes; the start follows from what the sector says.
pub(super) fn ntfs_places(size: u64) -> Vec<Place> {
    let mut v = Vec::new();
    for end in partition_ends(size) {
        for sector in [512u64, 4096] {
            if end >= 2 * sector && end % sector == 0 {
                v.push(Place {
                    copy: Copy::Ntfs { sector },
                    start: 0,
                    at: end - sector,
                });
            }
        }
    }
    v
}

/// The copy at `p`, if `b` (the [`COPY_LEN`] bytes read there) is one: the format's name,
/// where it begins, where its magic is, and the command that recovers it from there.
pub(super) fn recognise(p: &Place, b: &[u8]) -> Option<Hidden> {
    let found = |kind: &str, start: u64, magic: u64, recover: String| Hidden {
        kind: kind.into(),
        start,
        offset: magic,
        usage: Usage::Filesystem,
        found: "backup".into(),
        recover,
    };
    match p.copy {
        Copy::Ext { group, log } => {
            // Magic 0xEF53 at +0x38, s_log_block_size at +0x18, the group of this copy
            // (s_block_group_nr, 16 bits) at +0x5A.
            let ok = le16(b, 0x38) == Some(0xEF53)
                && le32(b, 0x18) == Some(log)
                && le16(b, 0x5A).map(u64::from) == Some(group & 0xffff);
            let block = 1024u64 << log;
            let fs_block = (p.at - p.start) / block;
            ok.then(|| {
                let kind = ext_flavour_sb(b);
                found(
                    kind,
                    p.start,
                    p.at + 0x38,
                    format!("e2fsck -b {fs_block} -B {block}"),
                )
            })
        }
        Copy::Xfs { agblocks, .. } => {
            // "XFSB", sb_blocksize at +4, sb_agblocks at +84, big endian.
            let ok = has(b, 0, b"XFSB")
                && be32(b, 4) == Some(4096)
                && be32(b, 84).map(u64::from) == Some(agblocks);
            ok.then(|| found("xfs", p.start, p.at, "xfs_repair".into()))
        }
        Copy::Btrfs => has(b, 0x40, b"_BHRfS_M").then(|| {
            found(
                "btrfs",
                p.start,
                p.at + 0x40,
                "btrfs rescue super-recover".into(),
            )
        }),
        Copy::Ntfs { sector } => {
            // "NTFS    " at +3, bytes per sector at +0x0B, the volume's sectors at +0x28; the
            // volume ends one sector before its backup.
            if !has(b, 3, b"NTFS    ") || le16(b, 0x0B).map(u64::from) != Some(sector) {
                return None;
            }
            let sectors = le64(b, 0x28)?;
            let start = p.at.checked_sub(sectors.checked_mul(sector)?)?;
            Some(found("ntfs", start, p.at + 3, "testdisk".into()))
        }
    }
}

/// What the file system `kind` calls the copy [`recognise`] finds of it.
pub fn copy_name(kind: &str) -> &'static str {
    match kind {
        "ntfs" => "backup boot sector",
        "xfs" => "secondary superblock",
        "btrfs" => "superblock mirror",
        _ => "backup superblock",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparse_groups_are_1_and_powers_of_3_5_7() {
        assert_eq!(sparse_groups(128), [1, 3, 5, 7, 9, 25, 27, 49, 81, 125]);
        assert_eq!(sparse_groups(1), Vec::<u64>::new());
        assert_eq!(sparse_groups(2), [1]);
        // No overflow at the top of u64.
        assert!(sparse_groups(u64::MAX).len() < 100);
    }

    #[test]
    fn ext_places_for_each_block_size() {
        let size = 1u64 << 30;
        let p = places(size, 1 << 20);
        let ext = |log: u32, group: u64| {
            p.iter()
                .find(|x| x.copy == Copy::Ext { group, log })
                .map(|x| x.at)
        };
        // 1 KiB blocks: group 3 starts at block 1 + 3 x 8192.
        assert_eq!(ext(0, 3), Some((1 << 20) + 1024 * (1 + 3 * 8192)));
        // 4 KiB blocks: 128 MiB groups; group 7 at 896 MiB is inside, 9 is not.
        assert_eq!(ext(2, 7), Some((1 << 20) + (7 << 27)));
        assert_eq!(ext(2, 9), None);
        // 64 KiB blocks: 32 GiB groups, none in 1 GiB.
        assert!(
            p.iter()
                .all(|x| !matches!(x.copy, Copy::Ext { log: 6, .. }))
        );
        assert!(p.iter().all(|x| x.at + COPY_LEN as u64 <= size));
    }

    #[test]
    fn xfs_secondaries_at_a_quarter_and_three_quarters() {
        // 1 GiB, a partition from 1 MiB to 1023 MiB (sfdisk's GPT): 1022 MiB, 261632 blocks in
        // 4 groups of 65408 (tests/unknown_data.rs runs the real mkfs.xfs).
        let p = places(1 << 30, 1 << 20);
        let xfs: Vec<_> = p
            .iter()
            .filter_map(|x| match x.copy {
                Copy::Xfs { ag, agblocks } => Some((ag, agblocks)),
                _ => None,
            })
            .collect();
        assert!(xfs.contains(&(1, 65408)), "{xfs:?}");
        assert!(xfs.contains(&(3, 65408)), "{xfs:?}");
        // Too small for XFS: nothing looked for.
        assert!(
            !places(200 << 20, 0)
                .iter()
                .any(|x| matches!(x.copy, Copy::Xfs { .. }))
        );
    }

    #[test]
    fn partition_ends_cover_dos_gpt_and_aligned_ends() {
        let e = partition_ends(1 << 30);
        for want in [
            1u64 << 30,
            (1 << 30) - 33 * 512,
            1023 << 20,
            (1 << 30) - 5 * 4096,
        ] {
            assert!(e.contains(&want), "{want}: {e:?}");
        }
        assert!(partition_ends(0).is_empty());
    }

    #[test]
    fn recognise_rejects_wrong_group_block_size_and_garbage() {
        let mut sb = vec![0u8; COPY_LEN];
        sb[0x38..0x3a].copy_from_slice(&0xEF53u16.to_le_bytes());
        sb[0x18..0x1c].copy_from_slice(&0u32.to_le_bytes());
        sb[0x5A..0x5C].copy_from_slice(&3u16.to_le_bytes());
        let p = Place {
            copy: Copy::Ext { group: 3, log: 0 },
            start: 1 << 20,
            at: (1 << 20) + 1024 * (1 + 3 * 8192),
        };
        let h = recognise(&p, &sb).expect("group 3's copy");
        assert_eq!(h.recover, "e2fsck -b 24577 -B 1024");
        assert_eq!(h.kind, "ext2");
        let wrong_group = Place {
            copy: Copy::Ext { group: 5, log: 0 },
            ..p
        };
        assert!(recognise(&wrong_group, &sb).is_none());
        let wrong_size = Place {
            copy: Copy::Ext { group: 3, log: 2 },
            ..p
        };
        assert!(recognise(&wrong_size, &sb).is_none());
        assert!(recognise(&p, &[]).is_none());
        assert!(recognise(&p, &sb[..0x40]).is_none());
        // An NTFS sector that claims more sectors than lie before it starts nowhere.
        let mut ntfs = vec![0u8; COPY_LEN];
        ntfs[3..11].copy_from_slice(b"NTFS    ");
        ntfs[0x0B..0x0D].copy_from_slice(&512u16.to_le_bytes());
        ntfs[0x28..0x30].copy_from_slice(&u64::MAX.to_le_bytes());
        let n = Place {
            copy: Copy::Ntfs { sector: 512 },
            start: 0,
            at: 1 << 20,
        };
        assert!(recognise(&n, &ntfs).is_none());
        ntfs[0x28..0x30].copy_from_slice(&1024u64.to_le_bytes());
        assert_eq!(recognise(&n, &ntfs).map(|h| h.start), Some(512 << 10));
    }
}
