//! §5.10 data movement: `concat`, `split`, `pixel_shuffle`, `pixel_unshuffle`,
//! `pad_rep`, `crop_to`, `crop`, `subpos_split`, `subpos_merge` and `fill`.
//! Decodes worked out by hand from the definitions; every shape-rule refusal
//! (channel counts at load: `model_mismatch`; sizes at run: `geometry_mismatch`);
//! the caps of §3 and §4 run step 3 (`too_large`); `crop`'s load-time planning
//! on declared sizes (§5.10); and scalar ranges (§4 run step 2, `field_range`).

mod common;
use common::*;
use wai_oracle::num::Round;
use wai_oracle::refusal::Code;
use wai_oracle::tensor::Tensor;
use wai_oracle::whg1::build::{Builder, Geometry};
use wai_oracle::whg1::{ConvTranspose, Crop, FillValue, Graph, Op, Operand, PerChannel, Rq};

/// `[c, h, w]` whose element `(c, y, x)` is `100c + 10y + x` (h, w ≤ 10), so that
/// every value names the position it was read from.
fn grid(c: u64, h: u64, w: u64) -> Tensor {
    let mut d = Vec::new();
    for ci in 0..c as i64 {
        for y in 0..h as i64 {
            for x in 0..w as i64 {
                d.push(100 * ci + 10 * y + x);
            }
        }
    }
    t(c, h, w, &d)
}

/// One single-input operator on an input of `cin` channels, sizes per decode,
/// with an output record of `cout` channels.
fn one(op: Op, cin: u32, cout: u32) -> Graph {
    let mut b = Builder::new();
    let x = b.input(cin, any());
    let y = b.op(op, &[x], cout);
    b.output(y);
    b.build()
}

/// As `one`, with the input declaring `max_h` and `max_w`.
fn one_sized(op: Op, cin: u32, cout: u32, max_h: u32, max_w: u32) -> Graph {
    let mut b = Builder::new();
    let x = b.input_sized(cin, any(), max_h, max_w);
    let y = b.op(op, &[x], cout);
    b.output(y);
    b.build()
}

fn crop(y0: Operand, x0: Operand, h: Operand, w: Operand) -> Op {
    Op::Crop(Crop { y0, x0, h, w })
}

use Operand::{Const as K, Scalar as S};

// ───────────────────────────── concat ─────────────────────────────

/// `concat` of inputs with channel counts `chans` (sizes per decode), output
/// record `cout`.
fn concat_graph(chans: &[u32], cout: u32) -> Graph {
    let mut b = Builder::new();
    let ins: Vec<u32> = chans.iter().map(|&c| b.input(c, any())).collect();
    let y = b.op(Op::Concat, &ins, cout);
    b.output(y);
    b.build()
}

#[test]
fn concat_takes_channels_in_input_order() {
    // Input 0 is a = [1, 2, 3], input 1 is b = [2, 2, 3]; the operator reads (b, a).
    // The output is [3, 2, 3]: channels b0, b1, then a0 — operator input order, not table order.
    let mut bld = Builder::new();
    let a = bld.input(1, any());
    let bb = bld.input(2, any());
    let y = bld.op(Op::Concat, &[bb, a], 3);
    bld.output(y);
    let g = bld.build();
    let a_t = t(1, 2, 3, &[0, 1, 2, 10, 11, 12]);
    let b_t = t(2, 2, 3, &[500, 501, 502, 510, 511, 512, 600, 601, 602, 610, 611, 612]);
    let (s, v) = out1(&g, vec![a_t, b_t], vec![]);
    assert_eq!(s, shape(3, 2, 3));
    assert_eq!(
        v,
        vec![
            500, 501, 502, 510, 511, 512, // b0
            600, 601, 602, 610, 611, 612, // b1
            0, 1, 2, 10, 11, 12, // a0
        ]
    );
}

#[test]
fn concat_of_three_1x1_planes() {
    // Three [1, 1, 1] inputs 7, −8, 9 → [3, 1, 1] = 7, −8, 9.
    let g = concat_graph(&[1, 1, 1], 3);
    let ins = vec![t(1, 1, 1, &[7]), t(1, 1, 1, &[-8]), t(1, 1, 1, &[9])];
    assert_eq!(out1(&g, ins, vec![]), (shape(3, 1, 1), vec![7, -8, 9]));
}

#[test]
fn concat_inputs_must_share_h_and_w_at_run_time() {
    let g = concat_graph(&[1, 2], 3);
    // H differs (2 vs 3): geometry_mismatch at run step 3.
    assert_eq!(
        refusal(&g, vec![grid(1, 2, 3), grid(2, 3, 3)], vec![]),
        Code::GeometryMismatch
    );
    // W differs (3 vs 2).
    assert_eq!(
        refusal(&g, vec![grid(1, 2, 3), grid(2, 2, 2)], vec![]),
        Code::GeometryMismatch
    );
    // Same H and W (odd, 3 × 5) decodes to [3, 3, 5].
    assert_eq!(out1(&g, vec![grid(1, 3, 5), grid(2, 3, 5)], vec![]).0, shape(3, 3, 5));
}

#[test]
fn concat_channel_sum_must_match_its_output_record() {
    // 1 + 2 = 3 channels; a record of 4 (or 2) does not plan: model_mismatch at load.
    assert_eq!(load_refusal(&concat_graph(&[1, 2], 4)), Code::ModelMismatch);
    assert_eq!(load_refusal(&concat_graph(&[1, 2], 2)), Code::ModelMismatch);
    assert!(load(&concat_graph(&[1, 2], 3)).is_ok());
}

#[test]
fn concat_declared_sizes_that_differ_are_refused_at_load() {
    // A4: declared sizes 2 × 3 and 3 × 3 break "inputs share H and W" at load.
    let mut b = Builder::new();
    let a = b.input_sized(1, any(), 2, 3);
    let c = b.input_sized(1, any(), 3, 3);
    let y = b.op(Op::Concat, &[a, c], 2);
    b.output(y);
    assert_eq!(load_refusal(&b.build()), Code::ModelMismatch);
    // Equal declared sizes load.
    let mut b = Builder::new();
    let a = b.input_sized(1, any(), 3, 3);
    let c = b.input_sized(1, any(), 3, 3);
    let y = b.op(Op::Concat, &[a, c], 2);
    b.output(y);
    assert!(load(&b.build()).is_ok());
}

#[test]
fn concat_exponents_all_or_none_and_equal() {
    // §3: the inputs and the output declare no exponent, or all declare the same one.
    let build = |ea: Option<i8>, eb: Option<i8>, ey: Option<i8>| {
        let mut b = Builder::new();
        let a = b.input(1, any());
        let c = b.input(1, any());
        let y = b.op(Op::Concat, &[a, c], 2);
        b.exponent(a, ea).exponent(c, eb).exponent(y, ey);
        b.output(y);
        b.build()
    };
    assert!(load(&build(Some(3), Some(3), Some(3))).is_ok());
    assert!(load(&build(None, None, None)).is_ok());
    // One missing.
    assert_eq!(load_refusal(&build(Some(3), None, Some(3))), Code::ModelMismatch);
    // All present but unequal (the output differs).
    assert_eq!(load_refusal(&build(Some(3), Some(3), Some(4))), Code::ModelMismatch);
}

