//! §5.7 normalisation: `igdn`, `layernorm_c`, `l2norm` and `softmax`. Every
//! expected value is worked out by hand from the definitions of §2 and §5.7;
//! the refusals are those of §4, §8.1 "Sizes" and §10.5.
//!
//! Values of §2 used throughout (worked out once here):
//! - `exp_neg_q16(0)`: u = 0, n = 0, r = 0, t = 88670, t2 = 7862368900,
//!   q = ⌊7862368900 / 65536⌋ = 119970, c = 23495·119970 = 2818695150,
//!   y = ⌊2818695150 / 65536⌋ + 22544 = 43009 + 22544 = 65553; result 65553.
//! - `exp_neg_q16(−1)`: t = 88669, t2 = 7862191561, q = 119967, c = 2818624665,
//!   y = 43008 + 22544 = 65552.
//! - `exp_neg_q16(−2)`: t = 88668, t2 = 7862014224, q = 119964, c = 2818554180,
//!   y = 43007 + 22544 = 65551.
//! - `exp_neg_q16(−5)`: t = 88665, t2 = 7861482225, q = 119956, c = 2818366220,
//!   y = 43004 + 22544 = 65548.
//! - `exp_neg_q16(−21)`: t = 88649, t2 = 7858645201, q = 119913, c = 2817355935,
//!   y = 42989 + 22544 = 65533.
//! - `exp_neg_q16(−45426·n)`: r = 0, so y = 65553 as at 0, and the result is
//!   ⌊65553 / 2^n⌋: 32776 at n = 1, 1 at n = 16 (65553 < 2^17), 0 at n = 62,
//!   and 0 at n ≥ 63 by the rule "0 if n ≥ 63".

mod common;
use common::*;
use wai_oracle::refusal::Code;
use wai_oracle::whg1::build::Builder;
use wai_oracle::whg1::{Graph, Igdn, LayernormC, Op, Policy};

/// One operator on one input of `c` channels, output `out_c` channels.
fn one_op(c: u32, policy: Policy, sizes: Option<(u32, u32)>, op: Op, out_c: u32) -> Graph {
    let mut b = Builder::new();
    let x = match sizes {
        Some((h, w)) => b.input_sized(c, policy, h, w),
        None => b.input(c, policy),
    };
    let y = b.op(op, &[x], out_c);
    b.output(y);
    b.build()
}

// ---------------------------------------------------------------------------
// igdn

#[test]
fn igdn_floors_each_term_then_sums() {
    // C = 2, gf = 2, frac = 1, γ = [[3, 5], [7, −2]] (row i = output channel), β = [1, −3].
    // Input [2, 1, 3]: c0 = 3 −5 1, c1 = −1 2 3.
    // p0 (x0 = 3, x1 = −1; x0² = 9, x1² = 1):
    //   N0 = 1 + ⌊3·9/4⌋ + ⌊5·1/4⌋ = 1 + ⌊27/4⌋ + ⌊5/4⌋ = 1 + 6 + 1 = 8, r0 = isqrt(8) = 2,
    //        out = ⌊3·2/2⌋ = 3.
    //        (Flooring the sum once: 1 + ⌊(27 + 5)/4⌋ = 9, r = 3, out = ⌊9/2⌋ = 4: a different value.)
    //   N1 = −3 + ⌊7·9/4⌋ + ⌊−2·1/4⌋ = −3 + 15 + (−1) = 11, r1 = 3, out = ⌊−1·3/2⌋ = ⌊−1.5⌋ = −2.
    // p1 (x0 = −5, x1 = 2; 25, 4):
    //   N0 = 1 + ⌊75/4⌋ + ⌊20/4⌋ = 1 + 18 + 5 = 24, r = 4, out = ⌊−5·4/2⌋ = −10.
    //   N1 = −3 + ⌊175/4⌋ + ⌊−8/4⌋ = −3 + 43 − 2 = 38, r = 6, out = ⌊2·6/2⌋ = 6.
    // p2 (x0 = 1, x1 = 3; 1, 9):
    //   N0 = 1 + ⌊3/4⌋ + ⌊45/4⌋ = 1 + 0 + 11 = 12, r = 3, out = ⌊1·3/2⌋ = 1.
    //   N1 = −3 + ⌊7/4⌋ + ⌊−18/4⌋ = −3 + 1 − 5 = −7, r = isqrt(max(0, −7)) = 0, out = 0.
    let g = one_op(
        2,
        any(),
        None,
        Op::Igdn(Igdn::new(2, 1, vec![3, 5, 7, -2], vec![1, -3])),
        2,
    );
    let (s, v) = out1(&g, vec![t(2, 1, 3, &[3, -5, 1, -1, 2, 3])], vec![]);
    assert_eq!(s, shape(2, 1, 3));
    assert_eq!(v, vec![3, -10, 1, -2, 6, 0]);
}

