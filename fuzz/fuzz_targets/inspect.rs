#![no_main]
//! Fuzz target `inspect`: see `rke2_payload::fuzzing::inspect`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| rke2_payload::fuzzing::inspect(data));
