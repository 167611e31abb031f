//! §8.5 The certificate: its members for every operator (Table 8.5-A), the verdict and
//! its first failures, and one reviewed certificate per operator (insta snapshots, in a
//! readable rendering; the committed form stays canonical).

mod common;
use common::*;
use serde_json::{Value, json};
use std::collections::BTreeSet;
use wai_oracle::bounds::certificate::{Header, certificate};
use wai_oracle::bounds::profile::Profile;
use wai_oracle::canon;
use wai_oracle::num::Round;
use wai_oracle::whg1::build::{Builder, Geometry};
use wai_oracle::whg1::*;

fn floor(s: u8) -> Rq {
    Rq::new(Round::Floor, PerChannel::One(s))
}

const G1: Geometry = Geometry {
    k: (2, 2),
    s: (1, 1),
    p: (0, 0),
};

/// A one-operator graph of each of the 30 operators, on small ranges.
fn sample(name: &str) -> Graph {
    let mut b = Builder::new();
    let r = check(-8, 7);
    let sized = |b: &mut Builder, c| b.input_sized(c, check(-8, 7), 4, 4);
    let out = match name {
        "conv" => {
            let x = b.input(2, r);
            let rq = Rq::new(Round::HalfUp, PerChannel::One(1)).bias(Placement::Pre, vec![3, -3]);
            b.op(
                Op::Conv(Conv::new(2, G1, 1, (1..=16).map(|v| v - 8).collect(), rq)),
                &[x],
                2,
            )
        }
        "conv_transpose" => {
            let x = b.input(1, r);
            let g = Geometry {
                k: (3, 3),
                s: (2, 2),
                p: (1, 1),
            };
            let rq = Rq::new(Round::HalfEven, PerChannel::One(2)).mult(PerChannel::One(-3));
            b.op(
                Op::ConvTranspose(ConvTranspose::new(1, g, (1, 1), (1..=9).collect(), rq)),
                &[x],
                1,
            )
        }
        "rescale" => {
            let x = b.input(2, r);
            let rq = floor(40)
                .mult(PerChannel::Each(vec![5, -7]))
                .bias(Placement::Post, vec![1, 2]);
            b.op(Op::Rescale(rq), &[x], 2)
        }
        "chscale" => {
            let k = b.scalar(0, 1);
            let x = b.input(2, r);
            b.op(
                Op::Chscale(Chscale::new(k, 3, Round::HalfUp, 3, vec![1, 2, -3, 4, 1 << 40, 6])),
                &[x],
                2,
            )
        }
        "lut16" => {
            let x = b.input(1, check(-3, 3));
            let table: Vec<i16> = (0..65536)
                .map(|i| if i == 0 { 0 } else { ((i - 32768) * 3) as i16 })
                .collect();
            b.op(
                Op::Lut16(Lut16 {
                    e_in: None,
                    e_out: None,
                    table,
                }),
                &[x],
                1,
            )
        }
        "add" => {
            let x = b.input(1, r);
            let s = b.state(1, check(-100, 100), 0, 0, 0, 0);
            b.op(Op::Add, &[x, s], 1)
        }
        "concat" => {
            let x = b.input(1, r);
            let z = b.input(2, check(-100, 3));
            b.op(Op::Concat, &[x, z], 3)
        }
        "chunk_add" => {
            let x = b.input(2, r);
            b.op(Op::ChunkAdd, &[x], 1)
        }
        "split" => {
            let x = b.input(3, r);
            b.op(Op::Split { start: 1, count: 2 }, &[x], 2)
        }
        "pixel_shuffle" => {
            let x = b.input(4, r);
            b.op(Op::PixelShuffle { r: 2 }, &[x], 1)
        }
        "pixel_unshuffle" => {
            let x = b.input(1, r);
            b.op(Op::PixelUnshuffle { r: 2 }, &[x], 4)
        }
        "clamp" => {
            let x = b.input(1, r);
            b.op(Op::Clamp { lo: -2, hi: 100 }, &[x], 1)
        }
        "relu" => {
            let x = b.input(1, r);
            b.op(Op::Relu, &[x], 1)
        }
        "leaky" => {
            let x = b.input(1, r);
            b.op(Op::Leaky { a: 1 << 33, f: 3 }, &[x], 1)
        }
        "pad_rep" => {
            let x = b.input(1, r);
            b.op(Op::PadRep { m: 3 }, &[x], 1)
        }
        "crop_to" => {
            let x = b.input(1, r);
            let z = b.input(5, check(0, 0));
            b.op(Op::CropTo, &[x, z], 1)
        }
        "mul" => {
            let x = b.input(2, r);
            let z = b.input(1, check(-1000, 1000));
            b.op(Op::Mul(Rq::new(Round::HalfEven, PerChannel::One(3))), &[x, z], 2)
        }
        "igdn" => {
            let x = b.input(2, r);
            b.op(Op::Igdn(Igdn::new(2, 1, vec![1, -2, 3, 4], vec![10, -10])), &[x], 2)
        }
        "abs" => {
            let x = b.input(1, r);
            b.op(Op::Abs, &[x], 1)
        }
        "crop" => {
            let k = b.scalar(1, 2);
            let x = b.input(1, r);
            let c = Crop {
                y0: Operand::Const(0),
                x0: Operand::Scalar(k),
                h: Operand::Const(1),
                w: Operand::Const(1),
            };
            b.op(Op::Crop(c), &[x], 1)
        }
        "subpos_split" => {
            let x = b.input(1, r);
            let outs = b.op_n(Op::SubposSplit { order: [1, 0, 3, 2] }, &[x], &[1; 4]);
            for &t in &outs[1..] {
                b.output(t);
            }
            outs[0]
        }
        "subpos_merge" => {
            let ins: Vec<u32> = (0..4).map(|i| b.input(1, check(-i, i))).collect();
            b.op(Op::SubposMerge { order: [0, 1, 2, 3] }, &ins, 1)
        }
        "fill" => {
            let k = b.scalar(-5, 9);
            let x = b.input(1, r);
            b.op(Op::Fill(FillValue::Scalar(k)), &[x], 2)
        }
        "layernorm_c" => {
            let x = b.input(3, r);
            b.op(
                Op::LayernormC(LayernormC::new(42949, vec![65536, -65536, 1 << 20], vec![0, 1, -1])),
                &[x],
                3,
            )
        }
        "l2norm" => {
            let x = sized(&mut b, 1);
            b.op(Op::L2norm { eps: 42949 }, &[x], 1)
        }
        "softmax" => {
            let x = sized(&mut b, 1);
            b.op(Op::Softmax, &[x], 1)
        }
        "sigmoid" => {
            let x = b.input(1, r);
            b.op(Op::Sigmoid, &[x], 1)
        }
        "elu" => {
            let x = b.input(1, r);
            b.op(Op::Elu { alpha: 1 << 16 }, &[x], 1)
        }
        "gram" => {
            let x = sized(&mut b, 4);
            b.op(Op::Gram(Contraction::new(2, Round::HalfUp, 4)), &[x, x], 4)
        }
        "apply" => {
            let a = b.input_sized(4, check(-3, 3), 1, 2);
            let v = b.input_sized(4, r, 4, 4);
            b.op(Op::Apply(Contraction::new(2, Round::HalfUp, 1)), &[a, v], 4)
        }
        other => panic!("no sample for {other}"),
    };
    b.output(out);
    b.build()
}