#[test]
fn igdn_single_channel_gf_0_frac_0() {
    // C = 1, gf = 0, frac = 0, γ = [[2]], β = [−1]: N = −1 + 2·x², r = isqrt(N), out = x·r.
    // x = −3: N = −1 + 18 = 17, r = 4, out = −12.  x = 0: N = −1, r = 0, out = 0.
    // x = 5: N = 49, r = 7, out = 35.
    let g = one_op(1, any(), None, Op::Igdn(Igdn::new(0, 0, vec![2], vec![-1])), 1);
    let (s, v) = out1(&g, vec![t(1, 3, 1, &[-3, 0, 5])], vec![]);
    assert_eq!(s, shape(1, 3, 1));
    assert_eq!(v, vec![-12, 0, 35]);
}

#[test]
fn igdn_channel_and_parameter_refusals() {
    // The output's channel count must be C (§10.3): 3 ≠ 2.
    let g = one_op(2, any(), None, Op::Igdn(Igdn::new(0, 0, vec![1; 4], vec![0; 2])), 3);
    assert_eq!(load_refusal(&g), Code::ModelMismatch);
    // γ must be C×C: 3 entries for C = 2 is a parameter length that is not exact (§10.4).
    let g = one_op(2, any(), None, Op::Igdn(Igdn::new(0, 0, vec![1; 3], vec![0; 2])), 2);
    assert_eq!(load_refusal(&g), Code::ModelMismatch);
    // gf in 0..=127 (§5.7): 128 is refused.
    let g = one_op(1, any(), None, Op::Igdn(Igdn::new(128, 0, vec![1], vec![0])), 1);
    assert_eq!(load_refusal(&g), Code::ModelMismatch);
    // frac in 0..=127: 128 is refused.
    let g = one_op(1, any(), None, Op::Igdn(Igdn::new(0, 128, vec![1], vec![0])), 1);
    assert_eq!(load_refusal(&g), Code::ModelMismatch);
    // A run-time input whose channel count differs from its record: run step 1, model_mismatch.
    let g = one_op(2, any(), None, Op::Igdn(Igdn::new(0, 0, vec![1; 4], vec![0; 2])), 2);
    assert_eq!(refusal(&g, vec![t(3, 1, 1, &[1, 2, 3])], vec![]), Code::ModelMismatch);
}

// ---------------------------------------------------------------------------
// layernorm_c

