//! The numerical core (docs/assumptions.md D1): three separately rounded binary32 operations with
//! gradual underflow, then the seed's BF16 narrowing of the rounded result.

use crate::softfloat::{BINARY32, Env};

const ENV: Env = Env::Gradual;

/// `static_cast<float>(zero_point)`, `static_cast<float>(q) − zp`, `difference × scale`: the FP32
/// bits.
pub fn dequantize(q: i8, scale: u32, zero_point: i32) -> u32 {
    let f = BINARY32;
    let zp = ENV.from_int(f, i64::from(zero_point));
    let difference = ENV.sub(f, ENV.from_int(f, i64::from(q)), zp);
    ENV.mul(f, difference, u64::from(scale)) as u32
}

/// `uint16_t((bits + 0x7fffU + ((bits >> 16) & 1U)) >> 16)`, in 32-bit unsigned arithmetic.
pub fn bf16(bits: u32) -> u16 {
    (bits.wrapping_add(0x7FFF).wrapping_add((bits >> 16) & 1) >> 16) as u16
}

/// A scale the contract admits, by its bits: finite and strictly positive (subnormals included).
pub fn scale_admitted(bits: u32) -> bool {
    let negative = bits >> 31 == 1;
    let exponent = (bits >> 23) & 0xFF;
    !negative && exponent != 0xFF && bits != 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seed_example_values() {
        // scale 0.25, zero point −3: q = 5 → (5 − (−3)) · 0.25 = 2.0 (0x40000000).
        assert_eq!(dequantize(5, 0x3E80_0000, -3), 0x4000_0000);
        // q = −3 → 0 · 0.25 = +0; q = −4 → −1 · 0.25 = −0.25 (0xBE800000).
        assert_eq!(dequantize(-3, 0x3E80_0000, -3), 0);
        assert_eq!(dequantize(-4, 0x3E80_0000, -3), 0xBE80_0000);
    }

    #[test]
    fn bf16_narrowing() {
        // 0x3F808000 lies halfway between 0x3F80 and 0x3F81: to even, 0x3F80; 0x3F818000 → 0x3F82.
        assert_eq!(bf16(0x3F80_8000), 0x3F80);
        assert_eq!(bf16(0x3F81_8000), 0x3F82);
        // The largest finite binary32 rounds to BF16 infinity; −2^-149 to −0.
        assert_eq!(bf16(0x7F7F_FFFF), 0x7F80);
        assert_eq!(bf16(0x8000_0001), 0x8000);
    }

    #[test]
    fn scales_by_their_bits() {
        assert!(scale_admitted(0x0000_0001) && scale_admitted(0x3E80_0000) && scale_admitted(0x7F7F_FFFF));
        for refused in [
            0,
            0x8000_0000,
            0xBF80_0000,
            0x7F80_0000,
            0xFF80_0000,
            0x7FC0_0000,
            0x7F80_0001,
        ] {
            assert!(!scale_admitted(refused), "{refused:#010x}");
        }
    }
}
