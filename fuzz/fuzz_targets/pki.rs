#![no_main]
//! Fuzz target `pki`: see `rke2_payload::fuzzing::pem`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| rke2_payload::fuzzing::pem(data));
