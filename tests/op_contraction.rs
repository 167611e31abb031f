//! §5.9 contractions: `gram` and `apply`, with their `rq` (§5.1: no multiplier,
//! no bias, one shift). Decodes worked out by hand, and every shape-rule
//! refusal: channel counts at load (`model_mismatch`), sizes at run time
//! (`geometry_mismatch`), declared sizes (§8.1 Sizes, §10.5 step 7; `apply` at
//! its declared size per docs/assumptions.md A4) and inputs past them (`too_large`).

mod common;
use common::*;
use wai_oracle::num::Round;
use wai_oracle::refusal::Code;
use wai_oracle::whg1::build::Builder;
use wai_oracle::whg1::{Contraction, Graph, Op, PerChannel, Placement, Rq};

/// `gram(A, B)` with A and B of `c` channels, both declaring `a_hw` / `b_hw`.
fn gram_graph(c: (u32, u32), a_hw: (u32, u32), b_hw: (u32, u32), k: Contraction, out_c: u32) -> Graph {
    let mut b = Builder::new();
    let x = b.input_sized(c.0, any(), a_hw.0, a_hw.1);
    let y = b.input_sized(c.1, any(), b_hw.0, b_hw.1);
    let o = b.op(Op::Gram(k), &[x, y], out_c);
    b.output(o);
    b.build()
}

/// `apply(A, V)` with no declared sizes.
fn apply_graph(a_c: u32, v_c: u32, k: Contraction, out_c: u32) -> Graph {
    let mut b = Builder::new();
    let a = b.input(a_c, any());
    let v = b.input(v_c, any());
    let o = b.op(Op::Apply(k), &[a, v], out_c);
    b.output(o);
    b.build()
}

/// `apply(A, V)` with A declaring `a_hw` and V declaring `v_hw`.
fn apply_graph_sized(c: u32, a_hw: (u32, u32), v_hw: (u32, u32), k: Contraction) -> Graph {
    let mut b = Builder::new();
    let a = b.input_sized(c, any(), a_hw.0, a_hw.1);
    let v = b.input_sized(c, any(), v_hw.0, v_hw.1);
    let o = b.op(Op::Apply(k), &[a, v], c);
    b.output(o);
    b.build()
}

// ---------------------------------------------------------------------------
// gram

// A [4, 1, 2]: c0 = 1 2, c1 = −3 1, c2 = 2 −1, c3 = 0 5.
// B [4, 1, 2]: c0 = 3 1, c1 = 1 −2, c2 = 4 3, c3 = −1 1.
const GA: [i64; 8] = [1, 2, -3, 1, 2, -1, 0, 5];
const GB: [i64; 8] = [3, 1, 1, -2, 4, 3, -1, 1];

#[test]
fn gram_groups_2_half_up_shift_1_ties_both_signs() {
    // C = 4, groups = 2, d = 2; output [4, 1, 2]: out[g·2 + i][0][j] = R(Σ A[g·2+i]·B[g·2+j], 1).
    // g = 0: (0,0) A0·B0 = 1·3 + 2·1 = 5;   (0,1) A0·B1 = 1·1 + 2·(−2) = −3;
    //        (1,0) A1·B0 = −9 + 1 = −8;     (1,1) A1·B1 = −3 − 2 = −5.
    // g = 1: (2,0) A2·B2 = 8 − 3 = 5;       (2,1) A2·B3 = −2 − 1 = −3;
    //        (3,0) A3·B2 = 0 + 15 = 15;     (3,1) A3·B3 = 0 + 5 = 5.
    // half_up, s = 1: ⌊(p + 1)/2⌋: 5 → 3, −3 → ⌊−2/2⌋ = −1, −8 → ⌊−7/2⌋ = −4, −5 → ⌊−4/2⌋ = −2,
    //   15 → 8. (Ties 2.5 → 3 and −1.5 → −1, −2.5 → −2: toward +∞.)
    let g = gram_graph((4, 4), (2, 2), (2, 2), Contraction::new(2, Round::HalfUp, 1), 4);
    let (s, v) = out1(&g, vec![t(4, 1, 2, &GA), t(4, 1, 2, &GB)], vec![]);
    assert_eq!(s, shape(4, 1, 2));
    assert_eq!(v, vec![3, -1, -4, -2, 3, -1, 8, 3]);
}