/// Table 8.5-A, transcribed: the keys each operator records.
fn table_8_5_a(name: &str) -> Vec<&'static str> {
    let rq = ["rq.t", "rq.p", "rq.q", "rq.y"];
    let exp = ["exp.negx", "exp.nl", "exp.t2", "exp.c"];
    let with = |first: &[&'static str], then: &[&'static str]| [first, then].concat();
    match name {
        "conv" => with(&["conv.term", "conv.acc"], &rq),
        "conv_transpose" => with(&["convT.term", "convT.acc"], &rq),
        "rescale" | "chscale" => rq.to_vec(),
        "mul" => with(&["mul.p"], &rq),
        "gram" => with(&["gram.term", "gram.acc"], &rq),
        "apply" => with(&["apply.term", "apply.acc"], &rq),
        "leaky" => vec!["leaky.p"],
        "igdn" => vec!["igdn.x2", "igdn.gx2", "igdn.term", "igdn.N", "igdn.r", "igdn.xr"],
        "layernorm_c" => vec![
            "ln.S", "ln.m", "ln.d", "ln.T", "ln.v", "rsq.num", "ln.k", "ln.dk", "ln.n", "ln.ng",
        ],
        "l2norm" => vec!["l2.T", "rsq.num", "l2.k", "l2.vk"],
        "softmax" => with(&["sm.diff"], &with(&exp, &["sm.sum", "sm.num"])),
        "sigmoid" => with(&exp, &["sig.num"]),
        "elu" => with(&exp, &["elu.p"]),
        _ => vec![],
    }
}

