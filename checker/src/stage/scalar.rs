//! The stage operators on single values: E2 `dequantize`, E3 `bucket`, E4 `coded`, E5
//! `scale_index`, E7 `band_lookup` and E9 `residual_step` (§5E); E6 `block_stat` is in
//! [`super::block_stat`], E13 `coding_order` in [`super::coding_order`].
//!
//! Each computes in its fixed width (§5E, §7.4). Request values are [`Dec`]s of any length; where one
//! passes the width, the operator says why and how it is handled, never by wrapping.

use super::dec::Dec;
use super::{Code, Refusal, SR};
use ethnum::I256;

/// A condition refusal: before any element, `at = −1`.
pub(super) fn cond<T>(code: Code) -> SR<T> {
    Err(Refusal { code, at: -1 })
}

/// Whether `v` lies in `[lo, hi]`, for bounds that fit i128.
fn within(v: &Dec, lo: i128, hi: i128) -> bool {
    (lo..=hi).contains(&v.clamped())
}

/// E2 `dequantize(sym, f, base) = sym·2^f + base`. Every refusal is `field_range` with `at = 0`
/// (§14.1, docs/assumptions.md S1): `f` outside `0..=62`, or a value that does not fit i64.
///
/// The value is formed digit by digit (Horner over the decimal columns of `sym` and `base`, each
/// column contributing `s_i·2^f + b_i`, `|·| < 2^66`) in i128. Once the running value reaches
/// `M = 2^67` in magnitude it can never come back: `|10·a + t| ≥ 10·M − 2^66 > M`. Then the value
/// does not fit i64 and is refused; until then every partial value is below `2^71`.
pub fn dequantize(sym: &Dec, f: &Dec, base: &Dec) -> SR<i64> {
    let refuse = Err(Refusal {
        code: Code::FieldRange,
        at: 0,
    });
    let f = match f.to_i128() {
        Some(f) if (0..=fault!("dequantize-f-63", 62, 63)).contains(&f) => f as u32,
        _ => return refuse,
    };
    let width = sym.digits().len().max(base.digits().len());
    let column = |x: &Dec, i: usize| -> i128 {
        // The digit of 10^(width − 1 − i), signed.
        let ds = x.digits();
        let pad = width - ds.len();
        let d = if i < pad { 0 } else { i128::from(ds[i - pad]) };
        if x.is_neg() { -d } else { d }
    };
    const M: i128 = 1 << 67;
    let mut acc: i128 = 0;
    for i in 0..width {
        acc = acc * 10 + (column(sym, i) << f) + column(base, i);
        if fault!("dequantize-unchecked", acc.abs() >= M, false) {
            return refuse;
        }
    }
    fault!("dequantize-unchecked", i64::try_from(acc).or(refuse), Ok(acc as i64))
}

/// E3's rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BucketRule {
    Ceil,
    Floor,
}

/// E3 `bucket(σ, e, rule)`: comparisons only. `ceil` needs `N ≥ 1` edges (docs/assumptions.md S2);
/// `floor` needs `N − 1 ≥ 1` edges, non-decreasing.
pub fn bucket(sigma: &Dec, edges: &[Dec], rule: BucketRule) -> SR<u64> {
    match rule {
        BucketRule::Ceil => {
            let Some(e0) = edges.first() else {
                return cond(Code::ModelMismatch);
            };
            let n = edges.len() as u64;
            let s = fault!("bucket-ceil-no-max", sigma.max(e0), sigma);
            let compared = fault!("bucket-ceil-last-edge", &edges[..edges.len() - 1], edges);
            let le = compared
                .iter()
                .filter(|e| fault!("bucket-ceil-lt", s <= *e, s < *e))
                .count() as u64;
            let le = le.min(n - 1);
            Ok((n - 1) - le)
        }
        BucketRule::Floor => {
            let unsorted = edges.windows(2).any(|w| w[0] > w[1]);
            if edges.is_empty() || fault!("bucket-floor-order-unchecked", unsorted, false) {
                return cond(Code::ModelMismatch);
            }
            Ok(edges
                .iter()
                .filter(|e| fault!("bucket-floor-lt", *e <= sigma, *e < sigma))
                .count() as u64)
        }
    }
}

/// E4 `coded(v, thr) = v > thr`.
pub fn coded(v: &Dec, thr: &Dec) -> bool {
    v > thr || fault!("coded-ge", false, v == thr)
}

