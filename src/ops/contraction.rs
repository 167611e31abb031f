//! §5.9 Contractions: `gram` and `apply`, each followed by `rq` (no multiplier,
//! no bias, one shift).

use super::observe::Observer;
use super::rq::rq;
use crate::plan::Shape;
use crate::tensor::Tensor;
use crate::whg1::Contraction;
use num_bigint::BigInt;

/// `out[g·d + i][0][j] = R_round(Σ_{y,x} A[g·d + i][y][x]·B[g·d + j][y][x], s)`.
pub fn gram(p: &Contraction, a: &Tensor, b: &Tensor, out: Shape, obs: &mut dyn Observer) -> Tensor {
    let d = a.c() / p.groups as usize;
    Tensor::from_fn(out, |o, _, j| {
        let (g, i) = (o / d, o % d);
        let mut acc = BigInt::ZERO;
        for y in 0..a.h() {
            for x in 0..a.w() {
                acc += a.at(g * d + i, y, x) * b.at(g * d + j, y, x);
            }
        }
        obs.see("gram.acc", o, &acc);
        rq(&p.rq, o, &acc, obs)
    })
}

/// `out[g·d + i][y][x] = R_round(Σ_{j<d} A[g·d + i][0][j]·V[g·d + j][y][x], s)`.
pub fn apply(p: &Contraction, a: &Tensor, v: &Tensor, obs: &mut dyn Observer) -> Tensor {
    let d = a.c() / p.groups as usize;
    Tensor::from_fn(v.shape, |o, y, x| {
        let (g, i) = (o / d, o % d);
        let mut acc = BigInt::ZERO;
        for j in 0..d {
            acc += a.at(g * d + i, 0, j) * v.at(g * d + j, y, x);
        }
        obs.see("apply.acc", o, &acc);
        rq(&p.rq, o, &acc, obs)
    })
}
