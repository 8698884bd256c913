//! The documents written from the code are current: docs/findings.md lists every kind of
//! finding the model has, with its meaning. `BLKSCOPE_WRITE_DOCS=1 cargo test --test docs`
//! writes them again.

mod common;

use std::path::Path;

use clap::Parser;

#[test]
fn the_findings_reference_lists_every_kind() {
    let text = blkscope::output::reference::findings_markdown();
    for k in blkscope::analysis::findings::Kind::ALL {
        assert!(text.contains(&format!("| `{}` |", k.name())), "{k}");
    }
    println!("{} kinds", blkscope::analysis::findings::Kind::ALL.len());
    common::current("docs/findings.md", &text);
}

/// `blkscope explain KIND` explains every kind the model has, the doctor's too (`misaligned`
/// was not explainable while the doctor's kinds lived apart).
#[test]
fn explain_knows_every_kind() {
    for k in blkscope::analysis::findings::Kind::ALL {
        let out = common::blkscope(&["explain", k.name()]);
        let text = common::ok_stdout(&out, k.name());
        let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            text.starts_with(&format!("{}: ", k.name())) && joined.contains(&k.about()[..40]),
            "{k}: {text}"
        );
    }
    println!(
        "{} kinds explained",
        blkscope::analysis::findings::Kind::ALL.len()
    );
}

/// Every `console` block in README.md, CONTRIBUTING.md and docs/ runs as shown (trycmd): the
/// command after `$`, its output (`...` stands for lines that change from run to run, `[..]`
/// for part of a line) and its exit status (`? 3`). Device commands read the fixture tree of
/// a disk with LVM on its second partition and a blank second disk (BLKSCOPE_ROOT), saved runs
/// go to a directory of this test's. `TRYCMD=overwrite cargo test --test docs commands`
/// writes what the commands print now into the blocks.
#[test]
fn the_commands_in_the_documents_print_what_they_show() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let home = tempfile::tempdir().unwrap();
    let docs: Vec<_> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    let cases = trycmd::TestCases::new();
    cases
        .register_bin("blkscope", Path::new(env!("CARGO_BIN_EXE_blkscope")))
        .env(
            "BLKSCOPE_ROOT",
            root.join("tests/fixtures/lvm-on-partition")
                .display()
                .to_string(),
        )
        .env("XDG_DATA_HOME", home.path().display().to_string())
        .env("XDG_CONFIG_HOME", home.path().display().to_string())
        .env("BLKSCOPE_NO_TRACE", "1")
        .env("NO_COLOR", "1")
        .env("COLUMNS", "100");
    cases.case(root.join("README.md"));
    cases.case(root.join("CONTRIBUTING.md"));
    for d in &docs {
        cases.case(d);
    }
    println!("{} documents", docs.len() + 2);
    cases.run();
}

/// Every `blkscope ...` the documents show, in code blocks and in running text, is one the
/// command line accepts: its subcommand, flags and values exist. Synopsis notation is read as
/// a user would: `[--opt X]` is tried, `a|b` is `a`, `...` is one more argument, and the
/// placeholders of typed values take a value (`N` 1, `BS` 4k, `OP` read, `QD` 1, `RUN` last).
/// A mention of a command without its arguments (`blkscope run`) may lack what it requires.
#[test]
fn every_blkscope_command_the_documents_show_parses() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = vec![root.join("README.md"), root.join("CONTRIBUTING.md")];
    for e in std::fs::read_dir(root.join("docs")).unwrap().flatten() {
        if e.path().extension().is_some_and(|x| x == "md") {
            files.push(e.path());
        }
    }
    let mut seen = 0;
    let mut wrong = Vec::new();
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for cmd in shown_commands(&text) {
            seen += 1;
            let args = as_args(&cmd);
            if let Err(e) = blkscope::cli::Cli::try_parse_from(&args) {
                use clap::error::ErrorKind::*;
                if !matches!(
                    e.kind(),
                    DisplayHelp | DisplayVersion | MissingRequiredArgument
                ) {
                    let why = e.to_string();
                    let first = why.lines().next().unwrap_or("");
                    wrong.push(format!("{}: `{cmd}` ({args:?}): {first}", f.display()));
                }
            }
        }
    }
    println!("{seen} commands in {} documents", files.len());
    assert!(seen > 50, "only {seen} commands found");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The `blkscope ...` commands in a document: from code blocks (after `$ `, `sudo `, `ssh HOST
/// `, a path to the binary) and from inline code, up to a pipe, a redirection or a comment.
fn shown_commands(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_block = false;
    let mut prose = String::new();
    for line in text.lines() {
        if line.starts_with("```") {
            in_block = !in_block;
            continue;
        }
        if in_block {
            if let Some(c) = command_in(line) {
                out.push(c);
            }
        } else {
            prose.push_str(line);
            prose.push(' ');
        }
    }
    for (i, span) in prose.split('`').enumerate() {
        if i % 2 == 1
            && let Some(c) = command_in(span)
        {
            out.push(c);
        }
    }
    out
}

