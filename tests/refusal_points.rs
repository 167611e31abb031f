//! Every refusal says where it arose (`load.N`, `run.N.sub`), so that the coverage tool
//! can check that a vector is refused at the step it claims.

mod common;
use common::*;
use num_bigint::BigInt;
use wai_oracle::bounds;
use wai_oracle::bounds::profile::Profile;
use wai_oracle::run::{Sequence, Stop};
use wai_oracle::whg1::build::Builder;
use wai_oracle::whg1::{self, Crop, Graph, Op, Operand};

fn load_at(bytes: &[u8]) -> String {
    match whg1::load(bytes) {
        Err(r) => r.at,
        Ok(l) => match bounds::step8("g", bytes, &l.graph, Profile::Acc64) {
            Err(r) => r.at,
            Ok(_) => "ok".into(),
        },
    }
}

fn relu() -> Graph {
    let mut b = Builder::new();
    let x = b.input(1, check(-5, 5));
    let y = b.op(Op::Relu, &[x], 1);
    b.output(y);
    b.build()
}

#[test]
fn load_refusals_name_their_step() {
    let good = whg1::write(&relu());
    assert_eq!(load_at(&good), "ok");
    let patched = |at: usize, v: u8| {
        let mut b = good.clone();
        b[at] = v;
        load_at(&b)
    };
    assert_eq!(patched(0, b'X'), "load.1");
    assert_eq!(patched(6, 1), "load.2");
    assert_eq!(load_at(&good[..good.len() - 1]), "load.5");
    assert_eq!(patched(8, 200), "load.3");
    assert_eq!(patched(32 + 32 + 4 + 5, 3), "load.4"); // tensor 0's policy byte
    assert_eq!(patched(32 + 32 + 4 + 48, 0x1F), "load.5"); // the opcode
    let mut g = relu();
    g.tensors[0].policy = wai_oracle::whg1::Policy::Derived;
    assert_eq!(load_at(&whg1::write(&g)), "load.6");
    let mut g = relu();
    g.tensors[1].channels = 2;
    assert_eq!(load_at(&whg1::write(&g)), "load.7");
    let mut g = relu();
    g.tensors[1].policy = wai_oracle::whg1::Policy::Check { lo: -5, hi: -1 };
    assert_eq!(load_at(&whg1::write(&g)), "load.8.pass");
    let mut g = relu();
    g.tensors[0].policy = wai_oracle::whg1::Policy::Check { lo: i64::MIN, hi: 0 };
    g.nodes[0].op = Op::Abs;
    assert_eq!(load_at(&whg1::write(&g)), "load.8.profile");
}

fn run_at(g: &Graph, inputs: Vec<wai_oracle::tensor::Tensor>, scalars: &[i64]) -> String {
    let loaded = load(g).unwrap();
    let scalars: Vec<BigInt> = scalars.iter().map(|&s| BigInt::from(s)).collect();
    match Sequence::new(&loaded).decode(inputs, &scalars) {
        Ok(_) => "ok".into(),
        Err(Stop::Refused(r)) => r.at,
        Err(Stop::Error(e)) => panic!("{e}"),
    }
}

#[test]
fn run_refusals_name_their_step_and_sub_step() {
    // Declared 4×4: x → crop (height the scalar, in [1, 2]) → relu.
    let mut b = Builder::new();
    let k = b.scalar(1, 2);
    let x = b.input_sized(1, check(0, 9), 4, 4);
    let crop = Crop {
        y0: Operand::Const(0),
        x0: Operand::Const(0),
        h: Operand::Scalar(k),
        w: Operand::Const(1),
    };
    let c = b.op(Op::Crop(crop), &[x], 1);
    let y = b.op(Op::Relu, &[c], 1);
    b.output(y);
    let g = b.build();
    assert_eq!(run_at(&g, vec![t(2, 1, 1, &[0, 0])], &[1]), "run.1.channels");
    assert_eq!(run_at(&g, vec![t(1, 0, 1, &[])], &[1]), "run.1.sides");
    assert_eq!(run_at(&g, vec![t(1, 5, 1, &[0; 5])], &[1]), "run.1.declared");
    assert_eq!(run_at(&g, vec![t(1, 2, 1, &[0; 2])], &[3]), "run.2");
    assert_eq!(run_at(&g, vec![t(1, 1, 1, &[0])], &[2]), "run.3.shape");
    assert_eq!(run_at(&g, vec![t(1, 2, 1, &[0; 2])], &[2]), "ok");
    // No declared sizes, max_elems 8: a pad_rep whose side is always 2^27.
    let mut b = Builder::new();
    let x = b.input(1, check(0, 9));
    let y = b.op(Op::PadRep { m: 1 << 27 }, &[x], 1);
    b.output(y);
    b.max_elems(8);
    let g = b.build();
    assert_eq!(run_at(&g, vec![t(1, 3, 3, &[0; 9])], &[]), "run.1.max_elems");
    assert_eq!(run_at(&g, vec![t(1, 1, 1, &[0])], &[]), "run.3.size");
    // A 1×1 plane padded to 3×3 passes max_elems 8.
    let mut b = Builder::new();
    let x = b.input(1, check(0, 9));
    let y = b.op(Op::PadRep { m: 3 }, &[x], 1);
    b.output(y);
    b.max_elems(8);
    assert_eq!(run_at(&b.build(), vec![t(1, 1, 1, &[0])], &[]), "run.3.max_elems");
    let mut b = Builder::new();
    let x = b.input(1, check(0, 9));
    let y = b.op(Op::Relu, &[x], 1);
    b.policy(y, check(0, 5));
    b.output(y);
    let g = b.build();
    assert_eq!(run_at(&g, vec![t(1, 1, 1, &[10])], &[]), "run.4.input");
    assert_eq!(run_at(&g, vec![t(1, 1, 1, &[6])], &[]), "run.4.check");
    assert_eq!(run_at(&g, vec![t(1, 1, 1, &[5])], &[]), "ok");
}
