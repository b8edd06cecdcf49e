#![no_main]
//! Fuzz target `dataurl`: see `rke2_payload::fuzzing::data_url`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| rke2_payload::fuzzing::data_url(data));
