//! §5.5 elementwise operators (`add`, `chunk_add`, `clamp`, `relu`, `leaky`,
//! `abs`) and §5.6 `lut16`: decodes worked out by hand from the definitions,
//! the policies of §3, the exponent rules, and every shape-rule refusal.

mod common;
use common::*;
use wai_oracle::refusal::Code;
use wai_oracle::whg1::build::Builder;
use wai_oracle::whg1::{Graph, Lut16, Op};

const MIN: i64 = i64::MIN; // −2^63
const MAX: i64 = i64::MAX; // 2^63 − 1
const P63: i128 = 1i128 << 63;

/// One single-input operator on a `c`-channel input (`check` range `any()`), output `out_c`
/// channels.
fn unary(c: u32, op: Op, out_c: u32) -> Graph {
    let mut b = Builder::new();
    let x = b.input(c, any());
    let y = b.op(op, &[x], out_c);
    b.output(y);
    b.build()
}

/// `add` of a `ca`-channel and a `cb`-channel input, output `out_c` channels, with the
/// exponents `(a, b, out)`.
fn add_graph(ca: u32, cb: u32, out_c: u32, e: (Option<i8>, Option<i8>, Option<i8>)) -> Graph {
    let mut b = Builder::new();
    let x = b.input(ca, any());
    let z = b.input(cb, any());
    let y = b.op(Op::Add, &[x, z], out_c);
    b.exponent(x, e.0).exponent(z, e.1).exponent(y, e.2);
    b.output(y);
    b.build()
}

fn add2() -> Graph {
    add_graph(2, 2, 2, (None, None, None))
}

// ---------------------------------------------------------------- add

#[test]
fn add_by_hand_including_sums_past_64_bits() {
    // a = 1 −5 / (2^63 − 1) (−2^63); b = 2 −7 / (2^63 − 1) (−2^63).
    // a + b = 3, −12, 2^64 − 2, −2^64: a sum is exact, it neither wraps nor saturates.
    let (s, v) = out1(
        &add2(),
        vec![t(2, 1, 2, &[1, -5, MAX, MIN]), t(2, 1, 2, &[2, -7, MAX, MIN])],
        vec![],
    );
    assert_eq!(s, shape(2, 1, 2));
    assert_eq!(v, vec![3, -12, 2 * P63 - 2, -2 * P63]);
}

#[test]
fn add_saturating_is_a_clamp_policy_on_its_output() {
    // Output clamp [−2^63, 2^63 − 1]: (2^63 − 1)·2 → 2^63 − 1; (−2^63)·2 → −2^63; 3 and −12 stay.
    let mut b = Builder::new();
    let x = b.input(2, any());
    let z = b.input(2, any());
    let y = b.op(Op::Add, &[x, z], 2);
    b.policy(y, clamp(MIN, MAX));
    b.output(y);
    let (_, v) = out1(
        &b.build(),
        vec![t(2, 1, 2, &[1, -5, MAX, MIN]), t(2, 1, 2, &[2, -7, MAX, MIN])],
        vec![],
    );
    assert_eq!(v, vec![3, -12, MAX as i128, MIN as i128]);
}

#[test]
fn a_clamped_output_is_what_the_next_operator_reads() {
    // add with clamp [−5, 5], then abs: 1 + 2 = 3 → 3 → 3; −5 + −7 = −12 → −5 → 5;
    // 4 + 4 = 8 → 5 → 5. (Without the clamp abs would give 3, 12, 8.)
    let mut b = Builder::new();
    let x = b.input(1, any());
    let z = b.input(1, any());
    let s = b.op(Op::Add, &[x, z], 1);
    b.policy(s, clamp(-5, 5));
    let y = b.op(Op::Abs, &[s], 1);
    b.output(y);
    let (_, v) = out1(
        &b.build(),
        vec![t(1, 1, 3, &[1, -5, 4]), t(1, 1, 3, &[2, -7, 4])],
        vec![],
    );
    assert_eq!(v, vec![3, 5, 5]);
}

