//! Other processes' I/O during a test, from /proc/PID/io read before and after it: who moved
//! how much, so that an odd result points at its cause, and reads the device counted during a
//! write test are not all taken for the test's own.

use super::{Evidence, Figure, Finding, Kind};
use crate::analysis::traced::TraceSummary;
use crate::engine::{Job, Op};
use crate::stats::procs::{BusyProcess, ProcSnapshot, busy};
use crate::sysroot::SysRoot;
use crate::units::fmt_size;

/// Whether others' `bytes` are worth naming beside the test's `ours`: more than 1% of them,
/// and 1 MiB.
fn worth_naming(bytes: u64, ours: u64) -> bool {
    (bytes as f64) > 0.01 * ours as f64 && bytes >= (1 << 20)
}

/// A busy process in a few words: `updatedb (pid 42) 3.1M read, 0B written per second`.
fn rates(p: &BusyProcess) -> String {
    format!(
        "{} (pid {}) {} read, {} written per second",
        p.comm,
        p.pid,
        fmt_size(p.read_bytes_per_sec as u64),
        fmt_size(p.write_bytes_per_sec as u64)
    )
}

/// A busy process as evidence: what [`rates`] says of it.
fn rates_record(p: &BusyProcess) -> Figure {
    Figure::record([
        ("comm", p.comm.as_str().into()),
        ("pid", p.pid.into()),
        ("read_bytes_per_sec", p.read_bytes_per_sec.into()),
        ("write_bytes_per_sec", p.write_bytes_per_sec.into()),
    ])
}

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
        if busy.is_empty() || !worth_naming(bytes, ours) {
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
        let names: Vec<String> = self.busy.iter().take(3).map(rates).collect();
        let mut e = Evidence::from([
            ("other_bytes", self.bytes as f64),
            ("other_read_bytes", self.read_bytes),
            ("processes", self.busy.len() as f64),
            ("share", self.bytes as f64 / ours.max(1) as f64),
        ]);
        e.insert(
            "named",
            self.busy
                .iter()
                .take(3)
                .map(rates_record)
                .collect::<Vec<_>>(),
        );
        Finding::new(Kind::BusyProcesses, e, |e| {
            format!(
                "other processes moved {} ({:.0}% of the test's bytes) while it ran: {}; they \
                 share the devices and the CPU with the test (by /proc/PID/io, which does not \
                 say on which device)",
                fmt_size(e.count("other_bytes")),
                e.num("share") * 100.0,
                names.join("; ")
            )
        })
        .on("")
    }
}

/// Other processes' I/O on the devices under the test, from the block layer's trace: exactly,
/// per device; those /proc/PID/io saw busy elsewhere (`elsewhere`) are named after them. On a
/// write-only test that read nothing itself, it says so: their reads are no read-modify-write.
pub fn traced_finding(
    t: &TraceSummary,
    job: &Job,
    ours: u64,
    elsewhere: Option<&OtherIo>,
) -> Option<Finding> {
    let on_ours = t.others();
    let (read, written) = t.others_total();
    let bytes = read + written;
    let away = busy_elsewhere(t, &on_ours, elsewhere);
    let away_bytes: u64 = away.iter().map(|p| p.bytes).sum();
    let here = worth_naming(bytes, ours);
    if !here && away.is_empty() {
        return None;
    }
    let mut parts = Vec::new();
    let named: Vec<&crate::analysis::traced::SubmitterIo> = t
        .submitters
        .iter()
        .filter(|s| s.who == crate::trace::Who::Other)
        .take(3)
        .collect();
    // Processes beyond those named (a shell loop of short dds: the total is all of theirs).
    let more = on_ours.len().saturating_sub(
        named
            .iter()
            .map(|s| s.pid)
            .collect::<std::collections::BTreeSet<_>>()
            .len(),
    );
    if here {
        parts.push(on_devices_words(t, job, &named, more, ours));
    }
    if !away.is_empty() {
        let names: Vec<String> = away.iter().take(3).map(|p| rates(p)).collect();
        // A trace kept in windows does not see what a process did between them.
        let place = if t.throughout() {
            "busy on other devices (by /proc/PID/io)"
        } else {
            "busy where the trace's windows did not see them (by /proc/PID/io, which does not \
             say on which device: on these between the windows, or on others)"
        };
        parts.push(format!(
            "{place}, sharing the CPU with the test: {}",
            names.join("; ")
        ));
    }
    let mut e = Evidence::from([
        ("other_bytes", (bytes + away_bytes) as f64),
        ("other_bytes_on_devices", bytes as f64),
        ("other_read_bytes", read as f64),
        ("processes", (on_ours.len() + away.len()) as f64),
        ("share", (bytes + away_bytes) as f64 / ours.max(1) as f64),
        ("share_on_devices", bytes as f64 / ours.max(1) as f64),
        ("traced", 1.0),
    ]);
    if here && more > 0 {
        e.insert("more_processes", more as f64);
    }
    if here {
        let records = named.iter().map(|s| {
            Figure::record([
                ("comm", s.comm.as_str().into()),
                ("pid", s.pid.into()),
                ("device", s.place().into()),
                ("read_bytes", s.read_bytes.into()),
                ("write_bytes", s.write_bytes.into()),
            ])
        });
        e.insert("named", records.collect::<Vec<_>>());
    }
    if !away.is_empty() {
        let records = away.iter().take(3).map(|p| rates_record(p));
        e.insert("busy_elsewhere", records.collect::<Vec<_>>());
    }
    if t.mode == "sampled" {
        e.insert("traced_seconds", t.seconds);
        e.insert("run_seconds", t.of_seconds);
        e.insert("windows", t.windows as f64);
    }
    Some(Finding::new(Kind::BusyProcesses, e, |_| parts.join(". ")).on(""))
}

