//! §8.3 `exp_neg_q16` (recorded for every `softmax`, `sigmoid` and `elu`), `sigmoid` and `elu`.

use super::elementwise::abs_image;
use super::{Out, plain, si, su};
use crate::bounds::interval::{Iv, Rec, hull_into};
use crate::bounds::sat::{Ctx, S};

/// The `exp_neg_q16` rule on the interval of `u = −x`.
pub(super) fn exp_neg_q16(c: &mut Ctx, rec: &mut Rec, u: Iv) {
    rec.put("exp.negx", u);
    let k = S::from_i128(45426);
    let nlo = c.div_floor(u.lo, k);
    let nhi = c.div_floor(u.hi, k);
    let nl = Iv::new(c.mul(k, nlo), c.mul(k, nhi));
    rec.put("exp.nl", nl);
    let t_lo = fault!("iv-exp-t2-from-zero", 43245, 0);
    let t2 = Iv::new(
        c.mul(S::from_i128(t_lo), S::from_i128(t_lo)),
        c.mul(S::from_i128(88670), S::from_i128(88670)),
    );
    rec.put("exp.t2", t2);
    let q = c.shr(t2.hi, 16);
    rec.put("exp.c", Iv::new(S::ZERO, c.mul(S::from_i128(23495), q)));
}

/// `sigmoid`: `u` is the image of the input's interval under `|·|`.
pub(super) fn sigmoid(c: &mut Ctx, rec: &mut Rec, x: Iv) -> Out {
    let u = abs_image(c, x);
    exp_neg_q16(c, rec, u);
    let num = fault!("iv-sigmoid-num-2^32", c.mul(su(65553), S::pow2(16)), S::pow2(32));
    rec.put("sig.num", Iv::new(S::ZERO, num));
    plain(vec![Iv::new(S::ZERO, S::pow2(16))])
}

/// `elu(α)`: `u = [max(0, −h), max(0, −l)]`; the hull of the positive part and `elu.p`'s.
pub(super) fn elu(c: &mut Ctx, rec: &mut Rec, x: Iv, alpha: i64) -> Out {
    let nh = c.neg(x.hi);
    let nl = c.neg(x.lo);
    exp_neg_q16(c, rec, Iv::new(S::ZERO.max(nh), S::ZERO.max(nl)));
    let n16 = c.neg(S::pow2(16));
    let top = fault!("iv-elu-p-no-17", 17, 0);
    let p = c.corner(Iv::point(si(alpha)), Iv::new(n16, S::from_i128(top)));
    rec.put("elu.p", p);
    let mut y: Option<Iv> = None;
    if x.hi > S::ZERO {
        hull_into(&mut y, Iv::new(x.lo.max(S::from_i128(1)), x.hi));
    }
    if x.lo <= S::ZERO {
        hull_into(&mut y, c.shr_iv(p, 16));
    }
    plain(vec![y.expect("a part")])
}