#[test]
fn gram_groups_2_floor_shift_1() {
    // The same sums under floor: ⌊p/2⌋: 5 → 2, −3 → −2, −8 → −4, −5 → −3, 15 → 7.
    let g = gram_graph((4, 4), (2, 2), (2, 2), Contraction::new(2, Round::Floor, 1), 4);
    let (_, v) = out1(&g, vec![t(4, 1, 2, &GA), t(4, 1, 2, &GB)], vec![]);
    assert_eq!(v, vec![2, -2, -4, -3, 2, -2, 7, 2]);
}

#[test]
fn gram_of_one_tensor_with_itself_half_even_shift_2() {
    // gram(X, X), groups = 1, C = 2, d = 2, X [2, 2, 2]: c0 = −3 −3 −2 0, c1 = −2 2 3 −3.
    // Sums over all H·W = 4 positions:
    //   X0·X0 = 9 + 9 + 4 + 0 = 22; X0·X1 = 6 − 6 − 6 + 0 = −6; X1·X1 = 4 + 4 + 9 + 9 = 26.
    // half_even, s = 2 (h = 2):
    //   22: q = 5, r = 2 = h, q odd → 6.  −6: q = ⌊−6/4⌋ = −2, r = 2 = h, q even → −2.
    //   26: q = 6, r = 2 = h, q even → 6.
    let mut b = Builder::new();
    let x = b.input_sized(2, any(), 2, 2);
    let o = b.op(Op::Gram(Contraction::new(1, Round::HalfEven, 2)), &[x, x], 2);
    b.output(o);
    let (s, v) = out1(&b.build(), vec![t(2, 2, 2, &[-3, -3, -2, 0, -2, 2, 3, -3])], vec![]);
    assert_eq!(s, shape(2, 1, 2));
    assert_eq!(v, vec![6, -2, -2, 6]);
}

#[test]
fn gram_shift_0_is_the_exact_sum() {
    // groups = 4 (d = 1): out[c][0][0] = A_c·B_c, shift 0 so R is the identity (any round).
    // A0·B0 = 5, A1·B1 = −5, A2·B2 = 5, A3·B3 = 5.
    let g = gram_graph((4, 4), (2, 2), (2, 2), Contraction::new(4, Round::HalfUp, 0), 4);
    let (s, v) = out1(&g, vec![t(4, 1, 2, &GA), t(4, 1, 2, &GB)], vec![]);
    assert_eq!(s, shape(4, 1, 1));
    assert_eq!(v, vec![5, -5, 5, 5]);
}

#[test]
fn gram_run_time_size_disagreements() {
    let g = gram_graph((2, 2), (4, 4), (4, 4), Contraction::new(1, Round::Floor, 0), 2);
    // A [2, 2, 2] and B [2, 2, 1]: sizes differ.
    assert_eq!(
        refusal(&g, vec![t(2, 2, 2, &[0; 8]), t(2, 2, 1, &[0; 4])], vec![]),
        Code::GeometryMismatch
    );
    // A [2, 1, 2] and B [2, 2, 1]: the same H·W = 2, but not the same shape.
    assert_eq!(
        refusal(&g, vec![t(2, 1, 2, &[0; 4]), t(2, 2, 1, &[0; 4])], vec![]),
        Code::GeometryMismatch
    );
    // Larger than the declared 4×4: too_large (run step 1), in H and in W.
    assert_eq!(
        refusal(&g, vec![t(2, 5, 1, &[0; 10]), t(2, 5, 1, &[0; 10])], vec![]),
        Code::TooLarge
    );
    assert_eq!(
        refusal(&g, vec![t(2, 1, 5, &[0; 10]), t(2, 1, 5, &[0; 10])], vec![]),
        Code::TooLarge
    );
    // B past its size is found even when A is fine.
    assert_eq!(
        refusal(&g, vec![t(2, 1, 1, &[0; 2]), t(2, 1, 5, &[0; 10])], vec![]),
        Code::TooLarge
    );
    // A [2, 1, 1], B [2, 1, 1] decode: A = 3 −1, B = 2 5: out = 3·2, 3·5, −1·2, −1·5 = 6 15 −2 −5.
    assert_eq!(
        out1(&g, vec![t(2, 1, 1, &[3, -1]), t(2, 1, 1, &[2, 5])], vec![]),
        (shape(2, 1, 2), vec![6, 15, -2, -5])
    );
}

