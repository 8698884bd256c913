//! `blkscope doctor [DEVICE...]`: findings about devices, worst first.

use std::io::Write;

use crate::cli::{print, print_json, stdout_err};
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
    super::fleet_table::emit(|| {
        super::fleet_table::of_doctor(&serde_json::to_value(&reports).unwrap_or_default())
    });
    if json {
        print_json(out, &serde_json::json!({ "devices": reports }))?;
    } else {
        print(out, &crate::output::text::doctor(&reports))?;
    }
    let problem = reports.iter().any(|r| r.worst() == Some(Severity::Problem));
    Ok(if problem { PROBLEM } else { 0 })
}

/// `doctor --watch`: a table of who does I/O on the devices every interval, until `count`
/// tables or Ctrl-C.
pub fn watch(
    root: &SysRoot,
    names: &[String],
    json: bool,
    interval: std::time::Duration,
    count: Option<u64>,
    out: &mut impl Write,
) -> Result<i32, crate::Error> {
    let devices = crate::doctor::watch::devices(root, names)?;
    let cancel = crate::cli::signals::cancel_on_signals();
    let mut n = 0;
    while count.is_none_or(|c| n < c) && !cancel.load(std::sync::atomic::Ordering::Relaxed) {
        let iv = crate::doctor::watch::watch_once(root, &devices, interval, &cancel)
            .map_err(|e| crate::Error::Usage(format!("doctor --watch: {e}")))?;
        if json {
            let v = serde_json::to_string(&iv).map_err(|e| crate::Error::Usage(e.to_string()))?;
            crate::cli::println(out, &v)?;
        } else {
            print(out, &crate::output::text::top(&iv))?;
        }
        out.flush().map_err(stdout_err)?;
        n += 1;
    }
    Ok(0)
}
