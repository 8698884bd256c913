//! `blkscope explain`: a test's or a suite's dd and fio lines, flags and traps; a kind of finding.

use super::*;
use crate::analysis::explain;
use crate::engine::Job;
use std::fmt::Write as _;

/// One test explained: its label, what it is for, the blkscope, dd and fio lines, what each
/// flag does, and the traps it avoids.
pub fn explain_job(name: &str, about: Option<&str>, job: &Job, target: &str) -> String {
    let mut out = String::new();
    let total = job.planned_bytes();
    let _ = writeln!(out, "{name}: {}", job.label());
    if let Some(a) = about {
        let _ = writeln!(out, "  {a}");
    }
    let c = explain::commands(job, target, total);
    let _ = writeln!(out, "  blkscope: {}", c.blkscope);
    match &c.dd {
        Ok(dd) => {
            let _ = writeln!(out, "  dd:       {dd}");
        }
        Err(why) => {
            let _ = writeln!(out, "  dd:       (none: {why})");
        }
    }
    let _ = writeln!(out, "  fio:      {}", c.fio);
    for n in explain::flag_notes(job) {
        let _ = writeln!(out, "    - {n}");
    }
    for t in explain::traps(job) {
        let _ = writeln!(out, "  trap: {t}");
    }
    out
}

/// `explain KIND`: what warnings of `kind` mean, then the whole of what the newest saved run
/// that had one said (`seen`: run id, test, message), wrapped for an 80-column console.
pub fn kind_explanation(
    kind: crate::analysis::findings::Kind,
    seen: Option<(String, String, String)>,
) -> String {
    use crate::analysis::findings::Source;
    let mut out = wrap(&format!("{kind}: {}", kind.about()), 78, "") + "\n";
    match seen {
        Some((id, test, message)) => {
            let _ = writeln!(
                out,
                "\nIn saved run {id},\ntest {test}:\n{}",
                wrap(&message, 78, "  ")
            );
        }
        None if kind.source() == Source::Device => {
            let _ = writeln!(
                out,
                "\nThe doctor says whether a device has one: blkscope doctor DEVICE."
            );
        }
        None => {
            let _ = writeln!(
                out,
                "\nNo saved run has one among the newest: `blkscope runs` lists them."
            );
        }
    }
    out
}

/// An explanation: a whole suite's head, then each test.
pub fn explanation(e: &crate::suite::Explanation, target: &str) -> String {
    let mut out = String::new();
    if let Some(s) = &e.suite {
        let _ = writeln!(out, "{}: {}", s.name, s.title);
        if let Some(src) = &s.source {
            let _ = writeln!(out, "From: {src}");
        }
        if !s.about.is_empty() {
            let _ = writeln!(out, "{}", s.about);
        }
        if let Some(f) = &s.found {
            let _ = writeln!(out, "What the article found: {f}");
        }
        if let Some(c) = &s.contrast {
            let _ = writeln!(
                out,
                "What blkscope tells you after the run: {}.",
                c.promise()
            );
        }
        let _ = writeln!(
            out,
            "Each test runs {}.\n",
            match s.repeat {
                1 => "once".to_string(),
                n => format!("{n} times"),
            }
        );
        if let Some(fill) = s.fill_job(512) {
            out.push_str(&explain_job(
                crate::suite::FILL_NAME,
                Some(
                    "once, before the tests, not a result: random data over what the read tests \
                     read, as CrystalDiskMark writes its test file first (reads of blocks never \
                     written measure nothing)",
                ),
                &fill,
                target,
            ));
            out.push('\n');
        }
    }
    for t in &e.tests {
        out.push_str(&explain_job(&t.name, t.about.as_deref(), &t.job, target));
        if e.in_suite {
            out.push('\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_suite_without_an_about_prints_no_blank_line_for_it() {
        let suite = crate::suite::parse(
            "name = \"mine\"\n[[test]]\nname = \"r\"\nop = \"read\"\nbs = \"1M\"\nsize = \"64M\"\n",
            std::path::Path::new("mine.toml"),
        )
        .unwrap();
        let e = crate::suite::Explanation {
            suite: Some(suite),
            in_suite: true,
            tests: Vec::new(),
        };
        let text = explanation(&e, "/dev/sdX");
        println!("{text}");
        assert!(
            text.starts_with("mine: mine\nEach test runs 3 times.\n"),
            "{text}"
        );
    }
}