#[test]
fn add_check_policy_on_the_output() {
    // check [−12, 3]: 1 + 2 = 3 and −5 + −7 = −12 sit on the ends and decode;
    // 1 + 3 = 4 (one past hi) and −6 + −7 = −13 (one past lo) are refused field_range.
    let mut b = Builder::new();
    let x = b.input(1, any());
    let z = b.input(1, any());
    let y = b.op(Op::Add, &[x, z], 1);
    b.policy(y, check(-12, 3));
    b.output(y);
    let g = b.build();
    assert_eq!(
        out1(&g, vec![t(1, 1, 2, &[1, -5]), t(1, 1, 2, &[2, -7])], vec![]).1,
        vec![3, -12]
    );
    assert_eq!(
        refusal(&g, vec![t(1, 1, 2, &[1, -5]), t(1, 1, 2, &[3, -7])], vec![]),
        Code::FieldRange
    );
    assert_eq!(
        refusal(&g, vec![t(1, 1, 2, &[1, -6]), t(1, 1, 2, &[2, -7])], vec![]),
        Code::FieldRange
    );
}

#[test]
fn add_sizes_must_agree_at_run_time() {
    // Different H.
    assert_eq!(
        refusal(&add2(), vec![t(2, 1, 2, &[0; 4]), t(2, 2, 2, &[0; 8])], vec![]),
        Code::GeometryMismatch
    );
    // Different W.
    assert_eq!(
        refusal(&add2(), vec![t(2, 1, 2, &[0; 4]), t(2, 1, 3, &[0; 6])], vec![]),
        Code::GeometryMismatch
    );
    // Same element count, sides swapped: [2, 1, 2] against [2, 2, 1].
    assert_eq!(
        refusal(&add2(), vec![t(2, 1, 2, &[0; 4]), t(2, 2, 1, &[0; 4])], vec![]),
        Code::GeometryMismatch
    );
}

#[test]
fn add_channel_counts_at_load() {
    // a 2 channels, b 3 channels: the shapes cannot be the same.
    assert_eq!(
        load_refusal(&add_graph(2, 3, 2, (None, None, None))),
        Code::ModelMismatch
    );
    // No broadcast from one channel either (unlike mul).
    assert_eq!(
        load_refusal(&add_graph(2, 1, 2, (None, None, None))),
        Code::ModelMismatch
    );
    // Output declared with other than the inputs' channel count.
    assert_eq!(
        load_refusal(&add_graph(2, 2, 1, (None, None, None))),
        Code::ModelMismatch
    );
}

#[test]
fn add_exponent_rule() {
    // §3: none of a, b, out declares an exponent, or all do and are equal.
    let ok = [
        (None, None, None),
        (Some(5), Some(5), Some(5)),
        (Some(-127), Some(-127), Some(-127)),
    ];
    for e in ok {
        let g = add_graph(1, 1, 1, e);
        // 2 + −7 = −5.
        assert_eq!(
            out1(&g, vec![t(1, 1, 1, &[2]), t(1, 1, 1, &[-7])], vec![]).1,
            vec![-5],
            "{e:?}"
        );
    }
    let bad = [
        (Some(5), Some(5), Some(6)),
        (Some(5), Some(4), Some(5)),
        (Some(5), None, Some(5)),
        (None, Some(5), None),
        (None, None, Some(0)),
        (Some(0), Some(0), None),
    ];
    for e in bad {
        assert_eq!(load_refusal(&add_graph(1, 1, 1, e)), Code::ModelMismatch, "{e:?}");
    }
}

#[test]
fn add_may_read_one_tensor_twice() {
    // assumptions A9: add(X, X) = 2X: 3 → 6, −4 → −8.
    let mut b = Builder::new();
    let x = b.input(1, any());
    let y = b.op(Op::Add, &[x, x], 1);
    b.output(y);
    assert_eq!(out1(&b.build(), vec![t(1, 1, 2, &[3, -4])], vec![]).1, vec![6, -8]);
}

// ---------------------------------------------------------------- chunk_add

