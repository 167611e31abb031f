//! The numerical core (docs/assumptions.md D1) on the hardware's binary32.
//!
//! ```text
//! zp         = (float)zero_point          rounded once, to nearest even
//! difference = (float)q − zp              rounded once
//! output     = difference × scale         rounded once (never fused with the subtraction)
//! bf16       = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16   on the rounded output's bits
//! ```
//!
//! Every function that does arithmetic takes a [`Checked`] proof that the thread's environment was
//! checked first. Operands pass through [`black_box`] so the hardware, not the compiler, rounds.

use super::env::Checked;
use std::hint::black_box;

/// A scale the contract admits: by its bits, positive, finite and nonzero (positive subnormals
/// included). NaN, ±∞, ±0 and negative values are refused.
pub fn scale_admitted(bits: u32) -> bool {
    let negative = bits >> 31 == 1;
    let exponent = (bits >> 23) & 0xff;
    let zero = bits & 0x7fff_ffff == 0;
    !negative && !zero && exponent != 0xff
}

/// The prepared parameters of one call: the scale and the zero point rounded to binary32 once.
#[derive(Clone, Copy, Debug)]
pub struct Prepared {
    zp: f32,
    scale: f32,
}

/// `zp = (float)zero_point`: the int32 → binary32 conversion, rounded to nearest even.
pub fn prepare(_env: &Checked, scale: f32, zero_point: i32) -> Prepared {
    Prepared {
        zp: black_box(black_box(zero_point) as f32),
        scale,
    }
}

/// One element's binary32 output: `((float)q − zp) × scale`, each operation rounded separately.
#[inline]
pub fn output(_env: &Checked, p: &Prepared, q: i8) -> f32 {
    // (float)q is exact: every int8 is a binary32.
    let difference = black_box(f32::from(black_box(q)) - black_box(p.zp));
    black_box(difference * black_box(p.scale))
}

/// The BF16 narrowing of a rounded binary32 result, in 32-bit unsigned arithmetic on its bits.
pub fn bf16_bits(output: f32) -> u16 {
    let bits = output.to_bits();
    (bits.wrapping_add(0x7fff).wrapping_add((bits >> 16) & 1) >> 16) as u16
}
