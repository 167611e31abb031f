//! §5.1 requantisation, through §5.4 `rescale`, `chscale` and `mul`: decodes
//! worked out by hand from the definitions (§2 rounding), the policies of §3 on
//! inputs and outputs, and every shape-rule and load refusal.

mod common;
use common::*;
use num_bigint::BigInt;
use wai_oracle::num::Round;
use wai_oracle::refusal::Code;
use wai_oracle::whg1::build::Builder;
use wai_oracle::whg1::{Chscale, Graph, Op, PerChannel, Placement, Rq};

const MIN: i64 = i64::MIN; // −2^63
const MAX: i64 = i64::MAX; // 2^63 − 1

/// One `rescale` on a `c`-channel input with the `check` range of `any()`.
fn rescale_graph(c: u32, rq: Rq) -> Graph {
    let mut b = Builder::new();
    let x = b.input(c, any());
    let y = b.op(Op::Rescale(rq), &[x], c);
    b.output(y);
    b.build()
}

/// One `chscale` on a `c`-channel input, with one scalar declared `[lo, hi]`.
fn chscale_graph(c: u32, scalar: (i64, i64), ch: Chscale) -> Graph {
    let mut b = Builder::new();
    let x = b.input(c, any());
    b.scalar(scalar.0, scalar.1);
    let y = b.op(Op::Chscale(ch), &[x], c);
    b.output(y);
    b.build()
}

/// One `mul` of a `ca`-channel `a` and a `cb`-channel `b`, output `ca` channels.
fn mul_graph(ca: u32, cb: u32, rq: Rq) -> Graph {
    let mut b = Builder::new();
    let x = b.input(ca, any());
    let z = b.input(cb, any());
    let y = b.op(Op::Mul(rq), &[x, z], ca);
    b.output(y);
    b.build()
}

fn big(v: i128) -> BigInt {
    BigInt::from(v)
}

// ---------------------------------------------------------------- rescale

#[test]
fn rescale_floor_rounds_toward_minus_infinity() {
    // No multiplier (p = t = v), no bias, shift 2, floor: q = ⌊v / 4⌋.
    //   7 → ⌊1.75⌋ = 1;  −7 → ⌊−1.75⌋ = −2;  8 → 2;  −1 → ⌊−0.25⌋ = −1;  −8 → −2;  3 → 0.
    let g = rescale_graph(1, Rq::new(Round::Floor, PerChannel::One(2)));
    let (s, v) = out1(&g, vec![t(1, 2, 3, &[7, -7, 8, -1, -8, 3])], vec![]);
    assert_eq!(s, shape(1, 2, 3));
    assert_eq!(v, vec![1, -2, 2, -1, -2, 0]);
}

#[test]
fn rescale_half_up_ties_go_to_plus_infinity_on_both_signs() {
    // shift 1, half_up: q = ⌊(p + 1) / 2⌋.
    //   5 → ⌊6/2⌋ = 3 (tie 2.5 → 3);   −5 → ⌊−4/2⌋ = −2 (tie −2.5 → −2);
    //   3 → ⌊4/2⌋ = 2 (tie 1.5 → 2);   −3 → ⌊−2/2⌋ = −1 (tie −1.5 → −1);
    //   4 → ⌊5/2⌋ = 2;                 −4 → ⌊−3/2⌋ = −2.
    let g = rescale_graph(1, Rq::new(Round::HalfUp, PerChannel::One(1)));
    let (_, v) = out1(&g, vec![t(1, 1, 6, &[5, -5, 3, -3, 4, -4])], vec![]);
    assert_eq!(v, vec![3, -2, 2, -1, 2, -2]);
    // shift 2: q = ⌊(p + 2) / 4⌋. −6 (−1.5, a tie) → ⌊−4/4⌋ = −1; −7 → ⌊−5/4⌋ = −2;
    //   6 (1.5, a tie) → ⌊8/4⌋ = 2; −5 → ⌊−3/4⌋ = −1.
    let g = rescale_graph(1, Rq::new(Round::HalfUp, PerChannel::One(2)));
    let (_, v) = out1(&g, vec![t(1, 1, 4, &[-6, -7, 6, -5])], vec![]);
    assert_eq!(v, vec![-1, -2, 2, -1]);
}