#[test]
fn gram_load_refusals() {
    let k = || Contraction::new(2, Round::Floor, 0);
    // A and B with different channel counts.
    let g = gram_graph((4, 2), (2, 2), (2, 2), k(), 4);
    assert_eq!(load_refusal(&g), Code::ModelMismatch);
    // C = 3 is not a multiple of groups = 2.
    let g = gram_graph((3, 3), (2, 2), (2, 2), k(), 3);
    assert_eq!(load_refusal(&g), Code::ModelMismatch);
    // The output must have C channels.
    let g = gram_graph((4, 4), (2, 2), (2, 2), k(), 2);
    assert_eq!(load_refusal(&g), Code::ModelMismatch);
    // groups = 0.
    let g = gram_graph((4, 4), (2, 2), (2, 2), Contraction::new(0, Round::Floor, 0), 4);
    assert_eq!(load_refusal(&g), Code::ModelMismatch);
    // Declared sizes that disagree (4×4 and 4×3): the shape rule fails on the declared sizes (A4).
    let g = gram_graph((4, 4), (4, 4), (4, 3), k(), 4);
    assert_eq!(load_refusal(&g), Code::ModelMismatch);
    // The same graph with agreeing declared sizes loads and decodes (control): groups 2, d 2,
    // A = B = [4, 1, 1] = 1 2 3 4: out = 1·1 1·2 2·1 2·2 | 3·3 3·4 4·3 4·4.
    let g = gram_graph((4, 4), (4, 3), (4, 3), k(), 4);
    assert_eq!(
        out1(&g, vec![t(4, 1, 1, &[1, 2, 3, 4]), t(4, 1, 1, &[1, 2, 3, 4])], vec![]).1,
        vec![1, 2, 2, 4, 9, 12, 12, 16]
    );
}

#[test]
fn gram_needs_declared_sizes() {
    // Neither input declares its sizes: refused at load.
    let mut b = Builder::new();
    let x = b.input(2, any());
    let y = b.input(2, any());
    let o = b.op(Op::Gram(Contraction::new(1, Round::Floor, 0)), &[x, y], 2);
    b.output(o);
    assert_eq!(load_refusal(&b.build()), Code::ModelMismatch);
    // Only one declares: every input declares or none does.
    let mut b = Builder::new();
    let x = b.input_sized(2, any(), 2, 2);
    let y = b.input(2, any());
    let o = b.op(Op::Gram(Contraction::new(1, Round::Floor, 0)), &[x, y], 2);
    b.output(o);
    assert_eq!(load_refusal(&b.build()), Code::ModelMismatch);
}