#[test]
fn concat_output_past_max_elems_is_too_large() {
    // Inputs [1, 2, 3] (6) and [2, 2, 3] (12); output [3, 2, 3] = 18 elements.
    let mut b = Builder::new();
    let a = b.input(1, any());
    let c = b.input(2, any());
    let y = b.op(Op::Concat, &[a, c], 3);
    b.output(y);
    // max_elems 17: both inputs pass run step 1 (6, 12 ≤ 17); the output 18 > 17 is too_large.
    b.max_elems(17);
    assert_eq!(
        refusal(&b.build(), vec![grid(1, 2, 3), grid(2, 2, 3)], vec![]),
        Code::TooLarge
    );
    // max_elems 18: exactly at the cap, decodes.
    b.max_elems(18);
    assert_eq!(
        out1(&b.build(), vec![grid(1, 2, 3), grid(2, 2, 3)], vec![]).0,
        shape(3, 2, 3)
    );
}

// ───────────────────────────── split ─────────────────────────────

#[test]
fn split_takes_count_channels_from_start() {
    // grid(4, 1, 2): channel c holds 100c, 100c + 1. start 1, count 2 → channels 1, 2.
    let g = one(Op::Split { start: 1, count: 2 }, 4, 2);
    assert_eq!(
        out1(&g, vec![grid(4, 1, 2)], vec![]),
        (shape(2, 1, 2), vec![100, 101, 200, 201])
    );
    // start + count = C exactly: start 3, count 1 → channel 3 = 300, 301.
    let g = one(Op::Split { start: 3, count: 1 }, 4, 1);
    assert_eq!(out1(&g, vec![grid(4, 1, 2)], vec![]), (shape(1, 1, 2), vec![300, 301]));
    // A 1×1 plane: grid(3, 1, 1) = 0, 100, 200; start 2, count 1 → 200.
    let g = one(Op::Split { start: 2, count: 1 }, 3, 1);
    assert_eq!(out1(&g, vec![grid(3, 1, 1)], vec![]), (shape(1, 1, 1), vec![200]));
}

#[test]
fn split_channel_rules_refuse_at_load() {
    // start + count = 3 + 2 = 5 > C = 4.
    assert_eq!(
        load_refusal(&one(Op::Split { start: 3, count: 2 }, 4, 2)),
        Code::ModelMismatch
    );
    // start = u32::MAX, count 1: start + count = 2^32 > C (must not wrap to 0).
    assert_eq!(
        load_refusal(&one(
            Op::Split {
                start: u32::MAX,
                count: 1
            },
            4,
            1
        )),
        Code::ModelMismatch
    );
    // count ≥ 1: count 0 is refused.
    assert_eq!(
        load_refusal(&one(Op::Split { start: 0, count: 0 }, 4, 1)),
        Code::ModelMismatch
    );
    // The output record must have `count` channels: 2 ≠ 3.
    assert_eq!(
        load_refusal(&one(Op::Split { start: 0, count: 2 }, 4, 3)),
        Code::ModelMismatch
    );
}

// ───────────────────────────── pixel_shuffle ─────────────────────────────

#[test]
fn pixel_shuffle_r2_c8_channel_order() {
    // Input [8, 1, 2], in[k][0][w] = 10k + w. r = 2 → [2, 2, 4].
    // out[c][h·2 + i][w·2 + j] = in[c·4 + i·2 + j][h][w]; here h = 0, so row y = i, column x = 2w + j.
    // c = 0, row 0 (i = 0): x0 = in[0][w0] = 0, x1 = in[1][w0] = 10, x2 = in[0][w1] = 1, x3 = in[1][w1] = 11.
    // c = 0, row 1 (i = 1): in[2], in[3] → 20, 30, 21, 31.
    // c = 1, row 0: in[4], in[5] → 40, 50, 41, 51; row 1: in[6], in[7] → 60, 70, 61, 71.
    let data: Vec<i64> = (0..8).flat_map(|k| [10 * k, 10 * k + 1]).collect();
    let g = one(Op::PixelShuffle { r: 2 }, 8, 2);
    let (s, v) = out1(&g, vec![t(8, 1, 2, &data)], vec![]);
    assert_eq!(s, shape(2, 2, 4));
    assert_eq!(
        v,
        vec![
            0, 10, 1, 11, 20, 30, 21, 31, // c0
            40, 50, 41, 51, 60, 70, 61, 71, // c1
        ]
    );
}

#[test]
fn pixel_shuffle_odd_height_and_1x1() {
    // Input [4, 3, 1], in[k][h][0] = 10k + h, r = 2 → [1, 6, 2].
    // Row 2h + i, column j reads in[2i + j][h]: (h, i) = (0, 0): 0, 10; (0, 1): 20, 30;
    // (1, 0): 1, 11; (1, 1): 21, 31; (2, 0): 2, 12; (2, 1): 22, 32.
    let data: Vec<i64> = (0..4).flat_map(|k| [10 * k, 10 * k + 1, 10 * k + 2]).collect();
    let g = one(Op::PixelShuffle { r: 2 }, 4, 1);
    assert_eq!(
        out1(&g, vec![t(4, 3, 1, &data)], vec![]),
        (shape(1, 6, 2), vec![0, 10, 20, 30, 1, 11, 21, 31, 2, 12, 22, 32])
    );
    // r = 3 on a 1×1 plane of 9 channels 0..8: out[0][i][j] = in[3i + j], so the output in CHW
    // order is 0..8 (a transposed reading in[3j + i] would give 0, 3, 6, 1, ...).
    let g = one(Op::PixelShuffle { r: 3 }, 9, 1);
    let data: Vec<i64> = (0..9).collect();
    assert_eq!(
        out1(&g, vec![t(9, 1, 1, &data)], vec![]),
        (shape(1, 3, 3), (0..9).collect::<Vec<i128>>())
    );
}

#[test]
fn pixel_shuffle_channel_rules_refuse_at_load() {
    // C = 6 is not a multiple of r² = 4.
    assert_eq!(load_refusal(&one(Op::PixelShuffle { r: 2 }, 6, 1)), Code::ModelMismatch);
    // C / r² = 8 / 4 = 2, but the output record says 4.
    assert_eq!(load_refusal(&one(Op::PixelShuffle { r: 2 }, 8, 4)), Code::ModelMismatch);
    // r ≥ 1: r = 0 is a parameter out of range.
    assert_eq!(load_refusal(&one(Op::PixelShuffle { r: 0 }, 4, 4)), Code::ModelMismatch);
}

// ───────────────────────────── pixel_unshuffle ─────────────────────────────