#[test]
fn layernorm_c_by_hand() {
    // C = 3, one position x = 10 20 60, ε = 1, γ = [65536, 32768, −65536], β = [0, 1, −1].
    // S = 90, M = 90 + ⌊3/2⌋·1 = 91, m = trunc(91/3) = 30, d = −20 −10 30,
    // T = 400 + 100 + 900 = 1400, V = ⌊1400/3⌋ = 466, U = 467, isqrt(467) = 21 (441 ≤ 467 < 484),
    // k = ⌊2^32/21⌋ = 204522252.
    // n = ⌊−20·k/2^16⌋ = ⌊−4090445040/65536⌋ = ⌊−62415.2…⌋ = −62416,
    //     ⌊−10·k/2^16⌋ = ⌊−2045222520/65536⌋ = ⌊−31207.6…⌋ = −31208,
    //     ⌊30·k/2^16⌋  = ⌊6135667560/65536⌋ = ⌊93622.8…⌋ = 93622.
    // out = ⌊−62416·65536/65536⌋ + 0 = −62416; ⌊−31208·32768/65536⌋ + 1 = −15604 + 1 = −15603;
    //       ⌊93622·(−65536)/65536⌋ − 1 = −93623.
    let g = one_op(
        3,
        any(),
        None,
        Op::LayernormC(LayernormC::new(1, vec![65536, 32768, -65536], vec![0, 1, -1])),
        3,
    );
    let (s, v) = out1(&g, vec![t(3, 1, 1, &[10, 20, 60])], vec![]);
    assert_eq!(s, shape(3, 1, 1));
    assert_eq!(v, vec![-62416, -15603, -93623]);
}

#[test]
fn layernorm_c_odd_c_mean_rounds_to_nearest() {
    // C = 3 (odd: S/C is never a half), ε = 1, γ = [1, −3, 40000], β = [5, 0, −5].
    // Input [3, 1, 2]: p0 x = 3 −7 2; p1 x = −3 7 −2.
    // p0: S = −2, M = −2 + 1·(−1) = −3, m = trunc(−3/3) = −1 (trunc(S/C) would be 0),
    //     d = 4 −6 3, T = 16 + 36 + 9 = 61, V = ⌊61/3⌋ = 20, U = 21, isqrt = 4, k = 2^32/4 = 2^30,
    //     n = ⌊d·2^30/2^16⌋ = d·2^14 = 65536 −98304 49152,
    //     out = ⌊65536·1/65536⌋ + 5 = 6; ⌊(−98304)(−3)/65536⌋ = ⌊294912/65536⌋ = ⌊4.5⌋ = 4;
    //           ⌊49152·40000/65536⌋ − 5 = ⌊1966080000/65536⌋ − 5 = 30000 − 5 = 29995.
    // p1: S = 2, M = 3, m = trunc(3/3) = 1 (⌊S/C⌋ would be 0), d = −4 6 −3, T = 61, V = 20, k = 2^30,
    //     n = −65536 98304 −49152,
    //     out = −1 + 5 = 4; ⌊98304·(−3)/65536⌋ = ⌊−4.5⌋ = −5; −30000 − 5 = −30005.
    let g = one_op(
        3,
        any(),
        None,
        Op::LayernormC(LayernormC::new(1, vec![1, -3, 40000], vec![5, 0, -5])),
        3,
    );
    let (s, v) = out1(&g, vec![t(3, 1, 2, &[3, -3, -7, 7, 2, -2])], vec![]);
    assert_eq!(s, shape(3, 1, 2));
    assert_eq!(v, vec![6, 4, 4, -5, 29995, -30005]);
}