#[test]
fn gram_rq_is_one_shift_only() {
    // §10.4: RQ with m_kind = 0, bias = 0 and s_kind = 1, shift ≤ 127.
    let with = |rq: Rq| gram_graph((2, 2), (2, 2), (2, 2), Contraction { groups: 1, rq }, 2);
    let base = || Rq::new(Round::Floor, PerChannel::One(0));
    assert_eq!(
        load_refusal(&with(base().mult(PerChannel::One(2)))),
        Code::ModelMismatch
    );
    assert_eq!(
        load_refusal(&with(base().bias(Placement::Post, vec![1, 1]))),
        Code::ModelMismatch
    );
    assert_eq!(
        load_refusal(&with(Rq::new(Round::Floor, PerChannel::Each(vec![0, 0])))),
        Code::ModelMismatch
    );
    assert_eq!(
        load_refusal(&with(Rq::new(Round::Floor, PerChannel::One(128)))),
        Code::ModelMismatch
    );
    // Shift 127 is in range: A = B = [2, 1, 1] = 1 −1, sums 1 −1 −1 1, ⌊p/2^127⌋ = 0 −1 −1 0.
    assert_eq!(
        out1(
            &with(Rq::new(Round::Floor, PerChannel::One(127))),
            vec![t(2, 1, 1, &[1, -1]), t(2, 1, 1, &[1, -1])],
            vec![]
        )
        .1,
        vec![0, -1, -1, 0]
    );
}

// ---------------------------------------------------------------------------
// apply

#[test]
fn apply_groups_2_half_up_shift_1_ties_both_signs() {
    // C = 4, groups = 2, d = 2. A [4, 1, 2]: c0 = 1 2, c1 = −1 3, c2 = 2 0, c3 = −3 2.
    // V [4, 2, 1]: c0 = 3 −1, c1 = 1 2, c2 = 5 −2, c3 = 1 1 (two positions).
    // out[g·2+i] = R(Σ_j A[g·2+i][0][j]·V[g·2+j], 1):
    //   out0 = 1·V0 + 2·V1 = 3 + 2, −1 + 4 = 5, 3 → half_up ⌊(p+1)/2⌋: 3, 2.
    //   out1 = −1·V0 + 3·V1 = −3 + 3, 1 + 6 = 0, 7 → 0, 4.
    //   out2 = 2·V2 + 0·V3 = 10, −4 → 5, −2.
    //   out3 = −3·V2 + 2·V3 = −15 + 2, 6 + 2 = −13, 8 → ⌊−12/2⌋ = −6 (tie −6.5 toward +∞), 4.
    let g = apply_graph(4, 4, Contraction::new(2, Round::HalfUp, 1), 4);
    let (s, v) = out1(
        &g,
        vec![
            t(4, 1, 2, &[1, 2, -1, 3, 2, 0, -3, 2]),
            t(4, 2, 1, &[3, -1, 1, 2, 5, -2, 1, 1]),
        ],
        vec![],
    );
    assert_eq!(s, shape(4, 2, 1));
    assert_eq!(v, vec![3, 2, 0, 4, 5, -2, -6, 4]);
}

#[test]
fn apply_half_even_shift_2() {
    // C = 2, groups = 1, d = 2. A [2, 1, 2]: c0 = 1 1, c1 = 1 −1. V [2, 1, 3]: c0 = 1 3 −5, c1 = 1 2 −1.
    //   out0 = V0 + V1 = 2, 5, −6; out1 = V0 − V1 = 0, 1, −4.
    // half_even, s = 2 (h = 2): 2 → q 0, r 2 = h, q even → 0; 5 → q 1, r 1 → 1;
    //   −6 → q −2, r 2 = h, q even → −2; 0 → 0; 1 → q 0, r 1 → 0; −4 → −1.
    let g = apply_graph(2, 2, Contraction::new(1, Round::HalfEven, 2), 2);
    let (s, v) = out1(
        &g,
        vec![t(2, 1, 2, &[1, 1, 1, -1]), t(2, 1, 3, &[1, 3, -5, 1, 2, -1])],
        vec![],
    );
    assert_eq!(s, shape(2, 1, 3));
    assert_eq!(v, vec![0, 1, -2, 0, 0, -1]);
}

