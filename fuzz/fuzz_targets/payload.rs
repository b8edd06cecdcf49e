#![no_main]
//! Fuzz target `payload`: see `rke2_payload::fuzzing::payload`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| rke2_payload::fuzzing::payload(data));
