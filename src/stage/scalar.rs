//! The stage operators on single values: E2 `dequantize`, E3 `bucket`, E4 `coded`,
//! E5 `scale_index`, E7 `band_lookup`, E9 `residual_step`, and E12's `rdiv`.

use super::{Stop, require};
use crate::num::{self, clamp, pow2};
use crate::refusal::Code;
use num_bigint::BigInt;
use num_traits::{Signed, ToPrimitive};

fn fits(v: &BigInt, bits: u32) -> bool {
    num::fits(v, bits)
}

/// E2 `dequantize(sym, f, base) = sym·2^f + base`. `f` outside `0..=62` and a value that
/// does not fit i64 are refused `field_range`, at 0 (§14.1; docs/assumptions.md).
pub fn dequantize(sym: &BigInt, f: &BigInt, base: &BigInt) -> Result<BigInt, Stop> {
    let f = f
        .to_u32()
        .filter(|&f| f <= 62)
        .ok_or_else(|| Stop::new(0, Code::FieldRange, "f", format!("f = {f} is not in 0..=62")))?;
    let value = sym * pow2(f) + base;
    if !fits(&value, 64) {
        return Err(Stop::new(
            0,
            Code::FieldRange,
            "value",
            format!("the value {value} does not fit i64"),
        ));
    }
    Ok(value)
}

/// E3's rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BucketRule {
    Ceil,
    Floor,
}

/// E3 `bucket(σ, e, rule)`. `ceil` takes `N ≥ 1` edges `e_0 … e_{N−1}`: with `σ′ = max(σ, e_0)`,
/// `b = (N − 1) − #{ i < N − 1 : σ′ ≤ e_i }`. `floor` takes `N − 1 ≥ 1` non-decreasing edges
/// `e_1 … e_{N−1}`: `b = #{ i : e_i ≤ σ }`.
pub fn bucket(sigma: &BigInt, edges: &[BigInt], rule: BucketRule) -> Result<BigInt, Stop> {
    match rule {
        BucketRule::Ceil => {
            // N ≥ 1 is a condition, as floor's are (docs/assumptions.md).
            require(!edges.is_empty(), "edges", || "ceil takes at least one edge".into())?;
            let n = edges.len();
            let s = sigma.max(&edges[0]);
            let below = edges[..n - 1].iter().filter(|e| s <= *e).count();
            Ok(BigInt::from(n - 1 - below))
        }
        BucketRule::Floor => {
            require(!edges.is_empty(), "edges", || "floor takes at least one edge".into())?;
            require(edges.windows(2).all(|w| w[0] <= w[1]), "order", || {
                "floor's edges are not non-decreasing".into()
            })?;
            Ok(BigInt::from(edges.iter().filter(|e| *e <= sigma).count()))
        }
    }
}

/// E4 `coded(v, thr) = v > thr`.
pub fn coded(v: &BigInt, thr: &BigInt) -> bool {
    v > thr
}

/// E5 `scale_index(v, s, n) = clamp(R_half_up(v, s), 0, n − 1)`, `s ∈ 0..=127`, `n ≥ 1`.
pub fn scale_index(v: &BigInt, s: &BigInt, n: &BigInt) -> Result<BigInt, Stop> {
    let s = s
        .to_u32()
        .filter(|&s| s <= 127)
        .ok_or_else(|| Stop::condition("s", format!("s = {s} is not in 0..=127")))?;
    require(*n >= BigInt::from(1), "n", || format!("n = {n} is below 1"))?;
    Ok(clamp(&num::r_half_up(v, s), &BigInt::ZERO, &(n - 1u32)))
}

