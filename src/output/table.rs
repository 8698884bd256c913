//! Tables: the `list` device tree (readable at 80 columns) and the `iostat -x -d` table.

use std::fmt::Write as _;

use crate::device::{Device, DeviceTree};
use crate::stats::IostatX;
use crate::units::fmt_size;

/// Tree prefixes (`├─`, `└─`, `│ `) for devices in tree order.
pub fn tree_prefixes(devices: &[Device], ascii: bool) -> Vec<String> {
    let (tee, ell, bar) = if ascii {
        ("|-", "`-", "| ")
    } else {
        ("├─", "└─", "│ ")
    };
    let is_last = |i: usize| {
        let d = devices[i].depth;
        devices[i + 1..]
            .iter()
            .find(|x| x.depth <= d)
            .is_none_or(|x| x.depth < d)
    };
    let mut open: Vec<bool> = Vec::new(); // per depth: does a later sibling follow?
    let mut out = Vec::with_capacity(devices.len());
    for (i, d) in devices.iter().enumerate() {
        if d.depth == 0 {
            out.push(String::new());
            open.clear();
            continue;
        }
        open.truncate(d.depth - 1);
        let mut s = String::new();
        for &o in open.iter() {
            s.push_str(if o { bar } else { "  " });
        }
        let last = is_last(i);
        s.push_str(if last { ell } else { tee });
        open.push(!last);
        out.push(s);
    }
    out
}

/// The `list` table, readable at 80 columns.
pub fn device_table(tree: &DeviceTree, ascii: bool) -> String {
    let prefixes = tree_prefixes(&tree.devices, ascii);
    let mut lines = vec![format!(
        "{:<18} {:>7} {:<5} {:>9} {:<4} {:<8} {}",
        "NAME", "SIZE", "TYPE", "LOG/PHY", "ROTA", "WRITE", "NOTES"
    )];
    for (d, pre) in tree.devices.iter().zip(&prefixes) {
        let mut why: Vec<String> = Vec::new();
        let mut badges: Vec<&str> = d.safety_reasons.iter().map(|r| r.code.badge()).collect();
        badges.dedup();
        if !badges.is_empty() {
            why.push(badges.join(","));
        }
        if !d.mountpoints.is_empty() {
            why.push(d.mountpoints.join(","));
        }
        if d.swap {
            why.push("[SWAP]".into());
        }
        if let Some(sig) = d.signatures.first() {
            why.push(sig.kind.clone());
        }
        if let Some(m) = &d.model {
            why.push(m.clone());
        } else if let Some(b) = &d.loop_backing_file {
            why.push(b.clone());
        } else if let Some(dm) = &d.dm_name {
            why.push(dm.clone());
        }
        let name = format!("{pre}{}", d.name);
        let line = format!(
            "{:<18} {:>7} {:<5} {:>9} {:<4} {:<8} {}",
            name,
            fmt_size(d.size_bytes),
            d.lsblk_type,
            format!("{}/{}", d.logical_block_size, d.physical_block_size),
            if d.rotational { "yes" } else { "no" },
            d.write_safety.as_str(),
            why.join(" ")
        );
        lines.push(line);
    }
    let mut out = String::new();
    for l in lines {
        let _ = writeln!(out, "{}", truncate_cols(&l, 80));
    }
    out
}

fn truncate_cols(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.trim_end().to_string();
    }
    let mut t: String = s.chars().take(n - 1).collect();
    t.push('~');
    t
}

/// An `iostat -x -d` table of `rows`, with a blank line after it.
pub fn iostat_table(rows: &[&IostatX]) -> String {
    let mut out = format!("{:<16}", "Device");
    for c in crate::stats::iostat::COLUMNS {
        let _ = write!(out, " {c:>8}");
    }
    out.push('\n');
    for x in rows {
        if x.stats_off {
            let _ = writeln!(
                out,
                "{:<16} statistics off (queue/iostats = 0): no figures",
                x.disk_device
            );
            continue;
        }
        let _ = write!(out, "{:<16}", x.disk_device);
        for c in crate::stats::iostat::COLUMNS {
            let _ = write!(out, " {:>8.2}", x.column(c).unwrap_or(0.0));
        }
        out.push('\n');
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::{Kind, WriteSafety};
    use std::path::PathBuf;

    fn dev(name: &str, depth: usize) -> Device {
        Device {
            name: name.into(),
            path: PathBuf::from("/dev").join(name),
            maj_min: "0:0".into(),
            kind: Kind::Disk,
            lsblk_type: "disk".into(),
            size_bytes: 0,
            model: None,
            vendor: None,
            serial: None,
            wwid: None,
            transport: None,
            logical_block_size: 512,
            physical_block_size: 512,
            minimum_io_size: None,
            optimal_io_size: None,
            alignment_offset: None,
            rotational: false,
            removable: false,
            read_only: false,
            scheduler: None,
            schedulers_available: vec![],
            write_cache: None,
            nr_requests: None,
            max_sectors_kb: None,
            max_hw_sectors_kb: None,
            read_ahead_kb: None,
            iostats: None,
            discard: false,
            discard_granularity: None,
            discard_max_bytes: None,
            zoned: None,
            partition_number: None,
            start_sector: None,
            parent: None,
            partitions: vec![],
            holders: vec![],
            slaves: vec![],
            dm_name: None,
            dm_uuid: None,
            md_level: None,
            loop_backing_file: None,
            loop_backing_fs: None,
            loop_direct_io: None,
            io_figures: true,
            mountpoints: vec![],
            swap: false,
            signatures: vec![],
            signature_error: None,
            blank: crate::device::signatures::Blank::unknown("not read"),
            hidden: None,
            depth,
            write_safety: WriteSafety::Clear,
            safety_reasons: vec![],
        }
    }

    #[test]
    fn tree_prefixes_like_lsblk() {
        let devs = vec![
            dev("sda", 0),
            dev("sda1", 1),
            dev("sda2", 1),
            dev("vg-lv", 2),
            dev("sdb", 0),
            dev("sdb1", 1),
            dev("md0", 2),
            dev("sdb2", 1),
        ];
        let p = tree_prefixes(&devs, true);
        assert_eq!(p, ["", "|-", "`-", "  `-", "", "|-", "| `-", "`-"]);
    }

    #[test]
    fn truncation_marks_cut_lines() {
        assert_eq!(truncate_cols("abc   ", 80), "abc");
        let long = "x".repeat(90);
        let t = truncate_cols(&long, 80);
        assert_eq!(t.chars().count(), 80);
        assert!(t.ends_with('~'));
    }
}
