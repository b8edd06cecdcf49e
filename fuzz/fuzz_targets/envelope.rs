#![no_main]
//! Fuzz target `envelope`: see `rke2_payload::fuzzing::envelope`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| rke2_payload::fuzzing::envelope(data));
