//! §1's binary32 arithmetic on the hardware, under either tininess rule (docs/assumptions.md C1).
//!
//! With FTZ on, x86-64 flushes a result that is tiny **after** rounding (rounded to 24 bits with an
//! unbounded exponent, below 2^−126), aarch64 with FPCR.FZ one that is tiny **before** rounding (the
//! exact result below 2^−126). The two differ only on a product, quotient or narrowing whose exact
//! magnitude lies in `[T, 2^−126)`, `T = 2^−126·(1 − 2^−25)`: x86-64 gives ±2^−126, aarch64 ±0. (A
//! sum or difference that small is exact, so both flush it.)
//!
//! A [`Rule`] names one of the two; every multiplication, division and f64 → f32 narrowing of the
//! CIS-2 code goes through it. The host's own rule is the bare hardware operation; the other rule is
//! the hardware operation followed by a fix-up that looks at the one result where the rules can
//! part (±2^−126 on an after-rounding host, ±0 on a before-rounding one) and decides with exact
//! f64 comparisons: the product of two binary32 values is exact in binary64, and `|a/b| < 2^−126`
//! is `|a| < |b|·2^−126`, both sides exact in binary64. Addition, subtraction, sqrt, negation,
//! comparisons and integer conversions are the bare hardware operations under both rules.

/// 2^−126, the smallest normal binary32.
pub const MIN_NORMAL: f32 = f32::MIN_POSITIVE;
const MIN_NORMAL_F64: f64 = 1.1754943508222875e-38; // 2^-126, exact
/// `T = 2^−126·(1 − 2^−25)`, exact in binary64: the least magnitude that rounds to 2^−126.
const TINY_EDGE_F64: f64 = MIN_NORMAL_F64 - MIN_NORMAL_F64 / 33_554_432.0;

/// Whether the host hardware decides tininess after rounding (x86-64) rather than before (aarch64).
pub const HOST_AFTER: bool = !cfg!(target_arch = "aarch64");

/// A tininess rule.
pub trait Rule: Copy + Send + Sync + 'static {
    /// `"x86_64"` (after rounding) or `"aarch64"` (before rounding).
    const NAME: &'static str;
    fn mul(a: f32, b: f32) -> f32;
    fn div(a: f32, b: f32) -> f32;
    fn narrow(a: f64) -> f32;
}

/// Tininess after rounding: x86-64's rule, the suites' `expect`.
#[derive(Clone, Copy, Debug, Default)]
pub struct After;

/// Tininess before rounding: aarch64's rule (FPCR.FZ = 1, AH = 0), the suites' `expect.aarch64`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Before;

#[inline(always)]
fn is_min_normal(r: f32) -> bool {
    r.to_bits() & 0x7fff_ffff == 0x0080_0000
}

#[inline(always)]
fn is_zero_bits(r: f32) -> bool {
    r.to_bits() & 0x7fff_ffff == 0
}

/// Finite, nonzero and normal: an operand DAZ does not flush.
#[inline(always)]
fn is_normal(a: f32) -> bool {
    let e = (a.to_bits() >> 23) & 0xff;
    e != 0 && e != 0xff
}

/// The before-rounding result from the after-rounding one `r` (an after-rounding host's).
mod to_before {
    use super::*;

    #[inline(always)]
    pub fn mul(r: f32, a: f32, b: f32) -> f32 {
        // r = ±2^-126 from normal operands: the exact product decides.
        if is_min_normal(r) && (f64::from(a) * f64::from(b)).abs() < MIN_NORMAL_F64 {
            return 0.0f32.copysign(r);
        }
        r
    }

    #[inline(always)]
    pub fn div(r: f32, a: f32, b: f32) -> f32 {
        if is_min_normal(r) && f64::from(a).abs() < f64::from(b).abs() * MIN_NORMAL_F64 {
            return 0.0f32.copysign(r);
        }
        r
    }

    #[inline(always)]
    pub fn narrow(r: f32, a: f64) -> f32 {
        if is_min_normal(r) && a.abs() < MIN_NORMAL_F64 {
            return 0.0f32.copysign(r);
        }
        r
    }
}

/// The after-rounding result from the before-rounding one `r` (a before-rounding host's).
#[cfg_attr(not(any(target_arch = "aarch64", test)), allow(dead_code))]
mod to_after {
    use super::*;

    #[inline(always)]
    fn window(m: f64) -> bool {
        (TINY_EDGE_F64..MIN_NORMAL_F64).contains(&m)
    }

    #[inline(always)]
    pub fn mul(r: f32, a: f32, b: f32) -> f32 {
        if is_zero_bits(r) && is_normal(a) && is_normal(b) && window((f64::from(a) * f64::from(b)).abs()) {
            return MIN_NORMAL.copysign(r);
        }
        r
    }

