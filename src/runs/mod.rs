//! Saved runs: every `run` and `suite` is kept as JSON (schema `blkscope-run/2`; `/1` files still load) in
//! `$XDG_DATA_HOME/blkscope/runs/` (default `~/.local/share/blkscope/runs/`), with the device's
//! properties, the jobs, the results, their diskstats summaries and findings: the types they
//! are read into, and their storage. [`compare`] sets two side by side, test by test, and
//! [`fleet`] one test across hosts; reports (`crate::report`) render them.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

pub mod compare;
pub mod fleet;

pub use compare::{Diff, compare, pair_name, pairs};
pub use fleet::{FleetRow, fleet};

use crate::analysis::Warning;
use crate::device::Device;
use crate::engine::result::Latency;
use crate::engine::{Job, TargetInfo};
use crate::result::RunResult;
use crate::result::Spread;

/// The schema saved runs are written in. `/2` adds each test's time series (`samples`) and
/// whole-run latency histogram (`histogram`); `/1` files still load.
pub const SCHEMA: &str = "blkscope-run/2";
const READABLE: [&str; 2] = ["blkscope-run/1", "blkscope-run/2"];

/// The current time as `YYYY-MM-DDTHH:MM:SSZ` (UTC).
pub fn rfc3339_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let (days, rem) = (secs.div_euclid(86400), secs.rem_euclid(86400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// `$XDG_DATA_HOME/blkscope/runs`, or `~/.local/share/blkscope/runs`.
pub fn runs_dir() -> Option<PathBuf> {
    Some(crate::xdg::dir("XDG_DATA_HOME", ".local/share")?.join("runs"))
}

/// One test of a run, as it is saved.
#[derive(Debug, Clone, Serialize)]
pub struct SavedTest {
    pub name: String,
    pub job: Job,
    pub result: RunResult,
}

/// A saved run as reports and comparisons read it. Every field named here must be in the file:
/// a missing or renamed one is an error naming the file and the field, never a silent 0.
/// (Fields the readers do not use, such as the diskstats of each run, are kept in the file and
/// shown by `report --format json`, but not typed here.)
#[derive(Debug, Clone, Deserialize)]
pub struct SavedRun {
    pub schema: String,
    pub id: String,
    pub created: String,
    pub kind: String,
    pub name: String,
    pub target: Option<SavedTarget>,
    pub device: Option<SavedDevice>,
    pub tests: Vec<SavedRecord>,
    /// The whole document, for `report --format json`.
    #[serde(skip)]
    pub raw: Value,
}

#[derive(Debug, Clone, Deserialize)]
pub struct SavedTarget {
    pub path: String,
    pub device: Option<String>,
    pub size_bytes: u64,
    /// `block` or `file`.
    #[serde(default)]
    pub kind: String,
    /// The scratch file a directory target used (removed after the run).
    #[serde(default)]
    pub test_file: Option<String>,
    #[serde(default)]
    pub logical_block_size: Option<u64>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct SavedDevice {
    pub model: Option<String>,
    pub logical_block_size: u64,
    pub physical_block_size: u64,
    pub rotational: bool,
    pub write_cache: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct SavedRecord {
    pub name: String,
    pub job: Job,
    pub result: SavedResult,
}

/// The figures of a saved result.
#[derive(Debug, Clone, Deserialize)]
pub struct SavedResult {
    /// The engine that ran (`uring`, `psync`, `null`).
    #[serde(default)]
    pub engine: Option<String>,
    /// Why blkscope chose that engine (`--engine auto`).
    #[serde(default)]
    pub engine_why: Option<String>,
    /// Bytes the run moved (for its dd line: a timed test's covers what it moved).
    #[serde(default)]
    pub bytes: Option<u64>,
    pub bytes_per_sec: f64,
    pub iops: f64,
    pub latency_ns: Latency,
    #[serde(default)]
    pub spread: Option<Spread>,
    pub warnings: Vec<Warning>,
    /// What a write put where, for `blkscope verify --stamp`.
    #[serde(default)]
    pub stamp: Option<crate::engine::pattern::Stamp>,
    /// The time series (schema /2; empty in /1 files).
    #[serde(default)]
    pub samples: Vec<crate::engine::Sample>,
    /// The whole run's latency histogram (schema /2).
    #[serde(default)]
    pub histogram: Option<String>,
    /// The block layer's trace of the run: its Q2D and D2C, where they were measured.
    #[serde(default)]
    pub trace: Option<SavedTrace>,
}

/// What a saved result keeps of its trace: where the time of its I/Os went.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct SavedTrace {
    #[serde(default)]
    pub mode: String,
    #[serde(default)]
    pub q2d_ns: Option<Latency>,
    #[serde(default)]
    pub d2c_ns: Option<Latency>,
    /// Where a middle I/O's time went, submission to completion.
    #[serde(default)]
    pub steps: Option<crate::analysis::steps::Steps>,
}

impl SavedResult {
    /// The throughput it stands for: the median over its repeats, or its one run's.
    pub fn median_rate(&self) -> f64 {
        crate::result::median_rate(self.bytes_per_sec, self.spread.as_ref())
    }
}

/// Writes a run and returns its path.
pub fn save(
    kind: &str,
    name: &str,
    target: Option<&TargetInfo>,
    device: Option<&Device>,
    tests: &[SavedTest],
) -> std::io::Result<PathBuf> {
    let dir = runs_dir().ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "neither XDG_DATA_HOME nor HOME is set",
        )
    })?;
    std::fs::create_dir_all(&dir)?;
    let created = rfc3339_now();
    let stamp: String = created
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let id = format!("{stamp}-{safe}-{}", std::process::id());
    let doc = json!({
        "schema": SCHEMA,
        "id": id,
        "created": created,
        "kind": kind,
        "name": name,
        "blkscope": env!("CARGO_PKG_VERSION"),
        "target": target,
        "device": device,
        "tests": tests,
    });
    let path = dir.join(format!("{id}.json"));
    let tmp = dir.join(format!(".{id}.json.tmp"));
    std::fs::write(&tmp, serde_json::to_vec_pretty(&doc)?)?;
    std::fs::rename(&tmp, &path)?;
    Ok(path)
}

