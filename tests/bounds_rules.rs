//! §8.1–§8.3 bound rules, §7.3's fixed intervals, the verdict and §8.5's first-failure keys,
//! and §6's `k_c`. Every expected interval is worked out by hand from the spec's text, with the
//! arithmetic in the comments (large numbers checked with a calculator).

mod common;
use common::*;
use num_bigint::BigInt;
use serde_json::Value;
use wai_oracle::bounds::certificate::{Header, certificate};
use wai_oracle::bounds::profile::{Profile, node_failure};
use wai_oracle::bounds::{Certified, first_failure};
use wai_oracle::num::Round;
use wai_oracle::refusal::Code;
use wai_oracle::whg1::build::{Builder, Geometry};
use wai_oracle::whg1::{
    Chscale, Contraction, Conv, ConvTranspose, Crop, FillValue, Graph, Igdn, LayernormC, Lut16, Op, Operand,
    PerChannel, Placement, Policy, Rq,
};

const ACC32: Profile = Profile::Acc32;
const ACC64: Profile = Profile::Acc64;

fn geom(k: (u32, u32), s: (u32, u32), p: (u32, u32)) -> Geometry {
    Geometry { k, s, p }
}

fn floor0() -> Rq {
    Rq::new(Round::Floor, PerChannel::One(0))
}

/// The certificate's node object for node `i` of the one graph.
fn node_json(c: &Certified, i: usize) -> Value {
    let header = Header {
        lowering: "whg1".into(),
        ..Default::default()
    };
    let cert = certificate(std::slice::from_ref(c), &header);
    cert["graphs"][0]["nodes"][i].clone()
}

/// The certificate's `k_c` for node `i`, as its JSON string.
fn k_c(c: &Certified, i: usize) -> String {
    node_json(c, i)["k_c"]
        .as_str()
        .unwrap_or_else(|| panic!("node {i} has no k_c"))
        .to_string()
}

/// `(where, index, key, bits)` of the profile's first failure, or `None` when it is met.
fn ff(c: &Certified, p: Profile) -> Option<(&'static str, usize, String, Option<u32>)> {
    first_failure(std::slice::from_ref(c), p).map(|f| (f.place, f.index, f.failure.key, f.failure.bits))
}

fn node_fail(key: &str, index: usize, bits: u32) -> Option<(&'static str, usize, String, Option<u32>)> {
    Some(("node", index, key.to_string(), Some(bits)))
}

/// One single-input, single-output operator on a `channels`-channel input with policy `p`.
fn unary(channels: u32, p: Policy, op: Op, out_channels: u32) -> Graph {
    let mut b = Builder::new();
    let x = b.input(channels, p);
    let y = b.op(op, &[x], out_channels);
    b.output(y);
    b.build()
}

/// As `unary`, with declared input sizes.
fn unary_sized(channels: u32, p: Policy, (h, w): (u32, u32), op: Op, out_channels: u32) -> Graph {
    let mut b = Builder::new();
    let x = b.input_sized(channels, p, h, w);
    let y = b.op(op, &[x], out_channels);
    b.output(y);
    b.build()
}

fn assert_keys(c: &Certified, node: usize, expected: &[(&str, BigInt, BigInt)]) {
    for (key, lo, hi) in expected {
        assert_eq!(intermediate(c, node, key), iv(lo.clone(), hi.clone()), "{key}");
    }
}

fn b(v: i128) -> BigInt {
    BigInt::from(v)
}

// ---------------------------------------------------------------------------
// conv, conv_transpose and the rq chain

#[test]
fn conv_term_acc_and_rq_chain_by_hand() {
    // One channel, 2×2 kernel, weights 3, −2, 0, 5 on check [−4, 10], pre bias 7,
    // mult 3, shift 2, half_up.
    // Term intervals (§8.2): 3 → [−12, 30]; −2 → [−20, 8]; 0 → [0, 0]; 5 → [−20, 50].
    // conv.term = hull = [−20, 50].
    // conv.acc = A(K, 7) = [min(0,7) − 12 − 20 + 0 − 20, max(0,7) + 30 + 8 + 0 + 50] = [−52, 95] = rq.t.
    // rq.p: P = [−52·3, 95·3] = [−156, 285]; a = 2^(2−1) = 2 → [−156, 287].
    // rq.q = [R_half_up(−156, 2), R_half_up(285, 2)] = [⌊−154/4⌋, ⌊287/4⌋] = [−39, 71].
    // rq.y = rq.q (no post bias) = producer result.
    let rq = Rq::new(Round::HalfUp, PerChannel::One(2))
        .mult(PerChannel::One(3))
        .bias(Placement::Pre, vec![7]);
    let g = unary(
        1,
        check(-4, 10),
        Op::Conv(Conv::new(1, geom((2, 2), (1, 1), (0, 0)), 1, vec![3, -2, 0, 5], rq)),
        1,
    );
    let c = certified(&g);
    assert_keys(
        &c,
        0,
        &[
            ("conv.term", b(-20), b(50)),
            ("conv.acc", b(-52), b(95)),
            ("rq.t", b(-52), b(95)),
            ("rq.p", b(-156), b(287)),
            ("rq.q", b(-39), b(71)),
            ("rq.y", b(-39), b(71)),
        ],
    );
    assert_eq!(result(&c, 0, 0), iv(-39, 71));
    assert_eq!(tensor_interval(&c, 1), iv(-39, 71));
    // §6: P = 50, K_c = ⌊(2^31 − 1)/50⌋ = ⌊2147483647/50⌋ = 42949672.
    assert_eq!(k_c(&c, 0), "42949672");
    assert_eq!(met(&c), vec![ACC32, ACC64]);
}

#[test]
fn conv_records_the_hull_over_output_channels() {
    // Two output channels, 1×1 kernel on one input channel check [1, 5]; weights 2 (o = 0) and
    // −3 (o = 1); floor, shift 0, post bias [100, −100].
    // o = 0: term [2, 10]; acc = A = [0, 10]; t = p = q = [0, 10]; y = [100, 110].
    // o = 1: term [−15, −3]; acc = [−15, 0]; t = p = q = [−15, 0]; y = [−115, −100].
    // Hulls: conv.term [−15, 10], conv.acc = rq.t = rq.p = rq.q = [−15, 10], rq.y [−115, 110].
    // (rq.q's hull plus either bias would give another interval: the hull is of the channels' y.)
    let rq = floor0().bias(Placement::Post, vec![100, -100]);
    let g = unary(
        1,
        check(1, 5),
        Op::Conv(Conv::new(2, geom((1, 1), (1, 1), (0, 0)), 1, vec![2, -3], rq)),
        2,
    );
    let c = certified(&g);
    assert_keys(
        &c,
        0,
        &[
            ("conv.term", b(-15), b(10)),
            ("conv.acc", b(-15), b(10)),
            ("rq.t", b(-15), b(10)),
            ("rq.p", b(-15), b(10)),
            ("rq.q", b(-15), b(10)),
            ("rq.y", b(-115), b(110)),
        ],
    );
    assert_eq!(result(&c, 0, 0), iv(-115, 110));
    // K_c over the hull: P = 15, ⌊2147483647/15⌋ = 143165576.
    assert_eq!(k_c(&c, 0), "143165576");
}

#[test]
fn conv_with_zero_weights_has_unbounded_k_c() {
    // Every term is [0, 0], so P = 0 and K_c is "unbounded" (§6); acc = A = [0, 0].
    let g = unary(
        2,
        check(-100, 100),
        Op::Conv(Conv::new(1, geom((1, 1), (1, 1), (0, 0)), 1, vec![0, 0], floor0())),
        1,
    );
    let c = certified(&g);
    assert_eq!(intermediate(&c, 0, "conv.term"), iv(0, 0));
    assert_eq!(intermediate(&c, 0, "conv.acc"), iv(0, 0));
    assert_eq!(k_c(&c, 0), "unbounded");
}

#[test]
fn conv_transpose_hulls_per_residue_not_over_all_taps() {
    // cin = cout = 1, kernel 1×4, stride (1, 2), weights Wt[0][0][0][j] = 3, 4, −2, −1, input
    // check [−1, 10], pre bias 5, shift 1, half_even.
    // Terms: 3 → [−3, 30]; 4 → [−4, 40]; −2 → [−20, 2]; −1 → [−10, 1]. convT.term = [−20, 40].
    // Residues ρx = j mod 2: K_0 = {3, −2}, K_1 = {4, −1} (ρy = 0 only).
    //   A(K_0, 5) = [0 − 3 − 20, 5 + 30 + 2] = [−23, 37];
    //   A(K_1, 5) = [0 − 4 − 10, 5 + 40 + 1] = [−14, 46].
    // convT.acc = hull = [−23, 46]; A over all four taps would be [−37, 78].
    // rq.p: P = [−23, 46], a = 1 → [−23, 47].
    // rq.q: R_half_even(−23, 1): q = ⌊−23/2⌋ = −12, r = 1 = h, q even → −12; R_half_even(46, 1) = 23.
    let rq = Rq::new(Round::HalfEven, PerChannel::One(1)).bias(Placement::Pre, vec![5]);
    let g = unary(
        1,
        check(-1, 10),
        Op::ConvTranspose(ConvTranspose::new(
            1,
            geom((1, 4), (1, 2), (0, 0)),
            (0, 0),
            vec![3, 4, -2, -1],
            rq,
        )),
        1,
    );
    let c = certified(&g);
    assert_keys(
        &c,
        0,
        &[
            ("convT.term", b(-20), b(40)),
            ("convT.acc", b(-23), b(46)),
            ("rq.t", b(-23), b(46)),
            ("rq.p", b(-23), b(47)),
            ("rq.q", b(-12), b(23)),
            ("rq.y", b(-12), b(23)),
        ],
    );
    assert_ne!(intermediate(&c, 0, "convT.acc"), iv(-37, 78));
    assert_eq!(result(&c, 0, 0), iv(-12, 23));
    // P = 40: ⌊2147483647/40⌋ = 53687091.
    assert_eq!(k_c(&c, 0), "53687091");
}

