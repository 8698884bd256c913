//! A saved run (a JSON file in the runs directory, or one handed over by another machine):
//! read, or refused with a message. No panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = blkscope::runs::parse(text, "fuzz.json");
    }
});
