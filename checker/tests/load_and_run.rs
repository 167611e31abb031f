//! End-to-end facts from the spec and docs: the protocol's example, load steps and codes, state
//! across a sequence, and the reader's robustness.

use wai_checker::refusal::Code;
use wai_checker::whg1::load;
use wai_checker::whg1::write::{GraphW, InputW, OpW, P, RqW, TensorW};
use wai_checker::{fill, whg1};
use wai_checker_testgen::random::{self, Rng};

fn graph(tensors: Vec<TensorW>, inputs: Vec<InputW>, ops: Vec<OpW>, outputs: Vec<u32>) -> GraphW {
    GraphW {
        max_elems: 1 << 26,
        scalars: vec![],
        inputs,
        outputs,
        tensors,
        ops,
    }
}

fn op(opcode: u8, ins: &[u32], outs: &[u32], params: Vec<u8>) -> OpW {
    OpW {
        opcode,
        ins: ins.to_vec(),
        outs: outs.to_vec(),
        params,
    }
}

fn fill_one(line: &str) -> String {
    let mut out = String::new();
    let bad = fill::fill(line.as_bytes(), &mut out, &mut |m| panic!("{m}"));
    assert_eq!(bad, 0);
    out
}

#[test]
fn the_protocol_example() {
    // docs/protocol.md: relu from a check [−5, 5] input to a clamp [0, 3] output.
    let g = graph(
        vec![TensorW::check(1, -5, 5), TensorW::clamp(1, 0, 3)],
        vec![InputW::data(0, 0, 0)],
        vec![op(0x0C, &[0], &[1], vec![])],
        vec![1],
    );
    let hex = hex::encode(g.bytes());
    let req = r#"{"decodes":[{"inputs":[{"data":["-2","4"],"shape":["1","1","2"]}],"scalars":[]},{"inputs":[{"data":["6"],"shape":["1","1","1"]}],"scalars":[]}],"graph":"<hex>","id":"relu-1"}"#
        .replace("<hex>", &hex);
    let want = r#"{"decodes":[{"expect":{"outputs":[{"data":["0","3"],"shape":["1","1","2"]}]},"inputs":[{"data":["-2","4"],"shape":["1","1","2"]}],"scalars":[]},{"expect":{"refuse":"field_range"},"inputs":[{"data":["6"],"shape":["1","1","1"]}],"scalars":[]}],"graph":"<hex>","id":"relu-1","load":"ok","profiles":["acc32","acc64"]}"#
        .replace("<hex>", &hex);
    assert_eq!(fill_one(&req), want + "\n");
    // Filling a filled line gives it back.
    assert_eq!(fill_one(fill_one(&req).trim_end()), fill_one(&req));
}

#[test]
fn request_errors_are_reported_per_line() {
    let mut out = String::new();
    let mut errs = Vec::new();
    let input = "x\n{}\n{\"decodes\":[],\"graph\":\"0\",\"id\":\"a\"}\n{\"decodes\":[],\"graph\":\"\",\"id\":\"b\",\"extra\":1}\n";
    let bad = fill::fill(input.as_bytes(), &mut out, &mut |m| errs.push(m));
    assert_eq!(bad, 4);
    assert!(out.is_empty());
    assert!(errs[0].starts_with("line 1: "));
    assert!(errs[1].starts_with("line 2: id: missing") || errs[1].starts_with("line 2: decodes: missing"));
    assert!(errs[2].starts_with("line 3: graph:"));
    assert!(errs[3].starts_with("line 4: extra:"));
    // A graph that is not WHG1 is a load refusal, not a request error.
    let line = fill_one("{\"decodes\":[],\"graph\":\"00\",\"id\":\"c\"}");
    assert_eq!(
        line,
        "{\"decodes\":[],\"graph\":\"00\",\"id\":\"c\",\"load\":\"model_mismatch\",\"profiles\":[\"acc32\",\"acc64\"]}\n"
    );
}

/// A one-operator graph of `conv` 1×1 over declared sizes `max_h × max_w`.
fn pad_graph(c: u32, max_h: u32, max_w: u32, m: u32) -> GraphW {
    graph(
        vec![TensorW::check(c, -5, 5), TensorW::derived(c)],
        vec![InputW::data(0, max_h, max_w)],
        vec![op(0x0E, &[0], &[1], P::new().u32(m).bytes())],
        vec![1],
    )
}

