//! §5.8 Scalar functions: `sigmoid` and `elu`; and `exp_neg_q16` as they (and
//! `softmax`) call it, reporting its intermediates.

use super::observe::Observer;
use crate::num::{self, floor_div, pow2};
use crate::tensor::Tensor;
use num_bigint::BigInt;
use num_traits::Signed;

/// `exp_neg_q16(v)` (§2) for `v ≤ 0`, reporting `exp.negx`, `exp.nl`, `exp.t2` and `exp.c`.
pub fn exp_neg_q16(v: &BigInt, channel: usize, obs: &mut dyn Observer) -> BigInt {
    let e = num::exp_neg_q16_steps(v);
    obs.see("exp.negx", channel, &e.u);
    obs.see("exp.nl", channel, &e.g);
    obs.see("exp.t2", channel, &e.t2);
    obs.see("exp.c", channel, &e.c);
    e.value
}

/// `⌊2^32 / (2^16 + e)⌋` with `e = exp_neg_q16(−v)` for `v ≥ 0`;
/// `⌊e·2^16 / (2^16 + e)⌋` with `e = exp_neg_q16(v)` for `v < 0`.
pub fn sigmoid(x: &Tensor, obs: &mut dyn Observer) -> Tensor {
    Tensor::from_fn(x.shape, |c, y, xo| {
        let v = x.at(c, y, xo);
        let (e, num) = if !v.is_negative() {
            (exp_neg_q16(&-v, c, obs), pow2(32))
        } else {
            let e = exp_neg_q16(v, c, obs);
            let num = &e * pow2(16);
            (e, num)
        };
        obs.see("sig.num", c, &num);
        floor_div(&num, &(pow2(16) + e))
    })
}

/// `v` for `v > 0`, else `⌊α·(exp_neg_q16(v) − 2^16) / 2^16⌋`.
pub fn elu(x: &Tensor, alpha: i64, obs: &mut dyn Observer) -> Tensor {
    Tensor::from_fn(x.shape, |c, y, xo| {
        let v = x.at(c, y, xo);
        if v.is_positive() {
            return v.clone();
        }
        let p = BigInt::from(alpha) * (exp_neg_q16(v, c, obs) - pow2(16));
        obs.see("elu.p", c, &p);
        floor_div(&p, &pow2(16))
    })
}
