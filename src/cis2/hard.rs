//! The host's binary32 with the FPU environment pinned (§1.3): the fast path.
//!
//! x86-64: MXCSR.FTZ (bit 15) and MXCSR.DAZ (bit 6) set by read-modify-write and read back;
//! aarch64: FPCR.FZ (bit 24). Any other ISA is refused. The environment is per thread, so the
//! fast path runs on its own thread pool, every thread of which is pinned and passes §1.3's
//! adversarial self-test before any CIS-2 arithmetic.

use super::arith::{Arith, F32, F64};
use super::reduce::{self, BLOCK, Tile};
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
    /// x86-64: SSE2's four-lane `mulps` and `addps`, each lane the same binary32 operation as
    /// `mulss` and `addss` under the same MXCSR, over the tile turned on its side.
    #[cfg(target_arch = "x86_64")]
    fn tile_steps(&self, tile: &Tile, c0: usize, width: usize, xs: &[Vec<F32>], acc: &mut [[F32; BLOCK]]) {
        if width < BLOCK {
            return reduce::tile_steps(self, tile, c0, width, xs, acc);
        }
        let columns = sse2::columns(tile);
        for (acc, x) in acc.iter_mut().zip(xs) {
            sse2::steps(&columns, &x[c0..c0 + BLOCK], acc);
        }
    }
}

/// [`Arith::tile_steps`] in SSE2 (every x86-64 has it): a tile's eight bf16 rows transposed
/// into eight columns and widened, four rows a register.
#[cfg(target_arch = "x86_64")]
mod sse2 {
    use super::{BLOCK, F32, Tile};
    use std::arch::x86_64::*;

    /// Column `c`'s rows 0–3 at `[2c]` and rows 4–7 at `[2c + 1]`, each widened (§4.1: the
    /// pattern in a binary32's top half).
    pub fn columns(tile: &Tile) -> [__m128; 2 * BLOCK] {
        // SAFETY: SSE2 is part of x86-64; the loads are unaligned loads of 16-byte arrays.
        unsafe {
            let r: [__m128i; BLOCK] = std::array::from_fn(|i| _mm_loadu_si128(tile[i].as_ptr().cast()));
            // The 8 × 8 transpose of 16-bit lanes in three rounds of interleaving.
            let a = [
                _mm_unpacklo_epi16(r[0], r[1]),
                _mm_unpackhi_epi16(r[0], r[1]),
                _mm_unpacklo_epi16(r[2], r[3]),
                _mm_unpackhi_epi16(r[2], r[3]),
                _mm_unpacklo_epi16(r[4], r[5]),
                _mm_unpackhi_epi16(r[4], r[5]),
                _mm_unpacklo_epi16(r[6], r[7]),
                _mm_unpackhi_epi16(r[6], r[7]),
            ];
            let b = [
                _mm_unpacklo_epi32(a[0], a[2]),
                _mm_unpackhi_epi32(a[0], a[2]),
                _mm_unpacklo_epi32(a[1], a[3]),
                _mm_unpackhi_epi32(a[1], a[3]),
                _mm_unpacklo_epi32(a[4], a[6]),
                _mm_unpackhi_epi32(a[4], a[6]),
                _mm_unpacklo_epi32(a[5], a[7]),
                _mm_unpackhi_epi32(a[5], a[7]),
            ];
            let zero = _mm_setzero_si128();
            let mut out = [_mm_setzero_ps(); 2 * BLOCK];
            for c in 0..BLOCK {
                // Columns 2k and 2k + 1 come from b[k] (rows 0–3) and b[k + 4] (rows 4–7).
                let (lo, hi) = (b[c / 2], b[c / 2 + 4]);
                let column = if c % 2 == 0 {
                    _mm_unpacklo_epi64(lo, hi)
                } else {
                    _mm_unpackhi_epi64(lo, hi)
                };
                out[2 * c] = _mm_castsi128_ps(_mm_unpacklo_epi16(zero, column));
                out[2 * c + 1] = _mm_castsi128_ps(_mm_unpackhi_epi16(zero, column));
            }
            out
        }
    }

    /// `acc[r] ← acc[r] + column_c[r]·x[c]` for `c` in `0..BLOCK`, in order.
    pub fn steps(columns: &[__m128; 2 * BLOCK], x: &[F32], acc: &mut [F32; BLOCK]) {
        // SAFETY: SSE2 is part of x86-64; `acc` is eight binary32 patterns, loaded unaligned.
        unsafe {
            let p = acc.as_mut_ptr().cast::<f32>();
            let (mut lo, mut hi) = (_mm_loadu_ps(p), _mm_loadu_ps(p.add(4)));
            for (c, &xc) in x.iter().enumerate() {
                let xc = _mm_set1_ps(f32::from_bits(xc.0));
                lo = _mm_add_ps(lo, _mm_mul_ps(columns[2 * c], xc));
                hi = _mm_add_ps(hi, _mm_mul_ps(columns[2 * c + 1], xc));
            }
            _mm_storeu_ps(p, lo);
            _mm_storeu_ps(p.add(4), hi);
        }
    }
}
