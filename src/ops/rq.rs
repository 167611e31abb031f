//! §5.1 Requantisation (`rq`): the epilogue of `conv`, `conv_transpose`,
//! `rescale`, `mul`, `gram` and `apply`; `chscale` follows the same steps.

use crate::num::Round;
use crate::whg1::{Placement, Rq};
use num_bigint::BigInt;

/// The four steps of `rq`, with the channel's parameters spelled out.
pub fn requantise(v: &BigInt, pre: i64, mult: i64, round: Round, shift: u32, post: i64) -> BigInt {
    let t = v + pre; // rq.t
    let p = t * mult; // rq.p
    let q = round.apply(&p, shift); // rq.q, never narrowed before the post bias
    q + post // rq.y
}

/// `rq_o(v)` for output channel `o`.
pub fn rq(rq: &Rq, o: usize, v: &BigInt) -> BigInt {
    requantise(
        v,
        rq.bias_at(Placement::Pre, o),
        rq.mult_at(o),
        rq.round,
        rq.shift_at(o),
        rq.bias_at(Placement::Post, o),
    )
}