#[test]
fn layernorm_c_even_c_half_mean_rounds_away_from_zero() {
    // C = 4, ε = 1, γ = [65536, 65536, −65536, −1], β = 0. Input [4, 1, 2]:
    // p0 x = 0 1 2 3: S = 6, S/C = 1.5. M = 6 + 2·1 = 8, m = trunc(8/4) = 2
    //     (floor and trunc of 1.5 give 1). d = −2 −1 0 1, T = 4 + 1 + 0 + 1 = 6, V = ⌊6/4⌋ = 1,
    //     U = 2, isqrt = 1, k = 2^32, n = d·2^32/2^16 = d·65536 = −131072 −65536 0 65536,
    //     out = −131072, −65536, 0, ⌊65536·(−1)/65536⌋ = −1.
    //     (With m = 1: d = −1 0 1 2 and out = −65536, 0, −65536, −2.)
    // p1 x = −3 −2 −1 0: S = −6, S/C = −1.5. M = −6 − 2 = −8, m = trunc(−8/4) = −2
    //     (trunc and half_up of −1.5 give −1). d = −1 0 1 2, T = 6, V = 1, k = 2^32,
    //     n = −65536 0 65536 131072, out = −65536, 0, ⌊65536·(−65536)/65536⌋ = −65536,
    //     ⌊131072·(−1)/65536⌋ = −2.
    let g = one_op(
        4,
        any(),
        None,
        Op::LayernormC(LayernormC::new(1, vec![65536, 65536, -65536, -1], vec![0; 4])),
        4,
    );
    let (s, v) = out1(&g, vec![t(4, 1, 2, &[0, -3, 1, -2, 2, -1, 3, 0])], vec![]);
    assert_eq!(s, shape(4, 1, 2));
    // CHW: c0 = (p0, p1), c1 = …
    assert_eq!(v, vec![-131072, -65536, -65536, 0, 0, -65536, -1, -2]);
}

#[test]
fn layernorm_c_even_c_two_half_mean_both_signs() {
    // C = 2, ε = 1, γ = [65536, 65536], β = [0, 0].
    // p0 x = 1 2: S = 3, M = 3 + 1 = 4, m = trunc(4/2) = 2. d = −1 0, T = 1, V = ⌊1/2⌋ = 0, U = 1,
    //     k = ⌊2^32/1⌋ = 2^32, n = d·65536 = −65536 0, out = −65536 0.
    //     (With m = 1, d = 0 1 and out = 0 65536.)
    // p1 x = −1 −2: S = −3, M = −3 − 1 = −4, m = −2. d = 1 0, T = 1, V = 0, U = 1, k = 2^32,
    //     out = 65536 0. (With m = −1, d = 0 −1 and out = 0 −65536.)
    let g = one_op(
        2,
        any(),
        None,
        Op::LayernormC(LayernormC::new(1, vec![65536, 65536], vec![0, 0])),
        2,
    );
    let (_, v) = out1(&g, vec![t(2, 1, 2, &[1, -1, 2, -2])], vec![]);
    assert_eq!(v, vec![-65536, 65536, 0, 0]);
}

#[test]
fn layernorm_c_epsilon_2_pow_64_minus_1_is_not_wrapped_or_saturated() {
    // C = 2, ε = 2^64 − 1, γ = [65536, 100000], β = [7, −7]. Input [2, 1, 2].
    // p0 x = 5 −3: S = 2, M = 2 + 1 = 3, m = trunc(3/2) = 1, d = 4 −4, T = 32, V = 16,
    //     U = 16 + 2^64 − 1 = 2^64 + 15 (past 64 bits). isqrt(U) = 2^32, since
    //     2^64 ≤ U < (2^32 + 1)² = 2^64 + 2^33 + 1. k = ⌊2^32/2^32⌋ = 1.
    //     n = ⌊4/65536⌋ = 0, ⌊−4/65536⌋ = −1.
    //     out = ⌊0·65536/65536⌋ + 7 = 7; ⌊−1·100000/65536⌋ − 7 = ⌊−1.53⌋ − 7 = −2 − 7 = −9.
    //     (U wrapped to 64 bits would be 15: isqrt 3, k = 1431655765, n far from 0.)
    // p1 x = 2^17, −2^17: S = 0, sgn 0, M = 0, m = 0, d = ±131072, T = 2·2^34 = 2^35,
    //     V = 2^34, U = 2^64 + 2^34 − 1. (2^32 + 1)² = 2^64 + 2^33 + 1 ≤ U < (2^32 + 2)² =
    //     2^64 + 2^34 + 4, so isqrt(U) = 2^32 + 1 and k = ⌊2^32/(2^32 + 1)⌋ = 0.
    //     n = 0 0, out = β = 7 −7. (U saturated at 2^64 − 1 would give k = 1, n = ±2.)
    let g = one_op(
        2,
        any(),
        None,
        Op::LayernormC(LayernormC::new(u64::MAX, vec![65536, 100000], vec![7, -7])),
        2,
    );
    let (_, v) = out1(&g, vec![t(2, 1, 2, &[5, 131072, -3, -131072])], vec![]);
    assert_eq!(v, vec![7, 7, -9, -7]);
}

