//! §8.1's arithmetic: every primitive result is `sat(v) = clamp(v, −2^255, 2^255)`, and a node is
//! saturated when `sat` changed one of its results.
//!
//! A value is an `ethnum::I256` or exactly `+2^255` (`Top`), which `I256` cannot hold. Operations go
//! through sign and magnitude (`U256` holds every magnitude up to `2^255`), and detect a result past
//! the range from the overflow of checked `U256` arithmetic or from a magnitude above `2^255`. A
//! result of exactly ±2^255 is not saturated (docs/assumptions.md B2).

use ethnum::{I256, U256};
use std::cmp::Ordering;

/// A value of `[−2^255, 2^255]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum S {
    V(I256),
    /// Exactly `+2^255`.
    Top,
}

const HALF: U256 = U256::from_words(1u128 << 127, 0); // 2^255

impl S {
    pub const ZERO: S = S::V(I256::ZERO);
    pub const BOTTOM: S = S::V(I256::MIN);

    pub fn from_i128(v: i128) -> S {
        S::V(I256::new(v))
    }
    pub fn from_u64(v: u64) -> S {
        S::V(I256::new(i128::from(v)))
    }
    pub fn pow2(k: u32) -> S {
        assert!(k <= 255);
        if k == 255 { S::Top } else { S::V(I256::ONE << k) }
    }

    fn parts(self) -> (bool, U256) {
        match self {
            S::Top => (false, HALF),
            S::V(v) => (v < 0, v.unsigned_abs()),
        }
    }

    /// Builds `±mag`, reporting whether `sat` changed it.
    fn from_parts(neg: bool, mag: Option<U256>) -> (S, bool) {
        match mag {
            Some(m) if m < HALF => {
                let v = m.as_i256();
                (S::V(if neg { -v } else { v }), false)
            }
            Some(m) if m == HALF => (
                if neg { S::BOTTOM } else { S::Top },
                fault!("sat-bound-counts-as-saturated", false, true),
            ),
            _ => (if neg { S::BOTTOM } else { S::Top }, true),
        }
    }

    pub fn is_neg(self) -> bool {
        matches!(self, S::V(v) if v < 0)
    }
    pub fn is_zero(self) -> bool {
        self == S::ZERO
    }

    /// The value as i128, when it fits.
    pub fn to_i128(self) -> Option<i128> {
        match self {
            S::Top => None,
            S::V(v) => i128::try_from(v).ok(),
        }
    }

    /// Whether the value fits iN (§2).
    pub fn fits(self, n: u32) -> bool {
        bits(self) <= n
    }

    pub fn to_decimal(self) -> String {
        match self {
            S::Top => HALF.to_string(),
            S::V(v) => v.to_string(),
        }
    }
}

/// The smallest `N ≥ 1` such that `v` fits iN.
pub fn bits(v: S) -> u32 {
    match v {
        S::Top => 257,
        S::V(v) => {
            // For v ≥ 0, N = bit length of v plus the sign bit; for v < 0, that of !v = −v − 1.
            let m = match v < 0 {
                true => fault!("bits-negative-magnitude", !v, v.wrapping_neg()),
                false => v,
            };
            256 - m.leading_zeros() + 1
        }
    }
}

impl Ord for S {
    fn cmp(&self, other: &S) -> Ordering {
        match (self, other) {
            (S::Top, S::Top) => Ordering::Equal,
            (S::Top, _) => Ordering::Greater,
            (_, S::Top) => Ordering::Less,
            (S::V(a), S::V(b)) => a.cmp(b),
        }
    }
}

impl PartialOrd for S {
    fn partial_cmp(&self, other: &S) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The saturation record of one node's computation: the primitive operations of §8.1.
#[derive(Default, Debug)]
pub struct Ctx {
    pub saturated: bool,
}

impl Ctx {
    fn note(&mut self, (v, changed): (S, bool)) -> S {
        self.saturated |= fault!("sat-never-flagged", changed, false);
        v
    }

    pub fn add(&mut self, a: S, b: S) -> S {
        let (an, am) = a.parts();
        let (bn, bm) = b.parts();
        let r = if an == bn {
            S::from_parts(an, am.checked_add(bm))
        } else if am >= bm {
            S::from_parts(an, Some(am - bm))
        } else {
            S::from_parts(bn, Some(bm - am))
        };
        self.note(r)
    }

    pub fn neg(&mut self, a: S) -> S {
        let (n, m) = a.parts();
        self.note(S::from_parts(!n && m != U256::ZERO, Some(m)))
    }

    pub fn sub(&mut self, a: S, b: S) -> S {
        let nb = self.neg(b);
        self.add(a, nb)
    }

    pub fn mul(&mut self, a: S, b: S) -> S {
        let (an, am) = a.parts();
        let (bn, bm) = b.parts();
        let m = am.checked_mul(bm);
        let neg = an != bn && m != Some(U256::ZERO);
        self.note(S::from_parts(neg, m))
    }

    /// `⌊a / b⌋` for `b > 0`.
    pub fn div_floor(&mut self, a: S, b: S) -> S {
        let (an, am) = a.parts();
        let (bn, bm) = b.parts();
        assert!(!bn && bm != U256::ZERO, "division by a non-positive value");
        let (q, r) = (am / bm, am % bm);
        let q = if an && r != U256::ZERO { q + 1 } else { q };
        self.note(S::from_parts(an && q != U256::ZERO, Some(q)))
    }

