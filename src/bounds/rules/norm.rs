//! §8.3 `igdn`, `layernorm_c` (lemma L1), `l2norm` (lemma L2) and `softmax`.

use super::Recorder;
use super::scalar_fn::exp_neg_q16;
use crate::bounds::interval::{Interval, hull};
use crate::num::{pow2, rsq_num};
use crate::whg1::{Igdn, LayernormC};
use num_bigint::BigInt;
use num_traits::{Signed, Zero};

/// `igdn.x2`: `[0, max(l², h²)]` if `l ≤ 0 ≤ h`, else `[min(l², h²), max(l², h²)]`.
fn square(r: &mut Recorder, x: &Interval) -> Interval {
    let l2 = r.sat.mul(&x.lo, &x.lo);
    let h2 = r.sat.mul(&x.hi, &x.hi);
    let hi = r.sat.max(&l2, &h2);
    let lo = if !x.lo.is_positive() && !x.hi.is_negative() {
        BigInt::zero()
    } else {
        r.sat.min(&l2, &h2)
    };
    Interval { lo, hi }
}

/// For output channel `i` and input channel `j`: `gx2_ij` is the corner hull of `[γ_ij, γ_ij]`
/// and `igdn.x2`, `term_ij = [⌊gx2_lo / 2^gf⌋, ⌊gx2_hi / 2^gf⌋]`; `igdn.N = A({term_ij}, β_i)`;
/// the final norm `Nf_i = [β_i + Σ_j term_ij,lo, β_i + Σ_j term_ij,hi]`;
/// `igdn.r = [isqrt(max(0, Nf_lo)), isqrt(max(0, Nf_hi))]`; `igdn.xr` the corner hull of
/// `[l, h]` and `igdn.r`; the result `[⌊xr_lo / 2^frac⌋, ⌊xr_hi / 2^frac⌋]`.
pub fn igdn(r: &mut Recorder, p: &Igdn, x: &Interval) -> Interval {
    let c = p.beta.len();
    let x2 = square(r, x);
    r.record("igdn.x2", &x2);
    let mut results = Vec::new();
    for i in 0..c {
        let terms: Vec<Interval> = (0..c)
            .map(|j| {
                let gx2 = r.sat.corner_hull(&Interval::point(p.gamma[i * c + j]), &x2);
                r.record("igdn.gx2", &gx2);
                let term = r.sat.monotone(&gx2, |sat, v| sat.shr(v, p.gf));
                r.record("igdn.term", &term);
                term
            })
            .collect();
        let beta = BigInt::from(p.beta[i]);
        let n = r.sat.partial_sums(&terms, &beta);
        r.record("igdn.N", &n);
        let nf_lo = r.sat.sum(beta.clone(), terms.iter().map(|t| &t.lo));
        let nf_hi = r.sat.sum(beta, terms.iter().map(|t| &t.hi));
        let root = |r: &mut Recorder, v: &BigInt| {
            let v = r.sat.max(&BigInt::zero(), v);
            r.sat.isqrt(&v)
        };
        let ri = Interval {
            lo: root(r, &nf_lo),
            hi: root(r, &nf_hi),
        };
        r.record("igdn.r", &ri);
        let xr = r.sat.corner_hull(x, &ri);
        r.record("igdn.xr", &xr);
        results.push(r.sat.monotone(&xr, |sat, v| sat.shr(v, p.frac)));
    }
    hull(&results).unwrap_or_else(|| Interval::point(0))
}

