//! §10.3 state carried across a sequence, and §4's run steps in order.

mod common;
use common::*;
use wai_oracle::refusal::Code;
use wai_oracle::whg1::build::Builder;
use wai_oracle::whg1::{Graph, Op};

/// y = add(x, s) with `check [−1000, 1000]` on y; s is a state fed by output 0 (y), init 5.
fn accumulator() -> Graph {
    let mut b = Builder::new();
    let x = b.input(1, check(-100, 1000));
    let s = b.state(1, check(-1000, 1000), 0, 5, 0, 0);
    let y = b.op(Op::Add, &[x, s], 1);
    b.policy(y, check(-1000, 1000));
    b.output(y);
    b.build()
}

#[test]
fn state_carries_across_decodes_and_a_refused_decode_changes_nothing() {
    let outcomes = run_sequence(
        &accumulator(),
        vec![
            // 1: s is init, [1, 1, 2] of 5s (input 0's size): y = [1 + 5, 2 + 5].
            (vec![t(1, 1, 2, &[1, 2])], vec![]),
            // 2: y = [995 + 6, 0 + 7] = [1001, 7]: 1001 breaks y's check after the add ran.
            (vec![t(1, 1, 2, &[995, 0])], vec![]),
            // 3: the carried [1, 1, 2] no longer matches a [1, 1, 3] input: run step 3.
            (vec![t(1, 1, 3, &[0, 0, 0])], vec![]),
            // 4: s is still decode 1's y, [6, 7]: y = [10 + 6, 20 + 7].
            (vec![t(1, 1, 2, &[10, 20])], vec![]),
            // 5: s = [16, 27]: y = [−16 + 16, −27 + 27].
            (vec![t(1, 1, 2, &[-16, -27])], vec![]),
        ],
    );
    let vals_of = |o: &Outcome| o.as_ref().map(|ts| vals(&ts[0])).map_err(|c| *c);
    assert_eq!(vals_of(&outcomes[0]), Ok(vec![6, 7]));
    assert_eq!(vals_of(&outcomes[1]), Err(Code::FieldRange));
    assert_eq!(vals_of(&outcomes[2]), Err(Code::GeometryMismatch));
    assert_eq!(vals_of(&outcomes[3]), Ok(vec![16, 27]));
    assert_eq!(vals_of(&outcomes[4]), Ok(vec![0, 0]));
}

#[test]
fn until_a_decode_completes_the_state_is_init_sized_from_input_0() {
    let outcomes = run_sequence(
        &accumulator(),
        vec![
            // Refused at run step 4 by x's own check: nothing completed.
            (vec![t(1, 1, 1, &[-101])], vec![]),
            // Still init, now [1, 1, 3] of 5s.
            (vec![t(1, 1, 3, &[1, 2, 3])], vec![]),
        ],
    );
    assert_eq!(outcomes[0].as_ref().err(), Some(&Code::FieldRange));
    assert_eq!(vals(&outcomes[1].as_ref().unwrap()[0]), vec![6, 7, 8]);
}

#[test]
fn run_steps_come_in_order() {
    // One scalar [0, 3]; y = crop(x) with constant operands 0, 0 and the scalar as length h.
    use wai_oracle::whg1::{Crop, Operand};
    let mut b = Builder::new();
    let k = b.scalar(1, 3);
    let x = b.input(1, check(0, 9));
    let crop = Crop {
        y0: Operand::Const(0),
        x0: Operand::Const(0),
        h: Operand::Scalar(k),
        w: Operand::Const(1),
    };
    let y = b.op(Op::Crop(crop), &[x], 1);
    b.output(y);
    b.max_elems(4);
    let g = b.build();
    // Step 1 (a side of 0, model_mismatch) before step 2 (the scalar, field_range).
    assert_eq!(refusal(&g, vec![t(1, 0, 1, &[])], vec![9]), Code::ModelMismatch);
    // Step 1 (channels) first too.
    assert_eq!(refusal(&g, vec![t(2, 1, 1, &[0, 0])], vec![9]), Code::ModelMismatch);
    // Step 1 (max_elems, too_large) before step 2.
    assert_eq!(refusal(&g, vec![t(1, 5, 1, &[0; 5])], vec![9]), Code::TooLarge);
    // Step 2 before step 3: scalar 9 is outside [1, 3] and would not fit the input either.
    assert_eq!(refusal(&g, vec![t(1, 2, 1, &[0, 0])], vec![9]), Code::FieldRange);
    // Step 3 (the crop does not fit) before step 4 (x's element 10 breaks its check).
    assert_eq!(refusal(&g, vec![t(1, 2, 1, &[10, 0])], vec![3]), Code::GeometryMismatch);
    // Step 4.
    assert_eq!(refusal(&g, vec![t(1, 2, 1, &[10, 0])], vec![2]), Code::FieldRange);
    assert_eq!(out1(&g, vec![t(1, 3, 1, &[7, 8, 9])], vec![2]).1, vec![7, 8]);
}

#[test]
fn inputs_are_checked_in_input_table_order() {
    // Input 0 breaks max_h (too_large); input 1 has the wrong channel count (model_mismatch).
    let mut b = Builder::new();
    let x = b.input_sized(1, any(), 2, 2);
    let z = b.input_sized(1, any(), 2, 2);
    let y = b.op(Op::Add, &[x, z], 1);
    b.output(y);
    let g = b.build();
    assert_eq!(
        refusal(&g, vec![t(1, 3, 1, &[0; 3]), t(2, 1, 1, &[0, 0])], vec![]),
        Code::TooLarge
    );
    assert_eq!(
        refusal(&g, vec![t(1, 1, 1, &[0]), t(2, 1, 1, &[0, 0])], vec![]),
        Code::ModelMismatch
    );
    // A clamp input is clamped; a check input refuses: the first input's refusal comes first.
    let mut b = Builder::new();
    let x = b.input(1, clamp(0, 5));
    let z = b.input(1, check(0, 5));
    let y = b.op(Op::Add, &[x, z], 1);
    b.output(y);
    let g = b.build();
    // x = 9 → 5; z = 4: 9.
    assert_eq!(out1(&g, vec![t(1, 1, 1, &[9]), t(1, 1, 1, &[4])], vec![]).1, vec![9]);
    assert_eq!(
        refusal(&g, vec![t(1, 1, 1, &[9]), t(1, 1, 1, &[6])], vec![]),
        Code::FieldRange
    );
}