/// Finds a saved run: a path, an id (file name without .json), a unique prefix of one, or
/// `last`.
pub fn resolve(run: &str) -> Result<PathBuf, String> {
    let p = Path::new(run);
    if p.is_file() {
        return Ok(p.to_path_buf());
    }
    // An id has no '/': this was meant as a path, and looking it up among the ids would only
    // say it is not one.
    if run.contains('/') {
        return Err(if p.exists() {
            format!("{run} is not a file: give a saved run's .json file, an id, `last` or `last~N`")
        } else {
            format!("no such file {run}: give a saved run's .json file, an id, `last` or `last~N`")
        });
    }
    let dir = runs_dir().ok_or("neither XDG_DATA_HOME nor HOME is set")?;
    if std::fs::read_dir(&dir).is_err() {
        return Err(format!(
            "no saved runs in {}: run a test first",
            dir.display()
        ));
    }
    let mut all = in_order(&dir);
    if run == "last" {
        return all
            .pop()
            .ok_or_else(|| format!("no saved runs in {}", dir.display()));
    }
    // `last~N`: the Nth run before the newest, as git's HEAD~N (`last~1 last`: the newest two).
    if let Some(n) = run.strip_prefix("last~") {
        let n: usize = n
            .parse()
            .map_err(|_| format!("'{run}': after `last~` give a number, as in last~1"))?;
        return match all.len().checked_sub(n + 1) {
            Some(i) => Ok(all.swap_remove(i)),
            None => Err(format!(
                "'{run}' is {n} before the newest, but {} holds {} saved run{}; `blkscope runs` \
                 lists them",
                dir.display(),
                all.len(),
                if all.len() == 1 { "" } else { "s" }
            )),
        };
    }
    let matches: Vec<&PathBuf> = all
        .iter()
        .filter(|p| {
            p.file_stem()
                .is_some_and(|s| s.to_string_lossy().starts_with(run))
        })
        .collect();
    match matches.as_slice() {
        [one] => Ok((*one).clone()),
        [] => Err(format!(
            "no saved run '{run}' in {}; `blkscope runs` lists them, `last` is the newest and \
             `last~1` the one before",
            dir.display()
        )),
        _ => Err(format!(
            "'{run}' matches {} saved runs; give more of its id",
            matches.len()
        )),
    }
}

