//! §5.2 `conv` and §5.3 `conv_transpose`: decodes worked out by hand from the
//! definitions, and every shape-rule refusal.

mod common;
use common::*;
use wai_oracle::num::Round;
use wai_oracle::refusal::Code;
use wai_oracle::whg1::build::{Builder, Geometry};
use wai_oracle::whg1::{Conv, ConvTranspose, Op, PerChannel, Placement, Rq};

fn geom(k: (u32, u32), s: (u32, u32), p: (u32, u32)) -> Geometry {
    Geometry { k, s, p }
}

fn floor0() -> Rq {
    Rq::new(Round::Floor, PerChannel::One(0))
}

/// One conv on a `cin`-channel input with the `check` range of `any()`.
fn conv_graph(cin: u32, conv: Conv) -> wai_oracle::whg1::Graph {
    let mut b = Builder::new();
    let x = b.input(cin, any());
    let cout = conv.cout;
    let y = b.op(Op::Conv(conv), &[x], cout);
    b.output(y);
    b.build()
}

#[test]
fn conv_3x3_stride_2_pad_1_by_hand() {
    // Input [1, 3, 3] = 1 2 3 / 4 5 6 / 7 8 9; weights 1 0 −1 / 2 0 −2 / 1 0 −1 (Sobel x).
    // Padded side 3 + 2 = 5, Ho = ⌊(5 − 3)/2⌋ + 1 = 2.
    // (0,0): window rows −1..1, cols −1..1: 1·0 + 0 − 1·0 + 2·0 + 0 − 2·2 + 1·0 + 0 − 1·5 = −4 − 5 = −9.
    // (0,1): rows −1..1, cols 1..3: row −1 zero; row 0 cols 1,2,3 = 2,3,0: 2·2 − 2·0 = 4;
    //        row 1 = 5,6,0: 1·5 − 1·0 = 5. Total 9.
    // (1,0): rows 1..3, cols −1..1: row 1 = 0,4,5: 1·0 − 1·5 = −5; row 2 = 0,7,8: 2·0 − 2·8 = −16;
    //        row 3 zero. Total −21.
    // (1,1): rows 1..3, cols 1..3: row 1 = 5,6,0: 5; row 2 = 8,9,0: 16. Total 21.
    // rq: bias pre 3 per channel, mult 2, shift 2, half_up: t = acc + 3, p = 2t, q = ⌊(p + 2)/4⌋.
    //   −9 → t −6, p −12, q ⌊−10/4⌋ = −3;  9 → 12, 24, ⌊26/4⌋ = 6;
    //   −21 → −18, −36, ⌊−34/4⌋ = −9;  21 → 24, 48, ⌊50/4⌋ = 12.
    let rq = Rq::new(Round::HalfUp, PerChannel::One(2))
        .mult(PerChannel::One(2))
        .bias(Placement::Pre, vec![3]);
    let conv = Conv::new(
        1,
        geom((3, 3), (2, 2), (1, 1)),
        1,
        vec![1, 0, -1, 2, 0, -2, 1, 0, -1],
        rq,
    );
    let g = conv_graph(1, conv);
    let (s, v) = out1(&g, vec![t(1, 3, 3, &[1, 2, 3, 4, 5, 6, 7, 8, 9])], vec![]);
    assert_eq!(s, shape(1, 2, 2));
    assert_eq!(v, vec![-3, 6, -9, 12]);
}

#[test]
fn conv_groups_and_post_bias_by_hand() {
    // cin = 4, cout = 2, groups = 2: cg = 2, og = 1. Output o reads channels o·2, o·2 + 1.
    // 1×1 kernel: Wt[0] = [1, 10], Wt[1] = [−1, 100]. Input [4, 1, 2]:
    //   c0 = 1 2, c1 = 3 4, c2 = 5 6, c3 = 7 8.
    // acc[0] = 1·c0 + 10·c1 = 31, 42; acc[1] = −c2 + 100·c3 = 695, 794.
    // rq: floor, shift 1, post bias [−1, 1]: q = ⌊acc/2⌋ = 15, 21, 347, 397; y = q + post.
    let rq = Rq::new(Round::Floor, PerChannel::One(1)).bias(Placement::Post, vec![-1, 1]);
    let conv = Conv::new(2, geom((1, 1), (1, 1), (0, 0)), 2, vec![1, 10, -1, 100], rq);
    let g = conv_graph(4, conv);
    let (s, v) = out1(&g, vec![t(4, 1, 2, &[1, 2, 3, 4, 5, 6, 7, 8])], vec![]);
    assert_eq!(s, shape(2, 1, 2));
    assert_eq!(v, vec![14, 20, 348, 398]);
}