fn chunk_graph(c: u32, out_c: u32, e: (Option<i8>, Option<i8>)) -> Graph {
    let mut b = Builder::new();
    let x = b.input(c, any());
    let y = b.op(Op::ChunkAdd, &[x], out_c);
    b.exponent(x, e.0).exponent(y, e.1);
    b.output(y);
    b.build()
}

#[test]
fn chunk_add_by_hand() {
    // [4, 1, 2]: c0 = 1 −2, c1 = 3 4, c2 = 10 −20, c3 = −30 40. C/2 = 2:
    // out c0 = c0 + c2 = 11 −22; out c1 = c1 + c3 = −27 44.
    let g = chunk_graph(4, 2, (None, None));
    let (s, v) = out1(&g, vec![t(4, 1, 2, &[1, -2, 3, 4, 10, -20, -30, 40])], vec![]);
    assert_eq!(s, shape(2, 1, 2));
    assert_eq!(v, vec![11, -22, -27, 44]);
    // C = 2 on values at the i64 ends: (2^63 − 1) + (2^63 − 1) = 2^64 − 2; −2^63 + −2^63 = −2^64.
    let g = chunk_graph(2, 1, (None, None));
    let (s, v) = out1(&g, vec![t(2, 1, 2, &[MAX, MIN, MAX, MIN])], vec![]);
    assert_eq!(s, shape(1, 1, 2));
    assert_eq!(v, vec![2 * P63 - 2, -2 * P63]);
}

#[test]
fn chunk_add_channel_rules_at_load() {
    // Odd C: 3 and 1.
    assert_eq!(load_refusal(&chunk_graph(3, 1, (None, None))), Code::ModelMismatch);
    assert_eq!(load_refusal(&chunk_graph(1, 1, (None, None))), Code::ModelMismatch);
    // Output declared with C channels instead of C/2.
    assert_eq!(load_refusal(&chunk_graph(4, 4, (None, None))), Code::ModelMismatch);
}

#[test]
fn chunk_add_exponent_rule() {
    // Input and output: both none, or both declared and equal.
    for e in [(None, None), (Some(2), Some(2))] {
        // 5 + −9 = −4.
        assert_eq!(
            out1(&chunk_graph(2, 1, e), vec![t(2, 1, 1, &[5, -9])], vec![]).1,
            vec![-4],
            "{e:?}"
        );
    }
    for e in [(Some(2), None), (None, Some(2)), (Some(2), Some(3))] {
        assert_eq!(load_refusal(&chunk_graph(2, 1, e)), Code::ModelMismatch, "{e:?}");
    }
}

// ---------------------------------------------------------------- clamp, relu, abs

#[test]
fn clamp_op_by_hand() {
    // clamp(v, −3, 5) = min(max(v, −3), 5): −10 → −3, −3 → −3, 0 → 0, 5 → 5, 6 → 5.
    let g = unary(1, Op::Clamp { lo: -3, hi: 5 }, 1);
    assert_eq!(
        out1(&g, vec![t(1, 1, 5, &[-10, -3, 0, 5, 6])], vec![]).1,
        vec![-3, -3, 0, 5, 5]
    );
    // One-sided, open below (lo = −2^63): only the top is cut.
    let g = unary(1, Op::Clamp { lo: MIN, hi: 0 }, 1);
    assert_eq!(
        out1(&g, vec![t(1, 1, 4, &[MIN, -1, 1, MAX])], vec![]).1,
        vec![MIN as i128, -1, 0, 0]
    );
    // One-sided, open above (hi = 2^63 − 1).
    let g = unary(1, Op::Clamp { lo: 0, hi: MAX }, 1);
    assert_eq!(
        out1(&g, vec![t(1, 1, 4, &[MIN, -1, 1, MAX])], vec![]).1,
        vec![0, 0, 1, MAX as i128]
    );
    // lo = hi: every element becomes it.
    let g = unary(2, Op::Clamp { lo: -7, hi: -7 }, 2);
    assert_eq!(
        out1(&g, vec![t(2, 1, 2, &[MIN, 0, -7, MAX])], vec![]).1,
        vec![-7, -7, -7, -7]
    );
}

