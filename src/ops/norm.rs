//! §5.7 Normalisation: `igdn`, `layernorm_c`, `l2norm` and `softmax`.

use crate::num::{exp_neg_q16, floor_div, isqrt, pow2, rsqrt_q16, sgn, trunc_div};
use crate::tensor::Tensor;
use crate::whg1::{Igdn, LayernormC};
use num_bigint::BigInt;

/// At each position, `N_i = β_i + Σ_j ⌊γ[i][j]·x_j² / 2^gf⌋` (each term floored, then
/// summed), `r_i = isqrt(max(0, N_i))` and `out = ⌊x_i·r_i / 2^frac⌋`.
pub fn igdn(p: &Igdn, x: &Tensor) -> Tensor {
    let c = x.c();
    Tensor::from_fn(x.shape, |i, y, xo| {
        let mut n = BigInt::from(p.beta[i]);
        for j in 0..c {
            let xj = x.at(j, y, xo);
            let gx2 = BigInt::from(p.gamma[i * c + j]) * (xj * xj); // igdn.gx2
            n += floor_div(&gx2, &pow2(p.gf)); // igdn.term
        }
        let r = isqrt(&n.max(BigInt::ZERO)); // igdn.r
        floor_div(&(x.at(i, y, xo) * r), &pow2(p.frac)) // igdn.xr
    })
}

/// Over each position's `C` channel values: the mean `m` rounded half away from
/// zero, the deviations, `V = ⌊T/C⌋`, `k = rsqrt_q16(V + ε)`, and
/// `out[c] = ⌊⌊d_c·k / 2^16⌋·γ[c] / 2^16⌋ + β[c]`.
pub fn layernorm_c(p: &LayernormC, x: &Tensor) -> Tensor {
    let c = x.c();
    let cc = BigInt::from(c);
    let mut out = Tensor::filled(x.shape, &BigInt::ZERO);
    for y in 0..x.h() {
        for xo in 0..x.w() {
            let s: BigInt = (0..c).map(|ch| x.at(ch, y, xo)).sum(); // ln.S
            let big_m = &s + BigInt::from(c / 2) * sgn(&s); // ln.m
            let m = trunc_div(&big_m, &cc);
            let d: Vec<BigInt> = (0..c).map(|ch| x.at(ch, y, xo) - &m).collect(); // ln.d
            let t: BigInt = d.iter().map(|dc| dc * dc).sum(); // ln.T
            let v = floor_div(&t, &cc);
            let u = v + p.eps; // ln.v
            let k = rsqrt_q16(&u); // ln.k
            for (ch, dc) in d.iter().enumerate() {
                let n = floor_div(&(dc * &k), &pow2(16)); // ln.dk, ln.n
                let value = floor_div(&(n * p.gamma[ch]), &pow2(16)) + p.beta[ch]; // ln.ng
                out.data[(ch * x.h() + y) * x.w() + xo] = value;
            }
        }
    }
    out
}

/// For each channel, over its `H·W` positions: `T = Σ v²`, `k = rsqrt_q16(T + ε)`,
/// `out = ⌊v·k / 2^16⌋`.
pub fn l2norm(eps: u64, x: &Tensor) -> Tensor {
    let k: Vec<BigInt> = (0..x.c())
        .map(|c| {
            let plane = &x.data[c * x.h() * x.w()..(c + 1) * x.h() * x.w()];
            let t: BigInt = plane.iter().map(|v| v * v).sum(); // l2.T
            rsqrt_q16(&(t + eps)) // l2.k
        })
        .collect();
    Tensor::from_fn(x.shape, |c, y, xo| floor_div(&(x.at(c, y, xo) * &k[c]), &pow2(16)))
}

/// Along `W`, for each `(c, y)`: `e_x = exp_neg_q16(v_x − max)`, `Σ = Σ_x e_x`,
/// `out_x = ⌊(e_x·2^16 + ⌊Σ/2⌋) / Σ⌋`.
pub fn softmax(x: &Tensor) -> Tensor {
    let mut out = Tensor::filled(x.shape, &BigInt::ZERO);
    for c in 0..x.c() {
        for y in 0..x.h() {
            let row: Vec<&BigInt> = (0..x.w()).map(|xo| x.at(c, y, xo)).collect();
            let m = row.iter().copied().max().cloned().unwrap_or_default();
            let e: Vec<BigInt> = row.iter().map(|v| exp_neg_q16(&(*v - &m))).collect(); // sm.diff
            let sum: BigInt = e.iter().sum(); // sm.sum, at least 65553
            let half = floor_div(&sum, &BigInt::from(2));
            for (xo, ex) in e.iter().enumerate() {
                let num = ex * pow2(16) + &half; // sm.num
                out.data[(c * x.h() + y) * x.w() + xo] = floor_div(&num, &sum);
            }
        }
    }
    out
}
