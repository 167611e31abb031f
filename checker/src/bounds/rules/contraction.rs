//! §8.3 `gram` and `apply`: `n` terms of one corner hull, then the `rq` rules with `m = 1`.

use super::rq::rq_rule;
use super::{Out, k_c};
use crate::bounds::interval::{Iv, Rec};
use crate::bounds::sat::{Ctx, S};
use crate::plan::Shape;
use crate::whg1::Rq;

/// `gram` of `A` (planned on the declared sizes as `s`) and `B`: `L = H·W` terms.
pub(super) fn gram(c: &mut Ctx, rec: &mut Rec, rq: &Rq, a: Iv, b: Iv, s: Shape) -> Out {
    let l = fault!("iv-gram-length-h", u128::from(s.h) * u128::from(s.w), u128::from(s.h));
    contraction(c, rec, rq, a, b, l, ("gram.term", "gram.acc"))
}

/// `apply` of `A` over `cin` channels in `groups` groups, and `V`: `d = cin / groups` terms.
pub(super) fn apply(c: &mut Ctx, rec: &mut Rec, rq: &Rq, a: Iv, v: Iv, cin: u64, groups: u32) -> Out {
    let d = fault!("iv-apply-length-groups", cin / u64::from(groups), u64::from(groups));
    contraction(c, rec, rq, a, v, u128::from(d), ("apply.term", "apply.acc"))
}

/// The term (the corner hull of the two inputs' intervals) and `[n·min(0, term_lo), n·max(0,
/// term_hi)]`, recorded under `keys`, then the `rq` rules.
fn contraction(c: &mut Ctx, rec: &mut Rec, rq: &Rq, a: Iv, b: Iv, n: u128, keys: (&'static str, &'static str)) -> Out {
    let term = c.corner(a, b);
    let n = S::V(ethnum::I256::from(n));
    let lo = c.mul(n, term.lo.min(S::ZERO));
    let hi = c.mul(n, term.hi.max(S::ZERO));
    let acc = Iv::new(lo, hi);
    rec.put(keys.0, term);
    rec.put(keys.1, acc);
    let y = rq_rule(c, rec, rq, 0, acc);
    Out {
        results: vec![y],
        k_c: Some(k_c(c, term)),
        w_bits: None,
        mac: true,
    }
}
