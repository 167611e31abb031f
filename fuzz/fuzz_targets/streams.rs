#![no_main]
#[global_allocator]
static ALLOC: wai_fuzz::Capped = wai_fuzz::Capped;
libfuzzer_sys::fuzz_target!(|data: &[u8]| xtask::fuzzing::fuzz("streams", data));
