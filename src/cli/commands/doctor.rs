//! `blkscope doctor [DEVICE...]`: findings about devices, worst first.

use std::io::Write;

use crate::cli::{print, print_json};
use crate::doctor::{Options, Severity};
use crate::sysroot::SysRoot;

/// The exit status when a finding is a problem.
pub const PROBLEM: i32 = 5;

pub fn run(
    root: &SysRoot,
    names: &[String],
    json: bool,
    out: &mut impl Write,
) -> Result<i32, crate::Error> {
    let reports = crate::doctor::examine(root, names, &Options::default())?;
    if json {
        print_json(out, &serde_json::json!({ "devices": reports }))?;
    } else {
        print(out, &crate::output::text::doctor(&reports))?;
    }
    let problem = reports.iter().any(|r| r.worst() == Some(Severity::Problem));
    Ok(if problem { PROBLEM } else { 0 })
}