/// §8.3 `layernorm_c`, with lemma L1's bounds on `ln.dk` and `ln.n`.
pub fn layernorm_c(r: &mut Recorder, p: &LayernormC, x: &Interval) -> Interval {
    let zero = BigInt::zero();
    let c = BigInt::from(p.beta.len());
    let eps = BigInt::from(p.eps);
    let (l, h) = (&x.lo, &x.hi);
    // ln.S = [C·min(0, l), C·max(0, h)].
    let s_lo = r.sat.min(&zero, l);
    let s_hi = r.sat.max(&zero, h);
    let ln_s = Interval {
        lo: r.sat.mul(&c, &s_lo),
        hi: r.sat.mul(&c, &s_hi),
    };
    r.record("ln.S", &ln_s);
    // ln.m = [C·l − ⌊C/2⌋, C·h + ⌊C/2⌋].
    let half_c = r.sat.div(&c, &BigInt::from(2));
    let cl = r.sat.mul(&c, l);
    let ch = r.sat.mul(&c, h);
    let ln_m = Interval {
        lo: r.sat.sub(&cl, &half_c),
        hi: r.sat.add(&ch, &half_c),
    };
    r.record("ln.m", &ln_m);
    // The mean lies in [l, h], so ln.d = [l − h, h − l].
    let spread = r.sat.sub(h, l);
    let ln_d = Interval {
        lo: r.sat.sub(l, h),
        hi: spread.clone(),
    };
    r.record("ln.d", &ln_d);
    // ln.T = [0, C·(h − l)²]; ln.v = [ε, (h − l)² + ε].
    let spread2 = r.sat.mul(&spread, &spread);
    let t_hi = r.sat.mul(&c, &spread2);
    r.record(
        "ln.T",
        &Interval {
            lo: zero.clone(),
            hi: t_hi,
        },
    );
    let v_hi = r.sat.add(&spread2, &eps);
    r.record(
        "ln.v",
        &Interval {
            lo: eps.clone(),
            hi: v_hi,
        },
    );
    r.record("rsq.num", &Interval::point(rsq_num()));
    // ln.k = [0, ⌊2^32 / r0⌋], r0 = isqrt(ε).
    let r0 = r.sat.isqrt(&eps);
    let k_max = r.sat.div(&pow2(32), &r0);
    r.record(
        "ln.k",
        &Interval {
            lo: zero.clone(),
            hi: k_max.clone(),
        },
    );
    // L1: isqrt_ceil(C)·2^32·(r0 + 1) and isqrt_ceil(C)·2^16·(r0 + 1), left folds.
    let root_c = r.sat.isqrt_ceil(&c);
    let r0_1 = r.sat.add(&r0, &BigInt::from(1));
    let lemma = |r: &mut Recorder, scale: u32| {
        let a = r.sat.mul(&root_c, &pow2(scale));
        r.sat.mul(&a, &r0_1)
    };
    // ln.dk = [−D, D], D = min((h − l)·⌊2^32/r0⌋, ⌈isqrt_ceil(C)·2^32·(r0 + 1) / r0⌉).
    let spread_k = r.sat.mul(&spread, &k_max);
    let num32 = lemma(r, 32);
    let neg = r.sat.neg(&num32);
    let floor_neg = r.sat.div(&neg, &r0);
    let ceil = r.sat.neg(&floor_neg);
    let d = r.sat.min(&spread_k, &ceil);
    let dk = Interval {
        lo: r.sat.neg(&d),
        hi: d,
    };
    r.record("ln.dk", &dk);
    // ln.n = [−N, N], N = min(⌊(h − l)·⌊2^32/r0⌋ / 2^16⌋ + 1, N_max),
    // N_max = ⌊isqrt_ceil(C)·2^16·(r0 + 1) / r0⌋ + 1.
    let one = BigInt::from(1);
    let shifted = r.sat.shr(&spread_k, 16);
    let n_a = r.sat.add(&shifted, &one);
    let num16 = lemma(r, 16);
    let n_max0 = r.sat.div(&num16, &r0);
    let n_max = r.sat.add(&n_max0, &one);
    let n = r.sat.min(&n_a, &n_max);
    let ln_n = Interval {
        lo: r.sat.neg(&n),
        hi: n,
    };
    r.record("ln.n", &ln_n);
    // Per channel: ln.ng is the corner hull of ln.n and [γ[c], γ[c]]; the result is
    // [⌊ng_lo / 2^16⌋ + β[c], ⌊ng_hi / 2^16⌋ + β[c]].
    let results: Vec<Interval> = (0..p.beta.len())
        .map(|ch| {
            let ng = r.sat.corner_hull(&ln_n, &Interval::point(p.gamma[ch]));
            r.record("ln.ng", &ng);
            let beta = BigInt::from(p.beta[ch]);
            r.sat.monotone(&ng, |sat, v| {
                let q = sat.shr(v, 16);
                sat.add(&q, &beta)
            })
        })
        .collect();
    hull(&results).unwrap_or_else(|| Interval::point(0))
}

/// `l2.T = [0, L·X² + ε]`; `rsq.num = [2^32, 2^32]`; `l2.k = [0, ⌊2^32 / isqrt(ε)⌋]`;
/// `l2.vk = [−2^32, 2^32]`; the result is `[−2^16, 2^16]` (lemma L2).
pub fn l2norm(r: &mut Recorder, eps: u64, x: &Interval, l: u64) -> Interval {
    let zero = BigInt::zero();
    let abs_l = r.sat.abs(&x.lo);
    let abs_h = r.sat.abs(&x.hi);
    let big_x = r.sat.max(&abs_l, &abs_h);
    let lx = r.sat.mul(&BigInt::from(l), &big_x);
    let lx2 = r.sat.mul(&lx, &big_x);
    let eps = BigInt::from(eps);
    let t = Interval {
        lo: zero.clone(),
        hi: r.sat.add(&lx2, &eps),
    };
    r.record("l2.T", &t);
    r.record("rsq.num", &Interval::point(rsq_num()));
    let root = r.sat.isqrt(&eps);
    let k = Interval {
        lo: zero,
        hi: r.sat.div(&pow2(32), &root),
    };
    r.record("l2.k", &k);
    r.record("l2.vk", &Interval::new(-pow2(32), pow2(32)));
    Interval::new(-pow2(16), pow2(16))
}

/// `sm.diff = [l − h, 0]`; `u = [0, h − l]`, then the `exp_neg_q16` rule;
/// `sm.sum = [0, W_max·65553]`; `sm.num = [0, 65553·2^16 + ⌊W_max·65553 / 2⌋]`;
/// the result is `[0, 2^16]`.
pub fn softmax(r: &mut Recorder, x: &Interval, w_max: u64) -> Interval {
    let zero = BigInt::zero();
    let diff_lo = r.sat.sub(&x.lo, &x.hi);
    r.record(
        "sm.diff",
        &Interval {
            lo: diff_lo,
            hi: zero.clone(),
        },
    );
    let u_hi = r.sat.sub(&x.hi, &x.lo);
    exp_neg_q16(
        r,
        &Interval {
            lo: zero.clone(),
            hi: u_hi,
        },
    );
    let e_max = BigInt::from(65553);
    let sum_hi = r.sat.mul(&BigInt::from(w_max), &e_max);
    r.record(
        "sm.sum",
        &Interval {
            lo: zero.clone(),
            hi: sum_hi.clone(),
        },
    );
    let scaled = r.sat.mul(&e_max, &pow2(16));
    let half = r.sat.div(&sum_hi, &BigInt::from(2));
    let num = Interval {
        lo: zero,
        hi: r.sat.add(&scaled, &half),
    };
    r.record("sm.num", &num);
    Interval::new(0, pow2(16))
}