#[test]
fn rescale_pre_bias_negative_mult_floor() {
    // check [−10, 20], pre bias 3, mult −7, shift 3, floor.
    // rq.t = [−10 + 3, 20 + 3] = [−7, 23].
    // P = [min(−7·−7, 23·−7), max(...)] = [min(49, −161), 49] = [−161, 49]; floor: a = 0.
    // rq.q = [⌊−161/8⌋, ⌊49/8⌋] = [−21, 6] (−20.125 floors to −21); rq.y = rq.q.
    let rq = Rq::new(Round::Floor, PerChannel::One(3))
        .mult(PerChannel::One(-7))
        .bias(Placement::Pre, vec![3]);
    let c = certified(&unary(1, check(-10, 20), Op::Rescale(rq), 1));
    assert_keys(
        &c,
        0,
        &[
            ("rq.t", b(-7), b(23)),
            ("rq.p", b(-161), b(49)),
            ("rq.q", b(-21), b(6)),
            ("rq.y", b(-21), b(6)),
        ],
    );
    assert_eq!(result(&c, 0, 0), iv(-21, 6));
}

#[test]
fn rescale_post_bias_half_up_adds_to_q() {
    // check [−10, 20], mult 5, shift 2, half_up, post bias 100.
    // rq.t = [−10, 20]; P = [−50, 100]; a = 2 → rq.p = [−50, 102].
    // rq.q = [⌊(−50 + 2)/4⌋, ⌊(100 + 2)/4⌋] = [−12, 25]; rq.y = [−12 + 100, 25 + 100] = [88, 125].
    let rq = Rq::new(Round::HalfUp, PerChannel::One(2))
        .mult(PerChannel::One(5))
        .bias(Placement::Post, vec![100]);
    let c = certified(&unary(1, check(-10, 20), Op::Rescale(rq), 1));
    assert_keys(
        &c,
        0,
        &[
            ("rq.t", b(-10), b(20)),
            ("rq.p", b(-50), b(102)),
            ("rq.q", b(-12), b(25)),
            ("rq.y", b(88), b(125)),
        ],
    );
    assert_eq!(result(&c, 0, 0), iv(88, 125));
}

#[test]
fn rq_q_past_64_bits_fails_acc64_although_rq_y_fits() {
    // rescale on check [2^61, 2^62], mult 2, shift 0, floor, post bias −2^63.
    // rq.t = [2^61, 2^62]; rq.p = P = [2^62, 2^63] (product: i128 under acc64, fits);
    // rq.q = [2^62, 2^63]: bits 65 (2^63 > 2^63 − 1), class acc → does not fit i64;
    // rq.y = [2^62 − 2^63, 2^63 − 2^63] = [−2^62, 0], which fits.
    let rq = Rq::new(Round::Floor, PerChannel::One(0))
        .mult(PerChannel::One(2))
        .bias(Placement::Post, vec![i64::MIN]);
    let c = certified(&unary(1, check(1 << 61, 1 << 62), Op::Rescale(rq), 1));
    assert_eq!(intermediate(&c, 0, "rq.p"), iv(p2(62), p2(63)));
    assert_eq!(intermediate(&c, 0, "rq.q"), iv(p2(62), p2(63)));
    assert_eq!(intermediate(&c, 0, "rq.y"), iv(-p2(62), 0));
    assert_eq!(result(&c, 0, 0), iv(-p2(62), 0));
    assert_eq!(ff(&c, ACC64), node_fail("rq.q", 0, 65));
    // acc32 fails first at the input: [2^61, 2^62] has bits 64.
    assert_eq!(ff(&c, ACC32), Some(("input", 0, "range".to_string(), Some(64))));
    assert!(met(&c).is_empty());
    // §8.5: the verdict's failure object.
    let header = Header {
        lowering: "whg1".into(),
        ..Default::default()
    };
    let cert = certificate(std::slice::from_ref(&c), &header);
    let f = &cert["verdict"]["acc64_first_failure"];
    assert_eq!(f["key"], "rq.q");
    assert_eq!(f["bits"], "65");
    assert_eq!(f["where"], "node");
    assert_eq!(f["index"], "0");
    assert_eq!(cert["verdict"]["acc64"], false);
}

#[test]
fn chscale_hulls_over_the_rows_the_scalar_allows() {
    // C = 2, M = [[2, −1], [3, 4], [100, 100]], scalar range [0, 1] (row 2 excluded), shift 1,
    // half_up, input check [−5, 10]. rq.t = [−5, 10].
    // c = 0: m = 2: P = [−10, 20], p = [−10, 21], q = [⌊−9/2⌋, ⌊21/2⌋] = [−5, 10];
    //        m = 3: P = [−15, 30], p = [−15, 31], q = [⌊−14/2⌋, ⌊31/2⌋] = [−7, 15].
    // c = 1: m = −1: P = [−10, 5], p = [−10, 6], q = [−5, 3];
    //        m = 4: P = [−20, 40], p = [−20, 41], q = [⌊−19/2⌋, ⌊41/2⌋] = [−10, 20].
    // Hulls: rq.p = [−20, 41], rq.q = rq.y = [−10, 20]. (Row 2 would give q up to 500.)
    let mut bld = Builder::new();
    let x = bld.input(2, check(-5, 10));
    let k = bld.scalar(0, 1);
    let y = bld.op(
        Op::Chscale(Chscale::new(k, 3, Round::HalfUp, 1, vec![2, -1, 3, 4, 100, 100])),
        &[x],
        2,
    );
    bld.output(y);
    let c = certified(&bld.build());
    assert_keys(
        &c,
        0,
        &[
            ("rq.t", b(-5), b(10)),
            ("rq.p", b(-20), b(41)),
            ("rq.q", b(-10), b(20)),
            ("rq.y", b(-10), b(20)),
        ],
    );
    assert_eq!(result(&c, 0, 0), iv(-10, 20));
}

#[test]
fn mul_corner_hull_then_rq() {
    // a check [−3, 4], b check [−5, 2]: corners 15, −6, −20, 8 → mul.p = [−20, 15] = rq.t.
    // mult 3, shift 1, half_even: P = [−60, 45], a = 1 → rq.p = [−60, 46].
    // rq.q = [R_he(−60, 1), R_he(45, 1)] = [−30, 22] (45/2: q = 22, r = 1 = h, q even → 22).
    let mut bld = Builder::new();
    let a = bld.input(1, check(-3, 4));
    let bb = bld.input(1, check(-5, 2));
    let rq = Rq::new(Round::HalfEven, PerChannel::One(1)).mult(PerChannel::One(3));
    let y = bld.op(Op::Mul(rq), &[a, bb], 1);
    bld.output(y);
    let c = certified(&bld.build());
    assert_keys(
        &c,
        0,
        &[
            ("mul.p", b(-20), b(15)),
            ("rq.t", b(-20), b(15)),
            ("rq.p", b(-60), b(46)),
            ("rq.q", b(-30), b(22)),
            ("rq.y", b(-30), b(22)),
        ],
    );
    assert_eq!(result(&c, 0, 0), iv(-30, 22));
}

#[test]
fn mul_of_a_tensor_by_itself_is_still_the_corner_hull() {
    // mul(x, x) on [−3, 4]: corners 9, −12, −12, 16 → [−12, 16], not [0, 16].
    let mut bld = Builder::new();
    let x = bld.input(1, check(-3, 4));
    let y = bld.op(Op::Mul(floor0()), &[x, x], 1);
    bld.output(y);
    let c = certified(&bld.build());
    assert_eq!(intermediate(&c, 0, "mul.p"), iv(-12, 16));
    assert_eq!(result(&c, 0, 0), iv(-12, 16));
}

#[test]
fn gram_uses_the_declared_length() {
    // A check [−2, 3], B check [1, 5], both [2, H ≤ 2, W ≤ 3]: L = 2·3 = 6. groups 1.
    // gram.term: corners −2, −10, 3, 15 → [−10, 15].
    // gram.acc = [6·min(0, −10), 6·max(0, 15)] = [−60, 90] = rq.t.
    // shift 2, half_up, m = 1: rq.p = [−60, 90 + 2] = [−60, 92];
    // rq.q = [⌊−58/4⌋, ⌊92/4⌋] = [−15, 23]; rq.y = rq.q.
    let mut bld = Builder::new();
    let a = bld.input_sized(2, check(-2, 3), 2, 3);
    let bb = bld.input_sized(2, check(1, 5), 2, 3);
    let y = bld.op(Op::Gram(Contraction::new(1, Round::HalfUp, 2)), &[a, bb], 2);
    bld.output(y);
    let c = certified(&bld.build());
    assert_keys(
        &c,
        0,
        &[
            ("gram.term", b(-10), b(15)),
            ("gram.acc", b(-60), b(90)),
            ("rq.t", b(-60), b(90)),
            ("rq.p", b(-60), b(92)),
            ("rq.q", b(-15), b(23)),
            ("rq.y", b(-15), b(23)),
        ],
    );
    assert_eq!(result(&c, 0, 0), iv(-15, 23));
    // P = 15: ⌊2147483647/15⌋ = 143165576.
    assert_eq!(k_c(&c, 0), "143165576");
}

