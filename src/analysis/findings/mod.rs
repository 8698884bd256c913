//! Findings: what blkscope concluded, as data. One model for a test's result, a suite, a lesson
//! and the doctor: a [`Kind`] (which carries its general meaning), the [`Evidence`] behind it,
//! and its words, written from that evidence. A file per source, each taking one context:
//!
//! - [`diskstats`]: the devices' counters during a test, judged against its job;
//! - [`how_it_ran`]: how the test's I/O was issued (io-wq, partial file system blocks);
//! - [`unwritten`]: reads of what held nothing (never written, zeros);
//! - [`others`]: other processes' I/O, by the block layer's trace or /proc;
//! - [`stall`]: a time in which none of the test's I/Os completed;
//! - [`device`]: a device's settings (memory under it, alignment, write cache, scheduler,
//!   queue limits, use, kernel errors): the doctor's checks, and what a test's result says of
//!   the memory under its target.

pub mod device;
pub mod diskstats;
pub mod evidence;
pub mod how_it_ran;
pub mod kind;
pub mod others;
pub mod stall;
pub mod told;
pub mod unwritten;

use serde::{Deserialize, Serialize};

pub use diskstats::{Activity, Moved, analyze};
pub use evidence::{Evidence, Figure};
pub use how_it_ran::{
    HALT_POLL_MEASURED, IO_WORKER_WAKEUP_MAX_DEPTH, IO_WORKER_WAKEUP_MAX_MEAN_NS, Issue,
    halt_poll_ns, io_worker_wakeups, partial_fs_block,
};
pub use kind::{Effect, Kind, Source};

/// Puts findings in the order of what they do to the figure: what makes it meaningless first
/// (reads of holes before %util), the order found kept within each.
pub fn order(findings: &mut [Finding]) {
    findings.sort_by_key(|f| f.kind.effect());
}

/// How much a finding about a device matters (the doctor's findings carry one).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Info,
    Warning,
    Problem,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Problem => "problem",
        }
    }
}

/// One finding. In JSON: `kind`, then `device` (a test's findings: the device the figures come
/// from, "" where none) or `severity` (the doctor's), `message` and `numbers` (its evidence).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Finding {
    pub kind: Kind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub severity: Option<Severity>,
    pub message: String,
    pub numbers: Evidence,
}

impl Finding {
    /// A finding of `kind` with its evidence, its words written from that evidence.
    pub fn new(kind: Kind, numbers: Evidence, say: impl FnOnce(&Evidence) -> String) -> Self {
        let message = say(&numbers);
        // Every number the words say is one of the evidence's (told.rs): checked in debug
        // builds, so each finding a test makes is.
        #[cfg(debug_assertions)]
        {
            let bad = told::unexplained(&message, &numbers);
            assert!(
                bad.is_empty(),
                "{kind:?} says {bad:?}, which its evidence has not: {message:?} {numbers:?}"
            );
        }
        Self {
            kind,
            device: None,
            severity: None,
            message,
            numbers,
        }
    }

    /// About a test, with the device its figures come from ("" where none).
    pub fn on(mut self, device: impl Into<String>) -> Self {
        self.device = Some(device.into());
        self
    }

    /// About a device, with how much it matters.
    pub fn rated(mut self, severity: Severity) -> Self {
        self.severity = Some(severity);
        self
    }

    /// The device its figures come from ("" where none).
    pub fn device(&self) -> &str {
        self.device.as_deref().unwrap_or("")
    }

    /// How much it matters (a test's findings: a warning each).
    pub fn severity(&self) -> Severity {
        self.severity.unwrap_or(Severity::Warning)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A test's finding and the doctor's keep the JSON each had before they were one type.
    #[test]
    fn a_tests_finding_and_the_doctors_keep_their_json() {
        let f = Finding::new(Kind::Flushes, Evidence::from([("flushes", 2.0)]), |e| {
            format!("{} flushes", e.count("flushes"))
        })
        .on("loop0");
        let json = serde_json::to_string(&f).unwrap();
        println!("{json}");
        assert_eq!(
            json,
            r#"{"kind":"flushes","device":"loop0","message":"2 flushes","numbers":{"flushes":2.0}}"#
        );
        let d = Finding::new(
            Kind::QueueLimits,
            Evidence::new().with("nr_requests", 16u64),
            |e| format!("nr_requests is {}", e.count("nr_requests")),
        )
        .rated(Severity::Info);
        let json = serde_json::to_string(&d).unwrap();
        println!("{json}");
        assert_eq!(
            json,
            r#"{"kind":"queue_limits","severity":"info","message":"nr_requests is 16","numbers":{"nr_requests":16}}"#
        );
        assert_eq!(serde_json::from_str::<Finding>(&json).unwrap(), d);
    }
}
