//! Finished runs and suites as result rows: their command lines, comparisons, and saved runs
//! reopened.

use super::*;

impl App {
    /// `c`: the selected result against the latest earlier result of the same test.
    pub fn compare_selected(&mut self) {
        let i = self.selected_result;
        let Some(cur) = self.results.get(i).and_then(|r| r.figures()) else {
            self.status = Some("nothing to compare: this result has no figures".into());
            return;
        };
        let prev = self.results[..i]
            .iter()
            .enumerate()
            .rev()
            .find(|(_, r)| r.test == self.results[i].test && r.figures().is_some());
        // The charts (g) overlay the earlier run on the same axes.
        self.compare_with = prev.map(|(j, _)| (j, i));
        self.status = Some(match prev {
            None => format!(
                "no earlier result of {} to compare with: run it again (r), or reopen saved runs (o)",
                self.results[i].test
            ),
            Some((j, p)) => {
                let p = p.figures().expect("checked");
                let ratio = |a: f64, b: f64| {
                    if a > 0.0 {
                        format!("{:.2}x", b / a)
                    } else {
                        "-".into()
                    }
                };
                format!(
                    "#{} vs #{}: MB/s {}  IOPS {}  p50 {}  p99 {}",
                    i + 1,
                    j + 1,
                    ratio(p.mb_s, cur.mb_s),
                    ratio(p.iops, cur.iops),
                    ratio(p.p50_us, cur.p50_us),
                    ratio(p.p99_us, cur.p99_us)
                )
            }
        });
    }

    /// What suite `suite` found on `target` in these results, by its contrast (None for a
    /// single test, or a suite that has none). Saved runs: [`crate::report::found_here_in`].
    pub(super) fn found_here<'a>(
        &self,
        suite: Option<&str>,
        medians: impl IntoIterator<Item = (&'a str, f64)>,
        target: &str,
    ) -> Option<std::sync::Arc<str>> {
        let s = self
            .suites
            .iter()
            .find(|s| Some(s.name.as_str()) == suite)?;
        s.found_here(medians, target).map(Into::into)
    }

    /// Adds saved runs (oldest first) to the results as rows.
    pub fn add_reopened(&mut self, runs: Vec<crate::runs::SavedRun>) {
        let mut n = 0;
        // A run already among the results (reopened before, or run and saved here) is not
        // added twice: `o` pressed again adds only what was saved since.
        let shown: std::collections::HashSet<String> = self
            .results
            .iter()
            .filter_map(|r| r.saved_id.clone())
            .collect();
        let offered = runs.len();
        for v in runs {
            if shown.contains(&v.id) {
                continue;
            }
            let id = v.id.clone();
            let target = v
                .target
                .as_ref()
                .map(|t| t.path.clone())
                .unwrap_or_else(|| "-".into());
            let total = v.target.as_ref().map(|t| t.size_bytes).unwrap_or(0);
            let sweeps: Vec<_> = crate::plot::sweeps(&v)
                .into_iter()
                .map(std::sync::Arc::new)
                .collect();
            let found_here: Option<std::sync::Arc<str>> =
                crate::report::found_here_in(&v, &self.suites).map(Into::into);
            let mut seen = Vec::new();
            for (t, f) in v.tests.iter().zip(crate::runs::figures(&v)) {
                // As the live result had them: a timed test's dd line covers what it moved.
                let from = total.saturating_sub(t.job.offset);
                let dd = explain::dd_line_for_run(&t.job, &target, from, t.result.bytes);
                let fio = saved_fio(&t.job, &t.result, &target, from);
                let name = if v.kind == "suite" {
                    format!("{}/{}", v.name, f.name)
                } else {
                    f.name.clone()
                };
                self.results.push(ResultRow {
                    test: name,
                    target: device_name(&target),
                    info: None,
                    result: None,
                    error: None,
                    dd,
                    fio,
                    saved_id: Some(id.clone()),
                    reopened: Some(f),
                    saved: Some(SavedSaid::of(&t.result)),
                    series: t.result.samples.clone(),
                    sweep: point_of(&sweeps, t.job.op, &mut seen),
                    found_here: found_here.clone(),
                });
                n += 1;
            }
        }
        self.status = Some(if n == 0 && self.results.is_empty() {
            "no results yet, and no saved runs: press r to run a test".into()
        } else if n == 0 && offered > 0 {
            format!(
                "nothing to add: the {} {} already shown",
                crate::output::count(offered, "newest saved run"),
                if offered == 1 { "is" } else { "are all" }
            )
        } else {
            format!("reopened {}", crate::output::count(n, "saved result"))
        });
        if !self.results.is_empty() {
            self.selected_result = self.results.len() - 1;
            self.screen = Screen::Results;
        }
    }

    /// The suite moved on to another test (or run of it).
    pub fn on_suite_progress(&mut self, test: &str, run: u32, of: u32) {
        let lbs = self.target().lbs;
        if let Some(r) = self.run.as_mut()
            && let Some(name) = r.suite.clone()
            && let Some(s) = self.suites.iter().find(|s| s.name == name)
        {
            if let Some(t) = s.tests.iter().find(|t| t.name == test) {
                r.job = t.job(lbs);
            }
            r.test = format!("{name}: {test} ({run}/{of})");
            r.samples.clear();
        }
    }

    /// The suite finished: one result row per test.
    pub fn on_suite_finished(&mut self, outcome: Result<crate::session::Outcome, String>) {
        self.on_suite_saved(outcome, None);
    }

