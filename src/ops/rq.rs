//! §5.1 Requantisation (`rq`): the epilogue of `conv`, `conv_transpose`,
//! `rescale`, `mul`, `gram` and `apply`; `chscale` follows the same steps.

use super::observe::Observer;
use crate::num::Round;
use crate::plan::Shape;
use crate::tensor::Tensor;
use crate::whg1::{Placement, Rq};
use num_bigint::BigInt;

/// One channel's `rq` parameters, spelled out.
pub struct Channel {
    pub pre: i64,
    pub mult: i64,
    pub round: Round,
    pub shift: u32,
    pub post: i64,
}

/// The four steps of `rq` for output channel `o`.
pub fn requantise(v: &BigInt, k: &Channel, o: usize, obs: &mut dyn Observer) -> BigInt {
    let t = v + k.pre;
    obs.see("rq.t", o, &t);
    let p = t * k.mult;
    obs.see("rq.p", o, &p);
    let q = k.round.apply(&p, k.shift); // never narrowed before the post bias
    obs.see("rq.q", o, &q);
    let y = q + k.post;
    obs.see("rq.y", o, &y);
    y
}

/// `rq_o(v)` for output channel `o`.
pub fn rq(rq: &Rq, o: usize, v: &BigInt, obs: &mut dyn Observer) -> BigInt {
    let k = Channel {
        pre: rq.bias_at(Placement::Pre, o),
        mult: rq.mult_at(o),
        round: rq.round,
        shift: rq.shift_at(o),
        post: rq.bias_at(Placement::Post, o),
    };
    requantise(v, &k, o, obs)
}

/// `rq_o(acc)` for every element of `out`: `acc` holds the sums in CHW order, and each is shown to
/// `obs` under `key`, then requantised, in that order.
pub fn rq_each(key: &'static str, p: &Rq, out: Shape, acc: Vec<BigInt>, obs: &mut dyn Observer) -> Tensor {
    let mut acc = acc.into_iter();
    Tensor::from_fn(out, |o, _, _| {
        let v = acc.next().expect("one sum per element");
        obs.see(key, o, &v);
        rq(p, o, &v, obs)
    })
}
