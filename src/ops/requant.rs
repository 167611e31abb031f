//! §5.4 `rescale`, `chscale` and `mul`.

use super::rq::{requantise, rq};
use crate::tensor::Tensor;
use crate::whg1::{Chscale, Rq};
use num_bigint::BigInt;

/// `out[c][y][x] = rq_c(in[c][y][x])`.
pub fn rescale(p: &Rq, x: &Tensor) -> Tensor {
    Tensor::from_fn(x.shape, |c, y, xo| rq(p, c, x.at(c, y, xo)))
}

/// `out[c][y][x] = R_round(in[c][y][x]·M[r][c], s)`, with `r` the value of scalar `k`:
/// the `rq` steps with the input as `t`, `M[r][c]` as the multiplier and no bias.
pub fn chscale(p: &Chscale, x: &Tensor, r: usize) -> Tensor {
    let row = &p.m[r * x.c()..(r + 1) * x.c()];
    Tensor::from_fn(x.shape, |c, y, xo| {
        requantise(x.at(c, y, xo), 0, row[c], p.round, p.shift.into(), 0)
    })
}

/// `out[c][y][x] = rq_c(a[c][y][x]·b[c′][y][x])`, with `c′ = c` if `b` has `C` channels, else 0.
pub fn mul(p: &Rq, a: &Tensor, b: &Tensor) -> Tensor {
    let broadcast = b.c() == 1;
    Tensor::from_fn(a.shape, |c, y, x| {
        let c2 = if broadcast { 0 } else { c };
        let product: BigInt = a.at(c, y, x) * b.at(c2, y, x); // mul.p
        rq(p, c, &product)
    })
}
