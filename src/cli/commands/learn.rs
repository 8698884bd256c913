//! `blkscope learn`: the lessons, in the TUI, headless as JSON, or listed.

use std::io::{IsTerminal, Write};

use crate::cli::args::LearnArgs;
use crate::cli::{println, say};
use crate::learn::{self, run};
use crate::output::lesson;
use crate::sysroot::SysRoot;

pub fn run(
    root: &SysRoot,
    a: &LearnArgs,
    ascii: bool,
    fps: u32,
    mouse: bool,
    out: &mut impl Write,
) -> Result<i32, crate::Error> {
    if a.list {
        return list(a.json, out);
    }
    let lesson = a.lesson.as_deref().map(learn::find).transpose()?;
    let tty = std::io::stdout().is_terminal() && std::io::stdin().is_terminal();
    if !a.json && tty {
        let lessons = learn::all().map_err(|e| crate::Error::Usage(e.to_string()))?;
        return crate::ui::learn::run(crate::ui::learn::Options {
            root: root.clone(),
            lessons,
            open: lesson.map(|l| l.name),
            look: crate::ui::look_from_env(ascii),
            fps,
            mouse,
            size: a.size,
            dir: a.dir.clone(),
            repeat: a.repeat.map(usize::from),
            save: !a.no_save,
        })
        .map(|_| 0);
    }
    let Some(lesson) = lesson else {
        return Err(crate::Error::Usage(
            "no terminal for the lessons' TUI: name a lesson (blkscope learn LESSON --json) or \
             list them (--list)"
                .into(),
        ));
    };
    headless(root, &lesson, a, out)
}

/// Runs a lesson without the TUI: JSON with `--json`, the answer's text otherwise.
fn headless(
    root: &SysRoot,
    lesson: &learn::Lesson,
    a: &LearnArgs,
    out: &mut impl Write,
) -> Result<i32, crate::Error> {
    let cancel = crate::cli::signals::cancel_on_signals();
    let opts = run::Options {
        size: a.size,
        dir: a.dir.clone(),
        prediction: None,
        repeat: a.repeat.map(usize::from),
    };
    let r = run::run(root, lesson, &opts, cancel, &mut Status)?;
    if r.in_ram {
        let fs = r.lab_fs.as_deref().unwrap_or("RAM");
        say!("blkscope: the lab's files are in RAM ({fs}): every figure is memory's; give --dir");
    }
    if !a.no_save
        && !r.cancelled
        && let Err(e) = learn::progress::save(&r)
    {
        say!("blkscope: the lesson run was not saved: {e}");
    }
    if a.json {
        let v = serde_json::to_string_pretty(&r).map_err(|e| crate::Error::Usage(e.to_string()))?;
        println(out, &v)?;
    } else {
        for l in lesson::answer(&r) {
            println(out, &l)?;
        }
    }
    // Cancelled: status 1, as for `run` (`cli::exit`).
    Ok(if r.cancelled { 1 } else { 0 })
}

/// Says on stderr what the lesson is doing (stdout is the JSON).
struct Status;

impl run::Observer for Status {
    fn status(&mut self, what: &str) {
        say!("blkscope: {what}");
    }
    fn test_starting(&mut self, name: &str, _job: &crate::engine::Job, path: &str) {
        say!("blkscope: running {name} on {path}");
    }
}

fn list(json: bool, out: &mut impl Write) -> Result<i32, crate::Error> {
    let lessons = learn::all().map_err(|e| crate::Error::Usage(e.to_string()))?;
    let done = learn::progress::done();
    if json {
        let v: Vec<serde_json::Value> = lessons
            .iter()
            .map(|l| {
                let d = done.get(&l.name);
                serde_json::json!({
                    "name": l.name, "title": l.title, "about": l.about, "origin": l.origin,
                    "done": d.map(|d| &d.created),
                    "predicted_right": d.and_then(|d| d.predicted_right),
                })
            })
            .collect();
        println(out, &serde_json::Value::Array(v).to_string())?;
        return Ok(0);
    }
    for l in &lessons {
        println(out, &lesson::list_line(l, done.get(&l.name)))?;
    }
    Ok(0)
}
