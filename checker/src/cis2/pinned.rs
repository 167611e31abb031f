//! §6: the pinned functions, step by step as written, every product, quotient and narrowing through
//! a tininess [`Rule`], every sum and difference the bare hardware operation; and §6.6's table
//! digest.
//!
//! Two helpers replace library calls the spec names by their semantics: `floor` (§6.2 step 4) and
//! `f64::round` (§6.3, ties away from zero) are computed from an exact truncation to an integer, so
//! no libm routine is on the path.

use super::arith::Rule;
use sha2::{Digest, Sha256};

const fn f(bits: u32) -> f32 {
    f32::from_bits(bits)
}

pub const EXP_LOG2E: f32 = f(0x3FB8AA3B);
pub const EXP_C1: f32 = f(0x3F318000);
pub const EXP_C2: f32 = f(0xB95E8083);
pub const EXP_P: [f32; 6] = [
    f(0x39506967),
    f(0x3AB743CE),
    f(0x3C088908),
    f(0x3D2AA9C1),
    f(0x3E2AAAAA),
    f(0x3F000000),
];
pub const PI_2_F64: f64 = f64::from_bits(0x3FF921FB54442D18);
pub const SIN_C: [f32; 3] = [f(0xBE2AAAA3), f(0x3C08839E), f(0xB94CA1F9)];
pub const COS_C: [f32; 3] = [f(0x3D2AAAA5), f(0xBAB6061A), f(0x37CCF5CE)];
pub const LOG_SQRTHF: f32 = f(0x3F3504F3);
pub const LOG_Q1: f32 = f(0xB95E8083);
pub const LOG_Q2: f32 = f(0x3F318000);
pub const LOG_P: [f32; 9] = [
    f(0x3D9021BB),
    f(0xBDEBD1B8),
    f(0x3DEF251B),
    f(0xBDFE5D4F),
    f(0x3E11E9BF),
    f(0xBE2AAE50),
    f(0x3E4CCEAD),
    f(0xBE7FFFFC),
    f(0x3EAAAAAA),
];

/// §6.6: SHA-256 over the coefficients' little-endian bytes in the declared order.
pub fn table_digest() -> [u8; 32] {
    let mut h = Sha256::new();
    let mut put = |v: f32| h.update(v.to_bits().to_le_bytes());
    for v in [EXP_LOG2E, EXP_C1, EXP_C2] {
        put(v);
    }
    EXP_P.iter().for_each(|&v| put(v));
    h.update(PI_2_F64.to_bits().to_le_bytes());
    let mut put = |v: f32| h.update(v.to_bits().to_le_bytes());
    SIN_C.iter().for_each(|&v| put(v));
    COS_C.iter().for_each(|&v| put(v));
    put(LOG_SQRTHF);
    put(LOG_Q1);
    put(LOG_Q2);
    LOG_P.iter().for_each(|&v| put(v));
    h.finalize().into()
}

/// §6.1: `1.0 / x.sqrt()`, both correctly rounded.
#[inline]
pub fn rsqrt<R: Rule>(x: f32) -> f32 {
    R::div(1.0, x.sqrt())
}

/// §6.2.1: replaces the biased exponent field; `k` is any integer.
pub fn ldexp_exact(x: f32, k: i128) -> f32 {
    // A comparison: under DAZ a subnormal x equals 0.0 and is returned as it is (C2).
    if x == 0.0 {
        return x;
    }
    let bits = x.to_bits();
    let exp_bits = i128::from((bits >> 23) & 0xff);
    let new_exp = exp_bits.saturating_add(k);
    if new_exp <= 0 {
        return 0.0;
    }
    if new_exp >= 0xff {
        return if x.is_sign_negative() {
            f32::NEG_INFINITY
        } else {
            f32::INFINITY
        };
    }
    f32::from_bits((bits & !(0xff << 23)) | ((new_exp as u32) << 23))
}

/// `floor` for §6.2 step 4, from an exact truncation. Values of magnitude 2^23 or more, infinities
/// and NaN are their own floor.
fn floor_f32(z: f32) -> f32 {
    if z.is_nan() || z.abs() >= 8_388_608.0 {
        return z;
    }
    let t = z as i32 as f32; // toward zero, exact below 2^23
    if t > z {
        t - 1.0
    } else if t == 0.0 {
        z * 0.0 // ±0 keeps z's sign (z is ±0 or in (0, 1))
    } else {
        t
    }
}

