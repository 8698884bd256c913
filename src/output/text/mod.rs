//! The text of the headless commands' human output, a file per command: a check's verdict, a
//! run's result and its spread, the read-back, a suite's table, an explanation, a comparison,
//! the doctor's findings, a sweep. Each function returns the lines, newline-terminated; the
//! caller prints them. This file has what they share (a warning's first sentence, wrapping).

mod check;
mod compare;
mod doctor;
mod explanation;
mod run;
mod suite;
mod sweep;
mod verify;
pub use check::*;
pub use compare::*;
pub use doctor::*;
pub use explanation::*;
pub use run::*;
pub use suite::*;
pub use sweep::*;
pub use verify::*;

use super::{fmt_duration, fmt_rate};

fn fmt_ns(ns: f64) -> String {
    fmt_duration(ns, 1)
}

/// Where a warning printed by its first sentence is said whole.
const WHOLE_WARNING: &str =
    "(each warning above is its first sentence: blkscope explain KIND says more, --json all)";

/// The first sentence of a message (through its full stop), or all of it: a warning's headline
/// on a console, where a 900-character paragraph would bury the figures.
pub fn first_sentence(s: &str) -> &str {
    s.match_indices(". ")
        .find(|(i, _)| s[i + 2..].starts_with(|c: char| c.is_uppercase()))
        .map_or(s, |(i, _)| &s[..=i])
}

/// Whether [`first_sentence`] leaves something out.
fn shortened(s: &str) -> bool {
    first_sentence(s).len() < s.trim_end().len()
}

