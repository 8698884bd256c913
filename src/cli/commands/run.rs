//! `blkscope run TARGET`: one test, repeated with `--repeat`, with a progress bar, live NDJSON
//! samples, the human result or the JSON document, and the run saved.

use std::io::{self, IsTerminal, Write};

use crate::cli::{RunArgs, print, println, say, stdout_err};
use crate::engine::{Sample, TargetInfo, TargetSpec};
use crate::output::text;
use crate::result::RunResult;
use crate::session::{self, Observer};
use crate::sysroot::SysRoot;
use crate::units::fmt_size;

/// What the command line shows while the runs go: a progress bar on a terminal, NDJSON samples,
/// each run's human result.
struct Progress<'a, W: Write> {
    out: &'a mut W,
    show_bar: bool,
    bar: Option<indicatif::ProgressBar>,
    ndjson: bool,
    human: bool,
    run: u32,
    /// The first error writing NDJSON (a closed pipe): reported after the run.
    write_err: Option<io::Error>,
    /// The first error printing a result.
    print_err: Option<crate::Error>,
    /// This run's wait for its device, said without a bar.
    said_stopping: crate::cli::signals::StoppingSaid,
    /// The bar has its stopping style (set once: a template is parsed each time).
    bar_stopping: bool,
}

/// The bar of a run that waits for the device after it stopped issuing.
const STOPPING_BAR: &str = "{prefix} [{bar:30}] {wide_msg}";

impl<W: Write> Observer for Progress<'_, W> {
    fn run_starting(&mut self, _test: &str, run: u32, of: u32) {
        self.run = run;
        self.said_stopping = Default::default();
        self.bar_stopping = false;
        self.bar = self.show_bar.then(|| {
            let b = indicatif::ProgressBar::new(1000);
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "{prefix} [{bar:30}] {percent:>3}% {msg} ETA {eta}",
                )
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
                .progress_chars("=> "),
            );
            b.set_prefix(format!("run {run}/{of}"));
            b
        });
    }

    /// The NDJSON samples carry the analysis so far, as the TUI shows it.
    fn wants_findings(&self) -> bool {
        self.ndjson
    }

    fn sample(&mut self, s: &Sample, found: &[crate::analysis::findings::Finding]) {
        if let Some(b) = &self.bar {
            b.set_position((s.progress.unwrap_or(0.0) * 1000.0) as u64);
            match &s.stopping {
                Some(st) => {
                    // No ETA: the device decides.
                    if !self.bar_stopping
                        && let Ok(style) = indicatif::ProgressStyle::with_template(STOPPING_BAR)
                    {
                        b.set_style(style.progress_chars("=> "));
                        self.bar_stopping = true;
                    }
                    b.set_message(st.line());
                }
                None => b.set_message(match s.none_completed() {
                    Some(none) => format!("0 IOPS, {none}"),
                    None => format!("{}/s {:.0} IOPS", fmt_size(s.bytes_per_sec as u64), s.iops),
                }),
            }
        }
        if let Some(st) = &s.stopping
            && self.bar.is_none()
            && !self.ndjson
        {
            self.said_stopping.say(st);
        }
        if self.ndjson && self.write_err.is_none() {
            let mut v = serde_json::to_value(s).unwrap_or_default();
            v["type"] = "sample".into();
            v["run"] = self.run.into();
            v["findings"] = serde_json::to_value(found).unwrap_or_default();
            if let Err(e) = writeln!(self.out, "{v}").and_then(|_| self.out.flush()) {
                self.write_err = Some(e);
            }
        }
    }

    fn run_finished(&mut self, info: &TargetInfo, r: &RunResult, run: u32, of: u32) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
        if self.human
            && self.print_err.is_none()
            && let Err(e) = print(self.out, &text::run_result(info, r, run, of))
        {
            self.print_err = Some(e);
        }
    }
}

pub fn run(root: &SysRoot, args: &RunArgs, out: &mut impl Write) -> Result<i32, crate::Error> {
    if let Some(m) = args.rwmixread
        && args.op != crate::engine::Op::Randrw
    {
        // fio ignores it there; a user who gave it meant a mix.
        return Err(crate::Error::Usage(format!(
            "--rwmixread {m} sets the share of reads in --op randrw; --op {} does not mix: use \
             --op randrw, or leave --rwmixread out",
            args.op.as_str()
        )));
    }
    let job = args.job();
    let spec = TargetSpec {
        path: args.target.clone(),
        confirm: args.safety.confirm.clone(),
        force: args.safety.force,
    };
    let cancel = crate::cli::signals::cancel_on_signals();
    let human = !args.output.json && !args.output.ndjson;
    let mut progress = Progress {
        out: &mut *out,
        show_bar: io::stderr().is_terminal() && !args.output.ndjson,
        bar: None,
        ndjson: args.output.ndjson,
        human,
        run: 0,
        write_err: None,
        print_err: None,
        said_stopping: Default::default(),
        bar_stopping: false,
    };
    let outcome = session::run_test(
        root,
        &spec,
        &job.label(),
        &job,
        args.repeat,
        cancel,
        &mut progress,
    );
    if let Some(b) = progress.bar.take() {
        b.finish_and_clear();
    }
    if let Some(e) = progress.write_err.take() {
        return Err(stdout_err(e));
    }
    if let Some(e) = progress.print_err.take() {
        return Err(e);
    }
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            say!("blkscope: {e}");
            return Ok(e.exit_code());
        }
    };
    let Some(test) = outcome.tests.first() else {
        return Ok(1);
    };
    let failed = outcome.failed();
    if args.repeat > 1 && human {
        print(out, &text::spread(&test.result))?;
    }
    if !args.output.no_save {
        match session::save(root, "run", &job.label(), &outcome) {
            Ok(p) => {
                say!("blkscope: saved {}", p.display());
                if args.verify_later {
                    let id = p.file_stem().map(|s| s.to_string_lossy().into_owned());
                    say!(
                        "blkscope: what was acknowledged is recorded. Now cut the power (or \
                         reboot), then run: blkscope verify {} --stamp {}",
                        args.target,
                        id.unwrap_or_else(|| "last".into())
                    );
                }
            }
            Err(e) => say!("blkscope: warning: could not save the run: {e}"),
        }
    }
    let doc = serde_json::json!({
        "version": 1,
        "target": outcome.target,
        "results": [test.result],
    });
    super::fleet_table::emit(|| super::fleet_table::of_run(&doc));
    if args.output.json {
        crate::cli::print_json(out, &doc)?;
    } else if args.output.ndjson {
        let mut d = doc;
        d["type"] = "result".into();
        println(out, &d.to_string())?;
    }
    let bad = test.result.verify.as_ref().is_some_and(|v| v.is_bad());
    Ok(if failed {
        1
    } else if bad {
        super::verify::BAD
    } else {
        0
    })
}
