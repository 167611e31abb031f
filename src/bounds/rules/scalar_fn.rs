//! §8.3 `exp_neg_q16` (recorded for every `softmax`, `sigmoid` and `elu`), `sigmoid` and `elu`.

use super::Recorder;
use super::elementwise::abs;
use crate::bounds::interval::{Interval, hull};
use crate::num::pow2;
use num_bigint::BigInt;
use num_traits::Signed;

/// Given `[u_lo, u_hi]` of `u = −x`: `exp.negx = [u_lo, u_hi]`;
/// `exp.nl = [45426·⌊u_lo/45426⌋, 45426·⌊u_hi/45426⌋]`; `exp.t2 = [43245², 88670²]`;
/// `exp.c = [0, 23495·⌊88670²/2^16⌋]`.
pub fn exp_neg_q16(r: &mut Recorder, u: &Interval) {
    r.record("exp.negx", u);
    let k = BigInt::from(45426);
    let nl = r.sat.monotone(u, |sat, v| {
        let n = sat.div(v, &k);
        sat.mul(&k, &n)
    });
    r.record("exp.nl", &nl);
    let (t_lo, t_hi) = (BigInt::from(43245), BigInt::from(88670));
    let t2 = Interval {
        lo: r.sat.mul(&t_lo, &t_lo),
        hi: r.sat.mul(&t_hi, &t_hi),
    };
    r.record("exp.t2", &t2);
    let q = r.sat.shr(&t2.hi, 16);
    let c = r.sat.mul(&BigInt::from(23495), &q);
    r.record(
        "exp.c",
        &Interval {
            lo: BigInt::ZERO,
            hi: c,
        },
    );
}

/// `u` is the image of `[l, h]` under `|·|`; `sig.num = [0, 65553·2^16]`; the result is `[0, 2^16]`.
pub fn sigmoid(r: &mut Recorder, x: &Interval) -> Interval {
    let u = abs(&mut r.sat, x);
    exp_neg_q16(r, &u);
    let num = r.sat.mul(&BigInt::from(65553), &pow2(16));
    r.record(
        "sig.num",
        &Interval {
            lo: BigInt::ZERO,
            hi: num,
        },
    );
    Interval::new(0, pow2(16))
}

/// `u = [max(0, −h), max(0, −l)]`; `elu.p` is the corner hull of `[α, α]` and `[−2^16, 17]`;
/// the result is the hull of `[max(l, 1), h]` (when `h > 0`) and
/// `[⌊elu.p_lo / 2^16⌋, ⌊elu.p_hi / 2^16⌋]` (when `l ≤ 0`).
pub fn elu(r: &mut Recorder, x: &Interval, alpha: i64) -> Interval {
    let zero = BigInt::ZERO;
    let neg_h = r.sat.neg(&x.hi);
    let neg_l = r.sat.neg(&x.lo);
    let u = Interval {
        lo: r.sat.max(&zero, &neg_h),
        hi: r.sat.max(&zero, &neg_l),
    };
    exp_neg_q16(r, &u);
    let p = r
        .sat
        .corner_hull(&Interval::point(alpha), &Interval::new(-pow2(16), 17));
    r.record("elu.p", &p);
    let mut parts = Vec::new();
    if x.hi.is_positive() {
        parts.push(Interval {
            lo: r.sat.max(&x.lo, &BigInt::from(1)),
            hi: x.hi.clone(),
        });
    }
    if !x.lo.is_positive() {
        parts.push(r.sat.monotone(&p, |sat, v| sat.shr(v, 16)));
    }
    hull(&parts).unwrap_or_else(|| Interval::point(0))
}
