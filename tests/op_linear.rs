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