#[test]
fn layernorm_c_channel_and_parameter_refusals() {
    // Output channels must be C: 2 ≠ 3.
    let g = one_op(
        3,
        any(),
        None,
        Op::LayernormC(LayernormC::new(1, vec![1; 3], vec![0; 3])),
        2,
    );
    assert_eq!(load_refusal(&g), Code::ModelMismatch);
    // γ must have C entries: 2 for C = 3.
    let g = one_op(
        3,
        any(),
        None,
        Op::LayernormC(LayernormC::new(1, vec![1; 2], vec![0; 3])),
        3,
    );
    assert_eq!(load_refusal(&g), Code::ModelMismatch);
    // ε in 1..=2^64 − 1: 0 is refused.
    let g = one_op(
        3,
        any(),
        None,
        Op::LayernormC(LayernormC::new(0, vec![1; 3], vec![0; 3])),
        3,
    );
    assert_eq!(load_refusal(&g), Code::ModelMismatch);
}

// ---------------------------------------------------------------------------
// l2norm

#[test]
fn l2norm_over_every_position_of_a_channel() {
    // ε = 1, input [2, 2, 2] (declared 4×4).
    // c0 = 3 −4 1 0: T = 9 + 16 + 1 + 0 = 26, U = 27, isqrt = 5, k = ⌊2^32/5⌋ = 858993459.
    //   out = ⌊3k/2^16⌋ = ⌊2576980377/65536⌋ = ⌊39321.6⌋ = 39321;
    //         ⌊−4k/2^16⌋ = ⌊−3435973836/65536⌋ = ⌊−52428.8⌋ = −52429;
    //         ⌊k/2^16⌋ = ⌊13107.2⌋ = 13107; 0.
    // c1 = −7 0 0 0: T = 49, U = 50, isqrt = 7, k = ⌊2^32/7⌋ = 613566756,
    //   out = ⌊−7k/2^16⌋ = ⌊−4294967292/65536⌋ = ⌊−65535.99994⌋ = −65536; 0 0 0.
    let g = one_op(2, any(), Some((4, 4)), Op::L2norm { eps: 1 }, 2);
    let (s, v) = out1(&g, vec![t(2, 2, 2, &[3, -4, 1, 0, -7, 0, 0, 0])], vec![]);
    assert_eq!(s, shape(2, 2, 2));
    assert_eq!(v, vec![39321, -52429, 13107, 0, -65536, 0, 0, 0]);
}

#[test]
fn l2norm_epsilon_2_pow_64_minus_1() {
    // ε = 2^64 − 1, input [2, 1, 2].
    // c0 = 5 −5: T = 50, U = 2^64 + 49, isqrt = 2^32 (< (2^32 + 1)² = 2^64 + 2^33 + 1), k = 1,
    //   out = ⌊5/65536⌋ = 0, ⌊−5/65536⌋ = −1. (Wrapped U = 49: k = ⌊2^32/7⌋, out far from 0.)
    // c1 = 2^17 −1: T = 2^34 + 1, U = 2^64 + 2^34, isqrt = 2^32 + 1
    //   ((2^32 + 1)² = 2^64 + 2^33 + 1 ≤ U < 2^64 + 2^34 + 4 = (2^32 + 2)²), k = 0, out = 0 0.
    //   (U saturated at 2^64 − 1: isqrt 2^32 − 1, k = 1, out = 2 −1.)
    let g = one_op(2, any(), Some((1, 2)), Op::L2norm { eps: u64::MAX }, 2);
    let (_, v) = out1(&g, vec![t(2, 1, 2, &[5, -5, 131072, -1])], vec![]);
    assert_eq!(v, vec![0, -1, 0, 0]);
}