#[test]
fn rescale_half_even_ties_on_both_signs_with_a_shift_per_channel() {
    // Shift per channel [1, 2], half_even. q = ⌊p/2^s⌋, r = p − q·2^s, h = 2^(s−1).
    // Channel 0, s = 1, h = 1:
    //    5: q = 2, r = 1 = h, q even → 2;      7: q = 3, r = 1 = h, q odd → 4;
    //   −5: q = −3, r = 1 = h, q odd → −2;    −7: q = −4, r = 1 = h, q even → −4;
    //   −3: q = −2, r = 1 = h, q even → −2;    3: q = 1, r = 1 = h, q odd → 2.
    // Channel 1, s = 2, h = 2:
    //   −7: q = −2, r = 1 < h → −2;           −5: q = −2, r = 3 > h → −1;
    //   −6: q = −2, r = 2 = h, q even → −2;   −10: q = −3, r = 2 = h, q odd → −2;
    //    6: q = 1, r = 2 = h, q odd → 2;       10: q = 2, r = 2 = h, q even → 2.
    let g = rescale_graph(2, Rq::new(Round::HalfEven, PerChannel::Each(vec![1, 2])));
    let x = t(2, 1, 6, &[5, 7, -5, -7, -3, 3, -7, -5, -6, -10, 6, 10]);
    let (s, v) = out1(&g, vec![x], vec![]);
    assert_eq!(s, shape(2, 1, 6));
    assert_eq!(v, vec![2, 4, -2, -4, -2, 2, -2, -1, -2, -2, 2, 2]);
}

#[test]
fn rescale_shift_zero_leaves_the_product_for_every_round() {
    // s = 0: every R_round(p, 0) = p. Multiplier 3: −3 → −9, 5 → 15, −1 → −3.
    for round in [Round::Floor, Round::HalfUp, Round::HalfEven] {
        let g = rescale_graph(1, Rq::new(round, PerChannel::One(0)).mult(PerChannel::One(3)));
        assert_eq!(
            out1(&g, vec![t(1, 1, 3, &[-3, 5, -1])], vec![]).1,
            vec![-9, 15, -3],
            "{round:?}"
        );
    }
}

#[test]
fn rescale_multiplier_absent_one_value_and_negative() {
    // floor, shift 1. Absent (means 1): −9 → ⌊−4.5⌋ = −5, 9 → 4.
    let g = rescale_graph(1, Rq::new(Round::Floor, PerChannel::One(1)));
    assert_eq!(out1(&g, vec![t(1, 1, 2, &[-9, 9])], vec![]).1, vec![-5, 4]);
    // One multiplier 3: p = −27 → ⌊−13.5⌋ = −14; p = 27 → 13.
    let g = rescale_graph(1, Rq::new(Round::Floor, PerChannel::One(1)).mult(PerChannel::One(3)));
    assert_eq!(out1(&g, vec![t(1, 1, 2, &[-9, 9])], vec![]).1, vec![-14, 13]);
    // Multiplier −1, half_up, shift 1: a positive input gives a negative tie.
    //   3 → p = −3, ⌊(−3 + 1)/2⌋ = −1;  −3 → p = 3, ⌊4/2⌋ = 2.
    let g = rescale_graph(1, Rq::new(Round::HalfUp, PerChannel::One(1)).mult(PerChannel::One(-1)));
    assert_eq!(out1(&g, vec![t(1, 1, 2, &[3, -3])], vec![]).1, vec![-1, 2]);
}

#[test]
fn rescale_pre_and_post_bias_with_a_multiplier_per_channel() {
    // Two channels, mult [3, −2], one shift 2, floor; bias [−1, 10]. Input ch0 = 5 −6, ch1 = −5 7.
    let x = || t(2, 1, 2, &[5, -6, -5, 7]);
    let base = || Rq::new(Round::Floor, PerChannel::One(2)).mult(PerChannel::Each(vec![3, -2]));
    // No bias: ch0: 15 → ⌊3.75⌋ = 3, −18 → ⌊−4.5⌋ = −5; ch1: 10 → 2, −14 → ⌊−3.5⌋ = −4.
    assert_eq!(out1(&rescale_graph(2, base()), vec![x()], vec![]).1, vec![3, -5, 2, -4]);
    // pre: t = v + bias, p = t·mult, q = ⌊p/4⌋.
    //   ch0:  5 → t 4,  p 12,  q 3;   −6 → t −7, p −21, q ⌊−5.25⌋ = −6.
    //   ch1: −5 → t 5,  p −10, q ⌊−2.5⌋ = −3;   7 → t 17, p −34, q ⌊−8.5⌋ = −9.
    let g = rescale_graph(2, base().bias(Placement::Pre, vec![-1, 10]));
    assert_eq!(out1(&g, vec![x()], vec![]).1, vec![3, -6, -3, -9]);
    // post: y = q + bias with q as without bias: ch0: 3 − 1 = 2, −5 − 1 = −6; ch1: 2 + 10 = 12, −4 + 10 = 6.
    let g = rescale_graph(2, base().bias(Placement::Post, vec![-1, 10]));
    assert_eq!(out1(&g, vec![x()], vec![]).1, vec![2, -6, 12, 6]);
}

