//! The binary32 (and the few binary64) operations CIS-2's functions are written in (§1), and
//! their exact software implementation.

use super::reduce::{self, BLOCK, Tile};
use crate::softfloat::{BINARY32, BINARY64, Env, Integral, Tininess};
use std::cmp::Ordering;

/// A binary32 value, by its bit pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct F32(pub u32);

/// A binary64 value, by its bit pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct F64(pub u64);

impl F32 {
    pub const ZERO: F32 = F32(0);
    pub const HALF: F32 = F32(0x3F00_0000);
    pub const ONE: F32 = F32(0x3F80_0000);
    pub const INFINITY: F32 = F32(0x7F80_0000);
    pub const NEG_INFINITY: F32 = F32(0xFF80_0000);
    /// The NaN every NaN is written as (docs/assumptions.md C3).
    pub const NAN: F32 = F32(0x7FC0_0000);

    pub fn is_nan(self) -> bool {
        self.0 & 0x7FFF_FFFF > 0x7F80_0000
    }
    /// The bits as a suite writes them: any NaN as [`F32::NAN`].
    pub fn canonical(self) -> F32 {
        if self.is_nan() { F32::NAN } else { self }
    }
    pub fn le_bytes(self) -> [u8; 4] {
        self.0.to_le_bytes()
    }
}

/// `-x`: a sign flip, not an arithmetic operation (docs/assumptions.md C2).
impl std::ops::Neg for F32 {
    type Output = F32;
    fn neg(self) -> F32 {
        F32(self.0 ^ 0x8000_0000)
    }
}

/// The operations of §1 (binary32, and binary64 for §6.3's reduction), each rounded once to
/// nearest even under FTZ/DAZ. Comparisons read subnormal operands as zero, as the hardware's do.
pub trait Arith: Sync {
    fn add(&self, a: F32, b: F32) -> F32;
    fn sub(&self, a: F32, b: F32) -> F32;
    fn mul(&self, a: F32, b: F32) -> F32;
    fn div(&self, a: F32, b: F32) -> F32;
    fn sqrt(&self, a: F32) -> F32;
    /// `a > b`; false when either is NaN.
    fn gt(&self, a: F32, b: F32) -> bool;
    /// `a < b`; false when either is NaN.
    fn lt(&self, a: F32, b: F32) -> bool;
    /// `a == b`; `+0 == −0`.
    fn eq(&self, a: F32, b: F32) -> bool;
    /// `a.floor()`.
    fn floor(&self, a: F32) -> F32;
    /// `a as i32` (truncating, saturating).
    fn to_i32(&self, a: F32) -> i32;
    /// `n as f32`.
    fn of_int(&self, n: i64) -> F32;
    /// `a as f64`.
    fn widen(&self, a: F32) -> F64;
    /// `a as f32`, from binary64.
    fn narrow(&self, a: F64) -> F32;
    fn sub64(&self, a: F64, b: F64) -> F64;
    fn mul64(&self, a: F64, b: F64) -> F64;
    fn div64(&self, a: F64, b: F64) -> F64;
    /// `a.round()`: ties away from zero.
    fn round64(&self, a: F64) -> F64;
    /// `a as i64`.
    fn to_i64(&self, a: F64) -> i64;

    /// [`reduce::tile_steps`]: a matrix-vector product's inner steps, which a faster form may
    /// take with the same roundings.
    fn tile_steps(&self, tile: &Tile, c0: usize, width: usize, xs: &[Vec<F32>], acc: &mut [[F32; BLOCK]])
    where
        Self: Sized,
    {
        reduce::tile_steps(self, tile, c0, width, xs, acc)
    }
}

/// The exact software binary32 under §1.3's FTZ/DAZ, with a tininess rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Soft {
    pub env: Env,
}

impl Soft {
    /// x86-64's rule: tininess after rounding (the suites' `expect`).
    pub const X86_64: Soft = Soft {
        env: Env::Flush(Tininess::AfterRounding),
    };
    /// aarch64's rule: tininess before rounding (the suites' `expect.aarch64`).
    pub const AARCH64: Soft = Soft {
        env: Env::Flush(Tininess::BeforeRounding),
    };

    /// The rule of the host this runs on, to compare with [`crate::cis2::hard::Hard`].
    pub fn host() -> Soft {
        if cfg!(target_arch = "aarch64") {
            Soft::AARCH64
        } else {
            Soft::X86_64
        }
    }

    fn f32_op(&self, op: fn(Env, crate::softfloat::Format, u64, u64) -> u64, a: F32, b: F32) -> F32 {
        F32(op(self.env, BINARY32, u64::from(a.0), u64::from(b.0)) as u32)
    }

    fn cmp(&self, a: F32, b: F32) -> Option<Ordering> {
        self.env.compare(BINARY32, u64::from(a.0), u64::from(b.0))
    }
}

impl Arith for Soft {
    fn add(&self, a: F32, b: F32) -> F32 {
        F32(self.env.add32(a.0, b.0))
    }
    fn sub(&self, a: F32, b: F32) -> F32 {
        F32(self.env.add32(a.0, (-b).0))
    }
    fn mul(&self, a: F32, b: F32) -> F32 {
        F32(self.env.mul32(a.0, b.0))
    }
    fn div(&self, a: F32, b: F32) -> F32 {
        self.f32_op(Env::div, a, b)
    }
    fn sqrt(&self, a: F32) -> F32 {
        F32(self.env.sqrt(BINARY32, u64::from(a.0)) as u32)
    }
    fn gt(&self, a: F32, b: F32) -> bool {
        self.cmp(a, b) == Some(Ordering::Greater)
    }
    fn lt(&self, a: F32, b: F32) -> bool {
        self.cmp(a, b) == Some(Ordering::Less)
    }
    fn eq(&self, a: F32, b: F32) -> bool {
        self.cmp(a, b) == Some(Ordering::Equal)
    }
    fn floor(&self, a: F32) -> F32 {
        F32(self.env.integral(BINARY32, u64::from(a.0), Integral::Floor) as u32)
    }
    fn to_i32(&self, a: F32) -> i32 {
        self.env
            .to_int(BINARY32, u64::from(a.0))
            .clamp(i32::MIN.into(), i32::MAX.into()) as i32
    }
    fn of_int(&self, n: i64) -> F32 {
        F32(self.env.from_int(BINARY32, n) as u32)
    }
    fn widen(&self, a: F32) -> F64 {
        F64(self.env.convert(BINARY32, BINARY64, u64::from(a.0)))
    }
    fn narrow(&self, a: F64) -> F32 {
        F32(self.env.convert(BINARY64, BINARY32, a.0) as u32)
    }
    fn sub64(&self, a: F64, b: F64) -> F64 {
        F64(self.env.sub(BINARY64, a.0, b.0))
    }
    fn mul64(&self, a: F64, b: F64) -> F64 {
        F64(self.env.mul(BINARY64, a.0, b.0))
    }
    fn div64(&self, a: F64, b: F64) -> F64 {
        F64(self.env.div(BINARY64, a.0, b.0))
    }
    fn round64(&self, a: F64) -> F64 {
        F64(self.env.integral(BINARY64, a.0, Integral::RoundHalfAway))
    }
    fn to_i64(&self, a: F64) -> i64 {
        self.env.to_int(BINARY64, a.0)
    }
}