#[test]
fn pixel_unshuffle_r2_by_hand() {
    // grid(2, 2, 4): c0 rows 0 1 2 3 / 10 11 12 13; c1 rows 100..103 / 110..113. r = 2 → [8, 1, 2].
    // out[c·4 + i·2 + j][0][w] = in[c][i][2w + j]:
    //   k0 (c0, i0, j0): in[0][0][0], in[0][0][2] = 0, 2     k1 (i0, j1): 1, 3
    //   k2 (i1, j0): 10, 12                                k3 (i1, j1): 11, 13
    //   k4..k7: the same from c1: 100, 102, 101, 103, 110, 112, 111, 113.
    let g = one(Op::PixelUnshuffle { r: 2 }, 2, 8);
    let (s, v) = out1(&g, vec![grid(2, 2, 4)], vec![]);
    assert_eq!(s, shape(8, 1, 2));
    assert_eq!(
        v,
        vec![0, 2, 1, 3, 10, 12, 11, 13, 100, 102, 101, 103, 110, 112, 111, 113]
    );
    // r = 3 on an odd 3 × 3 plane → [9, 1, 1], out[3i + j] = in[i][j] = 10i + j.
    let g = one(Op::PixelUnshuffle { r: 3 }, 1, 9);
    assert_eq!(
        out1(&g, vec![grid(1, 3, 3)], vec![]),
        (shape(9, 1, 1), vec![0, 1, 2, 10, 11, 12, 20, 21, 22])
    );
}

#[test]
fn pixel_unshuffle_then_shuffle_is_the_identity() {
    // [2, 4, 6] → unshuffle r = 2 → [8, 2, 3] → shuffle r = 2 → [2, 4, 6]: the definitions are
    // inverse maps of the same index relation, so the input comes back element for element.
    let mut b = Builder::new();
    let x = b.input(2, any());
    let u = b.op(Op::PixelUnshuffle { r: 2 }, &[x], 8);
    let y = b.op(Op::PixelShuffle { r: 2 }, &[u], 2);
    b.output(u);
    b.output(y);
    let outs = decode(&b.build(), vec![grid(2, 4, 6)], vec![]).unwrap();
    assert_eq!(outs[0].shape, shape(8, 2, 3));
    // Spot check channel 3 (c0, i1, j1): in[0][2h + 1][2w + 1] → 11, 13, 15, 31, 33, 35.
    assert_eq!(vals(&outs[0])[18..24], [11, 13, 15, 31, 33, 35]);
    assert_eq!(outs[1].shape, shape(2, 4, 6));
    assert_eq!(vals(&outs[1]), vals(&grid(2, 4, 6)));
}

#[test]
fn pixel_unshuffle_sides_must_be_multiples_of_r() {
    let g = one(Op::PixelUnshuffle { r: 2 }, 1, 4);
    // H = 3 not a multiple of 2.
    assert_eq!(refusal(&g, vec![grid(1, 3, 4)], vec![]), Code::GeometryMismatch);
    // W = 3 not a multiple of 2.
    assert_eq!(refusal(&g, vec![grid(1, 4, 3)], vec![]), Code::GeometryMismatch);
    // C·r² = 4; an output record of 2 does not plan.
    assert_eq!(
        load_refusal(&one(Op::PixelUnshuffle { r: 2 }, 1, 2)),
        Code::ModelMismatch
    );
    // r = 0 is out of range.
    assert_eq!(
        load_refusal(&one(Op::PixelUnshuffle { r: 0 }, 1, 1)),
        Code::ModelMismatch
    );
}

#[test]
fn pixel_unshuffle_declared_sizes_plan_at_load_and_smaller_sizes_at_run() {
    // Declared 3 × 4 with r = 2: 3 is not a multiple of 2, refused at load.
    assert_eq!(
        load_refusal(&one_sized(Op::PixelUnshuffle { r: 2 }, 1, 4, 3, 4)),
        Code::ModelMismatch
    );
    // Declared 4 × 4 loads; a 3 × 4 decode (within the declared sizes) fails at run.
    let g = one_sized(Op::PixelUnshuffle { r: 2 }, 1, 4, 4, 4);
    assert_eq!(refusal(&g, vec![grid(1, 3, 4)], vec![]), Code::GeometryMismatch);
    // 2 × 2 decodes: out[2i + j] = in[i][j] → 0, 1, 10, 11.
    assert_eq!(
        out1(&g, vec![grid(1, 2, 2)], vec![]),
        (shape(4, 1, 1), vec![0, 1, 10, 11])
    );
}

// ───────────────────────────── pad_rep ─────────────────────────────

#[test]
fn pad_rep_replicates_the_last_row_and_column() {
    // grid(2, 2, 4), m = 3: ⌈2/3⌉·3 = 3 rows, ⌈4/3⌉·3 = 6 columns → [2, 3, 6].
    // out[c][y][x] = in[c][min(y, 1)][min(x, 3)].
    let g = one(Op::PadRep { m: 3 }, 2, 2);
    let (s, v) = out1(&g, vec![grid(2, 2, 4)], vec![]);
    assert_eq!(s, shape(2, 3, 6));
    assert_eq!(
        v,
        vec![
            0, 1, 2, 3, 3, 3, // c0 y0
            10, 11, 12, 13, 13, 13, // c0 y1
            10, 11, 12, 13, 13, 13, // c0 y2 = y1
            100, 101, 102, 103, 103, 103, // c1 y0
            110, 111, 112, 113, 113, 113, // c1 y1
            110, 111, 112, 113, 113, 113, // c1 y2 = y1
        ]
    );
    // Odd 3 × 2, m = 5 → [1, 5, 5]: rows min(y, 2), columns min(x, 1).
    let g = one(Op::PadRep { m: 5 }, 1, 1);
    assert_eq!(
        out1(&g, vec![grid(1, 3, 2)], vec![]),
        (
            shape(1, 5, 5),
            vec![
                0, 1, 1, 1, 1, 10, 11, 11, 11, 11, 20, 21, 21, 21, 21, 20, 21, 21, 21, 21, 20, 21, 21, 21, 21
            ]
        )
    );
    // A 1×1 plane, m = 3 → [1, 3, 3] of −7.
    let g = one(Op::PadRep { m: 3 }, 1, 1);
    assert_eq!(out1(&g, vec![t(1, 1, 1, &[-7])], vec![]), (shape(1, 3, 3), vec![-7; 9]));
    // Sides already multiples of m = 2: unchanged.
    let g = one(Op::PadRep { m: 2 }, 1, 1);
    assert_eq!(
        out1(&g, vec![grid(1, 2, 4)], vec![]),
        (shape(1, 2, 4), vec![0, 1, 2, 3, 10, 11, 12, 13])
    );
}

