//! Scalar functions (§5.8): `sigmoid` and `elu`, each on one value.

use super::norm::narrow;
use super::{E, ck};
use crate::num::{exp_neg_q16, floor_shr};

/// `sigmoid`: `⌊2^32 / (2^16 + e)⌋` with `e = exp_neg_q16(−v)` for `v ≥ 0`, else `⌊e·2^16 / (2^16 + e)⌋`.
pub fn sigmoid(v: i64) -> E<i64> {
    let neg_abs = if v >= 0 { ck(v.checked_neg(), "exp.negx")? } else { v };
    let e = ck(exp_neg_q16(neg_abs), "exp")?;
    Ok(if v >= 0 {
        (1i64 << 32) / ((1 << 16) + e)
    } else {
        fault!("sigmoid-by-symmetry", (e << 16) / ((1 << 16) + e), by_symmetry(e))
    })
}

/// `sigmoid-by-symmetry`: `2^16 − sigmoid(−v)` for `v < 0`, whose `e = exp_neg_q16(v)` is the same.
#[cfg(feature = "mutants")]
fn by_symmetry(e: i64) -> i64 {
    (1 << 16) - (1i64 << 32) / ((1 << 16) + e)
}

/// `elu(α)`: `v` for `v > 0`, else `⌊α·(exp_neg_q16(v) − 2^16) / 2^16⌋`.
pub fn elu(v: i64, alpha: i64) -> E<i64> {
    if fault!("elu-zero-identity", v > 0, v >= 0) {
        return Ok(v);
    }
    let e = ck(exp_neg_q16(v), "exp")?;
    let p = i128::from(alpha) * i128::from(e - (1 << 16)); // elu.p
    narrow(floor_shr(p, 16), "elu out")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elu_at_zero_is_17_alpha_over_2_16() {
        // §5.8: at v = 0, ⌊17·α / 2^16⌋.
        for alpha in [65536i64, 1, -1, 3855, -3856, i64::MAX, i64::MIN] {
            let want = (17i128 * i128::from(alpha)).div_euclid(1 << 16);
            assert_eq!(elu(0, alpha).unwrap() as i128, want);
        }
        assert_eq!(elu(5, -7).unwrap(), 5);
    }

    #[test]
    fn sigmoid_is_within_0_and_2_16_and_rises() {
        let mut prev = -1;
        for v in (-400_000..400_000).step_by(997) {
            let s = sigmoid(v).unwrap();
            assert!((0..=1 << 16).contains(&s) && s >= prev);
            prev = s;
        }
        assert_eq!(sigmoid(0).unwrap(), (1i64 << 32) / ((1 << 16) + 65553));
    }
}
