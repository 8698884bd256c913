//! Lessons: a question and a prediction, the tests that answer it on the lab's throwaway
//! devices, and the answer from the figures measured just now. Each lesson states its claims
//! as checks on those figures ([`expr`]), and says whether each held on this machine and what it
//! means when it did not.
//!
//! The built-in lessons ship in `assets/lessons/*.toml` (embedded in the binary); a teacher's own
//! go in `$XDG_CONFIG_HOME/blkscope/lessons/` (default `~/.config/blkscope/lessons/`). A file with
//! an error is refused with the file, the line and the reason, as suites are.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toml::Spanned;

use crate::suite::{SuiteError, SuiteTest, line_of};

pub mod expr;
pub mod figures;
pub mod progress;
pub mod repeats;
pub mod run;

pub use expr::Expr;

/// The built-in lessons, in the order `learn --list` shows them.
pub const BUILTIN: [(&str, &str); 9] = [
    (
        "cache-trap",
        include_str!("../../assets/lessons/cache-trap.toml"),
    ),
    ("zeros", include_str!("../../assets/lessons/zeros.toml")),
    (
        "read-modify-write",
        include_str!("../../assets/lessons/read-modify-write.toml"),
    ),
    ("dsync", include_str!("../../assets/lessons/dsync.toml")),
    (
        "queue-depth",
        include_str!("../../assets/lessons/queue-depth.toml"),
    ),
    (
        "seq-random",
        include_str!("../../assets/lessons/seq-random.toml"),
    ),
    (
        "concurrent",
        include_str!("../../assets/lessons/concurrent.toml"),
    ),
    (
        "scheduler",
        include_str!("../../assets/lessons/scheduler.toml"),
    ),
    ("verify", include_str!("../../assets/lessons/verify.toml")),
];

/// The lab device a step runs on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub enum DeviceKind {
    /// A loop device with 512-byte sectors, direct I/O to its file.
    #[serde(rename = "lab-512")]
    Lab512,
    /// A loop device with 4096-byte sectors, direct I/O to its file.
    #[serde(rename = "lab-4096")]
    Lab4096,
    /// A loop device whose file goes through the page cache (no direct I/O below it).
    #[serde(rename = "cached")]
    Cached,
    /// A zram device: memory, compressed; pages of one repeated value cost nothing.
    #[serde(rename = "zram")]
    Zram,
}

impl DeviceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DeviceKind::Lab512 => "lab-512",
            DeviceKind::Lab4096 => "lab-4096",
            DeviceKind::Cached => "cached",
            DeviceKind::Zram => "zram",
        }
    }
}

/// One answer a student may predict; `when` says from the figures whether it is the one
/// that happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Choice {
    pub text: String,
    pub when: Spanned<String>,
}

/// A claim about the figures, checked on what was measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    pub text: String,
    /// The check, over `test.figure` names ([`figures::FIGURES`]).
    pub check: Spanned<String>,
    /// What it means that it held.
    pub held: String,
    /// What it means that it did not (a VM, a RAM-backed device, ...).
    pub failed: String,
}

/// One step: tests on one lab device, what to watch, and claims about what they measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Step {
    pub name: String,
    /// What to look at while it runs.
    pub look: String,
    pub device: DeviceKind,
    /// The I/O scheduler the device uses for this step (the lab's device; put back after).
    #[serde(default)]
    pub scheduler: Option<String>,
    /// The `iostat -x` columns that matter here (highlighted in the panel).
    #[serde(default)]
    pub watch: Vec<String>,
    #[serde(rename = "test")]
    pub tests: Vec<SuiteTest>,
    #[serde(rename = "claim", default)]
    pub claims: Vec<Claim>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lesson {
    pub name: String,
    pub title: String,
    /// One line for `learn --list`.
    pub about: String,
    pub question: String,
    #[serde(rename = "choice")]
    pub choices: Vec<Choice>,
    /// Write random data over each device a step reads, once, before the first step: a read of
    /// never-written blocks measures nothing.
    #[serde(default)]
    pub fill: bool,
    #[serde(rename = "step")]
    pub steps: Vec<Step>,
    /// The sentence to take away.
    #[serde(default)]
    pub takeaway: Option<String>,
    /// How many times each step's tests run (`learn --repeat` overrides; default 3).
    #[serde(default)]
    pub repeat: Option<usize>,
    /// `builtin`, or the file it was read from.
    #[serde(skip_deserializing, default)]
    pub origin: String,
}