#[test]
fn load_steps_and_their_codes() {
    assert!(load::load(&pad_graph(1, 3, 3, 2).bytes()).is_ok());
    // A2: max_elems above 2^26 is a header field out of range.
    let mut g = pad_graph(1, 3, 3, 2);
    g.max_elems = (1 << 26) + 1;
    assert_eq!(load::load(&g.bytes()).err(), Some(Code::ModelMismatch));
    // A3: a declared input past max_elems is too_large at load.
    let mut g = pad_graph(2, 3, 3, 1);
    g.max_elems = 17;
    assert_eq!(load::load(&g.bytes()).err(), Some(Code::TooLarge));
    // A size an operator forms past 2^26 (a padded side) is too_large at load.
    assert_eq!(
        load::load(&pad_graph(1, 3, 3, 1 << 27).bytes()).err(),
        Some(Code::TooLarge)
    );
    // ... but a malformed record anywhere (steps 1–6) comes first: model_mismatch.
    let mut b = pad_graph(1, 3, 3, 1 << 27).bytes();
    b.push(0);
    assert_eq!(load::load(&b).err(), Some(Code::ModelMismatch));
    // Without declared sizes the graph loads, and the decode is refused at run step 3.
    assert!(load::load(&pad_graph(1, 0, 0, 1 << 27).bytes()).is_ok());
    // A graph with softmax and no declared sizes is refused (step 7).
    let g = graph(
        vec![TensorW::check(1, -5, 5), TensorW::derived(1)],
        vec![InputW::data(0, 0, 0)],
        vec![op(0x1A, &[0], &[1], vec![])],
        vec![1],
    );
    assert_eq!(load::load(&g.bytes()).err(), Some(Code::ModelMismatch));
    // An empty check intersection refuses the graph at step 8.
    let g = graph(
        vec![TensorW::check(1, -5, 5), TensorW::check(1, 6, 9)],
        vec![InputW::data(0, 0, 0)],
        vec![op(0x0C, &[0], &[1], vec![])],
        vec![1],
    );
    assert_eq!(load::load(&g.bytes()).err(), Some(Code::ModelMismatch));
}

