//! §10.5 load checks, step by step, and the canonical round trip `write(read(b)) == b`.

mod common;
use common::*;
use wai_oracle::num::Round;
use wai_oracle::refusal::Code;
use wai_oracle::whg1::build::{Builder, Geometry};
use wai_oracle::whg1::load as load_bytes;
use wai_oracle::whg1::{
    Contraction, Conv, Crop, FillValue, Graph, Igdn, InputKind, Lut16, Op, Operand, PerChannel, Placement, Policy, Rq,
    TensorRecord, write,
};

/// input (2 channels, check) → relu → rescale(shift 1, pre bias) → output.
fn small() -> Graph {
    let mut b = Builder::new();
    let x = b.input(2, check(-100, 100));
    let r = b.op(Op::Relu, &[x], 2);
    let rq = Rq::new(Round::Floor, PerChannel::One(1)).bias(Placement::Pre, vec![1, -1]);
    let y = b.op(Op::Rescale(rq), &[r], 2);
    b.output(y);
    b.build()
}

fn bytes_of(g: &Graph) -> Vec<u8> {
    write(g)
}

fn code(bytes: &[u8]) -> Result<(), Code> {
    load_bytes(bytes).map(|_| ()).map_err(|r| r.code)
}

/// Offsets of the tables in a graph's bytes (§10.1, §10.2).
fn offsets(g: &Graph) -> (usize, usize, usize, usize, usize) {
    let scalars = 32;
    let inputs = scalars + 16 * g.scalars.len();
    let outputs = inputs + 32 * g.inputs.len();
    let tensors = outputs + 4 * g.outputs.len();
    let ops = tensors + 24 * g.tensors.len();
    (scalars, inputs, outputs, tensors, ops)
}

#[test]
fn a_valid_graph_loads_and_round_trips() {
    let g = small();
    let b = bytes_of(&g);
    let loaded = load_bytes(&b).expect("loads");
    assert_eq!(loaded.graph, g);
    assert_eq!(write(&loaded.graph), b);
    // Header: 32 bytes; 1 input record (32), 1 output (4), 3 tensors (72); relu 4 + 4 + 4 + 4 = 16;
    // rescale 16 + RQ(8 + 1 shift + 2·4 bias) = 33.
    assert_eq!(b.len(), 32 + 32 + 4 + 72 + 16 + 33);
}

#[test]
fn step1_header() {
    let b = bytes_of(&small());
    let mut bad = b.clone();
    bad[0] = b'X';
    assert_eq!(code(&bad), Err(Code::ModelMismatch));
    for (at, v) in [(4, 2u8), (5, 0u8)] {
        let mut bad = b.clone();
        bad[at] = v;
        assert_eq!(code(&bad), Err(Code::ModelMismatch), "version / operator set");
    }
    assert_eq!(code(&b[..31]), Err(Code::ModelMismatch));
    assert_eq!(code(&[]), Err(Code::ModelMismatch));
    // max_elems 0 and 2^26 + 1 are out of the field's range (A2): model_mismatch, not too_large.
    for max in [0u32, (1 << 26) + 1, u32::MAX] {
        let mut bad = b.clone();
        bad[24..28].copy_from_slice(&max.to_le_bytes());
        assert_eq!(code(&bad), Err(Code::ModelMismatch), "max_elems {max}");
    }
    // n_ops = 0.
    let mut bad = b.clone();
    bad[12..16].copy_from_slice(&0u32.to_le_bytes());
    assert_eq!(code(&bad), Err(Code::ModelMismatch));
}

#[test]
fn step2_reserved_header_fields() {
    let b = bytes_of(&small());
    for at in [6, 7, 22, 23, 28, 31] {
        let mut bad = b.clone();
        bad[at] = 1;
        assert_eq!(code(&bad), Err(Code::ModelMismatch), "reserved byte {at}");
    }
}