#[test]
fn conv_depthwise_per_channel_shift() {
    // Depthwise, groups = cin = cout = 2, 1×2 kernel, stride (1, 1), no padding, on [2, 1, 3].
    // c0 = 4 −6 8, weights [1, 1]: acc = −2, 2; c1 = 1 2 3, weights [3, −1]: acc = 1, 3.
    // Shifts per channel [1, 0], floor: ⌊−2/2⌋ = −1, ⌊2/2⌋ = 1; 1, 3.
    let conv = Conv::new(
        2,
        geom((1, 2), (1, 1), (0, 0)),
        2,
        vec![1, 1, 3, -1],
        Rq::new(Round::Floor, PerChannel::Each(vec![1, 0])),
    );
    let g = conv_graph(2, conv);
    let (s, v) = out1(&g, vec![t(2, 1, 3, &[4, -6, 8, 1, 2, 3])], vec![]);
    assert_eq!(s, shape(2, 1, 2));
    assert_eq!(v, vec![-1, 1, 1, 3]);
}

#[test]
fn conv_shape_rules() {
    // Kernel 3×3, no padding: a 2×5 input has H + 2ph = 2 < kh = 3.
    let g = conv_graph(1, Conv::new(1, geom((3, 3), (1, 1), (0, 0)), 1, vec![1; 9], floor0()));
    assert_eq!(refusal(&g, vec![t(1, 2, 5, &[0; 10])], vec![]), Code::GeometryMismatch);
    assert_eq!(refusal(&g, vec![t(1, 5, 2, &[0; 10])], vec![]), Code::GeometryMismatch);
    // Exactly the kernel's size decodes to one position: 9 ones sum to 9.
    assert_eq!(out1(&g, vec![t(1, 3, 3, &[1; 9])], vec![]).1, vec![9]);
    // With padding 1 a 1×1 plane is enough: the centre tap only, 1·7 = 7.
    let g = conv_graph(1, Conv::new(1, geom((3, 3), (1, 1), (1, 1)), 1, vec![1; 9], floor0()));
    assert_eq!(out1(&g, vec![t(1, 1, 1, &[7])], vec![]), (shape(1, 1, 1), vec![7]));
    // The padded side H + 2ph passes 2^26 before the shape rule is read: too_large.
    let g = conv_graph(
        1,
        Conv::new(1, geom((1, 1), (1, 1), (1 << 25, 0)), 1, vec![1], floor0()),
    );
    assert_eq!(refusal(&g, vec![t(1, 1, 1, &[7])], vec![]), Code::TooLarge);
    // cin not a multiple of groups, or cout not: the channels do not plan (load).
    let mut b = Builder::new();
    let x = b.input(3, any());
    let y = b.op(
        Op::Conv(Conv::new(2, geom((1, 1), (1, 1), (0, 0)), 2, vec![1; 3], floor0())),
        &[x],
        2,
    );
    b.output(y);
    assert_eq!(load_refusal(&b.build()), Code::ModelMismatch);
    let mut b = Builder::new();
    let x = b.input(2, any());
    let y = b.op(
        Op::Conv(Conv::new(3, geom((1, 1), (1, 1), (0, 0)), 2, vec![1; 3], floor0())),
        &[x],
        3,
    );
    b.output(y);
    assert_eq!(load_refusal(&b.build()), Code::ModelMismatch);
}

