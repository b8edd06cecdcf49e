#![no_main]
//! Fuzz target `redact`: see `rke2_payload::fuzzing::redact`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| rke2_payload::fuzzing::redact(data));
