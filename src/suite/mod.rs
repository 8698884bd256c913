//! Suites: named lists of tests, each with a short explanation. The articles' recipes ship in
//! `assets/profiles/*.toml` (embedded in the binary); users add their own as TOML files in
//! `$XDG_CONFIG_HOME/blkscope/suites/` (default `~/.config/blkscope/suites/`). Unknown keys and
//! bad values are refused with the file, the line and the reason.

use crate::units::{parse_duration, parse_size, parse_size_or_percent};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};

pub mod presets;

use crate::engine::job::{Data, EngineKind, Job, Mode, Op, SizeSpec, Sized};

/// The built-in suites, in the order `blkscope suites` lists them.
pub const BUILTIN: [(&str, &str); 9] = [
    (
        "dd-classic",
        include_str!("../../assets/profiles/dd-classic.toml"),
    ),
    (
        "fedora-four",
        include_str!("../../assets/profiles/fedora-four.toml"),
    ),
    (
        "cache-trap",
        include_str!("../../assets/profiles/cache-trap.toml"),
    ),
    (
        "zeros-trap",
        include_str!("../../assets/profiles/zeros-trap.toml"),
    ),
    (
        "rmw-sweep",
        include_str!("../../assets/profiles/rmw-sweep.toml"),
    ),
    (
        "diskmark",
        include_str!("../../assets/profiles/diskmark.toml"),
    ),
    (
        "hdparm-t",
        include_str!("../../assets/profiles/hdparm-t.toml"),
    ),
    (
        "qd-sweep",
        include_str!("../../assets/profiles/qd-sweep.toml"),
    ),
    (
        "bs-sweep",
        include_str!("../../assets/profiles/bs-sweep.toml"),
    ),
];

/// A block size: bytes, or the target's logical block size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum BlockSize {
    Bytes(u64),
    Logical,
}

impl<'de> Deserialize<'de> for BlockSize {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = BlockSize;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a block size such as 4096, \"4k\", \"1M\" or \"logical\"")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<BlockSize, E> {
                u64::try_from(v)
                    .ok()
                    .filter(|v| *v > 0)
                    .map(BlockSize::Bytes)
                    .ok_or_else(|| E::custom(format!("bs {v} must be a positive number of bytes")))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<BlockSize, E> {
                self.visit_i64(v as i64)
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<BlockSize, E> {
                if v == "logical" {
                    return Ok(BlockSize::Logical);
                }
                parse_size(v).map(BlockSize::Bytes).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// A size in bytes or text (`"1G"`, `"10%"`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SizeField(pub Sized);

impl<'de> Deserialize<'de> for SizeField {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = SizeField;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a size such as 1073741824, \"1G\" or \"10%\"")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<SizeField, E> {
                u64::try_from(v)
                    .map(|b| SizeField(Sized::Bytes(b)))
                    .map_err(|_| E::custom(format!("size {v} is negative")))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<SizeField, E> {
                Ok(SizeField(Sized::Bytes(v)))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<SizeField, E> {
                parse_size_or_percent(v).map(SizeField).map_err(E::custom)
            }
        }
        d.deserialize_any(V)
    }
}

/// A duration as text (`"5s"`, `"500ms"`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct DurationField(pub Duration);

impl<'de> Deserialize<'de> for DurationField {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        parse_duration(&s)
            .map(DurationField)
            .map_err(de::Error::custom)
    }
}

/// One test of a suite, as written in the TOML file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SuiteTest {
    pub name: String,
    #[serde(default)]
    pub about: Option<String>,
    pub op: Op,
    pub bs: BlockSize,
    #[serde(default)]
    pub size: Option<SizeField>,
    /// I/Os per job, instead of a size (size = count x bs x jobs).
    #[serde(default)]
    pub count: Option<u64>,
    #[serde(default)]
    pub runtime: Option<DurationField>,
    #[serde(default)]
    pub ramp: Option<DurationField>,
    #[serde(default)]
    pub iodepth: Option<u32>,
    #[serde(default)]
    pub jobs: Option<u32>,
    #[serde(default)]
    pub offset: Option<SizeField>,
    #[serde(default)]
    pub mode: Option<Mode>,
    #[serde(default)]
    pub data: Option<Data>,
    #[serde(default)]
    pub engine: Option<EngineKind>,
    #[serde(default)]
    pub rwmixread: Option<u8>,
    /// Drop the target's cached pages before each run.
    #[serde(default)]
    pub cold: Option<bool>,
    /// Read back what the test wrote (`run --verify`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<bool>,
    /// The CPUs to run on (`cpus = "0"`), as `run --cpus`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<crate::engine::cpus::CpuList>,
}

