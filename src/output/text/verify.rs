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
            crate::verify::bad_range_map(v, size, 60),
            crate::verify::map_legend()
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