impl Lesson {
    /// The devices its steps run on, each once.
    pub fn devices(&self) -> Vec<DeviceKind> {
        let mut v: Vec<DeviceKind> = self.steps.iter().map(|s| s.device).collect();
        v.sort();
        v.dedup();
        v
    }

    /// The choice the figures support: the first whose `when` holds.
    pub fn answer(&self, get: &dyn Fn(&str) -> Option<f64>) -> Option<usize> {
        self.choices.iter().position(|c| {
            Expr::parse(c.when.get_ref())
                .and_then(|e| e.holds(get))
                .unwrap_or(false)
        })
    }
}

/// `a`, `b`, `c`: how a choice is named.
pub fn letter(i: usize) -> char {
    (b'a' + (i % 26) as u8) as char
}

/// Parses one lesson from TOML text; errors name the file and, where there is one, the line.
pub fn parse(text: &str, file: &Path) -> Result<Lesson, SuiteError> {
    let err = |line: Option<usize>, reason: String| SuiteError {
        file: file.to_path_buf(),
        line,
        reason,
    };
    let mut l: Lesson = toml::from_str(text).map_err(|e| {
        let line = e.span().map(|sp| line_of(text, sp.start));
        err(line, e.message().trim().to_string())
    })?;
    check(&l).map_err(|(at, reason)| err(at.map(|a| line_of(text, a)), reason))?;
    l.origin = file.display().to_string();
    Ok(l)
}

/// What is wrong with a lesson that parsed, with the byte offset of the place where known.
fn check(l: &Lesson) -> Result<(), (Option<usize>, String)> {
    let plain = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
    };
    if !plain(&l.name) {
        return Err((
            None,
            format!("name '{}' must be one lowercase word", l.name),
        ));
    }
    if l.steps.is_empty() {
        return Err((None, "a lesson needs at least one [[step]]".into()));
    }
    if let Some(n) = l.repeat.filter(|n| !(1..=MAX_REPEAT).contains(n)) {
        return Err((
            None,
            format!("repeat = {n}: a lesson repeats its tests 1 to {MAX_REPEAT} times"),
        ));
    }
    if !(2..=6).contains(&l.choices.len()) {
        return Err((
            None,
            "a lesson offers 2 to 6 [[choice]]s to predict from".into(),
        ));
    }
    let mut seen: Vec<&str> = Vec::new();
    for s in &l.steps {
        if s.tests.is_empty() {
            return Err((None, format!("step '{}' has no [[step.test]]", s.name)));
        }
        for w in &s.watch {
            if !crate::stats::iostat::COLUMNS.contains(&w.as_str()) {
                return Err((
                    None,
                    format!("step '{}': watch '{w}' is not an iostat -x column", s.name),
                ));
            }
        }
        for t in &s.tests {
            if !t
                .name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
                || !t.name.starts_with(|c: char| c.is_ascii_alphabetic())
            {
                return Err((
                    None,
                    format!(
                        "test '{}': a lesson's test name is one word of letters, digits and _ \
                         (claims name its figures as {}.iops)",
                        t.name, "NAME"
                    ),
                ));
            }
            if seen.contains(&t.name.as_str()) {
                return Err((None, format!("two tests are named '{}'", t.name)));
            }
            seen.push(&t.name);
            if t.count.is_some() && t.size.is_some() {
                return Err((
                    None,
                    format!("test '{}': give count or size, not both", t.name),
                ));
            }
        }
        for c in &s.claims {
            check_expr(&c.check, &seen, true)?;
        }
    }
    for c in &l.choices {
        check_expr(&c.when, &seen, false)?;
    }
    Ok(())
}

