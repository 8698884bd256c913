//! What a device is, from its name and sysfs: its kind, lsblk's TYPE, the SCSI type, the
//! transport, the scheduler, whether it keeps data in RAM or counts I/O with statistics off.

use super::*;
use crate::sysroot::SysRoot;

pub(super) fn counted() -> bool {
    true
}

/// Whether the driver of disk `name` counts its I/O in /proc/diskstats whatever its
/// `queue/iostats` says. Request-based (blk-mq) devices are counted only with the switch on
/// (a loop device with iostats 0 counted 0B of an 8M write), and md, dm and pmem check it
/// before they count. zram is the exception: it is created with iostats 0 (it never sets the
/// flag) and counts every I/O regardless (a new zram with iostats 0 counted 16384 sectors for
/// `dd bs=1M count=8 oflag=direct`, kernel 6.18).
pub fn counts_io_regardless_of_iostats(name: &str) -> bool {
    classify(name, false, false, None) == Kind::Zram
}

/// Whether device `name` is a loop device: its cache is its backing file's page cache, and a
/// flush of it syncs that file.
pub fn is_loop(name: &str) -> bool {
    classify(name, false, false, None) == Kind::Loop
}

/// Whether device `name` (a disk or one of its partitions) keeps its data in RAM: zram, or a
/// RAM disk (brd). A write there is never durable, whatever its `write_cache` says.
pub fn in_ram(name: &str) -> bool {
    matches!(classify(name, false, false, None), Kind::Zram | Kind::Ram)
}

pub(super) fn classify(name: &str, is_part: bool, is_dm: bool, scsi_type: Option<u64>) -> Kind {
    if is_part {
        Kind::Part
    } else if is_dm || name.starts_with("dm-") {
        Kind::Dm
    } else if name.starts_with("loop") {
        Kind::Loop
    } else if name.starts_with("zram") {
        Kind::Zram
    } else if name.starts_with("md") {
        Kind::Md
    } else if name.starts_with("nvme") {
        Kind::Nvme
    } else if name.starts_with("mmcblk") {
        Kind::Mmc
    } else if name.starts_with("ram") {
        Kind::Ram
    } else if name.starts_with("sr") || scsi_type == Some(5) {
        Kind::Rom
    } else {
        Kind::Disk
    }
}

/// lsblk's TYPE (util-linux lsblk.c `get_type`).
pub(super) fn lsblk_type(
    name: &str,
    is_part: bool,
    dm_uuid: Option<&str>,
    is_dm: bool,
    md_level: Option<&str>,
    scsi_type: Option<u64>,
) -> String {
    if is_part {
        return "part".into();
    }
    if is_dm || name.starts_with("dm-") {
        let prefix = dm_uuid
            .and_then(|u| u.split('-').next())
            .filter(|p| !p.is_empty());
        return match prefix {
            Some(p) if p.len() >= 4 && p[..4].eq_ignore_ascii_case("part") => "part".into(),
            Some(p) => p.to_ascii_lowercase(),
            None => "dm".into(),
        };
    }
    if name.starts_with("loop") {
        return "loop".into();
    }
    if name.starts_with("md") {
        return md_level.unwrap_or("md").to_ascii_lowercase();
    }
    scsi_type_name(scsi_type).unwrap_or("disk").to_string()
}

/// util-linux `blkdev_scsi_type_to_name`.
pub(super) fn scsi_type_name(t: Option<u64>) -> Option<&'static str> {
    Some(match t? {
        0x00 => "disk",
        0x01 => "tape",
        0x02 => "printer",
        0x03 => "processor",
        0x04 => "worm",
        0x05 => "rom",
        0x06 => "scanner",
        0x07 => "mo-disk",
        0x08 => "changer",
        0x09 => "comm",
        0x0c => "raid",
        0x0d => "enclosure",
        0x0e => "rbc",
        0x11 => "osd",
        0x7f => "no-lun",
        _ => return None,
    })
}

/// The active scheduler in `queue/scheduler` text (`mq-deadline kyber [none]`).
pub fn active_scheduler(s: &str) -> Option<String> {
    parse_scheduler(Some(s)).0
}

/// Every scheduler a device offers, from its `queue/scheduler` text.
pub fn available_schedulers(s: &str) -> Vec<String> {
    parse_scheduler(Some(s)).1
}

pub(super) fn parse_scheduler(s: Option<&str>) -> (Option<String>, Vec<String>) {
    let Some(s) = s else {
        return (None, Vec::new());
    };
    let mut active = None;
    let mut all = Vec::new();
    for w in s.split_whitespace() {
        if let Some(inner) = w.strip_prefix('[').and_then(|w| w.strip_suffix(']')) {
            active = Some(inner.to_string());
            all.push(inner.to_string());
        } else {
            all.push(w.to_string());
        }
    }
    if active.is_none() && all.len() == 1 {
        active = all.first().cloned();
    }
    (active, all)
}

/// The transport, from where the device sits in the sysfs device hierarchy.
pub(super) fn transport(root: &SysRoot, name: &str, kind: Kind) -> Option<String> {
    let link = std::fs::read_link(root.sys("block").join(name)).ok()?;
    let p = link.to_string_lossy();
    let t = if p.contains("/nvme") || kind == Kind::Nvme {
        "nvme"
    } else if p.contains("/usb") {
        "usb"
    } else if p.contains("/ata") {
        "sata"
    } else if p.contains("/virtio") {
        "virtio"
    } else if p.contains("/mmc") {
        "mmc"
    } else if p.contains("/host") && p.contains("/target") {
        "scsi"
    } else {
        return None;
    };
    Some(t.to_string())
}