/// The blkscope command a line or code span runs, if it runs one.
fn command_in(s: &str) -> Option<String> {
    let s = s.split(" #").next()?.trim();
    let s = s.strip_prefix("$ ").unwrap_or(s);
    let at = s
        .split_whitespace()
        .position(|w| w == "blkscope" || w.ends_with("/blkscope"))?;
    let words: Vec<&str> = s.split_whitespace().collect();
    // Only where blkscope is the command: at the start, after sudo, or after `ssh [-t] HOST`.
    let before = &words[..at];
    let ok = before.is_empty()
        || before == ["sudo"]
        || before.first() == Some(&"ssh") && !before.contains(&"|");
    if !ok || words.get(at + 1) == Some(&"...") {
        return None;
    }
    let rest: Vec<&str> = words[at + 1..]
        .iter()
        .take_while(|w| !matches!(**w, "|" | ">" | "&&" | ";" | "2>&1"))
        .copied()
        .collect();
    Some(format!("blkscope {}", rest.join(" ")).trim().to_string())
}

/// A shown command as the arguments a user would type: quotes taken off, options in brackets
/// kept, the first of alternatives, placeholders of typed values given one.
fn as_args(cmd: &str) -> Vec<String> {
    cmd.split_whitespace()
        .map(|w| w.trim_matches(|c| c == '[' || c == ']'))
        .filter(|w| !w.is_empty())
        .map(|w| {
            let w = w.trim_matches('\'').trim_matches('"');
            let w = w.replace(",...", "");
            let w = w.split('|').next().unwrap_or("").to_string();
            match w.as_str() {
                "N" | "J" | "QD" => "1".to_string(),
                "BS" => "4k".to_string(),
                "OP" => "read".to_string(),
                "RUN" => "last".to_string(),
                "..." => "TARGET".to_string(),
                _ => w,
            }
        })
        .collect()
}

/// The five-minute tour in README.md runs as a user would type it: every `blkscope` command of
/// its code blocks and running text (the console blocks are trycmd's, above), in an empty
/// directory where `.` is a scratch file, saving its runs in a directory of its own, with the disk it names (`/dev/sdb`, `sdb`) a loop
/// device of this test's. The TUIs (`blkscope` alone, `learn`, `lab`) are left to their own
/// tests, and a command named without what it needs (`blkscope verify`) is a mention.
#[test]
fn the_readme_tour_runs_as_shown() {
    if !common::require(true, &["losetup"]) {
        return;
    }
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let tour = text
        .split_once("## A five-minute tour")
        .and_then(|(_, t)| t.split_once("## Where to read on"))
        .map(|(t, _)| t)
        .expect("README.md has its tour");
    let lo = common::Loop::new(512 << 20, None, false);
    let (cwd, home) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let mut ran = Vec::new();
    for cmd in shown_commands(&without_console_blocks(tour)) {
        let args: Vec<String> = as_args(&cmd)
            .into_iter()
            .skip(1)
            .map(|a| match a.as_str() {
                "/dev/sdb" => lo.dev().to_string(),
                "sdb" => lo.name.clone(),
                _ => a,
            })
            .collect();
        if args.is_empty() || ["learn", "lab"].contains(&args[0].as_str()) {
            println!("`{cmd}`: a TUI, left to tests/tui.rs and tests/learn.rs");
            continue;
        }
        let mut parsed = vec!["blkscope".to_string()];
        parsed.extend(args.iter().cloned());
        if let Err(e) = blkscope::cli::Cli::try_parse_from(&parsed)
            && e.kind() == clap::error::ErrorKind::MissingRequiredArgument
        {
            println!("`{cmd}`: named in the text, not a command to run");
            continue;
        }
        let out = common::bin()
            .args(&args)
            .env("XDG_DATA_HOME", home.path())
            .current_dir(cwd.path())
            .output()
            .unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        println!(
            "`{cmd}` as {args:?}: {} ({} lines)",
            out.status,
            stdout.lines().count()
        );
        // The doctor's 5 is its answer about this machine (a problem found), not a failure.
        let answered = args[0] == "doctor" && out.status.code() == Some(5);
        assert!(
            out.status.success() || answered,
            "`{cmd}` as {args:?}: {}\n{stdout}\n{stderr}",
            out.status
        );
        ran.push(cmd);
    }
    assert!(
        ran.iter().any(|c| c.contains("/dev/sdb")) && ran.len() >= 4,
        "the tour's commands: {ran:?}"
    );
}

/// A document without its `console` blocks.
fn without_console_blocks(text: &str) -> String {
    let mut out = String::new();
    let mut console = false;
    for line in text.lines() {
        if line.starts_with("```console") {
            console = true;
        } else if console && line.starts_with("```") {
            console = false;
        } else if !console {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}
