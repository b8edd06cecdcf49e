#![no_main]
//! Fuzz target `rke2_config`: see `rke2_payload::fuzzing::rke2_config`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| rke2_payload::fuzzing::rke2_config(data));