#[test]
fn apply_uses_d_terms() {
    // A check [−1, 2] ([3, 1, 3]), V check [0, 7] ([3, H, W]), groups 1: d = 3.
    // apply.term: corners 0, −7, 0, 14 → [−7, 14]. apply.acc = [3·−7, 3·14] = [−21, 42] = rq.t.
    // shift 1, floor: rq.p = [−21, 42] (a = 0); rq.q = [⌊−21/2⌋, ⌊42/2⌋] = [−11, 21].
    let mut bld = Builder::new();
    let a = bld.input(3, check(-1, 2));
    let v = bld.input(3, check(0, 7));
    let y = bld.op(Op::Apply(Contraction::new(1, Round::Floor, 1)), &[a, v], 3);
    bld.output(y);
    let c = certified(&bld.build());
    assert_keys(
        &c,
        0,
        &[
            ("apply.term", b(-7), b(14)),
            ("apply.acc", b(-21), b(42)),
            ("rq.t", b(-21), b(42)),
            ("rq.p", b(-21), b(42)),
            ("rq.q", b(-11), b(21)),
            ("rq.y", b(-11), b(21)),
        ],
    );
    assert_eq!(result(&c, 0, 0), iv(-11, 21));
    // P = 14: ⌊2147483647/14⌋ = 153391689.
    assert_eq!(k_c(&c, 0), "153391689");
}

// ---------------------------------------------------------------------------
// Elementwise

#[test]
fn add_and_chunk_add() {
    // add: [−3, 4] + [10, 20] = [7, 24]. chunk_add on a = [−3, 4]: [2·−3, 2·4] = [−6, 8].
    let mut bld = Builder::new();
    let a = bld.input(2, check(-3, 4));
    let bb = bld.input(2, check(10, 20));
    let s = bld.op(Op::Add, &[a, bb], 2);
    let h = bld.op(Op::ChunkAdd, &[a], 1);
    bld.output(s);
    bld.output(h);
    let c = certified(&bld.build());
    assert_eq!(result(&c, 0, 0), iv(7, 24));
    assert_eq!(result(&c, 1, 0), iv(-6, 8));
    // Table 8.5-A: neither records an intermediate.
    assert!(c.pass.nodes[0].intermediates.is_empty());
    assert!(c.pass.nodes[1].intermediates.is_empty());
}

#[test]
fn chunk_add_doubles_the_ends() {
    // [2l, 2h] on [−3, 5] = [−6, 10].
    let c = certified(&unary(4, check(-3, 5), Op::ChunkAdd, 2));
    assert_eq!(result(&c, 0, 0), iv(-6, 10));
}

#[test]
fn clamp_relu_abs_map_the_ends() {
    // clamp(−10, 200) on [−100, 50] → [−10, 50].
    let c = certified(&unary(1, check(-100, 50), Op::Clamp { lo: -10, hi: 200 }, 1));
    assert_eq!(result(&c, 0, 0), iv(-10, 50));
    // relu: [−5, 7] → [0, 7]; [−9, −2] → [0, 0]; [3, 8] → [3, 8].
    assert_eq!(result(&certified(&unary(1, check(-5, 7), Op::Relu, 1)), 0, 0), iv(0, 7));
    assert_eq!(
        result(&certified(&unary(1, check(-9, -2), Op::Relu, 1)), 0, 0),
        iv(0, 0)
    );
    assert_eq!(result(&certified(&unary(1, check(3, 8), Op::Relu, 1)), 0, 0), iv(3, 8));
    // abs: [3, 8] → [3, 8]; [−8, −3] → [3, 8]; [−9, 4] → [0, max(9, 4)] = [0, 9].
    assert_eq!(result(&certified(&unary(1, check(3, 8), Op::Abs, 1)), 0, 0), iv(3, 8));
    assert_eq!(result(&certified(&unary(1, check(-8, -3), Op::Abs, 1)), 0, 0), iv(3, 8));
    assert_eq!(result(&certified(&unary(1, check(-9, 4), Op::Abs, 1)), 0, 0), iv(0, 9));
}

#[test]
fn abs_of_i64_min_passes_64_bits() {
    // |·| of [−2^63, 0] = [0, 2^63]: the producer result has bits 65 and fails acc64 as out.0.
    let c = certified(&unary(1, check(i64::MIN, 0), Op::Abs, 1));
    assert_eq!(result(&c, 0, 0), iv(0, p2(63)));
    assert_eq!(ff(&c, ACC64), node_fail("out.0", 0, 65));
}

#[test]
fn leaky_with_non_negative_input() {
    // l = 0 ≥ 0: leaky.p = [0, 0], no negative part; result [max(0, 0), 9] = [0, 9].
    let c = certified(&unary(1, check(0, 9), Op::Leaky { a: 3, f: 1 }, 1));
    assert_eq!(intermediate(&c, 0, "leaky.p"), iv(0, 0));
    assert_eq!(result(&c, 0, 0), iv(0, 9));
}

#[test]
fn leaky_with_input_straddling_zero() {
    // [−7, 5], a = 3, f = 1: leaky.p = corner hull of [−7, min(5, −1)] = [−7, −1] and [3, 3]
    // = [−21, −3]; negative part [⌊−21/2⌋, ⌊−3/2⌋] = [−11, −2]; non-negative part [0, 5].
    // Hull: [−11, 5].
    let c = certified(&unary(1, check(-7, 5), Op::Leaky { a: 3, f: 1 }, 1));
    assert_eq!(intermediate(&c, 0, "leaky.p"), iv(-21, -3));
    assert_eq!(result(&c, 0, 0), iv(-11, 5));
}

#[test]
fn leaky_with_negative_input_and_negative_slope() {
    // [−7, −2], a = −5, f = 2: leaky.p = corner hull of [−7, min(−2, −1)] = [−7, −2] and [−5, −5]
    // = [10, 35]; negative part [⌊10/4⌋, ⌊35/4⌋] = [2, 8]; h < 0, so no non-negative part.
    let c = certified(&unary(1, check(-7, -2), Op::Leaky { a: -5, f: 2 }, 1));
    assert_eq!(intermediate(&c, 0, "leaky.p"), iv(10, 35));
    assert_eq!(result(&c, 0, 0), iv(2, 8));
}

// ---------------------------------------------------------------------------
// lut16

fn lut_table() -> Vec<i16> {
    // All zero (T[0] = 0) except T[u + 32768] for u = −32767 (−7000), −2 (−400), 3 (500), 10 (1000).
    let mut t = vec![0i16; 65536];
    t[32768 - 32767] = -7000;
    t[32768 - 2] = -400;
    t[32768 + 3] = 500;
    t[32768 + 10] = 1000;
    t
}

fn lut_op() -> Op {
    Op::Lut16(Lut16 {
        e_in: None,
        e_out: None,
        table: lut_table(),
    })
}

#[test]
fn lut16_takes_min_and_max_over_the_input_range_only() {
    // [−2, 5]: T at u = −2..5 is −400, 0, 0, 0, 0, 500, 0, 0 → [−400, 500] (1000 at u = 10 is out).
    let c = certified(&unary(1, check(-2, 5), lut_op(), 1));
    assert_eq!(result(&c, 0, 0), iv(-400, 500));
    // [−1, 2]: every entry is 0 → [0, 0].
    let c = certified(&unary(1, check(-1, 2), lut_op(), 1));
    assert_eq!(result(&c, 0, 0), iv(0, 0));
    // [−32767, 32767]: the whole table but T[0] → [−7000, 1000].
    let c = certified(&unary(1, check(-32767, 32767), lut_op(), 1));
    assert_eq!(result(&c, 0, 0), iv(-7000, 1000));
}

#[test]
fn lut16_input_range_past_32767_is_refused_at_load() {
    // §5.6: the input's certified range lies within [−32767, 32767], else model_mismatch.
    assert_eq!(
        certify(&unary(1, check(-32768, 0), lut_op(), 1)).err(),
        Some(Code::ModelMismatch)
    );
    assert_eq!(
        certify(&unary(1, check(0, 32768), lut_op(), 1)).err(),
        Some(Code::ModelMismatch)
    );
    // The certified range, not the declared one of a producer: relu of [−40000, 100] is [0, 100].
    let mut bld = Builder::new();
    let x = bld.input(1, check(-40000, 100));
    let r = bld.op(Op::Relu, &[x], 1);
    let y = bld.op(lut_op(), &[r], 1);
    bld.output(y);
    let c = certified(&bld.build());
    assert_eq!(result(&c, 1, 0), iv(0, 1000));
}

// ---------------------------------------------------------------------------
// igdn