#[test]
fn pad_rep_side_past_2_pow_26_is_too_large() {
    // [1, 1, 1], m = 2^26 + 1: ⌈1/m⌉·m = 2^26 + 1 > 2^26.
    let g = one(Op::PadRep { m: (1 << 26) + 1 }, 1, 1);
    assert_eq!(refusal(&g, vec![t(1, 1, 1, &[0])], vec![]), Code::TooLarge);
    // m = u32::MAX: the side 2^32 − 1 is past the cap too.
    let g = one(Op::PadRep { m: u32::MAX }, 1, 1);
    assert_eq!(refusal(&g, vec![t(1, 1, 1, &[0])], vec![]), Code::TooLarge);
    // m = 0 is out of range (m ≥ 1): load.
    assert_eq!(load_refusal(&one(Op::PadRep { m: 0 }, 1, 1)), Code::ModelMismatch);
}

#[test]
fn pad_rep_output_against_max_elems() {
    // max_elems 16, input [1, 3, 3] (9 ≤ 16).
    // m = 4 → [1, 4, 4] = 16 elements, exactly the cap: decodes; rows min(y, 2), columns min(x, 2).
    let mut b = Builder::new();
    let x = b.input(1, any());
    let y = b.op(Op::PadRep { m: 4 }, &[x], 1);
    b.output(y);
    b.max_elems(16);
    assert_eq!(
        out1(&b.build(), vec![grid(1, 3, 3)], vec![]),
        (
            shape(1, 4, 4),
            vec![0, 1, 2, 2, 10, 11, 12, 12, 20, 21, 22, 22, 20, 21, 22, 22]
        )
    );
    // m = 5 → [1, 5, 5] = 25 > 16: too_large.
    let mut b = Builder::new();
    let x = b.input(1, any());
    let y = b.op(Op::PadRep { m: 5 }, &[x], 1);
    b.output(y);
    b.max_elems(16);
    assert_eq!(refusal(&b.build(), vec![grid(1, 3, 3)], vec![]), Code::TooLarge);
    // The same graph with declared sizes 3 × 3 plans [1, 5, 5] = 25 > 16 at load: too_large
    // (§10.5 step 7, "a size past a cap is too_large"; A3's load plan is run step 3's).
    let mut b = Builder::new();
    let x = b.input_sized(1, any(), 3, 3);
    let y = b.op(Op::PadRep { m: 5 }, &[x], 1);
    b.output(y);
    b.max_elems(16);
    assert_eq!(load_refusal(&b.build()), Code::TooLarge);
}

// ───────────────────────────── crop_to ─────────────────────────────

fn crop_to_graph(cin: u32, cref: u32, cout: u32) -> Graph {
    let mut b = Builder::new();
    let x = b.input(cin, any());
    let r = b.input(cref, any());
    let y = b.op(Op::CropTo, &[x, r], cout);
    b.output(y);
    b.build()
}

#[test]
fn crop_to_keeps_the_top_left_of_in_and_reads_only_refs_shape() {
    // in = grid(2, 3, 4), ref [5, 2, 3] (A5: ref's channel count is free) → [2, 2, 3],
    // out[c][y][x] = in[c][y][x] for y < 2, x < 3.
    let g = crop_to_graph(2, 5, 2);
    let expect = vec![0, 1, 2, 10, 11, 12, 100, 101, 102, 110, 111, 112];
    let ref1 = t(5, 2, 3, &[0; 30]);
    let ref2 = t(5, 2, 3, &[-99; 30]);
    assert_eq!(
        out1(&g, vec![grid(2, 3, 4), ref1], vec![]),
        (shape(2, 2, 3), expect.clone())
    );
    // Other ref values, same output: only ref's shape is read.
    assert_eq!(out1(&g, vec![grid(2, 3, 4), ref2], vec![]), (shape(2, 2, 3), expect));
    // A 1×1 ref → [2, 1, 1] = in[c][0][0] = 0, 100.
    assert_eq!(
        out1(&g, vec![grid(2, 3, 4), t(5, 1, 1, &[0; 5])], vec![]),
        (shape(2, 1, 1), vec![0, 100])
    );
    // A ref of in's own size → the input unchanged.
    assert_eq!(
        out1(&g, vec![grid(2, 3, 4), t(5, 3, 4, &[0; 60])], vec![]).1,
        vals(&grid(2, 3, 4))
    );
}

#[test]
fn crop_to_ref_larger_than_in_is_a_geometry_mismatch() {
    let g = crop_to_graph(1, 1, 1);
    // H′ = 4 > H = 3.
    assert_eq!(
        refusal(&g, vec![grid(1, 3, 4), t(1, 4, 4, &[0; 16])], vec![]),
        Code::GeometryMismatch
    );
    // W′ = 5 > W = 4.
    assert_eq!(
        refusal(&g, vec![grid(1, 3, 4), t(1, 3, 5, &[0; 15])], vec![]),
        Code::GeometryMismatch
    );
}

#[test]
fn crop_to_channel_and_declared_size_rules_at_load() {
    // A5: the output has in's channels (2); a record of ref's 5 does not plan.
    assert_eq!(load_refusal(&crop_to_graph(2, 5, 5)), Code::ModelMismatch);
    // Declared sizes: in 3 × 4, ref 4 × 4: H′ > H on the declared sizes (A4).
    let mut b = Builder::new();
    let x = b.input_sized(1, any(), 3, 4);
    let r = b.input_sized(1, any(), 4, 4);
    let y = b.op(Op::CropTo, &[x, r], 1);
    b.output(y);
    assert_eq!(load_refusal(&b.build()), Code::ModelMismatch);
    // ref 3 × 2 within in 3 × 4 loads.
    let mut b = Builder::new();
    let x = b.input_sized(1, any(), 3, 4);
    let r = b.input_sized(1, any(), 3, 2);
    let y = b.op(Op::CropTo, &[x, r], 1);
    b.output(y);
    assert!(load(&b.build()).is_ok());
}

// ───────────────────────────── crop ─────────────────────────────

#[test]
fn crop_constant_operands_by_hand() {
    // grid(1, 3, 4), y0 = 1, x0 = 2, h = 2, w = 2 → in[1][2], in[1][3], in[2][2], in[2][3].
    let g = one(crop(K(1), K(2), K(2), K(2)), 1, 1);
    assert_eq!(
        out1(&g, vec![grid(1, 3, 4)], vec![]),
        (shape(1, 2, 2), vec![12, 13, 22, 23])
    );
}

/// `crop` with all four operands scalars: y0 ∈ [−2, 5], x0 ∈ [0, 10], h ∈ [0, 4], w ∈ [1, 4].
fn crop_all_scalars() -> Graph {
    let mut b = Builder::new();
    let x = b.input(2, any());
    let sy = b.scalar(-2, 5);
    let sx = b.scalar(0, 10);
    let sh = b.scalar(0, 4);
    let sw = b.scalar(1, 4);
    let y = b.op(crop(S(sy), S(sx), S(sh), S(sw)), &[x], 2);
    b.output(y);
    b.build()
}

