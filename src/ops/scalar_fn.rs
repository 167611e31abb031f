//! §5.8 Scalar functions: `sigmoid` and `elu`.

use crate::num::{exp_neg_q16, floor_div, pow2};
use crate::tensor::Tensor;
use num_bigint::BigInt;
use num_traits::Signed;

/// `⌊2^32 / (2^16 + e)⌋` with `e = exp_neg_q16(−v)` for `v ≥ 0`;
/// `⌊e·2^16 / (2^16 + e)⌋` with `e = exp_neg_q16(v)` for `v < 0`.
pub fn sigmoid(x: &Tensor) -> Tensor {
    x.map(|v| {
        if !v.is_negative() {
            let e = exp_neg_q16(&-v);
            floor_div(&pow2(32), &(pow2(16) + e)) // sig.num = 2^32
        } else {
            let e = exp_neg_q16(v);
            floor_div(&(&e * pow2(16)), &(pow2(16) + &e)) // sig.num = e·2^16
        }
    })
}

/// `v` for `v > 0`, else `⌊α·(exp_neg_q16(v) − 2^16) / 2^16⌋`.
pub fn elu(x: &Tensor, alpha: i64) -> Tensor {
    x.map(|v| {
        if v.is_positive() {
            v.clone()
        } else {
            let p = BigInt::from(alpha) * (exp_neg_q16(v) - pow2(16)); // elu.p
            floor_div(&p, &pow2(16))
        }
    })
}