#[test]
fn igdn_two_channels_by_hand() {
    // C = 2, input [−3, 2], γ = [[4, −1], [0, 2]], β = [10, −5], gf = 1, frac = 2.
    // igdn.x2: l ≤ 0 ≤ h → [0, max(9, 4)] = [0, 9].
    // (0,0): γ 4 → gx2 [0, 36], term [0, 18]; (0,1): γ −1 → gx2 [−9, 0], term [⌊−9/2⌋, 0] = [−5, 0];
    // (1,0): γ 0 → [0, 0], term [0, 0];        (1,1): γ 2 → gx2 [0, 18], term [0, 9].
    // igdn.gx2 = [−9, 36]; igdn.term = [−5, 18].
    // igdn.N: i = 0: A({[0,18], [−5,0]}, 10) = [0 + 0 − 5, 10 + 18 + 0] = [−5, 28];
    //         i = 1: A({[0,0], [0,9]}, −5) = [−5 + 0 + 0, 0 + 0 + 9] = [−5, 9]. Hull [−5, 28].
    // Final norm: i = 0: [10 + 0 − 5, 10 + 18 + 0] = [5, 28]; i = 1: [−5 + 0 + 0, −5 + 0 + 9] = [−5, 4].
    // igdn.r: i = 0: [isqrt(5), isqrt(28)] = [2, 5]; i = 1: [isqrt(0), isqrt(4)] = [0, 2]. Hull [0, 5].
    // igdn.xr: i = 0: [−3, 2]×[2, 5] → −6, −15, 4, 10 → [−15, 10]; i = 1: [−3, 2]×[0, 2] → [−6, 4].
    //   Hull [−15, 10].
    // Result: i = 0: [⌊−15/4⌋, ⌊10/4⌋] = [−4, 2]; i = 1: [⌊−6/4⌋, ⌊4/4⌋] = [−2, 1]. Hull [−4, 2].
    let op = Op::Igdn(Igdn::new(1, 2, vec![4, -1, 0, 2], vec![10, -5]));
    let c = certified(&unary(2, check(-3, 2), op, 2));
    assert_keys(
        &c,
        0,
        &[
            ("igdn.x2", b(0), b(9)),
            ("igdn.gx2", b(-9), b(36)),
            ("igdn.term", b(-5), b(18)),
            ("igdn.N", b(-5), b(28)),
            ("igdn.r", b(0), b(5)),
            ("igdn.xr", b(-15), b(10)),
        ],
    );
    assert_eq!(result(&c, 0, 0), iv(-4, 2));
    // K_c over igdn.term: P = 18, ⌊2147483647/18⌋ = 119304647.
    assert_eq!(k_c(&c, 0), "119304647");
}

#[test]
fn igdn_r_comes_from_the_final_norm_not_from_igdn_n() {
    // C = 1, input [1, 4], γ = 3, β = 7, gf = 0, frac = 1.
    // x2 = [min(1, 16), max(1, 16)] = [1, 16] (l > 0); gx2 = [3, 48]; term = [3, 48].
    // igdn.N = A({[3, 48]}, 7) = [0 + 0, 7 + 48] = [0, 55]; final norm [7 + 3, 7 + 48] = [10, 55].
    // igdn.r = [isqrt(10), isqrt(55)] = [3, 7] (from igdn.N it would be [0, 7]).
    // xr = [1, 4]×[3, 7] → [3, 28]; result [⌊3/2⌋, ⌊28/2⌋] = [1, 14].
    let op = Op::Igdn(Igdn::new(0, 1, vec![3], vec![7]));
    let c = certified(&unary(1, check(1, 4), op, 1));
    assert_keys(
        &c,
        0,
        &[
            ("igdn.x2", b(1), b(16)),
            ("igdn.gx2", b(3), b(48)),
            ("igdn.term", b(3), b(48)),
            ("igdn.N", b(0), b(55)),
            ("igdn.r", b(3), b(7)),
            ("igdn.xr", b(3), b(28)),
        ],
    );
    assert_eq!(result(&c, 0, 0), iv(1, 14));
}

// ---------------------------------------------------------------------------
// Saturation (§8.1)

/// x = any() = [−2^63, 2^63 − 1];
/// node 0: y0 = mul(x, x), floor, shift 0:
///   corners (−2^63)² = 2^126, −2^63·(2^63 − 1) = −2^126 + 2^63, (2^63 − 1)² < 2^126
///   → [−2^126 + 2^63, 2^126];
/// node 1: y1 = mul(y0, y0): corners (2^126 − 2^63)² < 2^252, −(2^126 − 2^63)·2^126 = −2^252 + 2^189,
///   2^252 → [−2^252 + 2^189, 2^252];
/// nodes 2–4: add(y, y) three times → [−2^253 + 2^190, 2^253], [−2^254 + 2^191, 2^254],
///   [−2^255 + 2^192, 2^255]: node 4 reaches exactly 2^255;
/// node 5: conv 1×1 weight −1 on y4: term [−2^255, 2^255 − 2^192]; acc = A = [−2^255, 2^255 − 2^192];
///   rq floor shift 0 keeps it: reaches exactly −2^255;
/// node 6: add(y4, y4) → [−2^256 + 2^193, 2^256], both ends saturated to ±2^255;
/// node 7: igdn on y4: igdn.x2 = [0, max(l², h²)] = [0, 2^510] → saturated to [0, 2^255];
/// node 8: igdn on y5: igdn.x2 = [0, (2^255)²] = [0, 2^510] → saturated.
fn saturation_chain() -> Graph {
    let mut bld = Builder::new();
    let x = bld.input(1, any());
    let y0 = bld.op(Op::Mul(floor0()), &[x, x], 1);
    let y1 = bld.op(Op::Mul(floor0()), &[y0, y0], 1);
    let y2 = bld.op(Op::Add, &[y1, y1], 1);
    let y3 = bld.op(Op::Add, &[y2, y2], 1);
    let y4 = bld.op(Op::Add, &[y3, y3], 1);
    let y5 = bld.op(
        Op::Conv(Conv::new(1, geom((1, 1), (1, 1), (0, 0)), 1, vec![-1], floor0())),
        &[y4],
        1,
    );
    let y6 = bld.op(Op::Add, &[y4, y4], 1);
    let y7 = bld.op(Op::Igdn(Igdn::new(0, 0, vec![1], vec![0])), &[y4], 1);
    let y8 = bld.op(Op::Igdn(Igdn::new(0, 0, vec![1], vec![0])), &[y5], 1);
    for t in [y6, y7, y8] {
        bld.output(t);
    }
    bld.build()
}

#[test]
fn saturation_chain_intervals_by_hand() {
    let c = certified(&saturation_chain());
    assert_eq!(result(&c, 0, 0), iv(-p2(126) + p2(63), p2(126)));
    assert_eq!(result(&c, 1, 0), iv(-p2(252) + p2(189), p2(252)));
    assert_eq!(result(&c, 2, 0), iv(-p2(253) + p2(190), p2(253)));
    assert_eq!(result(&c, 3, 0), iv(-p2(254) + p2(191), p2(254)));
    assert_eq!(result(&c, 4, 0), iv(-p2(255) + p2(192), p2(255)));
    assert_eq!(intermediate(&c, 5, "conv.term"), iv(-p2(255), p2(255) - p2(192)));
    assert_eq!(intermediate(&c, 5, "conv.acc"), iv(-p2(255), p2(255) - p2(192)));
    assert_eq!(result(&c, 5, 0), iv(-p2(255), p2(255) - p2(192)));
    for i in 0..=3 {
        assert!(!saturated(&c, i), "node {i}");
    }
    // acc64's first failure is node 0: mul.p, rq.t, rq.q, rq.y and out.0 all have bits 128
    // (2^126 needs 128), rq.p (product, i128) fits; the tie goes to "mul.p" in byte order.
    assert_eq!(ff(&c, ACC64), node_fail("mul.p", 0, 128));
}

#[test]
fn a_result_of_exactly_plus_or_minus_2_255_is_not_saturated() {
    // The project's reading: sat(±2^255) = ±2^255 changes nothing, so the node is not saturated.
    let c = certified(&saturation_chain());
    assert!(!saturated(&c, 4), "node 4 reaches exactly 2^255");
    assert!(!saturated(&c, 5), "node 5 reaches exactly −2^255");
    assert_eq!(node_json(&c, 4)["saturated"], false);
    assert_eq!(node_json(&c, 5)["saturated"], false);
    // It still fails acc64 by its width: [−2^255 + 2^192, 2^255] has bits 257.
    let f = node_failure(&c.graph, &c.pass, 4, ACC64).expect("node 4 fails acc64");
    assert_eq!((f.key.as_str(), f.bits), ("out.0", Some(257)));
}

#[test]
fn a_sum_past_2_255_is_saturated() {
    let c = certified(&saturation_chain());
    assert!(saturated(&c, 6));
    assert_eq!(result(&c, 6, 0), iv(-p2(255), p2(255)));
    assert_eq!(node_json(&c, 6)["saturated"], true);
    assert_eq!(node_json(&c, 6)["fits"], Value::Array(vec![]));
}

#[test]
fn igdn_x2_on_an_input_reaching_2_255_is_saturated() {
    // igdn.x2 = [0, 2^510] → sat → [0, 2^255], for an input reaching +2^255 (node 7) or −2^255 (node 8).
    let c = certified(&saturation_chain());
    for i in [7, 8] {
        assert!(saturated(&c, i), "node {i}");
        assert_eq!(intermediate(&c, i, "igdn.x2"), iv(0, p2(255)));
        // §8.5: a saturated node's key is "saturated", with no bits, under both profiles.
        for p in [ACC32, ACC64] {
            let f = node_failure(&c.graph, &c.pass, i, p).expect("a saturated node fits no profile");
            assert_eq!((f.key.as_str(), f.bits), ("saturated", None));
        }
    }
}

// ---------------------------------------------------------------------------
// layernorm_c (lemma L1), l2norm (lemma L2)