#[test]
fn crop_scalar_operands_by_hand() {
    let g = crop_all_scalars();
    // y0 = 1, x0 = 1, h = 2, w = 3 on grid(2, 3, 4): out[c][y][x] = in[c][1 + y][1 + x].
    assert_eq!(
        out1(&g, vec![grid(2, 3, 4)], vec![1, 1, 2, 3]),
        (
            shape(2, 2, 3),
            vec![11, 12, 13, 21, 22, 23, 111, 112, 113, 121, 122, 123]
        )
    );
    // The last row and column exactly: y0 = 2, x0 = 3, h = 1, w = 1 → in[c][2][3] = 23, 123.
    assert_eq!(
        out1(&g, vec![grid(2, 3, 4)], vec![2, 3, 1, 1]),
        (shape(2, 1, 1), vec![23, 123])
    );
}

#[test]
fn crop_scalar_operands_that_do_not_fit_are_geometry_mismatches() {
    let g = crop_all_scalars();
    let x = || vec![grid(2, 3, 4)];
    // A negative start within its scalar's range: y0 = −1.
    assert_eq!(refusal(&g, x(), vec![-1, 0, 1, 1]), Code::GeometryMismatch);
    // A length of 0 within its range [0, 4]: h = 0.
    assert_eq!(refusal(&g, x(), vec![0, 0, 0, 1]), Code::GeometryMismatch);
    // y0 + h = 2 + 2 = 4 > H = 3.
    assert_eq!(refusal(&g, x(), vec![2, 0, 2, 1]), Code::GeometryMismatch);
    // x0 + w = 1 + 4 = 5 > W = 4.
    assert_eq!(refusal(&g, x(), vec![0, 1, 1, 4]), Code::GeometryMismatch);
    // A start in range but past the plane: x0 = 10 ≥ W.
    assert_eq!(refusal(&g, x(), vec![0, 10, 1, 1]), Code::GeometryMismatch);
}

#[test]
fn crop_scalars_outside_their_range_are_field_range_before_the_plan() {
    let g = crop_all_scalars();
    let x = || vec![grid(2, 3, 4)];
    // y0 = 6 > 5: field_range at run step 2 (it would not fit either, but the plan is step 3).
    assert_eq!(refusal(&g, x(), vec![6, 0, 1, 1]), Code::FieldRange);
    // y0 = −3 < −2.
    assert_eq!(refusal(&g, x(), vec![-3, 0, 1, 1]), Code::FieldRange);
    // h = 5 > 4.
    assert_eq!(refusal(&g, x(), vec![0, 0, 5, 1]), Code::FieldRange);
    // w = 0 < 1: field_range, not geometry_mismatch.
    assert_eq!(refusal(&g, x(), vec![0, 0, 1, 0]), Code::FieldRange);
    // The ends of each range are accepted by step 2: y0 = −2 reaches the plan (geometry_mismatch).
    assert_eq!(refusal(&g, x(), vec![-2, 0, 1, 1]), Code::GeometryMismatch);
}

#[test]
fn crop_constant_that_does_not_fit_without_declared_sizes_loads_and_refuses_at_run() {
    // y0 = 2, h = 2: fits a 4-row input (rows 2, 3 → 20, 21, 30, 31 with x0 = 0, w = 2).
    let g = one(crop(K(2), K(0), K(2), K(2)), 1, 1);
    assert_eq!(
        out1(&g, vec![grid(1, 4, 2)], vec![]),
        (shape(1, 2, 2), vec![20, 21, 30, 31])
    );
    // On 3 rows, 2 + 2 > 3.
    assert_eq!(refusal(&g, vec![grid(1, 3, 2)], vec![]), Code::GeometryMismatch);
    // A6: a constant h = 0 is a shape-rule failure: it loads without declared sizes and every
    // decode is refused at run step 3.
    let g = one(crop(K(0), K(0), K(0), K(1)), 1, 1);
    assert_eq!(refusal(&g, vec![grid(1, 3, 2)], vec![]), Code::GeometryMismatch);
}

#[test]
fn crop_constant_that_does_not_fit_declared_sizes_is_refused_at_load() {
    // Declared 4 × 4: y0 = 1, h = 4 → 1 + 4 > 4.
    assert_eq!(
        load_refusal(&one_sized(crop(K(1), K(0), K(4), K(1)), 1, 1, 4, 4)),
        Code::ModelMismatch
    );
    // x0 = 4, w = 1 → 4 + 1 > 4.
    assert_eq!(
        load_refusal(&one_sized(crop(K(0), K(4), K(1), K(1)), 1, 1, 4, 4)),
        Code::ModelMismatch
    );
    // A6: a constant w = 0 with declared sizes is refused at load.
    assert_eq!(
        load_refusal(&one_sized(crop(K(0), K(0), K(1), K(0)), 1, 1, 4, 4)),
        Code::ModelMismatch
    );
    // y0 = 1, h = 3 fits 4 rows: loads; a smaller 3-row input at run fails (1 + 3 > 3).
    let g = one_sized(crop(K(1), K(0), K(3), K(1)), 1, 1, 4, 4);
    assert_eq!(refusal(&g, vec![grid(1, 3, 4)], vec![]), Code::GeometryMismatch);
    assert_eq!(
        out1(&g, vec![grid(1, 4, 4)], vec![]),
        (shape(1, 3, 1), vec![10, 20, 30])
    );
}

#[test]
fn crop_scalar_plan_at_load_refuses() {
    // §5.10: at load, a scalar start counts as 0 and a scalar length as min(hi, S − s0).
    // (1) y0 constant 3, h a scalar in [1, 10], max_h = 3: length = min(10, 3 − 3) = 0 < 1.
    let mut b = Builder::new();
    let x = b.input_sized(1, any(), 3, 3);
    let sh = b.scalar(1, 10);
    let y = b.op(crop(K(3), K(0), S(sh), K(1)), &[x], 1);
    b.output(y);
    assert_eq!(load_refusal(&b.build()), Code::ModelMismatch);
    // (2) x0 a scalar (→ 0), w constant 5, max_w = 4: 0 + 5 > 4.
    let mut b = Builder::new();
    let x = b.input_sized(1, any(), 4, 4);
    let sx = b.scalar(0, 0);
    let y = b.op(crop(K(0), S(sx), K(1), K(5)), &[x], 1);
    b.output(y);
    assert_eq!(load_refusal(&b.build()), Code::ModelMismatch);
    // (3) h a scalar in [−3, 0]: length = min(0, 4 − 0) = 0 < 1.
    let mut b = Builder::new();
    let x = b.input_sized(1, any(), 4, 4);
    let sh = b.scalar(-3, 0);
    let y = b.op(crop(K(0), K(0), S(sh), K(1)), &[x], 1);
    b.output(y);
    assert_eq!(load_refusal(&b.build()), Code::ModelMismatch);
}

