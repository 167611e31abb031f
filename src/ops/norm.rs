//! §5.7 Normalisation: `igdn`, `layernorm_c`, `l2norm` and `softmax`.

use super::observe::Observer;
use super::scalar_fn::exp_neg_q16;
use crate::num::{floor_div, isqrt, pow2, rsq_num, rsqrt_q16, sgn, trunc_div};
use crate::tensor::Tensor;
use crate::whg1::{Igdn, LayernormC};
use num_bigint::BigInt;

/// At each position, `N_i = β_i + Σ_j ⌊γ[i][j]·x_j² / 2^gf⌋` (each term floored, then
/// summed), `r_i = isqrt(max(0, N_i))` and `out = ⌊x_i·r_i / 2^frac⌋`.
pub fn igdn(p: &Igdn, x: &Tensor, obs: &mut dyn Observer) -> Tensor {
    let c = x.c();
    Tensor::from_fn(x.shape, |i, y, xo| {
        let mut n = BigInt::from(p.beta[i]);
        for j in 0..c {
            let xj = x.at(j, y, xo);
            let x2 = xj * xj;
            obs.see("igdn.x2", i, &x2);
            let gx2 = BigInt::from(p.gamma[i * c + j]) * x2;
            obs.see("igdn.gx2", i, &gx2);
            let term = floor_div(&gx2, &pow2(p.gf));
            obs.see("igdn.term", i, &term);
            n += term;
        }
        obs.see("igdn.N", i, &n);
        let r = isqrt(&n.max(BigInt::ZERO));
        obs.see("igdn.r", i, &r);
        let xr = x.at(i, y, xo) * r;
        obs.see("igdn.xr", i, &xr);
        floor_div(&xr, &pow2(p.frac))
    })
}

/// Over each position's `C` channel values: the mean `m` rounded half away from
/// zero, the deviations, `V = ⌊T/C⌋`, `k = rsqrt_q16(V + ε)`, and
/// `out[c] = ⌊⌊d_c·k / 2^16⌋·γ[c] / 2^16⌋ + β[c]`.
pub fn layernorm_c(p: &LayernormC, x: &Tensor, obs: &mut dyn Observer) -> Tensor {
    let c = x.c();
    let cc = BigInt::from(c);
    let mut out = Tensor::filled(x.shape, &BigInt::ZERO);
    for y in 0..x.h() {
        for xo in 0..x.w() {
            let s: BigInt = (0..c).map(|ch| x.at(ch, y, xo)).sum();
            obs.see("ln.S", 0, &s);
            let big_m = &s + BigInt::from(c / 2) * sgn(&s);
            obs.see("ln.m", 0, &big_m);
            let m = trunc_div(&big_m, &cc);
            let d: Vec<BigInt> = (0..c).map(|ch| x.at(ch, y, xo) - &m).collect();
            let t: BigInt = d.iter().map(|dc| dc * dc).sum();
            obs.see("ln.T", 0, &t);
            let v = floor_div(&t, &cc);
            let u = v + p.eps;
            obs.see("ln.v", 0, &u);
            obs.see("rsq.num", 0, &rsq_num());
            let k = rsqrt_q16(&u);
            obs.see("ln.k", 0, &k);
            for (ch, dc) in d.iter().enumerate() {
                obs.see("ln.d", ch, dc);
                let dk = dc * &k;
                obs.see("ln.dk", ch, &dk);
                let n = floor_div(&dk, &pow2(16));
                obs.see("ln.n", ch, &n);
                let ng = n * p.gamma[ch];
                obs.see("ln.ng", ch, &ng);
                out.data[(ch * x.h() + y) * x.w() + xo] = floor_div(&ng, &pow2(16)) + p.beta[ch];
            }
        }
    }
    out
}

/// For each channel, over its `H·W` positions: `T = Σ v²`, `k = rsqrt_q16(T + ε)`,
/// `out = ⌊v·k / 2^16⌋`.
pub fn l2norm(eps: u64, x: &Tensor, obs: &mut dyn Observer) -> Tensor {
    let mut k = Vec::with_capacity(x.c());
    for c in 0..x.c() {
        let plane = &x.data[c * x.h() * x.w()..(c + 1) * x.h() * x.w()];
        let t: BigInt = plane.iter().map(|v| v * v).sum();
        obs.see("l2.T", c, &t);
        let u = t + eps;
        obs.see("l2.T", c, &u);
        obs.see("rsq.num", c, &rsq_num());
        let kc = rsqrt_q16(&u);
        obs.see("l2.k", c, &kc);
        k.push(kc);
    }
    Tensor::from_fn(x.shape, |c, y, xo| {
        let vk = x.at(c, y, xo) * &k[c];
        obs.see("l2.vk", c, &vk);
        floor_div(&vk, &pow2(16))
    })
}

/// Along `W`, for each `(c, y)`: `e_x = exp_neg_q16(v_x − max)`, `Σ = Σ_x e_x`,
/// `out_x = ⌊(e_x·2^16 + ⌊Σ/2⌋) / Σ⌋`.
pub fn softmax(x: &Tensor, obs: &mut dyn Observer) -> Tensor {
    let mut out = Tensor::filled(x.shape, &BigInt::ZERO);
    for c in 0..x.c() {
        for y in 0..x.h() {
            let row: Vec<&BigInt> = (0..x.w()).map(|xo| x.at(c, y, xo)).collect();
            let m = row.iter().copied().max().cloned().unwrap_or_default();
            let mut e = Vec::with_capacity(row.len());
            for v in &row {
                let diff = *v - &m;
                obs.see("sm.diff", c, &diff);
                e.push(exp_neg_q16(&diff, c, obs));
            }
            let sum: BigInt = e.iter().sum(); // at least 65553
            obs.see("sm.sum", c, &sum);
            let half = floor_div(&sum, &BigInt::from(2));
            for (xo, ex) in e.iter().enumerate() {
                let num = ex * pow2(16) + &half;
                obs.see("sm.num", c, &num);
                out.data[(c * x.h() + y) * x.w() + xo] = floor_div(&num, &sum);
            }
        }
    }
    out
}