#[test]
fn layernorm_c_bounds_where_the_min_picks_the_range_term() {
    // C = 4, input [0, 1], ε = 1, γ = [1, −2, 3, 0], β = [0, 10, −10, 4].
    // ln.S = [4·0, 4·1] = [0, 4]; ln.m = [4·0 − 2, 4·1 + 2] = [−2, 6]; ln.d = [−1, 1];
    // ln.T = [0, 4·1²] = [0, 4]; ln.v = [1, 1 + 1] = [1, 2]; rsq.num = [2^32, 2^32];
    // r0 = isqrt(1) = 1; ln.k = [0, ⌊2^32/1⌋] = [0, 2^32].
    // D = min(1·2^32, ⌈isqrt_ceil(4)·2^32·2/1⌉ = 2·2^32·2 = 2^34) = 2^32: the range term.
    // N = min(⌊2^32/2^16⌋ + 1 = 65537, N_max = ⌊2·2^16·2/1⌋ + 1 = 262145) = 65537.
    // ln.ng per channel: γ 1 → [−65537, 65537]; −2 → [−131074, 131074]; 3 → [−196611, 196611]; 0 → [0, 0].
    //   Hull [−196611, 196611].
    // Result: c0 [⌊−65537/65536⌋, ⌊65537/65536⌋] + 0 = [−2, 1]; c1 [−3, 2] + 10 = [7, 12];
    //   c2 [⌊−196611/65536⌋, ⌊196611/65536⌋] − 10 = [−4, 3] − 10 = [−14, −7]; c3 [0, 0] + 4 = [4, 4].
    //   Hull [−14, 12].
    let op = Op::LayernormC(LayernormC::new(1, vec![1, -2, 3, 0], vec![0, 10, -10, 4]));
    let c = certified(&unary(4, check(0, 1), op, 4));
    assert_keys(
        &c,
        0,
        &[
            ("ln.S", b(0), b(4)),
            ("ln.m", b(-2), b(6)),
            ("ln.d", b(-1), b(1)),
            ("ln.T", b(0), b(4)),
            ("ln.v", b(1), b(2)),
            ("rsq.num", p2(32), p2(32)),
            ("ln.k", b(0), p2(32)),
            ("ln.dk", -p2(32), p2(32)),
            ("ln.n", b(-65537), b(65537)),
            ("ln.ng", b(-196611), b(196611)),
        ],
    );
    assert_eq!(result(&c, 0, 0), iv(-14, 12));
}

#[test]
fn layernorm_c_bounds_where_the_min_picks_lemma_l1() {
    // C = 3, input [−1000, 1000], ε = 100, γ = [65536, −3, 0], β = [5, 0, −7].
    // ln.S = [3·−1000, 3·1000] = [−3000, 3000]; ln.m = [−3000 − 1, 3000 + 1] = [−3001, 3001];
    // ln.d = [−2000, 2000]; ln.T = [0, 3·2000²] = [0, 12000000]; ln.v = [100, 4000000 + 100];
    // r0 = isqrt(100) = 10; ⌊2^32/10⌋ = 429496729; ln.k = [0, 429496729].
    // D = min(2000·429496729 = 858993458000, ⌈2·2^32·11/10⌉ = ⌈94489280512/10⌉ = 9448928052)
    //   = 9448928052 (isqrt_ceil(3) = 2): lemma L1's term.
    // N = min(⌊858993458000/65536⌋ + 1 = 13107200, N_max = ⌊2·65536·11/10⌋ + 1 = 144179 + 1 = 144180)
    //   = 144180.
    // ln.ng: c0 [−144180·65536, 144180·65536] = [−9448980480, 9448980480]; c1 [−432540, 432540];
    //   c2 [0, 0]. Hull [−9448980480, 9448980480].
    // Result: c0 [−144180 + 5, 144180 + 5] = [−144175, 144185];
    //   c1 [⌊−432540/65536⌋, ⌊432540/65536⌋] = [−7, 6]; c2 [−7, −7]. Hull [−144175, 144185].
    let op = Op::LayernormC(LayernormC::new(100, vec![65536, -3, 0], vec![5, 0, -7]));
    let c = certified(&unary(3, check(-1000, 1000), op, 3));
    assert_keys(
        &c,
        0,
        &[
            ("ln.S", b(-3000), b(3000)),
            ("ln.m", b(-3001), b(3001)),
            ("ln.d", b(-2000), b(2000)),
            ("ln.T", b(0), b(12000000)),
            ("ln.v", b(100), b(4000100)),
            ("rsq.num", p2(32), p2(32)),
            ("ln.k", b(0), b(429496729)),
            ("ln.dk", b(-9448928052), b(9448928052)),
            ("ln.n", b(-144180), b(144180)),
            ("ln.ng", b(-9448980480), b(9448980480)),
        ],
    );
    assert_eq!(result(&c, 0, 0), iv(-144175, 144185));
}

#[test]
fn l2norm_bounds_by_hand() {
    // Input [2, H ≤ 3, W ≤ 4], check [−5, 3]: L = 12, X = 5, ε = 7.
    // l2.T = [0, 12·25 + 7] = [0, 307]; rsq.num = [2^32, 2^32];
    // l2.k = [0, ⌊2^32/isqrt(7)⌋] = [0, 2^32/2] = [0, 2^31]; l2.vk = [−2^32, 2^32];
    // result [−2^16, 2^16] (lemma L2).
    let c = certified(&unary_sized(2, check(-5, 3), (3, 4), Op::L2norm { eps: 7 }, 2));
    assert_keys(
        &c,
        0,
        &[
            ("l2.T", b(0), b(307)),
            ("rsq.num", p2(32), p2(32)),
            ("l2.k", b(0), p2(31)),
            ("l2.vk", -p2(32), p2(32)),
        ],
    );
    assert_eq!(result(&c, 0, 0), iv(-65536, 65536));
}

// ---------------------------------------------------------------------------
// exp_neg_q16, softmax, sigmoid, elu, and §7.3's fixed intervals

/// §7.3 / §8.3: exp.t2 = [43245², 88670²] = [1870130025, 7862368900];
/// exp.c = [0, 23495·⌊7862368900/65536⌋] = [0, 23495·119970] = [0, 2818695150].
fn assert_exp_fixed(c: &Certified, node: usize) {
    assert_eq!(intermediate(c, node, "exp.t2"), iv(1870130025i64, 7862368900i64));
    assert_eq!(intermediate(c, node, "exp.c"), iv(0, 2818695150i64));
}

#[test]
fn softmax_bounds_by_hand() {
    // Input [1, H ≤ 2, W ≤ 5], check [−100, 200]: W_max = 5.
    // sm.diff = [−100 − 200, 0] = [−300, 0]; u = [0, 300]; exp.negx = [0, 300];
    // exp.nl = [45426·⌊0/45426⌋, 45426·⌊300/45426⌋] = [0, 0];
    // sm.sum = [0, 5·65553] = [0, 327765];
    // sm.num = [0, 65553·65536 + ⌊327765/2⌋] = [0, 4296081408 + 163882] = [0, 4296245290];
    // result [0, 2^16].
    let c = certified(&unary_sized(1, check(-100, 200), (2, 5), Op::Softmax, 1));
    assert_keys(
        &c,
        0,
        &[
            ("sm.diff", b(-300), b(0)),
            ("exp.negx", b(0), b(300)),
            ("exp.nl", b(0), b(0)),
            ("sm.sum", b(0), b(327765)),
            ("sm.num", b(0), b(4296245290)),
        ],
    );
    assert_exp_fixed(&c, 0);
    assert_eq!(result(&c, 0, 0), iv(0, 65536));
}

#[test]
fn softmax_exp_nl_counts_whole_steps() {
    // check [0, 100000]: u = [0, 100000]; exp.nl = [0, 45426·⌊100000/45426⌋] = [0, 45426·2] = [0, 90852].
    let c = certified(&unary_sized(1, check(0, 100000), (1, 3), Op::Softmax, 1));
    assert_eq!(intermediate(&c, 0, "exp.negx"), iv(0, 100000));
    assert_eq!(intermediate(&c, 0, "exp.nl"), iv(0, 90852));
    // sm.sum = [0, 3·65553] = [0, 196659]; sm.num = [0, 4296081408 + 98329] = [0, 4296179737].
    assert_eq!(intermediate(&c, 0, "sm.sum"), iv(0, 196659));
    assert_eq!(intermediate(&c, 0, "sm.num"), iv(0, 4296179737i64));
}

#[test]
fn sigmoid_bounds_by_hand() {
    // [−7, 3]: u = |·| image = [0, max(7, 3)] = [0, 7]; exp.nl = [0, 0];
    // sig.num = [0, 65553·2^16] = [0, 4296081408]; result [0, 2^16].
    let c = certified(&unary(1, check(-7, 3), Op::Sigmoid, 1));
    assert_eq!(intermediate(&c, 0, "exp.negx"), iv(0, 7));
    assert_eq!(intermediate(&c, 0, "exp.nl"), iv(0, 0));
    assert_eq!(intermediate(&c, 0, "sig.num"), iv(0, 4296081408i64));
    assert_exp_fixed(&c, 0);
    assert_eq!(result(&c, 0, 0), iv(0, 65536));
    // [−100000, −50000]: u = [50000, 100000]; exp.nl = [45426·1, 45426·2] = [45426, 90852].
    let c = certified(&unary(1, check(-100000, -50000), Op::Sigmoid, 1));
    assert_eq!(intermediate(&c, 0, "exp.negx"), iv(50000, 100000));
    assert_eq!(intermediate(&c, 0, "exp.nl"), iv(45426, 90852));
    assert_exp_fixed(&c, 0);
}