fn cert_of(g: &Graph) -> Value {
    certificate(
        &[certified(g)],
        &Header {
            lowering: "whg1".into(),
            ..Header::default()
        },
    )
}

#[test]
fn every_operator_records_exactly_the_keys_of_table_8_5_a() {
    for (_, name) in OPERATORS {
        let cert = cert_of(&sample(name));
        let node = &cert["graphs"][0]["nodes"][0];
        assert_eq!(node["op"], json!(name));
        let keys: BTreeSet<&str> = node["intermediates"]
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        let want: BTreeSet<&str> = table_8_5_a(name).into_iter().collect();
        assert_eq!(keys, want, "{name}");
        // k_c for conv, conv_transpose, igdn, gram and apply only; mac for conv, conv_transpose,
        // chscale, mul, gram and apply, with w_bits for the first three only.
        let k_c = ["conv", "conv_transpose", "igdn", "gram", "apply"].contains(&name);
        assert_eq!(node.get("k_c").is_some(), k_c, "{name} k_c");
        let mac = ["conv", "conv_transpose", "chscale", "mul", "gram", "apply"].contains(&name);
        assert_eq!(node.get("mac").is_some(), mac, "{name} mac");
        let w_bits = ["conv", "conv_transpose", "chscale"].contains(&name);
        assert_eq!(
            node.get("mac").and_then(|m| m.get("w_bits")).is_some(),
            w_bits,
            "{name} w_bits"
        );
        let members: Vec<&str> = node.as_object().unwrap().keys().map(String::as_str).collect();
        let mut want = vec!["acc32_params", "fits", "index", "intermediates"];
        want.extend(k_c.then_some("k_c"));
        want.extend(mac.then_some("mac"));
        want.extend(["npu_flags", "op", "out", "saturated"]);
        assert_eq!(members, want, "{name} members");
    }
}

#[test]
fn one_certificate_per_operator() {
    for (_, name) in OPERATORS {
        let cert = cert_of(&sample(name));
        insta::assert_snapshot!(format!("certificate_{name}"), canon::to_pretty(&cert).unwrap());
    }
}