/// `R_half_up(v, s)` (§2) in I256 for `s ≤ 127`, read from the remainder's bits: `⌊v / 2^s⌋`, plus 1
/// when the low `s` bits reach `2^(s−1)`. Never overflows: with `s ≥ 1` the quotient is below
/// `2^254`.
pub(super) fn r_half_up_256(v: I256, s: u32) -> I256 {
    if s == 0 {
        return v;
    }
    let q = v >> s;
    let low = v.as_u256() & ((ethnum::U256::ONE << s) - 1);
    if low >= ethnum::U256::ONE << (s - 1) { q + 1 } else { q }
}

/// `R_half_up(v, s)` for any `v`: in I256 when `v` fits, by long division otherwise.
fn r_half_up_any(v: &Dec, s: u32) -> Dec {
    match v.to_i256() {
        Some(w) => Dec::from_i256(r_half_up_256(w, s)),
        None => v.r_half_up(s),
    }
}

/// `scale-index-floor`: `⌊v / 2^s⌋` for a `v` that fits I256 (`R_half_up` past it).
#[cfg(feature = "mutants")]
fn floor_any(v: &Dec, s: u32) -> Dec {
    match v.to_i256() {
        Some(w) => Dec::from_i256(w >> s),
        None => v.r_half_up(s),
    }
}

/// A shift in `0..=127`, the condition of E5 and E6.
pub(super) fn shift(s: &Dec) -> SR<u32> {
    if within(s, 0, 127) {
        Ok(s.clamped() as u32)
    } else {
        cond(Code::ModelMismatch)
    }
}

/// E5 `scale_index(v, s, n) = clamp(R_half_up(v, s), 0, n − 1)`, for `s` in `0..=127` and `n ≥ 1`.
///
/// The rounding is I256 for a `v` that fits, and long division (`Dec::r_half_up`) for one past
/// it; the clamp compares exactly, so `n` may have any length.
pub fn scale_index(v: &Dec, s: &Dec, n: &Dec) -> SR<Dec> {
    let s = shift(s)?;
    if n.clamped() < 1 {
        return cond(Code::ModelMismatch);
    }
    let r = fault!("scale-index-floor", r_half_up_any(v, s), floor_any(v, s));
    let top = fault!("scale-index-clamp-n", Dec::sum(&[n, &Dec::from_i128(-1)]), n.clone());
    Ok(if r.is_neg() {
        Dec::ZERO
    } else if r > top {
        top
    } else {
        r
    })
}

/// `C·H·W`, or `None` past u128 (three sides below 2^64 can pass it).
pub fn elems(shape: [u64; 3]) -> Option<u128> {
    shape.iter().try_fold(1u128, |n, &d| n.checked_mul(u128::from(d)))
}

/// `clamp(v, lo, hi)` for `lo ≤ hi`, exactly.
pub(super) fn clamp_dec(v: Dec, lo: &Dec, hi: &Dec) -> Dec {
    if &v < lo {
        lo.clone()
    } else if &v > hi {
        hi.clone()
    } else {
        v
    }
}

/// E7 `band_lookup(v, e, table, row)`: `band = #{ k : v ≥ e_k }`, then `table[row][band]`. `row` must
/// name a row, and that row must hold `m + 1` entries (docs/assumptions.md S3).
pub fn band_lookup<'a>(v: &Dec, edges: &[Dec], table: &'a [Vec<Dec>], row: &Dec) -> SR<&'a Dec> {
    let r = row.clamped();
    if r < 0 || r >= table.len() as i128 {
        return cond(Code::ModelMismatch);
    }
    let entries = &table[r as usize];
    if entries.len() != edges.len() + 1 {
        return cond(Code::ModelMismatch);
    }
    let band = edges
        .iter()
        .filter(|e| fault!("band-lookup-gt", v >= *e, v > *e))
        .count();
    Ok(&entries[band])
}