impl SuiteTest {
    /// The job for a target whose logical block size is `lbs`.
    pub fn job(&self, lbs: u64) -> Job {
        let bs = match self.bs {
            BlockSize::Bytes(b) => b,
            BlockSize::Logical => lbs.max(512),
        };
        let jobs = self.jobs.unwrap_or(1);
        let size = match (self.count, self.size) {
            (Some(n), _) => Some(SizeSpec::Bytes(n * bs * jobs as u64)),
            (None, Some(s)) => Some(SizeSpec::Text(s.0)),
            (None, None) => None,
        };
        let offset = match self.offset.map(|o| o.0) {
            Some(Sized::Bytes(b)) => b,
            _ => 0,
        };
        let d = Job::default();
        Job {
            op: self.op,
            bs,
            iodepth: self.iodepth.unwrap_or(1),
            jobs,
            offset,
            size,
            runtime: self.runtime.map(|r| r.0),
            ramp: self.ramp.map(|r| r.0),
            mode: self.mode.unwrap_or(Mode::Direct),
            data: self.data.unwrap_or(Data::Random),
            engine: self.engine.unwrap_or(EngineKind::Auto),
            rwmixread: self.rwmixread.unwrap_or(d.rwmixread),
            sqpoll: false,
            interval: None,
            drop_cache_first: self.cold.unwrap_or(false),
            verify: self.verify.unwrap_or(false),
            hipri: false,
            max_errors: None,
            cpus: self.cpus.clone(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Suite {
    pub name: String,
    /// What the suite is called in lists; its name where a file gives none.
    #[serde(default)]
    pub title: String,
    /// The article it comes from.
    #[serde(default)]
    pub source: Option<String>,
    /// What the suite is for; may be left out of a user's file.
    #[serde(default)]
    pub about: String,
    /// What the article found.
    #[serde(default)]
    pub found: Option<String>,
    #[serde(default = "three")]
    pub repeat: u32,
    /// A sweep: the tests vary this (`iodepth` or `bs`), and the result names the knee.
    #[serde(default)]
    pub sweep: Option<String>,
    /// `fill`: before the first test, write random data once over what the read tests read
    /// (1M direct writes, not a result), as CrystalDiskMark and KDiskMark write their test file
    /// first: a read of never-written blocks measures nothing. Only in a suite with a write
    /// test, whose confirmation covers it, and with the read tests' sizes in bytes.
    #[serde(default)]
    pub prepare: Option<Prepare>,
    /// Two tests whose throughput tells whether the article's trap is there on this target.
    #[serde(default)]
    pub contrast: Option<Contrast>,
    #[serde(rename = "test")]
    pub tests: Vec<SuiteTest>,
    /// `builtin`, or the file it was read from.
    #[serde(skip_deserializing, default)]
    pub origin: String,
}

fn three() -> u32 {
    3
}

/// What a run of the suite found on its target: the median throughput of test `fast` over
/// that of test `slow`. At `ratio` or more the trap is there (`gap`); within it both match
/// (`same`). `{ratio}` in either text is the ratio measured, `{target}` the target's device
/// (or path).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Contrast {
    pub fast: String,
    pub slow: String,
    #[serde(default = "contrast_ratio")]
    pub ratio: f64,
    pub gap: String,
    pub same: String,
}

fn contrast_ratio() -> f64 {
    1.3
}

impl Contrast {
    /// What a run will tell, for an explanation before it: "whether "zeros" ran 1.3x as fast as
    /// "random data" or more (median throughput), that is whether the trap is there on your
    /// target".
    pub fn promise(&self) -> String {
        format!(
            "whether \"{}\" ran {}x as fast as \"{}\" or more (median throughput), that is whether \
             the trap is there on your target",
            self.fast, self.ratio, self.slow
        )
    }

    /// The sentence for a run whose tests' median bytes a second are `medians` (by test name);
    /// None when either test did not run or moved nothing.
    pub fn found(&self, medians: &[(&str, f64)], target: &str) -> Option<String> {
        let of = |n: &str| {
            medians
                .iter()
                .find(|(m, _)| *m == n)
                .map(|x| x.1)
                .filter(|v| *v > 0.0)
        };
        let (fast, slow) = (of(&self.fast)?, of(&self.slow)?);
        let r = fast / slow;
        let text = if r >= self.ratio {
            self.gap.clone()
        } else if r > 1.0 / self.ratio {
            self.same.clone()
        } else {
            format!(
                "{} ran {:.1}x as fast as {}: the other way round from the trap; run again and \
                 look at the spread",
                self.slow,
                1.0 / r,
                self.fast
            )
        };
        Some(
            text.replace("{ratio}", &format!("{r:.1}"))
                .replace("{target}", target),
        )
    }
}

/// What a suite does before its first test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Prepare {
    Fill,
}

/// The name the prepare step runs under (what the command line and the TUI show).
pub const FILL_NAME: &str = "prepare: fill";

impl Suite {
    /// What this run found, by the suite's [`Contrast`], from each test's median throughput
    /// (bytes a second) by name.
    pub fn found_here<'a>(
        &self,
        medians: impl IntoIterator<Item = (&'a str, f64)>,
        target: &str,
    ) -> Option<String> {
        let medians: Vec<(&str, f64)> = medians.into_iter().collect();
        self.contrast.as_ref()?.found(&medians, target)
    }

    /// The write that fills what the read tests read (from offset 0 to the farthest end), when
    /// the suite prepares with `fill` and has read tests.
    pub fn fill_job(&self, lbs: u64) -> Option<Job> {
        self.prepare?;
        let end = self
            .tests
            .iter()
            .map(|t| t.job(lbs))
            .filter(|j| j.op.reads())
            .map(|j| j.offset + j.planned_bytes())
            .max()?;
        // The largest power of two up to 1 MiB that divides it (at least the logical block).
        let bs = (1u64 << 20).min(1 << end.trailing_zeros().min(63)).max(lbs);
        Some(Job {
            op: Op::Write,
            bs,
            size: Some(SizeSpec::Bytes(end)),
            mode: Mode::Direct,
            data: Data::Random,
            // One at a time, as dd writes (its explanation then has a dd line): a 1M
            // sequential write at QD1 keeps a disk streaming.
            iodepth: 1,
            ..Job::default()
        })
    }
}

/// A suite file that could not be read: the file, the line and the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuiteError {
    pub file: PathBuf,
    pub line: Option<usize>,
    pub reason: String,
}

impl fmt::Display for SuiteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(l) => write!(f, "{}:{l}: {}", self.file.display(), self.reason),
            None => write!(f, "{}: {}", self.file.display(), self.reason),
        }
    }
}