#[test]
fn crop_scalar_plan_at_load_accepts_smallest_start_largest_length() {
    // max 4 × 4. y0 a scalar in [2, 5] → s0 = 0 whatever its range; h a scalar in [1, 100] →
    // min(100, 4 − 0) = 4; 0 + 4 ≤ 4. x0 constant 1, w a scalar in [1, 100] → min(100, 4 − 1) = 3;
    // 1 + 3 ≤ 4. The graph loads, although its largest start plus largest length (5 + 100)
    // would not fit.
    let mut b = Builder::new();
    let x = b.input_sized(1, any(), 4, 4);
    let sy = b.scalar(2, 5);
    let sh = b.scalar(1, 100);
    let sw = b.scalar(1, 100);
    let y = b.op(crop(S(sy), K(1), S(sh), S(sw)), &[x], 1);
    b.output(y);
    let g = b.build();
    assert!(load(&g).is_ok());
    // y0 = 2, h = 2, w = 3 on grid(1, 4, 4): rows 2, 3, columns 1..3 → 21 22 23 / 31 32 33.
    assert_eq!(
        out1(&g, vec![grid(1, 4, 4)], vec![2, 2, 3]),
        (shape(1, 2, 3), vec![21, 22, 23, 31, 32, 33])
    );
    // Scalars that do not fit are refused at run: y0 = 5 (5 + 1 > 4); w = 4 (1 + 4 > 4).
    assert_eq!(refusal(&g, vec![grid(1, 4, 4)], vec![5, 1, 1]), Code::GeometryMismatch);
    assert_eq!(refusal(&g, vec![grid(1, 4, 4)], vec![2, 1, 4]), Code::GeometryMismatch);
    // A smaller input than declared: y0 = 2 on 2 rows does not fit.
    assert_eq!(refusal(&g, vec![grid(1, 2, 4)], vec![2, 1, 1]), Code::GeometryMismatch);
}

#[test]
fn crop_scalar_index_must_exist() {
    // Scalar index 1 with one scalar record: a parameter out of range (A1 step 5).
    let mut b = Builder::new();
    let x = b.input(1, any());
    b.scalar(0, 1);
    let y = b.op(crop(K(0), K(0), K(1), S(1)), &[x], 1);
    b.output(y);
    assert_eq!(load_refusal(&b.build()), Code::ModelMismatch);
    // crop keeps the input's channels: a record of 2 for a 1-channel input does not plan.
    assert_eq!(
        load_refusal(&one(crop(K(0), K(0), K(1), K(1)), 1, 2)),
        Code::ModelMismatch
    );
}

// ───────────────────────────── subpos_split / subpos_merge ─────────────────────────────

#[test]
fn subpos_split_non_identity_order_by_hand() {
    // order = [3, 0, 2, 1] → (a, b) = (1,1), (0,0), (1,0), (0,1). grid(2, 2, 4) → four [2, 1, 2].
    // out_k[c][0][x] = in[c][a_k][2x + b_k]:
    //   k0 (1,1): in[c][1][1], in[c][1][3] → 11, 13, 111, 113
    //   k1 (0,0): in[c][0][0], in[c][0][2] → 0, 2, 100, 102
    //   k2 (1,0): 10, 12, 110, 112
    //   k3 (0,1): 1, 3, 101, 103
    let mut b = Builder::new();
    let x = b.input(2, any());
    let outs = b.op_n(Op::SubposSplit { order: [3, 0, 2, 1] }, &[x], &[2; 4]);
    for &o in &outs {
        b.output(o);
    }
    let got = decode(&b.build(), vec![grid(2, 2, 4)], vec![]).unwrap();
    let expect: [[i128; 4]; 4] = [
        [11, 13, 111, 113],
        [0, 2, 100, 102],
        [10, 12, 110, 112],
        [1, 3, 101, 103],
    ];
    assert_eq!(got.len(), 4);
    for k in 0..4 {
        assert_eq!(got[k].shape, shape(2, 1, 2), "output {k}");
        assert_eq!(vals(&got[k]), expect[k], "output {k}");
    }
}

#[test]
fn subpos_split_rows_and_1x1_outputs() {
    // grid(1, 4, 2), order [3, 0, 2, 1] → four [1, 2, 1]: out_k[0][y][0] = in[2y + a_k][b_k].
    //   k0 (1,1): in[1][1], in[3][1] = 11, 31     k1 (0,0): 0, 20
    //   k2 (1,0): 10, 30                            k3 (0,1): 1, 21
    let mut b = Builder::new();
    let x = b.input(1, any());
    let outs = b.op_n(Op::SubposSplit { order: [3, 0, 2, 1] }, &[x], &[1; 4]);
    for &o in &outs {
        b.output(o);
    }
    let g = b.build();
    let got = decode(&g, vec![grid(1, 4, 2)], vec![]).unwrap();
    let expect: [[i128; 2]; 4] = [[11, 31], [0, 20], [10, 30], [1, 21]];
    for k in 0..4 {
        assert_eq!(got[k].shape, shape(1, 2, 1), "output {k}");
        assert_eq!(vals(&got[k]), expect[k], "output {k}");
    }
    // A 2 × 2 plane 5 6 / 7 8 → four 1×1 planes: k0 (1,1) = 8, k1 (0,0) = 5, k2 (1,0) = 7, k3 (0,1) = 6.
    let got = decode(&g, vec![t(1, 2, 2, &[5, 6, 7, 8])], vec![]).unwrap();
    let ones: Vec<Vec<i128>> = got.iter().map(vals).collect();
    assert_eq!(ones, vec![vec![8], vec![5], vec![7], vec![6]]);
    assert!(got.iter().all(|x| x.shape == shape(1, 1, 1)));
}

fn split_graph(c: u32, order: [u8; 4], out_c: u32) -> Graph {
    let mut b = Builder::new();
    let x = b.input(c, any());
    let outs = b.op_n(Op::SubposSplit { order }, &[x], &[out_c; 4]);
    for &o in &outs {
        b.output(o);
    }
    b.build()
}

#[test]
fn subpos_split_refusals() {
    let g = split_graph(1, [0, 1, 2, 3], 1);
    // H = 3 odd.
    assert_eq!(refusal(&g, vec![grid(1, 3, 4)], vec![]), Code::GeometryMismatch);
    // W = 5 odd.
    assert_eq!(refusal(&g, vec![grid(1, 4, 5)], vec![]), Code::GeometryMismatch);
    // A 1×1 plane: both odd.
    assert_eq!(refusal(&g, vec![t(1, 1, 1, &[0])], vec![]), Code::GeometryMismatch);
    // order not a permutation: 0 twice.
    assert_eq!(load_refusal(&split_graph(1, [0, 0, 1, 2], 1)), Code::ModelMismatch);
    // order entry 4 is no (a, b).
    assert_eq!(load_refusal(&split_graph(1, [0, 1, 2, 4], 1)), Code::ModelMismatch);
    // Each output has the input's C = 2; records of 1 do not plan.
    assert_eq!(load_refusal(&split_graph(2, [0, 1, 2, 3], 1)), Code::ModelMismatch);
    // Declared max_h = 3 is odd: refused at load.
    let mut b = Builder::new();
    let x = b.input_sized(1, any(), 3, 4);
    let outs = b.op_n(Op::SubposSplit { order: [0, 1, 2, 3] }, &[x], &[1; 4]);
    for &o in &outs {
        b.output(o);
    }
    assert_eq!(load_refusal(&b.build()), Code::ModelMismatch);
}

