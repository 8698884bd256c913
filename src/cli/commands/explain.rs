//! `blkscope explain NAME`: the dd and fio lines, the flags and the traps of a suite or a test.

use std::io::Write;

use crate::cli::print;

pub fn run(name: &str, target: &str, lbs: u64, out: &mut impl Write) -> Result<i32, crate::Error> {
    let e = crate::suite::explain(name, lbs)?;
    print(out, &crate::output::text::explanation(&e, target))?;
    Ok(0)
}
