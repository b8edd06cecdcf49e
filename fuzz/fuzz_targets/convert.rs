#![no_main]
//! Fuzz target `convert`: see `rke2_payload::fuzzing::convert`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| rke2_payload::fuzzing::convert(data));