#[test]
fn a_constant_crop_of_length_zero_is_a_shape_failure() {
    // docs/assumptions.md A6.
    let crop = |max: u32| {
        let p = P::new()
            .u8(0)
            .zeros(3)
            .u32(0)
            .u8(0)
            .zeros(3)
            .u32(0)
            .u8(0)
            .zeros(3)
            .u32(0)
            .u8(0)
            .zeros(3)
            .u32(1);
        graph(
            vec![TensorW::check(1, -5, 5), TensorW::derived(1)],
            vec![InputW::data(0, max, max)],
            vec![op(0x14, &[0], &[1], p.bytes())],
            vec![1],
        )
    };
    assert_eq!(load::load(&crop(2).bytes()).err(), Some(Code::ModelMismatch));
    let hex = hex::encode(crop(0).bytes());
    let line = fill_one(&format!(
        r#"{{"decodes":[{{"inputs":[{{"data":["1"],"shape":["1","1","1"]}}],"scalars":[]}}],"graph":"{hex}","id":"c"}}"#
    ));
    assert!(line.contains(r#""expect":{"refuse":"geometry_mismatch"}"#), "{line}");
}

#[test]
fn state_carries_across_decodes_and_a_refusal_changes_nothing() {
    // out = state + x, fed back; init 10; input check [−5, 5].
    let g = GraphW {
        max_elems: 1 << 26,
        scalars: vec![],
        inputs: vec![
            InputW::data(0, 0, 0),
            InputW {
                tensor: 1,
                max_h: 0,
                max_w: 0,
                kind: 1,
                src: 0,
                init: 10,
            },
        ],
        outputs: vec![2],
        tensors: vec![
            TensorW::check(1, -5, 5),
            TensorW::clamp(1, -100, 100),
            TensorW::derived(1),
        ],
        ops: vec![op(0x05, &[1, 0], &[2], vec![])],
    };
    let hex = hex::encode(g.bytes());
    let d = |v: i64| format!(r#"{{"inputs":[{{"data":["{v}"],"shape":["1","1","1"]}}],"scalars":[]}}"#);
    let line = fill_one(&format!(
        r#"{{"decodes":[{},{},{},{}],"graph":"{hex}","id":"s"}}"#,
        d(1),
        d(9),
        d(2),
        d(-5)
    ));
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    let outs: Vec<String> = v["decodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            d["expect"]
                .get("outputs")
                .map_or("refused".into(), |o| o[0]["data"][0].as_str().unwrap().to_string())
        })
        .collect();
    assert_eq!(outs, ["11", "refused", "13", "8"]);
}

#[test]
fn the_reader_never_panics() {
    let mut r = Rng::new(99);
    for seed in 0..300 {
        let line = random::request(seed);
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        let bytes = hex::decode(v["graph"].as_str().unwrap()).unwrap();
        for _ in 0..20 {
            let mut b = bytes.clone();
            for _ in 0..r.range(1, 4) {
                match r.below(4) {
                    0 if !b.is_empty() => {
                        let i = r.below(b.len() as u64) as usize;
                        b[i] = r.below(256) as u8;
                    }
                    1 => b.truncate(r.below(b.len() as u64 + 1) as usize),
                    2 => b.push(r.below(256) as u8),
                    _ if b.len() > 32 => {
                        let i = r.range(8, 31) as usize;
                        b[i] = r.pick(&[0xff, 0x7f, 0x80, 0]);
                    }
                    _ => {}
                }
            }
            let _ = load::load(&b);
        }
    }
    for n in 0..64 {
        let b: Vec<u8> = (0..n).map(|_| r.below(256) as u8).collect();
        assert!(whg1::read(&b).is_err());
    }
}

#[test]
fn an_rq_whose_q_passes_64_bits_while_y_fits_is_refused_under_acc64() {
    // §14.1 item 6: rescale with a post bias that brings y back into i64 while q does not fit.
    let rq = RqW {
        round: 0,
        bias: 2,
        m_kind: 1,
        s_kind: 1,
        m_bytes: 8,
        b_bytes: 8,
        mult: vec![4],
        shift: vec![0],
        bias_v: vec![-(1 << 62)],
    };
    let g = graph(
        vec![TensorW::check(1, 1 << 61, 1 << 61), TensorW::derived(1)],
        vec![InputW::data(0, 0, 0)],
        vec![op(0x02, &[0], &[1], rq.write(P::new()).bytes())],
        vec![1],
    );
    assert_eq!(load::load(&g.bytes()).err(), Some(Code::ModelMismatch));
}

#[test]
fn the_checker_never_names_the_oracle() {
    let manifest = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml")).unwrap();
    for name in ["wai-oracle", "wai_oracle", "num-bigint"] {
        assert!(!manifest.contains(name), "checker/Cargo.toml names {name}");
    }
}

/// `input` through the checker's line reader with a cap of 8 bytes, echoed: the lines and errors.
fn echo_capped(input: &[u8]) -> (String, Vec<String>) {
    let (mut out, mut errs) = (Vec::new(), Vec::new());
    let echo = |l: &str| Ok(l.to_string());
    wai_checker::request::fill_lines(&mut { input }, &mut out, &mut |m| errs.push(m), 8, &echo).unwrap();
    (String::from_utf8(out).unwrap(), errs)
}

#[test]
fn a_line_past_the_cap_is_refused_and_the_stream_goes_on() {
    let long = "x".repeat(10 << 20);
    let input = format!("12345678\n123456789\nabc\n{long}\n\u{ff}z\n12345678");
    let (out, errs) = echo_capped(input.as_bytes());
    assert_eq!(out, "12345678\nabc\n\u{ff}z\n12345678\n");
    assert_eq!(errs, ["line 2: longer than 8 bytes", "line 4: longer than 8 bytes"]);
    let (out, errs) = echo_capped(b"\xff\n123456789");
    assert_eq!(out, "");
    assert_eq!(errs, ["line 1: not JSON: not UTF-8", "line 2: longer than 8 bytes"]);
    // The cap is the largest legal tensor (2^26 elements, §3) at 24 bytes an element, and more.
    const { assert!(wai_checker::request::MAX_LINE > 24 << 26) };
}