/// E7 `band_lookup`: `band = #{ k : v ≥ e_k }`, the result `table[row][band]`, for `row` in
/// `[0, rows)` whose row holds `m + 1` entries (only the row read is checked; docs/assumptions.md).
pub fn band_lookup(v: &BigInt, edges: &[BigInt], table: &[Vec<BigInt>], row: &BigInt) -> Result<BigInt, Stop> {
    let r = row
        .to_usize()
        .filter(|&r| r < table.len())
        .ok_or_else(|| Stop::condition("row", format!("row {row} is not in [0, {})", table.len())))?;
    require(table[r].len() == edges.len() + 1, "entries", || {
        format!(
            "row {r} holds {} entries, not m + 1 = {}",
            table[r].len(),
            edges.len() + 1
        )
    })?;
    let band = edges.iter().filter(|e| v >= *e).count();
    Ok(table[r][band].clone())
}

/// E9 `residual_step(pred, r, q, lo, hi) = clamp(pred + r·q, lo, hi)`, for `lo < hi`,
/// `pred ∈ [lo, hi]`, `q ∈ [1, 65535]` and `r` fitting i32.
pub fn residual_step(pred: &BigInt, r: &BigInt, q: &BigInt, lo: &BigInt, hi: &BigInt) -> Result<BigInt, Stop> {
    require(lo < hi, "range", || format!("lo = {lo} is not below hi = {hi}"))?;
    require(lo <= pred && pred <= hi, "pred", || {
        format!("pred = {pred} is outside [lo, hi]")
    })?;
    require(*q >= BigInt::from(1) && *q <= BigInt::from(65535), "q", || {
        format!("q = {q} is outside [1, 65535]")
    })?;
    require(fits(r, 32), "r", || format!("r = {r} does not fit i32"))?;
    Ok(clamp(&(pred + r * q), lo, hi))
}

/// E12's `rdiv(n, d)`: 0 for `d < 1`, else `sgn(n)·⌊(2|n| + d) / (2d)⌋`.
pub fn rdiv(n: &BigInt, d: &BigInt) -> BigInt {
    if *d < BigInt::from(1) {
        return BigInt::ZERO;
    }
    num::sgn(n) * num::floor_div(&(n.abs() * 2u32 + d), &(d * 2u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(v: i64) -> BigInt {
        BigInt::from(v)
    }

    #[test]
    fn rdiv_rounds_half_away_from_zero() {
        // 7/2 = 3.5 → ⌊(14 + 2)/4⌋ = 4; −7/2 → −4; 5/3 ≈ 1.67 → ⌊13/6⌋ = 2; 4/3 → ⌊11/6⌋ = 1.
        assert_eq!(rdiv(&b(7), &b(2)), b(4));
        assert_eq!(rdiv(&b(-7), &b(2)), b(-4));
        assert_eq!(rdiv(&b(5), &b(3)), b(2));
        assert_eq!(rdiv(&b(4), &b(3)), b(1));
        assert_eq!(rdiv(&b(0), &b(3)), b(0));
        assert_eq!(rdiv(&b(9), &b(0)), b(0));
        assert_eq!(rdiv(&b(9), &b(-5)), b(0));
        // The widths E12 states: |n| < 2^47 and d < 2^32 keep 2|n| + d below 2^49.
        assert_eq!(rdiv(&(b(1) << 46u32), &b(1)), b(1) << 46u32);
    }

    #[test]
    fn residual_step_and_its_32_bit_form() {
        // R = ⌊(hi − lo)/q⌋ + 1; the 32-bit form clamps r to [−R, R] first (§5E E9).
        let (lo, hi, q) = (b(0), b(255), b(7));
        let big_r = (&hi - &lo) / &q + 1u32; // 37
        for pred in [0, 100, 255] {
            for r in [-40, -37, -36, 0, 36, 37, 38, i32::MAX as i64] {
                let direct = residual_step(&b(pred), &b(r), &q, &lo, &hi).unwrap();
                let clamped = clamp(&b(r), &-&big_r, &big_r);
                assert_eq!(direct, clamp(&(b(pred) + clamped * &q), &lo, &hi));
            }
        }
        assert!(residual_step(&b(0), &b(1), &b(0), &lo, &hi).is_err());
        assert!(residual_step(&b(0), &(b(1) << 31u32), &b(1), &lo, &hi).is_err());
    }
}
