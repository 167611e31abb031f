//! What every fuzz target shares: an allocator that refuses one allocation past
//! [`MALLOC_LIMIT`].
//!
//! The targets run without a sanitizer (`cargo fuzz run -s none`, docs/fuzzing.md): the code under
//! test is safe Rust, and AddressSanitizer's allocator and LeakSanitizer's scans cost 2–10× the
//! executions. libFuzzer's `-malloc_limit_mb` works through a sanitizer's malloc hooks, so this
//! allocator keeps its check: an allocation past the limit prints its size and aborts, which
//! libFuzzer records as a crash with its input. `-rss_limit_mb` needs no sanitizer and still holds.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;

/// The largest single allocation a target may make (libFuzzer's `-malloc_limit_mb=1024`).
pub const MALLOC_LIMIT: usize = 1 << 30;

/// The system allocator, refusing any one allocation past [`MALLOC_LIMIT`].
pub struct Capped;

#[cold]
fn past_limit(size: usize) -> ! {
    // No allocation here: the size's digits go through a buffer on the stack.
    let mut digits = [0u8; 20];
    let mut i = digits.len();
    let mut n = size;
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let mut err = std::io::stderr();
    let _ = err.write_all(b"==wai-fuzz== out-of-memory: malloc(");
    let _ = err.write_all(&digits[i..]);
    let _ = err.write_all(b") is past the fuzz targets' limit of 1024 MiB\n");
    std::process::abort()
}

// SAFETY: every call is forwarded unchanged to `System` once the size is checked.
unsafe impl GlobalAlloc for Capped {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if layout.size() > MALLOC_LIMIT {
            past_limit(layout.size());
        }
        // SAFETY: the caller's contract for `GlobalAlloc::alloc`, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if layout.size() > MALLOC_LIMIT {
            past_limit(layout.size());
        }
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > MALLOC_LIMIT {
            past_limit(new_size);
        }
        // SAFETY: the caller's contract for `GlobalAlloc::realloc`, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract for `GlobalAlloc::dealloc`, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
}
