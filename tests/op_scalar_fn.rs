//! §5.8 scalar functions: `sigmoid` and `elu`, through `exp_neg_q16` (§2).
//! Every expected value is worked out by hand from the definitions.
//!
//! `exp_neg_q16` values used (§2: u = −x, n = ⌊u/45426⌋, r = x + 45426·n, t = r + 88670,
//! q = ⌊t²/2^16⌋, c = 23495·q, y = ⌊c/2^16⌋ + 22544, result 0 if n ≥ 63 else ⌊y/2^n⌋):
//! - x = 0: t = 88670, t² = 7862368900, q = 119970, c = 2818695150, y = 43009 + 22544 = 65553
//!   (the spec's stated `exp_neg_q16(0) = 65553`).
//! - x = −1: t = 88669, t² = 7862191561, q = 119967, c = 2818624665, y = 43008 + 22544 = 65552.
//! - x = −45426·n (n ≥ 1): r = 0, so y = 65553 and the result is ⌊65553/2^n⌋: 32776 at n = 1,
//!   ⌊65553/2^62⌋ = 0 at n = 62, and 0 at n = 63 by the n ≥ 63 rule.
//! - x = −(2^63 − 1): n = ⌊(2^63 − 1)/45426⌋ = 203041694995262 ≥ 63, result 0.

mod common;
use common::*;
use wai_oracle::refusal::Code;
use wai_oracle::whg1::build::Builder;
use wai_oracle::whg1::{Graph, Op, Policy};

const BIG: i64 = i64::MAX; // 2^63 − 1

fn one_op(c: u32, policy: Policy, op: Op, out_c: u32) -> Graph {
    let mut b = Builder::new();
    let x = b.input(c, policy);
    let y = b.op(op, &[x], out_c);
    b.output(y);
    b.build()
}

/// The input range that stops at −(2^63 − 1) (§14.1 item 6).
fn symmetric() -> Policy {
    check(-BIG, BIG)
}

// ---------------------------------------------------------------------------
// sigmoid

#[test]
fn sigmoid_of_zero_is_2_pow_32_over_2_pow_16_plus_65553() {
    // v = 0 ≥ 0: e = exp_neg_q16(0) = 65553, out = ⌊2^32/(65536 + 65553)⌋ = ⌊4294967296/131089⌋ =
    // ⌊32763.75⌋ = 32763. (With exp(0) = 65536 it would be 32768.)
    let g = one_op(1, symmetric(), Op::Sigmoid, 1);
    assert_eq!(out1(&g, vec![t(1, 1, 1, &[0])], vec![]).1, vec![32763]);
}

#[test]
fn sigmoid_by_hand_both_signs() {
    // v = 1: e = exp_neg_q16(−1) = 65552, out = ⌊2^32/131088⌋ = ⌊32764.06⌋ = 32764.
    // v = −1: e = 65552, out = ⌊65552·65536/131088⌋ = ⌊4296015872/131088⌋ = ⌊32771.9995⌋ = 32771.
    // v = 45426: e = exp_neg_q16(−45426) = 32776, out = ⌊2^32/98312⌋ = ⌊43687.1⌋ = 43687.
    // v = −45426: e = 32776, out = ⌊32776·65536/98312⌋ = ⌊2148007936/98312⌋ = ⌊21848.9⌋ = 21848.
    let g = one_op(1, symmetric(), Op::Sigmoid, 1);
    let (s, v) = out1(&g, vec![t(1, 2, 2, &[1, -1, 45426, -45426])], vec![]);
    assert_eq!(s, shape(1, 2, 2));
    assert_eq!(v, vec![32764, 32771, 43687, 21848]);
}

#[test]
fn sigmoid_exp_at_n_62_and_63_and_at_the_i64_ends() {
    // |v| = 62·45426 = 2816412 (n = 62) and 63·45426 = 2861838 (n = 63): e = 0 in both.
    // |v| = 2^63 − 1: n ≥ 63, e = 0.
    // v ≥ 0 with e = 0: ⌊2^32/2^16⌋ = 65536; v < 0 with e = 0: ⌊0·2^16/2^16⌋ = 0.
    let g = one_op(1, symmetric(), Op::Sigmoid, 1);
    let (_, v) = out1(
        &g,
        vec![t(1, 1, 6, &[2816412, -2816412, 2861838, -2861838, BIG, -BIG])],
        vec![],
    );
    assert_eq!(v, vec![65536, 0, 65536, 0, 65536, 0]);
}

