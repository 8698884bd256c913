//! A lesson's text: the list line, the question with its choices, and the answer (each claim
//! with its numbers, what it means, the choice the figures support, the dd and fio lines).
//! The command line prints these lines; the TUI's answer pane shows the same.

use crate::analysis::findings::Kind;
use crate::learn::run::{ClaimCount, ClaimRun, LessonRun, TestRun};
use crate::learn::{Lesson, letter, progress::Done};

/// One line of `learn --list`.
pub fn list_line(l: &Lesson, done: Option<&Done>) -> String {
    let mark = match done {
        Some(d) => {
            let day = d.created.get(..10).unwrap_or(&d.created);
            let pred = match d.predicted_right {
                Some(true) => ", predicted right",
                Some(false) => ", predicted wrong",
                None => "",
            };
            format!("  [done {day}{pred}, {}]", claims_short(&d.claims))
        }
        None => String::new(),
    };
    format!("{:<18} {}{mark}", l.name, l.title)
}

/// The question and its choices (`a) ...`).
pub fn question(l: &Lesson) -> Vec<String> {
    let mut v = vec![l.question.clone(), String::new()];
    for (i, c) in l.choices.iter().enumerate() {
        v.push(format!("  {}) {}", letter(i), c.text));
    }
    v
}

pub use crate::learn::figures::fmt_figure;

/// `[held]`, `[did not hold]`, `[not clear]` (the runs' spread could overturn it) or
/// `[not checked]`.
pub fn verdict(c: &ClaimRun) -> &'static str {
    match (c.held, c.held_in) {
        (Some(true), _) => "held",
        (Some(false), _) => "did not hold",
        (None, Some(_)) => "not clear",
        (None, None) => "not checked",
    }
}

/// A claim's lines: the verdict and text, the check with its numbers, the meaning.
pub fn claim(c: &ClaimRun) -> Vec<String> {
    let nums: Vec<String> = c
        .numbers
        .iter()
        .map(|(k, v)| format!("{k} = {}", fmt_figure(*v)))
        .collect();
    let runs = match c.held_in {
        Some([held, n]) if c.held.is_some() => format!("; in {held} of {n} runs"),
        _ => String::new(),
    };
    vec![
        format!("[{}] {}", verdict(c), c.text),
        format!("    {}   ({}{runs})", c.check, nums.join(", ")),
        format!("    {}", c.meaning),
    ]
}

/// A test's lines: median MB/s (with the range over its runs), IOPS, latency; then a line a
/// warning the runs raised, its kind with what such a finding means (its reference's first
/// clause: the runs' own sentences differ run to run, and their numbers are not the medians).
fn test_lines(t: &TestRun) -> Vec<String> {
    let mut v = vec![test_line(t)];
    for w in &t.warnings {
        let about = Kind::parse(w).map(|k| first_clause(k.about()));
        v.push(match about {
            Some(a) => format!("    [{w}] {a} (blkscope explain {w})"),
            None => format!("    [{w}]"),
        });
    }
    v
}

/// A reference text up to its first colon or full stop.
fn first_clause(about: &str) -> &str {
    let end = [": ", ". "]
        .iter()
        .filter_map(|p| about.find(p))
        .min()
        .unwrap_or(about.len());
    about[..end].trim_end_matches('.')
}

/// A test's line: median MB/s (with the range over its runs), IOPS, latency.
fn test_line(t: &TestRun) -> String {
    let f = |k: &str| t.figures.get(k).copied().unwrap_or(0.0);
    let range = match t.spread.get("mbps") {
        Some([lo, hi]) => format!(" ({}-{})", fmt_figure(*lo), fmt_figure(*hi)),
        None => String::new(),
    };
    format!(
        "  {:<14} {:>9} MB/s{range} {:>10} IOPS   mean {} us, p99 {} us",
        t.test,
        fmt_figure(f("mbps")),
        fmt_figure(f("iops")),
        fmt_figure(f("lat_mean_us")),
        fmt_figure(f("lat_p99_us")),
    )
}

