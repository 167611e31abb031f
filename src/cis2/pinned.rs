//! §6: the transcendental functions, each pinned to its coefficients and its order of
//! operations, and the table digest. Each line is one rounded operation of the spec's text.

use super::arith::{Arith, F32, F64};
use sha2::{Digest, Sha256};

// §6.2 exp.
pub const EXP_LOG2E: F32 = F32(0x3FB8_AA3B);
pub const EXP_C1: F32 = F32(0x3F31_8000);
pub const EXP_C2: F32 = F32(0xB95E_8083);
pub const EXP_P: [F32; 6] = [
    F32(0x3950_6967),
    F32(0x3AB7_43CE),
    F32(0x3C08_8908),
    F32(0x3D2A_A9C1),
    F32(0x3E2A_AAAA),
    F32(0x3F00_0000),
];
/// `88.0` and `−88.0`, §6.2 steps 2 and 3.
const EXP_HI: F32 = F32(0x42B0_0000);
const EXP_LO: F32 = F32(0xC2B0_0000);

// §6.3 sin/cos.
pub const PI_2_F64: F64 = F64(0x3FF9_21FB_5444_2D18);
pub const SIN_C: [F32; 3] = [F32(0xBE2A_AAA3), F32(0x3C08_839E), F32(0xB94C_A1F9)];
pub const COS_C: [F32; 3] = [F32(0x3D2A_AAA5), F32(0xBAB6_061A), F32(0x37CC_F5CE)];

// §6.5 ln.
pub const LOG_SQRTHF: F32 = F32(0x3F35_04F3);
pub const LOG_Q1: F32 = F32(0xB95E_8083);
pub const LOG_Q2: F32 = F32(0x3F31_8000);
pub const LOG_P: [F32; 9] = [
    F32(0x3D90_21BB),
    F32(0xBDEB_D1B8),
    F32(0x3DEF_251B),
    F32(0xBDFE_5D4F),
    F32(0x3E11_E9BF),
    F32(0xBE2A_AE50),
    F32(0x3E4C_CEAD),
    F32(0xBE7F_FFFC),
    F32(0x3EAA_AAAA),
];

/// §6.1: `1.0 / x.sqrt()`.
pub fn rsqrt(a: &impl Arith, x: F32) -> F32 {
    a.div(F32::ONE, a.sqrt(x))
}

/// §6.2.1: `2^k · x` by replacing the exponent field.
pub fn ldexp_exact(a: &impl Arith, x: F32, k: i32) -> F32 {
    if a.eq(x, F32::ZERO) {
        return x;
    }
    let exp_bits = ((x.0 >> 23) & 0xFF) as i64;
    let new_exp = exp_bits + i64::from(k);
    if new_exp <= 0 {
        return F32::ZERO;
    }
    if new_exp >= 0xFF {
        return if x.0 >> 31 == 1 {
            F32::NEG_INFINITY
        } else {
            F32::INFINITY
        };
    }
    F32((x.0 & !(0xFF << 23)) | ((new_exp as u32) << 23))
}

/// §6.2: `exp`, Cephes pattern.
pub fn exp_pinned(a: &impl Arith, x: F32) -> F32 {
    if x.is_nan() {
        return F32::NAN;
    }
    if a.gt(x, EXP_HI) {
        return F32::INFINITY;
    }
    if a.lt(x, EXP_LO) {
        return F32::ZERO;
    }
    let t = a.mul(x, EXP_LOG2E);
    let z0 = a.add(t, F32::HALF);
    let k = a.floor(z0);
    let kc1 = a.mul(k, EXP_C1);
    let r0 = a.sub(x, kc1);
    let kc2 = a.mul(k, EXP_C2);
    let r = a.sub(r0, kc2);
    let r2 = a.mul(r, r);
    let mut poly = EXP_P[0];
    for p in &EXP_P[1..] {
        poly = a.add(a.mul(poly, r), *p);
    }
    let m1 = a.mul(poly, r2);
    let poly2 = a.add(m1, r);
    let result = a.add(poly2, F32::ONE);
    ldexp_exact(a, result, a.to_i32(k))
}

/// §6.3's reduction: `r ∈ [−π/4, π/4]` and the quadrant, staged in binary64.
fn octant(a: &impl Arith, x: F32) -> (F32, i64) {
    let xd = a.widen(x);
    let k = a.round64(a.div64(xd, PI_2_F64));
    let khi = a.mul64(k, PI_2_F64);
    let r64 = a.sub64(xd, khi);
    let r = a.narrow(r64);
    let quadrant = (a.to_i64(k) % 4 + 4) % 4;
    (r, quadrant)
}