/// E9 `residual_step(pred, r, q, lo, hi) = clamp(pred + r·q, lo, hi)`, for `lo < hi`,
/// `pred ∈ [lo, hi]`, `q ∈ [1, 65535]` and `r` fitting i32.
///
/// - Under the conditions of E9's 32-bit form (`hi − lo ≤ 65535`, `lo − 131070` and `hi + 131070`
///   fitting i32), that form, in i32: `clamp(pred + clamp(r, −R, R)·q, lo, hi)`,
///   `R = ⌊(hi − lo)/q⌋ + 1`.
/// - Otherwise, with `lo` and `hi` fitting i64, in checked i64: `r·q` has magnitude below `2^47`;
///   a sum `pred + r·q` that leaves i64 lies beyond `hi` (or `lo`), so the clamp gives that bound.
/// - With a bound past i64, exactly (`Dec`).
pub fn residual_step(pred: &Dec, r: &Dec, q: &Dec, lo: &Dec, hi: &Dec) -> SR<Dec> {
    if lo >= hi || pred < lo || pred > hi || !within(q, 1, 65535) || !within(r, i32::MIN.into(), i32::MAX.into()) {
        return cond(Code::ModelMismatch);
    }
    let (r, q) = (r.clamped() as i32, q.clamped() as i32);
    let (Some(lo64), Some(hi64), Some(p64)) = (lo.to_i64(), hi.to_i64(), pred.to_i64()) else {
        let step = Dec::from_i128(i128::from(r) * i128::from(q));
        return Ok(clamp_dec(Dec::sum(&[pred, &step]), lo, hi));
    };
    let fits32 = |v: Option<i64>| v.is_some_and(|v| i32::try_from(v).is_ok());
    let form32 = fits32(lo64.checked_sub(131_070))
        && fits32(hi64.checked_add(131_070))
        && hi64.checked_sub(lo64).is_some_and(|d| d <= 65_535);
    if form32 {
        let (lo, hi, p) = (lo64 as i32, hi64 as i32, p64 as i32);
        let big_r = (hi - lo) / q + fault!("residual-r-bound-short", 1, 0);
        let v = p + r.clamp(-big_r, big_r) * q;
        return Ok(Dec::from_i128(v.clamp(lo, hi).into()));
    }
    let step = i64::from(r) * i64::from(q);
    let v = match p64.checked_add(step) {
        Some(v) => v.clamp(lo64, hi64),
        None if step > 0 => hi64,
        None => lo64,
    };
    // Equivalent in the 32-bit form: E9's identity holds for any lo < hi, and in i128 nothing it
    // forms overflows.
    let v = fault!("residual-form32-in-i64", v, form32_wide(p64, r, q, lo64, hi64));
    Ok(Dec::from_i128(v.into()))
}

