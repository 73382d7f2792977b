#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pelt_core::fuzz::results_file(data));
