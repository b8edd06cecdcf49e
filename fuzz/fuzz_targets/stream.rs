#![no_main]
//! Fuzz target `stream`: see `rke2_payload::fuzzing::stream`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| rke2_payload::fuzzing::stream(data));
