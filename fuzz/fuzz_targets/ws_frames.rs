#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| pelt_engine::fuzz::ws_frames(data));
