#![no_main]
//! Fuzz target `roundtrip`: see `rke2_payload::fuzzing::roundtrip`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| rke2_payload::fuzzing::roundtrip(data));
