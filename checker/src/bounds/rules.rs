//! The bounds pass (§8.1–§8.3): every tensor's interval and every node's named intermediates, in
//! graph order, with §8.1's saturation.
//!
//! Method. Where §8.2 offers it, the pass keeps a few sums instead of folding term by term: for `conv`
//! each output channel's sums of positive and of negative weights (`S⁺`, `S⁻`), and for
//! `conv_transpose` the same per output channel and residue; the term hull is the corner hull of the
//! extreme weights and the input interval. All of a partial-sum fold's addends have one sign, so the
//! fold saturates exactly when the closed form's exact value passes ±2^255, and a single term passes
//! it exactly when one of the closed form's products does; so the closed form, evaluated with
//! saturating operations, gives the fold's integers and its saturation. Rules whose folds mix signs
//! (`igdn`'s final norm) are folded literally.

use super::interval::{Class, Iv, Rec, hull_into};
use super::sat::{Ctx, S};
use crate::num::Round;
use crate::plan::Shape;
use crate::whg1::{Graph, Op, OpKind, Operand, Policy, Rq};

/// One node's share of the pass.
#[derive(Debug)]
pub struct Node {
    pub saturated: bool,
    pub rec: Rec,
    /// The producer result of each output.
    pub results: Vec<Iv>,
    /// Each output tensor's interval, after its policy.
    pub outs: Vec<Iv>,
    /// `K_c` (§6): `Some(None)` is unbounded; `None` when the operator records none.
    pub k_c: Option<Option<S>>,
    pub a_bits: Option<Vec<u32>>,
    pub w_bits: Option<u32>,
}

#[derive(Debug)]
pub struct Pass {
    pub tensors: Vec<Option<Iv>>,
    pub nodes: Vec<Node>,
}

/// Why the pass refuses the graph (load step 8, `model_mismatch`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refuse {
    /// A `check` range that no producer value can meet (§8.1).
    EmptyCheck(usize),
    /// A `lut16` input interval outside `[−32767, 32767]` (§5.6).
    Lut16Range(usize),
}

fn si(v: i64) -> S {
    S::from_i128(i128::from(v))
}
fn su(v: u64) -> S {
    S::from_u64(v)
}

/// `R_round(p, s)`, evaluated as §2 writes it (docs/assumptions.md B3).
fn r_round(c: &mut Ctx, p: S, s: u32, round: Round) -> S {
    if s == 0 {
        return p;
    }
    match round {
        Round::Floor => c.shr(p, s),
        Round::HalfUp => {
            let t = c.add(p, S::pow2(s - 1));
            c.shr(t, s)
        }
        Round::HalfEven => {
            let q = c.shr(p, s);
            let qs = c.mul(q, S::pow2(s));
            let r = c.sub(p, qs);
            let h = S::pow2(s - 1);
            let odd = matches!(q, S::V(v) if v & ethnum::I256::ONE == ethnum::I256::ONE);
            if r > h || (r == h && odd) {
                c.add(q, S::from_i128(1))
            } else {
                q
            }
        }
    }
}

/// The `rq.p` and `rq.q` rules (§8.3) for one multiplier: returns `(rq.p, rq.q)`.
fn rq_pq(c: &mut Ctx, t: Iv, m: S, s: u32, round: Round) -> (Iv, Iv) {
    let a1 = c.mul(t.lo, m);
    let a2 = c.mul(t.hi, m);
    let p = if crate::mutants::active("iv-rq-p-unordered") {
        Iv::new(a1, a2)
    } else {
        Iv::new(a1.min(a2), a1.max(a2))
    };
    let addend = if round != Round::Floor && s >= 1 && !crate::mutants::active("iv-rq-p-no-addend") {
        S::pow2(s - 1)
    } else {
        S::ZERO
    };
    let p_rec = Iv::new(p.lo, c.add(p.hi, addend));
    let q_from = if crate::mutants::active("iv-rq-q-with-addend") {
        p_rec
    } else {
        p
    };
    let q = Iv::new(r_round(c, q_from.lo, s, round), r_round(c, q_from.hi, s, round));
    (p_rec, q)
}