/// `subpos_merge` of four inputs with channel counts `chans`, output record `cout`.
fn merge_graph(chans: [u32; 4], order: [u8; 4], cout: u32) -> Graph {
    let mut b = Builder::new();
    let ins: Vec<u32> = chans.iter().map(|&c| b.input(c, any())).collect();
    let y = b.op(Op::SubposMerge { order }, &ins, cout);
    b.output(y);
    b.build()
}

#[test]
fn subpos_merge_non_identity_order_by_hand() {
    // order [1, 2, 3, 0] → (a, b) = (0,1), (1,0), (1,1), (0,0). Inputs [1, 1, 2], in_k = 10k + x.
    // out[2y + a_k][2x + b_k] = in_k[y][x], output [1, 2, 4]:
    //   row 0 (a = 0): column 2x from k3 (b 0), 2x + 1 from k0 (b 1) → 30, 0, 31, 1
    //   row 1 (a = 1): column 2x from k1, 2x + 1 from k2 → 10, 20, 11, 21
    let g = merge_graph([1; 4], [1, 2, 3, 0], 1);
    let ins = (0..4).map(|k| t(1, 1, 2, &[10 * k, 10 * k + 1])).collect();
    assert_eq!(
        out1(&g, ins, vec![]),
        (shape(1, 2, 4), vec![30, 0, 31, 1, 10, 20, 11, 21])
    );
    // 1×1 inputs with two channels: in_k = [k, 10 + k] → [2, 2, 2]:
    //   c0: (0,0) ← k3 = 3, (0,1) ← k0 = 0, (1,0) ← k1 = 1, (1,1) ← k2 = 2 → 3, 0, 1, 2
    //   c1: 13, 10, 11, 12.
    let g = merge_graph([2; 4], [1, 2, 3, 0], 2);
    let ins = (0..4).map(|k| t(2, 1, 1, &[k, 10 + k])).collect();
    assert_eq!(
        out1(&g, ins, vec![]),
        (shape(2, 2, 2), vec![3, 0, 1, 2, 13, 10, 11, 12])
    );
}

#[test]
fn subpos_split_then_merge_round_trip() {
    // split and merge with the same non-identity order [2, 3, 1, 0] give back grid(2, 4, 6).
    // With the merge order [0, 1, 2, 3] instead, split output k (from (a_k, b_k) of [2, 3, 1, 0])
    // lands at identity position k: the (1,0) quadrant goes to (0,0), (1,1) to (0,1), (0,1) to (1,0),
    // (0,0) to (1,1). So out2[c][2y][2x] = in[c][2y + 1][2x], and e.g. out2[0][0][0..4] =
    // in[0][1][0], in[0][1][1], in[0][1][2], in[0][1][3] = 10, 11, 12, 13
    // (column 2x + 0 from (1,0) → 10, 12; column 2x + 1 from (1,1) → 11, 13);
    // out2[0][1][0..4] from (0,1) at even columns and (0,0) at odd ones: 1, 0, 3, 2.
    let mut b = Builder::new();
    let x = b.input(2, any());
    let parts = b.op_n(Op::SubposSplit { order: [2, 3, 1, 0] }, &[x], &[2; 4]);
    let same = b.op(Op::SubposMerge { order: [2, 3, 1, 0] }, &parts, 2);
    let other = b.op(Op::SubposMerge { order: [0, 1, 2, 3] }, &parts, 2);
    b.output(same);
    b.output(other);
    let got = decode(&b.build(), vec![grid(2, 4, 6)], vec![]).unwrap();
    assert_eq!(got[0].shape, shape(2, 4, 6));
    assert_eq!(vals(&got[0]), vals(&grid(2, 4, 6)));
    assert_eq!(got[1].shape, shape(2, 4, 6));
    let o = vals(&got[1]);
    // Row 0 (6 columns): 10, 11, 12, 13, 14, 15; row 1: 1, 0, 3, 2, 5, 4.
    assert_eq!(o[0..6], [10, 11, 12, 13, 14, 15]);
    assert_eq!(o[6..12], [1, 0, 3, 2, 5, 4]);
}

#[test]
fn subpos_merge_channel_rules_refuse_at_load() {
    // Inputs of different channel counts (1, 1, 2, 1).
    assert_eq!(
        load_refusal(&merge_graph([1, 1, 2, 1], [0, 1, 2, 3], 1)),
        Code::ModelMismatch
    );
    // Output record 4 for C = 1 (the output keeps C; it is not 4C).
    assert_eq!(load_refusal(&merge_graph([1; 4], [0, 1, 2, 3], 4)), Code::ModelMismatch);
    // order not a permutation.
    assert_eq!(load_refusal(&merge_graph([1; 4], [3, 3, 2, 1], 1)), Code::ModelMismatch);
}

#[test]
fn subpos_merge_inputs_of_different_sizes_are_geometry_mismatches() {
    let g = merge_graph([1; 4], [0, 1, 2, 3], 1);
    let z = |h, w| t(1, h, w, &vec![0; (h * w) as usize]);
    // The third input has H = 2 where the others have 1.
    assert_eq!(
        refusal(&g, vec![z(1, 2), z(1, 2), z(2, 2), z(1, 2)], vec![]),
        Code::GeometryMismatch
    );
    // The last input has W = 3 where the others have 2.
    assert_eq!(
        refusal(&g, vec![z(1, 2), z(1, 2), z(1, 2), z(1, 3)], vec![]),
        Code::GeometryMismatch
    );
    // Declared sizes that differ are refused at load (A4).
    let mut b = Builder::new();
    let ins: Vec<u32> = [(2, 2), (2, 2), (2, 2), (2, 3)]
        .iter()
        .map(|&(h, w)| b.input_sized(1, any(), h, w))
        .collect();
    let y = b.op(Op::SubposMerge { order: [0, 1, 2, 3] }, &ins, 1);
    b.output(y);
    assert_eq!(load_refusal(&b.build()), Code::ModelMismatch);
}

/// Four merge inputs: the one at position `big_at` is a `conv_transpose` of data input 0
/// ([1, 1, 1]) with 1×1 kernel, stride 1 and output padding `oph`, so it is
/// [1, 1 + oph, 1] without ever being supplied; the others are data inputs [1, 1, 1].
fn merge_with_tall_input(big_at: usize, oph: u32) -> Graph {
    let mut b = Builder::new();
    let seed = b.input(1, any());
    let small: Vec<u32> = (0..3).map(|_| b.input(1, any())).collect();
    let ct = ConvTranspose::new(
        1,
        Geometry {
            k: (1, 1),
            s: (1, 1),
            p: (0, 0),
        },
        (oph, 0),
        vec![1],
        Rq::new(Round::Floor, PerChannel::One(0)),
    );
    let tall = b.op(Op::ConvTranspose(ct), &[seed], 1);
    let mut ins = small.clone();
    ins.insert(big_at, tall);
    let y = b.op(Op::SubposMerge { order: [0, 1, 2, 3] }, &ins, 1);
    b.output(y);
    b.build()
}

