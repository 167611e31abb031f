//! The host's binary32 with the FPU environment pinned (§1.3): the fast path.
//!
//! x86-64: MXCSR.FTZ (bit 15) and MXCSR.DAZ (bit 6) set by read-modify-write and read back;
//! aarch64: FPCR.FZ (bit 24). Any other ISA is refused. The environment is per thread, so the
//! fast path runs on its own thread pool, every thread of which is pinned and passes §1.3's
//! adversarial self-test before any CIS-2 arithmetic.

use super::arith::{Arith, F32, F64};
use std::hint::black_box;

/// The host's arithmetic. Only [`Pinned::run`] hands one out, on a pinned thread.
pub struct Hard(());

/// A thread pool whose every thread has FTZ/DAZ pinned and self-tested.
pub struct Pinned {
    pool: rayon::ThreadPool,
}

impl Pinned {
    /// A pool of `threads` threads (0: one per core), each pinned and self-tested.
    pub fn new(threads: usize) -> Result<Pinned, String> {
        pin()?; // refuse early, on this thread, on an ISA with no such control
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("cis2-pinned-{i}"))
            .start_handler(|_| pin().unwrap_or_else(|e| panic!("{e}")))
            .build()
            .map_err(|e| e.to_string())?;
        // Every thread checks its own environment again (the start handler cannot report).
        let checks = pool.broadcast(|_| check());
        checks.into_iter().collect::<Result<Vec<()>, String>>()?;
        Ok(Pinned { pool })
    }

    /// Runs `f` on the pool with the host's arithmetic; `f`'s parallel iterators stay on the pool.
    pub fn run<R: Send>(&self, f: impl FnOnce(&Hard) -> R + Send) -> R {
        self.pool.install(|| f(&Hard(())))
    }
}

/// Sets FTZ and DAZ on this thread, reads them back, and runs the self-test.
fn pin() -> Result<(), String> {
    control::set()?;
    check()
}

/// The readback and §1.3's adversarial self-test, through an optimisation barrier.
fn check() -> Result<(), String> {
    if !control::is_set() {
        return Err("CIS-2 §1.3: the flush-to-zero control reads back unset".into());
    }
    let product = black_box(f32::MIN_POSITIVE) * black_box(1.0e-10f32);
    let sum = black_box(f32::from_bits(1)) + black_box(0.0f32);
    if product.to_bits() != 0 || sum.to_bits() != 0 {
        return Err(format!(
            "CIS-2 §1.3 self-test failed: 2^-126 * 1e-10 = {:#010x}, 0x00000001 + 0 = {:#010x} (both must be +0)",
            product.to_bits(),
            sum.to_bits()
        ));
    }
    Ok(())
}

#[cfg(target_arch = "x86_64")]
mod control {
    use std::arch::asm;

    const FTZ: u32 = 1 << 15;
    const DAZ: u32 = 1 << 6;

    fn read() -> u32 {
        let mut csr = 0u32;
        // SAFETY: stmxcsr stores the 32-bit MXCSR into the local it is given.
        unsafe { asm!("stmxcsr [{}]", in(reg) &mut csr, options(nostack)) };
        csr
    }

    pub fn set() -> Result<(), String> {
        let csr = read() | FTZ | DAZ;
        // SAFETY: ldmxcsr loads a valid MXCSR (the current one with two mode bits set).
        unsafe { asm!("ldmxcsr [{}]", in(reg) &csr, options(nostack, readonly)) };
        Ok(())
    }

    pub fn is_set() -> bool {
        read() & (FTZ | DAZ) == FTZ | DAZ
    }
}

#[cfg(target_arch = "aarch64")]
mod control {
    use std::arch::asm;

    const FZ: u64 = 1 << 24;

    fn read() -> u64 {
        let fpcr: u64;
        // SAFETY: reading FPCR has no side effect.
        unsafe { asm!("mrs {}, fpcr", out(reg) fpcr, options(nomem, nostack)) };
        fpcr
    }

    pub fn set() -> Result<(), String> {
        let fpcr = read() | FZ;
        // SAFETY: writes FPCR with only FZ changed (FZ16 left as it was, §1.3).
        unsafe { asm!("msr fpcr, {}", in(reg) fpcr, options(nomem, nostack)) };
        Ok(())
    }

    pub fn is_set() -> bool {
        read() & FZ != 0
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
mod control {
    pub fn set() -> Result<(), String> {
        Err("CIS-2 §1.3: this ISA has no flush-to-zero control the spec defines; refusing to run".into())
    }

    pub fn is_set() -> bool {
        false
    }
}

fn f(a: F32) -> f32 {
    f32::from_bits(a.0)
}

fn b(x: f32) -> F32 {
    F32(x.to_bits())
}

fn d(a: F64) -> f64 {
    f64::from_bits(a.0)
}

fn e(x: f64) -> F64 {
    F64(x.to_bits())
}

impl Arith for Hard {
    fn add(&self, x: F32, y: F32) -> F32 {
        b(f(x) + f(y))
    }
    fn sub(&self, x: F32, y: F32) -> F32 {
        b(f(x) - f(y))
    }
    fn mul(&self, x: F32, y: F32) -> F32 {
        b(f(x) * f(y))
    }
    fn div(&self, x: F32, y: F32) -> F32 {
        b(f(x) / f(y))
    }
    fn sqrt(&self, x: F32) -> F32 {
        b(f(x).sqrt())
    }
    fn gt(&self, x: F32, y: F32) -> bool {
        f(x) > f(y)
    }
    fn lt(&self, x: F32, y: F32) -> bool {
        f(x) < f(y)
    }
    fn eq(&self, x: F32, y: F32) -> bool {
        f(x) == f(y)
    }
    fn floor(&self, x: F32) -> F32 {
        b(f(x).floor())
    }
    fn to_i32(&self, x: F32) -> i32 {
        f(x) as i32
    }
    fn of_int(&self, n: i64) -> F32 {
        b(n as f32)
    }
    fn widen(&self, x: F32) -> F64 {
        e(f64::from(f(x)))
    }
    fn narrow(&self, x: F64) -> F32 {
        b(d(x) as f32)
    }
    fn sub64(&self, x: F64, y: F64) -> F64 {
        e(d(x) - d(y))
    }
    fn mul64(&self, x: F64, y: F64) -> F64 {
        e(d(x) * d(y))
    }
    fn div64(&self, x: F64, y: F64) -> F64 {
        e(d(x) / d(y))
    }
    fn round64(&self, x: F64) -> F64 {
        e(d(x).round())
    }
    fn to_i64(&self, x: F64) -> i64 {
        d(x) as i64
    }
}
