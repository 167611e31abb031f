//! §2's integer functions in fixed width (i64/i128 with checked operations).
//!
//! Each returns `None` when a value would leave its width. In a graph that loaded, the certificate
//! (§8) excludes that, so a `None` here is a bug of the checker's bounds pass, reported as such.

/// A rounding of §2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Round {
    Floor,
    HalfUp,
    HalfEven,
}

/// `⌊p / 2^s⌋` for `s ≤ 127`: an arithmetic shift.
pub fn floor_shr(p: i128, s: u32) -> i128 {
    debug_assert!(s <= 127);
    fault!("floor-truncates", p >> s, if p < 0 { -((-p) >> s) } else { p >> s })
}

/// `⌊p / 2^s⌋` for an i64 `p` and `s ≤ 63`.
pub fn floor_shr64(p: i64, s: u32) -> i64 {
    debug_assert!(s <= 63);
    floor_shr(i128::from(p), s) as i64
}

/// `R_round(p, s)` (§2) for `s ≤ 127`. The low `s` bits of `p` are its remainder mod `2^s`.
pub fn r_round(p: i128, s: u32, round: Round) -> Option<i128> {
    // §6: a fabric whose shift takes its amount modulo the register width.
    let s = fault!("shift-mod-64", s, s % 64);
    if s == 0 {
        return Some(p);
    }
    let q = floor_shr(p, s);
    let mask: u128 = (1u128 << s) - 1;
    let r = (p as u128) & mask; // p mod 2^s, in [0, 2^s)
    let h = 1u128 << (s - 1);
    let up = match round {
        Round::Floor => false,
        // ⌊(p + h) / 2^s⌋ is q + 1 exactly when r + h reaches 2^s, that is r ≥ h.
        Round::HalfUp => fault!("half-up-away-from-zero", r >= h, r > h || (r == h && p >= 0)),
        // A tie (r = h) goes to the even neighbour: up when q is odd.
        Round::HalfEven => {
            let odd = fault!("half-even-ties-down", q & 1 == 1, false);
            r > h || (r == h && fault!("half-even-up", odd, true))
        }
    };
    if up { q.checked_add(1) } else { Some(q) }
}

/// `isqrt(n)` (§2): the largest `r` with `r² ≤ n`, by Newton's iteration from above.
pub fn isqrt_u128(n: u128) -> u128 {
    if n < 2 {
        return n;
    }
    let bits = 128 - n.leading_zeros();
    let mut x: u128 = 1u128 << bits.div_ceil(2); // x ≥ √n
    loop {
        let y = (x + n / x) / 2;
        if y >= x {
            return x;
        }
        x = y;
    }
}

/// `exp_neg_q16(x)` (§2), for `x ≤ 0`.
pub fn exp_neg_q16(x: i64) -> Option<i64> {
    debug_assert!(x <= 0);
    let u = x.checked_neg()?; // exp.negx
    let n = u / 45426; // u ≥ 0, so this is the floor
    // Equivalent when the cutoff is 64: at n = 63, y < 2^17 gives ⌊y / 2^63⌋ = 0 as well.
    if n >= fault!("exp-cutoff-65-shift-mod-64", fault!("exp-cutoff-64", 63, 64), 65) {
        return Some(0);
    }
    let g = 45426 * n; // exp.nl
    let r = x + g; // in (−45426, 0]
    let t = r + 88670;
    let t2 = t * t; // exp.t2 ≤ 88670² < 2^33
    let q = fault!("exp-square-rounded", t2 >> 16, (t2 + (1 << 15)) >> 16);
    let c = 23495 * q; // exp.c
    let y = (c >> 16) + 22544;
    let n = fault!("exp-cutoff-65-shift-mod-64", n, n % 64);
    Some(fault!("exp-result-rounded", y >> n, half_up_shr(y, n)))
}

/// `exp-result-rounded`: `y / 2^n` rounded half up.
#[cfg(feature = "mutants")]
fn half_up_shr(y: i64, n: i64) -> i64 {
    if n >= 1 { (y + (1 << (n - 1))) >> n } else { y >> n }
}

