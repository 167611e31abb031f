//! The requantisation epilogue `rq` (§5.1).

use super::{E, ck};
use crate::num::r_round;
use crate::whg1::Rq;

/// `rq_o(v)`: `t = v + pre`, `p = t·mult`, `q = R_round(p, shift)`, `y = q + post`.
pub fn apply(rq: &Rq, o: usize, v: i64) -> E<i64> {
    let t = ck(v.checked_add(rq.pre(o)), "rq.t")?;
    let p = match rq.mult(o) {
        Some(m) => i128::from(t) * i128::from(m), // |t·m| ≤ 2^126
        None => i128::from(t),
    };
    let q = ck(r_round(p, rq.shift(o), rq.round), "rq.q")?;
    let q = ck(i64::try_from(q).ok(), "rq.q")?;
    ck(q.checked_add(rq.post(o)), "rq.y")
}
