//! Suites and lessons a user (or a course) writes in TOML: parsed and checked, or refused with
//! a message. The first byte picks which. No panic.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    if which % 2 == 0 {
        let _ = blkscope::suite::parse(text, Path::new("fuzz.toml"));
    } else {
        let _ = blkscope::learn::parse(text, Path::new("fuzz.toml"));
    }
});