#[test]
fn rescale_shift_63_ties_past_64_bits() {
    // Input 2^62 on four channels, mult per channel [5, 7, −5, −7], shift 63, h = 2^62.
    //   p =  5·2^62 =  2.5·2^63: floor 2;  half_up ⌊6·2^62/2^63⌋ = 3;  half_even q = 2 even → 2.
    //   p =  7·2^62 =  3.5·2^63: floor 3;  half_up ⌊8·2^62/2^63⌋ = 4;  half_even q = 3 odd → 4.
    //   p = −5·2^62 = −2.5·2^63: floor −3; half_up ⌊−4·2^62/2^63⌋ = −2; half_even q = −3,
    //       r = −5·2^62 + 6·2^62 = 2^62 = h, q odd → −2.
    //   p = −7·2^62 = −3.5·2^63: floor −4; half_up ⌊−6·2^62/2^63⌋ = −3; half_even q = −4,
    //       r = −7·2^62 + 8·2^62 = h, q even → −4.
    let v = 1i64 << 62;
    let cases = [
        (Round::Floor, vec![2, 3, -3, -4]),
        (Round::HalfUp, vec![3, 4, -2, -3]),
        (Round::HalfEven, vec![2, 4, -2, -4]),
    ];
    for (round, want) in cases {
        let rq = Rq::new(round, PerChannel::One(63)).mult(PerChannel::Each(vec![5, 7, -5, -7]));
        let g = rescale_graph(4, rq);
        assert_eq!(out1(&g, vec![t(4, 1, 1, &[v, v, v, v])], vec![]).1, want, "{round:?}");
    }
}

#[test]
fn rescale_shift_64_ties_from_i64_min() {
    // Input −2^63 on four channels, mult [3, −3, −1, 1], shift 64, h = 2^63.
    //   p = −3·2^63 = −1.5·2^64: floor −2; half_up ⌊−2·2^63/2^64⌋ = −1;
    //       half_even q = −2, r = −3·2^63 + 4·2^63 = h, q even → −2.
    //   p =  3·2^63 =  1.5·2^64: floor 1;  half_up ⌊4·2^63/2^64⌋ = 2;  half_even q = 1 odd → 2.
    //   p =  2^63   =  0.5·2^64: floor 0;  half_up ⌊2^64/2^64⌋ = 1;    half_even q = 0 even → 0.
    //   p = −2^63   = −0.5·2^64: floor −1; half_up ⌊0/2^64⌋ = 0;
    //       half_even q = −1, r = 2^63 = h, q odd → 0.
    let cases = [
        (Round::Floor, vec![-2, 1, 0, -1]),
        (Round::HalfUp, vec![-1, 2, 1, 0]),
        (Round::HalfEven, vec![-2, 2, 0, 0]),
    ];
    for (round, want) in cases {
        let rq = Rq::new(round, PerChannel::One(64)).mult(PerChannel::Each(vec![3, -3, -1, 1]));
        let g = rescale_graph(4, rq);
        assert_eq!(
            out1(&g, vec![t(4, 1, 1, &[MIN, MIN, MIN, MIN])], vec![]).1,
            want,
            "{round:?}"
        );
    }
}

#[test]
fn rescale_shift_127_with_products_near_2_pow_126() {
    // Input −2^63 on three channels, shift 127, h = 2^126.
    //   ch0: mult −2^63, no bias: p = 2^126 = 0.5·2^127.
    //        floor 0; half_up ⌊2^127/2^127⌋ = 1; half_even q = 0 even → 0.
    //   ch1: mult 2^63 − 1: p = −2^126 + 2^63.
    //        floor −1; half_up ⌊2^63/2^127⌋ = 0; half_even q = −1, r = 2^126 + 2^63 > h → 0.
    //   ch2: mult 2^62, pre bias −2^63: t = −2^64, p = −2^126 = −0.5·2^127.
    //        floor −1; half_up ⌊0/2^127⌋ = 0; half_even q = −1, r = 2^126 = h, q odd → 0.
    // (The bias is per channel: ch0 and ch1 get 0.)
    let cases = [
        (Round::Floor, vec![0, -1, -1]),
        (Round::HalfUp, vec![1, 0, 0]),
        (Round::HalfEven, vec![0, 0, 0]),
    ];
    for (round, want) in cases {
        let rq = Rq::new(round, PerChannel::One(127))
            .mult(PerChannel::Each(vec![MIN, MAX, 1 << 62]))
            .bias(Placement::Pre, vec![0, 0, MIN]);
        let g = rescale_graph(3, rq);
        assert_eq!(
            out1(&g, vec![t(3, 1, 1, &[MIN, MIN, MIN])], vec![]).1,
            want,
            "{round:?}"
        );
    }
}