/// Those /proc/PID/io saw busy (`elsewhere`) that the trace did not see on the test's devices.
/// /proc/PID/io adds a reaped child's bytes to its parent's: a parent whose bytes are at most
/// twice its traced descendants' is not busy elsewhere, its children were busy here.
fn busy_elsewhere<'a>(
    t: &TraceSummary,
    on_ours: &[(String, u32, u64, u64)],
    elsewhere: Option<&'a OtherIo>,
) -> Vec<&'a BusyProcess> {
    let traced_pids: Vec<u32> = on_ours.iter().map(|o| o.1).collect();
    let descendants = |pid: u32| -> u64 {
        t.submitters
            .iter()
            .filter(|s| s.who == crate::trace::Who::Other && s.ancestors.contains(&pid))
            .map(|s| s.counted(s.read_bytes + s.write_bytes))
            .sum()
    };
    elsewhere
        .map(|o| {
            o.busy
                .iter()
                .filter(|p| !traced_pids.contains(&p.pid) && descendants(p.pid) * 2 < p.bytes)
                .collect()
        })
        .unwrap_or_default()
}

/// The words for the others the trace saw on the test's devices: their total, the first three
/// by name with what and where, how many more, and no read-modify-write where it applies.
fn on_devices_words(
    t: &TraceSummary,
    job: &Job,
    named: &[&crate::analysis::traced::SubmitterIo],
    more: usize,
    ours: u64,
) -> String {
    let (read, written) = t.others_total();
    let bytes = read + written;
    let names: Vec<String> = named
        .iter()
        .map(|s| {
            let did = crate::units::read_wrote(s.read_bytes, s.write_bytes, "");
            format!("{} (pid {}) {did} on {}", s.comm, s.pid, s.place())
        })
        .collect();
    let no_rmw = matches!(job.op, Op::Write | Op::Randwrite) && read > 0 && t.test_reads() == 0;
    let how = match t.mode {
        "sampled" => format!(
            "; the block layer's trace, {:.2} s of {:.1} s in {}, scaled to the run",
            t.seconds,
            t.of_seconds,
            crate::units::count(t.windows as usize, "window")
        ),
        _ => "; the block layer's trace".to_string(),
    };
    let more = match more {
        0 => String::new(),
        n => format!("; and {n} more"),
    };
    format!(
        "other processes moved {} on the devices under the test and their disks while it ran \
         ({:.0}% of the test's bytes{how}): {}{more}{}",
        fmt_size(bytes),
        bytes as f64 * 100.0 / ours.max(1) as f64,
        names.join("; "),
        if no_rmw {
            "; the test read nothing itself: no read-modify-write"
        } else {
            ""
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::traced::SubmitterIo;
    use crate::trace::Who;

    #[test]
    fn a_process_the_trace_did_not_see_is_on_other_devices_only_when_traced_throughout() {
        // dd read a partition of the test's disk by /proc/PID/io, in a run whose trace saw
        // only the test: traced throughout it was elsewhere; in windows it may have been
        // between them (a dd restarted in a shell loop, beside a 64K read test on loop0p1).
        let dd = BusyProcess {
            pid: 24976,
            comm: "dd".into(),
            read_bytes_per_sec: 10.9e6,
            write_bytes_per_sec: 0.0,
            bytes: 21_800_000,
            devices: Vec::new(),
        };
        let others = OtherIo {
            busy: vec![dd],
            bytes: 21_800_000,
            read_bytes: 21_800_000.0,
        };
        let test = SubmitterIo {
            device: "loop0p1".into(),
            disk: Some("loop0".into()),
            backing_file_of: None,
            who: Who::Test,
            pid: 1,
            comm: "blkscope".into(),
            read_bytes: 742 << 20,
            write_bytes: 0,
            ios: 11_878,
            flushes: 0,
            ancestors: Vec::new(),
            weight: 1.0,
        };
        let throughout = TraceSummary {
            mode: "on",
            seconds: 2.0,
            of_seconds: 2.0,
            windows: 1,
            submitters: vec![test],
            ..TraceSummary::off("")
        };
        let windows = TraceSummary {
            mode: "sampled",
            seconds: 0.51,
            windows: 2,
            ..throughout.clone()
        };
        let job = Job::default();
        let said = |t: &TraceSummary| {
            let f = traced_finding(t, &job, 742 << 20, Some(&others)).expect("dd is named");
            println!("{}: {}", t.mode, f.message);
            f.message
        };
        let on = said(&throughout);
        assert!(
            on.contains("busy on other devices (by /proc/PID/io)") && on.contains("dd (pid 24976)"),
            "{on}"
        );
        let sampled = said(&windows);
        assert!(
            !sampled.contains("on other devices (by")
                && sampled.contains("did not see them")
                && sampled.contains("dd (pid 24976)"),
            "{sampled}"
        );
    }
}