    /// The suite finished and was saved under `saved_id` (None: not saved).
    pub fn on_suite_saved(
        &mut self,
        outcome: Result<crate::session::Outcome, String>,
        saved_id: Option<String>,
    ) {
        let Some(run) = self.run.clone() else { return };
        let suite = run.suite.clone().unwrap_or_default();
        let path = self.command_line_target();
        match outcome {
            Ok(o) => {
                if let Some(info) = &o.target {
                    let wrote = o.tests.iter().any(|t| t.job.op.writes());
                    self.note_written(info, wrote);
                }
                let total = o
                    .target
                    .as_ref()
                    .map(|i| i.size_bytes)
                    .unwrap_or(self.target().size);
                // A sweep suite's series, with their knees, as `blkscope suite` prints them.
                let sweeps: Vec<_> = self
                    .suites
                    .iter()
                    .find(|s| s.name == suite)
                    .and_then(|s| s.sweep.as_deref())
                    .and_then(crate::analysis::sweep::Param::parse)
                    .map(|p| crate::session::sweep::analyze(p, &o.tests))
                    .unwrap_or_default()
                    .into_iter()
                    .map(std::sync::Arc::new)
                    .collect();
                let found_here = self.found_here(
                    Some(&suite),
                    o.tests
                        .iter()
                        .map(|t| (t.name.as_str(), t.result.median_rate())),
                    o.target.as_ref().map_or(&run.target, |t| &t.path),
                );
                let mut seen = Vec::new();
                for t in o.tests {
                    let moved = Some(t.result.bytes);
                    let sweep = point_of(&sweeps, t.job.op, &mut seen);
                    self.results.push(ResultRow {
                        test: format!("{suite}/{}", t.name),
                        target: run.target.clone(),
                        info: o.target.clone(),
                        dd: explain::dd_line_for_run(&t.job, &path, total, moved),
                        fio: fio_as_ran(&t.job, &t.result, &path, total),
                        result: Some(t.result),
                        error: None,
                        saved_id: saved_id.clone(),
                        reopened: None,
                        saved: None,
                        series: Vec::new(),
                        sweep,
                        found_here: found_here.clone(),
                    });
                }
            }
            Err(e) => self
                .results
                .push(ResultRow::failed(suite, run.target.clone(), e)),
        }
        if !self.results.is_empty() {
            self.selected_result = self.results.len() - 1;
        }
        if !self.quit {
            self.screen = Screen::Results;
        }
    }

    /// The engine finished (or failed to start).
    pub fn on_finished(&mut self, outcome: Result<(TargetInfo, RunResult), String>) {
        let Some(run) = self.run.clone() else { return };
        let path = self.command_line_target();
        let total = match &outcome {
            Ok((info, _)) => info.size_bytes.saturating_sub(run.job.offset),
            Err(_) => self.target().size,
        };
        let moved = outcome.as_ref().ok().map(|(_, r)| r.bytes);
        if let Ok((info, _)) = &outcome {
            self.note_written(info, run.job.op.writes());
        }
        let dd = explain::dd_line_for_run(&run.job, &path, total, moved);
        let fio = match &outcome {
            Ok((_, r)) => fio_as_ran(&run.job, r, &path, total),
            Err(_) => explain::fio_command(&run.job, &path, total),
        };
        let (info, result, error) = match outcome {
            Ok((i, r)) => (Some(i), Some(r), None),
            Err(e) => (None, None, Some(e)),
        };
        self.results.push(ResultRow {
            test: run.test,
            target: run.target,
            info,
            result,
            error,
            dd,
            fio,
            saved_id: None,
            reopened: None,
            saved: None,
            series: Vec::new(),
            sweep: None,
            found_here: None,
        });
        self.selected_result = self.results.len() - 1;
        if !self.quit {
            self.screen = Screen::Results;
        }
    }
}

/// The series of `sweeps` that a test of `op` is a point of, and which point: the tests of a
/// sweep are its points in order, so the n-th test of an op is its series' n-th point (`seen`
/// holds the ops of the tests before it).
pub(super) fn point_of(
    sweeps: &[std::sync::Arc<crate::analysis::sweep::Series>],
    op: crate::engine::Op,
    seen: &mut Vec<crate::engine::Op>,
) -> Option<(std::sync::Arc<crate::analysis::sweep::Series>, usize)> {
    let n = seen.iter().filter(|&&o| o == op).count();
    seen.push(op);
    sweeps
        .iter()
        .find(|s| s.op == op.as_str() && n < s.points.len())
        .map(|s| (s.clone(), n))
}

/// What tells a saved run's target apart in a narrow column: a device's name (`loop11`, not
/// `/dev/loop11`, which a column of 8 cut to `/dev/loo` for every run), a file's or directory's
/// last component.
pub(super) fn device_name(path: &str) -> String {
    std::path::Path::new(path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.to_string())
}

/// A result's fio line: the engine that ran (`auto` may have probed its way to pread/pwrite),
/// with `--hipri` where it polled and `--force_async=1` where it handed its I/O to io-wq.
fn fio_as_ran(job: &Job, r: &RunResult, path: &str, total: u64) -> String {
    let engine = EngineKind::from_name(r.measured.engine).unwrap_or(job.engine);
    let m = &r.measured;
    explain::fio_command_as_run(job, path, total, engine, m.polled, m.to_workers)
}

/// A saved result's fio line, as its live result had it: the engine that ran, polled where
/// `auto` polled (its `engine_why` says so; a saved run has no `to_workers`, so no
/// `--force_async=1`).
pub(super) fn saved_fio(job: &Job, r: &crate::runs::SavedResult, path: &str, total: u64) -> String {
    let engine = r
        .engine
        .as_deref()
        .and_then(EngineKind::from_name)
        .unwrap_or(job.engine);
    let polled = r.engine_why.as_deref() == Some(crate::engine::probe::POLLED_WHY);
    explain::fio_command_as_run(job, path, total, engine, polled, false)
}
