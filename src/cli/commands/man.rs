//! `blkscope man` (the man page, clap_mangen) and `blkscope completions SHELL` (clap_complete).
//! The man page has clap_mangen's name, synopsis, description and options, then a section per
//! subcommand with its options, and the exit statuses, environment and files.

use std::io::Write;

use clap::CommandFactory;
use clap_mangen::roff::{Roff, bold, italic, roman};

use crate::cli::{Cli, stdout_err};

pub fn completions(shell: clap_complete::Shell, out: &mut impl Write) -> Result<i32, crate::Error> {
    let mut cmd = Cli::command();
    clap_complete::generate(shell, &mut cmd, "blkscope", out);
    Ok(0)
}

/// The argument's flags as the man page shows them: `--bs <BS>`, `-a, --all`, `<TARGET>`.
fn arg_label(a: &clap::Arg) -> String {
    let value = a
        .get_value_names()
        .and_then(|v| v.first().map(|n| n.to_string()))
        .unwrap_or_else(|| a.get_id().to_string().to_uppercase());
    let takes_value = a.get_num_args().is_some_and(|n| n.takes_values());
    if a.is_positional() {
        return format!("<{value}>");
    }
    let mut s = String::new();
    if let Some(c) = a.get_short() {
        s.push_str(&format!("-{c}"));
    }
    if let Some(l) = a.get_long() {
        if !s.is_empty() {
            s.push_str(", ");
        }
        s.push_str(&format!("--{l}"));
    }
    if takes_value {
        s.push_str(&format!(" <{value}>"));
    }
    s
}

fn subcommand_sections(roff: &mut Roff, cmd: &clap::Command) {
    roff.control("SH", ["COMMANDS"]);
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        roff.control("SS", [format!("blkscope {}", sub.get_name()).as_str()]);
        let about = sub
            .get_long_about()
            .or(sub.get_about())
            .map(|s| s.to_string())
            .unwrap_or_default();
        for para in about.split("\n\n") {
            roff.control("PP", [])
                .text([roman(para.replace('\n', " "))]);
        }
        for a in sub
            .get_arguments()
            .filter(|a| !a.is_hide_set() && !a.is_global_set())
            .filter(|a| a.get_id() != "help" && a.get_id() != "version")
        {
            let mut help = a
                .get_long_help()
                .or(a.get_help())
                .map(|h| h.to_string())
                .unwrap_or_default();
            let defaults: Vec<String> = a
                .get_default_values()
                .iter()
                .map(|v| v.to_string_lossy().into_owned())
                .collect();
            if !defaults.is_empty() {
                help.push_str(&format!(" [default: {}]", defaults.join(", ")));
            }
            roff.control("TP", [])
                .text([bold(arg_label(a))])
                .text([roman(help.replace('\n', " "))]);
        }
    }
}

fn fixed_sections(roff: &mut Roff) {
    roff.control("SH", ["EXIT STATUS"]);
    for (code, what) in crate::cli::exit::STATUSES {
        roff.control("TP", [])
            .text([bold(code.to_string())])
            .text([roman(*what)]);
    }
    roff.control("SH", ["ENVIRONMENT"]);
    for (var, what) in [
        (
            "NO_COLOR",
            "when set (non-empty), the TUI draws without colour (bold and reverse remain).",
        ),
        (
            "TERM",
            "linux, vt100, vt220 and dumb make the TUI draw with ASCII only.",
        ),
        (
            "BLKSCOPE_DISABLE_URING",
            "1: run as if io_uring were unavailable (pread/pwrite), to test or show the fallback.",
        ),
        (
            "BLKSCOPE_NO_TRACE",
            "1: do not trace the block layer during tests, as --no-trace.",
        ),
        (
            "BLKSCOPE_ROOT",
            "as --root: read sysfs and procfs under this directory (fixture trees, chroots).",
        ),
        (
            "XDG_DATA_HOME",
            "saved runs go to $XDG_DATA_HOME/blkscope/runs (default ~/.local/share/blkscope/runs).",
        ),
        (
            "XDG_CONFIG_HOME",
            "your suites are read from $XDG_CONFIG_HOME/blkscope/suites (default ~/.config/blkscope/suites).",
        ),
    ] {
        roff.control("TP", []).text([bold(var)]).text([roman(what)]);
    }
    roff.control("SH", ["FILES"]);
    for (file, what) in [
        (
            "~/.local/share/blkscope/runs/*.json",
            "saved runs (schema blkscope-run/2): report and compare read them.",
        ),
        (
            "~/.config/blkscope/suites/*.toml",
            "your suites, listed after the built-in ones.",
        ),
        (
            "/run/blkscope/labs",
            "the lab's state: devices left by a blkscope that was killed are removed at the next start.",
        ),
        (
            ".blkscope-PID-N.tmp",
            "a scratch file in the directory under test, removed afterwards (or by the next run, if its process died).",
        ),
    ] {
        roff.control("TP", [])
            .text([italic(file)])
            .text([roman(what)]);
    }
}

pub fn man(out: &mut impl Write) -> Result<i32, crate::Error> {
    let cmd = Cli::command();
    let man = clap_mangen::Man::new(cmd.clone());
    let mut buf: Vec<u8> = Vec::new();
    let io = |r: std::io::Result<()>| r.map_err(stdout_err);
    io(man.render_title(&mut buf))?;
    io(man.render_name_section(&mut buf))?;
    io(man.render_synopsis_section(&mut buf))?;
    io(man.render_description_section(&mut buf))?;
    io(man.render_options_section(&mut buf))?;
    let mut roff = Roff::new();
    subcommand_sections(&mut roff, &cmd);
    fixed_sections(&mut roff);
    io(roff.to_writer(&mut buf))?;
    io(man.render_version_section(&mut buf))?;
    out.write_all(&buf).map_err(stdout_err)?;
    Ok(0)
}