#[test]
fn l2norm_needs_declared_sizes_and_refuses_larger_inputs() {
    // Without declared sizes the graph is refused at load (§8.1 Sizes, §10.5 step 7).
    let g = one_op(1, any(), None, Op::L2norm { eps: 1 }, 1);
    assert_eq!(load_refusal(&g), Code::ModelMismatch);
    // Declared 2×3: a 3×1 input (H > max_h) and a 1×4 input (W > max_w) are too_large.
    let g = one_op(1, any(), Some((2, 3)), Op::L2norm { eps: 1 }, 1);
    assert_eq!(refusal(&g, vec![t(1, 3, 1, &[1, 2, 3])], vec![]), Code::TooLarge);
    assert_eq!(refusal(&g, vec![t(1, 1, 4, &[1, 2, 3, 4])], vec![]), Code::TooLarge);
    // At the declared size it decodes: the value 1 in a 2×3 plane of zeros gives T = 1, U = 2,
    // isqrt(2) = 1, k = 2^32; out = ⌊1·2^32/2^16⌋ = 65536 there and ⌊0·k/2^16⌋ = 0 elsewhere.
    let (s, v) = out1(&g, vec![t(1, 2, 3, &[0, 0, 0, 0, 1, 0])], vec![]);
    assert_eq!(s, shape(1, 2, 3));
    assert_eq!(v, vec![0, 0, 0, 0, 65536, 0]);
    // Output channels must equal the input's; ε = 0 is out of range.
    let g = one_op(2, any(), Some((2, 2)), Op::L2norm { eps: 1 }, 1);
    assert_eq!(load_refusal(&g), Code::ModelMismatch);
    let g = one_op(1, any(), Some((2, 2)), Op::L2norm { eps: 0 }, 1);
    assert_eq!(load_refusal(&g), Code::ModelMismatch);
}

// ---------------------------------------------------------------------------
// softmax

#[test]
fn softmax_rows_by_hand_need_not_sum_to_2_pow_16() {
    // Input [2, 2, 3]; each (c, y) row normalised along W.
    // (c0, y0) = 0 0 0: m = 0, e = 65553 ×3, Σ = 196659, ⌊Σ/2⌋ = 98329,
    //   out = ⌊(65553·65536 + 98329)/196659⌋ = ⌊4296179737/196659⌋ = ⌊21845.8⌋ = 21845 ×3;
    //   sum 65535 ≠ 65536.
    // (c0, y1) = 5 −45421 4: m = 5, diffs 0 −45426 −1, e = 65553 32776 65552, Σ = 163881,
    //   ⌊Σ/2⌋ = 81940. out = ⌊4296163348/163881⌋ = 26215, ⌊(32776·65536 + 81940)/163881⌋ =
    //   ⌊2148089876/163881⌋ = 13107, ⌊(65552·65536 + 81940)/163881⌋ = ⌊4296097812/163881⌋ = 26214;
    //   sum 65536.
    // (c1, y0) = 0 0 −21: e = 65553 65553 65533, Σ = 196639, ⌊Σ/2⌋ = 98319,
    //   out = ⌊(65553·65536 + 98319)/196639⌋ = ⌊4296179727/196639⌋ = ⌊21848.06⌋ = 21848 (twice),
    //   ⌊(65533·65536 + 98319)/196639⌋ = ⌊4294869007/196639⌋ = ⌊21841.4⌋ = 21841; sum 65537 ≠ 65536.
    // (c1, y1) = 3 −2 1: m = 3, diffs 0 −5 −2, e = 65553 65548 65551, Σ = 196652, ⌊Σ/2⌋ = 98326,
    //   out = ⌊4296179734/196652⌋ = 21846, ⌊4295852054/196652⌋ = 21844, ⌊4296048662/196652⌋ = 21845;
    //   sum 65535.
    let g = one_op(2, any(), Some((4, 4)), Op::Softmax, 2);
    let (s, v) = out1(
        &g,
        vec![t(2, 2, 3, &[0, 0, 0, 5, -45421, 4, 0, 0, -21, 3, -2, 1])],
        vec![],
    );
    assert_eq!(s, shape(2, 2, 3));
    assert_eq!(
        v,
        vec![
            21845, 21845, 21845, 26215, 13107, 26214, 21848, 21848, 21841, 21846, 21844, 21845
        ]
    );
    assert_eq!(v[0..3].iter().sum::<i128>(), 65535);
    assert_eq!(v[6..9].iter().sum::<i128>(), 65537);
}