#[test]
fn clamp_op_load_rules() {
    // lo > hi is out of the parameter's range.
    assert_eq!(
        load_refusal(&unary(1, Op::Clamp { lo: 1, hi: 0 }, 1)),
        Code::ModelMismatch
    );
    // Same shape: an output of other than C channels.
    assert_eq!(
        load_refusal(&unary(2, Op::Clamp { lo: 0, hi: 1 }, 1)),
        Code::ModelMismatch
    );
}

#[test]
fn relu_by_hand() {
    // max(v, 0): −5 → 0, 0 → 0, 7 → 7, −2^63 → 0, 2^63 − 1 → 2^63 − 1; shape kept.
    let g = unary(1, Op::Relu, 1);
    let (s, v) = out1(&g, vec![t(1, 5, 1, &[-5, 0, 7, MIN, MAX])], vec![]);
    assert_eq!(s, shape(1, 5, 1));
    assert_eq!(v, vec![0, 0, 7, 0, MAX as i128]);
    assert_eq!(load_refusal(&unary(1, Op::Relu, 2)), Code::ModelMismatch);
}

#[test]
fn abs_by_hand() {
    // |v|: −5 → 5, 0 → 0, 7 → 7, −2^63 → 2^63 (past i64), 2^63 − 1 → 2^63 − 1.
    let g = unary(1, Op::Abs, 1);
    let (s, v) = out1(&g, vec![t(1, 1, 5, &[-5, 0, 7, MIN, MAX])], vec![]);
    assert_eq!(s, shape(1, 1, 5));
    assert_eq!(v, vec![5, 0, 7, P63, MAX as i128]);
    assert_eq!(load_refusal(&unary(1, Op::Abs, 3)), Code::ModelMismatch);
}

#[test]
fn abs_check_policy_on_its_output_refuses_i64_min() {
    // check [0, 2^63 − 1]: |−2^63| = 2^63 is one past hi: field_range. |−(2^63 − 1)| decodes.
    let mut b = Builder::new();
    let x = b.input(1, any());
    let y = b.op(Op::Abs, &[x], 1);
    b.policy(y, check(0, MAX));
    b.output(y);
    let g = b.build();
    assert_eq!(refusal(&g, vec![t(1, 1, 1, &[MIN])], vec![]), Code::FieldRange);
    assert_eq!(out1(&g, vec![t(1, 1, 1, &[MIN + 1])], vec![]).1, vec![MAX as i128]);
}

// ---------------------------------------------------------------- leaky

#[test]
fn leaky_floors_away_from_zero_on_negatives() {
    // a = 1, f = 1: ⌊v·1/2⌋ for v < 0. −3 → ⌊−1.5⌋ = −2 (truncation would give −1);
    // −1 → ⌊−0.5⌋ = −1 (truncation 0); −4 → −2; 0 → 0; 5 → 5 (v ≥ 0 passes through).
    let g = unary(1, Op::Leaky { a: 1, f: 1 }, 1);
    assert_eq!(
        out1(&g, vec![t(1, 1, 5, &[-3, -1, -4, 0, 5])], vec![]).1,
        vec![-2, -1, -2, 0, 5]
    );
    // a = 3, f = 2: −5 → ⌊−15/4⌋ = −4 (truncation −3); −4 → −12/4 = −3; −1 → ⌊−3/4⌋ = −1; 2 → 2.
    let g = unary(1, Op::Leaky { a: 3, f: 2 }, 1);
    assert_eq!(
        out1(&g, vec![t(1, 1, 4, &[-5, -4, -1, 2])], vec![]).1,
        vec![-4, -3, -1, 2]
    );
}

#[test]
fn leaky_negative_and_zero_slope() {
    // a = −2, f = 0: −3 → 6; 4 → 4 (not multiplied). a = 0: −3 → 0, 9 → 9.
    let g = unary(1, Op::Leaky { a: -2, f: 0 }, 1);
    assert_eq!(out1(&g, vec![t(1, 1, 2, &[-3, 4])], vec![]).1, vec![6, 4]);
    let g = unary(1, Op::Leaky { a: 0, f: 0 }, 1);
    assert_eq!(out1(&g, vec![t(1, 1, 2, &[-3, 9])], vec![]).1, vec![0, 9]);
    // a = −3, f = 1: −3 → ⌊9/2⌋ = 4 (a positive product floors toward zero).
    let g = unary(1, Op::Leaky { a: -3, f: 1 }, 1);
    assert_eq!(out1(&g, vec![t(1, 1, 1, &[-3])], vec![]).1, vec![4]);
}

