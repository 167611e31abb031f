//! §5.2 `conv` and §5.3 `conv_transpose`, transcribed as sums over taps.

use super::observe::Observer;
use super::rq::rq;
use crate::plan::Shape;
use crate::tensor::Tensor;
use crate::whg1::{Conv, ConvTranspose};
use num_bigint::BigInt;

/// `X̃[c][u][v]`: the input inside its plane, 0 outside.
fn padded(x: &Tensor, c: usize, u: i128, v: i128) -> BigInt {
    if (0..x.h() as i128).contains(&u) && (0..x.w() as i128).contains(&v) {
        x.at(c, u as usize, v as usize).clone()
    } else {
        BigInt::ZERO
    }
}

/// §5.2: `acc[o][y][x] = Σ_ci Σ_i Σ_j Wt[o][ci][i][j]·X̃[⌊o/og⌋·cg + ci][y·sh + i − ph][x·sw + j − pw]`,
/// then `rq_o`.
pub fn conv(p: &Conv, x: &Tensor, out: Shape, obs: &mut dyn Observer) -> Tensor {
    let cg = x.c() / p.groups as usize;
    let og = p.cout as usize / p.groups as usize;
    let (kh, kw) = (p.kh as usize, p.kw as usize);
    let wt = |o: usize, ci: usize, i: usize, j: usize| p.weights[((o * cg + ci) * kh + i) * kw + j];
    Tensor::from_fn(out, |o, y, xo| {
        let mut acc = BigInt::ZERO;
        for ci in 0..cg {
            for i in 0..kh {
                for j in 0..kw {
                    let u = (y * p.sh as usize + i) as i128 - i128::from(p.ph);
                    let v = (xo * p.sw as usize + j) as i128 - i128::from(p.pw);
                    acc += wt(o, ci, i, j) * padded(x, (o / og) * cg + ci, u, v);
                }
            }
        }
        obs.see("conv.acc", o, &acc);
        rq(&p.rq, o, &acc, obs)
    })
}

/// §5.3, the gather form: `acc[o][y][x] = Σ Wt[ci][o][i][j]·X[ci][ty/sh][tx/sw]` over the
/// taps with `ty = y + ph − i ≥ 0`, `ty mod sh = 0`, `ty/sh < H`, and likewise for `tx`;
/// then `rq_o`. A position no tap reaches holds `rq_o(0)`.
pub fn conv_transpose(p: &ConvTranspose, x: &Tensor, out: Shape, obs: &mut dyn Observer) -> Tensor {
    let (cout, kh, kw) = (p.cout as usize, p.kh as usize, p.kw as usize);
    let wt = |ci: usize, o: usize, i: usize, j: usize| p.weights[((ci * cout + o) * kh + i) * kw + j];
    // The input row (or column) tap `i` reads at output position `y`, if any.
    let source = |y: usize, pad: u32, i: usize, stride: u32, n: usize| -> Option<usize> {
        let t = (y as i128) + i128::from(pad) - (i as i128);
        let s = i128::from(stride);
        (t >= 0 && t % s == 0 && t / s < n as i128).then(|| (t / s) as usize)
    };
    Tensor::from_fn(out, |o, y, xo| {
        let mut acc = BigInt::ZERO;
        for ci in 0..x.c() {
            for i in 0..kh {
                let Some(u) = source(y, p.ph, i, p.sh, x.h()) else {
                    continue;
                };
                for j in 0..kw {
                    let Some(v) = source(xo, p.pw, j, p.sw, x.w()) else {
                        continue;
                    };
                    acc += wt(ci, o, i, j) * x.at(ci, u, v);
                }
            }
        }
        obs.see("convT.acc", o, &acc);
        rq(&p.rq, o, &acc, obs)
    })
}