#[test]
fn step3_counts_against_the_length() {
    let b = bytes_of(&small());
    // 2^32 − 1 tensors cannot fit: refused before anything is allocated.
    let mut bad = b.clone();
    bad[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
    assert_eq!(code(&bad), Err(Code::ModelMismatch));
    for cut in [b.len() - 1, 40, 100] {
        assert_eq!(code(&b[..cut]), Err(Code::ModelMismatch), "cut at {cut}");
    }
    let mut long = b.clone();
    long.push(0);
    assert_eq!(
        code(&long),
        Err(Code::ModelMismatch),
        "nothing follows the last operator"
    );
}

#[test]
fn step4_table_records() {
    let g = small();
    let (_, inputs, outputs, tensors, _) = offsets(&g);
    let b = bytes_of(&g);
    let patch = |at: usize, v: &[u8]| {
        let mut bad = b.clone();
        bad[at..at + v.len()].copy_from_slice(v);
        code(&bad)
    };
    // Input record: kind 2; a reserved byte; max_h 1 with max_w 0; a data input with init ≠ 0;
    // a tensor that does not exist.
    assert_eq!(patch(inputs + 12, &[2]), Err(Code::ModelMismatch));
    assert_eq!(patch(inputs + 13, &[1]), Err(Code::ModelMismatch));
    assert_eq!(patch(inputs + 20, &[1]), Err(Code::ModelMismatch));
    assert_eq!(patch(inputs + 4, &1u32.to_le_bytes()), Err(Code::ModelMismatch));
    assert_eq!(patch(inputs + 24, &5i64.to_le_bytes()), Err(Code::ModelMismatch));
    assert_eq!(
        patch(inputs + 16, &1u32.to_le_bytes()),
        Err(Code::ModelMismatch),
        "data input src 1"
    );
    assert_eq!(patch(inputs, &9u32.to_le_bytes()), Err(Code::ModelMismatch));
    // Output record naming no tensor.
    assert_eq!(patch(outputs, &3u32.to_le_bytes()), Err(Code::ModelMismatch));
    // Tensor record: channels 0; policy 3; a reserved byte; derived with lo ≠ 0; lo > hi.
    assert_eq!(patch(tensors, &0u32.to_le_bytes()), Err(Code::ModelMismatch));
    assert_eq!(patch(tensors + 5, &[3]), Err(Code::ModelMismatch));
    assert_eq!(patch(tensors + 6, &[1]), Err(Code::ModelMismatch));
    assert_eq!(patch(tensors + 24 + 8, &1i64.to_le_bytes()), Err(Code::ModelMismatch));
    assert_eq!(patch(tensors + 8, &200i64.to_le_bytes()), Err(Code::ModelMismatch));
    // Scalar lo > hi.
    let mut b2 = Builder::new();
    b2.scalar(5, 4);
    let x = b2.input(1, any());
    let y = b2.op(Op::Relu, &[x], 1);
    b2.output(y);
    assert_eq!(load_refusal(&b2.build()), Code::ModelMismatch);
    // Some inputs declare sizes and some do not.
    let mut b3 = Builder::new();
    let x = b3.input_sized(1, any(), 2, 2);
    let z = b3.input(1, any());
    let y = b3.op(Op::Add, &[x, z], 1);
    b3.output(y);
    assert_eq!(load_refusal(&b3.build()), Code::ModelMismatch);
}

#[test]
fn step5_operator_records() {
    let g = small();
    let (.., ops) = offsets(&g);
    let b = bytes_of(&g);
    let patch = |at: usize, v: &[u8]| {
        let mut bad = b.clone();
        bad[at..at + v.len()].copy_from_slice(v);
        code(&bad)
    };
    assert_eq!(patch(ops, &[0x00]), Err(Code::ModelMismatch), "opcode 0");
    assert_eq!(patch(ops, &[0x1F]), Err(Code::ModelMismatch), "opcode 0x1F");
    assert_eq!(patch(ops + 3, &[1]), Err(Code::ModelMismatch), "reserved operator byte");
    assert_eq!(
        patch(ops + 8, &7u32.to_le_bytes()),
        Err(Code::ModelMismatch),
        "output tensor 7"
    );
    // The rescale record begins after relu's 16 bytes; its RQ after 16 more.
    let rq = ops + 16 + 16;
    assert_eq!(patch(rq, &[3]), Err(Code::ModelMismatch), "round 3");
    assert_eq!(patch(rq + 1, &[3]), Err(Code::ModelMismatch), "bias placement 3");
    assert_eq!(patch(rq + 3, &[0]), Err(Code::ModelMismatch), "s_kind 0");
    assert_eq!(patch(rq + 5, &[2]), Err(Code::ModelMismatch), "b_bytes 2");
    assert_eq!(patch(rq + 6, &[1]), Err(Code::ModelMismatch), "RQ reserved");
    assert_eq!(patch(rq + 8, &[128]), Err(Code::ModelMismatch), "shift 128");
    assert_eq!(patch(rq + 8, &[127]), Ok(()), "shift 127");
    // A parameter length one short or one long.
    let plen_at = ops + 16 + 12;
    assert_eq!(patch(plen_at, &24u32.to_le_bytes()), Err(Code::ModelMismatch));
    // Arity: add with one input.
    let mut bad = g.clone();
    bad.nodes[0].op = Op::Add;
    assert_eq!(load_refusal(&bad), Code::ModelMismatch);
}

/// One-operator graphs whose parameters break a range of §5 or §10.4.
#[test]
fn step5_parameter_ranges() {
    let one = |op: Op, cin: u32, cout: u32| {
        let mut b = Builder::new();
        let x = b.input(cin, any());
        let y = b.op(op, &[x], cout);
        b.output(y);
        b.build()
    };
    let floor = Rq::new(Round::Floor, PerChannel::One(0));
    let geom = Geometry {
        k: (1, 1),
        s: (1, 1),
        p: (0, 0),
    };
    let mut bad_conv = Conv::new(1, geom, 1, vec![1], floor.clone());
    bad_conv.sh = 0;
    let mut bad_w = Conv::new(1, geom, 1, vec![1], floor.clone());
    bad_w.w_bytes = 3;
    let mut table = vec![0i16; 65536];
    table[0] = 1;
    let cases: Vec<(&str, Graph)> = vec![
        ("conv stride 0", one(Op::Conv(bad_conv), 1, 1)),
        ("w_bytes 3", one(Op::Conv(bad_w), 1, 1)),
        ("leaky f 64", one(Op::Leaky { a: 1, f: 64 }, 1, 1)),
        ("pad_rep m 0", one(Op::PadRep { m: 0 }, 1, 1)),
        ("pixel_shuffle r 0", one(Op::PixelShuffle { r: 0 }, 1, 1)),
        ("split count 0", one(Op::Split { start: 0, count: 0 }, 1, 1)),
        ("clamp lo > hi", one(Op::Clamp { lo: 1, hi: 0 }, 1, 1)),
        (
            "lut16 T[0] ≠ 0",
            one(
                Op::Lut16(Lut16 {
                    e_in: None,
                    e_out: None,
                    table,
                }),
                1,
                1,
            ),
        ),
        ("l2norm ε 0", one(Op::L2norm { eps: 0 }, 1, 1)),
        (
            "subpos order not a permutation",
            one(Op::SubposMerge { order: [0, 1, 2, 2] }, 1, 1),
        ),
        ("igdn gf 128", one(Op::Igdn(Igdn::new(128, 0, vec![1], vec![0])), 1, 1)),
        ("gram with a multiplier", {
            let mut b = Builder::new();
            let x = b.input_sized(1, any(), 1, 1);
            let rq = Rq::new(Round::Floor, PerChannel::One(0)).mult(PerChannel::One(2));
            let y = b.op(Op::Gram(Contraction { groups: 1, rq }), &[x, x], 1);
            b.output(y);
            b.build()
        }),
        ("mul with a bias", {
            let mut b = Builder::new();
            let x = b.input(1, any());
            let rq = Rq::new(Round::Floor, PerChannel::One(0)).bias(Placement::Pre, vec![1]);
            let y = b.op(Op::Mul(rq), &[x, x], 1);
            b.output(y);
            b.build()
        }),
        (
            "crop scalar that does not exist",
            one(
                Op::Crop(Crop {
                    y0: Operand::Scalar(0),
                    x0: Operand::Const(0),
                    h: Operand::Const(1),
                    w: Operand::Const(1),
                }),
                1,
                1,
            ),
        ),
        (
            "fill scalar that does not exist",
            one(Op::Fill(FillValue::Scalar(0)), 1, 1),
        ),
    ];
    for (what, g) in cases {
        assert_eq!(code(&write(&g)), Err(Code::ModelMismatch), "{what}");
    }
}

#[test]
fn step6_graph_rules() {
    let g = small();
    let mut cases: Vec<(&str, Graph)> = Vec::new();
    let mut never_produced = g.clone();
    never_produced.tensors.push(TensorRecord {
        channels: 1,
        exponent: None,
        policy: Policy::Derived,
    });
    cases.push(("a tensor nobody produces", never_produced));
    let mut reads_later = g.clone();
    reads_later.nodes[0].inputs = vec![2];
    cases.push(("an operator reads a later tensor", reads_later));
    let mut writes_input = g.clone();
    writes_input.nodes[1].outputs = vec![0];
    writes_input.tensors.pop();
    writes_input.outputs = vec![1];
    cases.push(("an operator writes the graph input", writes_input));
    let mut twice = g.clone();
    twice.nodes[1].outputs = vec![1];
    twice.tensors.pop();
    twice.outputs = vec![1];
    cases.push(("a tensor written twice", twice));
    let mut derived_input = g.clone();
    derived_input.tensors[0].policy = Policy::Derived;
    cases.push(("an input with the policy derived", derived_input));
    let mut state0 = g.clone();
    state0.inputs[0].kind = InputKind::State { src: 0, init: 0 };
    cases.push(("input 0 is a state", state0));
    for (what, g) in cases {
        assert_eq!(load_refusal(&g), Code::ModelMismatch, "{what}");
    }
}

fn with_state(src: u32, state_channels: u32, init: i64) -> Graph {
    let mut b = Builder::new();
    let x = b.input(1, any());
    let s = b.state(state_channels, check(-10, 10), src, init, 0, 0);
    let y = b.op(Op::Add, &[x, s], 1);
    b.output(y);
    b.build()
}

#[test]
fn step6_state_rules() {
    assert!(load(&with_state(0, 1, 3)).is_ok());
    assert_eq!(
        load_refusal(&with_state(1, 1, 3)),
        Code::ModelMismatch,
        "src names no output"
    );
    assert_eq!(
        load_refusal(&with_state(0, 1, 11)),
        Code::ModelMismatch,
        "init outside the range"
    );
    // A 2-channel state fed by a 1-channel output (the add's channels then fail too).
    assert_eq!(load_refusal(&with_state(0, 2, 0)), Code::ModelMismatch);
}

#[test]
fn step6_exponent_rules() {
    let add = |ea: Option<i8>, eb: Option<i8>, eo: Option<i8>| {
        let mut b = Builder::new();
        let x = b.input(1, any());
        let z = b.input(1, any());
        let y = b.op(Op::Add, &[x, z], 1);
        b.exponent(x, ea).exponent(z, eb).exponent(y, eo);
        b.output(y);
        b.build()
    };
    assert!(load(&add(None, None, None)).is_ok());
    assert!(load(&add(Some(3), Some(3), Some(3))).is_ok());
    assert_eq!(load_refusal(&add(Some(3), None, Some(3))), Code::ModelMismatch);
    assert_eq!(load_refusal(&add(Some(3), Some(3), Some(4))), Code::ModelMismatch);
    // Exponents are not constrained on other operators: relu from e = 5 to none.
    let mut b = Builder::new();
    let x = b.input(1, any());
    let y = b.op(Op::Relu, &[x], 1);
    b.exponent(x, Some(5));
    b.output(y);
    assert!(load(&b.build()).is_ok());
}

#[test]
fn step7_plan() {
    // Channels: split past C.
    let mut b = Builder::new();
    let x = b.input(2, any());
    let y = b.op(Op::Split { start: 1, count: 2 }, &[x], 2);
    b.output(y);
    assert_eq!(load_refusal(&b.build()), Code::ModelMismatch);
    // softmax without declared sizes.
    let mut b = Builder::new();
    let x = b.input(1, any());
    let y = b.op(Op::Softmax, &[x], 1);
    b.output(y);
    assert_eq!(load_refusal(&b.build()), Code::ModelMismatch);
    // Declared sizes past max_elems: too_large (A3).
    let mut b = Builder::new();
    let x = b.input_sized(2, any(), 4, 4);
    let y = b.op(Op::Relu, &[x], 2);
    b.output(y);
    b.max_elems(31);
    assert_eq!(load_refusal(&b.build()), Code::TooLarge);
    b.max_elems(32);
    assert!(load(&b.build()).is_ok());
    // A shape that does not plan on the declared sizes: model_mismatch.
    let mut b = Builder::new();
    let x = b.input_sized(1, any(), 3, 4);
    let y = b.op(Op::PixelUnshuffle { r: 2 }, &[x], 4);
    b.output(y);
    assert_eq!(load_refusal(&b.build()), Code::ModelMismatch);
    // A size an operator forms past 2^26 on the declared sizes: too_large.
    let mut b = Builder::new();
    let x = b.input_sized(1, any(), 1, 1);
    let y = b.op(Op::PadRep { m: 1 << 27 }, &[x], 1);
    b.output(y);
    assert_eq!(load_refusal(&b.build()), Code::TooLarge);
}

#[test]
fn channel_counts_are_planned_before_shapes() {
    // Operator 0 forms a side past 2^26 at the declared sizes (too_large), operator 1's
    // channels do not plan (model_mismatch). All channel counts come first (A1).
    let mut b = Builder::new();
    let x = b.input_sized(2, any(), 1, 1);
    let p = b.op(Op::PadRep { m: 1 << 27 }, &[x], 2);
    let y = b.op(Op::ChunkAdd, &[p], 2); // 2/2 = 1 ≠ 2
    b.output(y);
    assert_eq!(load_refusal(&b.build()), Code::ModelMismatch);
}

#[test]
fn earlier_steps_win_over_a_size() {
    // The same too_large graph with a reserved byte set in its operator record: step 5 first.
    let mut b = Builder::new();
    let x = b.input_sized(1, any(), 1, 1);
    let y = b.op(Op::PadRep { m: 1 << 27 }, &[x], 1);
    b.output(y);
    let g = b.build();
    let mut bytes = write(&g);
    assert_eq!(code(&bytes), Err(Code::TooLarge));
    let (.., ops) = offsets(&g);
    bytes[ops + 3] = 1;
    assert_eq!(code(&bytes), Err(Code::ModelMismatch));
}

/// Every truncation and every single-byte change of a few graphs loads or is refused, and never
/// panics; whatever loads round-trips.
#[test]
fn no_byte_string_panics_the_reader() {
    let mut graphs = vec![small(), with_state(0, 1, 3)];
    let mut b = Builder::new();
    let x = b.input_sized(2, any(), 3, 3);
    let rq = Rq::new(Round::HalfEven, PerChannel::Each(vec![1, 2])).mult(PerChannel::Each(vec![3, -4]));
    let geom = Geometry {
        k: (2, 2),
        s: (1, 1),
        p: (1, 1),
    };
    let c = b.op(
        Op::Conv(Conv::new(2, geom, 2, vec![1, -1, 2, -2, 3, -3, 4, -4], rq)),
        &[x],
        2,
    );
    let s = b.op_n(Op::SubposSplit { order: [3, 2, 1, 0] }, &[c], &[2; 4]);
    let m = b.op(Op::SubposMerge { order: [3, 2, 1, 0] }, &s, 2);
    b.output(m);
    graphs.push(b.build());
    for g in graphs {
        let bytes = write(&g);
        for cut in 0..bytes.len() {
            let _ = load_bytes(&bytes[..cut]);
        }
        for at in 0..bytes.len() {
            for v in [0u8, 1, 2, 0x7f, 0x80, 0xff] {
                let mut bad = bytes.clone();
                bad[at] = v;
                if let Ok(l) = load_bytes(&bad) {
                    assert_eq!(write(&l.graph), bad, "a graph that loads round-trips");
                }
            }
        }
    }
}
