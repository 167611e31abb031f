//! §2 Notation and integer functions, on mathematical integers (`BigInt`).
//!
//! Every function is transcribed in the order the spec writes it. None has an
//! implicit width; none wraps or saturates.

use num_bigint::{BigInt, Sign};
use num_integer::Integer;
use num_traits::{One, Signed, Zero};

/// `2^k`.
pub fn pow2(k: u32) -> BigInt {
    BigInt::one() << k
}

/// `⌊a / b⌋` for `b > 0`: the largest `q` with `q·b ≤ a`.
pub fn floor_div(a: &BigInt, b: &BigInt) -> BigInt {
    debug_assert!(b.is_positive());
    a.div_floor(b)
}

/// `⌈a / b⌉ = −⌊−a / b⌋` for `b > 0`.
pub fn ceil_div(a: &BigInt, b: &BigInt) -> BigInt {
    -floor_div(&-a, b)
}

/// `trunc(a / b)`: division rounded toward zero, `b ≠ 0`.
pub fn trunc_div(a: &BigInt, b: &BigInt) -> BigInt {
    debug_assert!(!b.is_zero());
    a / b // `BigInt`'s `/` truncates toward zero.
}

/// `a mod b = a − b·⌊a / b⌋` for `b > 0`; it lies in `[0, b)`.
pub fn modulo(a: &BigInt, b: &BigInt) -> BigInt {
    a - b * floor_div(a, b)
}

/// `sgn(a)`: −1, 0 or 1.
pub fn sgn(a: &BigInt) -> BigInt {
    match a.sign() {
        Sign::Minus => BigInt::from(-1),
        Sign::NoSign => BigInt::zero(),
        Sign::Plus => BigInt::one(),
    }
}

/// `clamp(v, lo, hi) = min(max(v, lo), hi)` for `lo ≤ hi`.
pub fn clamp(v: &BigInt, lo: &BigInt, hi: &BigInt) -> BigInt {
    v.max(lo).min(hi).clone()
}

/// `isqrt(n)`: for `n ≥ 0`, the largest `r ≥ 0` with `r² ≤ n`.
pub fn isqrt(n: &BigInt) -> BigInt {
    debug_assert!(!n.is_negative());
    let r = n.sqrt(); // floor square root for n ≥ 0
    debug_assert!(&r * &r <= *n && (&r + 1u32) * (&r + 1u32) > *n);
    r
}

/// `isqrt_ceil(n)`: for `n ≥ 0`, the smallest `r ≥ 0` with `r² ≥ n`.
pub fn isqrt_ceil(n: &BigInt) -> BigInt {
    let r = isqrt(n);
    if &r * &r == *n { r } else { r + 1u32 }
}

/// `wrap16(a) = ((a + 2^15) mod 2^16) − 2^15`.
pub fn wrap16(a: &BigInt) -> BigInt {
    modulo(&(a + pow2(15)), &pow2(16)) - pow2(15)
}

/// *fits iN*: `−2^(N−1) ≤ v ≤ 2^(N−1) − 1`.
pub fn fits(v: &BigInt, n: u32) -> bool {
    debug_assert!(n >= 1);
    let half = pow2(n - 1);
    -&half <= *v && *v < half
}

/// The smallest `N ≥ 1` such that `v` fits iN.
fn bits_of(v: &BigInt) -> u32 {
    // v ≥ 0 needs v ≤ 2^(N−1) − 1, i.e. N − 1 ≥ bit length of v;
    // v < 0 needs |v| ≤ 2^(N−1), i.e. N − 1 ≥ bit length of |v| − 1.
    let magnitude = if v.is_negative() { -v - 1u32 } else { v.clone() };
    u32::try_from(magnitude.bits()).unwrap_or(u32::MAX - 1) + 1
}

/// `bits([lo, hi])`: the smallest `N ≥ 1` such that both `lo` and `hi` fit iN.
pub fn bits(lo: &BigInt, hi: &BigInt) -> u32 {
    bits_of(lo).max(bits_of(hi))
}

/// The rounding of a scaled product (§2), as named in `RQ.round` (§10.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Round {
    Floor,
    HalfUp,
    HalfEven,
}

impl Round {
    /// `R_round(p, s)`.
    pub fn apply(self, p: &BigInt, s: u32) -> BigInt {
        match self {
            Round::Floor => r_floor(p, s),
            Round::HalfUp => r_half_up(p, s),
            Round::HalfEven => r_half_even(p, s),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Round::Floor => "floor",
            Round::HalfUp => "half_up",
            Round::HalfEven => "half_even",
        }
    }
}

/// `R_floor(p, s) = ⌊p / 2^s⌋`.
pub fn r_floor(p: &BigInt, s: u32) -> BigInt {
    floor_div(p, &pow2(s))
}

/// `R_half_up(p, s) = ⌊(p + 2^(s−1)) / 2^s⌋` for `s ≥ 1`, and `p` for `s = 0`.
pub fn r_half_up(p: &BigInt, s: u32) -> BigInt {
    if s == 0 {
        return p.clone();
    }
    floor_div(&(p + pow2(s - 1)), &pow2(s))
}