/// Parses one suite from TOML text.
pub fn parse(text: &str, file: &Path) -> Result<Suite, SuiteError> {
    let mut s: Suite = toml::from_str(text).map_err(|e| SuiteError {
        file: file.to_path_buf(),
        line: e.span().map(|sp| line_of(text, sp.start)),
        reason: e.message().trim().to_string(),
    })?;
    let fail = |reason: String| SuiteError {
        file: file.to_path_buf(),
        line: None,
        reason,
    };
    if s.tests.is_empty() {
        return Err(fail("a suite needs at least one [[test]]".into()));
    }
    if !(1..=100).contains(&s.repeat) {
        return Err(fail(format!(
            "repeat {} is out of range: use 1 to 100",
            s.repeat
        )));
    }
    if let Some(p) = &s.sweep
        && crate::analysis::sweep::Param::parse(p).is_none()
    {
        return Err(fail(format!("sweep = \"{p}\": use \"iodepth\" or \"bs\"")));
    }
    if s.name.is_empty() || s.name.contains(char::is_whitespace) {
        return Err(fail(format!("name '{}' must be one word", s.name)));
    }
    if s.prepare.is_some() {
        if !s.tests.iter().any(|t| t.op.writes()) {
            return Err(fail(
                "prepare = \"fill\" writes to the target: only a suite with a write test may \
                 (its confirmation covers it)"
                    .into(),
            ));
        }
        if let Some(t) = s.tests.iter().find(|t| {
            t.op.reads() && t.count.is_none() && !matches!(t.size, Some(SizeField(Sized::Bytes(_))))
        }) {
            return Err(fail(format!(
                "prepare = \"fill\" needs each read test's size in bytes: test '{}' has none \
                 (give size = \"1G\" or a count)",
                t.name
            )));
        }
    }
    if let Some(c) = &s.contrast {
        for n in [&c.fast, &c.slow] {
            if !s.tests.iter().any(|t| &t.name == n) {
                return Err(fail(format!(
                    "contrast names test '{n}', which the suite lacks"
                )));
            }
        }
        if !(c.ratio > 1.0 && c.ratio.is_finite()) {
            return Err(fail(format!(
                "contrast ratio {} must be above 1 (1.3: 30% apart)",
                c.ratio
            )));
        }
    }
    for t in &s.tests {
        if t.count.is_some() && t.size.is_some() {
            return Err(fail(format!(
                "test '{}': give count or size, not both",
                t.name
            )));
        }
    }
    if s.title.is_empty() {
        s.title.clone_from(&s.name);
    }
    s.origin = file.display().to_string();
    Ok(s)
}

