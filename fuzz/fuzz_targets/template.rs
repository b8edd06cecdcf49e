#![no_main]
//! Fuzz target `template`: see `rke2_payload::fuzzing::template`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| rke2_payload::fuzzing::template(data));