/// The whole answer of a lesson run, step by step.
pub fn answer(r: &LessonRun) -> Vec<String> {
    let mut v = vec![format!("{}: {}", r.lesson, r.title)];
    v.extend(verdict_lines(r));
    if r.in_ram {
        let fs = r.lab_fs.as_deref().unwrap_or("RAM");
        v.push(format!(
            "note: the lab's files are in RAM ({fs}): the figures are memory's, not a disk's"
        ));
    }
    if r.repeats > 1 {
        v.push(format!(
            "Each test ran {} times, in turn; the figures are the medians, MB/s with its range.",
            r.repeats
        ));
    }
    for s in &r.steps {
        v.push(String::new());
        let sched = s
            .scheduler
            .as_deref()
            .map(|x| format!(", scheduler {x}"))
            .unwrap_or_default();
        v.push(format!("{} (on {}, {}{sched})", s.name, s.path, s.device));
        for t in &s.results {
            match &t.error {
                Some(e) => v.push(format!("  {}: failed: {e}", t.test)),
                None => v.extend(test_lines(t)),
            }
        }
        for c in &s.claims {
            v.extend(claim(c).into_iter().map(|l| format!("  {l}")));
        }
    }
    v.push(String::new());
    v.push("To take away, what ran:".into());
    for t in r.steps.iter().flat_map(|s| &s.results) {
        v.push(format!("  {}: {}", t.test, t.dd));
        v.push(format!("  {}: {}", t.test, t.fio));
    }
    if let Some(t) = &r.takeaway {
        v.push(String::new());
        v.push(t.clone());
    }
    v
}

/// The prediction against the measured answer, and how many claims held.
pub fn verdict_lines(r: &LessonRun) -> Vec<String> {
    let mut v = Vec::new();
    if r.cancelled {
        v.push("Stopped before the end: no answer.".into());
        return v;
    }
    let ans = match (&r.answer, &r.unclear) {
        (Some(a), _) => format!("Measured here: {}) {}", a.choice, a.text),
        (None, Some(why)) => format!("Measured here: not clear on this machine: {why}"),
        (None, None) => "Measured here: none of the choices fits these figures exactly".into(),
    };
    v.push(ans);
    if let Some(p) = &r.prediction {
        let right = match (r.predicted_right, &r.unclear) {
            (Some(true), _) => "right",
            (_, Some(_)) => "these runs do not decide it",
            _ => "not what this machine did",
        };
        v.push(format!("You predicted: {}) {} ({right})", p.choice, p.text));
    }
    v.push(claims_said(&r.claims()));
    v
}

/// "2 of 3 claims held on this machine; 1 not clear (...)": every claim counted, so that one
/// the runs could not decide is not left out of the count.
pub fn claims_said(n: &ClaimCount) -> String {
    let mut s = format!("{} of {} claims held on this machine", n.held, n.total());
    if n.did_not_hold > 0 {
        s += &format!("; {} did not hold", n.did_not_hold);
    }
    if n.unclear > 0 {
        s += &format!(
            "; {} not clear (the spread of the runs could overturn it)",
            n.unclear
        );
    }
    if n.unchecked > 0 {
        s += &format!(
            "; {} not checked (a figure it needs was not measured)",
            n.unchecked
        );
    }
    s + "."
}

