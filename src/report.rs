//! Saved runs: every `run` and `suite` is kept as JSON (schema `blkscope-run/1`) in
//! `$XDG_DATA_HOME/blkscope/runs/` (default `~/.local/share/blkscope/runs/`), with the device's
//! properties, the jobs, the results, their diskstats summaries and findings. Reports export one
//! as Markdown, CSV or JSON; `compare` sets two side by side, test by test.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Value, json};

use crate::device::Device;
use crate::engine::{Job, RunResult, TargetInfo};

pub const SCHEMA: &str = "blkscope-run/1";

/// `$XDG_DATA_HOME/blkscope/runs`, or `~/.local/share/blkscope/runs`.
pub fn runs_dir() -> Option<PathBuf> {
    Some(xdg_dir("XDG_DATA_HOME", ".local/share")?.join("runs"))
}

/// `$VAR/blkscope`, or `~/FALLBACK/blkscope` (the XDG base directory rules).
pub fn xdg_dir(var: &str, home_fallback: &str) -> Option<PathBuf> {
    let base = std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(home_fallback)))?;
    Some(base.join("blkscope"))
}

/// One test of a saved run.
#[derive(Debug, Clone, Serialize)]
pub struct SavedTest<'a> {
    pub name: String,
    pub job: &'a Job,
    pub result: &'a RunResult,
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
    let created = crate::cli::rfc3339_now();
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
    let dir = runs_dir().ok_or("neither XDG_DATA_HOME nor HOME is set")?;
    let mut all: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|_| format!("no saved runs in {}: run a test first", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    all.sort();
    if run == "last" {
        return all
            .pop()
            .ok_or_else(|| format!("no saved runs in {}", dir.display()));
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
            "no saved run '{run}' in {}; `blkscope report last` shows the newest",
            dir.display()
        )),
        _ => Err(format!(
            "'{run}' matches {} saved runs; give more of its id",
            matches.len()
        )),
    }
}

/// Reads a saved run and checks its schema.
pub fn load(path: &Path) -> Result<Value, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| format!("{}: not a blkscope run: {e}", path.display()))?;
    if v["schema"] != SCHEMA {
        return Err(format!(
            "{}: schema {} is not {SCHEMA}",
            path.display(),
            v["schema"]
        ));
    }
    Ok(v)
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
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

pub fn figures(run: &Value) -> Vec<Figures> {
    run["tests"]
        .as_array()
        .map(|ts| {
            ts.iter()
                .map(|t| figures_of(t["name"].as_str().unwrap_or(""), &t["result"]))
                .collect()
        })
        .unwrap_or_default()
}

/// The figures of one result (a `RunResult` as JSON): with repeats, the medians.
pub fn figures_of(name: &str, r: &Value) -> Figures {
    let sp = &r["spread"];
    let bps = sp["bytes_per_sec"]["median"]
        .as_f64()
        .unwrap_or(f(&r["bytes_per_sec"]));
    let iops = sp["iops"]["median"].as_f64().unwrap_or(f(&r["iops"]));
    Figures {
        name: name.to_string(),
        mb_s: bps / 1e6,
        iops,
        p50_us: f(&r["latency_ns"]["p50"]) / 1e3,
        p99_us: f(&r["latency_ns"]["p99"]) / 1e3,
        spread: sp["relative_spread"].as_f64(),
        warnings: r["warnings"]
            .as_array()
            .map(|w| {
                w.iter()
                    .filter_map(|x| x["kind"].as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default(),
    }
}

/// Formats a saved run as `md`, `csv` or `json`.
pub fn render(run: &Value, format: &str) -> Result<String, String> {
    let figs = figures(run);
    match format {
        "json" => serde_json::to_string_pretty(run).map_err(|e| e.to_string()),
        "csv" => {
            let mut s = String::from("test,mb_per_s,iops,p50_us,p99_us,relative_spread,warnings\n");
            for x in &figs {
                let _ = writeln!(
                    s,
                    "{},{:.3},{:.1},{:.1},{:.1},{},{}",
                    csv_field(&x.name),
                    x.mb_s,
                    x.iops,
                    x.p50_us,
                    x.p99_us,
                    x.spread.map(|v| format!("{v:.4}")).unwrap_or_default(),
                    csv_field(&x.warnings.join(" "))
                );
            }
            Ok(s)
        }
        "md" => {
            let mut s = format!(
                "# blkscope {} `{}`\n\n- run: {}\n- created: {}\n- target: {} ({})\n",
                run["kind"].as_str().unwrap_or(""),
                run["name"].as_str().unwrap_or(""),
                run["id"].as_str().unwrap_or(""),
                run["created"].as_str().unwrap_or(""),
                run["target"]["path"].as_str().unwrap_or("-"),
                run["target"]["device"].as_str().unwrap_or("file"),
            );
            if let Some(m) = run["device"]["model"].as_str() {
                let _ = writeln!(s, "- model: {m}");
            }
            if run["device"].is_object() {
                let d = &run["device"];
                let _ = writeln!(
                    s,
                    "- block size: logical {} physical {}, rotational {}, write cache {}",
                    d["logical_block_size"],
                    d["physical_block_size"],
                    d["rotational"],
                    d["write_cache"].as_str().unwrap_or("-")
                );
            }
            s.push_str("\n| test | MB/s | IOPS | p50 | p99 | spread | notes |\n");
            s.push_str("| --- | ---: | ---: | ---: | ---: | ---: | --- |\n");
            for x in &figs {
                let _ = writeln!(
                    s,
                    "| {} | {:.1} | {:.0} | {:.1} us | {:.1} us | {} | {} |",
                    x.name,
                    x.mb_s,
                    x.iops,
                    x.p50_us,
                    x.p99_us,
                    x.spread
                        .map(|v| format!("{:.1}%", v * 100.0))
                        .unwrap_or("-".into()),
                    x.warnings.join(", ")
                );
            }
            let notes: Vec<String> = run["tests"]
                .as_array()
                .into_iter()
                .flatten()
                .flat_map(|t| {
                    t["result"]["warnings"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(move |w| {
                            format!(
                                "- **{}** `{}`: {}",
                                t["name"].as_str().unwrap_or(""),
                                w["kind"].as_str().unwrap_or(""),
                                w["message"].as_str().unwrap_or("")
                            )
                        })
                })
                .collect();
            if !notes.is_empty() {
                s.push_str("\n## Findings and warnings\n\n");
                s.push_str(&notes.join("\n"));
                s.push('\n');
            }
            Ok(s)
        }
        other => Err(format!("unknown format '{other}': use md, csv or json")),
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// One line of a comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Diff {
    pub test: String,
    pub metric: &'static str,
    pub a: f64,
    pub b: f64,
    /// b / a.
    pub ratio: Option<f64>,
}

/// Compares two saved runs test by test (matched by name).
pub fn compare(a: &Value, b: &Value) -> Vec<Diff> {
    let fa = figures(a);
    let fb = figures(b);
    let mut out = Vec::new();
    for x in &fa {
        let Some(y) = fb.iter().find(|y| y.name == x.name) else {
            continue;
        };
        for (metric, va, vb) in [
            ("MB/s", x.mb_s, y.mb_s),
            ("IOPS", x.iops, y.iops),
            ("p50 us", x.p50_us, y.p50_us),
            ("p99 us", x.p99_us, y.p99_us),
        ] {
            out.push(Diff {
                test: x.name.clone(),
                metric,
                a: va,
                b: vb,
                ratio: (va > 0.0).then(|| vb / va),
            });
        }
    }
    out
}