/// §6.2: `exp_pinned`.
pub fn exp_pinned<R: Rule>(x: f32) -> f32 {
    if x.is_nan() {
        return f32::NAN;
    }
    if x > 88.0 {
        return f32::INFINITY;
    }
    if x < -88.0 {
        return 0.0;
    }
    let t = R::mul(x, EXP_LOG2E);
    let z0 = t + 0.5;
    let k = floor_f32(z0);
    let kc1 = R::mul(k, EXP_C1);
    let r0 = x - kc1;
    let kc2 = R::mul(k, EXP_C2);
    let r = r0 - kc2;
    let r2 = R::mul(r, r);
    let mut poly = EXP_P[0];
    for &p in &EXP_P[1..] {
        poly = R::mul(poly, r) + p;
    }
    let m1 = R::mul(poly, r2);
    let poly2 = m1 + r;
    let result = poly2 + 1.0;
    // k is an integer in [-127, 128] here: exact.
    ldexp_exact(result, k as i128)
}

/// §6.5.1: `(mantissa, exponent)` by bit reinterpretation.
pub fn frexp_exact(x: f32) -> (f32, i32) {
    let bits = x.to_bits();
    let exp_bits = ((bits >> 23) & 0xff) as i32;
    let mantissa = f32::from_bits((bits & 0x807f_ffff) | (126 << 23));
    (mantissa, exp_bits - 126)
}

/// §6.5: `ln_pinned`.
pub fn ln_pinned<R: Rule>(x: f32) -> f32 {
    if x.is_nan() || x < 0.0 {
        return f32::NAN;
    }
    if x == 0.0 {
        return f32::NEG_INFINITY;
    }
    let (mut m, mut e) = frexp_exact(x);
    if m < LOG_SQRTHF {
        e -= 1;
        m = m + m - 1.0;
    } else {
        m = m - 1.0;
    }
    let z = R::mul(m, m);
    let mut poly = LOG_P[0];
    for &p in &LOG_P[1..] {
        poly = R::mul(poly, m) + p;
    }
    let mut y = R::mul(poly, m);
    y = R::mul(y, z);
    let fe = e as f32;
    let t1 = R::mul(fe, LOG_Q1);
    y = y + t1;
    let half_z = R::mul(0.5, z);
    y = y - half_z;
    let mut result = m + y;
    let t2 = R::mul(fe, LOG_Q2);
    result = result + t2;
    result
}

/// `f64::round` (ties away from zero) from an exact truncation: values of magnitude 2^52 or more,
/// infinities and NaN are integral already.
fn round_away(q: f64) -> f64 {
    if q.is_nan() || q.abs() >= 4_503_599_627_370_496.0 {
        return q;
    }
    let t = q as i64 as f64;
    let d = q - t; // exact
    if d >= 0.5 {
        t + 1.0
    } else if d <= -0.5 {
        t - 1.0
    } else if t == 0.0 {
        0.0f64.copysign(q)
    } else {
        t
    }
}

/// §6.3's reduction: `(r, quadrant)`. `k as i64` is Rust's cast (saturating past ±2^63).
fn reduce<R: Rule>(x: f32) -> (f32, i64) {
    let xd = f64::from(x);
    let k = round_away(xd / PI_2_F64);
    let khi = k * PI_2_F64;
    let r64 = xd - khi;
    let r = R::narrow(r64);
    let quadrant = ((k as i64) % 4 + 4) % 4;
    (r, quadrant)
}

fn sin_poly<R: Rule>(r: f32) -> f32 {
    let r2 = R::mul(r, r);
    let mut inner = SIN_C[2];
    inner = R::mul(inner, r2) + SIN_C[1];
    inner = R::mul(inner, r2) + SIN_C[0];
    let r3 = R::mul(r2, r);
    let term = R::mul(inner, r3);
    r + term
}

fn cos_poly<R: Rule>(r: f32) -> f32 {
    let r2 = R::mul(r, r);
    let mut inner = COS_C[2];
    inner = R::mul(inner, r2) + COS_C[1];
    inner = R::mul(inner, r2) + COS_C[0];
    let r4 = R::mul(r2, r2);
    let term = R::mul(inner, r4);
    let half_r2 = R::mul(0.5, r2);
    let step1 = 1.0 - half_r2;
    step1 + term
}

/// §6.3: `sin_pinned`.
pub fn sin_pinned<R: Rule>(x: f32) -> f32 {
    let (r, q) = reduce::<R>(x);
    match q {
        0 => sin_poly::<R>(r),
        1 => cos_poly::<R>(r),
        2 => -sin_poly::<R>(r),
        _ => -cos_poly::<R>(r),
    }
}

/// §6.3: `cos_pinned`.
pub fn cos_pinned<R: Rule>(x: f32) -> f32 {
    let (r, q) = reduce::<R>(x);
    match q {
        0 => cos_poly::<R>(r),
        1 => -sin_poly::<R>(r),
        2 => -cos_poly::<R>(r),
        _ => sin_poly::<R>(r),
    }
}

/// §6.4: `x / (1.0 + exp_pinned(-x))`.
pub fn silu<R: Rule>(x: f32) -> f32 {
    let neg = -x;
    let e = exp_pinned::<R>(neg);
    let denom = 1.0 + e;
    R::div(x, denom)
}