fn convt_graph(cin: u32, c: ConvTranspose) -> wai_oracle::whg1::Graph {
    let mut b = Builder::new();
    let x = b.input(cin, any());
    let cout = c.cout;
    let y = b.op(Op::ConvTranspose(c), &[x], cout);
    b.output(y);
    b.build()
}

#[test]
fn conv_transpose_stride_2_by_hand() {
    // Input [1, 1, 2] = 3 5; kernel 1×3 = [1, 2, 4]; stride (1, 2); no padding; opw = 1.
    // Scatter: x=0 (3) lands at columns 0,1,2 as 3, 6, 12; x=1 (5) at 2,3,4 as 5, 10, 20.
    // uw = (2 − 1)·2 + 3 + 1 = 6: columns 0..5 = 3, 6, 17, 10, 20, 0 (column 5 is output padding).
    // rq: floor, shift 0, pre bias 1 → 4, 7, 18, 11, 21, 1 (the untouched position holds rq(0) = 1).
    let rq = Rq::new(Round::Floor, PerChannel::One(0)).bias(Placement::Pre, vec![1]);
    let c = ConvTranspose::new(1, geom((1, 3), (1, 2), (0, 0)), (0, 1), vec![1, 2, 4], rq);
    let (s, v) = out1(&convt_graph(1, c), vec![t(1, 1, 2, &[3, 5])], vec![]);
    assert_eq!(s, shape(1, 1, 6));
    assert_eq!(v, vec![4, 7, 18, 11, 21, 1]);
}

#[test]
fn conv_transpose_padding_crops_and_channels_mix() {
    // cin = 2, cout = 1, kernel 2×2 of ones for ci = 0 and of 10s for ci = 1, stride 2, padding (1, 1).
    // Input [2, 1, 1]: c0 = 2, c1 = 3. Uncropped 2×2 plane: every tap hit once: 2 + 30 = 32.
    // uh = 0·2 + 2 = 2, Ho = 2 − 2 = 0 < 1: refused. With oph = opw = 1: uh = 3, Ho = 1;
    // row 1, column 1 of the uncropped plane (tap (1, 1)) is 32.
    let c = ConvTranspose::new(
        1,
        geom((2, 2), (2, 2), (1, 1)),
        (0, 0),
        vec![1, 1, 1, 1, 10, 10, 10, 10],
        floor0(),
    );
    assert_eq!(
        refusal(&convt_graph(2, c), vec![t(2, 1, 1, &[2, 3])], vec![]),
        Code::GeometryMismatch
    );
    let c = ConvTranspose::new(
        1,
        geom((2, 2), (2, 2), (1, 1)),
        (1, 1),
        vec![1, 1, 1, 1, 10, 10, 10, 10],
        floor0(),
    );
    assert_eq!(
        out1(&convt_graph(2, c), vec![t(2, 1, 1, &[2, 3])], vec![]),
        (shape(1, 1, 1), vec![32])
    );
}

#[test]
fn conv_transpose_caps_come_before_the_shape_rule() {
    // uh = (H − 1)·sh + kh + oph passes 2^26: too_large, even though Ho would be fine.
    let c = ConvTranspose::new(1, geom((1, 1), (1 << 26, 1), (0, 0)), (0, 0), vec![1], floor0());
    assert_eq!(
        refusal(&convt_graph(1, c), vec![t(1, 2, 1, &[1, 2])], vec![]),
        Code::TooLarge
    );
    // cout·uh·uw passes 2^26 while each side is within it: cout = 2^13, a 2^7 × 2^7 plane gives 2^27.
    let c = ConvTranspose::new(
        1 << 13,
        geom((1, 1), (1, 1), (0, 0)),
        (0, 0),
        vec![1; 1 << 13],
        floor0(),
    );
    let big = vec![0; 1 << 14];
    assert_eq!(
        refusal(&convt_graph(1, c), vec![t(1, 1 << 7, 1 << 7, &big)], vec![]),
        Code::TooLarge
    );
}

