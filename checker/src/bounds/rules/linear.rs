//! §8.3 `conv` and `conv_transpose`: partial-sum intervals (§8.2), then the `rq` rules.
//!
//! Method. Where §8.2 offers it, the pass keeps a few sums instead of folding term by term: for `conv`
//! each output channel's sums of positive and of negative weights (`S⁺`, `S⁻`), and for
//! `conv_transpose` the same per output channel and residue; the term hull is the corner hull of the
//! extreme weights and the input interval. All of a partial-sum fold's addends have one sign, so the
//! fold saturates exactly when the closed form's exact value passes ±2^255, and a single term passes
//! it exactly when one of the closed form's products does; so the closed form, evaluated with
//! saturating operations, gives the fold's integers and its saturation.

use super::rq::rq_rule;
use super::{Out, k_c, si, w_bits};
use crate::bounds::interval::{Iv, Rec, hull_into};
use crate::bounds::sat::{Ctx, S};
use crate::whg1::{Conv, ConvT};

/// §8.2's closed form of `A(K, b)` for terms that are weights times one interval `[l, h]`, from the
/// sums of the positive (`sp`) and negative (`sn`) weights.
fn partial_sum(c: &mut Ctx, x: Iv, sp: i128, sn: i128, b: i64) -> Iv {
    let b = fault!("iv-partial-sum-no-bias", si(b), S::ZERO);
    let l0 = x.lo.min(S::ZERO);
    let h0 = x.hi.max(S::ZERO);
    let (sp, sn) = (S::from_i128(sp), S::from_i128(sn));
    let lo1 = c.mul(l0, sp);
    let lo2 = c.mul(h0, sn);
    let lo = c.add(b.min(S::ZERO), lo1);
    let lo = c.add(lo, lo2);
    let hi1 = c.mul(h0, sp);
    let hi2 = c.mul(l0, sn);
    let hi = c.add(b.max(S::ZERO), hi1);
    let hi = c.add(hi, hi2);
    Iv::new(lo, hi)
}

/// `S⁺` and `S⁻` (§8.2): the sums of the positive and of the negative weights. Each weight adds to
/// both, its positive part to one and its negative part to the other, so that the loop has no branch.
fn signed_sums(w: &[i64]) -> (i128, i128) {
    w.iter().fold((0i128, 0i128), |(sp, sn), &w| {
        (sp + i128::from(w.max(0)), sn + i128::from(w.min(0)))
    })
}

/// `conv`: per output channel, `conv.acc` from its taps' signed sums, then the `rq` rules.
pub(super) fn conv(c: &mut Ctx, rec: &mut Rec, p: &Conv, x: Iv) -> Out {
    let (wlo, whi) = p.w.range();
    let term = c.corner(Iv::new(si(wlo), si(whi)), x);
    rec.put("conv.term", term);
    let per = p.w.len() / p.cout as usize;
    let mut y: Option<Iv> = None;
    for o in 0..p.cout as usize {
        let (sp, sn) = signed_sums(&p.w[o * per..(o + 1) * per]);
        let acc = partial_sum(c, x, sp, sn, p.rq.pre(o));
        rec.put("conv.acc", acc);
        hull_into(&mut y, rq_rule(c, rec, &p.rq, o, acc));
    }
    Out {
        results: vec![y.expect("cout ≥ 1")],
        k_c: Some(k_c(c, term)),
        w_bits: Some(w_bits(p.w.range())),
        mac: true,
    }
}