#[test]
fn rescale_results_past_64_bits_are_exact() {
    // Shift 0, mult −2^63: −2^63 → 2^126; 2^63 − 1 → −2^126 + 2^63.
    let rq = Rq::new(Round::Floor, PerChannel::One(0)).mult(PerChannel::One(MIN));
    let (_, v) = out1(&rescale_graph(1, rq), vec![t(1, 1, 2, &[MIN, MAX])], vec![]);
    assert_eq!(v, vec![1i128 << 126, -(1i128 << 126) + (1i128 << 63)]);
    // Shift 64, mult 2^63 − 1, input 2^63 − 1: p = 2^126 − 2^64 + 1; p/2^64 = 2^62 − 1 + 2^−64.
    //   floor 2^62 − 1; half_up ⌊(p + 2^63)/2^64⌋ = 2^62 − 1 (fraction 2^−64 + 1/2 < 1).
    //   Post bias 2^63 − 1 then gives 2^62 − 1 + 2^63 − 1 = 3·2^62 − 2, past i64.
    let rq = Rq::new(Round::HalfUp, PerChannel::One(64))
        .mult(PerChannel::One(MAX))
        .bias(Placement::Post, vec![MAX]);
    let (_, v) = out1(&rescale_graph(1, rq), vec![t(1, 1, 1, &[MAX])], vec![]);
    assert_eq!(v, vec![3 * (1i128 << 62) - 2]);
    // Shift 32 on a product past 64 bits: input 2^40 + 3, mult 2^30,
    //   p = 2^70 + 3·2^30; p/2^32 = 2^38 + 0.75: floor 2^38; half_even 2^38 + 1 (r = 3·2^30 > h = 2^31).
    let x = (1i64 << 40) + 3;
    let rq = Rq::new(Round::Floor, PerChannel::One(32)).mult(PerChannel::One(1 << 30));
    assert_eq!(
        out1(&rescale_graph(1, rq), vec![t(1, 1, 1, &[x])], vec![]).1,
        vec![1i128 << 38]
    );
    let rq = Rq::new(Round::HalfEven, PerChannel::One(32)).mult(PerChannel::One(1 << 30));
    assert_eq!(
        out1(&rescale_graph(1, rq), vec![t(1, 1, 1, &[x])], vec![]).1,
        vec![(1i128 << 38) + 1]
    );
}

#[test]
fn rescale_clamp_policy_on_the_output() {
    // floor shift 1: −9 → −5, 9 → 4, 3 → 1; then clamp [−3, 3]: −3, 3, 1.
    let mut b = Builder::new();
    let x = b.input(1, any());
    let y = b.op(Op::Rescale(Rq::new(Round::Floor, PerChannel::One(1))), &[x], 1);
    b.policy(y, clamp(-3, 3));
    b.output(y);
    let g = b.build();
    assert_eq!(out1(&g, vec![t(1, 1, 3, &[-9, 9, 3])], vec![]).1, vec![-3, 3, 1]);
}

#[test]
fn rescale_check_policy_on_the_output() {
    // floor shift 1, check [−4, 4]. −8 → −4 and 9 → 4 sit on the ends and decode;
    // −9 → ⌊−4.5⌋ = −5 is one past lo; 10 → 5 is one past hi: field_range.
    let mut b = Builder::new();
    let x = b.input(1, any());
    let y = b.op(Op::Rescale(Rq::new(Round::Floor, PerChannel::One(1))), &[x], 1);
    b.policy(y, check(-4, 4));
    b.output(y);
    let g = b.build();
    assert_eq!(out1(&g, vec![t(1, 1, 2, &[-8, 9])], vec![]).1, vec![-4, 4]);
    assert_eq!(refusal(&g, vec![t(1, 1, 2, &[-9, 0])], vec![]), Code::FieldRange);
    assert_eq!(refusal(&g, vec![t(1, 1, 2, &[0, 10])], vec![]), Code::FieldRange);
}

#[test]
fn rescale_input_policies_apply_first() {
    // A clamp input [−10, 10]: −100 is clamped to −10 before the operator: floor shift 2,
    // ⌊−10/4⌋ = −3 (not ⌊−100/4⌋ = −25); 100 → 10 → 2; 7 → 1.
    let mut b = Builder::new();
    let x = b.input(1, clamp(-10, 10));
    let y = b.op(Op::Rescale(Rq::new(Round::Floor, PerChannel::One(2))), &[x], 1);
    b.output(y);
    let g = b.build();
    assert_eq!(out1(&g, vec![t(1, 1, 3, &[-100, 100, 7])], vec![]).1, vec![-3, 2, 1]);
    // A check input [−10, 10]: −10 and 10 decode; −11 or 11 is refused field_range.
    let mut b = Builder::new();
    let x = b.input(1, check(-10, 10));
    let y = b.op(Op::Rescale(Rq::new(Round::Floor, PerChannel::One(2))), &[x], 1);
    b.output(y);
    let g = b.build();
    assert_eq!(out1(&g, vec![t(1, 1, 2, &[-10, 10])], vec![]).1, vec![-3, 2]);
    assert_eq!(refusal(&g, vec![t(1, 1, 2, &[-11, 0])], vec![]), Code::FieldRange);
    assert_eq!(refusal(&g, vec![t(1, 1, 2, &[0, 11])], vec![]), Code::FieldRange);
}