/// The built-in suites.
pub fn builtin() -> Vec<Suite> {
    BUILTIN
        .iter()
        .map(|(name, text)| {
            let mut s = parse(text, Path::new(&format!("assets/profiles/{name}.toml")))
                .expect("built-in suites parse (tested)");
            s.origin = "builtin".into();
            s
        })
        .collect()
}

/// `$XDG_CONFIG_HOME/blkscope/suites`, or `~/.config/blkscope/suites`.
pub fn user_dir() -> Option<PathBuf> {
    Some(crate::xdg::dir("XDG_CONFIG_HOME", ".config")?.join("suites"))
}

/// Every suite: built-in, then the user's (a user suite with a built-in's name replaces it).
pub fn all() -> Result<Vec<Suite>, SuiteError> {
    let mut suites = builtin();
    for (f, text) in user_files(user_dir())? {
        let s = parse(&text, &f)?;
        suites.retain(|x| x.name != s.name);
        suites.push(s);
    }
    Ok(suites)
}

/// The line (from 1) of byte `at` in `text`: where a TOML error or a value sits.
pub fn line_of(text: &str, at: usize) -> usize {
    text[..at.min(text.len())].matches('\n').count() + 1
}

/// The `.toml` files of a user's directory (suites, lessons), sorted, each with its text; none
/// when there is no such directory. A file that cannot be read is an error naming it.
pub fn user_files(dir: Option<PathBuf>) -> Result<Vec<(PathBuf, String)>, SuiteError> {
    let Some(Ok(rd)) = dir.map(std::fs::read_dir) else {
        return Ok(Vec::new());
    };
    let mut files: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|f| match std::fs::read_to_string(&f) {
            Ok(text) => Ok((f, text)),
            Err(e) => Err(SuiteError {
                file: f,
                line: None,
                reason: e.to_string(),
            }),
        })
        .collect()
}

pub fn find(name: &str) -> Result<Option<Suite>, SuiteError> {
    Ok(all()?.into_iter().find(|s| s.name == name))
}

/// The logical block size a suite's `bs = "logical"` means on this target: `device` is its
/// properties where it is a block device.
pub fn target_lbs(path: &str, device: Option<&crate::device::Device>) -> u64 {
    let p = Path::new(path);
    if p.is_dir() || p.is_file() {
        return 4096;
    }
    device.map(|d| d.logical_block_size).unwrap_or(512)
}

/// One test to explain.
#[derive(Debug, Clone)]
pub struct ExplainedTest {
    pub name: String,
    pub about: Option<String>,
    pub job: Job,
}

/// What `explain NAME` names: a whole suite (with its head), one test of a suite, or a
/// built-in test.
#[derive(Debug, Clone)]
pub struct Explanation {
    /// The suite, when the whole suite is explained.
    pub suite: Option<Suite>,
    /// Whether the tests come from a suite (each is followed by a blank line).
    pub in_suite: bool,
    pub tests: Vec<ExplainedTest>,
}