#[test]
fn leaky_f_63_and_products_past_64_bits() {
    // a = 1, f = 63: −1 → ⌊−1/2^63⌋ = −1; −2^63 → −1; 2^63 − 1 → unchanged.
    let g = unary(1, Op::Leaky { a: 1, f: 63 }, 1);
    assert_eq!(
        out1(&g, vec![t(1, 1, 3, &[-1, MIN, MAX])], vec![]).1,
        vec![-1, -1, MAX as i128]
    );
    // a = −2^63, f = 63: v·a = −v·2^63, so ⌊v·a/2^63⌋ = −v exactly:
    //   −2^63 → p = 2^126 → 2^63 (past i64); −1 → 1; −3 → 3.
    let g = unary(1, Op::Leaky { a: MIN, f: 63 }, 1);
    assert_eq!(out1(&g, vec![t(1, 1, 3, &[MIN, -1, -3])], vec![]).1, vec![P63, 1, 3]);
    // a = 2^63 − 1, f = 0: −2^63 → −2^126 + 2^63.
    let g = unary(1, Op::Leaky { a: MAX, f: 0 }, 1);
    assert_eq!(
        out1(&g, vec![t(1, 1, 1, &[MIN])], vec![]).1,
        vec![-(1i128 << 126) + P63]
    );
}

#[test]
fn leaky_flooring_shows_through_a_check_policy() {
    // a = 1, f = 1, output check [−2, 10]: −3 → −2 sits on lo and decodes; −5 → ⌊−2.5⌋ = −3 is
    // one past lo and is refused field_range (truncation would give −2 and pass).
    let mut b = Builder::new();
    let x = b.input(1, any());
    let y = b.op(Op::Leaky { a: 1, f: 1 }, &[x], 1);
    b.policy(y, check(-2, 10));
    b.output(y);
    let g = b.build();
    assert_eq!(out1(&g, vec![t(1, 1, 2, &[-3, 10])], vec![]).1, vec![-2, 10]);
    assert_eq!(refusal(&g, vec![t(1, 1, 1, &[-5])], vec![]), Code::FieldRange);
}

#[test]
fn leaky_load_rules() {
    // f in 0..=63: 64 is refused.
    assert_eq!(
        load_refusal(&unary(1, Op::Leaky { a: 1, f: 64 }, 1)),
        Code::ModelMismatch
    );
    // Same shape: output of other than C channels.
    assert_eq!(
        load_refusal(&unary(2, Op::Leaky { a: 1, f: 1 }, 1)),
        Code::ModelMismatch
    );
}

// ---------------------------------------------------------------- input policies, run order

#[test]
fn a_clamp_input_is_clamped_before_the_operator() {
    // Input clamp [−4, 3], then abs: −10 → −4 → 4; 10 → 3 → 3; −2 → 2.
    // (Unclamped, abs would give 10, 10, 2.)
    let mut b = Builder::new();
    let x = b.input(1, clamp(-4, 3));
    let y = b.op(Op::Abs, &[x], 1);
    b.output(y);
    assert_eq!(
        out1(&b.build(), vec![t(1, 1, 3, &[-10, 10, -2])], vec![]).1,
        vec![4, 3, 2]
    );
}

#[test]
fn a_check_input_out_of_range_is_field_range() {
    // Input check [−4, 3], then relu: −4 and 3 decode (0, 3); −5 and 4 are refused, even though
    // relu(−5) = 0 would be in range.
    let mut b = Builder::new();
    let x = b.input(1, check(-4, 3));
    let y = b.op(Op::Relu, &[x], 1);
    b.output(y);
    let g = b.build();
    assert_eq!(out1(&g, vec![t(1, 1, 2, &[-4, 3])], vec![]).1, vec![0, 3]);
    assert_eq!(refusal(&g, vec![t(1, 1, 1, &[-5])], vec![]), Code::FieldRange);
    assert_eq!(refusal(&g, vec![t(1, 1, 1, &[4])], vec![]), Code::FieldRange);
}

