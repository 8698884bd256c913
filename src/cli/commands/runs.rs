//! `blkscope runs`: the saved runs, newest last, so that a user can name one to `report` or
//! `compare` without listing the directory by hand.

use std::io::Write;

use serde_json::json;

use crate::cli::{print, print_json};
use crate::runs::SavedRun;

/// Tests named in a row of the text table; the rest are counted.
const TESTS_SHOWN: usize = 3;

pub fn run(last: usize, json: bool, out: &mut impl Write) -> Result<i32, crate::Error> {
    let dir = crate::runs::runs_dir().ok_or_else(|| {
        crate::Error::Usage(
            "neither XDG_DATA_HOME nor HOME is set, so there is no place for saved runs".into(),
        )
    })?;
    let mut runs = Vec::new();
    let mut unreadable = Vec::new();
    for p in crate::runs::newest_paths(&dir, last) {
        match crate::runs::load(&p) {
            Ok(r) => runs.push(r),
            Err(e) => unreadable.push(e),
        }
    }
    if json {
        let doc = json!({
            "dir": dir,
            "runs": runs.iter().map(row_json).collect::<Vec<_>>(),
            "unreadable": unreadable,
        });
        print_json(out, &doc)?;
        return Ok(0);
    }
    print(out, &table(&dir, &runs, &unreadable))?;
    Ok(0)
}

fn target_of(r: &SavedRun) -> String {
    r.target
        .as_ref()
        .map(|t| t.path.clone())
        .unwrap_or_else(|| "-".into())
}

fn row_json(r: &SavedRun) -> serde_json::Value {
    json!({
        "id": r.id,
        "created": r.created,
        "kind": r.kind,
        "name": r.name,
        "target": target_of(r),
        "tests": r.tests.iter().map(|t| json!({
            "name": t.name,
            "bytes_per_sec": t.result.median_rate(),
            "iops": t.result.iops,
        })).collect::<Vec<_>>(),
    })
}

/// The text: one line a run, oldest first, so that the newest sits by the prompt.
pub fn table(dir: &std::path::Path, runs: &[SavedRun], unreadable: &[String]) -> String {
    use std::fmt::Write as _;
    let mut s = String::new();
    if runs.is_empty() && unreadable.is_empty() {
        let _ = writeln!(
            s,
            "no saved runs in {}: run, suite and sweep save one each (unless --no-save)",
            dir.display()
        );
        return s;
    }
    let idw = runs.iter().map(|r| r.id.len()).max().unwrap_or(2).max(2);
    let tw = runs
        .iter()
        .map(|r| target_of(r).len())
        .max()
        .unwrap_or(6)
        .max(6);
    let _ = writeln!(
        s,
        "{:<idw$}  {:<5}  {:<tw$}  TESTS (MB/s)",
        "ID", "KIND", "TARGET"
    );
    for r in runs {
        let mut tests: Vec<String> = r
            .tests
            .iter()
            .take(TESTS_SHOWN)
            .map(|t| format!("{} {:.1}", t.name, t.result.median_rate() / 1e6))
            .collect();
        if r.tests.len() > TESTS_SHOWN {
            tests.push(format!("and {} more", r.tests.len() - TESTS_SHOWN));
        }
        let _ = writeln!(
            s,
            "{:<idw$}  {:<5}  {:<tw$}  {}",
            r.id,
            r.kind,
            target_of(r),
            tests.join(", ")
        );
    }
    for e in unreadable {
        let _ = writeln!(s, "not read: {e}");
    }
    let _ = writeln!(
        s,
        "{} in {}; name one by its id, or a unique start of it, or as last (the newest) or \
         last~N (the Nth before it): blkscope report ID, blkscope compare last~1 last",
        crate::output::count(runs.len(), "run"),
        dir.display()
    );
    s
}
