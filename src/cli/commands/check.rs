//! `blkscope check TARGET`: may a write test run there, and why.

use std::io::{IsTerminal, Write};
use std::sync::atomic::Ordering;

use crate::cli::{print, print_json};
use crate::device::deepen::Depth;
use crate::sysroot::SysRoot;

pub fn run(
    root: &SysRoot,
    target: &str,
    json: bool,
    full: bool,
    out: &mut impl Write,
) -> Result<i32, crate::Error> {
    let cancel = crate::cli::signals::cancel_on_signals();
    let bar = std::io::stderr().is_terminal().then(whole_read_bar);
    let mut progress = |done: u64, size: u64| {
        if let Some(b) = &bar {
            b.set_length(size);
            b.set_position(done);
        }
        !cancel.load(Ordering::Relaxed)
    };
    let mut depth = Depth {
        full,
        progress: &mut progress,
    };
    let (report, _) = crate::device::safety::check_deep(root, target, &mut depth)?;
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    if json {
        print_json(out, &report)?;
    } else {
        print(out, &crate::output::text::check(&report))?;
    }
    Ok(report.write_safety.exit_code())
}

/// The whole read's progress on standard error: bytes, rate and ETA. indicatif draws nothing
/// until the first position, so a check that reads nothing whole shows nothing.
fn whole_read_bar() -> indicatif::ProgressBar {
    let b = indicatif::ProgressBar::hidden();
    b.set_style(
        indicatif::ProgressStyle::with_template(
            "reading whole [{wide_bar}] {bytes}/{total_bytes} {binary_bytes_per_sec} ETA {eta} \
             (Ctrl-C stops)",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar())
        .progress_chars("=> "),
    );
    b.set_draw_target(indicatif::ProgressDrawTarget::stderr());
    b
}