/// `conv_transpose`: per output channel, `convT.acc` the hull over residues of each residue's
/// partial sum, then the `rq` rules.
pub(super) fn conv_transpose(c: &mut Ctx, rec: &mut Rec, p: &ConvT, x: Iv, cin: u64) -> Out {
    let (wlo, whi) = p.w.range();
    let term = c.corner(Iv::new(si(wlo), si(whi)), x);
    rec.put("convT.term", term);
    let (cout, kh, kw) = (p.cout as usize, p.kh as usize, p.kw as usize);
    let (sh, sw) = (p.sh as usize, p.sw as usize);
    // Residues that hold taps: ρy < min(sh, kh), ρx < min(sw, kw) (B11).
    let (sh, sw) = fault!("iv-convt-one-residue", (sh, sw), (1, 1));
    let (ry, rx) = (sh.min(kh), sw.min(kw));
    let empty_residue = fault!("iv-convt-empty-residue-missed", sh > kh || sw > kw, false);
    let mut y: Option<Iv> = None;
    for o in 0..cout {
        let mut sums = vec![(0i128, 0i128); ry * rx];
        for ci in 0..cin as usize {
            let base = (ci * cout + o) * kh * kw;
            for i in 0..kh {
                for j in 0..kw {
                    let w = p.w[base + i * kw + j];
                    let e = &mut sums[(i % sh) * rx + j % sw];
                    e.0 += i128::from(w.max(0));
                    e.1 += i128::from(w.min(0));
                }
            }
        }
        let b = p.rq.pre(o);
        let mut acc: Option<Iv> = None;
        for &(sp, sn) in &sums {
            hull_into(&mut acc, partial_sum(c, x, sp, sn, b));
        }
        if empty_residue {
            hull_into(&mut acc, partial_sum(c, x, 0, 0, b));
        }
        let acc = acc.expect("a residue");
        rec.put("convT.acc", acc);
        hull_into(&mut y, rq_rule(c, rec, &p.rq, o, acc));
    }
    Out {
        results: vec![y.expect("cout ≥ 1")],
        k_c: Some(k_c(c, term)),
        w_bits: Some(w_bits(p.w.range())),
        mac: true,
    }
}

#[cfg(test)]
mod tests {
    use super::super::min_max;
    use super::*;
    use crate::seeded::Rng;

    /// §8.2's definition, folded term by term with §8.1's saturation after every operation.
    fn literal(c: &mut Ctx, x: Iv, w: &[i64], b: i64) -> Iv {
        let mut lo = si(b).min(S::ZERO);
        let mut hi = si(b).max(S::ZERO);
        for &wk in w {
            let p1 = c.mul(si(wk), x.lo);
            let p2 = c.mul(si(wk), x.hi);
            let (tlo, thi) = (p1.min(p2), p1.max(p2));
            lo = c.add(lo, tlo.min(S::ZERO));
            hi = c.add(hi, thi.max(S::ZERO));
        }
        Iv::new(lo, hi)
    }

    fn closed(c: &mut Ctx, x: Iv, w: &[i64], b: i64) -> Iv {
        let sp = w.iter().filter(|&&v| v > 0).map(|&v| i128::from(v)).sum();
        let sn = w.iter().filter(|&&v| v < 0).map(|&v| i128::from(v)).sum();
        let (wlo, whi) = min_max(w);
        // The pass also forms the term hull, whose products are the ones a single term can saturate.
        c.corner(Iv::new(si(wlo), si(whi)), x);
        partial_sum(c, x, sp, sn, b)
    }

    #[test]
    fn closed_form_is_the_fold_with_its_saturation() {
        let mut r = Rng::new(7);
        let ends = [
            S::BOTTOM,
            S::Top,
            S::ZERO,
            S::pow2(200),
            S::pow2(254),
            S::from_i128(-5),
            S::from_i128(i128::from(i64::MIN)),
            S::from_i128(1 << 100),
        ];
        for _ in 0..4000 {
            let a = if r.pct(50) {
                r.pick(&ends)
            } else {
                S::from_i128(i128::from(r.range(-1000, 1000)))
            };
            let b = if r.pct(50) {
                r.pick(&ends)
            } else {
                S::from_i128(i128::from(r.range(-1000, 1000)))
            };
            let x = Iv::new(a.min(b), a.max(b));
            let n = r.range(1, 6) as usize;
            let w: Vec<i64> = (0..n)
                .map(|_| match r.below(4) {
                    0 => r.pick(&[i64::MIN, i64::MAX, 0]),
                    _ => r.range(-9, 9),
                })
                .collect();
            let bias = if r.pct(20) {
                r.pick(&[i64::MIN, i64::MAX])
            } else {
                r.range(-50, 50)
            };
            let (mut c1, mut c2) = (Ctx::default(), Ctx::default());
            let lit = literal(&mut c1, x, &w, bias);
            let term_sat = {
                let mut c = Ctx::default();
                for &wk in &w {
                    c.mul(si(wk), x.lo);
                    c.mul(si(wk), x.hi);
                }
                c.saturated
            };
            let cf = closed(&mut c2, x, &w, bias);
            assert_eq!(lit, cf, "x {x:?} w {w:?} b {bias}");
            assert_eq!(c1.saturated || term_sat, c2.saturated, "x {x:?} w {w:?} b {bias}");
        }
    }
}