#[test]
fn elu_bounds_by_hand() {
    // α = 1000 on [−50, 30]: u = [max(0, −30), max(0, 50)] = [0, 50].
    // elu.p = corner hull of [1000, 1000] and [−65536, 17] = [−65536000, 17000].
    // Result: hull of [max(−50, 1), 30] = [1, 30] and [⌊−65536000/65536⌋, ⌊17000/65536⌋] = [−1000, 0]
    //   → [−1000, 30].
    let c = certified(&unary(1, check(-50, 30), Op::Elu { alpha: 1000 }, 1));
    assert_eq!(intermediate(&c, 0, "exp.negx"), iv(0, 50));
    assert_eq!(intermediate(&c, 0, "exp.nl"), iv(0, 0));
    assert_eq!(intermediate(&c, 0, "elu.p"), iv(-65536000, 17000));
    assert_exp_fixed(&c, 0);
    assert_eq!(result(&c, 0, 0), iv(-1000, 30));
}

#[test]
fn elu_positive_input_has_only_the_identity_part() {
    // [5, 30], α = 1000: u = [max(0, −30), max(0, −5)] = [0, 0]; l > 0, so only [max(5, 1), 30] = [5, 30].
    // elu.p is still the fixed corner hull [−65536000, 17000].
    let c = certified(&unary(1, check(5, 30), Op::Elu { alpha: 1000 }, 1));
    assert_eq!(intermediate(&c, 0, "exp.negx"), iv(0, 0));
    assert_eq!(intermediate(&c, 0, "elu.p"), iv(-65536000, 17000));
    assert_eq!(result(&c, 0, 0), iv(5, 30));
}

#[test]
fn elu_negative_input_negative_alpha() {
    // [−10, −2], α = −3: u = [2, 10]; elu.p = corners −3·−65536 = 196608, −3·17 = −51 → [−51, 196608];
    // h ≤ 0: only the negative part [⌊−51/65536⌋, ⌊196608/65536⌋] = [−1, 3].
    let c = certified(&unary(1, check(-10, -2), Op::Elu { alpha: -3 }, 1));
    assert_eq!(intermediate(&c, 0, "exp.negx"), iv(2, 10));
    assert_eq!(intermediate(&c, 0, "elu.p"), iv(-51, 196608));
    assert_eq!(result(&c, 0, 0), iv(-1, 3));
}

#[test]
fn section_7_3_fixed_intervals_on_tiny_inputs() {
    // On check [0, 1], every fixed interval is as §7.3 states:
    // exp.t2 = [1870130025, 7862368900], exp.c = [0, 2818695150], sig.num = [0, 4296081408],
    // rsq.num = [2^32, 2^32] = [4294967296, 4294967296], l2.vk = [−4294967296, 4294967296].
    let sm = certified(&unary_sized(1, check(0, 1), (1, 1), Op::Softmax, 1));
    assert_exp_fixed(&sm, 0);
    let sg = certified(&unary(1, check(0, 1), Op::Sigmoid, 1));
    assert_exp_fixed(&sg, 0);
    assert_eq!(intermediate(&sg, 0, "sig.num"), iv(0, 4296081408i64));
    let el = certified(&unary(1, check(0, 1), Op::Elu { alpha: 1 }, 1));
    assert_exp_fixed(&el, 0);
    let ln = certified(&unary(
        1,
        check(0, 1),
        Op::LayernormC(LayernormC::new(1, vec![1], vec![0])),
        1,
    ));
    assert_eq!(intermediate(&ln, 0, "rsq.num"), iv(4294967296i64, 4294967296i64));
    let l2 = certified(&unary_sized(1, check(0, 1), (1, 1), Op::L2norm { eps: 1 }, 1));
    assert_eq!(intermediate(&l2, 0, "rsq.num"), iv(4294967296i64, 4294967296i64));
    assert_eq!(intermediate(&l2, 0, "l2.vk"), iv(-4294967296i64, 4294967296i64));
}

#[test]
fn softmax_never_meets_acc32() {
    // [0, 1], W_max = 1: acc-class values past i32: exp.t2 (7862368900, bits 34), exp.c
    // (2818695150 > 2^31 − 1, bits 33), sm.num (4296081408 + ⌊65553/2⌋ = 4296114184, bits 34).
    // Tie at 34 → "exp.t2" < "sm.num".
    let c = certified(&unary_sized(1, check(0, 1), (1, 1), Op::Softmax, 1));
    assert_eq!(met(&c), vec![ACC64]);
    assert_eq!(intermediate(&c, 0, "sm.num"), iv(0, 4296114184i64));
    assert_eq!(ff(&c, ACC32), node_fail("exp.t2", 0, 34));
}

#[test]
fn sigmoid_never_meets_acc32() {
    // exp.t2 bits 34, exp.c bits 33, sig.num 4296081408 bits 34: tie → "exp.t2".
    let c = certified(&unary(1, check(0, 1), Op::Sigmoid, 1));
    assert_eq!(met(&c), vec![ACC64]);
    assert_eq!(ff(&c, ACC32), node_fail("exp.t2", 0, 34));
}

#[test]
fn elu_never_meets_acc32() {
    // α = 1: elu.p = [−65536, 17] fits; exp.t2 bits 34 is the most.
    let c = certified(&unary(1, check(0, 1), Op::Elu { alpha: 1 }, 1));
    assert_eq!(met(&c), vec![ACC64]);
    assert_eq!(ff(&c, ACC32), node_fail("exp.t2", 0, 34));
}

#[test]
fn layernorm_c_never_meets_acc32() {
    // C = 1, [0, 1], ε = 1, γ = [1]: rsq.num [2^32, 2^32], ln.k [0, 2^32] and ln.dk [−2^32, 2^32]
    // (D = min(2^32, ⌈1·2^32·2/1⌉) = 2^32) all have bits 34; ln.n = [−65537, 65537] fits.
    // Tie → "ln.dk" < "ln.k" < "rsq.num".
    let c = certified(&unary(
        1,
        check(0, 1),
        Op::LayernormC(LayernormC::new(1, vec![1], vec![0])),
        1,
    ));
    assert_eq!(met(&c), vec![ACC64]);
    assert_eq!(ff(&c, ACC32), node_fail("ln.dk", 0, 34));
}

#[test]
fn l2norm_never_meets_acc32() {
    // ε = 1, L = 1: l2.k = [0, 2^32], l2.vk = [−2^32, 2^32], rsq.num = [2^32, 2^32], all bits 34;
    // tie → "l2.k". With ε = 4, l2.k = [0, ⌊2^32/2⌋] = [0, 2^31] has bits 33 and "l2.vk" wins.
    let c = certified(&unary_sized(1, check(0, 1), (1, 1), Op::L2norm { eps: 1 }, 1));
    assert_eq!(met(&c), vec![ACC64]);
    assert_eq!(ff(&c, ACC32), node_fail("l2.k", 0, 34));
    let c = certified(&unary_sized(1, check(0, 1), (1, 1), Op::L2norm { eps: 4 }, 1));
    assert_eq!(intermediate(&c, 0, "l2.k"), iv(0, p2(31)));
    assert_eq!(met(&c), vec![ACC64]);
    assert_eq!(ff(&c, ACC32), node_fail("l2.vk", 0, 34));
}

#[test]
fn sigmoid_on_a_range_reaching_minus_2_63_fails_acc64() {
    // [−2^63, 0]: u = |·| image = [0, 2^63]; exp.negx (acc) has bits 65 → fails i64.
    // exp.nl = [0, 45426·⌊2^63/45426⌋] < 2^63 fits; nothing else passes 64 bits.
    let c = certified(&unary(1, check(i64::MIN, 0), Op::Sigmoid, 1));
    assert_eq!(intermediate(&c, 0, "exp.negx"), iv(0, p2(63)));
    assert_eq!(ff(&c, ACC64), node_fail("exp.negx", 0, 65));
    assert!(met(&c).is_empty());
    // The whole i64 range: u = [0, max(2^63, 2^63 − 1)] = [0, 2^63], the same failure.
    let c = certified(&unary(1, any(), Op::Sigmoid, 1));
    assert_eq!(ff(&c, ACC64), node_fail("exp.negx", 0, 65));
}

#[test]
fn sigmoid_on_a_range_stopping_at_minus_2_63_plus_1_meets_acc64() {
    // [−(2^63 − 1), 0]: u = [0, 2^63 − 1] fits i64.
    let c = certified(&unary(1, check(-i64::MAX, 0), Op::Sigmoid, 1));
    assert_eq!(intermediate(&c, 0, "exp.negx"), iv(0, i64::MAX));
    assert_eq!(met(&c), vec![ACC64]);
}

#[test]
fn elu_on_a_range_reaching_minus_2_63_fails_acc64() {
    // [−2^63, 5]: u = [max(0, −5), max(0, 2^63)] = [0, 2^63]: exp.negx bits 65.
    let c = certified(&unary(1, check(i64::MIN, 5), Op::Elu { alpha: 7 }, 1));
    assert_eq!(intermediate(&c, 0, "exp.negx"), iv(0, p2(63)));
    assert_eq!(ff(&c, ACC64), node_fail("exp.negx", 0, 65));
    // [−(2^63 − 1), 5]: u = [0, 2^63 − 1] fits; the rest is fixed or small → acc64 met.
    let c = certified(&unary(1, check(-i64::MAX, 5), Op::Elu { alpha: 7 }, 1));
    assert_eq!(intermediate(&c, 0, "exp.negx"), iv(0, i64::MAX));
    assert_eq!(met(&c), vec![ACC64]);
}

// ---------------------------------------------------------------------------
// Movement