#[test]
fn softmax_exp_at_n_16_62_63_64() {
    // One row of 5: −10, −10 − 16·45426 = −726826, −10 − 62·45426 = −2816422,
    // −10 − 63·45426 = −2861848, −10 − 64·45426 = −2907274. m = −10; diffs 0, −16·45426, −62·45426,
    // −63·45426, −64·45426: n = 0, 16, 62, 63, 64 with r = 0 each.
    // e = 65553, ⌊65553/2^16⌋ = 1, ⌊65553/2^62⌋ = 0, 0 (n ≥ 63), 0 (n ≥ 63).
    // Σ = 65554, ⌊Σ/2⌋ = 32777. out = ⌊(65553·65536 + 32777)/65554⌋ = ⌊4296114185/65554⌋ = 65535,
    // ⌊(65536 + 32777)/65554⌋ = ⌊98313/65554⌋ = 1, ⌊32777/65554⌋ = 0 (three times).
    let g = one_op(1, any(), Some((1, 8)), Op::Softmax, 1);
    let (_, v) = out1(
        &g,
        vec![t(1, 1, 5, &[-10, -726826, -2816422, -2861848, -2907274])],
        vec![],
    );
    assert_eq!(v, vec![65535, 1, 0, 0, 0]);
}

#[test]
fn softmax_single_element_row_is_2_pow_16() {
    // W = 1: e = 65553, Σ = 65553, out = ⌊(65553·65536 + 32776)/65553⌋ = 65536 + ⌊32776/65553⌋ = 65536.
    // Two rows (H = 2), each of one element, whatever its value.
    let g = one_op(1, any(), Some((4, 4)), Op::Softmax, 1);
    let (s, v) = out1(&g, vec![t(1, 2, 1, &[7, -123456789])], vec![]);
    assert_eq!(s, shape(1, 2, 1));
    assert_eq!(v, vec![65536, 65536]);
}

#[test]
fn softmax_needs_declared_sizes_and_refuses_larger_inputs() {
    let g = one_op(1, any(), None, Op::Softmax, 1);
    assert_eq!(load_refusal(&g), Code::ModelMismatch);
    let g = one_op(1, any(), Some((2, 2)), Op::Softmax, 1);
    assert_eq!(refusal(&g, vec![t(1, 1, 3, &[0, 0, 0])], vec![]), Code::TooLarge);
    assert_eq!(refusal(&g, vec![t(1, 3, 1, &[0, 0, 0])], vec![]), Code::TooLarge);
    // Output channels must equal the input's.
    let g = one_op(1, any(), Some((2, 2)), Op::Softmax, 2);
    assert_eq!(load_refusal(&g), Code::ModelMismatch);
}

#[test]
fn declared_sizes_are_all_or_none() {
    // Two inputs, one declaring its sizes and one not: refused at load (§10.2).
    let mut b = Builder::new();
    let x = b.input_sized(1, any(), 2, 2);
    let z = b.input(1, any());
    let y = b.op(Op::Softmax, &[x], 1);
    let w = b.op(Op::Sigmoid, &[z], 1);
    b.output(y);
    b.output(w);
    assert_eq!(load_refusal(&b.build()), Code::ModelMismatch);
}
