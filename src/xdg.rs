//! Where blkscope keeps the user's files: the XDG base directories (saved runs in the data
//! directory, the user's suites in the config directory).

use std::path::PathBuf;

/// `$VAR/blkscope`, or `~/FALLBACK/blkscope` (the XDG base directory rules).
pub fn dir(var: &str, home_fallback: &str) -> Option<PathBuf> {
    let base = std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(home_fallback)))?;
    Some(base.join("blkscope"))
}
