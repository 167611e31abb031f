//! `conv` (§5.2) and `conv_transpose` (§5.3).

use super::{E, Tensor, acc, ck, rq};
use crate::plan::Shape;
use crate::whg1::{Conv, ConvT};

/// `conv`, gathering each output's taps over the zero-padded input (§5.2).
pub fn conv(p: &Conv, x: &Tensor, o: Shape) -> E<Tensor> {
    let (cin, _, _) = x.dims();
    let (cout, ho, wo) = (o.c as usize, o.h as usize, o.w as usize);
    let (kh, kw) = (p.kh as usize, p.kw as usize);
    let groups = p.groups as usize;
    let (cg, og) = (cin / groups, cout / groups);
    let (ph, pw) = fault!("conv-pad-bottom-right", (p.ph as i64, p.pw as i64), (0, 0));
    let (sh, sw) = fault!("conv-stride-swapped", (p.sh, p.sw), (p.sw, p.sh));
    let (sh, sw) = (sh as usize, sw as usize);
    // The channels of a group that are read: all, unless a kernel's tiles drop some (tile16-tail).
    let channels = fault!("tile16-tail", cg, whole_tiles(cg));
    let split = acc::split_point(cg * kh * kw);
    let mut out = Vec::with_capacity(cout * ho * wo);
    for oc in 0..cout {
        let c0 = fault!("conv-groups-interleaved", oc / og, oc % groups) * cg;
        let wbase = oc * cg * kh * kw;
        for y in 0..ho {
            for xo in 0..wo {
                // The product of the group's channel c at tap (i, j), read from the input's channel c0 + c.
                let term = |c: usize, i: usize, j: usize| -> E<i64> {
                    let (u, v) = ((y * sh + i) as i64 - ph, (xo * sw + j) as i64 - pw);
                    let xv = fault!("w8-tail", padded(x, c0 + c, u, v), read_on(x, c0 + c, u, v, xo, wo));
                    let (i, j) = fault!("conv-kernel-flipped", (i, j), (kh - 1 - i, kw - 1 - j));
                    ck(p.w[wbase + (c * kh + i) * kw + j].checked_mul(xv), "conv.term")
                };
                let mut sum = acc::Sum::new(split);
                for ci in 0..channels {
                    for i in 0..kh {
                        for j in 0..kw {
                            let t = fault!("i16-pair-sat", term(ci, i, j), paired(ci, channels, |c| term(c, i, j)))?;
                            sum.add((ci * kh + i) * kw + j, t, "conv.acc")?;
                        }
                    }
                }
                out.push(sum.finish(|a| rq::apply(&p.rq, oc, a))?);
            }
        }
    }
    Ok(Tensor { shape: o, data: out })
}

/// `X[c][u][v]` of the zero-padded input: 0 off the plane.
fn padded(x: &Tensor, c: usize, u: i64, v: i64) -> i64 {
    let (_, h, w) = x.dims();
    if u < 0 || u >= h as i64 || v < 0 || v >= w as i64 {
        return 0;
    }
    x.at(c, u as usize, v as usize)
}

/// `w8-tail`: [`padded`], except that in a partial last block of 8 output columns (from `xo`'s) a tap on
/// the right padding reads on in CHW order: the next row's column `v − W`, past a plane's last row
/// the next channel's first, past the tensor 0.
#[cfg(feature = "mutants")]
fn read_on(x: &Tensor, c: usize, u: i64, v: i64, xo: usize, wo: usize) -> i64 {
    let (_, h, w) = x.dims();
    if u < 0 || u >= h as i64 || v < 0 || (v >= w as i64 && xo < last_block(wo)) {
        return 0;
    }
    x.data.get((c * h + u as usize) * w + v as usize).copied().unwrap_or(0)
}

/// `tile16-tail`: the channels a loop in tiles of 16 reaches when it has no remainder loop. A group
/// of 16 or fewer takes another path, whole.
#[cfg(any(test, feature = "mutants"))]
fn whole_tiles(cg: usize) -> usize {
    if cg > 16 { cg / 16 * 16 } else { cg }
}

