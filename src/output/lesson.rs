//! A lesson's text: the list line, the question with its choices, and the answer (each claim
//! with its numbers, what it means, the choice the figures support, the dd and fio lines).
//! The command line prints these lines; the TUI's answer pane shows the same.

use crate::learn::run::{ClaimRun, LessonRun};
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
            format!(
                "  [done {day}{pred}, {}/{} claims held]",
                d.held.0, d.held.1
            )
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

/// A figure as a claim's numbers show it: 3 significant figures, no exponent.
pub fn fmt_figure(v: f64) -> String {
    let a = v.abs();
    if a == 0.0 || a >= 1000.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else if a >= 0.01 {
        format!("{v:.3}")
    } else {
        format!("{v:.2e}")
    }
}

/// `[held]`, `[did not hold]` or `[not checked]`.
pub fn verdict(c: &ClaimRun) -> &'static str {
    match c.held {
        Some(true) => "held",
        Some(false) => "did not hold",
        None => "not checked",
    }
}

/// A claim's lines: the verdict and text, the check with its numbers, the meaning.
pub fn claim(c: &ClaimRun) -> Vec<String> {
    let nums: Vec<String> = c
        .numbers
        .iter()
        .map(|(k, v)| format!("{k} = {}", fmt_figure(*v)))
        .collect();
    vec![
        format!("[{}] {}", verdict(c), c.text),
        format!("    {}   ({})", c.check, nums.join(", ")),
        format!("    {}", c.meaning),
    ]
}

/// The whole answer of a lesson run, step by step.
pub fn answer(r: &LessonRun) -> Vec<String> {
    let mut v = vec![format!("{}: {}", r.lesson, r.title)];
    v.extend(verdict_lines(r));
    if let Some(fs) = &r.in_ram {
        v.push(format!(
            "note: the lab's files are in RAM ({fs}): the figures are memory's, not a disk's"
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
            let f = |k: &str| t.figures.get(k).copied().unwrap_or(0.0);
            match &t.error {
                Some(e) => v.push(format!("  {}: failed: {e}", t.test)),
                None => v.push(format!(
                    "  {:<14} {:>9} MB/s {:>10} IOPS   mean {} us, p99 {} us{}",
                    t.test,
                    fmt_figure(f("mbps")),
                    fmt_figure(f("iops")),
                    fmt_figure(f("lat_mean_us")),
                    fmt_figure(f("lat_p99_us")),
                    if t.warnings.is_empty() {
                        String::new()
                    } else {
                        format!("   [{}]", t.warnings.join(", "))
                    }
                )),
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
    let ans = match &r.answer {
        Some(a) => format!("Measured here: {}) {}", a.choice, a.text),
        None => "Measured here: none of the choices fits these figures exactly".into(),
    };
    v.push(ans);
    if let Some(p) = &r.prediction {
        let right = match r.predicted_right {
            Some(true) => "right",
            _ => "not what this machine did",
        };
        v.push(format!("You predicted: {}) {} ({right})", p.choice, p.text));
    }
    let (held, checked) = r.held();
    v.push(format!("{held} of {checked} claims held on this machine."));
    v
}
