//! `blkscope suites` and `blkscope suite NAME TARGET`.

use std::io::Write;

use crate::cli::{print, print_json, say};
use crate::engine::TargetSpec;
use crate::session::{self, Observer};
use crate::sysroot::SysRoot;

pub fn list(json: bool, out: &mut impl Write) -> Result<i32, crate::Error> {
    let suites = crate::suite::all().map_err(|e| crate::Error::Usage(e.to_string()))?;
    if json {
        let v: Vec<_> = suites
            .iter()
            .map(|s| {
                serde_json::json!({
                    "name": s.name, "title": s.title, "source": s.source, "about": s.about,
                    "repeat": s.repeat, "tests": s.tests.iter().map(|t| &t.name).collect::<Vec<_>>(),
                    "origin": s.origin,
                })
            })
            .collect();
        let mut v = v;
        for (n, about) in session::SETTING_SUITES {
            v.push(serde_json::json!({"name": n, "title": about, "origin": "builtin"}));
        }
        print_json(out, &v)?;
        return Ok(0);
    }
    print(out, &crate::output::text::suites(&suites))?;
    Ok(0)
}

/// `suite scheduler` and `suite write-cache`: tests under each setting, side by side.
fn setting_suite(
    root: &SysRoot,
    name: &str,
    spec: &TargetSpec,
    opts: &SuiteOpts,
    out: &mut impl Write,
) -> Result<i32, crate::Error> {
    let cancel = crate::cli::signals::cancel_on_signals();
    let mut announce = Announce {
        suite: name,
        quiet: opts.json || opts.ndjson,
        ndjson: opts.ndjson,
        run: 0,
        said_stopping: Default::default(),
    };
    let repeat = opts.repeat.unwrap_or(1);
    let r = if name == "scheduler" {
        session::run_scheduler_suite(root, spec, repeat, cancel, &mut announce)
    } else {
        session::run_write_cache_suite(
            root,
            spec,
            repeat,
            opts.allow_cache_toggle,
            cancel,
            &mut announce,
        )
    };
    let outcome = match r {
        Ok(o) => o,
        Err(e) => {
            say!("blkscope: {e}");
            return Ok(e.exit_code());
        }
    };
    if !opts.no_save && !outcome.tests.is_empty() {
        match session::save(root, "suite", name, &outcome) {
            Ok(p) => say!("blkscope: saved {}", p.display()),
            Err(e) => say!("blkscope: warning: could not save the run: {e}"),
        }
    }
    let status = if outcome.failed() { 1 } else { 0 };
    if opts.json || opts.ndjson {
        let tests: Vec<_> = outcome
            .tests
            .iter()
            .map(|t| {
                let mut v = serde_json::json!({"name": t.name, "job": t.job, "result": t.result});
                if let Some((k, val)) = &t.setting {
                    v[*k] = val.clone().into();
                }
                v
            })
            .collect();
        let mut doc = serde_json::json!({
            "version": 1, "suite": name, "repeat": repeat, "target": outcome.target,
            "tests": tests, "cancelled": outcome.cancelled,
        });
        if opts.ndjson {
            doc["type"] = "result".into();
            crate::cli::println(out, &doc.to_string())?;
        } else {
            print_json(out, &doc)?;
        }
        return Ok(status);
    }
    print(
        out,
        &crate::output::text::setting_table(name, &spec.path, &outcome.tests),
    )?;
    if outcome.cancelled {
        print(out, "cancelled: the suite stopped early\n")?;
    }
    Ok(status)
}

/// Says on stderr which test runs (unless the output is JSON); with --ndjson, streams
/// progress and samples as JSON lines on stdout.
struct Announce<'a> {
    suite: &'a str,
    quiet: bool,
    ndjson: bool,
    /// The run of the test now running.
    run: u32,
    /// This run's wait for its device, said.
    said_stopping: crate::cli::signals::StoppingSaid,
}

impl Announce<'_> {
    /// One JSON line on stdout. A closed pipe is not reported here: the result line after the
    /// suite reports it.
    fn line(&self, v: &serde_json::Value) {
        let mut o = std::io::stdout().lock();
        let _ = writeln!(o, "{v}").and_then(|_| o.flush());
    }
}

