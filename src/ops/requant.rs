//! §5.4 `rescale`, `chscale` and `mul`.

use super::observe::Observer;
use super::rq::{Channel, requantise, rq};
use crate::tensor::Tensor;
use crate::whg1::{Chscale, Rq};
use num_bigint::BigInt;

/// `out[c][y][x] = rq_c(in[c][y][x])`.
pub fn rescale(p: &Rq, x: &Tensor, obs: &mut dyn Observer) -> Tensor {
    Tensor::from_fn(x.shape, |c, y, xo| rq(p, c, x.at(c, y, xo), obs))
}

/// `out[c][y][x] = R_round(in[c][y][x]·M[r][c], s)`, with `r` the value of scalar `k`:
/// the `rq` steps with the input as `t`, `M[r][c]` as the multiplier and no bias.
pub fn chscale(p: &Chscale, x: &Tensor, r: usize, obs: &mut dyn Observer) -> Tensor {
    let row = &p.m[r * x.c()..(r + 1) * x.c()];
    Tensor::from_fn(x.shape, |c, y, xo| {
        let k = Channel {
            pre: 0,
            mult: row[c],
            round: p.round,
            shift: p.shift.into(),
            post: 0,
        };
        requantise(x.at(c, y, xo), &k, c, obs)
    })
}

/// `out[c][y][x] = rq_c(a[c][y][x]·b[c′][y][x])`, with `c′ = c` if `b` has `C` channels, else 0.
pub fn mul(p: &Rq, a: &Tensor, b: &Tensor, obs: &mut dyn Observer) -> Tensor {
    let broadcast = b.c() == 1;
    Tensor::from_fn(a.shape, |c, y, x| {
        let c2 = if broadcast { 0 } else { c };
        let product: BigInt = a.at(c, y, x) * b.at(c2, y, x);
        obs.see("mul.p", c, &product);
        rq(p, c, &product, obs)
    })
}
