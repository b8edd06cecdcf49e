#![no_main]
//! Fuzz target `diff`: see `rke2_payload::fuzzing::diff`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| rke2_payload::fuzzing::diff(data));
