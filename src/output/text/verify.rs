//! The read-back of `--verify` and `blkscope verify`: what came back, the bad ranges.

use super::fmt_rate;
use crate::units::fmt_size;
use std::fmt::Write as _;

/// A read-back: sectors checked and bad, the first bad ranges, and a map over `size` bytes.
pub fn verify_report(v: &crate::verify::VerifyReport, size: u64, indent: &str) -> String {
    let mut out = String::new();
    let rate = if v.seconds > 0.0 {
        format!(
            ", read back at {}",
            fmt_rate(v.bytes_read as f64 / v.seconds)
        )
    } else {
        String::new()
    };
    let _ = writeln!(
        out,
        "{indent}verify: {} sectors checked, {} bad{rate}",
        v.sectors_checked, v.sectors_bad
    );
    if let Some(why) = &v.stopped {
        let _ = writeln!(out, "{indent}verify stopped early: {why}");
    }
    for r in v.bad_ranges.iter().take(10) {
        let _ = writeln!(
            out,
            "{indent}  bad: {} bytes at offset {:#x} ({}): {}",
            r.length,
            r.offset,
            fmt_size(r.offset),
            r.kind.name()
        );
    }
    if v.bad_ranges.len() > 10 || v.ranges_cut {
        let _ = writeln!(
            out,
            "{indent}  ... {} ranges in all{} (--json lists them)",
            v.bad_ranges.len(),
            if v.ranges_cut {
                ", more not listed"
            } else {
                ""
            }
        );
    }
    if v.is_bad() && size > 0 {
        let _ = writeln!(
            out,
            "{indent}map [{}] ({})",
            bad_range_map(v, size, 60),
            map_legend()
        );
    }
    // What each kind found means, once each.
    for kind in crate::verify::BadKind::ALL {
        if v.bad_ranges.iter().any(|r| r.kind == kind) {
            let _ = writeln!(out, "{indent}{}: {}", kind.name(), kind.meaning());
        }
    }
    out
}

/// The map's key: each kind's letter and name.
pub fn map_legend() -> String {
    crate::verify::BadKind::ALL
        .iter()
        .map(|k| match k {
            crate::verify::BadKind::IoError => "X I/O error".to_string(),
            k => format!("{} {}", k.letter(), k.name().replace('_', " ")),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// A map of bad ranges over a device of `size` bytes in `width` cells: `.` good (or not
/// checked), otherwise each kind's [`crate::verify::BadKind::letter`] ([`map_legend`]).
pub fn bad_range_map(rep: &crate::verify::VerifyReport, size: u64, width: usize) -> String {
    let mut cells = vec!['.'; width.max(1)];
    if size == 0 {
        return cells.into_iter().collect();
    }
    for r in &rep.bad_ranges {
        let c = r.kind.letter();
        let a = (r.offset as u128 * cells.len() as u128 / size as u128) as usize;
        let b = ((r.offset + r.length.max(1) - 1) as u128 * cells.len() as u128 / size as u128)
            as usize;
        for cell in cells
            .iter_mut()
            .take(b.min(width.max(1) - 1) + 1)
            .skip(a.min(width.max(1) - 1))
        {
            // An I/O error shows over the other kinds.
            if *cell != 'X' {
                *cell = c;
            }
        }
    }
    cells.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::{BadKind, BadRange, VerifyReport};

    #[test]
    fn the_legend_names_each_kind_by_its_letter() {
        assert_eq!(
            map_legend(),
            "X I/O error, o wrong offset, z zeroed, f foreign, s wrong stamp, c corrupt"
        );
    }

    #[test]
    fn the_map_places_ranges() {
        let rep = VerifyReport {
            bad_ranges: vec![
                BadRange {
                    offset: 0,
                    length: 10,
                    kind: BadKind::Corrupt,
                },
                BadRange {
                    offset: 90,
                    length: 10,
                    kind: BadKind::IoError,
                },
            ],
            ..Default::default()
        };
        assert_eq!(bad_range_map(&rep, 100, 10), "c........X");
    }
}
