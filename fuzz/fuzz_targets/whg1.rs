#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| xtask::fuzzing::fuzz("whg1", data));
