//! `blkscope doctor`: the findings device by device, and `--watch`'s top.

use crate::units::fmt_size;
use std::fmt::Write as _;

/// The doctor's findings, device by device, worst first.
pub fn doctor(reports: &[crate::doctor::DeviceReport]) -> String {
    let mut out = String::new();
    for r in reports {
        let worst = r.worst().map(|w| w.as_str()).unwrap_or("nothing found");
        let holds = r
            .holds
            .as_deref()
            .map(|p| format!(", which holds {p}"))
            .unwrap_or_default();
        let _ = writeln!(out, "{} ({}{holds}): {worst}", r.name, r.path);
        for f in &r.findings {
            let _ = writeln!(
                out,
                "  [{}] {}: {}",
                f.severity().as_str(),
                f.kind,
                f.message
            );
        }
        let _ = writeln!(out);
    }
    out
}

/// One interval of `doctor --watch`: who did I/O on which device, most first.
pub fn top(iv: &crate::doctor::watch::Interval) -> String {
    let mut out = String::new();
    let how = if iv.sampled {
        format!(
            " (events came too fast: {:.2} s of it traced, in windows)",
            iv.seconds
        )
    } else {
        String::new()
    };
    let lost = match iv.lost {
        0 => String::new(),
        n => format!(", {n} events lost"),
    };
    let _ = writeln!(out, "block layer trace, {:.2} s{how}{lost}", iv.seconds);
    let _ = writeln!(
        out,
        "{:<10} {:>7}  {:<16} {:>10} {:>10} {:>8} {:>10}",
        "DEVICE", "PID", "PROCESS", "READ/s", "WRITE/s", "IOPS", "D2C mean"
    );
    if iv.rows.is_empty() {
        let _ = writeln!(out, "(no I/O)");
    }
    for r in &iv.rows {
        let comm = if r.kernel {
            format!("[{}]", r.comm)
        } else {
            r.comm.clone()
        };
        let _ = writeln!(
            out,
            "{:<10} {:>7}  {:<16.16} {:>10} {:>10} {:>8.0} {:>10}",
            r.device,
            r.pid,
            comm,
            fmt_size(r.read_bytes_per_sec as u64),
            fmt_size(r.write_bytes_per_sec as u64),
            r.iops,
            r.d2c_mean_us
                .map(|us| crate::output::fmt_duration(us * 1e3, 1))
                .unwrap_or_else(|| "-".into())
        );
    }
    for n in iv.file_notes() {
        let _ = writeln!(out, "{n}");
    }
    out.push('\n');
    out
}