#[test]
fn the_certificate_is_canonical_bytes() {
    let c = certified(&sample("conv"));
    let header = Header {
        capability: Some("wai.test".into()),
        lowering: "whg1".into(),
        set_sha256: Some("ab".repeat(32)),
    };
    let bytes = wai_oracle::bounds::certificate::bytes(std::slice::from_ref(&c), &header);
    let text = String::from_utf8(bytes).unwrap();
    assert!(
        text.starts_with(r#"{"capability":"wai.test","certificate":"wai-ops/1 bounds","graphs":[{"graph_sha256":""#)
    );
    assert!(!text.ends_with('\n'));
    assert!(
        text.ends_with(r#""npu":true,"npu_flags":[],"npu_reasons":[]}}"#),
        "{text}"
    );
    // Every integer is a string: no digit follows a colon or a bracket directly.
    for w in text.as_bytes().windows(2) {
        assert!(
            !(matches!(w[0], b':' | b'[' | b',') && w[1].is_ascii_digit()),
            "a bare number in {text}"
        );
    }
    // graph_sha256 is the digest of the WHG1 bytes.
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        v["graphs"][0]["graph_sha256"],
        json!(wai_oracle::bounds::certificate::sha256_hex(&c.bytes))
    );
    assert_eq!(v["set_sha256"], json!("ab".repeat(32)));
}

#[test]
fn a_graph_that_fails_acc32_but_meets_acc64_loads_with_acc64_only() {
    // The leaky sample's slope 2^33 on [−8, 7]: leaky.p = [−8·2^33, −2^33] = [−2^36, −2^33] needs
    // 37 bits, past acc32's i32 and within acc64's i64.
    let c = certified(&sample("leaky"));
    assert_eq!(met(&c), vec![Profile::Acc64]);
    let cert = cert_of(&sample("leaky"));
    assert_eq!(cert["verdict"]["acc32"], json!(false));
    assert_eq!(
        cert["verdict"]["acc32_first_failure"],
        json!({"bits": "37", "graph": "g", "index": "0", "key": "leaky.p", "where": "node"})
    );
    assert_eq!(cert["verdict"]["acc64"], json!(true));
    assert_eq!(cert["verdict"]["npu_reasons"], json!(["acc32"]));
    // Through fill: load ok, profiles ["acc64"].
    let line = json!({ "id": "leaky", "graph": hex::encode(write(&sample("leaky"))), "decodes": [] }).to_string();
    let filled: Value = serde_json::from_str(&wai_oracle::fill::fill_line(&line).unwrap()).unwrap();
    assert_eq!(filled["load"], json!("ok"));
    assert_eq!(filled["profiles"], json!(["acc64"]));
}

#[test]
fn a_graph_that_fails_acc64_is_refused_with_both_profiles() {
    // mul of two full-i64 inputs: mul.p reaches 2^126, which no acc fits.
    let mut b = Builder::new();
    let x = b.input(1, any());
    let y = b.op(Op::Mul(floor(0)), &[x, x], 1);
    b.output(y);
    let line = json!({ "id": "m", "graph": hex::encode(write(&b.build())), "decodes": [] }).to_string();
    let filled: Value = serde_json::from_str(&wai_oracle::fill::fill_line(&line).unwrap()).unwrap();
    assert_eq!(filled["load"], json!("model_mismatch"));
    assert_eq!(filled["profiles"], json!(["acc32", "acc64"]));
}

#[test]
fn the_npu_verdict_and_flags() {
    // Flags are per node, the union is the verdict's, whatever npu is.
    let cert = cert_of(&sample("chscale"));
    assert_eq!(
        cert["graphs"][0]["nodes"][0]["npu_flags"],
        json!(["chscale", "rq_neg_mult"])
    );
    assert_eq!(cert["verdict"]["npu_flags"], json!(["chscale", "rq_neg_mult"]));
    // M holds 2^40: chscale.m fails acc32, so npu is false with the reason "acc32".
    assert_eq!(cert["verdict"]["npu"], json!(false));
    assert_eq!(cert["verdict"]["npu_reasons"], json!(["acc32"]));
    let cert = cert_of(&sample("add"));
    assert_eq!(cert["verdict"]["npu_flags"], json!(["state_add"]));
    assert_eq!(cert["verdict"]["npu"], json!(true));
    let cert = cert_of(&sample("igdn"));
    assert_eq!(cert["verdict"]["npu_reasons"], json!(["op:igdn"]));
    let cert = cert_of(&sample("crop"));
    assert_eq!(cert["verdict"]["npu_reasons"], json!(["crop_scalar"]));
    let cert = cert_of(&sample("rescale"));
    assert_eq!(
        cert["graphs"][0]["nodes"][0]["npu_flags"],
        json!(["rq_floor_mult", "rq_neg_mult", "rq_post_bias", "rq_shift_range"])
    );
    // conv_groups: groups 2 on 4 channels is neither 1 nor depthwise.
    let mut b = Builder::new();
    let x = b.input(4, check(-1, 1));
    let y = b.op(Op::Conv(Conv::new(2, G1, 2, vec![1; 16], floor(0))), &[x], 2);
    b.output(y);
    assert_eq!(cert_of(&b.build())["verdict"]["npu_reasons"], json!(["conv_groups"]));
}

#[test]
fn admissible_ranges_by_binary_search() {
    use wai_oracle::bounds::admissible::admissible;
    // relu reads x: every X ≤ 2^63 keeps max(±X, 0) in i64 only while X ≤ 2^63 − 1 for the upper
    // end; the lower end −X fits i64 at X = 2^63. So X* = 2^63 − 1 under acc64.
    let mut b = Builder::new();
    let x = b.input(1, check(-4, 4));
    let y = b.op(Op::Relu, &[x], 1);
    b.output(y);
    let c = certified(&b.build());
    let max = p2(63) - 1u32;
    assert_eq!(
        admissible(&c.graph, &c.pass, x, Profile::Acc64),
        Some((-max.clone(), max.clone()))
    );
    // Under acc32 the producer result [0, X] must fit i32: X* = 2^31 − 1.
    let m32 = p2(31) - 1u32;
    assert_eq!(
        admissible(&c.graph, &c.pass, x, Profile::Acc32),
        Some((-m32.clone(), m32))
    );
    // Nothing reads y: C(X) holds for every X, so X* = 2^63 and the range is [−2^63, 2^63 − 1].
    assert_eq!(admissible(&c.graph, &c.pass, y, Profile::Acc32), Some((-p2(63), max)));
    // softmax never meets acc32, so its input has no admissible range for acc32.
    let c = certified(&sample("softmax"));
    assert_eq!(admissible(&c.graph, &c.pass, 0, Profile::Acc32), None);
    // A lut16 reads at most ±32767 (docs/assumptions.md).
    let c = certified(&sample("lut16"));
    assert_eq!(
        admissible(&c.graph, &c.pass, 0, Profile::Acc64),
        Some((BigInt::from(-32767), BigInt::from(32767)))
    );
}

use num_bigint::BigInt;