#[test]
fn rescale_channel_rules_at_load() {
    // The output tensor must have the input's C channels (§10.3).
    let mut b = Builder::new();
    let x = b.input(2, any());
    let y = b.op(Op::Rescale(Rq::new(Round::Floor, PerChannel::One(0))), &[x], 3);
    b.output(y);
    assert_eq!(load_refusal(&b.build()), Code::ModelMismatch);
    // Per-channel shift, multiplier or bias of a length other than C: the parameter length
    // is not exact (§10.4).
    let bad = [
        Rq::new(Round::Floor, PerChannel::Each(vec![1, 2, 3])),
        Rq::new(Round::Floor, PerChannel::One(0)).mult(PerChannel::Each(vec![1])),
        Rq::new(Round::Floor, PerChannel::One(0)).bias(Placement::Pre, vec![1, 2, 3]),
    ];
    for rq in bad {
        assert_eq!(
            load_refusal(&rescale_graph(2, rq.clone())),
            Code::ModelMismatch,
            "{rq:?}"
        );
    }
    // A shift past 127 is out of its range (§5.1).
    assert_eq!(
        load_refusal(&rescale_graph(1, Rq::new(Round::Floor, PerChannel::One(128)))),
        Code::ModelMismatch
    );
}

#[test]
fn rescale_exponents_are_not_constrained() {
    // §3: only add, concat, chunk_add and lut16 constrain exponents. Input 3, output −2 loads
    // and decodes: floor shift 1, 6 → 3.
    let mut b = Builder::new();
    let x = b.input(1, any());
    let y = b.op(Op::Rescale(Rq::new(Round::Floor, PerChannel::One(1))), &[x], 1);
    b.exponent(x, Some(3)).exponent(y, Some(-2));
    b.output(y);
    assert_eq!(out1(&b.build(), vec![t(1, 1, 1, &[6])], vec![]).1, vec![3]);
}

// ---------------------------------------------------------------- chscale

/// C = 2, n_rows = 3, M = [[1, 2], [3, −4], [−5, 6]].
fn m3x2() -> Vec<i64> {
    vec![1, 2, 3, -4, -5, 6]
}

#[test]
fn chscale_chooses_the_row_by_the_scalars_value() {
    // shift 1, half_even. Input ch0 = 3 −3, ch1 = 5 −1.
    // r = 0 (M[0] = 1, 2): ch0 3, −3: 3 → q 1 r 1 = h odd → 2; −3 → q −2 even → −2;
    //                      ch1 10, −2 → 5, −1.
    // r = 1 (M[1] = 3, −4): ch0 9 → q 4 even → 4; −9 → q −5 odd → −4;
    //                       ch1 −20, 4 → −10, 2.
    // r = 2 (M[2] = −5, 6): ch0 −15 → q −8 even → −8; 15 → q 7 odd → 8;
    //                       ch1 30, −6 → 15, −3.
    let g = chscale_graph(2, (0, 2), Chscale::new(0, 3, Round::HalfEven, 1, m3x2()));
    let x = || t(2, 1, 2, &[3, -3, 5, -1]);
    let outs = run_sequence(
        &g,
        vec![(vec![x()], vec![0]), (vec![x()], vec![1]), (vec![x()], vec![2])],
    );
    let got: Vec<Vec<i128>> = outs.iter().map(|o| vals(&o.as_ref().expect("decodes")[0])).collect();
    assert_eq!(got, vec![vec![2, -2, 5, -1], vec![4, -4, -10, 2], vec![-8, 8, 15, -3]]);
}

#[test]
fn chscale_floor_and_half_up() {
    // Row 1 (3, −4), shift 2. Input ch0 = 2 −2, ch1 = 1 −3: products ch0 6, −6; ch1 −4, 12.
    //   floor:   6 → ⌊1.5⌋ = 1; −6 → ⌊−1.5⌋ = −2; −4 → −1; 12 → 3.
    //   half_up: 6 → ⌊8/4⌋ = 2; −6 → ⌊−4/4⌋ = −1; −4 → ⌊−2/4⌋ = −1; 12 → ⌊14/4⌋ = 3.
    let x = || t(2, 1, 2, &[2, -2, 1, -3]);
    let g = chscale_graph(2, (0, 2), Chscale::new(0, 3, Round::Floor, 2, m3x2()));
    assert_eq!(out1(&g, vec![x()], vec![1]).1, vec![1, -2, -1, 3]);
    let g = chscale_graph(2, (0, 2), Chscale::new(0, 3, Round::HalfUp, 2, m3x2()));
    assert_eq!(out1(&g, vec![x()], vec![1]).1, vec![2, -1, -1, 3]);
}

