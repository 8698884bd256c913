//! The exit statuses, once: `--help` and the man page list them from here.

/// Every exit status blkscope gives, with what it means.
pub const STATUSES: &[(i32, &str)] = &[
    (0, "done; for check: clear (a write test may run)"),
    (
        1,
        "failed at run time (an I/O error), or cancelled (Ctrl-C, SIGTERM, SIGHUP)",
    ),
    (
        2,
        "usage error (bad option, invalid job, no such target); nothing written",
    ),
    (
        3,
        "confirmation missing: the device carries data; for check: confirm",
    ),
    (
        4,
        "refused: mounted, swap, held, read-only or busy; for check: blocked",
    ),
    (
        crate::cli::commands::doctor::PROBLEM,
        "doctor: a finding is a problem (SMART failing, a misaligned partition)",
    ),
    (
        crate::cli::commands::verify::BAD,
        "verify, run --verify: something read back was bad (listed, with a map)",
    ),
    (
        crate::cli::signals::SECOND,
        "a second Ctrl-C, SIGTERM or SIGHUP: exited at once, without waiting for the I/Os in \
         flight (a device that does not complete them); no result",
    ),
    (
        141,
        "the output's reader stopped reading (as if killed by SIGPIPE; silent)",
    ),
];

/// The statuses as a list in `--help`.
pub fn help() -> String {
    let each: Vec<String> = STATUSES
        .iter()
        .map(|(c, w)| format!("  {c:<4} {w}"))
        .collect();
    format!("Exit status:\n{}", each.join("\n"))
}