/// How many times each test of a lesson runs unless the lesson or `--repeat` says otherwise: the
/// answer is taken from the medians, and a claim the runs' spread could overturn is not clear.
pub const DEFAULT_REPEAT: usize = 3;

/// The most repeats a lesson or `--repeat` may ask for.
pub const MAX_REPEAT: usize = 20;

/// An expression that parses and names only figures of tests that ran by then; a claim must
/// name at least one (a claim over constants would hold, or not, whatever was measured).
fn check_expr(
    e: &Spanned<String>,
    tests: &[&str],
    claim: bool,
) -> Result<(), (Option<usize>, String)> {
    let at = Some(e.span().start);
    let x = Expr::parse(e.get_ref()).map_err(|r| (at, format!("'{}': {r}", e.get_ref())))?;
    let vars = x.variables();
    if claim && vars.is_empty() {
        return Err((
            at,
            format!(
                "'{}' names no measured figure: a claim must be checked on the numbers",
                e.get_ref()
            ),
        ));
    }
    for v in vars {
        let (t, fig) = v.split_once('.').unwrap_or((&v, ""));
        if !tests.contains(&t) {
            return Err((
                at,
                format!(
                    "'{v}': no test '{t}' has run by then (tests: {})",
                    tests.join(", ")
                ),
            ));
        }
        if !figures::FIGURES.iter().any(|(n, _)| *n == fig) {
            return Err((
                at,
                format!(
                    "'{v}': no figure '{fig}'; figures: {}",
                    figures::FIGURES.map(|f| f.0).join(", ")
                ),
            ));
        }
    }
    Ok(())
}

/// The built-in lessons.
pub fn builtin() -> Vec<Lesson> {
    BUILTIN
        .iter()
        .map(|(name, text)| {
            let mut l = parse(text, Path::new(&format!("assets/lessons/{name}.toml")))
                .expect("built-in lessons parse (tested)");
            l.origin = "builtin".into();
            l
        })
        .collect()
}

/// `$XDG_CONFIG_HOME/blkscope/lessons`, or `~/.config/blkscope/lessons`.
pub fn user_dir() -> Option<PathBuf> {
    Some(crate::xdg::dir("XDG_CONFIG_HOME", ".config")?.join("lessons"))
}

/// Every lesson: built-in, then the teacher's (one with a built-in's name replaces it).
pub fn all() -> Result<Vec<Lesson>, SuiteError> {
    let mut lessons = builtin();
    for (f, text) in crate::suite::user_files(user_dir())? {
        let l = parse(&text, &f)?;
        lessons.retain(|x| x.name != l.name);
        lessons.push(l);
    }
    Ok(lessons)
}

/// The lesson called `name`, or a line naming the ones there are.
pub fn find(name: &str) -> Result<Lesson, crate::Error> {
    let all = all().map_err(|e| crate::Error::Usage(e.to_string()))?;
    let names: Vec<String> = all.iter().map(|l| l.name.clone()).collect();
    all.into_iter().find(|l| l.name == name).ok_or_else(|| {
        crate::Error::Usage(format!(
            "no lesson '{name}'; `blkscope learn --list` lists them: {}",
            names.join(", ")
        ))
    })
}

