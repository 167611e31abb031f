//! DetessDequant never allocates by a capacity it has not admitted: refused calls may name
//! capacities up to 2^64 − 1, an admitted input capacity is never materialized, and a successful
//! call's output (at most 2^20 bytes) is the largest buffer formed. An allocator that records the
//! largest single allocation proves it. One test in this file, so no other test allocates meanwhile.

use serde_json::{Value, json};
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use wai_checker::fill;
use wai_checker::request::LineError;

struct Largest;

static LARGEST: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; only sizes are recorded.
unsafe impl GlobalAlloc for Largest {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LARGEST.fetch_max(layout.size(), Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LARGEST.fetch_max(new_size, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Largest = Largest;

fn call(shape: &[&str], in_addr: &str, in_cap: &str, out_addr: &str, out_cap: &str) -> Value {
    json!({
        "id": "caps",
        "inputs": [{"dtype": "Int8", "layout": {"MlaTiled": {"axes": ["-1", "-1", "0", "1"], "channels": "Compact", "tile_shape": ["1", "1", "2", "3"]}}, "shape": shape}],
        "outputs": [{"dtype": "Float32", "layout": {"Contiguous": {}}, "shape": shape}],
        "params": {"scale": "3e800000", "zero_point": "-3"},
        "buffers": {
            "inputs": [{"address": in_addr, "capacity": in_cap, "bytes": "fd0001057f80"}],
            "outputs": [{"address": out_addr, "capacity": out_cap, "poison": "aa"}]
        }
    })
}

/// Fills `v` and returns the outcome with the largest single allocation made meanwhile.
fn measure(v: &Value) -> (Result<String, String>, usize) {
    let line = v.to_string();
    LARGEST.store(0, Ordering::Relaxed);
    let r = fill::fill_line(&line).map_err(|e| match e {
        LineError::Bad(m) | LineError::Bug(m) => m,
    });
    (r, LARGEST.load(Ordering::Relaxed))
}

#[test]
fn capacities_are_never_allocated_past_the_caps() {
    let max = "18446744073709551615";
    let small = 1 << 16;
    let refused = [
        // Output capacity 2^64 − 1 with a null output: null_pointer.
        (call(&["2", "3"], "4096", "16", "0", max), "null_pointer"),
        // Input capacity 2^64 − 1: its end passes 2^64.
        (call(&["2", "3"], "4096", max, "65536", "24"), "address_overflow"),
        // Output capacity 2^64 − 1 at an aligned address: address_overflow.
        (call(&["2", "3"], "4096", "16", "65536", max), "address_overflow"),
        // A span past 2^64 (4·2^64 bytes of output).
        (
            call(&["4294967296", "4294967296"], "4096", "16", "65536", max),
            "address_overflow",
        ),
        // An output overlapping the accessed input range (under a huge capacity): aliasing.
        (
            call(&["2", "3"], "4096", "18446744073709547520", "4104", "24"),
            "aliasing",
        ),
    ];
    for (v, code) in &refused {
        let (r, largest) = measure(v);
        let line = r.unwrap();
        assert!(line.contains(&format!(r#""expect":{{"refuse":"{code}"}}"#)), "{line}");
        assert!(largest < small, "{code}: an allocation of {largest} bytes");
    }
    // An admitted input capacity of 2^64 − 4096 (its end exactly 2^64), never materialized.
    let v = call(&["2", "3"], "4096", "18446744073709547520", "16", "24");
    let (r, largest) = measure(&v);
    assert!(r.unwrap().contains("000000000000403f0000803f00000040000002420000fac1"));
    assert!(largest < small, "an allocation of {largest} bytes");
    // An empty tensor of huge extents: nothing formed by its size.
    let v = call(
        &["0", "9223372036854775808", "9223372036854775808"],
        "4096",
        max,
        "65536",
        "0",
    );
    let mut v2 = v.clone();
    v2["inputs"][0]["layout"]["MlaTiled"]["axes"] = json!(["-1", "-1", "1", "2"]);
    v2["buffers"]["inputs"][0]["capacity"] = json!("64");
    let (r, largest) = measure(&v2);
    assert!(r.unwrap().contains(r#""expect":{"outputs":[""]}"#));
    assert!(largest < small, "an allocation of {largest} bytes");
    // A successful call may need its output: 2^20 bytes (its hex twice that), nothing more.
    let v = call(&["2", "3"], "4096", "16", "65536", "1048576");
    let (r, largest) = measure(&v);
    r.unwrap();
    assert!(largest <= 5 << 20, "an allocation of {largest} bytes");
    // One byte more is a line error, before any output exists.
    let v = call(&["2", "3"], "4096", "16", "65536", "1048577");
    let (r, largest) = measure(&v);
    assert!(r.unwrap_err().starts_with("buffers.outputs[0].capacity:"));
    assert!(largest < small, "an allocation of {largest} bytes");
}