impl Observer for Announce<'_> {
    fn run_starting(&mut self, test: &str, run: u32, of: u32) {
        self.run = run;
        self.said_stopping = Default::default();
        if self.ndjson {
            self.line(&serde_json::json!({"type": "progress", "test": test, "run": run, "of": of}));
        } else if !self.quiet {
            say!("blkscope: {}: {test} (run {run}/{of})", self.suite);
        }
    }

    /// The NDJSON samples carry the trace and the analysis so far, as run's do.
    fn wants_findings(&self) -> bool {
        self.ndjson
    }

    fn sample(&mut self, s: &crate::engine::Sample, found: &[crate::analysis::findings::Finding]) {
        if let Some(st) = &s.stopping
            && !self.ndjson
        {
            self.said_stopping.say(st);
        }
        if self.ndjson {
            let mut v = serde_json::to_value(s).unwrap_or_default();
            v["type"] = "sample".into();
            v["run"] = self.run.into();
            v["findings"] = serde_json::to_value(found).unwrap_or_default();
            self.line(&v);
        }
    }
}

pub struct SuiteOpts {
    pub repeat: Option<u32>,
    pub json: bool,
    /// JSON lines: progress and samples as they come, then the result.
    pub ndjson: bool,
    pub no_save: bool,
    pub verify: bool,
    pub allow_cache_toggle: bool,
    /// `--cpus`: every test of the suite runs on these CPUs (over what the suite says).
    pub cpus: Option<crate::engine::cpus::CpuList>,
}

impl crate::cli::args::SuiteArgs {
    /// The target as named and confirmed.
    pub fn spec(&self) -> TargetSpec {
        TargetSpec {
            path: self.target.clone(),
            confirm: self.safety.confirm.clone(),
            force: self.safety.force,
        }
    }

    /// How the suite runs and what it prints.
    pub fn opts(&self) -> SuiteOpts {
        SuiteOpts {
            repeat: self.repeat,
            json: self.output.json,
            ndjson: self.output.ndjson,
            no_save: self.output.no_save,
            verify: self.verify,
            allow_cache_toggle: self.allow_cache_toggle,
            cpus: self.cpus.clone(),
        }
    }
}

/// `blkscope sweep`: one test over the depths or sizes given, run as a suite of its points.
pub fn sweep(
    root: &SysRoot,
    a: crate::cli::args::SweepArgs,
    out: &mut impl Write,
) -> Result<i32, crate::Error> {
    use crate::analysis::sweep::Param;
    let (param, values, block, depth) =
        session::sweep::resolve(a.qd.as_deref(), a.bs.as_deref(), a.block, a.depth)
            .map_err(crate::Error::Usage)?;
    let base = crate::engine::Job {
        op: a.op.unwrap_or(match param {
            Param::Iodepth => crate::engine::Op::Randread,
            Param::Bs => crate::engine::Op::Read,
        }),
        bs: block,
        iodepth: depth,
        runtime: Some(a.runtime),
        size: a.size.map(crate::engine::job::SizeSpec::Text),
        mode: a.mode,
        cpus: a.cpus,
        ..Default::default()
    };
    let suite = session::sweep::suite(param, &values, &base);
    let spec = TargetSpec {
        path: a.target,
        confirm: a.safety.confirm,
        force: a.safety.force,
    };
    let opts = SuiteOpts {
        repeat: Some(1),
        json: a.json,
        ndjson: false,
        no_save: a.no_save,
        verify: false,
        allow_cache_toggle: false,
        cpus: None,
    };
    run_suite(root, &suite, &spec, &opts, out)
}

pub fn run(
    root: &SysRoot,
    name: &str,
    spec: &TargetSpec,
    opts: &SuiteOpts,
    out: &mut impl Write,
) -> Result<i32, crate::Error> {
    if let Some((special, _)) = session::SETTING_SUITES.iter().find(|(n, _)| *n == name) {
        if opts.cpus.is_some() {
            return Err(crate::Error::Usage(format!(
                "--cpus is for suites of tests; the {special} suite runs its own fixed jobs: run \
                 it without --cpus"
            )));
        }
        return setting_suite(root, special, spec, opts, out);
    }
    let mut suite = crate::suite::find(name)
        .map_err(|e| crate::Error::Usage(e.to_string()))?
        .ok_or_else(|| {
            crate::Error::Usage(format!("no suite '{name}'; `blkscope suites` lists them"))
        })?;
    if let Some(c) = &opts.cpus {
        // Said once here: the check before the first test would say it too, but naming every
        // test of the suite.
        crate::engine::cpus::check_allowed(c).map_err(crate::Error::Usage)?;
        for t in &mut suite.tests {
            t.cpus = Some(c.clone());
        }
    }
    run_suite(root, &suite, spec, opts, out)
}

