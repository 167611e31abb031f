//! `gram` and `apply` (§5.9).

use super::acc::{self, Sum};
use super::{E, Tensor, ck};
use crate::num::r_round;
use crate::plan::Shape;
use crate::whg1::Rq;

fn requant(rq: &Rq, sum: i64) -> E<i64> {
    let round = fault!("contraction-round-floor", rq.round, crate::num::Round::Floor);
    // No multiplier: `p = t·1` (§5.9), formed as every `rq` forms it.
    let q = ck(r_round(super::rq::product(sum, 1), rq.shift(0), round), "rq.q")?;
    ck(i64::try_from(q).ok(), "rq.q")
}

/// `out[g·d + i][0][j] = R(Σ_{y,x} A[g·d + i][y][x] · B[g·d + j][y][x], s)`.
pub fn gram(a: &Tensor, b: &Tensor, groups: u32, rq: &Rq, o: Shape) -> E<Tensor> {
    let (c, h, w) = a.dims();
    let d = c / groups as usize;
    let mut data = Vec::with_capacity(c * d);
    let (a, b) = fault!("gram-operands-swapped", (a, b), (b, a));
    let split = acc::split_point(h * w);
    for row in 0..c {
        let g = fault!("gram-group-offset-missing", row / d, 0);
        let pa = a.plane(row);
        for j in 0..d {
            let pb = b.plane(g * d + j);
            let mut sum = Sum::new(split);
            for (k, (&x, &y)) in pa.iter().zip(pb).enumerate() {
                sum.add(k, ck(x.checked_mul(y), "gram.term")?, "gram.acc")?;
            }
            data.push(sum.finish(|t| requant(rq, t))?);
        }
    }
    Ok(Tensor { shape: o, data })
}

/// `out[g·d + i][y][x] = R(Σ_{j<d} A[g·d + i][0][j] · V[g·d + j][y][x], s)`.
pub fn apply(a: &Tensor, v: &Tensor, groups: u32, rq: &Rq) -> E<Tensor> {
    let (c, h, w) = v.dims();
    let d = c / groups as usize;
    let n = h * w;
    let split = acc::split_point(d);
    let mut data = Vec::with_capacity(v.data.len());
    for row in 0..c {
        let g = fault!("apply-group-offset-missing", row / d, 0);
        let arow = a.plane(row);
        for pos in 0..n {
            let mut sum = Sum::new(split);
            for (j, &av) in arow.iter().enumerate() {
                let term = ck(av.checked_mul(v.data[(g * d + j) * n + pos]), "apply.term")?;
                sum.add(j, term, "apply.acc")?;
            }
            data.push(sum.finish(|t| requant(rq, t))?);
        }
    }
    Ok(Tensor { shape: v.shape, data })
}
