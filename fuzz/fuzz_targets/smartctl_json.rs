//! smartctl's JSON (`smartctl -a -j`), from a drive's firmware through smartctl: the doctor's
//! SMART findings from any JSON. No panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(v) = serde_json::from_slice::<serde_json::Value>(data) {
        let _ = blkscope::doctor::smart::parse(&v, "sda");
    }
});
