//! §8.3 `igdn`, `layernorm_c` (lemma L1), `l2norm` (lemma L2) and `softmax`.

use super::scalar_fn::exp_neg_q16;
use super::{Out, k_c, plain, si, su};
use crate::bounds::interval::{Iv, Rec, hull_into};
use crate::bounds::sat::{Ctx, S};
use crate::plan::Shape;

/// `igdn` over `cin` channels with the shifts `(gf, frac)`: `igdn.N` from the terms' signs, `igdn.r`
/// from the final norm (a literal left fold, whose addends mix signs).
pub(super) fn igdn(
    c: &mut Ctx,
    rec: &mut Rec,
    x: Iv,
    cin: u64,
    (gf, frac): (u32, u32),
    gamma: &[i64],
    beta: &[i64],
) -> Out {
    let n = cin as usize;
    let l2 = c.mul(x.lo, x.lo);
    let h2 = c.mul(x.hi, x.hi);
    let straddles = x.lo <= S::ZERO && S::ZERO <= x.hi;
    let x2 = if straddles {
        Iv::new(fault!("iv-igdn-x2-no-zero", S::ZERO, l2.min(h2)), l2.max(h2))
    } else {
        Iv::new(l2.min(h2), l2.max(h2))
    };
    rec.put("igdn.x2", x2);
    let mut y: Option<Iv> = None;
    let mut term_hull: Option<Iv> = None;
    for i in 0..n {
        let b = si(beta[i]);
        let nb = fault!("iv-igdn-n-no-beta", b, S::ZERO);
        let mut n_lo = nb.min(S::ZERO);
        let mut n_hi = nb.max(S::ZERO);
        let (mut f_lo, mut f_hi) = (b, b);
        for j in 0..n {
            let gx2 = c.corner(Iv::point(si(gamma[i * n + j])), x2);
            rec.put("igdn.gx2", gx2);
            let term = c.shr_iv(gx2, gf);
            hull_into(&mut term_hull, term);
            n_lo = c.add(n_lo, term.lo.min(S::ZERO));
            n_hi = c.add(n_hi, term.hi.max(S::ZERO));
            f_lo = c.add(f_lo, term.lo);
            f_hi = c.add(f_hi, term.hi);
        }
        rec.put("igdn.N", Iv::new(n_lo, n_hi));
        let (f_lo, f_hi) = fault!("iv-igdn-r-from-n", (f_lo, f_hi), (n_lo, n_hi));
        let r = Iv::new(c.isqrt(f_lo.max(S::ZERO)), c.isqrt(f_hi.max(S::ZERO)));
        rec.put("igdn.r", r);
        let xr = c.corner(x, r);
        rec.put("igdn.xr", xr);
        hull_into(&mut y, c.shr_iv(xr, frac));
    }
    let term = term_hull.expect("C ≥ 1");
    rec.put("igdn.term", term);
    Out {
        results: vec![y.expect("C ≥ 1")],
        k_c: Some(k_c(c, term)),
        w_bits: None,
        mac: false,
    }
}

