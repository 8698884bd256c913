//! The conventions of a command-line tool: completions for five shells, a man page with every
//! subcommand, the exit statuses, the environment and the files, `--version` with the commit,
//! and a `--help` that says what blkscope does today.

mod common;

use std::process::Command;

use common::*;

#[test]
fn completions_for_every_shell() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let out = blkscope(&["completions", shell]);
        let text = stdout_of(&out);
        assert!(out.status.success(), "{shell}: {out:?}");
        for sub in ["list", "check", "run", "suite", "stat"] {
            assert!(text.contains(sub), "{shell} completion lacks {sub}");
        }
    }
    let out = blkscope(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn the_man_page_has_every_subcommand_and_the_exit_statuses() {
    let out = blkscope(&["man"]);
    assert!(out.status.success());
    let man = stdout_of(&out);
    assert!(
        man.starts_with(".ie") || man.contains(".TH blkscope"),
        "{}",
        &man[..200]
    );
    for s in [
        ".SH NAME",
        ".SH SYNOPSIS",
        ".SH COMMANDS",
        ".SH \"EXIT STATUS\"",
        ".SH ENVIRONMENT",
        ".SH FILES",
        "NO_COLOR",
        "BLKSCOPE_DISABLE_URING",
        "XDG_DATA_HOME",
        "XDG_CONFIG_HOME",
    ] {
        assert!(man.contains(s), "the man page lacks {s}");
    }
    for sub in [
        "list",
        "check",
        "stat",
        "run",
        "suites",
        "suite",
        "explain",
        "report",
        "lab",
        "compare",
        "completions",
        "man",
    ] {
        assert!(
            man.contains(&format!(".SS \"blkscope {sub}\""))
                || man.contains(&format!(".SS blkscope {sub}\n")),
            "no section for {sub}"
        );
    }
    // The run section documents its options.
    assert!(man.contains("\\-\\-iodepth") || man.contains("--iodepth"));
    if tool_exists("man") {
        let mut child = Command::new("man")
            .args(["-l", "-"])
            .env("MANPAGER", "cat")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(man.as_bytes())
            .unwrap();
        let o = child.wait_with_output().unwrap();
        assert!(
            o.status.success(),
            "man: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(String::from_utf8_lossy(&o.stdout).contains("EXIT STATUS"));
    }
}

#[test]
fn version_names_the_commit() {
    let out = blkscope(&["--version"]);
    let v = stdout_of(&out);
    assert!(out.status.success());
    assert!(
        v.starts_with(&format!("blkscope {} (commit ", env!("CARGO_PKG_VERSION"))),
        "{v}"
    );
    let head = Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output();
    if let Ok(h) = head
        && h.status.success()
    {
        let h = String::from_utf8_lossy(&h.stdout).trim().to_string();
        assert!(v.contains(&h), "{v} does not name HEAD {h}");
    }
}

#[test]
fn help_says_what_it_does_today() {
    let out = blkscope(&["--help"]);
    let h = stdout_of(&out);
    assert!(out.status.success());
    assert!(!h.contains("later versions"), "{h}");
    assert!(h.contains("terminal UI") && h.contains("O_EXCL"), "{h}");
    assert!(h.contains("Exit status"), "{h}");
}

/// Every exit status blkscope gives is in `--help` and in the man page (5, doctor's problem,
/// and 6, a bad read-back, were missing from both).
#[test]
fn every_exit_status_is_in_the_help_and_the_man_page() {
    let help = stdout_of(&blkscope(&["--help"]));
    let joined = help.split_whitespace().collect::<Vec<_>>().join(" ");
    let man = stdout_of(&blkscope(&["man"]));
    for (code, what) in blkscope::cli::exit::STATUSES {
        let words: String = what.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            joined.contains(&format!("{code} {words}")),
            "--help lacks {code}: {joined}"
        );
        assert!(
            man.contains(&format!(".B {code}\n")) || man.contains(&format!("\\fB{code}\\fR")),
            "the man page lacks {code}"
        );
    }
    println!("{} statuses", blkscope::cli::exit::STATUSES.len());
}

/// Help is wrapped to the terminal: at 80 columns no line of any command's `--help` is longer
/// and no word is cut in the middle; options sit under headings, and run, suite, doctor and
/// learn end with examples.
#[test]
fn help_fits_80_columns_with_headings_and_examples() {
    use clap::CommandFactory;
    // Every subcommand clap knows, so a new one is held to this too.
    let subs: Vec<String> = blkscope::cli::Cli::command()
        .get_subcommands()
        .map(|c| c.get_name().to_string())
        .filter(|n| n != "help")
        .collect();
    assert!(subs.len() >= 17, "{subs:?}");
    for sub in subs.iter().map(String::as_str) {
        let out = bin()
            .env("COLUMNS", "80")
            .args([sub, "--help"])
            .output()
            .unwrap();
        let h = stdout_of(&out);
        assert!(out.status.success(), "{sub}: {h}");
        for l in h.lines() {
            assert!(
                l.chars().count() <= 80,
                "{sub} --help: a line over 80 columns: {l}"
            );
        }
        if ["run", "suite", "doctor", "learn"].contains(&sub) {
            assert!(
                h.contains("\nExamples:\n  blkscope "),
                "{sub} --help has no examples:\n{h}"
            );
        }
        if ["run", "suite", "sweep"].contains(&sub) {
            for heading in ["Target and safety:", "Test:", "Output:"] {
                assert!(h.contains(heading), "{sub} --help lacks {heading}\n{h}");
            }
            assert!(
                h.contains("--confirm <NAME>\n") || h.contains("--confirm <NAME>  "),
                "{sub}: {h}"
            );
        }
        if sub == "run" {
            assert!(
                h.contains("Hosts:\n") && h.contains("Terminal UI:\n"),
                "{h}"
            );
            let test = h
                .split("Test:")
                .nth(1)
                .unwrap()
                .split("Output:")
                .next()
                .unwrap();
            assert!(
                !test.contains("--host") && !test.contains("--no-mouse"),
                "{test}"
            );
        }
    }
    println!("{} commands' help read", subs.len());
}
