#![no_main]
//! Fuzz target `template`: see `payload_preview::fuzzing::template`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| payload_preview::fuzzing::template(data));
