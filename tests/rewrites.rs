//! Property tests (seeded, 1,000 cases each) of the spec's stated identities:
//! §9.3's phase form equals `conv_transpose`, and each exact rewrite of §9.4
//! gives the integers of the operator it replaces, under its stated conditions.

mod common;
use common::*;
use num_bigint::BigInt;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use wai_oracle::num::{Round, pow2};
use wai_oracle::tensor::Tensor;
use wai_oracle::whg1::build::{Builder, Geometry};
use wai_oracle::whg1::{Conv, ConvTranspose, Graph, Op, PerChannel, Placement, Rq};

const CASES: usize = 1000;

fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

fn random_round(r: &mut ChaCha8Rng) -> Round {
    [Round::Floor, Round::HalfUp, Round::HalfEven][r.random_range(0..3)]
}

fn random_tensor(r: &mut ChaCha8Rng, c: u64, h: u64, w: u64, lim: i64) -> Tensor {
    let data: Vec<i64> = (0..c * h * w).map(|_| r.random_range(-lim..=lim)).collect();
    t(c, h, w, &data)
}

fn one_op(cin: u32, op: Op, cout: u32) -> Graph {
    let mut b = Builder::new();
    let x = b.input(cin, any());
    let y = b.op(op, &[x], cout);
    b.output(y);
    b.build()
}

fn run1(g: &Graph, x: Tensor) -> Tensor {
    decode(g, vec![x], vec![])
        .unwrap_or_else(|c| panic!("refused: {c}"))
        .remove(0)
}

/// §9.3: `Z_ρ[o][u][v] = Σ_ci Σ_{t,t′} Wt[ci][o][ρy + sh·t][ρx + sw·t′]·X̃[ci][u − t][v − t′]`, and
/// `out[o][y][x] = Z_ρ[o][⌊(y + ph)/sh⌋][⌊(x + pw)/sw⌋]` with `ρ = ((y + ph) mod sh, (x + pw) mod sw)`
/// (the `rq` here is the identity, so the output is the sum).
fn phase_form(p: &ConvTranspose, x: &Tensor, ho: usize, wo: usize) -> Vec<BigInt> {
    let (cout, kh, kw) = (p.cout as usize, p.kh as usize, p.kw as usize);
    let (sh, sw, ph, pw) = (p.sh as usize, p.sw as usize, p.ph as usize, p.pw as usize);
    let xt = |ci: usize, u: isize, v: isize| -> BigInt {
        if u >= 0 && v >= 0 && (u as usize) < x.h() && (v as usize) < x.w() {
            x.at(ci, u as usize, v as usize).clone()
        } else {
            BigInt::ZERO
        }
    };
    let mut out = Vec::new();
    for o in 0..cout {
        for y in 0..ho {
            for xo in 0..wo {
                let (ry, rx) = ((y + ph) % sh, (xo + pw) % sw);
                let (u, v) = ((y + ph) / sh, (xo + pw) / sw);
                let mut z = BigInt::ZERO;
                for ci in 0..x.c() {
                    // Taps of this phase: ρy + sh·t < kh; a missing tap is a zero weight.
                    for tt in 0..kh.div_ceil(sh) {
                        for tt2 in 0..kw.div_ceil(sw) {
                            let (i, j) = (ry + sh * tt, rx + sw * tt2);
                            if i >= kh || j >= kw {
                                continue;
                            }
                            let w = p.weights[((ci * cout + o) * kh + i) * kw + j];
                            z += w * xt(ci, u as isize - tt as isize, v as isize - tt2 as isize);
                        }
                    }
                }
                out.push(z);
            }
        }
    }
    out
}