#[test]
fn subpos_merge_output_side_past_2_pow_26_comes_before_the_shape_rule() {
    let ones = || (0..4).map(|_| t(1, 1, 1, &[1])).collect::<Vec<_>>();
    // First merge input [1, 2^25 + 1, 1] (uh = 0·1 + 1 + 2^25, within every cap; 2^25 + 1
    // elements ≤ max_elems 2^26). Output side 2H = 2^26 + 2 > 2^26: too_large at run step 3,
    // before the shape rule (which would fail: the other inputs are 1 × 1).
    let g = merge_with_tall_input(0, 1 << 25);
    assert_eq!(refusal(&g, ones(), vec![]), Code::TooLarge);
    // First input [1, 2^25, 1]: 2H = 2^26 is not past the cap; the shape rule then fails.
    let g = merge_with_tall_input(0, (1 << 25) - 1);
    assert_eq!(refusal(&g, ones(), vec![]), Code::GeometryMismatch);
}

#[test]
fn subpos_merge_size_check_reads_the_first_input_reading_a7() {
    // A7: 2H and 2W are formed from the first input. Here the first is 1 × 1 (2H = 2) and the
    // second is [1, 2^25 + 1, 1]: the size check passes and the shape rule refuses.
    let ones = || (0..4).map(|_| t(1, 1, 1, &[1])).collect::<Vec<_>>();
    let g = merge_with_tall_input(1, 1 << 25);
    assert_eq!(refusal(&g, ones(), vec![]), Code::GeometryMismatch);
}

#[test]
fn subpos_merge_output_against_max_elems() {
    // max_elems 16. Inputs [1, 2, 2] (4 each) → [1, 4, 4] = 16: decodes.
    let mut g = merge_graph([1; 4], [0, 1, 2, 3], 1);
    g.max_elems = 16;
    let ins = |h: u64, w: u64| -> Vec<Tensor> { (0..4).map(|_| t(1, h, w, &vec![0; (h * w) as usize])).collect() };
    assert_eq!(out1(&g, ins(2, 2), vec![]).0, shape(1, 4, 4));
    // Inputs [1, 2, 3] (6 each ≤ 16) → [1, 4, 6] = 24 > 16: too_large.
    assert_eq!(refusal(&g, ins(2, 3), vec![]), Code::TooLarge);
}

// ───────────────────────────── fill ─────────────────────────────

#[test]
fn fill_constant_takes_channels_from_its_record_and_sides_from_the_input() {
    // Input [1, 2, 3]; output record of 2 channels → [2, 2, 3], every element −7.
    let g = one(Op::Fill(FillValue::Const(-7)), 1, 2);
    assert_eq!(out1(&g, vec![grid(1, 2, 3)], vec![]), (shape(2, 2, 3), vec![-7; 12]));
    // The i64 ends; a 1×1 plane; fewer channels than the input (3 → 1).
    let g = one(Op::Fill(FillValue::Const(i64::MIN)), 3, 1);
    assert_eq!(
        out1(&g, vec![grid(3, 1, 1)], vec![]),
        (shape(1, 1, 1), vec![i64::MIN as i128])
    );
    let g = one(Op::Fill(FillValue::Const(i64::MAX)), 1, 1);
    assert_eq!(
        out1(&g, vec![grid(1, 3, 5)], vec![]),
        (shape(1, 3, 5), vec![i64::MAX as i128; 15])
    );
}

fn fill_scalar(lo: i64, hi: i64, cout: u32) -> Graph {
    let mut b = Builder::new();
    let x = b.input(1, any());
    let s = b.scalar(lo, hi);
    let y = b.op(Op::Fill(FillValue::Scalar(s)), &[x], cout);
    b.output(y);
    b.build()
}

#[test]
fn fill_scalar_value_and_its_range() {
    let g = fill_scalar(-5, 5, 3);
    // Each end of [−5, 5] fills [3, 1, 2].
    assert_eq!(out1(&g, vec![grid(1, 1, 2)], vec![-5]), (shape(3, 1, 2), vec![-5; 6]));
    assert_eq!(out1(&g, vec![grid(1, 1, 2)], vec![5]), (shape(3, 1, 2), vec![5; 6]));
    // One past either end: field_range.
    assert_eq!(refusal(&g, vec![grid(1, 1, 2)], vec![6]), Code::FieldRange);
    assert_eq!(refusal(&g, vec![grid(1, 1, 2)], vec![-6]), Code::FieldRange);
    // A scalar index with no record: model_mismatch at load.
    let mut b = Builder::new();
    let x = b.input(1, any());
    let y = b.op(Op::Fill(FillValue::Scalar(0)), &[x], 1);
    b.output(y);
    assert_eq!(load_refusal(&b.build()), Code::ModelMismatch);
}

#[test]
fn fill_output_past_max_elems_is_too_large() {
    // max_elems 16; input [1, 2, 2] = 4. A 4-channel fill → 16: decodes; 5 channels → 20: too_large.
    let mut g = one(Op::Fill(FillValue::Const(1)), 1, 4);
    g.max_elems = 16;
    assert_eq!(out1(&g, vec![grid(1, 2, 2)], vec![]), (shape(4, 2, 2), vec![1; 16]));
    let mut g = one(Op::Fill(FillValue::Const(1)), 1, 5);
    g.max_elems = 16;
    assert_eq!(refusal(&g, vec![grid(1, 2, 2)], vec![]), Code::TooLarge);
}

#[test]
fn scalar_range_is_checked_before_the_plan() {
    // Run step 2 (scalars) precedes step 3 (the plan): a concat whose inputs disagree in H and a
    // fill scalar out of range give field_range; with the scalar in range, geometry_mismatch.
    let mut b = Builder::new();
    let a = b.input(1, any());
    let c = b.input(1, any());
    let s = b.scalar(0, 3);
    let f = b.op(Op::Fill(FillValue::Scalar(s)), &[a], 1);
    let y = b.op(Op::Concat, &[f, c], 2);
    b.output(y);
    let g = b.build();
    let ins = || vec![grid(1, 2, 2), grid(1, 3, 2)];
    assert_eq!(refusal(&g, ins(), vec![4]), Code::FieldRange);
    assert_eq!(refusal(&g, ins(), vec![3]), Code::GeometryMismatch);
    // Same sizes and scalar 3: fill gives 3 3 3 3, then input 1 (grid: 0 1 10 11).
    assert_eq!(
        out1(&g, vec![grid(1, 2, 2), grid(1, 2, 2)], vec![3]),
        (shape(2, 2, 2), vec![3, 3, 3, 3, 0, 1, 10, 11])
    );
}