/// §6.3: `r + r³·(SIN_C0 + r²·(SIN_C1 + r²·SIN_C2))`.
fn sin_poly(a: &impl Arith, r: F32) -> F32 {
    let r2 = a.mul(r, r);
    let mut inner = SIN_C[2];
    inner = a.add(a.mul(inner, r2), SIN_C[1]);
    inner = a.add(a.mul(inner, r2), SIN_C[0]);
    let r3 = a.mul(r2, r);
    let term = a.mul(inner, r3);
    a.add(r, term)
}

/// §6.3: `1 − r²/2 + r⁴·(COS_C0 + r²·(COS_C1 + r²·COS_C2))`.
fn cos_poly(a: &impl Arith, r: F32) -> F32 {
    let r2 = a.mul(r, r);
    let mut inner = COS_C[2];
    inner = a.add(a.mul(inner, r2), COS_C[1]);
    inner = a.add(a.mul(inner, r2), COS_C[0]);
    let r4 = a.mul(r2, r2);
    let term = a.mul(inner, r4);
    let half_r2 = a.mul(F32::HALF, r2);
    let step1 = a.sub(F32::ONE, half_r2);
    a.add(step1, term)
}

/// §6.3: `sin_pinned`.
pub fn sin_pinned(a: &impl Arith, x: F32) -> F32 {
    let (r, quadrant) = octant(a, x);
    match quadrant {
        0 => sin_poly(a, r),
        1 => cos_poly(a, r),
        2 => -sin_poly(a, r),
        _ => -cos_poly(a, r),
    }
}

/// §6.3: `cos_pinned`.
pub fn cos_pinned(a: &impl Arith, x: F32) -> F32 {
    let (r, quadrant) = octant(a, x);
    match quadrant {
        0 => cos_poly(a, r),
        1 => -sin_poly(a, r),
        2 => -cos_poly(a, r),
        _ => sin_poly(a, r),
    }
}

/// §6.4: `x / (1.0 + exp_pinned(−x))`.
pub fn silu(a: &impl Arith, x: F32) -> F32 {
    let e = exp_pinned(a, -x);
    let denom = a.add(F32::ONE, e);
    a.div(x, denom)
}

/// §6.5.1: `x = m · 2^e` with `m ∈ [0.5, 1)`, by the bit fields (for positive finite `x`).
pub fn frexp_exact(x: F32) -> (F32, i32) {
    let exp_bits = ((x.0 >> 23) & 0xFF) as i32;
    let mantissa = F32((x.0 & 0x807F_FFFF) | (126 << 23));
    (mantissa, exp_bits - 126)
}

/// §6.5: `ln`, Cephes pattern.
pub fn ln_pinned(a: &impl Arith, x: F32) -> F32 {
    if x.is_nan() || a.lt(x, F32::ZERO) {
        return F32::NAN;
    }
    if a.eq(x, F32::ZERO) {
        return F32::NEG_INFINITY;
    }
    let (mut m, mut e) = frexp_exact(x);
    if a.lt(m, LOG_SQRTHF) {
        e -= 1;
        m = a.sub(a.add(m, m), F32::ONE);
    } else {
        m = a.sub(m, F32::ONE);
    }
    let z = a.mul(m, m);
    let mut poly = LOG_P[0];
    for p in &LOG_P[1..] {
        poly = a.add(a.mul(poly, m), *p);
    }
    let mut y = a.mul(poly, m);
    y = a.mul(y, z);
    let fe = a.of_int(e.into());
    let t1 = a.mul(fe, LOG_Q1);
    y = a.add(y, t1);
    let half_z = a.mul(F32::HALF, z);
    y = a.sub(y, half_z);
    let result = a.add(m, y);
    let t2 = a.mul(fe, LOG_Q2);
    a.add(result, t2)
}

/// §6.6: the SHA-256 of every pinned constant's little-endian bytes, in the declared order.
pub fn table_digest() -> [u8; 32] {
    let mut h = Sha256::new();
    let f32s = |h: &mut Sha256, xs: &[F32]| xs.iter().for_each(|x| h.update(x.le_bytes()));
    f32s(&mut h, &[EXP_LOG2E, EXP_C1, EXP_C2]);
    f32s(&mut h, &EXP_P);
    h.update(PI_2_F64.0.to_le_bytes());
    f32s(&mut h, &SIN_C);
    f32s(&mut h, &COS_C);
    f32s(&mut h, &[LOG_SQRTHF, LOG_Q1, LOG_Q2]);
    f32s(&mut h, &LOG_P);
    h.finalize().into()
}
