#![no_main]
//! Fuzz target `doctor`: see `payload_doctor::fuzzing::doctor`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| payload_doctor::fuzzing::doctor(data));