/// The `rq` rules for channel `o` on `rq.t = t`; records `rq.t`, `rq.p`, `rq.q`, `rq.y` and returns `rq.y`.
fn rq_rule(c: &mut Ctx, rec: &mut Rec, rq: &Rq, o: usize, t: Iv) -> Iv {
    rec.put("rq.t", Class::Acc, t);
    let m = rq.mult(o).map_or(S::from_i128(1), si);
    let (p, q) = rq_pq(c, t, m, rq.shift(o), rq.round);
    rec.put("rq.p", Class::Product, p);
    rec.put("rq.q", Class::Acc, q);
    let post = if crate::mutants::active("iv-rq-post-bias-ignored") {
        0
    } else {
        rq.post(o)
    };
    let y = c.add_iv(q, si(post));
    rec.put("rq.y", Class::Acc, y);
    y
}

/// How many channels an `rq` must be evaluated for: 1 when no field is given per channel (every
/// channel then has the same rule), else `C`.
fn rq_channels(rq: &Rq) -> usize {
    rq.mult.len().max(rq.shift.len()).max(rq.bias.len()).max(1)
}

/// §8.2's closed form of `A(K, b)` for terms that are weights times one interval `[l, h]`, from the
/// sums of the positive (`sp`) and negative (`sn`) weights.
fn partial_sum(c: &mut Ctx, x: Iv, sp: i128, sn: i128, b: i64) -> Iv {
    let b = if crate::mutants::active("iv-partial-sum-no-bias") {
        S::ZERO
    } else {
        si(b)
    };
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

fn min_max(w: &[i64]) -> (i64, i64) {
    let lo = w.iter().copied().min().unwrap_or(0);
    let hi = w.iter().copied().max().unwrap_or(0);
    (lo, hi)
}

/// `K_c = ⌊(2^31 − 1) / P⌋` over a term interval, `None` (unbounded) when `P = 0` (§6, B4).
fn k_c(c: &mut Ctx, term: Iv) -> Option<S> {
    let a = c.abs(term.lo);
    let b = c.abs(term.hi);
    let p = a.max(b);
    if p.is_zero() {
        crate::mutants::active("kc-zero-when-unbounded").then_some(S::ZERO)
    } else if crate::mutants::active("kc-ceil") {
        let q = c.div_floor(S::from_i128(-((1 << 31) - 1)), p);
        Some(c.neg(q))
    } else {
        Some(c.div_floor(S::from_i128((1 << 31) - 1), p))
    }
}

/// The `exp_neg_q16` rule on the interval of `u = −x`.
fn exp_rule(c: &mut Ctx, rec: &mut Rec, u: Iv) {
    rec.put("exp.negx", Class::Acc, u);
    let k = S::from_i128(45426);
    let nlo = c.div_floor(u.lo, k);
    let nhi = c.div_floor(u.hi, k);
    let nl = Iv::new(c.mul(k, nlo), c.mul(k, nhi));
    rec.put("exp.nl", Class::Acc, nl);
    let t_lo = if crate::mutants::active("iv-exp-t2-from-zero") {
        0
    } else {
        43245
    };
    let t2 = Iv::new(
        c.mul(S::from_i128(t_lo), S::from_i128(t_lo)),
        c.mul(S::from_i128(88670), S::from_i128(88670)),
    );
    rec.put("exp.t2", Class::Acc, t2);
    let q = c.shr(t2.hi, 16);
    rec.put("exp.c", Class::Acc, Iv::new(S::ZERO, c.mul(S::from_i128(23495), q)));
}

/// The image of an interval under `|·|`.
fn abs_image(c: &mut Ctx, x: Iv) -> Iv {
    if !x.lo.is_neg() {
        x
    } else if x.hi <= S::ZERO {
        Iv::new(c.neg(x.hi), c.neg(x.lo))
    } else {
        let nl = c.neg(x.lo);
        let lo = if crate::mutants::active("iv-abs-straddle-lo") {
            nl.min(x.hi)
        } else {
            S::ZERO
        };
        Iv::new(lo, nl.max(x.hi))
    }
}

struct Out {
    results: Vec<Iv>,
    k_c: Option<Option<S>>,
    w_bits: Option<u32>,
    mac: bool,
}

fn plain(results: Vec<Iv>) -> Out {
    Out {
        results,
        k_c: None,
        w_bits: None,
        mac: false,
    }
}

/// One operator's rule (§8.3).
fn rule(
    g: &Graph,
    k: usize,
    op: &Op,
    ins: &[Iv],
    shapes: Option<&[Option<Shape>]>,
    c: &mut Ctx,
    rec: &mut Rec,
) -> Result<Out, Refuse> {
    let x = ins[0];
    let cin = g.channels(op.ins[0]);
    let in_shape = |i: usize| shapes.and_then(|s| s[op.ins[i]]).expect("declared sizes are planned");
    Ok(match &op.kind {
        OpKind::Conv(p) => {
            let (wlo, whi) = p.w.range();
            let term = c.corner(Iv::new(si(wlo), si(whi)), x);
            rec.put("conv.term", Class::Acc, term);
            let per = p.w.len() / p.cout as usize;
            let mut y: Option<Iv> = None;
            for o in 0..p.cout as usize {
                let (sp, sn) = signed_sums(&p.w[o * per..(o + 1) * per]);
                let acc = partial_sum(c, x, sp, sn, p.rq.pre(o));
                rec.put("conv.acc", Class::Acc, acc);
                hull_into(&mut y, rq_rule(c, rec, &p.rq, o, acc));
            }
            Out {
                results: vec![y.expect("cout ≥ 1")],
                k_c: Some(k_c(c, term)),
                w_bits: Some(range_bits(p.w.range())),
                mac: true,
            }
        }
        OpKind::ConvT(p) => {
            let (wlo, whi) = p.w.range();
            let term = c.corner(Iv::new(si(wlo), si(whi)), x);
            rec.put("convT.term", Class::Acc, term);
            let (cout, kh, kw) = (p.cout as usize, p.kh as usize, p.kw as usize);
            let (sh, sw) = (p.sh as usize, p.sw as usize);
            // Residues that hold taps: ρy < min(sh, kh), ρx < min(sw, kw) (B11).
            let one_residue = crate::mutants::active("iv-convt-one-residue");
            let (sh, sw) = if one_residue { (1, 1) } else { (sh, sw) };
            let (ry, rx) = (sh.min(kh), sw.min(kw));
            let empty_residue = (sh > kh || sw > kw) && !crate::mutants::active("iv-convt-empty-residue-missed");
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
                rec.put("convT.acc", Class::Acc, acc);
                hull_into(&mut y, rq_rule(c, rec, &p.rq, o, acc));
            }
            Out {
                results: vec![y.expect("cout ≥ 1")],
                k_c: Some(k_c(c, term)),
                w_bits: Some(range_bits(p.w.range())),
                mac: true,
            }
        }
        OpKind::Rescale(rq) => {
            let mut y: Option<Iv> = None;
            for o in 0..rq_channels(rq) {
                let t = c.add_iv(x, si(rq.pre(o)));
                hull_into(&mut y, rq_rule(c, rec, rq, o, t));
            }
            plain(vec![y.expect("a channel")])
        }
        OpKind::Chscale {
            scalar,
            round,
            shift,
            m,
            ..
        } => {
            let sc = g.scalars[*scalar];
            let n_c = cin as usize;
            let s = u32::from(*shift);
            let mut q: Option<Iv> = None;
            for ch in 0..n_c {
                rec.put("rq.t", Class::Acc, x);
                let rows = if crate::mutants::active("iv-chscale-all-rows") {
                    0..=(m.len() / n_c) as i64 - 1
                } else {
                    sc.lo..=sc.hi
                };
                for r in rows {
                    let mv = m[r as usize * n_c + ch];
                    let (p_iv, q_iv) = rq_pq(c, x, si(mv), s, *round);
                    rec.put("rq.p", Class::Product, p_iv);
                    rec.put("rq.q", Class::Acc, q_iv);
                    hull_into(&mut q, q_iv);
                }
            }
            let q = q.expect("a row");
            rec.put("rq.y", Class::Acc, q);
            Out {
                results: vec![q],
                k_c: None,
                w_bits: Some(bits_of(m)),
                mac: true,
            }
        }
        OpKind::Mul(rq) => {
            let p = c.corner(x, ins[1]);
            rec.put("mul.p", Class::Acc, p);
            let mut y: Option<Iv> = None;
            for o in 0..rq_channels(rq) {
                hull_into(&mut y, rq_rule(c, rec, rq, o, p));
            }
            Out {
                results: vec![y.expect("a channel")],
                k_c: None,
                w_bits: None,
                mac: true,
            }
        }
        OpKind::Gram { rq, .. } | OpKind::Apply { rq, .. } => {
            let is_gram = matches!(op.kind, OpKind::Gram { .. });
            let term = c.corner(x, ins[1]);
            let n = if is_gram {
                let s = in_shape(0);
                if crate::mutants::active("iv-gram-length-h") {
                    u128::from(s.h)
                } else {
                    u128::from(s.h) * u128::from(s.w)
                }
            } else if crate::mutants::active("iv-apply-length-groups") {
                let OpKind::Apply { groups, .. } = op.kind else {
                    unreachable!()
                };
                u128::from(groups)
            } else {
                let OpKind::Apply { groups, .. } = op.kind else {
                    unreachable!()
                };
                u128::from(cin / u64::from(groups))
            };
            let n = S::V(ethnum::I256::from(n));
            let lo = c.mul(n, term.lo.min(S::ZERO));
            let hi = c.mul(n, term.hi.max(S::ZERO));
            let acc = Iv::new(lo, hi);
            let (tk, ak) = if is_gram {
                ("gram.term", "gram.acc")
            } else {
                ("apply.term", "apply.acc")
            };
            rec.put(tk, Class::Acc, term);
            rec.put(ak, Class::Acc, acc);
            let y = rq_rule(c, rec, rq, 0, acc);
            Out {
                results: vec![y],
                k_c: Some(k_c(c, term)),
                w_bits: None,
                mac: true,
            }
        }
        OpKind::Add => {
            let b = ins[1];
            plain(vec![Iv::new(c.add(x.lo, b.lo), c.add(x.hi, b.hi))])
        }
        OpKind::ChunkAdd => {
            let two = S::from_i128(if crate::mutants::active("iv-chunk-add-one-term") {
                1
            } else {
                2
            });
            plain(vec![Iv::new(c.mul(two, x.lo), c.mul(two, x.hi))])
        }
        OpKind::Clamp(lo, hi) => {
            let (lo, hi) = (si(*lo), si(*hi));
            plain(vec![Iv::new(x.lo.max(lo).min(hi), x.hi.max(lo).min(hi))])
        }
        OpKind::Relu if crate::mutants::active("iv-relu-lo-kept") => plain(vec![Iv::new(x.lo, x.hi.max(S::ZERO))]),
        OpKind::Relu => plain(vec![Iv::new(x.lo.max(S::ZERO), x.hi.max(S::ZERO))]),
        OpKind::Abs => plain(vec![abs_image(c, x)]),
        OpKind::Leaky { a, f } => {
            let mut out: Option<Iv> = None;
            if x.lo.is_neg() {
                let top = if crate::mutants::active("iv-leaky-neg-part-full") {
                    x.hi
                } else {
                    x.hi.min(S::from_i128(-1))
                };
                let neg_part = Iv::new(x.lo, top);
                let p = c.corner(neg_part, Iv::point(si(*a)));
                rec.put("leaky.p", Class::Acc, p);
                hull_into(&mut out, c.shr_iv(p, *f));
            } else {
                rec.put("leaky.p", Class::Acc, Iv::point(S::ZERO));
            }
            if !x.hi.is_neg() {
                hull_into(&mut out, Iv::new(x.lo.max(S::ZERO), x.hi));
            }
            plain(vec![out.expect("a part")])
        }
        OpKind::Lut16 { table, .. } => {
            let (lo, hi) = match (x.lo.to_i128(), x.hi.to_i128()) {
                (Some(lo), Some(hi)) if lo >= -32767 && hi <= 32767 => (lo, hi),
                _ => return Err(Refuse::Lut16Range(k)),
            };
            let vals = if crate::mutants::active("iv-lut16-ends-only") {
                &[table[(lo + 32768) as usize], table[(hi + 32768) as usize]][..]
            } else {
                &table[(lo + 32768) as usize..=(hi + 32768) as usize]
            };
            let (a, b) = (
                vals.iter().min().copied().unwrap_or(0),
                vals.iter().max().copied().unwrap_or(0),
            );
            plain(vec![Iv::i(i128::from(a), i128::from(b))])
        }
        OpKind::Igdn { gf, frac, gamma, beta } => {
            let n = cin as usize;
            let l2 = c.mul(x.lo, x.lo);
            let h2 = c.mul(x.hi, x.hi);
            let straddles = x.lo <= S::ZERO && S::ZERO <= x.hi && !crate::mutants::active("iv-igdn-x2-no-zero");
            let x2 = if straddles {
                Iv::new(S::ZERO, l2.max(h2))
            } else {
                Iv::new(l2.min(h2), l2.max(h2))
            };
            rec.put("igdn.x2", Class::Wide, x2);
            let mut y: Option<Iv> = None;
            let mut term_hull: Option<Iv> = None;
            for i in 0..n {
                let b = si(beta[i]);
                let nb = if crate::mutants::active("iv-igdn-n-no-beta") {
                    S::ZERO
                } else {
                    b
                };
                let mut n_lo = nb.min(S::ZERO);
                let mut n_hi = nb.max(S::ZERO);
                let (mut f_lo, mut f_hi) = (b, b);
                for j in 0..n {
                    let gx2 = c.corner(Iv::point(si(gamma[i * n + j])), x2);
                    rec.put("igdn.gx2", Class::Product, gx2);
                    let term = c.shr_iv(gx2, *gf);
                    hull_into(&mut term_hull, term);
                    n_lo = c.add(n_lo, term.lo.min(S::ZERO));
                    n_hi = c.add(n_hi, term.hi.max(S::ZERO));
                    f_lo = c.add(f_lo, term.lo);
                    f_hi = c.add(f_hi, term.hi);
                }
                rec.put("igdn.N", Class::Wide, Iv::new(n_lo, n_hi));
                let (f_lo, f_hi) = if crate::mutants::active("iv-igdn-r-from-n") {
                    (n_lo, n_hi)
                } else {
                    (f_lo, f_hi)
                };
                let r = Iv::new(c.isqrt(f_lo.max(S::ZERO)), c.isqrt(f_hi.max(S::ZERO)));
                rec.put("igdn.r", Class::Acc, r);
                let xr = c.corner(x, r);
                rec.put("igdn.xr", Class::Wide, xr);
                hull_into(&mut y, c.shr_iv(xr, *frac));
            }
            let term = term_hull.expect("C ≥ 1");
            rec.put("igdn.term", Class::Wide, term);
            Out {
                results: vec![y.expect("C ≥ 1")],
                k_c: Some(k_c(c, term)),
                w_bits: None,
                mac: false,
            }
        }
        OpKind::LayerNorm { eps, gamma, beta } => {
            let cc = su(cin);
            let half_c = su(if crate::mutants::active("iv-ln-m-no-half") {
                0
            } else {
                cin / 2
            });
            let (l, h) = (x.lo, x.hi);
            let s_iv = Iv::new(c.mul(cc, l.min(S::ZERO)), c.mul(cc, h.max(S::ZERO)));
            rec.put("ln.S", Class::Wide, s_iv);
            let m_lo = c.mul(cc, l);
            let m_lo = c.sub(m_lo, half_c);
            let m_hi = c.mul(cc, h);
            let m_hi = c.add(m_hi, half_c);
            rec.put("ln.m", Class::Wide, Iv::new(m_lo, m_hi));
            let d_lo = c.sub(l, h);
            let d = c.sub(h, l);
            rec.put("ln.d", Class::Acc, Iv::new(d_lo, d));
            let d2 = c.mul(d, d);
            let t_hi = c.mul(cc, d2);
            rec.put("ln.T", Class::Wide, Iv::new(S::ZERO, t_hi));
            let e = su(*eps);
            let d2b = c.mul(d, d);
            let v_hi = c.add(d2b, e);
            rec.put("ln.v", Class::Wide, Iv::new(e, v_hi));
            let two32 = S::pow2(32);
            rec.put("rsq.num", Class::Acc, Iv::point(two32));
            let r0 = c.isqrt(e);
            let k_hi = c.div_floor(two32, r0);
            rec.put("ln.k", Class::Acc, Iv::new(S::ZERO, k_hi));
            // D = min((h − l)·⌊2^32/r0⌋, ⌈isqrt_ceil(C)·2^32·(r0 + 1) / r0⌉)
            let dk1 = c.mul(d, k_hi);
            let sc = c.isqrt_ceil(cc);
            let r1 = c.add(r0, S::from_i128(1));
            let a = c.mul(sc, two32);
            let a = c.mul(a, r1);
            let na = c.neg(a);
            let fl = c.div_floor(na, r0);
            let dk2 = c.neg(fl);
            let dd = if crate::mutants::active("iv-ln-dk-no-min") {
                dk1
            } else {
                dk1.min(dk2)
            };
            let ndd = c.neg(dd);
            rec.put("ln.dk", Class::Wide, Iv::new(ndd, dd));
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
            rec.put("ln.n", Class::Acc, n_iv);
            let mut y: Option<Iv> = None;
            for ch in 0..cin as usize {
                let ng = c.corner(n_iv, Iv::point(si(gamma[ch])));
                rec.put("ln.ng", Class::Wide, ng);
                let v = c.shr_iv(ng, 16);
                hull_into(&mut y, c.add_iv(v, si(beta[ch])));
            }
            plain(vec![y.expect("C ≥ 1")])
        }
        OpKind::L2Norm { eps } => {
            let s = in_shape(0);
            let l = S::V(ethnum::I256::from(u128::from(s.h) * u128::from(s.w)));
            let al = c.abs(x.lo);
            let ah = c.abs(x.hi);
            let xx = al.max(ah);
            let x2 = c.mul(xx, xx);
            let t = c.mul(l, x2);
            let e = su(*eps);
            let t = if crate::mutants::active("iv-l2-t-no-eps") {
                t
            } else {
                c.add(t, e)
            };
            rec.put("l2.T", Class::Wide, Iv::new(S::ZERO, t));
            let two32 = S::pow2(32);
            rec.put("rsq.num", Class::Acc, Iv::point(two32));
            let r = c.isqrt(e);
            rec.put("l2.k", Class::Acc, Iv::new(S::ZERO, c.div_floor(two32, r)));
            let n32 = c.neg(two32);
            rec.put("l2.vk", Class::Wide, Iv::new(n32, two32));
            let n16 = c.neg(S::pow2(16));
            plain(vec![Iv::new(n16, S::pow2(16))])
        }
        OpKind::Softmax => {
            let wmax = su(in_shape(0).w);
            let diff = c.sub(x.lo, x.hi);
            rec.put("sm.diff", Class::Acc, Iv::new(diff, S::ZERO));
            let u = c.sub(x.hi, x.lo);
            exp_rule(c, rec, Iv::new(S::ZERO, u));
            let e = S::from_i128(if crate::mutants::active("iv-softmax-e-2^16") {
                65536
            } else {
                65553
            });
            let sum = c.mul(wmax, e);
            rec.put("sm.sum", Class::Acc, Iv::new(S::ZERO, sum));
            let a = c.mul(e, S::pow2(16));
            let sum2 = c.mul(wmax, e);
            let half = c.div_floor(sum2, S::from_i128(2));
            let num = c.add(a, half);
            rec.put("sm.num", Class::Acc, Iv::new(S::ZERO, num));
            plain(vec![Iv::new(S::ZERO, S::pow2(16))])
        }
        OpKind::Sigmoid => {
            let u = abs_image(c, x);
            exp_rule(c, rec, u);
            let num = if crate::mutants::active("iv-sigmoid-num-2^32") {
                S::pow2(32)
            } else {
                c.mul(S::from_i128(65553), S::pow2(16))
            };
            rec.put("sig.num", Class::Acc, Iv::new(S::ZERO, num));
            plain(vec![Iv::new(S::ZERO, S::pow2(16))])
        }
        OpKind::Elu(alpha) => {
            let nh = c.neg(x.hi);
            let nl = c.neg(x.lo);
            exp_rule(c, rec, Iv::new(S::ZERO.max(nh), S::ZERO.max(nl)));
            let n16 = c.neg(S::pow2(16));
            let top = if crate::mutants::active("iv-elu-p-no-17") {
                0
            } else {
                17
            };
            let p = c.corner(Iv::point(si(*alpha)), Iv::new(n16, S::from_i128(top)));
            rec.put("elu.p", Class::Wide, p);
            let mut y: Option<Iv> = None;
            if x.hi > S::ZERO {
                hull_into(&mut y, Iv::new(x.lo.max(S::from_i128(1)), x.hi));
            }
            if x.lo <= S::ZERO {
                hull_into(&mut y, c.shr_iv(p, 16));
            }
            plain(vec![y.expect("a part")])
        }
        OpKind::Concat | OpKind::SubposMerge(_) => plain(vec![ins.iter().copied().reduce(Iv::hull).expect("inputs")]),
        OpKind::SubposSplit(_) => plain(vec![x; 4]),
        OpKind::Fill(Operand::Const(v)) => plain(vec![Iv::point(si(*v))]),
        OpKind::Fill(Operand::Scalar(s)) => {
            let sc = g.scalars[*s];
            plain(vec![Iv::new(si(sc.lo), si(sc.hi))])
        }
        // split, pixel_shuffle, pixel_unshuffle, pad_rep, crop_to (its first input), crop.
        _ => plain(vec![x]),
    })
}