#[test]
fn a_check_on_an_intermediate_stops_the_decode() {
    // x → abs (check [0, 5]) → leaky(1, 1) → out. −5 → 5 → 5; −6 → 6 is past 5: field_range.
    let mut b = Builder::new();
    let x = b.input(1, any());
    let m = b.op(Op::Abs, &[x], 1);
    b.policy(m, check(0, 5));
    let y = b.op(Op::Leaky { a: 1, f: 1 }, &[m], 1);
    b.output(y);
    let g = b.build();
    assert_eq!(out1(&g, vec![t(1, 1, 2, &[-5, 2])], vec![]).1, vec![5, 2]);
    assert_eq!(refusal(&g, vec![t(1, 1, 2, &[-6, 2])], vec![]), Code::FieldRange);
}

#[test]
fn run_steps_come_in_order() {
    // A graph with one scalar [0, 3] (unread) and an add whose a has a check [−1, 1].
    let mut b = Builder::new();
    let x = b.input(1, check(-1, 1));
    let z = b.input(1, any());
    b.scalar(0, 3);
    let y = b.op(Op::Add, &[x, z], 1);
    b.output(y);
    let g = b.build();
    // In range everywhere: 1 + 2 = 3.
    assert_eq!(out1(&g, vec![t(1, 1, 1, &[1]), t(1, 1, 1, &[2])], vec![0]).1, vec![3]);
    // A scalar past its range (step 2) comes before the sizes' disagreement (step 3).
    assert_eq!(
        refusal(&g, vec![t(1, 1, 1, &[0]), t(1, 1, 2, &[0, 0])], vec![4]),
        Code::FieldRange
    );
    assert_eq!(
        refusal(&g, vec![t(1, 1, 1, &[0]), t(1, 1, 1, &[0])], vec![-1]),
        Code::FieldRange
    );
    // The sizes' disagreement (step 3) comes before the input's check (step 4).
    assert_eq!(
        refusal(&g, vec![t(1, 1, 1, &[9]), t(1, 1, 2, &[0, 0])], vec![3]),
        Code::GeometryMismatch
    );
    // With sizes that agree, the input's check refuses.
    assert_eq!(
        refusal(&g, vec![t(1, 1, 1, &[9]), t(1, 1, 1, &[0])], vec![3]),
        Code::FieldRange
    );
}

// ---------------------------------------------------------------- lut16

/// T[0] = 0 and T[i] = 32768 − i for i ≥ 1, so T[v + 32768] = −v for v in [−32767, 32767];
/// then T[32768 + 5] = 1234 and T[32768 − 7] = −4321 to show a lookup, not a formula.
fn table() -> Vec<i16> {
    let mut t: Vec<i16> = (0..65536i32)
        .map(|i| if i == 0 { 0 } else { (32768 - i) as i16 })
        .collect();
    t[32768 + 5] = 1234;
    t[32768 - 7] = -4321;
    t
}

/// One lut16 on a one-channel input `check [−32767, 32767]`, with exponents on the
/// parameters `(e_in, e_out)` and on the tensors `(input, output)`.
fn lut_graph(table: Vec<i16>, params: (Option<i8>, Option<i8>), tensors: (Option<i8>, Option<i8>)) -> Graph {
    let mut b = Builder::new();
    let x = b.input(1, check(-32767, 32767));
    let y = b.op(
        Op::Lut16(Lut16 {
            e_in: params.0,
            e_out: params.1,
            table,
        }),
        &[x],
        1,
    );
    b.exponent(x, tensors.0).exponent(y, tensors.1);
    b.output(y);
    b.build()
}

