//! A student's progress: each lesson run (the prediction, the measured answer, every claim and
//! its numbers) saved as a JSON file beside the saved runs, in
//! `$XDG_DATA_HOME/blkscope/lessons/` (default `~/.local/share/blkscope/lessons/`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

use super::run::{ClaimCount, LessonRun};

pub const SCHEMA: &str = "blkscope-lesson/1";

/// Where lesson runs are saved.
pub fn dir() -> Option<PathBuf> {
    Some(crate::xdg::dir("XDG_DATA_HOME", ".local/share")?.join("lessons"))
}

/// Saves a lesson run; returns the file.
pub fn save(run: &LessonRun) -> std::io::Result<PathBuf> {
    let dir = dir().ok_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "neither XDG_DATA_HOME nor HOME is set",
        )
    })?;
    std::fs::create_dir_all(&dir)?;
    let stamp: String = run
        .created
        .chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .collect();
    let id = format!("{stamp}-{}-{}", run.lesson, std::process::id());
    let mut doc = serde_json::to_value(run)?;
    if let Some(o) = doc.as_object_mut() {
        o.insert("schema".into(), SCHEMA.into());
        o.insert("id".into(), id.clone().into());
    }
    let path = dir.join(format!("{id}.json"));
    let tmp = dir.join(format!(".{id}.json.tmp"));
    std::fs::write(&tmp, serde_json::to_vec_pretty(&doc)?)?;
    std::fs::rename(&tmp, &path)?;
    Ok(path)
}

/// What the list shows of a lesson done before: the newest run's date, whether the prediction
/// was right, and how many claims held.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Done {
    pub created: String,
    #[serde(default)]
    pub predicted_right: Option<bool>,
    #[serde(default)]
    pub cancelled: bool,
    #[serde(skip)]
    pub claims: ClaimCount,
}

#[derive(Deserialize)]
struct SavedClaim {
    held: Option<bool>,
    #[serde(default)]
    held_in: Option<[usize; 2]>,
}

#[derive(Deserialize)]
struct SavedStep {
    #[serde(default)]
    claims: Vec<SavedClaim>,
}

#[derive(Deserialize)]
struct Saved {
    lesson: String,
    #[serde(flatten)]
    done: Done,
    #[serde(default)]
    steps: Vec<SavedStep>,
}

/// The newest finished run of each lesson, by name. Files that do not read are passed over.
pub fn done() -> BTreeMap<String, Done> {
    let mut out: BTreeMap<String, Done> = BTreeMap::new();
    let Some(dir) = dir() else { return out };
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.extension().is_none_or(|x| x != "json") {
            continue;
        }
        let Some(s) = std::fs::read_to_string(&p)
            .ok()
            .and_then(|t| serde_json::from_str::<Saved>(&t).ok())
        else {
            continue;
        };
        if s.done.cancelled {
            continue;
        }
        let mut d = s.done;
        for c in s.steps.iter().flat_map(|st| &st.claims) {
            d.claims.add(c.held, c.held_in.is_some());
        }
        if out.get(&s.lesson).is_none_or(|o| o.created <= d.created) {
            out.insert(s.lesson, d);
        }
    }
    out
}
