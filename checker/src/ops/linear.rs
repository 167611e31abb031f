//! `conv` (§5.2) and `conv_transpose` (§5.3).

use super::{E, Tensor, ck, rq};
use crate::plan::Shape;
use crate::whg1::{Conv, ConvT};

/// `conv`, gathering each output's taps over the zero-padded input (§5.2).
pub fn conv(p: &Conv, x: &Tensor, o: Shape) -> E<Tensor> {
    let (cin, h, w) = x.dims();
    let (cout, ho, wo) = (o.c as usize, o.h as usize, o.w as usize);
    let (kh, kw) = (p.kh as usize, p.kw as usize);
    let groups = p.groups as usize;
    let (cg, og) = (cin / groups, cout / groups);
    let (ph, pw) = if crate::mutants::active("conv-pad-bottom-right") {
        (0, 0)
    } else {
        (p.ph as i64, p.pw as i64)
    };
    let (sh, sw) = if crate::mutants::active("conv-stride-swapped") {
        (p.sw as usize, p.sh as usize)
    } else {
        (p.sh as usize, p.sw as usize)
    };
    let flipped = crate::mutants::active("conv-kernel-flipped");
    let interleaved = crate::mutants::active("conv-groups-interleaved");
    let mut out = Vec::with_capacity(cout * ho * wo);
    for oc in 0..cout {
        let first = if interleaved {
            (oc % groups) * cg
        } else {
            (oc / og) * cg
        };
        let wbase = oc * cg * kh * kw;
        for y in 0..ho {
            for xo in 0..wo {
                let mut acc: i64 = 0;
                for ci in 0..cg {
                    let plane = x.plane(first + ci);
                    for i in 0..kh {
                        let u = (y * sh + i) as i64 - ph;
                        if u < 0 || u >= h as i64 {
                            continue; // a tap on the zero padding adds a zero term
                        }
                        for j in 0..kw {
                            let v = (xo * sw + j) as i64 - pw;
                            if v < 0 || v >= w as i64 {
                                continue;
                            }
                            let (ti, tj) = if flipped { (kh - 1 - i, kw - 1 - j) } else { (i, j) };
                            let wt = p.w[wbase + (ci * kh + ti) * kw + tj];
                            let term = ck(wt.checked_mul(plane[u as usize * w + v as usize]), "conv.term")?;
                            acc = ck(acc.checked_add(term), "conv.acc")?;
                        }
                    }
                }
                out.push(rq::apply(&p.rq, oc, acc)?);
            }
        }
    }
    Ok(Tensor { shape: o, data: out })
}