#[test]
fn phase_form_equals_conv_transpose() {
    let mut r = rng(93);
    let mut checked = 0;
    while checked < CASES {
        let (cin, cout) = (r.random_range(1..=3u32), r.random_range(1..=3u32));
        let (kh, kw) = (r.random_range(1..=5u32), r.random_range(1..=5u32));
        let (sh, sw) = (r.random_range(1..=4u32), r.random_range(1..=4u32));
        let (ph, pw) = (r.random_range(0..=3u32), r.random_range(0..=3u32));
        let (oph, opw) = (r.random_range(0..=4u32), r.random_range(0..=4u32));
        let (h, w) = (r.random_range(1..=4u64), r.random_range(1..=4u64));
        let ho = (h as i64 - 1) * sh as i64 + kh as i64 + oph as i64 - 2 * ph as i64;
        let wo = (w as i64 - 1) * sw as i64 + kw as i64 + opw as i64 - 2 * pw as i64;
        if ho < 1 || wo < 1 {
            continue;
        }
        let weights: Vec<i64> = (0..cin * cout * kh * kw)
            .map(|_| r.random_range(-1000..=1000))
            .collect();
        let geom = Geometry {
            k: (kh, kw),
            s: (sh, sw),
            p: (ph, pw),
        };
        let p = ConvTranspose::new(
            cout,
            geom,
            (oph, opw),
            weights,
            Rq::new(Round::Floor, PerChannel::One(0)),
        );
        let x = random_tensor(&mut r, cin.into(), h, w, 1 << 20);
        let expected = phase_form(&p, &x, ho as usize, wo as usize);
        let out = run1(&one_op(cin, Op::ConvTranspose(p.clone()), cout), x);
        assert_eq!(out.data, expected, "{p:?}");
        checked += 1;
    }
}

/// `rescale` of `x` with the given `RQ`.
fn rescale(rq: Rq, x: &Tensor) -> Tensor {
    run1(&one_op(x.c() as u32, Op::Rescale(rq), x.c() as u32), x.clone())
}

#[test]
fn floor_is_half_up_with_a_shifted_pre_bias() {
    // §9.4: for s ≥ 1, R_floor(t + b, s) = R_half_up(t + b − 2^(s−1), s).
    let mut r = rng(941);
    for _ in 0..CASES {
        let s = r.random_range(1..=62u8);
        let b = r.random_range(-(1i64 << 61)..(1i64 << 61));
        let x = random_tensor(&mut r, 1, 1, 8, 1 << 62);
        let floor = Rq::new(Round::Floor, PerChannel::One(s)).bias(Placement::Pre, vec![b]);
        let half_up = Rq::new(Round::HalfUp, PerChannel::One(s)).bias(Placement::Pre, vec![b - (1i64 << (s - 1))]);
        assert_eq!(rescale(floor, &x), rescale(half_up, &x), "s = {s}, b = {b}");
    }
}

#[test]
fn a_negative_multiplier_is_a_positive_one_with_weights_and_pre_bias_negated() {
    // §9.4: channel o with m[o] < 0 equals −m[o] with its weights and pre bias negated;
    // its post bias is unchanged.
    let mut r = rng(942);
    for _ in 0..CASES {
        let (cin, cout) = (r.random_range(1..=3u32), r.random_range(1..=3u32));
        let (k, s) = (r.random_range(1..=3u32), r.random_range(0..=40u8));
        let round = random_round(&mut r);
        let weights: Vec<i64> = (0..cout * cin * k * k).map(|_| r.random_range(-500..=500)).collect();
        let mult: Vec<i64> = (0..cout).map(|_| r.random_range(-(1i64 << 31)..(1i64 << 31))).collect();
        let pre: Vec<i64> = (0..cout).map(|_| r.random_range(-100_000..=100_000)).collect();
        let post: Vec<i64> = (0..cout).map(|_| r.random_range(-100_000..=100_000)).collect();
        let geom = Geometry {
            k: (k, k),
            s: (1, 1),
            p: (1, 1),
        };
        let conv = |w: Vec<i64>, m: Vec<i64>, b: Vec<i64>| {
            let rq = Rq::new(round, PerChannel::One(s))
                .mult(PerChannel::Each(m))
                .bias(Placement::Pre, b);
            one_op(cin, Op::Conv(Conv::new(cout, geom, 1, w, rq)), cout)
        };
        let per = (cin * k * k) as usize;
        let (mut w2, mut m2, mut b2) = (weights.clone(), mult.clone(), pre.clone());
        for o in 0..cout as usize {
            if m2[o] < 0 {
                m2[o] = -m2[o];
                b2[o] = -b2[o];
                w2[o * per..(o + 1) * per].iter_mut().for_each(|w| *w = -*w);
            }
        }
        let x = random_tensor(&mut r, cin.into(), 3, 3, 1000);
        // The post bias goes on a rescale after each conv, unchanged on both sides.
        let with_post = |g: Graph| {
            let y = run1(&g, x.clone());
            rescale(
                Rq::new(Round::Floor, PerChannel::One(0)).bias(Placement::Post, post.clone()),
                &y,
            )
        };
        assert_eq!(with_post(conv(weights, mult, pre)), with_post(conv(w2, m2, b2)));
    }
}

