//! The requantisation epilogue `rq` (§5.1).

use super::{E, ck};
use crate::num::r_round;
use crate::whg1::Rq;

/// `rq_o(v)`: `t = v + pre`, `p = t·mult`, `q = R_round(p, shift)`, `y = q + post`.
pub fn apply(rq: &Rq, o: usize, v: i64) -> E<i64> {
    let (pre, post) = if crate::mutants::active("rq-bias-placement-swapped") {
        (rq.post(o), rq.pre(o))
    } else {
        (rq.pre(o), rq.post(o))
    };
    let o_shift = if crate::mutants::active("rq-shift-channel-0") {
        0
    } else {
        o
    };
    let t = ck(v.checked_add(pre), "rq.t")?;
    if crate::mutants::active("rq-mult-after-round") {
        let q = ck(r_round(i128::from(t), rq.shift(o), rq.round), "rq.q")?;
        let q = q.checked_mul(i128::from(rq.mult(o).unwrap_or(1)));
        let q = ck(q.and_then(|q| i64::try_from(q).ok()), "rq.q")?;
        return ck(q.checked_add(post), "rq.y");
    }
    let p = match rq.mult(o) {
        Some(m) => i128::from(t) * i128::from(m), // |t·m| ≤ 2^126
        None => i128::from(t),
    };
    let q = ck(r_round(p, rq.shift(o_shift), rq.round), "rq.q")?;
    let q = ck(i64::try_from(q).ok(), "rq.q")?;
    ck(q.checked_add(post), "rq.y")
}