/// `R_half_even(p, s)`: `p` for `s = 0`; otherwise `q + 1` if `r > h`, or if
/// `r = h` and `q` is odd, else `q`, with `q = ⌊p / 2^s⌋`, `r = p − q·2^s`,
/// `h = 2^(s−1)`.
pub fn r_half_even(p: &BigInt, s: u32) -> BigInt {
    if s == 0 {
        return p.clone();
    }
    let q = floor_div(p, &pow2(s));
    let r = p - &q * pow2(s);
    let h = pow2(s - 1);
    if r > h || (r == h && q.is_odd()) { q + 1u32 } else { q }
}

/// The values `exp_neg_q16` forms (§2), named after the intermediates §5.7
/// classifies. The bounds pass reads the same names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExpNegQ16 {
    /// `u = −x` (`exp.negx`).
    pub u: BigInt,
    /// `n = ⌊u / 45426⌋`.
    pub n: BigInt,
    /// `g = 45426·n` (`exp.nl`).
    pub g: BigInt,
    /// `t2 = t²` (`exp.t2`).
    pub t2: BigInt,
    /// `c = 23495·q` (`exp.c`).
    pub c: BigInt,
    /// The result.
    pub value: BigInt,
}

/// `exp_neg_q16(x)` for `x ≤ 0`, with its intermediates.
pub fn exp_neg_q16_steps(x: &BigInt) -> ExpNegQ16 {
    debug_assert!(!x.is_positive());
    let u = -x;
    let n = floor_div(&u, &BigInt::from(45426));
    let g = BigInt::from(45426) * &n;
    let r = x + &g;
    let t = r + 88670;
    let t2 = &t * &t;
    let q = floor_div(&t2, &pow2(16));
    let c = BigInt::from(23495) * q;
    let y = floor_div(&c, &pow2(16)) + 22544;
    let value = if n >= BigInt::from(63) {
        BigInt::zero()
    } else {
        // n ∈ [0, 62] here, so the shift is small.
        let shift = u32::try_from(&n).unwrap_or(0);
        floor_div(&y, &pow2(shift))
    };
    ExpNegQ16 { u, n, g, t2, c, value }
}

/// `exp_neg_q16(x)` for `x ≤ 0`.
pub fn exp_neg_q16(x: &BigInt) -> BigInt {
    exp_neg_q16_steps(x).value
}

/// The dividend of `rsqrt_q16` (`rsq.num`).
pub fn rsq_num() -> BigInt {
    pow2(32)
}

/// `rsqrt_q16(v)` for `v ≥ 0`: 0 if `isqrt(v) = 0`, else `⌊2^32 / isqrt(v)⌋`.
pub fn rsqrt_q16(v: &BigInt) -> BigInt {
    let r = isqrt(v);
    if r.is_zero() {
        BigInt::zero()
    } else {
        floor_div(&rsq_num(), &r)
    }
}