#[test]
fn a_multiplier_times_2_to_the_k_adds_k_to_the_shift() {
    // §9.4: R(t·m, s) = R(t·(m·2^k), s + k) for every k ≥ 0 and every rounding.
    let mut r = rng(943);
    for _ in 0..CASES {
        let round = random_round(&mut r);
        let k = r.random_range(0..=30u32);
        let m = r.random_range(-(1i64 << 32)..(1i64 << 32));
        let s = r.random_range(0..=(127 - k) as u8);
        let x = random_tensor(&mut r, 1, 1, 8, 1 << 40);
        let a = Rq::new(round, PerChannel::One(s)).mult(PerChannel::One(m));
        let b = Rq::new(round, PerChannel::One(s + k as u8)).mult(PerChannel::One(m << k));
        assert_eq!(rescale(a, &x), rescale(b, &x), "{round:?} m = {m} s = {s} k = {k}");
    }
}

#[test]
fn a_post_bias_is_a_pre_bias_of_b_2s_over_m() {
    // §9.4: R(t·m, s) + b = R(t·m + b·2^s, s) for floor and half_up, and for half_even when b is
    // even; when m divides b·2^s the post bias is a pre bias of b·2^s/m.
    let mut r = rng(944);
    let mut cases = 0;
    while cases < CASES {
        let round = random_round(&mut r);
        let s = r.random_range(0..=20u8);
        let m = r.random_range(1..=1000i64) * if r.random_bool(0.5) { -1 } else { 1 };
        let mut b = r.random_range(-1_000_000..=1_000_000i64);
        if round == Round::HalfEven {
            b &= !1;
        }
        let scaled = BigInt::from(b) * pow2(s.into());
        if &scaled % m != BigInt::ZERO {
            continue;
        }
        let pre = i64::try_from(&scaled / m).unwrap();
        let x = random_tensor(&mut r, 1, 1, 8, 1 << 30);
        let post_rq = Rq::new(round, PerChannel::One(s))
            .mult(PerChannel::One(m))
            .bias(Placement::Post, vec![b]);
        let pre_rq = Rq::new(round, PerChannel::One(s))
            .mult(PerChannel::One(m))
            .bias(Placement::Pre, vec![pre]);
        assert_eq!(
            rescale(post_rq, &x),
            rescale(pre_rq, &x),
            "{round:?} s = {s} m = {m} b = {b}"
        );
        cases += 1;
    }
}

#[test]
fn an_odd_post_bias_breaks_the_half_even_identity() {
    // The condition is needed: with half_even, s = 1, m = 1, b = 1 and t = 1,
    // R(1, 1) + 1 = 0 + 1 = 1 (½ rounds to the even 0), but R(1 + 2, 1) = R(3, 1) = 2 (1½ → 2).
    let x = t(1, 1, 1, &[1]);
    let post = Rq::new(Round::HalfEven, PerChannel::One(1)).bias(Placement::Post, vec![1]);
    let pre = Rq::new(Round::HalfEven, PerChannel::One(1)).bias(Placement::Pre, vec![2]);
    assert_eq!(vals(&rescale(post, &x)), vec![1]);
    assert_eq!(vals(&rescale(pre, &x)), vec![2]);
}

#[test]
fn half_up_is_ties_away_from_zero_on_non_negative_products() {
    // §9.4: a unit rounding ties away from zero agrees with half_up when rq.p ≥ 0.
    let mut r = rng(945);
    for _ in 0..CASES {
        let s = r.random_range(1..=40u8);
        // Half the elements are ties: odd multiples of 2^(s−1).
        let data: Vec<i64> = (0..8)
            .map(|i| {
                let k = r.random_range(0..1i64 << 20);
                if i % 2 == 0 {
                    (2 * k + 1) << (s - 1)
                } else {
                    r.random_range(0..1i64 << 45)
                }
            })
            .collect();
        let x = t(1, 1, 8, &data);
        let out = rescale(Rq::new(Round::HalfUp, PerChannel::One(s)), &x);
        for (p, q) in x.data.iter().zip(&out.data) {
            // Away from zero on p ≥ 0: ⌊(2p + 2^s) / 2^(s+1)⌋, the nearest integer with ties up.
            let away = (2 * p + pow2(s.into())) / pow2(u32::from(s) + 1);
            assert_eq!(*q, away);
        }
    }
}

