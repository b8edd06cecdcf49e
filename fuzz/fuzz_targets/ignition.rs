#![no_main]
//! Fuzz target `ignition`: see `rke2_payload::fuzzing::ignition`.

libfuzzer_sys::fuzz_target!(|data: &[u8]| rke2_payload::fuzzing::ignition(data));