fn bits_of(w: &[i64]) -> u32 {
    range_bits(min_max(w))
}

/// `bits` of the interval `[lo, hi]`.
fn range_bits((lo, hi): (i64, i64)) -> u32 {
    Iv::new(si(lo), si(hi)).bits()
}

/// A declared range as an interval.
pub fn range_iv(lo: i64, hi: i64) -> Iv {
    Iv::new(si(lo), si(hi))
}

/// The bounds pass over one graph. `shapes` are the load-time shapes when the inputs declare sizes.
pub fn pass(g: &Graph, shapes: Option<&[Option<Shape>]>) -> Result<Pass, Refuse> {
    let mut tensors: Vec<Option<Iv>> = vec![None; g.tensors.len()];
    for inp in &g.inputs {
        let (lo, hi) = g.tensors[inp.tensor]
            .policy
            .range()
            .expect("an input is check or clamp");
        tensors[inp.tensor] = Some(range_iv(lo, hi));
    }
    let mut nodes = Vec::with_capacity(g.ops.len());
    for (k, op) in g.ops.iter().enumerate() {
        let ins: Vec<Iv> = op.ins.iter().map(|&t| tensors[t].expect("graph order")).collect();
        let mut c = Ctx::default();
        let mut rec = Rec::default();
        let out = rule(g, k, op, &ins, shapes, &mut c, &mut rec)?;
        let mut outs = Vec::with_capacity(op.outs.len());
        for (&t, &r) in op.outs.iter().zip(&out.results) {
            let iv = match g.tensors[t].policy {
                Policy::Derived => r,
                Policy::Clamp(..) if crate::mutants::active("iv-clamp-policy-ignored") => r,
                Policy::Clamp(lo, hi) => {
                    let (lo, hi) = (si(lo), si(hi));
                    Iv::new(r.lo.max(lo).min(hi), r.hi.max(lo).min(hi))
                }
                Policy::Check(lo, hi) => {
                    let iv = if crate::mutants::active("iv-check-policy-derived") {
                        r
                    } else {
                        Iv::new(r.lo.max(si(lo)), r.hi.min(si(hi)))
                    };
                    if iv.lo > iv.hi && !crate::mutants::active("iv-check-empty-accepted") {
                        return Err(Refuse::EmptyCheck(k));
                    }
                    iv
                }
            };
            tensors[t] = Some(iv);
            outs.push(iv);
        }
        let a_bits = if crate::mutants::active("mac-a-bits-of-outputs") {
            out.mac.then(|| outs.iter().map(|iv| iv.bits()).collect())
        } else {
            out.mac.then(|| ins.iter().map(|iv| iv.bits()).collect())
        };
        nodes.push(Node {
            saturated: c.saturated,
            rec,
            results: out.results,
            outs,
            k_c: out.k_c,
            a_bits,
            w_bits: out.w_bits,
        });
    }
    Ok(Pass { tensors, nodes })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testgen::random::Rng;

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

    #[test]
    fn r_round_in_the_pass_matches_fixed_width() {
        let mut r = Rng::new(11);
        for _ in 0..3000 {
            let p = i128::from(r.range(i64::MIN, i64::MAX)) * i128::from(r.range(-4, 4));
            let s = r.range(0, 127) as u32;
            for round in [Round::Floor, Round::HalfUp, Round::HalfEven] {
                let mut c = Ctx::default();
                let got = r_round(&mut c, S::from_i128(p), s, round);
                assert_eq!(got.to_i128(), crate::num::r_round(p, s, round), "{p} {s} {round:?}");
                assert!(!c.saturated);
            }
        }
    }

    #[test]
    fn k_c_is_zero_past_i32_and_unbounded_at_zero() {
        // docs/assumptions.md B4.
        let mut c = Ctx::default();
        assert_eq!(k_c(&mut c, Iv::i(0, 0)), None);
        assert_eq!(k_c(&mut c, Iv::i(-(1 << 31), 5)), Some(S::ZERO));
        assert_eq!(k_c(&mut c, Iv::i(-3, 2)), Some(S::from_i128(((1 << 31) - 1) / 3)));
    }
}