/// `w8-tail`: the first output column of the last block of 8 when that block is partial, else `wo`
/// (no column).
#[cfg(any(test, feature = "mutants"))]
fn last_block(wo: usize) -> usize {
    wo / 8 * 8
}

/// `i16-pair-sat`: the term at channel `ci` of a tap when the products of channels 2k and 2k + 1
/// (the last with 0 when `channels` is odd) are summed as a pair: the pair's sum at the even channel,
/// nothing at the odd one.
#[cfg(feature = "mutants")]
fn paired(ci: usize, channels: usize, term: impl Fn(usize) -> E<i64>) -> E<i64> {
    if ci % 2 == 1 {
        return Ok(0);
    }
    let next = if ci + 1 < channels { term(ci + 1)? } else { 0 };
    Ok(pair_sat(term(ci)?, next))
}

/// `i16-pair-sat`: a pair's sum saturated to int16, as `pmaddubsw` writes it.
#[cfg(any(test, feature = "mutants"))]
fn pair_sat(a: i64, b: i64) -> i64 {
    a.saturating_add(b).clamp(i64::from(i16::MIN), i64::from(i16::MAX))
}

/// `conv_transpose` in the scatter form of §5.3's informative paragraph: each input element adds
/// `Wt[ci][o][i][j]·X[ci][u][v]` at `(u·sh + i, v·sw + j)` of the uncropped plane; only the kept
/// window `[ph, ph + Ho) × [pw, pw + Wo)` is stored. Positions no tap reaches hold `rq_o(0)`.
pub fn conv_transpose(p: &ConvT, x: &Tensor, o: Shape) -> E<Tensor> {
    let (cin, h, w) = x.dims();
    let (cout, ho, wo) = (o.c as usize, o.h as usize, o.w as usize);
    let (kh, kw) = (p.kh as usize, p.kw as usize);
    let mut acc = vec![0i64; cout * ho * wo];
    // The kept window's corner in the uncropped plane: the output padding is past its other end.
    let (ph, pw) = (i64::from(p.ph), i64::from(p.pw));
    let (top, left) = fault!("convt-out-pad-top-left", (ph, pw), out_pad_top_left(p));
    for ci in 0..cin {
        for u in 0..h {
            for v in 0..w {
                let xv = x.at(ci, u, v);
                if xv == 0 {
                    continue; // every term is zero (§6 lets a zero term be skipped)
                }
                for oc in 0..cout {
                    let wbase = fault!("convt-weights-conv-layout", ci * cout + oc, oc * cin + ci) * kh * kw;
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
                            let (i, j) = fault!("convt-kernel-flipped", (i, j), (kh - 1 - i, kw - 1 - j));
                            let term = ck(p.w[wbase + i * kw + j].checked_mul(xv), "convT.term")?;
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
        out.push(rq::apply(&p.rq, k / (ho * wo), acc::wrapped(a))?);
    }
    Ok(Tensor { shape: o, data: out })
}

/// `convt-out-pad-top-left`: the kept window's corner when the output padding is taken from the top
/// and left instead of added at the bottom and right.
#[cfg(feature = "mutants")]
fn out_pad_top_left(p: &ConvT) -> (i64, i64) {
    (i64::from(p.ph) - i64::from(p.oph), i64::from(p.pw) - i64::from(p.opw))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::num::Round;
    use crate::plan::Shape;
    use crate::seeded::Rng;
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
    fn the_kernel_faults_helpers() {
        assert_eq!([5, 16, 17, 31, 32, 33].map(whole_tiles), [5, 16, 16, 16, 32, 32]);
        assert_eq!([5, 8, 13, 16].map(last_block), [0, 8, 8, 16]);
        assert_eq!(pair_sat(20_000, 20_000), 32_767);
        assert_eq!(pair_sat(-16_384, -16_385), -32_768);
        assert_eq!(pair_sat(i64::MAX, 1), 32_767);
        assert_eq!(pair_sat(100, -7), 93);
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