#[test]
fn movement_ops_pass_intervals_and_hull_concat_and_subpos_merge() {
    // x: 2 channels check [−3, 5]; y: 2 channels check [10, 20]; scalar s in [−2, 9].
    let mut bld = Builder::new();
    let x = bld.input(2, check(-3, 5));
    let y = bld.input(2, check(10, 20));
    let s = bld.scalar(-2, 9);
    let cat = bld.op(Op::Concat, &[x, y], 4); // node 0: hull [−3, 20]
    let sp = bld.op(Op::Split { start: 1, count: 1 }, &[y], 1); // node 1: [10, 20]
    let ct = bld.op(Op::CropTo, &[y, x], 2); // node 2: first input's, [10, 20]
    let fc = bld.op(Op::Fill(FillValue::Const(-9)), &[x], 2); // node 3: [−9, −9]
    let fs = bld.op(Op::Fill(FillValue::Scalar(s)), &[x], 1); // node 4: the scalar's [−2, 9]
    let parts = bld.op_n(Op::SubposSplit { order: [0, 1, 2, 3] }, &[x], &[2, 2, 2, 2]); // node 5
    // node 6: hull of [−3, 5], [10, 20], [−9, −9], [−3, 5] = [−9, 20].
    let mg = bld.op(Op::SubposMerge { order: [0, 1, 2, 3] }, &[x, y, fc, parts[3]], 2);
    let ps = bld.op(Op::PixelShuffle { r: 1 }, &[y], 2); // node 7: [10, 20]
    let pr = bld.op(Op::PadRep { m: 2 }, &[x], 2); // node 8: [−3, 5]
    let pu = bld.op(Op::PixelUnshuffle { r: 2 }, &[y], 8); // node 9: [10, 20]
    let one = Operand::Const(1);
    let cr = bld.op(
        Op::Crop(Crop {
            y0: Operand::Const(0),
            x0: Operand::Const(0),
            h: one,
            w: one,
        }),
        &[x],
        2,
    ); // node 10
    for t in [cat, sp, ct, fs, mg, ps, pr, pu, cr] {
        bld.output(t);
    }
    let c = certified(&bld.build());
    assert_eq!(result(&c, 0, 0), iv(-3, 20));
    assert_eq!(result(&c, 1, 0), iv(10, 20));
    assert_eq!(result(&c, 2, 0), iv(10, 20));
    assert_eq!(result(&c, 3, 0), iv(-9, -9));
    assert_eq!(result(&c, 4, 0), iv(-2, 9));
    for k in 0..4 {
        assert_eq!(result(&c, 5, k), iv(-3, 5), "subpos_split output {k}");
    }
    assert_eq!(result(&c, 6, 0), iv(-9, 20));
    assert_eq!(result(&c, 7, 0), iv(10, 20));
    assert_eq!(result(&c, 8, 0), iv(-3, 5));
    assert_eq!(result(&c, 9, 0), iv(10, 20));
    assert_eq!(result(&c, 10, 0), iv(-3, 5));
}

// ---------------------------------------------------------------------------
// Policies (§8.1 producer results and tensor intervals)

/// add of two inputs [−10, 10]: producer result [−20, 20]; the output takes policy `p`.
fn add_with_policy(p: Policy) -> Graph {
    let mut bld = Builder::new();
    let a = bld.input(1, check(-10, 10));
    let bb = bld.input(1, check(-10, 10));
    let s = bld.op(Op::Add, &[a, bb], 1);
    bld.policy(s, p);
    bld.output(s);
    bld.build()
}

#[test]
fn input_intervals_are_their_declared_ranges() {
    let mut bld = Builder::new();
    let a = bld.input(1, clamp(-5, 5));
    let bb = bld.input(1, check(-7, 3));
    let s = bld.op(Op::Add, &[a, bb], 1);
    bld.output(s);
    let c = certified(&bld.build());
    assert_eq!(tensor_interval(&c, a), iv(-5, 5));
    assert_eq!(tensor_interval(&c, bb), iv(-7, 3));
    // [−5 − 7, 5 + 3] = [−12, 8].
    assert_eq!(result(&c, 0, 0), iv(-12, 8));
}

#[test]
fn clamp_policy_maps_the_producer_results_ends() {
    // clamp [−5, 100]: [clamp(−20, −5, 100), clamp(20, −5, 100)] = [−5, 20]; the result stays [−20, 20].
    let c = certified(&add_with_policy(clamp(-5, 100)));
    assert_eq!(result(&c, 0, 0), iv(-20, 20));
    assert_eq!(tensor_interval(&c, 2), iv(-5, 20));
    // clamp [50, 60] lies above the result: both ends map to 50 → [50, 50] (not refused).
    let c = certified(&add_with_policy(clamp(50, 60)));
    assert_eq!(tensor_interval(&c, 2), iv(50, 50));
    // clamp [−3, 3] inside: [−3, 3].
    let c = certified(&add_with_policy(clamp(-3, 3)));
    assert_eq!(tensor_interval(&c, 2), iv(-3, 3));
}

#[test]
fn check_policy_intersects() {
    // check [−5, 100]: [max(−20, −5), min(20, 100)] = [−5, 20]; check [0, 7]: [0, 7].
    let c = certified(&add_with_policy(check(-5, 100)));
    assert_eq!(result(&c, 0, 0), iv(-20, 20));
    assert_eq!(tensor_interval(&c, 2), iv(-5, 20));
    let c = certified(&add_with_policy(check(0, 7)));
    assert_eq!(tensor_interval(&c, 2), iv(0, 7));
    // Touching at one point: check [20, 30] → [20, 20], not empty.
    let c = certified(&add_with_policy(check(20, 30)));
    assert_eq!(tensor_interval(&c, 2), iv(20, 20));
}

#[test]
fn an_empty_check_intersection_is_refused_at_load() {
    // check [50, 60] against [−20, 20]: [50, 20] is empty → model_mismatch.
    assert_eq!(
        certify(&add_with_policy(check(50, 60))).err(),
        Some(Code::ModelMismatch)
    );
    assert_eq!(
        certify(&add_with_policy(check(-30, -21))).err(),
        Some(Code::ModelMismatch)
    );
}

#[test]
fn a_downstream_node_reads_the_tensor_interval_after_the_policy() {
    // add(a, a) = [−20, 20] → clamp [0, 3] → tensor [0, 3]; then add(s, s) = [0, 6].
    let mut bld = Builder::new();
    let a = bld.input(1, check(-10, 10));
    let s = bld.op(Op::Add, &[a, a], 1);
    bld.policy(s, clamp(0, 3));
    let d = bld.op(Op::Add, &[s, s], 1);
    bld.output(d);
    let c = certified(&bld.build());
    assert_eq!(result(&c, 0, 0), iv(-20, 20));
    assert_eq!(result(&c, 1, 0), iv(0, 6));
}

// ---------------------------------------------------------------------------
// First failure (§8.5)

#[test]
fn first_failure_is_the_key_with_the_most_bits() {
    // rescale on check [0, 2^30], mult 2^20, shift 10, floor, post bias −2^31.
    // rq.t = [0, 2^30] fits i32; rq.p = [0, 2^50] (product: i64 under acc32) fits;
    // rq.q = [0, 2^40]: bits 42; rq.y = out.0 = [−2^31, 2^40 − 2^31]: bits 41.
    // Most bits → "rq.q" (42), although "out.0" sorts first.
    let rq = Rq::new(Round::Floor, PerChannel::One(10))
        .mult(PerChannel::One(1 << 20))
        .bias(Placement::Post, vec![-(1 << 31)]);
    let c = certified(&unary(1, check(0, 1 << 30), Op::Rescale(rq), 1));
    assert_eq!(intermediate(&c, 0, "rq.q"), iv(0, p2(40)));
    assert_eq!(intermediate(&c, 0, "rq.y"), iv(-p2(31), p2(40) - p2(31)));
    assert_eq!(ff(&c, ACC32), node_fail("rq.q", 0, 42));
    assert_eq!(met(&c), vec![ACC64]);
}

#[test]
fn first_failure_tie_goes_to_the_smallest_key_out_k() {
    // As above without the post bias: rq.q = rq.y = out.0 = [0, 2^40], all bits 42.
    // Byte order: "out.0" < "rq.q" < "rq.y".
    let rq = Rq::new(Round::Floor, PerChannel::One(10)).mult(PerChannel::One(1 << 20));
    let c = certified(&unary(1, check(0, 1 << 30), Op::Rescale(rq), 1));
    assert_eq!(ff(&c, ACC32), node_fail("out.0", 0, 42));
}

#[test]
fn first_failure_out_0_is_the_producer_result_before_its_policy() {
    // add of [0, 2^31 − 1] twice: [0, 2^32 − 2], bits 33; a clamp [0, 100] on the output does not
    // help: the producer result is classed tensor (§8.1).
    let mut bld = Builder::new();
    let a = bld.input(1, check(0, i32::MAX as i64));
    let bb = bld.input(1, check(0, i32::MAX as i64));
    let s = bld.op(Op::Add, &[a, bb], 1);
    bld.policy(s, clamp(0, 100));
    bld.output(s);
    let c = certified(&bld.build());
    assert_eq!(result(&c, 0, 0), iv(0, 4294967294i64));
    assert_eq!(tensor_interval(&c, s), iv(0, 100));
    assert_eq!(ff(&c, ACC32), node_fail("out.0", 0, 33));
    assert_eq!(met(&c), vec![ACC64]);
}