/// The saved runs' files in `dir`, oldest first. An id starts with the second it was saved
/// in (`20261124T110856Z-...`); runs saved in the same second are ordered by the file's
/// modification time (their ids' ends, the test's name, would order them by name).
fn in_order(dir: &Path) -> Vec<PathBuf> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<(String, Option<std::time::SystemTime>, PathBuf)> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .map(|p| {
            let stem = p
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let second = stem.split('-').next().unwrap_or_default().to_string();
            let mtime = std::fs::metadata(&p).and_then(|m| m.modified()).ok();
            (second, mtime, p)
        })
        .collect();
    paths.sort();
    paths.into_iter().map(|(_, _, p)| p).collect()
}

/// The files of the newest `n` saved runs in `dir`, oldest first.
pub fn newest_paths(dir: &Path, n: usize) -> Vec<PathBuf> {
    let mut paths = in_order(dir);
    let skip = paths.len().saturating_sub(n);
    paths.split_off(skip)
}

/// The newest `n` saved runs that load, oldest first.
pub fn newest(n: usize) -> Vec<SavedRun> {
    let Some(dir) = runs_dir() else {
        return Vec::new();
    };
    newest_paths(&dir, n)
        .iter()
        .filter_map(|p| load(p).ok())
        .collect()
}

/// Reads a saved run and checks its schema. Errors name the file, and the field when one is
/// missing or of the wrong type.
pub fn load(path: &Path) -> Result<SavedRun, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    parse(&text, &path.display().to_string())
}

/// Reads a saved run from its text (`from` names where it came from, in errors).
pub fn parse(text: &str, from: &str) -> Result<SavedRun, String> {
    let raw: Value =
        serde_json::from_str(text).map_err(|e| format!("{from}: not a blkscope run: {e}"))?;
    if !READABLE.iter().any(|s| raw["schema"] == *s) {
        return Err(format!(
            "{from}: schema {} is not one blkscope reads ({})",
            raw["schema"],
            READABLE.join(", ")
        ));
    }
    let mut run: SavedRun = serde_json::from_value(raw.clone())
        .map_err(|e| format!("{from}: not a blkscope run: {e}"))?;
    run.raw = raw;
    Ok(run)
}

/// Figures of one test, as reports and comparisons use them.
#[derive(Debug, Clone, PartialEq)]
pub struct Figures {
    pub name: String,
    pub mb_s: f64,
    pub iops: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub spread: Option<f64>,
    pub warnings: Vec<String>,
}

impl Figures {
    /// The figures of a saved result: with repeats, the medians.
    pub fn of_saved(name: &str, r: &SavedResult) -> Self {
        let spread = r.spread.as_ref();
        Figures {
            name: name.to_string(),
            mb_s: r.median_rate() / 1e6,
            iops: crate::result::median_iops(r.iops, spread),
            p50_us: r.latency_ns.p50 as f64 / 1e3,
            p99_us: r.latency_ns.p99 as f64 / 1e3,
            spread: spread.map(|s| s.relative_spread),
            warnings: r
                .warnings
                .iter()
                .map(|w| w.kind.name().to_string())
                .collect(),
        }
    }

    /// The figures of a result that just ran, as they will read once saved.
    pub fn of_result(name: &str, r: &RunResult) -> Self {
        Self::of_saved(name, &SavedResult::from(r))
    }
}

impl From<&RunResult> for SavedResult {
    fn from(r: &RunResult) -> Self {
        SavedResult {
            engine: Some(r.engine.to_string()),
            engine_why: r.engine_why.clone(),
            bytes: Some(r.bytes),
            bytes_per_sec: r.bytes_per_sec,
            iops: r.iops,
            latency_ns: r.latency_ns.clone(),
            spread: r.spread.clone(),
            warnings: r.warnings.clone(),
            stamp: r.stamp.clone(),
            samples: r.samples.clone(),
            histogram: r.histogram.clone(),
            trace: r.trace.as_ref().map(|t| SavedTrace {
                mode: t.mode.to_string(),
                q2d_ns: t.q2d_ns.clone(),
                d2c_ns: t.d2c_ns.clone(),
                steps: t.steps,
            }),
        }
    }
}

/// The figures of every test of a saved run.
pub fn figures(run: &SavedRun) -> Vec<Figures> {
    run.tests
        .iter()
        .map(|t| Figures::of_saved(&t.name, &t.result))
        .collect()
}