#[test]
fn chscale_large_shifts() {
    // One channel, n_rows 2, M = [[−2^63], [2^63 − 1]], input −2^63.
    //   row 0: p = 2^126. shift 127: floor 0, half_up 1, half_even 0 (q = 0 even, r = h).
    //   row 1: p = −2^126 + 2^63. shift 64: p/2^64 = −2^62 + 0.5: floor −2^62;
    //          half_up ⌊(p + 2^63)/2^64⌋ = −2^62 + 1; half_even q = −2^62 (even), r = 2^63 = h → −2^62.
    let m = vec![MIN, MAX];
    for (round, want) in [(Round::Floor, 0), (Round::HalfUp, 1), (Round::HalfEven, 0)] {
        let g = chscale_graph(1, (0, 1), Chscale::new(0, 2, round, 127, m.clone()));
        assert_eq!(out1(&g, vec![t(1, 1, 1, &[MIN])], vec![0]).1, vec![want], "{round:?}");
    }
    let e = 1i128 << 62;
    for (round, want) in [(Round::Floor, -e), (Round::HalfUp, -e + 1), (Round::HalfEven, -e)] {
        let g = chscale_graph(1, (0, 1), Chscale::new(0, 2, round, 64, m.clone()));
        assert_eq!(out1(&g, vec![t(1, 1, 1, &[MIN])], vec![1]).1, vec![want], "{round:?}");
    }
    // Shift 0 keeps the whole product, past 64 bits: row 0, input −2^63 → 2^126.
    let g = chscale_graph(1, (0, 1), Chscale::new(0, 2, Round::Floor, 0, m.clone()));
    assert_eq!(out1(&g, vec![t(1, 1, 1, &[MIN])], vec![0]).1, vec![1i128 << 126]);
}

#[test]
fn chscale_scalar_outside_its_declared_range_is_field_range() {
    // Declared [1, 2] inside n_rows = 3: 0 names a row of M but lies outside the declared
    // range, so it is refused at run step 2, as are 3 and −1. 1 and 2 decode.
    let g = chscale_graph(2, (1, 2), Chscale::new(0, 3, Round::Floor, 0, m3x2()));
    let x = || t(2, 1, 1, &[1, 1]);
    assert_eq!(refusal(&g, vec![x()], vec![0]), Code::FieldRange);
    assert_eq!(refusal(&g, vec![x()], vec![3]), Code::FieldRange);
    assert_eq!(refusal(&g, vec![x()], vec![-1]), Code::FieldRange);
    // Row 1: 1·3, 1·(−4); row 2: −5, 6.
    assert_eq!(out1(&g, vec![x()], vec![1]).1, vec![3, -4]);
    assert_eq!(out1(&g, vec![x()], vec![2]).1, vec![-5, 6]);
}

#[test]
fn chscale_scalar_range_must_lie_within_its_rows() {
    // n_rows = 3: the declared range must lie within [0, 2] (load, model_mismatch).
    for range in [(0, 3), (-1, 2), (-5, -1), (3, 3)] {
        let g = chscale_graph(2, range, Chscale::new(0, 3, Round::Floor, 0, m3x2()));
        assert_eq!(load_refusal(&g), Code::ModelMismatch, "{range:?}");
    }
    // [2, 2] and [0, 0] lie within it and load: row 2 on input 1, 1 gives −5, 6.
    let g = chscale_graph(2, (2, 2), Chscale::new(0, 3, Round::Floor, 0, m3x2()));
    assert_eq!(out1(&g, vec![t(2, 1, 1, &[1, 1])], vec![2]).1, vec![-5, 6]);
    let g = chscale_graph(2, (0, 0), Chscale::new(0, 3, Round::Floor, 0, m3x2()));
    assert_eq!(out1(&g, vec![t(2, 1, 1, &[1, 1])], vec![0]).1, vec![1, 2]);
}

#[test]
fn chscale_load_refusals() {
    // A scalar index that does not exist (one scalar, index 1).
    let g = chscale_graph(2, (0, 2), Chscale::new(1, 3, Round::Floor, 0, m3x2()));
    assert_eq!(load_refusal(&g), Code::ModelMismatch);
    // M of 5 entries where n_rows·C = 6: the parameter length is not exact.
    let g = chscale_graph(2, (0, 2), Chscale::new(0, 3, Round::Floor, 0, vec![1; 5]));
    assert_eq!(load_refusal(&g), Code::ModelMismatch);
    // A shift of 128.
    let g = chscale_graph(2, (0, 2), Chscale::new(0, 3, Round::Floor, 128, m3x2()));
    assert_eq!(load_refusal(&g), Code::ModelMismatch);
    // An output tensor of other than C channels.
    let mut b = Builder::new();
    let x = b.input(2, any());
    b.scalar(0, 2);
    let y = b.op(Op::Chscale(Chscale::new(0, 3, Round::Floor, 0, m3x2())), &[x], 1);
    b.output(y);
    assert_eq!(load_refusal(&b.build()), Code::ModelMismatch);
}

