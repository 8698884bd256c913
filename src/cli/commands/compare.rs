//! `blkscope compare A B`: two saved runs test by test.

use std::io::Write;

use crate::cli::{print, print_json};

pub fn run(
    a: &str,
    b: &str,
    json: bool,
    format: &str,
    out: &mut impl Write,
) -> Result<i32, crate::Error> {
    let load = |r: &str| {
        crate::runs::resolve(r)
            .and_then(|p| crate::runs::load(&p))
            .map_err(crate::Error::Usage)
    };
    let (ra, rb) = (load(a)?, load(b)?);
    let diffs = crate::runs::compare(&ra, &rb);
    if diffs.is_empty() {
        return Err(crate::Error::Usage(format!(
            "{} and {} have no test in common",
            ra.id, rb.id
        )));
    }
    if json {
        print_json(out, &diffs)?;
    } else if format == "html" {
        print(out, &crate::plot::html::compare(&ra, &rb, &diffs))?;
    } else {
        print(
            out,
            &crate::output::text::comparison(&ra.id, &rb.id, &diffs),
        )?;
    }
    Ok(0)
}
