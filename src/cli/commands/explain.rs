//! `blkscope explain NAME`: the dd and fio lines, the flags and the traps of a suite or a test;
//! or, for a kind of warning (`io_worker_wakeups`), what it means and the whole of what the
//! newest saved run that had one said.

use std::io::Write;

use crate::cli::print;

/// How many of the newest saved runs are looked through for a warning of the kind asked for.
const RUNS_LOOKED_AT: usize = 20;

pub fn run(name: &str, target: &str, lbs: u64, out: &mut impl Write) -> Result<i32, crate::Error> {
    if let Some(kind) = crate::analysis::findings::Kind::parse(name) {
        let seen = newest_warning(kind);
        print(out, &crate::output::text::kind_explanation(kind, seen))?;
        return Ok(0);
    }
    let e = crate::suite::explain(name, lbs)?;
    print(out, &crate::output::text::explanation(&e, target))?;
    Ok(0)
}

/// The newest saved run's warning of `kind`: (run id, test, message).
fn newest_warning(kind: crate::analysis::findings::Kind) -> Option<(String, String, String)> {
    crate::runs::newest(RUNS_LOOKED_AT)
        .into_iter()
        .rev()
        .find_map(|run| {
            run.tests.iter().find_map(|t| {
                let w = t.result.warnings.iter().find(|w| w.kind == kind)?;
                Some((run.id.clone(), t.name.clone(), w.message.clone()))
            })
        })
}