/// The sums of `conv` are formed in `i128` while every step is checked (`ops::mac`); past it they
/// are formed in `BigInt`. Each decode here leaves the small form and is checked against the sum
/// written out.
#[test]
fn conv_sums_past_i128_and_operands_past_i64_are_exact() {
    use num_bigint::BigInt;
    let (max, min) = (BigInt::from(i64::MAX), BigInt::from(i64::MIN));
    let term = &max * &min; // (2^63 − 1)·(−2^63) = −2^126 + 2^63
    let shift0 = || Rq::new(Round::Floor, PerChannel::One(0));
    let run = |conv: Conv, x| decode(&conv_graph(1, conv), vec![x], vec![]).expect("completes");
    // A 2×2 kernel of i64::MAX on a [1, 2, 3] plane of i64::MIN: two outputs, each four terms;
    // the third partial sum passes −2^127, so the sum is 4·term.
    let c = Conv::new(1, geom((2, 2), (1, 1), (0, 0)), 1, vec![i64::MAX; 4], shift0());
    let y = run(c, t(1, 2, 3, &[i64::MIN; 6]));
    assert_eq!(y[0].data, vec![&term * 4, &term * 4]);
    // A 2×1 kernel: two terms, within i128 (2·term = −2^127 + 2^64).
    let c = Conv::new(1, geom((2, 1), (1, 1), (0, 0)), 1, vec![i64::MAX; 2], shift0());
    let y = run(c, t(1, 2, 1, &[i64::MIN; 2]));
    assert_eq!(y[0].data, vec![&term * 2]);
    // An operand past i64: `rescale` by 2^40 makes x·2^40 (x = 2^30 + 1 and −3), then a 1×2 conv
    // with weights 5, −7 sums 5·(2^30 + 1)·2^40 + (−7)·(−3)·2^40 = (5·2^30 + 26)·2^40.
    let mut b = Builder::new();
    let x = b.input(1, any());
    let scaled = b.op(
        Op::Rescale(Rq::new(Round::Floor, PerChannel::One(0)).mult(PerChannel::One(1 << 40))),
        &[x],
        1,
    );
    let c = Conv::new(1, geom((1, 2), (1, 1), (0, 0)), 1, vec![5, -7], shift0());
    let yt = b.op(Op::Conv(c), &[scaled], 1);
    b.output(yt);
    let y = decode(&b.build(), vec![t(1, 1, 2, &[(1 << 30) + 1, -3])], vec![]).expect("completes");
    assert_eq!(y[0].data, vec![(BigInt::from(5) * (1i64 << 30) + 26) << 40]);
}

