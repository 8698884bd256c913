//! `blkscope` with no subcommand: the terminal UI, or the device list and how to run headless
//! when stdout is not a terminal.

use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;

use crate::cli::{print, println};
use crate::device::{self, DiscoverOptions};
use crate::output::{table, utf8_locale};
use crate::sysroot::SysRoot;

pub fn run(
    root: &SysRoot,
    dir: Option<PathBuf>,
    ascii: bool,
    fps: u32,
    mouse: bool,
    out: &mut impl Write,
) -> Result<i32, crate::Error> {
    run_on(
        root,
        dir,
        ascii,
        fps,
        mouse,
        (Vec::new(), Default::default()),
        out,
    )
}

/// The terminal UI over `hosts` (each a node of the device tree; none: this machine).
pub fn run_on(
    root: &SysRoot,
    dir: Option<PathBuf>,
    ascii: bool,
    fps: u32,
    mouse: bool,
    (hosts, ssh): (Vec<crate::remote::Host>, crate::remote::Ssh),
    out: &mut impl Write,
) -> Result<i32, crate::Error> {
    let terminal = io::stdout().is_terminal() && io::stdin().is_terminal();
    if !hosts.is_empty() && !terminal {
        return Err(crate::Error::Usage(
            "the terminal UI over hosts needs a terminal; headless, give a command: \
             `blkscope --host HOST list --json`"
                .into(),
        ));
    }
    if terminal {
        let dir = match dir {
            Some(d) => d,
            None => std::env::current_dir()
                .map_err(|e| crate::Error::io(std::path::Path::new("."), e))?,
        };
        if !dir.is_dir() {
            return Err(crate::Error::TargetNotFound { path: dir });
        }
        crate::ui::run(crate::ui::UiOptions {
            root: root.clone(),
            dir,
            fps,
            look: crate::ui::look_from_env(ascii),
            lab: Vec::new(),
            mouse,
            hosts,
            ssh,
        })?;
        return Ok(0);
    }
    let tree = device::discover(root, &DiscoverOptions::default())?.listed(false);
    print(out, &table::device_table(&tree, !utf8_locale()))?;
    println(
        out,
        "\nstdout is not a terminal, so the interactive view did not start. Headless: \
         `blkscope list --json`, `blkscope check TARGET`, `blkscope run TARGET --json`, \
         `blkscope stat --json` (see `blkscope --help`).",
    )?;
    Ok(0)
}
