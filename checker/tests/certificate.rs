//! Certificate facts from §8 and docs/assumptions.md B2, B4, B6, B7, B9, B10.

use serde_json::Value;
use wai_checker::certify::{self, Input};
use wai_checker::whg1::write::{GraphW, InputW, OpW, P, RqW, TensorW};

fn one(tensors: Vec<TensorW>, ops: Vec<OpW>, outputs: Vec<u32>, scalars: Vec<(i64, i64)>) -> Vec<u8> {
    GraphW {
        max_elems: 1 << 26,
        scalars,
        inputs: vec![InputW::data(0, 0, 0)],
        outputs,
        tensors,
        ops,
    }
    .bytes()
}

fn op(opcode: u8, ins: &[u32], outs: &[u32], params: Vec<u8>) -> OpW {
    OpW {
        opcode,
        ins: ins.to_vec(),
        outs: outs.to_vec(),
        params,
    }
}

fn cert(bytes: Vec<u8>) -> Value {
    let c = certify::certify(
        &[Input {
            name: "g".into(),
            bytes,
        }],
        None,
        "whg1",
        None,
    )
    .expect("certified");
    assert!(!c.ends_with('\n'));
    serde_json::from_str(&c).unwrap()
}

#[test]
fn exactly_two_to_the_255_is_not_saturated() {
    // x ∈ [−2^63, −2^63]; x² = 2^126; (x²)² = 2^252; three doublings reach 2^255 exactly, a fourth
    // passes it.
    let mul = RqW::plain(0, 0).write(P::new()).bytes();
    let mut t = vec![TensorW::check(1, i64::MIN, i64::MIN)];
    t.extend((0..6).map(|_| TensorW::derived(1)));
    let ops = vec![
        op(0x10, &[0, 0], &[1], mul.clone()),
        op(0x10, &[1, 1], &[2], mul),
        op(0x05, &[2, 2], &[3], vec![]),
        op(0x05, &[3, 3], &[4], vec![]),
        op(0x05, &[4, 4], &[5], vec![]),
        op(0x05, &[5, 5], &[6], vec![]),
    ];
    let c = cert(one(t, ops, vec![6], vec![]));
    let nodes = c["graphs"][0]["nodes"].as_array().unwrap();
    let two255 = "57896044618658097711785492504343953926634992332820282019728792003956564819968";
    assert_eq!(nodes[4]["out"][0]["result"]["hi"], two255);
    assert_eq!(nodes[4]["out"][0]["result"]["bits"], "257");
    assert_eq!(nodes[4]["saturated"], false);
    assert_eq!(nodes[5]["saturated"], true);
    assert_eq!(nodes[5]["fits"], serde_json::json!([]));
    let v = &c["verdict"];
    assert_eq!(v["acc64"], false);
    assert_eq!(v["acc64_first_failure"]["key"], "mul.p");
    assert_eq!(v["acc32_first_failure"]["key"], "range");
    assert_eq!(v["acc32_first_failure"]["where"], "input");
    assert_eq!(v["npu_reasons"], serde_json::json!(["acc32"]));
}

#[test]
fn flags_follow_the_fields_and_chscale_reads_every_row() {
    // chscale, floor, rows 0..=1 allowed by the scalar but a negative entry in row 2 only (B6, B7).
    let m = [1i64, 2, 3, 4, -5, 1 << 40];
    let params = P::new().u32(0).u32(3).u8(0).u8(8).u8(40).zeros(1).ints(&m, 8).bytes();
    let bytes = one(
        vec![TensorW::check(2, -5, 5), TensorW::derived(2)],
        vec![op(0x03, &[0], &[1], params)],
        vec![1],
        vec![(0, 1)],
    );
    let c = cert(bytes);
    let n = &c["graphs"][0]["nodes"][0];
    assert_eq!(
        n["npu_flags"],
        serde_json::json!(["chscale", "rq_floor_mult", "rq_neg_mult", "rq_shift_range"])
    );
    assert_eq!(n["acc32_params"], serde_json::json!(["chscale.m"]));
    assert_eq!(n["mac"]["w_bits"], "42");
    // The interval reads rows 0 and 1 only: [−5·4, 5·4] >> 40 floors to [−1, 0].
    assert_eq!(n["intermediates"]["rq.q"]["lo"], "-1");
    assert_eq!(n["intermediates"]["rq.q"]["hi"], "0");
    // rescale with a multiplier of 1 and a post bias of 0 still carries both flags (B7).
    let rq = RqW {
        round: 0,
        bias: 2,
        m_kind: 1,
        s_kind: 1,
        m_bytes: 4,
        b_bytes: 4,
        mult: vec![1],
        shift: vec![0],
        bias_v: vec![0],
    };
    let bytes = one(
        vec![TensorW::check(1, -5, 5), TensorW::derived(1)],
        vec![op(0x02, &[0], &[1], rq.write(P::new()).bytes())],
        vec![1],
        vec![],
    );
    let c = cert(bytes);
    assert_eq!(
        c["graphs"][0]["nodes"][0]["npu_flags"],
        serde_json::json!(["rq_floor_mult", "rq_post_bias"])
    );
    assert_eq!(c["verdict"]["npu"], true);
}

#[test]
fn k_c_and_the_refusals_of_the_pass() {
    // conv 1×1 with one weight 2^31 over [−1, 1]: P = 2^31, so K_c = 0 (B4).
    let rq = RqW::plain(0, 0);
    let conv = |w: i64| {
        rq.write(
            P::new()
                .u32(1)
                .u32(1)
                .u32(1)
                .u32(1)
                .u32(1)
                .u32(0)
                .u32(0)
                .u32(1)
                .u8(8)
                .zeros(3),
        )
        .ints(&[w], 8)
        .bytes()
    };
    let g = |w| {
        one(
            vec![TensorW::check(1, -1, 1), TensorW::derived(1)],
            vec![op(0x01, &[0], &[1], conv(w))],
            vec![1],
            vec![],
        )
    };
    assert_eq!(cert(g(1 << 31))["graphs"][0]["nodes"][0]["k_c"], "0");
    assert_eq!(cert(g(0))["graphs"][0]["nodes"][0]["k_c"], "unbounded");
    assert_eq!(cert(g(7))["graphs"][0]["nodes"][0]["k_c"], "306783378");
    // B9: an empty check intersection gets no certificate.
    let bytes = one(
        vec![TensorW::check(1, -1, 1), TensorW::check(1, 10, 20)],
        vec![op(0x0C, &[0], &[1], vec![])],
        vec![1],
        vec![],
    );
    assert!(
        certify::certify(
            &[Input {
                name: "g".into(),
                bytes
            }],
            None,
            "whg1",
            None
        )
        .is_err()
    );
}
