#![no_main]
//! Fuzz target `terminal`: see `rke2_payload::fuzzing::terminal`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| rke2_payload::fuzzing::terminal(data));