#[test]
fn lut16_looks_up_t_at_v_plus_32768() {
    // −32767 → T[1] = 32767; 32767 → T[65535] = −32767; 0 → T[32768] = 0; −1 → T[32767] = 1;
    // 6 → T[32774] = −6; 5 → T[32773] = 1234; −7 → T[32761] = −4321.
    let g = lut_graph(table(), (None, None), (None, None));
    let (s, v) = out1(&g, vec![t(1, 1, 7, &[-32767, 32767, 0, -1, 6, 5, -7])], vec![]);
    assert_eq!(s, shape(1, 1, 7));
    assert_eq!(v, vec![32767, -32767, 0, 1, -6, 1234, -4321]);
}

#[test]
fn lut16_on_several_channels_and_a_clamp_output() {
    // [2, 1, 2]: 5 −7 / 100 −100 → 1234 −4321 / −100 100; with an output clamp [−1000, 1000]:
    // 1000 −1000 / −100 100.
    let mut b = Builder::new();
    let x = b.input(2, check(-32767, 32767));
    let y = b.op(
        Op::Lut16(Lut16 {
            e_in: None,
            e_out: None,
            table: table(),
        }),
        &[x],
        2,
    );
    b.policy(y, clamp(-1000, 1000));
    b.output(y);
    assert_eq!(
        out1(&b.build(), vec![t(2, 1, 2, &[5, -7, 100, -100])], vec![]).1,
        vec![1000, -1000, -100, 100]
    );
}

#[test]
fn lut16_input_check_range() {
    // The input's check [−32767, 32767]: −32768 (whose index would be T[0]) and 32768 are refused
    // field_range before the lookup.
    let g = lut_graph(table(), (None, None), (None, None));
    assert_eq!(refusal(&g, vec![t(1, 1, 1, &[-32768])], vec![]), Code::FieldRange);
    assert_eq!(refusal(&g, vec![t(1, 1, 1, &[32768])], vec![]), Code::FieldRange);
}

#[test]
fn lut16_table_rules_at_load() {
    // T[0] ≠ 0.
    let mut bad = table();
    bad[0] = 1;
    assert_eq!(
        load_refusal(&lut_graph(bad, (None, None), (None, None))),
        Code::ModelMismatch
    );
    // A table of 65,535 entries: the parameter length is not exact.
    let mut short = table();
    short.pop();
    assert_eq!(
        load_refusal(&lut_graph(short, (None, None), (None, None))),
        Code::ModelMismatch
    );
    // Output of other than the input's channels.
    let mut b = Builder::new();
    let x = b.input(1, check(-100, 100));
    let y = b.op(
        Op::Lut16(Lut16 {
            e_in: None,
            e_out: None,
            table: table(),
        }),
        &[x],
        2,
    );
    b.output(y);
    assert_eq!(load_refusal(&b.build()), Code::ModelMismatch);
}

#[test]
fn lut16_exponent_rule() {
    // e_in against the input tensor's exponent, e_out against the output's: both none or equal.
    // The two pairs are independent (e_in need not equal e_out).
    let ok = [
        ((None, None), (None, None)),
        ((Some(3), Some(-2)), (Some(3), Some(-2))),
        ((Some(3), None), (Some(3), None)),
        ((None, Some(15)), (None, Some(15))),
    ];
    for (p, e) in ok {
        // 5 → 1234.
        assert_eq!(
            out1(&lut_graph(table(), p, e), vec![t(1, 1, 1, &[5])], vec![]).1,
            vec![1234],
            "{p:?} {e:?}"
        );
    }
    let bad = [
        ((Some(3), None), (None, None)),
        ((None, None), (Some(3), None)),
        ((Some(3), None), (Some(4), None)),
        ((None, Some(1)), (None, Some(2))),
        ((None, Some(1)), (None, None)),
        ((None, None), (None, Some(1))),
        // Swapped: e_in matches the output and e_out the input.
        ((Some(3), Some(-2)), (Some(-2), Some(3))),
    ];
    for (p, e) in bad {
        assert_eq!(
            load_refusal(&lut_graph(table(), p, e)),
            Code::ModelMismatch,
            "{p:?} {e:?}"
        );
    }
}