/// The two forms of `conv`'s sums agree, output and observations, on random geometries and on
/// operands from small to past `i64`, with sums inside and past `i128`; and the sums are §5.2's.
#[test]
fn conv_checked_form_is_the_bigint_form() {
    use num_bigint::BigInt;
    use rand::{RngExt, SeedableRng};
    use wai_oracle::ops::linear::conv_in;
    use wai_oracle::ops::mac::Form;
    use wai_oracle::ops::observe::Observer;

    #[derive(Default)]
    struct Seen(Vec<(&'static str, usize, BigInt)>);
    impl Observer for Seen {
        fn see(&mut self, key: &'static str, channel: usize, value: &BigInt) {
            self.0.push((key, channel, value.clone()));
        }
    }

    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(25);
    let value = |rng: &mut rand_chacha::ChaCha8Rng, wide: bool| -> BigInt {
        match rng.random_range(0..if wide { 5 } else { 4 }) {
            0 => BigInt::from(rng.random_range(-128..128)),
            1 => BigInt::from(i64::MAX - rng.random_range(0..3)),
            2 => BigInt::from(i64::MIN + rng.random_range(0..3)),
            3 => BigInt::from(rng.random_range(i64::MIN..=i64::MAX)),
            _ => BigInt::from(rng.random_range(-3..4)) << 70,
        }
    };
    for case in 0..300 {
        let groups = rng.random_range(1..3u32);
        let (cin, cout) = (groups * rng.random_range(1..3u32), groups * rng.random_range(1..3u32));
        let (kh, kw) = (rng.random_range(1..4u32), rng.random_range(1..4u32));
        let (sh, sw) = (rng.random_range(1..3u32), rng.random_range(1..3u32));
        let (ph, pw) = (rng.random_range(0..3u32), rng.random_range(0..3u32));
        let (h, w) = (rng.random_range(1..6u64), rng.random_range(1..6u64));
        if u64::from(kh) > h + 2 * u64::from(ph) || u64::from(kw) > w + 2 * u64::from(pw) {
            continue;
        }
        let out = shape(
            u64::from(cout),
            (h + 2 * u64::from(ph) - u64::from(kh)) / u64::from(sh) + 1,
            (w + 2 * u64::from(pw) - u64::from(kw)) / u64::from(sw) + 1,
        );
        let wide = case % 3 == 0; // some tensors past i64
        let n_w = (cout * (cin / groups) * kh * kw) as usize;
        let weights: Vec<i64> = (0..n_w)
            .map(|_| i64::try_from(value(&mut rng, false)).expect("fits"))
            .collect();
        let x = tb(
            u64::from(cin),
            h,
            w,
            (0..u64::from(cin) * h * w).map(|_| value(&mut rng, wide)).collect(),
        );
        let rq = Rq::new(Round::HalfEven, PerChannel::One(rng.random_range(0..70)))
            .mult(PerChannel::One(rng.random_range(-5..6)))
            .bias(Placement::Pre, vec![rng.random_range(-1000..1000); cout as usize]);
        let p = Conv::new(cout, geom((kh, kw), (sh, sw), (ph, pw)), groups, weights, rq);
        let (mut small, mut big) = (Seen::default(), Seen::default());
        let ys = conv_in(Form::Checked, &p, &x, out, &mut small);
        let yb = conv_in(Form::Big, &p, &x, out, &mut big);
        assert_eq!(ys, yb, "case {case}");
        assert_eq!(small.0, big.0, "case {case}");
        // And the sums are §5.2's, written out over every tap with X̃ zero outside the plane.
        let (cg, og) = ((cin / groups) as i64, (cout / groups) as i64);
        let (kh, kw, sh, sw, ph, pw) = (kh as i64, kw as i64, sh as i64, sw as i64, ph as i64, pw as i64);
        let mut want = Vec::new();
        for o in 0..out.c as i64 {
            for y in 0..out.h as i64 {
                for xo in 0..out.w as i64 {
                    let mut acc = BigInt::ZERO;
                    for ci in 0..cg {
                        for i in 0..kh {
                            for j in 0..kw {
                                let (u, v) = (y * sh + i - ph, xo * sw + j - pw);
                                if (0..h as i64).contains(&u) && (0..w as i64).contains(&v) {
                                    let wt = p.weights[(((o * cg + ci) * kh + i) * kw + j) as usize];
                                    let c = (o / og) * cg + ci;
                                    acc += wt * x.at(c as usize, u as usize, v as usize);
                                }
                            }
                        }
                    }
                    want.push(acc);
                }
            }
        }
        let got: Vec<BigInt> = small
            .0
            .iter()
            .filter(|s| s.0 == "conv.acc")
            .map(|s| s.2.clone())
            .collect();
        assert_eq!(got, want, "case {case}");
    }
}

/// `conv_transpose`'s sums past `i128`, as `conv`'s above.
#[test]
fn conv_transpose_sums_past_i128_are_exact() {
    use num_bigint::BigInt;
    // 1 → 1 channel, 2×2 kernel of i64::MAX, stride 1, on a [1, 2, 2] plane of i64::MIN: output
    // [1, 3, 3]; the centre receives all four taps (past −2^127 at the third), an edge's middle two,
    // a corner one.
    let term = BigInt::from(i64::MAX) * BigInt::from(i64::MIN);
    let c = ConvTranspose::new(1, geom((2, 2), (1, 1), (0, 0)), (0, 0), vec![i64::MAX; 4], floor0());
    let y = decode(&convt_graph(1, c), vec![t(1, 2, 2, &[i64::MIN; 4])], vec![]).expect("completes");
    let want: Vec<BigInt> = [1, 2, 1, 2, 4, 2, 1, 2, 1].iter().map(|&k| &term * k).collect();
    assert_eq!(y[0].data, want);
}
