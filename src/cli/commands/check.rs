//! `blkscope check TARGET`: may a write test run there, and why.

use std::io::Write;

use crate::cli::{print, print_json};
use crate::sysroot::SysRoot;

pub fn run(
    root: &SysRoot,
    target: &str,
    json: bool,
    out: &mut impl Write,
) -> Result<i32, crate::Error> {
    let report = crate::device::safety::check(root, target)?;
    if json {
        print_json(out, &report)?;
    } else {
        print(out, &crate::output::text::check(&report))?;
    }
    Ok(report.write_safety.exit_code())
}