/// Looks up NAME for `explain`: a suite, SUITE/TEST, or a built-in test, with the jobs for a
/// target whose logical block size is `lbs`.
pub fn explain(name: &str, lbs: u64) -> Result<Explanation, crate::Error> {
    let suites = all().map_err(|e| crate::Error::Usage(e.to_string()))?;
    let (suite_name, test_name) = match name.split_once('/') {
        Some((s, t)) => (s, Some(t)),
        None => (name, None),
    };
    if let Some(s) = suites.iter().find(|s| s.name == suite_name) {
        let tests: Vec<ExplainedTest> = s
            .tests
            .iter()
            .filter(|t| test_name.is_none_or(|n| n == t.name))
            .map(|t| ExplainedTest {
                name: t.name.clone(),
                about: t.about.clone(),
                job: t.job(lbs),
            })
            .collect();
        if tests.is_empty() {
            return Err(crate::Error::Usage(format!(
                "suite {} has no test '{}'; `blkscope explain {}` lists them",
                s.name,
                test_name.unwrap_or(""),
                s.name
            )));
        }
        return Ok(Explanation {
            suite: test_name.is_none().then(|| s.clone()),
            in_suite: true,
            tests,
        });
    }
    let presets = crate::suite::presets::builtin(lbs);
    if let Some(p) = presets.iter().find(|p| p.id == name) {
        return Ok(Explanation {
            suite: None,
            in_suite: false,
            tests: vec![ExplainedTest {
                name: p.name.to_string(),
                about: Some(p.about.to_string()),
                job: p.job.clone(),
            }],
        });
    }
    Err(crate::Error::Usage(format!(
        "no suite, test or kind of warning '{name}'; `blkscope suites` lists suites; tests: {}; \
         a kind as a run prints it ([read_modify_write])",
        presets.iter().map(|p| p.id).collect::<Vec<_>>().join(", ")
    )))
}

/// Whether a test runs for a time in a mode that keeps the page cache out of one pass over its
/// region only (`--mode fdatasync`, `--mode nocache`): it then wraps around and measures memory.
#[cfg(test)]
pub(crate) fn timed_over_one_pass_mode(t: &SuiteTest) -> bool {
    t.runtime.is_some() && matches!(t.mode, Some(Mode::Fdatasync | Mode::Nocache))
}

