//! `blkscope compare A B`: two saved runs test by test.

use std::io::Write;

use crate::cli::{print, print_json};

/// A run named as HOST:RUN, saved on another host: (host, run). A path that exists is local
/// whatever its colons.
fn on_host(r: &str) -> Option<(&str, &str)> {
    if std::path::Path::new(r).exists() {
        None
    } else {
        r.split_once(':')
    }
}

pub fn run(
    a: &str,
    b: &str,
    json: bool,
    format: &str,
    ssh: &crate::remote::Ssh,
    out: &mut impl Write,
) -> Result<i32, crate::Error> {
    // A path, an id, `last`, or HOST:RUN for a run saved on another host.
    let load = |r: &str| {
        if let Some((h, id)) = on_host(r) {
            let host = crate::remote::Host::parse(h).map_err(crate::Error::Usage)?;
            return crate::remote::fetch_run(ssh, &host, id).map_err(crate::Error::Usage);
        }
        crate::runs::resolve(r)
            .and_then(|p| crate::runs::load(&p))
            .map_err(crate::Error::Usage)
    };
    let (ra, rb) = (load(a)?, load(b)?);
    // The same run twice (`compare last last`) compares nothing.
    let host = |r| on_host(r).map(|(h, _)| h);
    if ra.id == rb.id && host(a) == host(b) {
        return Err(crate::Error::Usage(format!(
            "{a} and {b} are the same run ({}): `blkscope compare last~1 last` compares the \
             newest two, and `blkscope runs` lists them",
            ra.id
        )));
    }
    let diffs = crate::runs::compare(&ra, &rb);
    if diffs.is_empty() {
        let names = |r: &crate::runs::SavedRun| {
            r.tests
                .iter()
                .map(|t| t.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        return Err(crate::Error::Usage(format!(
            "{} ({}) and {} ({}) have no test in common: compare two runs of the same suite or \
             sweep, or two runs of one test each",
            ra.id,
            names(&ra),
            rb.id,
            names(&rb)
        )));
    }
    if json {
        print_json(out, &diffs)?;
    } else if format == "html" {
        print(out, &crate::report::html::compare(&ra, &rb, &diffs))?;
    } else {
        print(
            out,
            &crate::output::text::comparison(&ra.id, &rb.id, &diffs),
        )?;
    }
    Ok(0)
}