/// `rsqrt_q16(v)` (§2), for `v ≥ 0`.
pub fn rsqrt_q16(v: i128) -> Option<i64> {
    if v < 0 {
        return None;
    }
    let r = fault!("rsqrt-root-ceil", isqrt_u128(v as u128), isqrt_ceil(v as u128));
    if r == 0 {
        // Equivalent when 0 gives 2^32: every caller has v ≥ 1 (§2).
        return Some(fault!("rsqrt-zero-as-one", 0, 1 << 32));
    }
    i64::try_from((1u128 << 32) / r).ok()
}

/// `rsqrt-root-ceil`: the smallest `r` with `r² ≥ n`.
#[cfg(feature = "mutants")]
fn isqrt_ceil(n: u128) -> u128 {
    let r = isqrt_u128(n);
    if r * r < n { r + 1 } else { r }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp_neg_q16_facts() {
        // §2: exp_neg_q16(0) = 65553, the top of its range.
        assert_eq!(exp_neg_q16(0), Some(65553));
        // n = 62 still shifts; n = 63 is 0.
        let at62 = -(45426 * 62);
        assert_eq!(exp_neg_q16(at62), Some(65553 >> 62));
        assert_eq!(exp_neg_q16(-(45426 * 63)), Some(0));
        assert_eq!(exp_neg_q16(-(45426 * 63) + 1), Some(0)); // n = 62, y < 2^17 >> 62 = 0
        assert_eq!(exp_neg_q16(i64::MIN + 1), Some(0));
        assert_eq!(exp_neg_q16(i64::MIN), None);
        // Non-increasing over a stretch.
        let mut prev = 65553;
        for x in (-200_000..=0).rev().step_by(97) {
            let v = exp_neg_q16(x).unwrap();
            assert!(v <= prev && v >= 0);
            prev = v;
        }
    }

    #[test]
    fn rounding_ties() {
        // R_floor, R_half_up (ties toward +∞) and R_half_even on both signs.
        assert_eq!(r_round(5, 1, Round::Floor), Some(2));
        assert_eq!(r_round(-5, 1, Round::Floor), Some(-3));
        assert_eq!(r_round(5, 1, Round::HalfUp), Some(3));
        assert_eq!(r_round(-5, 1, Round::HalfUp), Some(-2));
        assert_eq!(r_round(5, 1, Round::HalfEven), Some(2));
        assert_eq!(r_round(7, 1, Round::HalfEven), Some(4));
        assert_eq!(r_round(-5, 1, Round::HalfEven), Some(-2));
        assert_eq!(r_round(-7, 1, Round::HalfEven), Some(-4));
        assert_eq!(r_round(-6, 2, Round::HalfEven), Some(-2)); // −1.5 → −2
        assert_eq!(r_round(-6, 2, Round::HalfUp), Some(-1)); // −1.5 → −1
        assert_eq!(r_round(-7, 2, Round::HalfUp), Some(-2));
        assert_eq!(r_round(123, 0, Round::HalfEven), Some(123));
        assert_eq!(r_round(i128::MIN, 127, Round::Floor), Some(-1));
        assert_eq!(r_round(i128::MIN, 127, Round::HalfUp), Some(-1));
        assert_eq!(r_round(-(1i128 << 126), 127, Round::HalfUp), Some(0));
        assert_eq!(r_round(-(1i128 << 126), 127, Round::HalfEven), Some(0));
        assert_eq!(r_round(1i128 << 126, 127, Round::HalfEven), Some(0));
        assert_eq!(r_round(1i128 << 126, 127, Round::HalfUp), Some(1));
        assert_eq!(r_round(i128::MAX, 127, Round::HalfEven), Some(1));
    }

    #[test]
    fn isqrt_exact() {
        for n in 0u128..2000 {
            let r = isqrt_u128(n);
            assert!(r * r <= n && (r + 1) * (r + 1) > n, "{n}");
        }
        assert_eq!(isqrt_u128(u128::MAX), u64::MAX as u128);
        assert_eq!(isqrt_u128((1u128 << 64) - 1), (1u128 << 32) - 1);
        assert_eq!(rsqrt_q16(1), Some(1 << 32));
        assert_eq!(rsqrt_q16(0), Some(0));
        assert_eq!(rsqrt_q16(4), Some(1 << 31));
    }
}