/// `layernorm_c` over `cin` channels: `ln.n` bounded by lemma L1.
pub(super) fn layernorm_c(c: &mut Ctx, rec: &mut Rec, x: Iv, cin: u64, eps: u64, gamma: &[i64], beta: &[i64]) -> Out {
    let cc = su(cin);
    let half_c = su(fault!("iv-ln-m-no-half", cin / 2, 0));
    let (l, h) = (x.lo, x.hi);
    let s_iv = Iv::new(c.mul(cc, l.min(S::ZERO)), c.mul(cc, h.max(S::ZERO)));
    rec.put("ln.S", s_iv);
    let m_lo = c.mul(cc, l);
    let m_lo = c.sub(m_lo, half_c);
    let m_hi = c.mul(cc, h);
    let m_hi = c.add(m_hi, half_c);
    rec.put("ln.m", Iv::new(m_lo, m_hi));
    let d_lo = c.sub(l, h);
    let d = c.sub(h, l);
    rec.put("ln.d", Iv::new(d_lo, d));
    let d2 = c.mul(d, d);
    let t_hi = c.mul(cc, d2);
    rec.put("ln.T", Iv::new(S::ZERO, t_hi));
    let e = su(eps);
    let d2b = c.mul(d, d);
    let v_hi = c.add(d2b, e);
    rec.put("ln.v", Iv::new(e, v_hi));
    let two32 = S::pow2(32);
    rec.put("rsq.num", Iv::point(two32));
    let r0 = c.isqrt(e);
    let k_hi = c.div_floor(two32, r0);
    rec.put("ln.k", Iv::new(S::ZERO, k_hi));
    // D = min((h − l)·⌊2^32/r0⌋, ⌈isqrt_ceil(C)·2^32·(r0 + 1) / r0⌉)
    let dk1 = c.mul(d, k_hi);
    let sc = c.isqrt_ceil(cc);
    let r1 = c.add(r0, S::from_i128(1));
    let a = c.mul(sc, two32);
    let a = c.mul(a, r1);
    let na = c.neg(a);
    let fl = c.div_floor(na, r0);
    let dk2 = c.neg(fl);
    let dd = fault!("iv-ln-dk-no-min", dk1.min(dk2), dk1);
    let ndd = c.neg(dd);
    rec.put("ln.dk", Iv::new(ndd, dd));
    // N = min(⌊(h − l)·⌊2^32/r0⌋ / 2^16⌋ + 1, N_max)
    let dk1b = c.mul(d, k_hi);
    let n1 = c.shr(dk1b, 16);
    let n1 = c.add(n1, S::from_i128(1));
    let b = c.mul(sc, S::pow2(16));
    let b = c.mul(b, r1);
    let nmax = c.div_floor(b, r0);
    let nmax = c.add(nmax, S::from_i128(1));
    let nn = n1.min(nmax);
    let n_iv = Iv::new(c.neg(nn), nn);
    rec.put("ln.n", n_iv);
    let mut y: Option<Iv> = None;
    for ch in 0..cin as usize {
        let ng = c.corner(n_iv, Iv::point(si(gamma[ch])));
        rec.put("ln.ng", ng);
        let v = c.shr_iv(ng, 16);
        hull_into(&mut y, c.add_iv(v, si(beta[ch])));
    }
    plain(vec![y.expect("C ≥ 1")])
}

/// `l2norm` of an input planned on the declared sizes as `s`: `L = H·W`; the result by lemma L2.
pub(super) fn l2norm(c: &mut Ctx, rec: &mut Rec, x: Iv, s: Shape, eps: u64) -> Out {
    let l = S::V(ethnum::I256::from(u128::from(s.h) * u128::from(s.w)));
    let al = c.abs(x.lo);
    let ah = c.abs(x.hi);
    let xx = al.max(ah);
    let x2 = c.mul(xx, xx);
    let t = c.mul(l, x2);
    let e = su(eps);
    let t = fault!("iv-l2-t-no-eps", c.add(t, e), t);
    rec.put("l2.T", Iv::new(S::ZERO, t));
    let two32 = S::pow2(32);
    rec.put("rsq.num", Iv::point(two32));
    let r = c.isqrt(e);
    rec.put("l2.k", Iv::new(S::ZERO, c.div_floor(two32, r)));
    let n32 = c.neg(two32);
    rec.put("l2.vk", Iv::new(n32, two32));
    let n16 = c.neg(S::pow2(16));
    plain(vec![Iv::new(n16, S::pow2(16))])
}

/// `softmax` of an input planned on the declared sizes as `s`: `W_max = W`.
pub(super) fn softmax(c: &mut Ctx, rec: &mut Rec, x: Iv, s: Shape) -> Out {
    let wmax = su(s.w);
    let diff = c.sub(x.lo, x.hi);
    rec.put("sm.diff", Iv::new(diff, S::ZERO));
    let u = c.sub(x.hi, x.lo);
    exp_neg_q16(c, rec, Iv::new(S::ZERO, u));
    let e = S::from_i128(fault!("iv-softmax-e-2^16", 65553, 65536));
    let sum = c.mul(wmax, e);
    rec.put("sm.sum", Iv::new(S::ZERO, sum));
    let a = c.mul(e, S::pow2(16));
    let sum2 = c.mul(wmax, e);
    let half = c.div_floor(sum2, S::from_i128(2));
    let num = c.add(a, half);
    rec.put("sm.num", Iv::new(S::ZERO, num));
    plain(vec![Iv::new(S::ZERO, S::pow2(16))])
}