/// `text` in lines of at most `width` columns (words kept whole), each after `indent`.
fn wrap(text: &str, width: usize, indent: &str) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::from(indent);
    for word in text.split_whitespace() {
        if line.len() > indent.len() && line.len() + 1 + word.len() > width {
            lines.push(std::mem::replace(&mut line, String::from(indent)));
        }
        if line.len() > indent.len() {
            line.push(' ');
        }
        line.push_str(word);
    }
    lines.push(line);
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use crate::analysis::Warning;
    use crate::analysis::findings::Kind;
    use crate::device::{Reason, ReasonCode, SafetyReport, WriteSafety};
    use crate::result::fixed_result;
    use crate::session::TestOutcome;

    /// A long warning is said on a console by its kind and first sentence, with where the rest
    /// is; the rest is not printed.
    #[test]
    fn a_warning_prints_its_first_sentence() {
        assert_eq!(
            super::first_sentence("a (e.g. /dev/sdb). B is next. C"),
            "a (e.g. /dev/sdb)."
        );
        assert_eq!(
            super::first_sentence("one: no full stop"),
            "one: no full stop"
        );
        let mut r = fixed_result(100e6);
        r.warnings = vec![
            Warning::new(
                Kind::IoWorkerWakeups,
                "io_uring could not issue the I/O on zram0 without blocking, so io-wq ran it. At \
                 queue depth 1 each I/O then waits for a worker to wake. Run again with --cpus N.",
            ),
            Warning::new(Kind::Zeros, "zeros compress; use --data random"),
        ];
        let info = crate::engine::TargetInfo {
            path: "/dev/zram0".into(),
            kind: "block",
            device: Some("zram0".into()),
            size_bytes: 1 << 30,
            logical_block_size: Some(4096),
            physical_block_size: Some(4096),
            rotational: Some(false),
            write_cache: None,
            scheduler: None,
            test_file: None,
            write_safety: WriteSafety::Clear,
        };
        let t = super::run_result(&info, &r, 1, 1);
        println!("{t}");
        assert!(
            t.contains(
                "warning [io_worker_wakeups]: io_uring could not issue the I/O on zram0 \
                        without blocking, so io-wq ran it.\n"
            ),
            "{t}"
        );
        assert!(!t.contains("waits for a worker"), "{t}");
        assert!(
            t.contains("warning [zeros]: zeros compress; use --data random\n"),
            "{t}"
        );
        assert!(t.contains("blkscope explain KIND"), "{t}");
        // Nothing shortened, no pointer.
        r.warnings.remove(0);
        assert!(!super::run_result(&info, &r, 1, 1).contains("explain KIND"));
    }

    /// A blocked device's last line says whether a read may run: not on a device of size 0
    /// (`run` says "the device has nothing to test") nor on one that cannot be opened.
    #[test]
    fn a_blocked_verdict_says_whether_a_read_can_run() {
        let report = |codes: &[ReasonCode]| SafetyReport {
            target: "/dev/x".into(),
            target_kind: "block",
            device: Some("x".into()),
            write_safety: WriteSafety::Blocked,
            reasons: codes
                .iter()
                .map(|&code| Reason {
                    code,
                    detail: "why".into(),
                })
                .collect(),
            read_notes: Vec::new(),
            blank: None,
            whole_read: None,
        };
        let last = |codes: &[ReasonCode]| {
            let t = super::check(&report(codes));
            println!("{t}");
            t.lines().last().unwrap().to_string()
        };
        assert_eq!(
            last(&[ReasonCode::Mounted]),
            "Write tests are refused; read tests are allowed."
        );
        assert!(last(&[ReasonCode::Empty]).starts_with("Nothing can be tested"));
        assert!(
            last(&[ReasonCode::Mounted, ReasonCode::OpenFailed])
                .contains("a read test cannot open it either")
        );
    }

    /// Two readers: 1598.4 MB/s over the run beside "job 0 949.8 MB/s, job 1 799.2 MB/s", each
    /// over its own time, which did not add up for a reader; each now says its time.
    #[test]
    fn each_stream_says_its_own_time() {
        let suite = crate::suite::find("fedora-four")
            .unwrap()
            .expect("built in");
        let mut result = fixed_result(1598.4e6);
        result.streams = [(0, 949.8e6, 0.221), (1, 799.2e6, 0.262)]
            .into_iter()
            .map(|(job, rate, seconds)| crate::engine::result::Stream {
                job,
                offset: job as u64 * (200 << 20),
                bytes: 200 << 20,
                seconds,
                bytes_per_sec: rate,
            })
            .collect();
        let tests = [TestOutcome {
            name: "two readers".into(),
            about: None,
            job: Default::default(),
            result,
            setting: None,
        }];
        let text = super::suite_table(&suite, "/dev/loop9", 1, &tests, false);
        println!("{text}");
        assert!(
            text.contains("per stream: job 0 949.8 MB/s in 0.221 s, job 1 799.2 MB/s in 0.262 s"),
            "{text}"
        );
    }

    /// A finding every test has word for word is said once, under the table; one that differs
    /// stays under its own row.
    #[test]
    fn a_finding_every_test_shares_is_said_once() {
        let suite = crate::suite::find("zeros-trap").unwrap().expect("built in");
        let shared = Warning::new(Kind::NeverWritten, "64M of the 64M is holes");
        let test = |name: &str, own: &str| {
            let mut result = fixed_result(400e6);
            result.warnings = vec![shared.clone(), Warning::new(Kind::BusyProcesses, own)];
            TestOutcome {
                name: name.into(),
                about: None,
                job: Default::default(),
                result,
                setting: None,
            }
        };
        let tests = [
            test("zeros", "cargo moved 1M"),
            test("random data", "cargo moved 2M"),
        ];
        let text = super::suite_table(&suite, "/dev/loop9", 1, &tests, false);
        println!("{text}");
        assert_eq!(text.matches("holes").count(), 1, "{text}");
        let every = text.find("every test:").expect("a shared section");
        assert!(text[every..].contains("[never_written] 64M"), "{text}");
        for own in ["cargo moved 1M", "cargo moved 2M"] {
            let at = text.find(own).expect(own);
            assert!(at < every, "{own} under its row: {text}");
        }
        // One test: nothing to share, the finding stays under it.
        let one = super::suite_table(&suite, "/dev/loop9", 1, &tests[..1], false);
        assert!(
            !one.contains("every test:") && one.contains("holes"),
            "{one}"
        );
    }

    /// Two runs of 1334.9 and 2070.4 MB/s: the row said the median throughput (their mean,
    /// 1702.7) beside the slower run's IOPS (1273), where the saved run's report said 1624.
    #[test]
    fn a_row_of_repeats_says_the_median_iops_beside_the_median_throughput() {
        let suite = crate::suite::find("hdparm-t").unwrap().expect("built in");
        let mut runs = [1334.9e6, 2070.4e6].map(fixed_result).to_vec();
        for r in &mut runs {
            r.iops = r.bytes_per_sec / (1 << 20) as f64;
        }
        let tests = [TestOutcome {
            name: "seq-read".into(),
            about: None,
            job: Default::default(),
            result: crate::result::with_repeats(runs),
            setting: None,
        }];
        let text = super::suite_table(&suite, "/dev/loop9", 2, &tests, false);
        println!("{text}");
        let row = text.lines().find(|l| l.contains("seq-read")).unwrap();
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(&cells[1..4], ["1702.7", "(1334.9-2070.4)", "1624"], "{row}");
    }
}