    /// `⌊a / 2^s⌋`.
    pub fn shr(&mut self, a: S, s: u32) -> S {
        self.div_floor(a, S::pow2(s))
    }

    /// `isqrt(a)` for `a ≥ 0`.
    pub fn isqrt(&mut self, a: S) -> S {
        let (n, m) = a.parts();
        assert!(!n, "isqrt of a negative value");
        self.note(S::from_parts(false, Some(isqrt_u256(m))))
    }

    /// `isqrt_ceil(a)` for `a ≥ 0`.
    pub fn isqrt_ceil(&mut self, a: S) -> S {
        let (n, m) = a.parts();
        assert!(!n, "isqrt_ceil of a negative value");
        let r = isqrt_u256(m);
        let r = if r * r < m { r + 1 } else { r };
        self.note(S::from_parts(false, Some(r)))
    }

    pub fn abs(&mut self, a: S) -> S {
        let (_, m) = a.parts();
        self.note(S::from_parts(false, Some(m)))
    }

    pub fn min(&mut self, a: S, b: S) -> S {
        a.min(b)
    }
    pub fn max(&mut self, a: S, b: S) -> S {
        a.max(b)
    }
}

/// The largest `r` with `r² ≤ n`, for `n ≤ 2^255`: Newton's iteration from above.
fn isqrt_u256(n: U256) -> U256 {
    if n < 2 {
        return n;
    }
    let bits = 256 - n.leading_zeros();
    let mut x = U256::ONE << bits.div_ceil(2);
    loop {
        let y = (x + n / x) >> 1u32;
        if y >= x {
            return x;
        }
        x = y;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(x: i128) -> S {
        S::from_i128(x)
    }

    #[test]
    fn exactly_two_to_the_255_is_not_saturated() {
        let mut c = Ctx::default();
        let half = S::pow2(254);
        assert_eq!(c.add(half, half), S::Top);
        assert!(!c.saturated);
        assert_eq!(c.neg(S::Top), S::BOTTOM);
        assert_eq!(c.neg(S::BOTTOM), S::Top);
        assert_eq!(c.abs(S::BOTTOM), S::Top);
        assert_eq!(c.mul(S::pow2(127), S::pow2(128)), S::Top);
        let m = c.neg(S::pow2(128));
        assert_eq!(c.mul(S::pow2(127), m), S::BOTTOM);
        assert!(!c.saturated);
        assert_eq!(c.add(S::Top, v(-1)).to_decimal(), I256::MAX.to_string());
        assert!(!c.saturated);
        assert_eq!(c.add(S::Top, v(1)), S::Top);
        assert!(c.saturated);
    }

    #[test]
    fn saturation_on_both_sides() {
        let mut c = Ctx::default();
        assert_eq!(c.add(S::BOTTOM, v(-1)), S::BOTTOM);
        assert!(c.saturated);
        let mut c = Ctx::default();
        assert_eq!(c.mul(S::Top, S::Top), S::Top);
        assert!(c.saturated);
        let mut c = Ctx::default();
        assert_eq!(c.mul(S::Top, S::ZERO), S::ZERO);
        assert_eq!(c.mul(S::BOTTOM, v(-1)), S::Top);
        assert_eq!(c.sub(S::ZERO, S::BOTTOM), S::Top);
        assert!(!c.saturated);
        assert_eq!(c.sub(v(0), S::Top), S::BOTTOM);
        assert!(!c.saturated);
        assert_eq!(c.sub(v(-1), S::Top), S::BOTTOM);
        assert!(c.saturated);
    }

    #[test]
    fn floor_division_and_roots() {
        let mut c = Ctx::default();
        assert_eq!(c.div_floor(v(-7), v(2)), v(-4));
        assert_eq!(c.div_floor(v(7), v(2)), v(3));
        assert_eq!(c.div_floor(v(-8), v(2)), v(-4));
        assert_eq!(c.shr(S::BOTTOM, 255), v(-1));
        assert_eq!(c.shr(S::Top, 255), v(1));
        assert_eq!(c.shr(v(-1), 100), v(-1));
        let r = c.isqrt(S::Top);
        let r1 = c.add(r, v(1));
        assert!(c.mul(r, r) < S::Top);
        let mut c2 = Ctx::default();
        assert_eq!(c2.mul(r1, r1), S::Top);
        assert!(c2.saturated, "(isqrt(2^255) + 1)² passes 2^255");
        assert_eq!(c.isqrt(v(15)), v(3));
        assert_eq!(c.isqrt_ceil(v(15)), v(4));
        assert_eq!(c.isqrt_ceil(v(16)), v(4));
        assert_eq!(c.isqrt_ceil(v(0)), v(0));
        assert!(!c.saturated);
    }

    #[test]
    fn bit_widths() {
        assert_eq!(bits(v(0)), 1);
        assert_eq!(bits(v(-1)), 1);
        assert_eq!(bits(v(1)), 2);
        assert_eq!(bits(v(-2)), 2);
        assert_eq!(bits(v(127)), 8);
        assert_eq!(bits(v(-128)), 8);
        assert_eq!(bits(v(128)), 9);
        assert_eq!(bits(v(i64::MAX as i128)), 64);
        assert_eq!(bits(v(i64::MIN as i128)), 64);
        assert_eq!(bits(S::BOTTOM), 256);
        assert_eq!(bits(S::Top), 257);
        assert!(!S::Top.fits(256));
        assert!(S::BOTTOM.fits(256));
    }
}
