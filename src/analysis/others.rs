//! Other processes' I/O during a test, from /proc/PID/io read before and after it: who moved
//! how much, so that an odd result points at its cause, and reads the device counted during a
//! write test are not all taken for the test's own.

use crate::analysis::findings::Finding;
use crate::stats::procs::{BusyProcess, ProcSnapshot, busy};
use crate::sysroot::SysRoot;
use crate::units::fmt_size;

/// Other processes that moved more than 1% of the test's bytes (and 1 MiB) while it ran.
pub struct OtherIo {
    busy: Vec<BusyProcess>,
    /// Bytes they moved.
    bytes: u64,
    /// Bytes they read: reads the device counted during a write test may be theirs.
    pub read_bytes: f64,
}

impl OtherIo {
    /// Those of `a` to `b` that moved enough to name, beside the test's `ours` bytes.
    pub fn between(root: &SysRoot, a: &ProcSnapshot, b: &ProcSnapshot, ours: u64) -> Option<Self> {
        let busy = busy(root, a, b, &[std::process::id()]);
        let bytes: u64 = busy.iter().map(|p| p.bytes).sum();
        if busy.is_empty() || (bytes as f64) <= 0.01 * ours as f64 || bytes < (1 << 20) {
            return None;
        }
        let seconds = b.at.saturating_duration_since(a.at).as_secs_f64();
        let read_bytes = busy.iter().map(|p| p.read_bytes_per_sec).sum::<f64>() * seconds;
        Some(Self {
            busy,
            bytes,
            read_bytes,
        })
    }

    /// The finding naming them (pid, command, rate), so that an odd result points at its cause.
    pub fn finding(&self, ours: u64) -> Finding {
        let names: Vec<String> = self
            .busy
            .iter()
            .take(3)
            .map(|p| {
                format!(
                    "{} (pid {}) {} read, {} written per second",
                    p.comm,
                    p.pid,
                    fmt_size(p.read_bytes_per_sec as u64),
                    fmt_size(p.write_bytes_per_sec as u64)
                )
            })
            .collect();
        Finding {
            kind: "busy_processes",
            device: String::new(),
            message: format!(
                "other processes moved {} ({:.0}% of the test's bytes) while it ran: {}; they \
                 share the devices and the CPU with the test",
                fmt_size(self.bytes),
                self.bytes as f64 * 100.0 / ours.max(1) as f64,
                names.join("; ")
            ),
            numbers: [
                ("other_bytes", self.bytes as f64),
                ("other_read_bytes", self.read_bytes),
                ("processes", self.busy.len() as f64),
                ("share", self.bytes as f64 / ours.max(1) as f64),
            ]
            .into(),
        }
    }
}