/// `conv_transpose` in the scatter form of §5.3's informative paragraph: each input element adds
/// `Wt[ci][o][i][j]·X[ci][u][v]` at `(u·sh + i, v·sw + j)` of the uncropped plane; only the kept
/// window `[ph, ph + Ho) × [pw, pw + Wo)` is stored. Positions no tap reaches hold `rq_o(0)`.
pub fn conv_transpose(p: &ConvT, x: &Tensor, o: Shape) -> E<Tensor> {
    let (cin, h, w) = x.dims();
    let (cout, ho, wo) = (o.c as usize, o.h as usize, o.w as usize);
    let (kh, kw) = (p.kh as usize, p.kw as usize);
    let mut acc = vec![0i64; cout * ho * wo];
    let conv_layout = crate::mutants::active("convt-weights-conv-layout");
    let flipped = crate::mutants::active("convt-kernel-flipped");
    // Output padding taken from the top and left instead of added at the bottom and right.
    let (top, left) = if crate::mutants::active("convt-out-pad-top-left") {
        (i64::from(p.ph) - i64::from(p.oph), i64::from(p.pw) - i64::from(p.opw))
    } else {
        (i64::from(p.ph), i64::from(p.pw))
    };
    for ci in 0..cin {
        for u in 0..h {
            for v in 0..w {
                let xv = x.at(ci, u, v);
                if xv == 0 {
                    continue; // every term is zero (§6 lets a zero term be skipped)
                }
                for oc in 0..cout {
                    let wbase = if conv_layout { oc * cin + ci } else { ci * cout + oc } * kh * kw;
                    for i in 0..kh {
                        let yy = (u as u64 * u64::from(p.sh) + i as u64) as i64 - top;
                        if yy < 0 || yy >= ho as i64 {
                            continue;
                        }
                        for j in 0..kw {
                            let xx = (v as u64 * u64::from(p.sw) + j as u64) as i64 - left;
                            if xx < 0 || xx >= wo as i64 {
                                continue;
                            }
                            let (ti, tj) = if flipped { (kh - 1 - i, kw - 1 - j) } else { (i, j) };
                            let term = ck(p.w[wbase + ti * kw + tj].checked_mul(xv), "convT.term")?;
                            let cell = &mut acc[(oc * ho + yy as usize) * wo + xx as usize];
                            *cell = ck(cell.checked_add(term), "convT.acc")?;
                        }
                    }
                }
            }
        }
    }
    let mut out = Vec::with_capacity(acc.len());
    for (k, a) in acc.into_iter().enumerate() {
        out.push(rq::apply(&p.rq, k / (ho * wo), a)?);
    }
    Ok(Tensor { shape: o, data: out })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::num::Round;
    use crate::plan::Shape;
    use crate::testgen::random::Rng;
    use crate::whg1::{Placement, Rq, Weights};

    fn random_convt(r: &mut Rng) -> (ConvT, Tensor, Shape) {
        let (cin, cout) = (r.range(1, 3) as usize, r.range(1, 3) as u32);
        let (kh, kw, sh, sw) = (
            r.range(1, 4) as u32,
            r.range(1, 4) as u32,
            r.range(1, 4) as u32,
            r.range(1, 4) as u32,
        );
        let (ph, pw, oph, opw) = (
            r.range(0, 2) as u32,
            r.range(0, 2) as u32,
            r.range(0, 4) as u32,
            r.range(0, 4) as u32,
        );
        let (h, w) = (r.range(1, 4) as u64, r.range(1, 4) as u64);
        let n = cin * cout as usize * (kh * kw) as usize;
        let rq = Rq {
            round: Round::Floor,
            placement: Placement::Pre,
            mult: vec![],
            shift: vec![0],
            bias: (0..cout).map(|_| r.range(-3, 3)).collect(),
        };
        let p = ConvT {
            cout,
            kh,
            kw,
            sh,
            sw,
            ph,
            pw,
            oph,
            opw,
            rq,
            w: Weights::new((0..n).map(|_| r.range(-5, 5)).collect()),
        };
        let x = Tensor {
            shape: Shape { c: cin as u64, h, w },
            data: (0..cin as u64 * h * w).map(|_| r.range(-9, 9)).collect(),
        };
        let ho = ((h - 1) * u64::from(sh) + u64::from(kh + oph)).saturating_sub(2 * u64::from(ph));
        let wo = ((w - 1) * u64::from(sw) + u64::from(kw + opw)).saturating_sub(2 * u64::from(pw));
        (
            p,
            x,
            Shape {
                c: u64::from(cout),
                h: ho,
                w: wo,
            },
        )
    }

    /// §5.3's definition, gathering the taps of each output position.
    fn gather(p: &ConvT, x: &Tensor, o: Shape) -> Vec<i64> {
        let (cin, h, w) = x.dims();
        let (kh, kw, sh, sw) = (p.kh as i64, p.kw as i64, p.sh as i64, p.sw as i64);
        let mut out = Vec::new();
        for oc in 0..o.c as usize {
            for y in 0..o.h as i64 {
                for xx in 0..o.w as i64 {
                    let mut acc = 0;
                    for ci in 0..cin {
                        for i in 0..kh {
                            for j in 0..kw {
                                let (ty, tx) = (y + i64::from(p.ph) - i, xx + i64::from(p.pw) - j);
                                if ty < 0
                                    || ty % sh != 0
                                    || ty / sh >= h as i64
                                    || tx < 0
                                    || tx % sw != 0
                                    || tx / sw >= w as i64
                                {
                                    continue;
                                }
                                let wt = p.w
                                    [((ci * o.c as usize + oc) * kh as usize + i as usize) * kw as usize + j as usize];
                                acc += wt * x.at(ci, (ty / sh) as usize, (tx / sw) as usize);
                            }
                        }
                    }
                    out.push(rq::apply(&p.rq, oc, acc).unwrap());
                }
            }
        }
        out
    }

    /// §9.3's phase form: `sh·sw` stride-1 convolutions with flipped sub-kernels.
    fn phases(p: &ConvT, x: &Tensor, o: Shape) -> Vec<i64> {
        let (cin, h, w) = x.dims();
        let (kh, kw, sh, sw) = (p.kh as i64, p.kw as i64, p.sh as i64, p.sw as i64);
        let xt = |ci: usize, u: i64, v: i64| {
            if u < 0 || v < 0 || u >= h as i64 || v >= w as i64 {
                0
            } else {
                x.at(ci, u as usize, v as usize)
            }
        };
        let mut out = Vec::new();
        for oc in 0..o.c as usize {
            for y in 0..o.h as i64 {
                for xx in 0..o.w as i64 {
                    let (ry, rx) = ((y + i64::from(p.ph)) % sh, (xx + i64::from(p.pw)) % sw);
                    let (u, v) = ((y + i64::from(p.ph)) / sh, (xx + i64::from(p.pw)) / sw);
                    let mut z = 0;
                    for ci in 0..cin {
                        for t in 0..=(kh / sh) {
                            for t2 in 0..=(kw / sw) {
                                let (i, j) = (ry + sh * t, rx + sw * t2);
                                if i >= kh || j >= kw {
                                    continue; // a missing tap is a zero weight
                                }
                                let wt = p.w
                                    [((ci * o.c as usize + oc) * kh as usize + i as usize) * kw as usize + j as usize];
                                z += wt * xt(ci, u - t, v - t2);
                            }
                        }
                    }
                    out.push(rq::apply(&p.rq, oc, z).unwrap());
                }
            }
        }
        out
    }

    #[test]
    fn scatter_form_is_the_definition_and_the_phase_form() {
        let mut r = Rng::new(3);
        let mut checked = 0;
        while checked < 400 {
            let (p, x, o) = random_convt(&mut r);
            if o.h == 0 || o.w == 0 {
                continue;
            }
            let got = conv_transpose(&p, &x, o).unwrap().data;
            assert_eq!(got, gather(&p, &x, o), "{p:?}");
            assert_eq!(got, phases(&p, &x, o), "{p:?}");
            checked += 1;
        }
    }

    #[test]
    fn a_position_no_tap_reaches_holds_rq_of_zero() {
        // 1×1 kernel, stride 2: odd positions get no tap, so they hold rq(0) = the pre bias.
        let rq = Rq {
            round: Round::Floor,
            placement: Placement::Pre,
            mult: vec![],
            shift: vec![0],
            bias: vec![7],
        };
        let p = ConvT {
            cout: 1,
            kh: 1,
            kw: 1,
            sh: 2,
            sw: 1,
            ph: 0,
            pw: 0,
            oph: 0,
            opw: 0,
            rq,
            w: Weights::new(vec![3]),
        };
        let x = Tensor {
            shape: Shape { c: 1, h: 2, w: 1 },
            data: vec![1, 2],
        };
        let o = conv_transpose(&p, &x, Shape { c: 1, h: 3, w: 1 }).unwrap();
        assert_eq!(o.data, vec![10, 7, 13]);
    }
}