#[test]
fn chscale_output_policies() {
    // Row 0 = (1, 2), shift 0: input 4, −4 → 4, −8. With clamp [−5, 5]: 4, −5.
    // With check [−8, 4]: decodes on the ends; input 5 (→ 5 > 4) is refused field_range.
    let build = |policy| {
        let mut b = Builder::new();
        let x = b.input(2, any());
        b.scalar(0, 2);
        let y = b.op(Op::Chscale(Chscale::new(0, 3, Round::Floor, 0, m3x2())), &[x], 2);
        b.policy(y, policy);
        b.output(y);
        b.build()
    };
    let g = build(clamp(-5, 5));
    assert_eq!(out1(&g, vec![t(2, 1, 1, &[4, -4])], vec![0]).1, vec![4, -5]);
    let g = build(check(-8, 4));
    assert_eq!(out1(&g, vec![t(2, 1, 1, &[4, -4])], vec![0]).1, vec![4, -8]);
    assert_eq!(refusal(&g, vec![t(2, 1, 1, &[5, -4])], vec![0]), Code::FieldRange);
}

// ---------------------------------------------------------------- mul

#[test]
fn mul_same_channels_with_a_multiplier_per_channel() {
    // a ch0 = 3 −4, ch1 = 5 −6; b ch0 = 7 2, ch1 = −1 3. a·b: 21, −8; −5, −18.
    // rq: mult [1, 2], shift 2, half_up: q = ⌊(p + 2)/4⌋.
    //   ch0: p = 21 → ⌊23/4⌋ = 5; p = −8 → ⌊−6/4⌋ = −2.
    //   ch1: p = −10 (−2.5, a negative tie) → ⌊−8/4⌋ = −2; p = −36 → ⌊−34/4⌋ = −9.
    let rq = Rq::new(Round::HalfUp, PerChannel::One(2)).mult(PerChannel::Each(vec![1, 2]));
    let g = mul_graph(2, 2, rq);
    let (s, v) = out1(
        &g,
        vec![t(2, 1, 2, &[3, -4, 5, -6]), t(2, 1, 2, &[7, 2, -1, 3])],
        vec![],
    );
    assert_eq!(s, shape(2, 1, 2));
    assert_eq!(v, vec![5, -2, -2, -9]);
}

#[test]
fn mul_broadcasts_b_from_one_channel() {
    // a [3, 1, 2] = 1 2 / 3 4 / −5 6; b [1, 1, 2] = 10 −3: every channel of a meets b's plane.
    // a·b = 10 −6 / 30 −12 / −50 −18; floor shift 1, no multiplier: 5 −3 / 15 −6 / −25 −9.
    let g = mul_graph(3, 1, Rq::new(Round::Floor, PerChannel::One(1)));
    let (s, v) = out1(
        &g,
        vec![t(3, 1, 2, &[1, 2, 3, 4, -5, 6]), t(1, 1, 2, &[10, -3])],
        vec![],
    );
    assert_eq!(s, shape(3, 1, 2));
    assert_eq!(v, vec![5, -3, 15, -6, -25, -9]);
}

#[test]
fn mul_half_even_ties_on_both_signs() {
    // shift 1, half_even, one channel. a = 5 5 −5 −7, b = 1 −1 −1 −1: p = 5, −5, 5, 7.
    //   5: q 2 even → 2;  −5: q −3 odd → −2;  5 → 2;  7: q 3 odd → 4.
    let g = mul_graph(1, 1, Rq::new(Round::HalfEven, PerChannel::One(1)));
    let (_, v) = out1(
        &g,
        vec![t(1, 1, 4, &[5, 5, -5, -7]), t(1, 1, 4, &[1, -1, -1, -1])],
        vec![],
    );
    assert_eq!(v, vec![2, -2, 2, 4]);
}

#[test]
fn mul_products_past_64_bits() {
    // a = b = −2^63: a·b = 2^126. Shift 0 keeps it; shift 127 half_up: ⌊(2^126 + 2^126)/2^127⌋ = 1;
    // floor: 0. With a multiplier 2 the rq's p = 2^127: shift 127 floor → 1.
    // a = b = 2^63 − 1: a·b = 2^126 − 2^64 + 1; shift 64 floor → 2^62 − 1.
    let x = || t(1, 1, 2, &[MIN, MAX]);
    let cases = [
        (
            Rq::new(Round::Floor, PerChannel::One(0)),
            vec![1i128 << 126, (1i128 << 126) - (1i128 << 64) + 1],
        ),
        (Rq::new(Round::HalfUp, PerChannel::One(127)), vec![1, 0]),
        (Rq::new(Round::Floor, PerChannel::One(127)), vec![0, 0]),
        (
            Rq::new(Round::Floor, PerChannel::One(127)).mult(PerChannel::One(2)),
            vec![1, 0],
        ),
        (
            Rq::new(Round::Floor, PerChannel::One(64)),
            vec![1i128 << 62, (1i128 << 62) - 1],
        ),
    ];
    // Second element: (2^63 − 1)² = 2^126 − 2^64 + 1. half_up at 127: (p + 2^126)/2^127 < 1 → 0;
    // floor 0; times 2 = 2^127 − 2^65 + 2 < 2^127 → 0. First element at shift 64: 2^126/2^64 = 2^62.
    for (rq, want) in cases {
        let g = mul_graph(1, 1, rq.clone());
        assert_eq!(out1(&g, vec![x(), x()], vec![]).1, want, "{rq:?}");
    }
}