#[test]
fn sigmoid_keeps_channels() {
    // The output's channel count must be the input's (§10.3).
    let g = one_op(2, symmetric(), Op::Sigmoid, 1);
    assert_eq!(load_refusal(&g), Code::ModelMismatch);
    // With matching counts it applies to every channel: [2, 1, 1] = 0, −1 → 32763, 32771.
    let g = one_op(2, symmetric(), Op::Sigmoid, 2);
    assert_eq!(
        out1(&g, vec![t(2, 1, 1, &[0, -1])], vec![]),
        (shape(2, 1, 1), vec![32763, 32771])
    );
}

// ---------------------------------------------------------------------------
// elu

#[test]
fn elu_of_zero_is_floor_of_17_alpha_over_2_pow_16() {
    // exp_neg_q16(0) − 2^16 = 65553 − 65536 = 17, so elu(0) = ⌊17·α/2^16⌋.
    // α = 100000: ⌊1700000/65536⌋ = ⌊25.94⌋ = 25.
    let g = one_op(1, symmetric(), Op::Elu { alpha: 100000 }, 1);
    assert_eq!(out1(&g, vec![t(1, 1, 1, &[0])], vec![]).1, vec![25]);
    // α = −196613: ⌊−3342421/65536⌋ = ⌊−51.001⌋ = −52 (floor, not toward zero).
    let g = one_op(1, symmetric(), Op::Elu { alpha: -196613 }, 1);
    assert_eq!(out1(&g, vec![t(1, 1, 1, &[0])], vec![]).1, vec![-52]);
    // α = 2^63 − 1: ⌊17·(2^63 − 1)/2^16⌋ = ⌊(17·2^63 − 17)/2^16⌋ = 17·2^47 − 1 = 2392537302040575.
    let g = one_op(1, symmetric(), Op::Elu { alpha: BIG }, 1);
    assert_eq!(out1(&g, vec![t(1, 1, 1, &[0])], vec![]).1, vec![2392537302040575]);
}

#[test]
fn elu_by_hand_positive_alpha() {
    // α = 100000. Inputs 7, −1, −45426, −62·45426, −63·45426, −(2^63 − 1).
    // 7 > 0: out = 7.
    // −1: e = 65552, e − 2^16 = 16, ⌊1600000/65536⌋ = ⌊24.41⌋ = 24.
    // −45426: e = 32776, e − 2^16 = −32760, ⌊−3276000000/65536⌋ = ⌊−49987.8⌋ = −49988.
    // n = 62, n = 63, −(2^63 − 1): e = 0, ⌊100000·(−65536)/65536⌋ = −100000.
    let g = one_op(1, symmetric(), Op::Elu { alpha: 100000 }, 1);
    let (s, v) = out1(&g, vec![t(1, 1, 6, &[7, -1, -45426, -2816412, -2861838, -BIG])], vec![]);
    assert_eq!(s, shape(1, 1, 6));
    assert_eq!(v, vec![7, 24, -49988, -100000, -100000, -100000]);
}

#[test]
fn elu_by_hand_negative_alpha() {
    // α = −196613. Inputs 7, −1, −45426, −62·45426, −63·45426, −(2^63 − 1).
    // 7 > 0: out = 7 (α is not applied).
    // −1: 16·α = −3145808, ⌊−3145808/65536⌋ = ⌊−48.001⌋ = −49.
    // −45426: −32760·α = 6441041880, ⌊6441041880/65536⌋ = ⌊98282.5⌋ = 98282.
    // e = 0: −65536·α/65536 = 196613.
    let g = one_op(1, symmetric(), Op::Elu { alpha: -196613 }, 1);
    let (_, v) = out1(&g, vec![t(1, 1, 6, &[7, -1, -45426, -2816412, -2861838, -BIG])], vec![]);
    assert_eq!(v, vec![7, -49, 98282, 196613, 196613, 196613]);
}

#[test]
fn elu_alpha_i64_max_on_the_most_negative_input() {
    // α = 2^63 − 1, v = −(2^63 − 1): e = 0, out = ⌊α·(−2^16)/2^16⌋ = −(2^63 − 1).
    // v = 2^63 − 1 > 0: out = v.
    let g = one_op(1, symmetric(), Op::Elu { alpha: BIG }, 1);
    assert_eq!(
        out1(&g, vec![t(1, 1, 2, &[-BIG, BIG])], vec![]).1,
        vec![-(BIG as i128), BIG as i128]
    );
}

#[test]
fn elu_keeps_channels() {
    let g = one_op(3, symmetric(), Op::Elu { alpha: 1 }, 2);
    assert_eq!(load_refusal(&g), Code::ModelMismatch);
}