/// `residual-form32-in-i64`: E9's 32-bit form, `clamp(pred + clamp(r, −R, R)·q, lo, hi)` with
/// `R = ⌊(hi − lo)/q⌋ + 1`, outside its conditions (in i128).
#[cfg(feature = "mutants")]
fn form32_wide(p64: i64, r: i32, q: i32, lo64: i64, hi64: i64) -> i64 {
    let big_r = (i128::from(hi64) - i128::from(lo64)) / i128::from(q) + 1;
    let v = i128::from(p64) + i128::from(r).clamp(-big_r, big_r) * i128::from(q);
    v.clamp(lo64.into(), hi64.into()) as i64 // within [lo, hi]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seeded::Rng;

    fn d(s: &str) -> Dec {
        Dec::parse(s).unwrap()
    }
    fn di(v: i128) -> Dec {
        Dec::from_i128(v)
    }
    fn refused<T: std::fmt::Debug>(r: SR<T>) -> (Code, i64) {
        let e = r.unwrap_err();
        (e.code, e.at)
    }

    #[test]
    fn dequantize_facts() {
        // The protocol's example, and the i64 ends.
        assert_eq!(dequantize(&di(-3), &di(4), &di(7)), Ok(-41));
        assert_eq!(dequantize(&di(2), &di(62), &di(-1)), Ok(i64::MAX));
        assert_eq!(dequantize(&di(-2), &di(62), &di(0)), Ok(i64::MIN));
        assert_eq!(refused(dequantize(&di(2), &di(62), &di(0))), (Code::FieldRange, 0));
        assert_eq!(refused(dequantize(&di(-2), &di(62), &di(-1))), (Code::FieldRange, 0));
        for f in [-1, 63, 1 << 70] {
            assert_eq!(refused(dequantize(&di(0), &di(f), &di(0))), (Code::FieldRange, 0));
        }
        // Only the final value must fit (S1): sym·2^f alone may pass i64.
        assert_eq!(dequantize(&di(1 << 40), &di(62), &di(-(1i128 << 102) + 5)), Ok(5));
        // Cancellation far past any fixed width.
        let big = format!("1{}", "0".repeat(200));
        assert_eq!(
            dequantize(&d(&format!("{big}5")), &di(0), &d(&format!("-{big}0"))),
            Ok(5)
        );
        assert_eq!(
            refused(dequantize(&d(&big), &di(1), &d(&format!("-{big}")))),
            (Code::FieldRange, 0)
        );
        // Agreement with i128 arithmetic.
        let mut r = Rng::new(3);
        for _ in 0..20000 {
            let sym = i128::from(r.next_u64() as i64) >> r.below(64);
            let f = r.range(0, 62) as u32;
            let base = i128::from(r.next_u64() as i64) * i128::from(r.range(-3, 3));
            let want = (sym << f).checked_add(base).and_then(|v| i64::try_from(v).ok());
            assert_eq!(
                dequantize(&di(sym), &di(f.into()), &di(base)).ok(),
                want,
                "{sym} {f} {base}"
            );
        }
    }

    #[test]
    fn bucket_facts() {
        let e: Vec<Dec> = [10, 20, 30].iter().map(|&v| di(v)).collect();
        // ceil: σ′ = max(σ, e_0); b = (N − 1) − #{i < N − 1 : σ′ ≤ e_i}; exactly at an edge.
        assert_eq!(bucket(&di(5), &e, BucketRule::Ceil), Ok(0));
        assert_eq!(bucket(&di(10), &e, BucketRule::Ceil), Ok(0));
        assert_eq!(bucket(&di(11), &e, BucketRule::Ceil), Ok(1));
        assert_eq!(bucket(&di(20), &e, BucketRule::Ceil), Ok(1));
        assert_eq!(bucket(&di(21), &e, BucketRule::Ceil), Ok(2));
        assert_eq!(bucket(&di(1000), &e, BucketRule::Ceil), Ok(2)); // e_{N−1} never compared
        assert_eq!(bucket(&di(5), &e[..1], BucketRule::Ceil), Ok(0));
        // floor: b = #{i : e_i ≤ σ}.
        assert_eq!(bucket(&di(9), &e, BucketRule::Floor), Ok(0));
        assert_eq!(bucket(&di(10), &e, BucketRule::Floor), Ok(1));
        assert_eq!(bucket(&di(30), &e, BucketRule::Floor), Ok(3));
        assert_eq!(
            refused(bucket(&di(0), &[], BucketRule::Ceil)),
            (Code::ModelMismatch, -1)
        );
        assert_eq!(
            refused(bucket(&di(0), &[], BucketRule::Floor)),
            (Code::ModelMismatch, -1)
        );
        assert_eq!(
            refused(bucket(&di(0), &[di(2), di(1)], BucketRule::Floor)),
            (Code::ModelMismatch, -1)
        );
        // Unsorted ceil edges are allowed; the index stays in [0, N − 1].
        assert_eq!(bucket(&di(15), &[di(30), di(10), di(20)], BucketRule::Ceil), Ok(1));
    }

    #[test]
    fn scale_index_facts() {
        assert_eq!(scale_index(&di(-1000), &di(3), &di(32)), Ok(Dec::ZERO));
        assert_eq!(scale_index(&di(3), &di(1), &di(32)), Ok(di(2))); // 1.5 → 2
        assert_eq!(scale_index(&di(-3), &di(1), &di(32)), Ok(di(0))); // −1.5 → −1 → 0
        assert_eq!(scale_index(&di(1 << 20), &di(7), &di(32)), Ok(di(31)));
        assert_eq!(scale_index(&di(5), &di(0), &di(1)), Ok(di(0)));
        assert_eq!(
            refused(scale_index(&di(5), &di(128), &di(1))),
            (Code::ModelMismatch, -1)
        );
        assert_eq!(refused(scale_index(&di(5), &di(-1), &di(1))), (Code::ModelMismatch, -1));
        assert_eq!(refused(scale_index(&di(5), &di(0), &di(0))), (Code::ModelMismatch, -1));
        // Past I256: v = 10^100 + 1 over 2, under a larger n.
        let v = d(&format!("1{}1", "0".repeat(99)));
        let n = d(&format!("1{}", "0".repeat(101)));
        assert_eq!(
            scale_index(&v, &di(1), &n).unwrap().to_string(),
            format!("5{}1", "0".repeat(98))
        );
        assert_eq!(scale_index(&v, &di(127), &di(7)), Ok(di(6)));
    }

    #[test]
    fn band_lookup_facts() {
        let e = [di(1003), di(1352), di(1937)];
        let t = vec![
            vec![di(-31), di(20), di(122), di(181)],
            vec![di(-80), di(-31), di(71), di(130)],
        ];
        assert_eq!(band_lookup(&di(1002), &e, &t, &di(0)), Ok(&di(-31)));
        assert_eq!(band_lookup(&di(1003), &e, &t, &di(0)), Ok(&di(20)));
        assert_eq!(band_lookup(&di(5000), &e, &t, &di(1)), Ok(&di(130)));
        assert_eq!(refused(band_lookup(&di(0), &e, &t, &di(2))), (Code::ModelMismatch, -1));
        assert_eq!(refused(band_lookup(&di(0), &e, &t, &di(-1))), (Code::ModelMismatch, -1));
        let short = vec![vec![di(1)], t[1].clone()];
        assert_eq!(
            refused(band_lookup(&di(0), &e, &short, &di(0))),
            (Code::ModelMismatch, -1)
        );
        assert_eq!(band_lookup(&di(0), &e, &short, &di(1)), Ok(&di(-80))); // only the row read
    }

    /// E9 as written, in i128, for bounds that fit i64.
    fn residual_literal(pred: i128, r: i128, q: i128, lo: i128, hi: i128) -> i128 {
        (pred + r * q).clamp(lo, hi)
    }

    #[test]
    fn residual_step_facts() {
        // At r = ±R and ±(R + 1) the two forms agree; the registered ranges.
        for (lo, hi) in [(0i128, 255i128), (-32768, 32767)] {
            for q in [1i128, 2, 7, 255, 65535] {
                let big_r = (hi - lo) / q + 1;
                for pred in [lo, hi, (lo + hi) / 2] {
                    for r in [
                        big_r,
                        -big_r,
                        big_r + 1,
                        -big_r - 1,
                        0,
                        1,
                        -1,
                        i32::MAX.into(),
                        i32::MIN.into(),
                    ] {
                        let got = residual_step(&di(pred), &di(r), &di(q), &di(lo), &di(hi)).unwrap();
                        assert_eq!(got.to_i128(), Some(residual_literal(pred, r, q, lo, hi)));
                    }
                }
            }
        }
        // Near the i32 limits (E9's example) and the i64 limits.
        let (lo, hi) = ((1i128 << 31) - 65536, (1i128 << 31) - 1);
        let got = residual_step(&di(hi), &di(2), &di(65535), &di(lo), &di(hi)).unwrap();
        assert_eq!(got, di(hi));
        let (lo, hi) = (i128::from(i64::MIN), i128::from(i64::MAX));
        for (pred, r) in [(hi, 1), (lo, -1), (hi - 5, 2), (lo + 5, -3), (0, i32::MAX.into())] {
            let got = residual_step(&di(pred), &di(r), &di(65535), &di(lo), &di(hi)).unwrap();
            assert_eq!(got.to_i128(), Some(residual_literal(pred, r, 65535, lo, hi)));
        }
        // Random agreement, across the three paths.
        let mut g = Rng::new(11);
        for _ in 0..20000 {
            let lo = i128::from(g.next_u64() as i64) >> g.below(64);
            let hi = lo + 1 + i128::from(g.next_u64() >> g.below(64) >> 1);
            let pred = lo + i128::from(g.next_u64()) % (hi - lo + 1);
            let q = g.range(1, 65535).into();
            let r = g.range(i32::MIN.into(), i32::MAX.into()).into();
            let got = residual_step(&di(pred), &di(r), &di(q), &di(lo), &di(hi)).unwrap();
            assert_eq!(got.to_i128(), Some(residual_literal(pred, r, q, lo, hi)));
        }
        // Conditions.
        let c = |p, r, q, lo, hi| refused(residual_step(&di(p), &di(r), &di(q), &di(lo), &di(hi)));
        assert_eq!(c(5, 1, 1, 5, 5), (Code::ModelMismatch, -1));
        assert_eq!(c(6, 1, 1, 0, 5), (Code::ModelMismatch, -1));
        assert_eq!(c(1, 1, 0, 0, 5), (Code::ModelMismatch, -1));
        assert_eq!(c(1, 1, 65536, 0, 5), (Code::ModelMismatch, -1));
        assert_eq!(c(1, 1 << 31, 1, 0, 5), (Code::ModelMismatch, -1));
    }
}
