//! §3 caps: a size past 2^26 (or past `max_elems`) is refused `too_large` before
//! anything of that size is allocated. The proof is an allocator that records
//! the largest single allocation the test binary makes.

mod common;
use common::*;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use wai_oracle::num::Round;
use wai_oracle::refusal::Code;
use wai_oracle::whg1::build::{Builder, Geometry};
use wai_oracle::whg1::{ConvTranspose, FillValue, Op, PerChannel, Rq};

struct Largest;

static LARGEST: AtomicUsize = AtomicUsize::new(0);

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
static ALLOCATOR: Largest = Largest;

/// Tests in this file measure one at a time.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The largest single allocation `f` makes, with its result.
fn largest_allocation<T>(f: impl FnOnce() -> T) -> (usize, T) {
    LARGEST.store(0, Ordering::Relaxed);
    let out = f();
    (LARGEST.load(Ordering::Relaxed), out)
}

const MIB: usize = 1 << 20;

#[test]
fn the_counter_sees_a_planned_tensor() {
    // A pad_rep to [1, 256, 256] allocates 2^16 elements of at least 8 bytes each: the
    // counter sees at least 512 KiB, so a tensor of 2^26 elements could not go unseen.
    let _guard = ONE_AT_A_TIME.lock().unwrap();
    let mut b = Builder::new();
    let x = b.input(1, any());
    let y = b.op(Op::PadRep { m: 256 }, &[x], 1);
    b.output(y);
    let g = b.build();
    let (largest, out) = largest_allocation(|| decode(&g, vec![t(1, 1, 1, &[3])], vec![]));
    assert_eq!(out.unwrap()[0].data.len(), 1 << 16);
    assert!(largest >= 8 << 16, "largest allocation {largest}");
}

#[test]
fn an_output_past_max_elems_is_refused_without_allocating_it() {
    // [1, 1, 1] padded by m = 8193 is [1, 8193, 8193]: 67,125,249 > 2^26 elements.
    let _guard = ONE_AT_A_TIME.lock().unwrap();
    let mut b = Builder::new();
    let x = b.input(1, any());
    let y = b.op(Op::PadRep { m: 8193 }, &[x], 1);
    b.output(y);
    let g = b.build();
    let (largest, code) = largest_allocation(|| refusal(&g, vec![t(1, 1, 1, &[3])], vec![]));
    assert_eq!(code, Code::TooLarge);
    assert!(largest < MIB, "largest allocation {largest}");
}

#[test]
fn a_declared_size_past_the_cap_is_refused_at_load_without_allocating() {
    // Declared [1, 2^16, 2^16] is 2^32 elements: too_large at load (A3).
    let _guard = ONE_AT_A_TIME.lock().unwrap();
    let mut b = Builder::new();
    let x = b.input_sized(1, any(), 1 << 16, 1 << 16);
    let y = b.op(Op::Relu, &[x], 1);
    b.output(y);
    let g = b.build();
    let (largest, code) = largest_allocation(|| load_refusal(&g));
    assert_eq!(code, Code::TooLarge);
    assert!(largest < MIB, "largest allocation {largest}");
}

#[test]
fn an_uncropped_transposed_output_past_the_cap_is_refused_without_allocating() {
    // cout = 2^12, 1×1 kernel, stride 1: uncropped 2^12 · 2^8 · 2^8 = 2^28 elements.
    let _guard = ONE_AT_A_TIME.lock().unwrap();
    let mut b = Builder::new();
    let x = b.input(1, any());
    let geom = Geometry {
        k: (1, 1),
        s: (1, 1),
        p: (0, 0),
    };
    let c = ConvTranspose::new(
        1 << 12,
        geom,
        (0, 0),
        vec![1; 1 << 12],
        Rq::new(Round::Floor, PerChannel::One(0)),
    );
    let y = b.op(Op::ConvTranspose(c), &[x], 1 << 12);
    b.output(y);
    let g = b.build();
    let input = vec![0; 1 << 16];
    let (largest, code) = largest_allocation(|| refusal(&g, vec![t(1, 1 << 8, 1 << 8, &input)], vec![]));
    assert_eq!(code, Code::TooLarge);
    // The weights (2^12 of them) and the input are the only sizeable allocations.
    assert!(largest < 4 * MIB, "largest allocation {largest}");
}

#[test]
fn a_state_init_past_max_elems_is_refused_before_it_is_formed() {
    // The state has 2^17 channels; sized from input 0 = [1, 1, 1024] it would be 2^27 elements.
    let _guard = ONE_AT_A_TIME.lock().unwrap();
    let mut b = Builder::new();
    let x = b.input(1, any());
    let s = b.state(1 << 17, any(), 0, 0, 0, 0);
    let f = b.op(Op::Fill(FillValue::Const(0)), &[x], 1 << 17);
    let r = b.op(Op::Relu, &[s], 1 << 17);
    b.output(f);
    b.output(r);
    let g = b.build();
    let (largest, code) = largest_allocation(|| refusal(&g, vec![t(1, 1, 1024, &[0; 1024])], vec![]));
    assert_eq!(code, Code::TooLarge);
    assert!(largest < MIB, "largest allocation {largest}");
}