/// Runs `suite` (a TOML suite, or a sweep made on the command line) and prints it.
pub fn run_suite(
    root: &SysRoot,
    suite: &crate::suite::Suite,
    spec: &TargetSpec,
    opts: &SuiteOpts,
    out: &mut impl Write,
) -> Result<i32, crate::Error> {
    let (json, no_save) = (opts.json || opts.ndjson, opts.no_save);
    let repeat = opts.repeat.unwrap_or(suite.repeat);
    let cancel = crate::cli::signals::cancel_on_signals();
    let mut announce = Announce {
        suite: &suite.name,
        quiet: json,
        ndjson: opts.ndjson,
        run: 0,
        said_stopping: Default::default(),
    };
    let outcome = match session::run_suite(
        root,
        suite,
        spec,
        repeat,
        opts.verify,
        cancel,
        &mut announce,
    ) {
        Ok(o) => o,
        Err(e) => {
            say!("blkscope: {e}");
            return Ok(e.exit_code());
        }
    };
    if !no_save {
        match session::save(root, "suite", &suite.name, &outcome) {
            Ok(p) => say!("blkscope: saved {}", p.display()),
            Err(e) => say!("blkscope: warning: could not save the run: {e}"),
        }
    }
    let sweep = suite
        .sweep
        .as_deref()
        .and_then(crate::analysis::sweep::Param::parse)
        .map(|p| crate::session::sweep::analyze(p, &outcome.tests));
    let failed = outcome.failed();
    let bad = outcome
        .tests
        .iter()
        .any(|t| t.result.verify.as_ref().is_some_and(|v| v.is_bad()));
    let status = if failed {
        1
    } else if bad {
        super::verify::BAD
    } else {
        0
    };
    if json {
        let tests: Vec<_> = outcome
            .tests
            .iter()
            .map(|t| serde_json::json!({"name": t.name, "about": t.about, "job": t.job, "result": t.result}))
            .collect();
        let mut doc = serde_json::json!({
            "version": 1, "suite": suite.name, "title": suite.title, "repeat": repeat,
            "target": outcome.target, "tests": tests, "cancelled": outcome.cancelled,
        });
        if let Some(s) = &sweep {
            doc["sweep"] = serde_json::to_value(s).unwrap_or_default();
        }
        let target = outcome.target.as_ref().map_or(&spec.path, |t| &t.path);
        if let Some(here) = suite.found_here(
            outcome
                .tests
                .iter()
                .map(|t| (t.name.as_str(), t.result.median_rate())),
            target,
        ) {
            doc["found_here"] = here.into();
        }
        if opts.ndjson {
            doc["type"] = "result".into();
            crate::cli::println(out, &doc.to_string())?;
        } else {
            print_json(out, &doc)?;
        }
        return Ok(status);
    }
    let target = outcome
        .target
        .as_ref()
        .map(|t| t.path.clone())
        .unwrap_or_else(|| spec.path.clone());
    print(
        out,
        &crate::output::text::suite_table(
            suite,
            &target,
            repeat,
            &outcome.tests,
            outcome.cancelled,
        ),
    )?;
    if let Some(s) = &sweep {
        print(out, &crate::output::text::sweep(s))?;
    }
    for t in &outcome.tests {
        if let Some(v) = &t.result.verify {
            let size = t.result.stamp.as_ref().map_or(0, |s| {
                s.jobs.iter().map(|j| j.start + j.len).max().unwrap_or(0)
            });
            print(out, &format!("  {}:\n", t.name))?;
            print(out, &crate::output::text::verify_report(v, size, "    "))?;
        }
    }
    Ok(status)
}