#[test]
fn apply_run_time_a_must_be_c_1_c_over_groups() {
    // C = 4, groups = 2: A must be [4, 1, 2]. V [4, 1, 1].
    let g = apply_graph(4, 4, Contraction::new(2, Round::Floor, 0), 4);
    let v = || t(4, 1, 1, &[1, 2, 3, 4]);
    // A [4, 2, 2]: H ≠ 1.
    assert_eq!(
        refusal(&g, vec![t(4, 2, 2, &[0; 16]), v()], vec![]),
        Code::GeometryMismatch
    );
    // A [4, 1, 3] and A [4, 1, 1]: W ≠ d.
    assert_eq!(
        refusal(&g, vec![t(4, 1, 3, &[0; 12]), v()], vec![]),
        Code::GeometryMismatch
    );
    assert_eq!(
        refusal(&g, vec![t(4, 1, 1, &[0; 4]), v()], vec![]),
        Code::GeometryMismatch
    );
    // A [4, 1, 4] = [C, 1, C]: the d of groups = 1, not of groups = 2.
    assert_eq!(
        refusal(&g, vec![t(4, 1, 4, &[0; 16]), v()], vec![]),
        Code::GeometryMismatch
    );
    // A [4, 1, 2] decodes. A = c0 1 0, c1 0 1, c2 2 1, c3 −1 3 with V = 1 2 3 4:
    //   out0 = 1·1 + 0·2 = 1, out1 = 0·1 + 1·2 = 2, out2 = 2·3 + 1·4 = 10, out3 = −3 + 12 = 9.
    assert_eq!(
        out1(&g, vec![t(4, 1, 2, &[1, 0, 0, 1, 2, 1, -1, 3]), v()], vec![]),
        (shape(4, 1, 1), vec![1, 2, 10, 9])
    );
}

#[test]
fn apply_load_refusals() {
    let k = || Contraction::new(2, Round::Floor, 0);
    // A and V with different channel counts.
    assert_eq!(load_refusal(&apply_graph(4, 2, k(), 4)), Code::ModelMismatch);
    assert_eq!(load_refusal(&apply_graph(2, 4, k(), 4)), Code::ModelMismatch);
    // C = 3 not a multiple of groups = 2.
    assert_eq!(load_refusal(&apply_graph(3, 3, k(), 3)), Code::ModelMismatch);
    // Output channels must be C.
    assert_eq!(load_refusal(&apply_graph(4, 4, k(), 2)), Code::ModelMismatch);
    // groups = 0.
    assert_eq!(
        load_refusal(&apply_graph(4, 4, Contraction::new(0, Round::Floor, 0), 4)),
        Code::ModelMismatch
    );
}

#[test]
fn apply_at_declared_sizes() {
    let k = || Contraction::new(2, Round::Floor, 0);
    // A4: A's declared size must be [C, 1, C/groups] = [4, 1, 2].
    assert_eq!(
        load_refusal(&apply_graph_sized(4, (1, 3), (4, 4), k())),
        Code::ModelMismatch
    );
    assert_eq!(
        load_refusal(&apply_graph_sized(4, (2, 2), (4, 4), k())),
        Code::ModelMismatch
    );
    let g = apply_graph_sized(4, (1, 2), (4, 4), k());
    let a = || t(4, 1, 2, &[1, 0, 0, 1, 2, 1, -1, 3]);
    // V past its declared 4×4: too_large.
    assert_eq!(refusal(&g, vec![a(), t(4, 5, 1, &[0; 20])], vec![]), Code::TooLarge);
    // A smaller than declared ([4, 1, 1]) is within its size but breaks the shape rule at run time.
    assert_eq!(
        refusal(&g, vec![t(4, 1, 1, &[0; 4]), t(4, 1, 1, &[0; 4])], vec![]),
        Code::GeometryMismatch
    );
    // V [4, 1, 2] = c0 1 −1, c1 2 −2, c2 3 −3, c3 4 −4 decodes:
    //   out0 = V0 = 1 −1; out1 = V1 = 2 −2; out2 = 2·V2 + V3 = 10 −10; out3 = −V2 + 3·V3 = 9 −9.
    assert_eq!(
        out1(&g, vec![a(), t(4, 1, 2, &[1, -1, 2, -2, 3, -3, 4, -4])], vec![]),
        (shape(4, 1, 2), vec![1, -1, 2, -2, 10, -10, 9, -9])
    );
}

