#![no_main]
//! Fuzz target `render`: see `rke2_payload::fuzzing::render`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| rke2_payload::fuzzing::render(data));