#[test]
fn depth_to_space_needs_the_channel_permutation_folded_into_the_producer() {
    // §9.4: pixel_shuffle reads channel c·r² + i·r + j; a target reading (i·r + j)·C′ + c instead
    // gives the same output when the producing conv's output channels are permuted to match.
    let mut r = rng(946);
    for _ in 0..CASES {
        let (cin, cp, rr) = (
            r.random_range(1..=2u32),
            r.random_range(1..=3u32),
            r.random_range(1..=3u32),
        );
        let cout = cp * rr * rr;
        let weights: Vec<i64> = (0..cout * cin).map(|_| r.random_range(-50..=50)).collect();
        let geom = Geometry {
            k: (1, 1),
            s: (1, 1),
            p: (0, 0),
        };
        let floor = Rq::new(Round::Floor, PerChannel::One(0));
        let x = random_tensor(&mut r, cin.into(), 2, 3, 100);
        // wai-ops: conv, then pixel_shuffle.
        let mut b = Builder::new();
        let xi = b.input(cin, any());
        let y = b.op(
            Op::Conv(Conv::new(cout, geom, 1, weights.clone(), floor.clone())),
            &[xi],
            cout,
        );
        let z = b.op(Op::PixelShuffle { r: rr }, &[y], cp);
        b.output(z);
        let expected = decode(&b.build(), vec![x.clone()], vec![]).unwrap().remove(0);
        // The target: conv with output channel (i·r + j)·C′ + c taking pixel_shuffle's c·r² + i·r + j,
        // then its own depth-to-space, written out here.
        let (cp_, r_) = (cp as usize, rr as usize);
        let mut permuted = vec![0i64; weights.len()];
        for c in 0..cp_ {
            for ij in 0..r_ * r_ {
                let (from, to) = (c * r_ * r_ + ij, ij * cp_ + c);
                permuted[to * cin as usize..(to + 1) * cin as usize]
                    .copy_from_slice(&weights[from * cin as usize..(from + 1) * cin as usize]);
            }
        }
        let y2 = run1(
            &one_op(cin, Op::Conv(Conv::new(cout, geom, 1, permuted, floor)), cout),
            x,
        );
        let target = Tensor::from_fn(expected.shape, |c, yy, xx| {
            let (i, j) = (yy % r_, xx % r_);
            y2.at((i * r_ + j) * cp_ + c, yy / r_, xx / r_).clone()
        });
        assert_eq!(expected, target);
    }
}

#[test]
fn pad_rep_is_crops_of_edge_rows_and_columns_concatenated() {
    // §9.4: pad_rep from crop and a spatial concat (a target's own) of the edge row and column.
    let mut r = rng(947);
    for _ in 0..CASES {
        let (c, h, w, m) = (
            r.random_range(1..=2u64),
            r.random_range(1..=5u64),
            r.random_range(1..=5u64),
            r.random_range(1..=4u32),
        );
        let x = random_tensor(&mut r, c, h, w, 1000);
        let padded = run1(&one_op(c as u32, Op::PadRep { m }, c as u32), x.clone());
        // The last row repeated below, then the last column repeated to the right.
        let (hp, wp) = (h.div_ceil(m.into()) * u64::from(m), w.div_ceil(m.into()) * u64::from(m));
        let crop = |t: &Tensor, y0: usize, x0: usize, hh: usize, ww: usize| {
            Tensor::from_fn(
                wai_oracle::plan::Shape::new(t.shape.c, hh as u64, ww as u64),
                |cc, yy, xx| t.at(cc, y0 + yy, x0 + xx).clone(),
            )
        };
        let last_row = crop(&x, h as usize - 1, 0, 1, w as usize);
        let tall = Tensor::from_fn(wai_oracle::plan::Shape::new(c, hp, w), |cc, yy, xx| {
            if (yy as u64) < h {
                x.at(cc, yy, xx).clone()
            } else {
                last_row.at(cc, 0, xx).clone()
            }
        });
        let last_col = crop(&tall, 0, w as usize - 1, hp as usize, 1);
        let built = Tensor::from_fn(wai_oracle::plan::Shape::new(c, hp, wp), |cc, yy, xx| {
            if (xx as u64) < w {
                tall.at(cc, yy, xx).clone()
            } else {
                last_col.at(cc, yy, 0).clone()
            }
        });
        assert_eq!(padded, built);
    }
}