/// Whether a test's `about`, where it names dd's flags (`oflag=direct,dsync`, `iflag=direct`,
/// `conv=fdatasync`), names those of the mode the test runs in: the dsync lesson's said
/// `oflag=direct,dsync` of a test that opened its device with O_DSYNC alone.
#[cfg(test)]
pub(crate) fn about_names_its_mode(t: &SuiteTest) -> Result<(), String> {
    let Some(about) = &t.about else { return Ok(()) };
    if !about.contains("flag=") && !about.contains("conv=") {
        return Ok(());
    }
    let said: std::collections::BTreeSet<&str> = about
        .split(|c: char| c.is_whitespace() || c == '(' || c == ')' || c == ':')
        .filter_map(|w| {
            ["oflag=", "iflag=", "conv="]
                .iter()
                .find_map(|p| w.strip_prefix(p))
        })
        .flat_map(|v| v.trim_end_matches([',', '.']).split(','))
        .filter(|f| ["direct", "dsync", "sync", "fdatasync"].contains(f))
        .collect();
    let mode = t.mode.unwrap_or(Mode::Direct);
    let want: std::collections::BTreeSet<&str> = match mode {
        Mode::Buffered | Mode::Nocache => Default::default(),
        m => [m.as_str()].into(),
    };
    match said == want {
        true => Ok(()),
        false => Err(format!(
            "{}: about {about:?} names {said:?}, the test runs {}",
            t.name,
            mode.as_str()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// As the lessons' (`learn::tests`): a timed fdatasync or nocache test measures memory.
    #[test]
    fn no_builtin_test_of_one_pass_modes_runs_for_a_time() {
        let bad: Vec<String> = builtin()
            .iter()
            .flat_map(|s| s.tests.iter().map(move |t| (s, t)))
            .filter(|(_, t)| timed_over_one_pass_mode(t))
            .map(|(s, t)| format!("{}/{}", s.name, t.name))
            .collect();
        assert!(bad.is_empty(), "{bad:?}");
    }

    #[test]
    fn every_builtin_test_says_the_dd_flags_of_its_mode() {
        let bad: Vec<String> = builtin()
            .iter()
            .flat_map(|s| &s.tests)
            .filter_map(|t| about_names_its_mode(t).err())
            .collect();
        assert!(bad.is_empty(), "{bad:#?}");
        let mut t = builtin()[0].tests[0].clone();
        t.about = Some("dd bs=4k count=2000 oflag=direct,dsync, for 2 s".into());
        t.mode = Some(Mode::Dsync);
        let e = about_names_its_mode(&t).unwrap_err();
        println!("{e}");
        assert!(e.contains("\"direct\", \"dsync\""), "{e}");
        t.about = Some("dd bs=4k count=2000 oflag=dsync, for 2 s".into());
        assert_eq!(about_names_its_mode(&t), Ok(()));
    }

    #[test]
    fn every_builtin_parses_and_makes_valid_jobs() {
        let suites = builtin();
        assert_eq!(suites.len(), 9);
        for s in &suites {
            assert!(!s.tests.is_empty(), "{}", s.name);
            assert!(s.found.is_some(), "{} says what its article found", s.name);
            for t in &s.tests {
                for lbs in [512, 4096] {
                    let j = t.job(lbs);
                    let facts = crate::engine::job::TargetFacts {
                        size: 8 << 30,
                        direct_align: lbs,
                        is_block: true,
                    };
                    assert!(j.validate(&facts).is_ok(), "{}/{} on {lbs}", s.name, t.name);
                }
            }
        }
    }

    #[test]
    fn dd_classic_latency_is_1000_logical_blocks() {
        let s = builtin()
            .into_iter()
            .find(|s| s.name == "dd-classic")
            .unwrap();
        let t = &s.tests[2];
        let j = t.job(4096);
        assert_eq!(j.bs, 4096);
        assert_eq!(j.size, Some(SizeSpec::Bytes(4096 * 1000)));
        assert_eq!(j.mode, Mode::Dsync);
        assert_eq!(t.job(512).bs, 512);
    }

    #[test]
    fn errors_name_the_line_and_the_reason() {
        let f = Path::new("mine.toml");
        let e = parse(
            "name = \"x\"\ntitle = \"t\"\nabout = \"a\"\n\n[[test]]\nname = \"w\"\nop = \"write\"\nbs = \"4q\"\n",
            f,
        )
        .unwrap_err();
        assert_eq!(e.line, Some(8), "{e}");
        assert!(e.reason.contains("unknown unit"), "{e}");
        assert!(e.to_string().starts_with("mine.toml:8: "), "{e}");
        let e = parse(
            "name = \"x\"\ntitle = \"t\"\nabout = \"a\"\ncolour = \"red\"\n[[test]]\nname = \"w\"\nop = \"write\"\nbs = 4096\n",
            f,
        )
        .unwrap_err();
        assert_eq!(e.line, Some(4), "{e}");
        assert!(e.reason.contains("colour"), "{e}");
        let e = parse(
            "name = \"x\"\ntitle = \"t\"\nabout = \"a\"\n[[test]]\nname = \"w\"\nop = \"scribble\"\nbs = 4096\n",
            f,
        )
        .unwrap_err();
        assert_eq!(e.line, Some(6), "{e}");
        let e = parse("name = \"x\"\ntitle = \"t\"\nabout = \"a\"\ntest = []\n", f).unwrap_err();
        assert!(e.reason.contains("at least one"), "{e}");
    }

    #[test]
    fn a_users_suite_needs_a_name_and_its_tests_only() {
        let s = parse(
            "name = \"mine\"\n[[test]]\nname = \"r\"\nop = \"read\"\nbs = \"1M\"\nsize = \"64M\"\n",
            Path::new("mine.toml"),
        )
        .unwrap();
        println!("{s:?}");
        assert_eq!((s.title.as_str(), s.about.as_str()), ("mine", ""));
    }

    #[test]
    fn a_suite_that_prepares_fills_what_its_reads_read_and_only_if_it_writes() {
        let s = |name: &str| builtin().into_iter().find(|s| s.name == name).unwrap();
        let fill = s("diskmark").fill_job(512).expect("diskmark fills");
        println!("{fill:?}");
        assert_eq!(
            (
                fill.op,
                fill.bs,
                fill.size,
                fill.offset,
                fill.data,
                fill.mode
            ),
            (
                Op::Write,
                1 << 20,
                Some(SizeSpec::Bytes(1 << 30)),
                0,
                Data::Random,
                Mode::Direct
            )
        );
        // Its two readers read 400M from offset 0.
        let fill = s("fedora-four").fill_job(512).unwrap();
        assert_eq!(fill.size, Some(SizeSpec::Bytes(400 << 20)));
        assert_eq!(s("hdparm-t").fill_job(512), None, "no prepare");
        let f = Path::new("mine.toml");
        let head = "name = \"x\"\ntitle = \"t\"\nabout = \"a\"\nprepare = \"fill\"\n";
        let read = "[[test]]\nname = \"r\"\nop = \"read\"\nbs = \"1M\"\nsize = \"8M\"\n";
        let write = "[[test]]\nname = \"w\"\nop = \"write\"\nbs = \"1M\"\nsize = \"8M\"\n";
        let e = parse(&format!("{head}{read}"), f).unwrap_err();
        assert!(e.reason.contains("only a suite with a write test"), "{e}");
        let ok = parse(&format!("{head}{read}{write}"), f).unwrap();
        assert_eq!(
            ok.fill_job(512).unwrap().size,
            Some(SizeSpec::Bytes(8 << 20))
        );
        let timed = "[[test]]\nname = \"t\"\nop = \"randread\"\nbs = \"4k\"\nruntime = \"1s\"\n";
        let e = parse(&format!("{head}{timed}{write}"), f).unwrap_err();
        assert!(e.reason.contains("test 't' has none"), "{e}");
        let wipe = head.replace("fill", "wipe");
        let e = parse(&format!("{wipe}{read}{write}"), f).unwrap_err();
        assert!(e.reason.contains("wipe") && e.line == Some(4), "{e}");
    }

    #[test]
    fn a_contrast_says_gap_same_or_the_other_way_round() {
        let c = Contrast {
            fast: "zeros".into(),
            slow: "random".into(),
            ratio: 1.3,
            gap: "gap {ratio}x on {target}".into(),
            same: "same {ratio}x".into(),
        };
        let found = |z: f64, r: f64| c.found(&[("zeros", z), ("random", r)], "/dev/sdx");
        assert_eq!(found(700.0, 100.0).as_deref(), Some("gap 7.0x on /dev/sdx"));
        assert_eq!(found(130.0, 100.0).as_deref(), Some("gap 1.3x on /dev/sdx"));
        assert_eq!(found(110.0, 100.0).as_deref(), Some("same 1.1x"));
        assert_eq!(found(80.0, 100.0).as_deref(), Some("same 0.8x"));
        let inverse = found(50.0, 100.0).unwrap();
        assert!(
            inverse.starts_with("random ran 2.0x as fast as zeros: the other way round"),
            "{inverse}"
        );
        // A test that did not run or moved nothing: nothing to say.
        assert_eq!(found(700.0, 0.0), None);
        assert_eq!(c.found(&[("zeros", 700.0)], "x"), None);
        // Every built-in contrast names tests its suite has (parse checks it) and reads well.
        for s in builtin().iter().filter(|s| s.contrast.is_some()) {
            let c = s.contrast.as_ref().unwrap();
            let gap = s.found_here([(c.fast.as_str(), 4e9), (c.slow.as_str(), 1e9)], "/dev/x");
            let gap = gap.unwrap();
            assert!(
                gap.contains("4.0x") && gap.contains("/dev/x"),
                "{}: {gap}",
                s.name
            );
            let same = s.found_here([(c.fast.as_str(), 1e9), (c.slow.as_str(), 1e9)], "/dev/x");
            assert!(same.unwrap().contains("1.0x"), "{}", s.name);
        }
    }

    #[test]
    fn a_contrast_must_name_the_suites_tests_and_a_ratio_above_one() {
        let f = Path::new("mine.toml");
        let head = "name = \"mine\"\ntitle = \"t\"\nabout = \"a\"\n";
        let tests = "[[test]]\nname = \"a\"\nop = \"write\"\nbs = \"1M\"\n\n\
                     [[test]]\nname = \"b\"\nop = \"write\"\nbs = \"1M\"\n";
        let contrast = |fast: &str, ratio: &str| {
            format!(
                "[contrast]\nfast = \"{fast}\"\nslow = \"b\"\n{ratio}gap = \"g\"\nsame = \"s\"\n"
            )
        };
        let ok = parse(&format!("{head}{}{tests}", contrast("a", "")), f).unwrap();
        assert_eq!(ok.contrast.as_ref().map(|c| c.ratio), Some(1.3));
        let e = parse(&format!("{head}{}{tests}", contrast("c", "")), f).unwrap_err();
        assert!(e.reason.contains("contrast names test 'c'"), "{e}");
        let e = parse(
            &format!("{head}{}{tests}", contrast("a", "ratio = 0.5\n")),
            f,
        )
        .unwrap_err();
        assert!(e.reason.contains("must be above 1"), "{e}");
    }
}
