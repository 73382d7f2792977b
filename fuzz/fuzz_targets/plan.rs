#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pelt::fuzz::plan(data));
