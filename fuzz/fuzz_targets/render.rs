#![no_main]
//! Fuzz target `render`: see `payload_preview::fuzzing::render`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| payload_preview::fuzzing::render(data));
