//! `blkscope report RUN`: a saved run as Markdown, CSV or JSON.

use std::io::Write;

use crate::cli::print;

pub fn run(run: &str, format: &str, out: &mut impl Write) -> Result<i32, crate::Error> {
    let path = crate::runs::resolve(run).map_err(crate::Error::Usage)?;
    let saved = crate::runs::load(&path).map_err(crate::Error::Usage)?;
    let text = crate::runs::render(&saved, format).map_err(crate::Error::Usage)?;
    print(out, &text)?;
    Ok(0)
}
