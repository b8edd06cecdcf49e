#![no_main]
//! Fuzz target `free_text`: see `rke2_payload::fuzzing::free_text`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| rke2_payload::fuzzing::free_text(data));