#[test]
fn mul_inputs_given_as_big_integers() {
    // The same decode through tb: a = −2^63, b = 3 → p = −3·2^63; shift 63 half_even:
    //   q = −3, r = 0 → −3. a = 2^62 + 1, b = 2 → 2^63 + 2; shift 63 half_even: q = 1, r = 2 < h → 1.
    let a = tb(1, 1, 2, vec![big(i64::MIN as i128), big((1i128 << 62) + 1)]);
    let bb = tb(1, 1, 2, vec![big(3), big(2)]);
    let g = mul_graph(1, 1, Rq::new(Round::HalfEven, PerChannel::One(63)));
    assert_eq!(out1(&g, vec![a, bb], vec![]).1, vec![-3, 1]);
}

#[test]
fn mul_channel_rules_at_load() {
    // b with neither C nor 1 channels: a 3, b 2.
    assert_eq!(
        load_refusal(&mul_graph(3, 2, Rq::new(Round::Floor, PerChannel::One(0)))),
        Code::ModelMismatch
    );
    // The broadcast is one-sided: a 1 channel, b 3 channels (b must have C = 1 or 1).
    assert_eq!(
        load_refusal(&mul_graph(1, 3, Rq::new(Round::Floor, PerChannel::One(0)))),
        Code::ModelMismatch
    );
    // mul's RQ has bias = 0 (§10.4): a bias is refused.
    let rq = Rq::new(Round::Floor, PerChannel::One(0)).bias(Placement::Post, vec![1, 1]);
    assert_eq!(load_refusal(&mul_graph(2, 2, rq)), Code::ModelMismatch);
    // The rq is over C = a's channels: a per-channel shift of b's count (1) is not C = 2 long.
    let rq = Rq::new(Round::Floor, PerChannel::Each(vec![0]));
    assert_eq!(load_refusal(&mul_graph(2, 1, rq)), Code::ModelMismatch);
    // The output has C channels: declaring 1 is refused.
    let mut b = Builder::new();
    let x = b.input(2, any());
    let z = b.input(1, any());
    let y = b.op(Op::Mul(Rq::new(Round::Floor, PerChannel::One(0))), &[x, z], 1);
    b.output(y);
    assert_eq!(load_refusal(&b.build()), Code::ModelMismatch);
}

#[test]
fn mul_sizes_must_agree_at_run_time() {
    let g = mul_graph(2, 2, Rq::new(Round::Floor, PerChannel::One(0)));
    // Different W.
    assert_eq!(
        refusal(&g, vec![t(2, 1, 2, &[0; 4]), t(2, 1, 3, &[0; 6])], vec![]),
        Code::GeometryMismatch
    );
    // Different H.
    assert_eq!(
        refusal(&g, vec![t(2, 2, 1, &[0; 4]), t(2, 1, 1, &[0; 2])], vec![]),
        Code::GeometryMismatch
    );
    // Transposed sides: [2, 2, 1] against [2, 1, 2].
    assert_eq!(
        refusal(&g, vec![t(2, 2, 1, &[0; 4]), t(2, 1, 2, &[0; 4])], vec![]),
        Code::GeometryMismatch
    );
    // A broadcast b must still have a's H and W.
    let g = mul_graph(2, 1, Rq::new(Round::Floor, PerChannel::One(0)));
    assert_eq!(
        refusal(&g, vec![t(2, 1, 2, &[0; 4]), t(1, 2, 2, &[0; 4])], vec![]),
        Code::GeometryMismatch
    );
    // Equal sides decode: a = 1 2 3 4, b = 5 6 → 5 12 / 15 24.
    assert_eq!(
        out1(&g, vec![t(2, 1, 2, &[1, 2, 3, 4]), t(1, 1, 2, &[5, 6])], vec![]).1,
        vec![5, 12, 15, 24]
    );
}

#[test]
fn mul_check_policy_on_the_output_and_a_check_input() {
    // a·b with floor shift 0, output check [−6, 6]: 2·3 = 6 decodes; 7·1 = 7 refuses field_range.
    let mut b = Builder::new();
    let x = b.input(1, check(-7, 7));
    let z = b.input(1, any());
    let y = b.op(Op::Mul(Rq::new(Round::Floor, PerChannel::One(0))), &[x, z], 1);
    b.policy(y, check(-6, 6));
    b.output(y);
    let g = b.build();
    assert_eq!(out1(&g, vec![t(1, 1, 1, &[2]), t(1, 1, 1, &[3])], vec![]).1, vec![6]);
    assert_eq!(
        refusal(&g, vec![t(1, 1, 1, &[7]), t(1, 1, 1, &[1])], vec![]),
        Code::FieldRange
    );
    // a = 8 is outside a's check range [−7, 7], even though 8·0 = 0 would pass the output check.
    assert_eq!(
        refusal(&g, vec![t(1, 1, 1, &[8]), t(1, 1, 1, &[0])], vec![]),
        Code::FieldRange
    );
}