    #[inline(always)]
    pub fn div(r: f32, a: f32, b: f32) -> f32 {
        if is_zero_bits(r) && is_normal(a) && is_normal(b) {
            let (na, nb) = (f64::from(a).abs(), f64::from(b).abs());
            // |b|·T and |b|·2^-126 are exact: 24 bits times 25 bits, and a power of two.
            if nb * TINY_EDGE_F64 <= na && na < nb * MIN_NORMAL_F64 {
                return MIN_NORMAL.copysign(r);
            }
        }
        r
    }

    #[inline(always)]
    pub fn narrow(r: f32, a: f64) -> f32 {
        if is_zero_bits(r) && a.is_finite() && window(a.abs()) {
            return MIN_NORMAL.copysign(r);
        }
        r
    }
}

impl Rule for After {
    const NAME: &'static str = "x86_64";
    #[inline(always)]
    fn mul(a: f32, b: f32) -> f32 {
        if HOST_AFTER { a * b } else { to_after::mul(a * b, a, b) }
    }
    #[inline(always)]
    fn div(a: f32, b: f32) -> f32 {
        if HOST_AFTER { a / b } else { to_after::div(a / b, a, b) }
    }
    #[inline(always)]
    fn narrow(a: f64) -> f32 {
        if HOST_AFTER {
            a as f32
        } else {
            to_after::narrow(a as f32, a)
        }
    }
}

impl Rule for Before {
    const NAME: &'static str = "aarch64";
    #[inline(always)]
    fn mul(a: f32, b: f32) -> f32 {
        if HOST_AFTER { to_before::mul(a * b, a, b) } else { a * b }
    }
    #[inline(always)]
    fn div(a: f32, b: f32) -> f32 {
        if HOST_AFTER { to_before::div(a / b, a, b) } else { a / b }
    }
    #[inline(always)]
    fn narrow(a: f64) -> f32 {
        if HOST_AFTER {
            to_before::narrow(a as f32, a)
        } else {
            a as f32
        }
    }
}

/// A binary32 value as the suites write it: 8 lowercase hex digits of its bits, every NaN
/// `7fc00000` (docs/assumptions.md C3).
pub fn hex32(v: f32) -> String {
    if v.is_nan() {
        "7fc00000".to_string()
    } else {
        format!("{:08x}", v.to_bits())
    }
}

/// A NaN replaced by `0x7fc00000` (C3), any other value as it is.
pub fn canonical_nan(v: f32) -> f32 {
    if v.is_nan() { f32::from_bits(0x7fc0_0000) } else { v }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fix-up a before-rounding host (aarch64) applies for x86-64's rule, run here on this
    /// host's before-rounding results: it must give back the after-rounding ones, and the reverse.
    #[test]
    fn each_fix_up_inverts_the_other() {
        let _p = super::super::env::pin().unwrap();
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut parted = 0;
        for n in 0..300_000u32 {
            let r = next();
            let ea = (r % 60) as u32 + 37; // biased exponents 37..96
            let eb = (254 - ea).saturating_sub((r >> 8) as u32 % 3);
            let a = f32::from_bits(((r >> 16) as u32 & 0x807f_ffff) | (ea << 23));
            let mut b = f32::from_bits(((r >> 40) as u32 & 0x007f_ffff) | (eb << 23));
            if n % 3 == 0 {
                // Aim at the window: b near 2^-126 / a.
                b = (f64::from(MIN_NORMAL) / f64::from(a)).abs() as f32;
                b = f32::from_bits(b.to_bits().wrapping_add((r >> 60) as u32));
            }
            let (after, before) = (After::mul(a, b), Before::mul(a, b));
            if HOST_AFTER {
                assert_eq!(to_after::mul(before, a, b).to_bits(), after.to_bits(), "{a:e} × {b:e}");
            } else {
                assert_eq!(to_before::mul(after, a, b).to_bits(), before.to_bits(), "{a:e} × {b:e}");
            }
            let p = f64::from(a) * f64::from(b);
            let (na, nb) = (After::narrow(p), Before::narrow(p));
            if HOST_AFTER {
                assert_eq!(to_after::narrow(nb, p).to_bits(), na.to_bits());
            } else {
                assert_eq!(to_before::narrow(na, p).to_bits(), nb.to_bits());
            }
            let (da, db) = (After::div(a, 1.0 / b), Before::div(a, 1.0 / b));
            assert_eq!(da.to_bits(), db.to_bits(), "no quotient lands in the window");
            if HOST_AFTER {
                assert_eq!(to_after::div(db, a, 1.0 / b).to_bits(), da.to_bits());
            }
            if after.to_bits() != before.to_bits() {
                parted += 1;
            }
        }
        assert!(parted > 1000, "{parted}");
    }
}