#[test]
fn first_failure_range_of_an_input() {
    // Input 0 check [0, 10] fits; input 1 check [−2^31 − 1, 0] has bits 33 → ("input", 1, "range", 33).
    let mut bld = Builder::new();
    let a = bld.input(1, check(0, 10));
    let bb = bld.input(1, check(-(1i64 << 31) - 1, 0));
    let s = bld.op(Op::Add, &[a, bb], 1);
    bld.output(s);
    let c = certified(&bld.build());
    assert_eq!(ff(&c, ACC32), Some(("input", 1, "range".to_string(), Some(33))));
    assert_eq!(met(&c), vec![ACC64]);
}

#[test]
fn first_failure_range_of_a_scalar_before_any_node() {
    // Scalars [0, 1] and [0, 2^31]: scalar 1 has bits 33. The fill reading it also fails
    // (out.0 = [0, 2^31]), but scalars come before nodes.
    let mut bld = Builder::new();
    let x = bld.input(1, check(0, 10));
    bld.scalar(0, 1);
    let s1 = bld.scalar(0, 1 << 31);
    let f = bld.op(Op::Fill(FillValue::Scalar(s1)), &[x], 1);
    bld.output(f);
    let c = certified(&bld.build());
    assert_eq!(ff(&c, ACC32), Some(("scalar", 1, "range".to_string(), Some(33))));
    // An input failing too comes first.
    let mut bld = Builder::new();
    let x = bld.input(1, check(0, 1 << 31));
    let s1 = bld.scalar(0, 1 << 31);
    let f = bld.op(Op::Fill(FillValue::Scalar(s1)), &[x], 1);
    bld.output(f);
    let c = certified(&bld.build());
    assert_eq!(ff(&c, ACC32), Some(("input", 0, "range".to_string(), Some(33))));
}

fn acc32_params_json(c: &Certified, i: usize) -> Vec<String> {
    node_json(c, i)["acc32_params"]
        .as_array()
        .expect("acc32_params")
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn acc32_rq_parameter_keys_in_table_order() {
    // rescale on check [−1, −1], mult 2^31 (not i32), shift 64 (> 63), floor, post bias 2^31 (not i32).
    // rq.t = [−1, −1]; rq.p = [−2^31, −2^31] (i64, fits); rq.q = [⌊−2^31/2^64⌋] = [−1, −1];
    // rq.y = [−1 + 2^31, …] = [2^31 − 1, 2^31 − 1] fits i32. Every interval fits, so the key is the
    // first parameter condition of §7.2's table: rq.mult, then rq.shift, then rq.post_bias.
    let g = |mult: i64, shift: u8| {
        let rq = Rq::new(Round::Floor, PerChannel::One(shift))
            .mult(PerChannel::One(mult))
            .bias(Placement::Post, vec![1 << 31]);
        unary(1, check(-1, -1), Op::Rescale(rq), 1)
    };
    let c = certified(&g(1 << 31, 64));
    assert_eq!(intermediate(&c, 0, "rq.p"), iv(-p2(31), -p2(31)));
    assert_eq!(intermediate(&c, 0, "rq.q"), iv(-1, -1));
    assert_eq!(intermediate(&c, 0, "rq.y"), iv(i32::MAX, i32::MAX));
    assert_eq!(acc32_params_json(&c, 0), vec!["rq.mult", "rq.shift", "rq.post_bias"]);
    assert_eq!(ff(&c, ACC32), Some(("node", 0, "rq.mult".to_string(), None)));
    assert_eq!(met(&c), vec![ACC64]);
    // mult 2^30 fits: p = [−2^30], q = ⌊−2^30/2^64⌋ = −1 → the key is rq.shift.
    let c = certified(&g(1 << 30, 64));
    assert_eq!(acc32_params_json(&c, 0), vec!["rq.shift", "rq.post_bias"]);
    assert_eq!(ff(&c, ACC32), Some(("node", 0, "rq.shift".to_string(), None)));
    // shift 63: q = ⌊−2^30/2^63⌋ = −1 → only rq.post_bias.
    let c = certified(&g(1 << 30, 63));
    assert_eq!(acc32_params_json(&c, 0), vec!["rq.post_bias"]);
    assert_eq!(ff(&c, ACC32), Some(("node", 0, "rq.post_bias".to_string(), None)));
}

#[test]
fn acc32_conv_weights_key_follows_the_rq_keys() {
    // conv 1×1 weight 2^31 on check [0, 0]: term [0, 0], acc [0, 0], every interval fits.
    // With mult 2^31 too: acc32_params = [rq.mult, weights]; without: [weights].
    let conv = |rq: Rq| Op::Conv(Conv::new(1, geom((1, 1), (1, 1), (0, 0)), 1, vec![1 << 31], rq));
    let c = certified(&unary(1, check(0, 0), conv(floor0().mult(PerChannel::One(1 << 31))), 1));
    assert_eq!(acc32_params_json(&c, 0), vec!["rq.mult", "weights"]);
    assert_eq!(ff(&c, ACC32), Some(("node", 0, "rq.mult".to_string(), None)));
    let c = certified(&unary(1, check(0, 0), conv(floor0()), 1));
    assert_eq!(acc32_params_json(&c, 0), vec!["weights"]);
    assert_eq!(ff(&c, ACC32), Some(("node", 0, "weights".to_string(), None)));
    assert_eq!(k_c(&c, 0), "unbounded");
}

#[test]
fn acc32_chscale_igdn_leaky_parameter_keys() {
    // chscale on [0, 0] with M = [2^31], s = 64: every interval is [0, 0] → [chscale.m, chscale.s].
    let mut bld = Builder::new();
    let x = bld.input(1, check(0, 0));
    let k = bld.scalar(0, 0);
    let y = bld.op(
        Op::Chscale(Chscale::new(k, 1, Round::Floor, 64, vec![1 << 31])),
        &[x],
        1,
    );
    bld.output(y);
    let c = certified(&bld.build());
    assert_eq!(acc32_params_json(&c, 0), vec!["chscale.m", "chscale.s"]);
    assert_eq!(ff(&c, ACC32), Some(("node", 0, "chscale.m".to_string(), None)));
    // igdn on [0, 0], γ = [2^31], gf = 64: x2 = [0, 0], N = [0, 0], r = [0, 0] → [igdn.gamma, igdn.shift].
    let c = certified(&unary(
        1,
        check(0, 0),
        Op::Igdn(Igdn::new(64, 0, vec![1 << 31], vec![0])),
        1,
    ));
    assert_eq!(acc32_params_json(&c, 0), vec!["igdn.gamma", "igdn.shift"]);
    assert_eq!(ff(&c, ACC32), Some(("node", 0, "igdn.gamma".to_string(), None)));
    // igdn with frac 64 only → igdn.shift.
    let c = certified(&unary(1, check(0, 0), Op::Igdn(Igdn::new(0, 64, vec![1], vec![0])), 1));
    assert_eq!(ff(&c, ACC32), Some(("node", 0, "igdn.shift".to_string(), None)));
    // leaky a = 2^31 on [0, 5]: leaky.p = [0, 0] → leaky.a.
    let c = certified(&unary(1, check(0, 5), Op::Leaky { a: 1 << 31, f: 0 }, 1));
    assert_eq!(acc32_params_json(&c, 0), vec!["leaky.a"]);
    assert_eq!(ff(&c, ACC32), Some(("node", 0, "leaky.a".to_string(), None)));
    assert_eq!(met(&c), vec![ACC64]);
}

#[test]
fn acc32_policy_check_inside_the_graph() {
    // relu on [0, 10] with its output check [0, 5]: intervals fit, no parameters → "policy.check".
    let mut bld = Builder::new();
    let x = bld.input(1, check(0, 10));
    let y = bld.op(Op::Relu, &[x], 1);
    bld.policy(y, check(0, 5));
    bld.output(y);
    let c = certified(&bld.build());
    assert_eq!(tensor_interval(&c, y), iv(0, 5));
    assert_eq!(ff(&c, ACC32), Some(("node", 0, "policy.check".to_string(), None)));
    assert_eq!(met(&c), vec![ACC64]);
    // The same graph with a clamp output meets acc32.
    let mut bld = Builder::new();
    let x = bld.input(1, check(0, 10));
    let y = bld.op(Op::Relu, &[x], 1);
    bld.policy(y, clamp(0, 5));
    bld.output(y);
    assert_eq!(met(&certified(&bld.build())), vec![ACC32, ACC64]);
}

#[test]
fn an_interval_failure_comes_before_the_parameter_keys() {
    // leaky a = 2^31 (fails leaky.a) on [−1, 0], f = 0: leaky.p = corner hull [−1, −1]×[2^31] =
    // [−2^31, −2^31] (acc, fits i32); negative part [−2^31, −2^31]; non-negative part [0, 0];
    // result [−2^31, 0] fits. Then with [−2, 0]: leaky.p = [−2^32, −2^31] fails i32 first.
    let c = certified(&unary(1, check(-1, 0), Op::Leaky { a: 1 << 31, f: 0 }, 1));
    assert_eq!(intermediate(&c, 0, "leaky.p"), iv(-p2(31), -p2(31)));
    assert_eq!(result(&c, 0, 0), iv(-p2(31), 0));
    assert_eq!(ff(&c, ACC32), Some(("node", 0, "leaky.a".to_string(), None)));
    let c = certified(&unary(1, check(-2, 0), Op::Leaky { a: 1 << 31, f: 0 }, 1));
    assert_eq!(intermediate(&c, 0, "leaky.p"), iv(-p2(32), -p2(31)));
    // leaky.p bits 33 (−2^32 fits i33); out.0 = [−2^32, 0] bits 33 too: tie → "leaky.p" < "out.0".
    assert_eq!(ff(&c, ACC32), node_fail("leaky.p", 0, 33));
}
