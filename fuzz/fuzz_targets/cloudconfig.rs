#![no_main]
//! Fuzz target `cloudconfig`: see `rke2_payload::fuzzing::cloudconfig`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| rke2_payload::fuzzing::cloudconfig(data));