#[test]
fn gram_then_apply_channel_attention() {
    // X [2, 2, 2] declared 2×2: c0 = −3 −3 −2 0, c1 = −2 2 3 −3.
    // G = gram(X, X), groups 1, half_even, shift 2 = [[6, −2], [−2, 6]] (see
    // gram_of_one_tensor_with_itself_half_even_shift_2). G is [2, 1, 2] = [C, 1, C/groups].
    // out = apply(G, X), groups 1, half_up, shift 2:
    //   out0 = 6·X0 − 2·X1 = −18 + 4, −18 − 4, −12 − 6, 0 + 6 = −14, −22, −18, 6
    //        → ⌊(p + 2)/4⌋ = ⌊−12/4⌋ −3, ⌊−20/4⌋ −5, ⌊−16/4⌋ −4, ⌊8/4⌋ 2.
    //   out1 = −2·X0 + 6·X1 = 6 − 12, 6 + 12, 4 + 18, 0 − 18 = −6, 18, 22, −18
    //        → ⌊−4/4⌋ −1, ⌊20/4⌋ 5, ⌊24/4⌋ 6, ⌊−16/4⌋ −4.
    let mut b = Builder::new();
    let x = b.input_sized(2, any(), 2, 2);
    let gm = b.op(Op::Gram(Contraction::new(1, Round::HalfEven, 2)), &[x, x], 2);
    let o = b.op(Op::Apply(Contraction::new(1, Round::HalfUp, 2)), &[gm, x], 2);
    b.output(o);
    let (s, v) = out1(&b.build(), vec![t(2, 2, 2, &[-3, -3, -2, 0, -2, 2, 3, -3])], vec![]);
    assert_eq!(s, shape(2, 2, 2));
    assert_eq!(v, vec![-3, -5, -4, 2, -1, 5, 6, -4]);
}

/// Sums past `i128` (`ops::mac` forms them in `BigInt` once a checked step fails), at shift 0 so
/// the output is the sum itself.
#[test]
fn contraction_sums_past_i128_are_exact() {
    use num_bigint::BigInt;
    let min = BigInt::from(i64::MIN);
    let sq = &min * &min; // 2^126
    // gram(X, X) over a [1, 2, 2] plane of i64::MIN: four terms 2^126, the sum 2^128.
    let mut b = Builder::new();
    let x = b.input_sized(1, any(), 2, 2);
    let o = b.op(Op::Gram(Contraction::new(1, Round::Floor, 0)), &[x, x], 1);
    b.output(o);
    let y = decode(&b.build(), vec![t(1, 2, 2, &[i64::MIN; 4])], vec![]).expect("completes");
    assert_eq!(y[0].data, vec![&sq * 4]);
    // apply: A = [[MIN, MIN], [MIN, 1]] ([2, 1, 2]), V = [MIN, MIN] ([2, 1, 1]):
    // out[0] = 2^126 + 2^126 = 2^127, one past i128::MAX; out[1] = 2^126 − 2^63, within it.
    let g = apply_graph(2, 2, Contraction::new(1, Round::Floor, 0), 2);
    let a = t(2, 1, 2, &[i64::MIN, i64::MIN, i64::MIN, 1]);
    let y = decode(&g, vec![a, t(2, 1, 1, &[i64::MIN; 2])], vec![]).expect("completes");
    assert_eq!(y[0].data, vec![&sq * 2, &sq + &min]);
}