/// "2/3 claims held, 1 not clear", for the lists of lessons.
pub fn claims_short(n: &ClaimCount) -> String {
    let mut s = format!("{}/{} claims held", n.held, n.total());
    if n.unclear > 0 {
        s += &format!(", {} not clear", n.unclear);
    }
    if n.unchecked > 0 {
        s += &format!(", {} not checked", n.unchecked);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learn::run::{Pick, StepRun};
    use std::collections::BTreeMap;

    fn claim(held: Option<bool>, held_in: [usize; 2]) -> ClaimRun {
        ClaimRun {
            text: "x is faster".into(),
            check: "x.mbps >= 1.3 * y.mbps".into(),
            held,
            held_in: Some(held_in),
            numbers: [("x.mbps".to_string(), 400.0)].into(),
            meaning: "m".into(),
        }
    }

    /// A lesson run of three repeats whose runs did not decide the answer.
    fn disagreeing() -> LessonRun {
        LessonRun {
            lesson: "t".into(),
            title: "T".into(),
            question: String::new(),
            created: String::new(),
            lab_fs: Some("ext4".into()),
            in_ram: false,
            repeats: 3,
            prediction: Some(Pick {
                choice: 'a',
                text: "x".into(),
            }),
            answer: None,
            unclear: Some(
                "the medians say a), but within the spread of the runs (...) b) fits too".into(),
            ),
            predicted_right: None,
            steps: Vec::new(),
            cancelled: false,
            takeaway: None,
        }
    }

    #[test]
    fn runs_that_disagree_are_said_and_decide_nothing() {
        let r = disagreeing();
        let v = verdict_lines(&r).join("\n");
        println!("{v}");
        assert!(
            v.contains("Measured here: not clear on this machine: the medians say a), but within")
                && v.contains("You predicted: a) x (these runs do not decide it)"),
            "{v}"
        );
        let held = claim(Some(true), [3, 3]);
        let c = super::claim(&held).join("\n");
        assert!(
            c.starts_with("[held]") && c.contains("; in 3 of 3 runs)"),
            "{c}"
        );
        let c = super::claim(&claim(None, [1, 3])).join("\n");
        println!("{c}");
        assert!(c.starts_with("[not clear]") && !c.contains("runs)"), "{c}");
    }

    /// Seen in the scheduler lesson's answer: "2 of 2 claims held on this machine." above three
    /// claims, the third "[not clear]"; and a test line ending "[util_saturation]", a name the
    /// student had not met.
    #[test]
    fn every_claim_is_counted_and_every_warning_says_what_it_means() {
        let mut unchecked = claim(None, [0, 0]);
        unchecked.held_in = None;
        let step = StepRun {
            name: "Scheduler none".into(),
            device: crate::learn::DeviceKind::Lab4096,
            path: "/dev/loop1".into(),
            scheduler: Some("none".into()),
            results: vec![TestRun {
                test: "none".into(),
                figures: [("mbps".to_string(), 512.8)].into(),
                spread: BTreeMap::new(),
                runs: 3,
                dd: "dd".into(),
                fio: "fio".into(),
                warnings: vec!["util_saturation".into(), "no_such_kind".into()],
                error: None,
            }],
            claims: vec![
                claim(Some(true), [3, 3]),
                claim(Some(true), [3, 3]),
                claim(None, [3, 3]),
                claim(Some(false), [0, 3]),
                unchecked,
            ],
        };
        let r = LessonRun {
            prediction: None,
            unclear: None,
            steps: vec![step],
            ..disagreeing()
        };
        let n = r.claims();
        assert_eq!(
            (n.held, n.did_not_hold, n.unclear, n.unchecked, n.total()),
            (2, 1, 1, 1, 5),
            "{n:?}"
        );
        let v = answer(&r).join("\n");
        println!("{v}");
        assert!(
            v.contains(
                "2 of 5 claims held on this machine; 1 did not hold; 1 not clear (the spread of \
                 the runs could overturn it); 1 not checked (a figure it needs was not measured)."
            ),
            "{v}"
        );
        assert_eq!(
            claims_short(&n),
            "2/5 claims held, 1 not clear, 1 not checked"
        );
        assert!(
            v.contains(
                "\n    [util_saturation] %util is the share of time with at least one request \
                 in flight, not capacity (blkscope explain util_saturation)\n    [no_such_kind]\n"
            ),
            "{v}"
        );
        assert!(!v.contains("us   [util_saturation"), "{v}");
    }
}