/// `|a|`.
pub fn abs(a: &BigInt) -> BigInt {
    a.abs()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(v: i128) -> BigInt {
        BigInt::from(v)
    }

    #[test]
    fn division_family_on_signs() {
        // ⌊−7/2⌋ = −4, ⌈−7/2⌉ = −3, trunc(−7/2) = −3, −7 mod 2 = 1.
        assert_eq!(floor_div(&b(-7), &b(2)), b(-4));
        assert_eq!(ceil_div(&b(-7), &b(2)), b(-3));
        assert_eq!(trunc_div(&b(-7), &b(2)), b(-3));
        assert_eq!(modulo(&b(-7), &b(2)), b(1));
        assert_eq!(floor_div(&b(7), &b(2)), b(3));
        assert_eq!(ceil_div(&b(7), &b(2)), b(4));
        assert_eq!(trunc_div(&b(7), &b(-2)), b(-3));
        assert_eq!(modulo(&b(6), &b(3)), b(0));
    }

    #[test]
    fn square_roots() {
        for n in 0..2000i128 {
            let r = isqrt(&b(n));
            assert!(&r * &r <= b(n) && (&r + 1) * (&r + 1) > b(n));
            let c = isqrt_ceil(&b(n));
            assert!(&c * &c >= b(n));
            assert!(c.is_zero() || (&c - 1) * (&c - 1) < b(n));
        }
        // Past 64 bits: (2^64 − 1)² + 2^64 − 2 has root 2^64 − 1.
        let r = b((1i128 << 64) - 1);
        assert_eq!(isqrt(&(&r * &r + &r + &r)), r);
        assert_eq!(isqrt_ceil(&(&r * &r + 1)), &r + 1);
    }

    #[test]
    fn wrap16_wraps_into_i16() {
        assert_eq!(wrap16(&b(32767)), b(32767));
        assert_eq!(wrap16(&b(32768)), b(-32768));
        assert_eq!(wrap16(&b(-32769)), b(32767));
        assert_eq!(wrap16(&b(65536 + 5)), b(5));
    }

    #[test]
    fn bits_is_the_smallest_width_that_holds_both_ends() {
        assert_eq!(bits(&b(0), &b(0)), 1);
        assert_eq!(bits(&b(-1), &b(0)), 1);
        assert_eq!(bits(&b(0), &b(1)), 2);
        assert_eq!(bits(&b(-128), &b(127)), 8);
        assert_eq!(bits(&b(-129), &b(0)), 9);
        assert_eq!(bits(&b(0), &b(128)), 9);
        assert_eq!(bits(&-pow2(31), &(pow2(31) - 1)), 32);
        assert_eq!(bits(&-pow2(255), &pow2(255)), 257);
        // Against the definition: the smallest N with both ends fitting iN.
        for lo in -300..=300i128 {
            for hi in [lo, lo + 1, lo + 77, 300] {
                let n = (1..).find(|&n| fits(&b(lo), n) && fits(&b(hi), n)).unwrap();
                assert_eq!(bits(&b(lo), &b(hi)), n, "[{lo}, {hi}]");
            }
        }
    }

    #[test]
    fn rounding_ties() {
        // 5/2 = 2.5, −5/2 = −2.5, 7/2 = 3.5.
        assert_eq!(r_floor(&b(5), 1), b(2));
        assert_eq!(r_floor(&b(-5), 1), b(-3));
        assert_eq!(r_half_up(&b(5), 1), b(3));
        assert_eq!(r_half_up(&b(-5), 1), b(-2)); // toward +∞ whatever the sign
        assert_eq!(r_half_even(&b(5), 1), b(2));
        assert_eq!(r_half_even(&b(-5), 1), b(-2));
        assert_eq!(r_half_even(&b(7), 1), b(4));
        assert_eq!(r_half_even(&b(-7), 1), b(-4));
        // Not a tie: 6/4 = 1.5 is one, 7/4 = 1.75 is not.
        assert_eq!(r_half_even(&b(7), 2), b(2));
        assert_eq!(r_half_even(&b(6), 2), b(2));
        assert_eq!(r_half_even(&b(10), 2), b(2)); // 2.5 → 2
        for round in [Round::Floor, Round::HalfUp, Round::HalfEven] {
            assert_eq!(round.apply(&b(-12345), 0), b(-12345));
        }
        // Shift 127 on a 128-bit value: (2^127 + 2^126)/2^127 = 1.5 → 2 (half_even: 1 is odd).
        let p = pow2(127) + pow2(126);
        assert_eq!(r_half_even(&p, 127), b(2));
        assert_eq!(r_floor(&p, 127), b(1));
    }

    #[test]
    fn rounding_is_monotone() {
        for s in 0..5 {
            for round in [Round::Floor, Round::HalfUp, Round::HalfEven] {
                let mut last = round.apply(&b(-100), s);
                for p in -99..100 {
                    let v = round.apply(&b(p), s);
                    assert!(v >= last);
                    last = v;
                }
            }
        }
    }

    #[test]
    fn exp_neg_q16_stated_facts() {
        // §2: exp_neg_q16(0) = 65553. By hand: u = 0, n = 0, r = 0,
        // t = 88670, t2 = 7862368900, q = ⌊t2/65536⌋ = 119970,
        // c = 23495·119970 = 2818695150, y = ⌊c/65536⌋ + 22544 = 43009 + 22544.
        let e = exp_neg_q16_steps(&b(0));
        assert_eq!(e.t2, b(7_862_368_900));
        assert_eq!(e.c, b(2_818_695_150));
        assert_eq!(e.value, b(65553));
        // n = 62 at u = 62·45426: r = 0, so y = 65553 and the result is ⌊65553/2^62⌋ = 0;
        // at u = 62·45426 − 1 (n = 61) it is ⌊y/2^61⌋ = 0 too; n = 63 gives 0 by rule.
        let at = |u: i128| exp_neg_q16_steps(&b(-u));
        assert_eq!(at(62 * 45426).n, b(62));
        assert_eq!(at(62 * 45426).value, b(0));
        assert_eq!(at(63 * 45426).n, b(63));
        assert_eq!(at(63 * 45426).value, b(0));
        // n = 1 at u = 45426: y = 65553, result ⌊65553/2⌋ = 32776.
        assert_eq!(at(45426).value, b(32776));
        // Every result lies in [0, 65553].
        for u in (0..200_000).step_by(97) {
            let v = at(u).value;
            assert!(v >= b(0) && v <= b(65553));
        }
    }

    #[test]
    fn rsqrt_q16_values() {
        assert_eq!(rsqrt_q16(&b(0)), b(0));
        assert_eq!(rsqrt_q16(&b(1)), pow2(32));
        // isqrt(15) = 3: ⌊2^32/3⌋ = 1431655765.
        assert_eq!(rsqrt_q16(&b(15)), b(1_431_655_765));
        assert_eq!(rsqrt_q16(&b(16)), pow2(30));
    }
}