impl fmt::Display for DeviceKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--mode fdatasync` and `--mode nocache` keep the page cache out of one pass over the
    /// region: a timed test wraps around it and measures memory (the read-modify-write
    /// lesson's 512-byte test showed 1226 MB/s that way, the verify lesson's rewrite 16 GB/s).
    #[test]
    fn no_lesson_test_of_one_pass_modes_runs_for_a_time() {
        let bad: Vec<String> = builtin()
            .iter()
            .flat_map(|l| {
                l.steps
                    .iter()
                    .flat_map(move |s| &s.tests)
                    .map(move |t| (l, t))
            })
            .filter(|(_, t)| crate::suite::timed_over_one_pass_mode(t))
            .map(|(l, t)| format!("{}/{}", l.name, t.name))
            .collect();
        assert!(bad.is_empty(), "{bad:?}");
    }

    #[test]
    fn every_lesson_test_says_the_dd_flags_of_its_mode() {
        let bad: Vec<String> = builtin()
            .iter()
            .flat_map(|l| &l.steps)
            .flat_map(|s| &s.tests)
            .filter_map(|t| crate::suite::about_names_its_mode(t).err())
            .collect();
        assert!(bad.is_empty(), "{bad:#?}");
    }

    #[test]
    fn every_builtin_lesson_parses_and_makes_valid_jobs() {
        let all = builtin();
        assert_eq!(all.len(), BUILTIN.len());
        assert!(all.len() >= 9);
        for l in &all {
            println!(
                "{}: {} steps, {} choices",
                l.name,
                l.steps.len(),
                l.choices.len()
            );
            assert!(
                l.steps.iter().any(|s| !s.claims.is_empty()),
                "{} claims something",
                l.name
            );
            for s in &l.steps {
                let lbs = if s.device == DeviceKind::Lab512 {
                    512
                } else {
                    4096
                };
                for t in &s.tests {
                    let facts = crate::engine::job::TargetFacts {
                        size: 256 << 20,
                        direct_align: lbs,
                        is_block: true,
                    };
                    let j = t.job(lbs);
                    assert!(
                        j.validate(&facts).is_ok(),
                        "{}/{}: {:?}",
                        l.name,
                        t.name,
                        j.validate(&facts).err()
                    );
                }
            }
        }
    }

    const HEAD: &str = "name = \"mine\"\ntitle = \"t\"\nabout = \"a\"\nquestion = \"q\"\n\
        [[choice]]\ntext = \"x\"\nwhen = \"one.iops > 1\"\n\
        [[choice]]\ntext = \"y\"\nwhen = \"one.iops <= 1\"\n";
    const STEP: &str = "[[step]]\nname = \"s\"\nlook = \"l\"\ndevice = \"lab-4096\"\n\
        [[step.test]]\nname = \"one\"\nop = \"read\"\nbs = \"4k\"\nsize = \"4M\"\n";

    #[test]
    fn a_lesson_with_an_error_is_refused_with_the_line() {
        let f = Path::new("mine.toml");
        let ok = parse(
            &format!(
                "{HEAD}{STEP}[[step.claim]]\ntext = \"c\"\ncheck = \"one.mbps > 0\"\nheld = \"h\"\nfailed = \"f\"\n"
            ),
            f,
        );
        assert!(ok.is_ok(), "{ok:?}");
        let claim = |check: &str| {
            format!(
                "{HEAD}{STEP}[[step.claim]]\ntext = \"c\"\ncheck = \"{check}\"\nheld = \"h\"\nfailed = \"f\"\n"
            )
        };
        // The claim's check is on line 22 of the file.
        for (check, want) in [
            ("1 > 0", "names no measured figure"),
            ("two.iops > 1", "no test 'two'"),
            ("one.speed > 1", "no figure 'speed'"),
            ("one.iops >", "ends where a figure"),
        ] {
            let e = parse(&claim(check), f).unwrap_err();
            println!("{check}: {e}");
            assert_eq!(e.line, Some(22), "{e}");
            assert!(e.reason.contains(want), "{e}");
            assert!(e.to_string().starts_with("mine.toml:22: "), "{e}");
        }
        let e = parse(&format!("{HEAD}{}", STEP.replace("lab-4096", "sdа")), f).unwrap_err();
        println!("{e}");
        assert_eq!(e.line, Some(14), "{e}");
        let e = parse(
            &format!("{HEAD}{}", STEP.replace("\"one\"", "\"one two\"")),
            f,
        )
        .unwrap_err();
        assert!(e.reason.contains("one word"), "{e}");
        let e = parse(&format!("{HEAD}{STEP}colour = \"red\"\n"), f).unwrap_err();
        assert!(e.reason.contains("colour"), "{e}");
    }
}
