//! The scale tier (docs/protocol.md, "The scale tier: records with recipes and digests"): the
//! generator's test vectors, the digest example, samples, request errors, and scale records filled
//! end to end against the fill of their written-out expansion.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use wai_checker::fill;
use wai_checker::recipe::{self, RecipeTensor};
use wai_checker::request::LineError;
use wai_checker::whg1::write::{GraphW, InputW, OpW, TensorW};

fn recipe_tensor(seed: &str, lo: &str, hi: &str, shape: [u64; 3]) -> Value {
    json!({
        "recipe": {"generator": "splitmix64", "range": [lo, hi], "seed": seed},
        "shape": shape.map(|d| d.to_string()),
    })
}

/// Elements `0..n` of a recipe, written out.
fn elements(seed: &str, lo: &str, hi: &str, n: u64) -> Vec<String> {
    let t = RecipeTensor::read(&recipe_tensor(seed, lo, hi, [n, 1, 1]), "t").unwrap();
    let data: Vec<String> = (0..n).map(|i| t.recipe.text(i)).collect();
    // The run's values agree with the written-out ones wherever they fit i128.
    for (i, s) in data.iter().enumerate() {
        if let Ok(v) = s.parse::<i128>() {
            assert_eq!(t.recipe.value(i as u64), v);
        }
        // `push_text` writes the same digits in place.
        let mut pushed = String::from("x");
        t.recipe.push_text(i as u64, &mut pushed);
        assert_eq!(pushed, format!("x{s}"));
    }
    data
}

/// A request's expansion (`recipe::write_expanded`), parsed; its error as the grader reads it.
fn expand(request: &Value) -> Result<Value, String> {
    let mut line = Vec::new();
    recipe::write_expanded(request, false, &mut line).map_err(|e| e.to_string())?;
    Ok(serde_json::from_slice(&line).unwrap())
}

/// The digest form of an output from its values (`recipe::digest_j`, the checker's fill's way).
fn digest_form<T: std::fmt::Display>(shape: [u64; 3], data: &[T]) -> Value {
    serde_json::from_str(&wai_checker::canon::write(&recipe::digest_j(shape, data)).unwrap()).unwrap()
}

/// The digest form of a written-out tensor from its `data` member's bytes (`recipe::compact_data`,
/// the grader's way).
fn compact(t: &Value) -> Value {
    let shape: Vec<u64> = t["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap().parse().unwrap())
        .collect();
    let data = serde_json::to_string(&t["data"]).unwrap();
    recipe::compact_data(shape.try_into().unwrap(), data.as_bytes()).unwrap()
}

fn strs(vs: &[i128]) -> Vec<String> {
    vs.iter().map(|v| v.to_string()).collect()
}

#[test]
fn splitmix64_from_zero() {
    let z: Vec<u64> = (0..3).map(|i| recipe::splitmix64(0, i)).collect();
    assert_eq!(z, [0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4, 0x06c45d188009454f]);
}

#[test]
fn the_test_vectors() {
    let i63 = 1i128 << 63;
    let u64max = u64::MAX.to_string();
    let rows: [(&str, i128, i128, &[i128]); 7] = [
        ("0", -128, 127, &[98, -18, -122, 120, -101, -45, -84, 69]),
        ("1", -128, 127, &[17, 62, 120, -15, -15, 67, 96, 5]),
        (
            "7",
            -32768,
            32767,
            &[-7221, -31668, 26264, 5434, -3117, -16422, -2101, -11268],
        ),
        (
            &u64max,
            -i63,
            i63 - 1,
            &[
                7266964230113668128,
                7611075020235113161,
                -5174644438530358807,
                -1360734232541297966,
            ],
        ),
        ("42", 5, 5, &[5, 5, 5]),
        ("42", 0, 1, &[1, 0, 0, 0, 0, 1, 0, 1]),
        ("3", -3, 3, &[-3, 1, 1, -3, -2, 1, -3, 3, 0, 3, 1, 1]),
    ];
    for (seed, lo, hi, want) in rows {
        let got = elements(seed, &lo.to_string(), &hi.to_string(), want.len() as u64);
        assert_eq!(got, strs(want), "s = {seed}, [{lo}, {hi}]");
    }
}

#[test]
fn ranges_past_i128_are_exact_when_written_and_clamped_when_run() {
    let offsets: Vec<u64> = (0..8).map(|i| recipe::offset(recipe::splitmix64(9, i), 2)).collect();
    assert!(
        (0..3).all(|o| offsets.contains(&o)),
        "every offset of [lo, lo + 2] is met"
    );
    // From 2^127, just past i128: exact values, and i128::MAX for the run.
    let lo = 1u128 << 127;
    let want: Vec<String> = offsets.iter().map(|&o| (lo + u128::from(o)).to_string()).collect();
    let (lo_s, hi_s) = (lo.to_string(), (lo + 2).to_string());
    assert_eq!(elements("9", &lo_s, &hi_s, 8), want);
    let t = RecipeTensor::read(&recipe_tensor("9", &lo_s, &hi_s, [8, 1, 1]), "t").unwrap();
    assert!(t.given().data.iter().all(|&v| v == i128::MAX));
    // From 2^255 − 2, to past I256 at the top.
    let two255 = "57896044618658097711785492504343953926634992332820282019728792003956564819968";
    let head = &two255[..two255.len() - 1];
    let want: Vec<String> = offsets.iter().map(|&o| format!("{head}{}", 6 + o)).collect();
    assert_eq!(elements("9", &format!("{head}6"), two255, 8), want);
    // From −10^80, past I256: exact decimal values, and i128::MIN for the run.
    let nines = "9".repeat(79);
    let lo_s = format!("-1{}", "0".repeat(80));
    let hi_s = format!("-{nines}8");
    let want: Vec<String> = offsets
        .iter()
        .map(|&o| {
            if o == 0 {
                lo_s.clone()
            } else {
                format!("-{nines}{}", 10 - o)
            }
        })
        .collect();
    assert_eq!(elements("9", &lo_s, &hi_s, 8), want);
    let t = RecipeTensor::read(&recipe_tensor("9", &lo_s, &hi_s, [8, 1, 1]), "t").unwrap();
    assert!(t.given().data.iter().all(|&v| v == i128::MIN));
}

#[test]
fn the_digest_example() {
    let data: [i128; 12] = [-3, 1, 1, -3, -2, 1, -3, 3, 0, 3, 1, 1];
    let sha = "c50f6cdf9ed3719c9af8f803c2717def357376ed496cdf8f7c23af18798f184f";
    assert_eq!(recipe::data_sha256(&data), sha);
    let form = digest_form([12, 1, 1], &data);
    assert_eq!(form["sha256"], sha);
    assert_eq!(form["shape"], json!(["12", "1", "1"]));
    // A side of 1 repeats no position: one sample per channel.
    let samples: Vec<Value> = (0..12)
        .map(|c| json!([c.to_string(), "0", "0", data[c].to_string()]))
        .collect();
    assert_eq!(form["samples"], Value::Array(samples));
    // The written-out tensor's compact form is the same.
    let written = json!({"data": strs(&data), "shape": ["12", "1", "1"]});
    assert_eq!(compact(&written), form);
    // The digest is of the `data` member's bytes, the strings' quotes included.
    let member = serde_json::to_string(&written["data"]).unwrap();
    assert_eq!(hex::encode(Sha256::digest(member.as_bytes())), sha);
}

/// The samples of a tensor whose element `i` is `i`, as `(c, y, x)`.
fn sample_positions(shape: [u64; 3]) -> Vec<(u64, u64, u64)> {
    let n = shape.iter().product::<u64>();
    let data: Vec<u64> = (0..n).collect();
    let form = digest_form(shape, &data);
    let [_, h, w] = shape;
    form["samples"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let f: Vec<u64> = s
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_str().unwrap().parse().unwrap())
                .collect();
            assert_eq!(f[3], (f[0] * h + f[1]) * w + f[2], "the value at (c, y, x)");
            (f[0], f[1], f[2])
        })
        .collect()
}

#[test]
fn samples_are_each_channels_corners_once() {
    assert_eq!(sample_positions([1, 1, 1]), [(0, 0, 0)]);
    assert_eq!(sample_positions([1, 1, 4]), [(0, 0, 0), (0, 0, 3)]);
    assert_eq!(sample_positions([1, 3, 1]), [(0, 0, 0), (0, 2, 0)]);
    assert_eq!(
        sample_positions([2, 3, 5]),
        [
            (0, 0, 0),
            (0, 0, 4),
            (0, 2, 0),
            (0, 2, 4),
            (1, 0, 0),
            (1, 0, 4),
            (1, 2, 0),
            (1, 2, 4)
        ]
    );
    assert_eq!(sample_positions([2, 2, 2]).len(), 8);
    assert!(sample_positions([3, 0, 5]).is_empty());
    assert!(sample_positions([0, 2, 2]).is_empty());
    // No element: the digest of `[]`.
    let form = digest_form::<i64>([3, 0, 5], &[]);
    assert_eq!(form["sha256"], recipe::data_sha256::<i64>(&[]));
}

fn op(opcode: u8, ins: &[u32], outs: &[u32]) -> OpW {
    OpW {
        opcode,
        ins: ins.to_vec(),
        outs: outs.to_vec(),
        params: vec![],
    }
}

/// `relu` from a `check [−100, 100]` input to a `clamp [0, 60]` output.
fn relu_graph() -> String {
    let g = GraphW {
        max_elems: 1 << 26,
        scalars: vec![],
        inputs: vec![InputW::data(0, 0, 0)],
        outputs: vec![1],
        tensors: vec![TensorW::check(2, -100, 100), TensorW::clamp(2, 0, 60)],
        ops: vec![op(0x0C, &[0], &[1])],
    };
    hex::encode(g.bytes())
}

/// `out = x + y + state` over two data inputs and a state input (init 3) carrying `out`.
fn add_graph() -> String {
    let state = InputW {
        tensor: 2,
        max_h: 0,
        max_w: 0,
        kind: 1,
        src: 0,
        init: 3,
    };
    let g = GraphW {
        max_elems: 1 << 26,
        scalars: vec![],
        inputs: vec![InputW::data(0, 0, 0), InputW::data(1, 0, 0), state],
        outputs: vec![4],
        tensors: vec![
            TensorW::check(3, -128, 127),
            TensorW::clamp(3, -50, 50),
            TensorW::clamp(3, -1000, 1000),
            TensorW::derived(3),
            TensorW::clamp(3, -1000, 1000),
        ],
        ops: vec![op(0x05, &[0, 1], &[3]), op(0x05, &[3, 2], &[4])],
    };
    hex::encode(g.bytes())
}

fn filled(line: &str) -> Value {
    match fill::fill_line(line) {
        Ok(s) => serde_json::from_str(&s).unwrap(),
        Err(LineError::Bad(m) | LineError::Bug(m)) => panic!("{m}"),
    }
}

fn request_error(line: &str) -> String {
    match fill::fill_line(line) {
        Err(LineError::Bad(m)) => m,
        Err(LineError::Bug(m)) => panic!("checker bug: {m}"),
        Ok(s) => panic!("filled: {s}"),
    }
}

/// Fills a scale record and its expansion; checks that they agree output by output.
fn fill_both(request: &Value) -> Value {
    let scale = filled(&request.to_string());
    let written = filled(&expand(request).unwrap().to_string());
    for k in ["graph", "id", "load", "profiles"] {
        assert_eq!(scale[k], written[k], "{k}");
    }
    let (sd, wd) = (
        scale["decodes"].as_array().unwrap(),
        written["decodes"].as_array().unwrap(),
    );
    assert_eq!(sd.len(), wd.len());
    for (i, (s, w)) in sd.iter().zip(wd).enumerate() {
        // The echo is the request's recipes, canonical.
        assert_eq!(s["inputs"], request["decodes"][i]["inputs"], "decode {i}");
        assert_eq!(s["scalars"], w["scalars"]);
        match w["expect"].get("outputs") {
            Some(outs) => {
                let compact: Vec<Value> = outs.as_array().unwrap().iter().map(compact).collect();
                assert_eq!(s["expect"]["outputs"], Value::Array(compact), "decode {i}");
            }
            None => assert_eq!(s["expect"], w["expect"], "decode {i}"),
        }
    }
    // Filling a filled scale record gives it back.
    assert_eq!(filled(&scale.to_string()), scale);
    scale
}

#[test]
fn a_relu_scale_record_fills_as_its_expansion() {
    let request = json!({
        "decodes": [
            {"inputs": [recipe_tensor("1", "-100", "100", [2, 5, 7])], "scalars": []},
            {"inputs": [recipe_tensor("2", "-101", "100", [2, 64, 64])], "scalars": []},
            {"inputs": [recipe_tensor("18446744073709551615", "-7", "-7", [2, 1, 3])], "scalars": []},
        ],
        "graph": relu_graph(),
        "id": "relu-scale",
    });
    let v = fill_both(&request);
    assert_eq!(v["load"], "ok");
    let d = v["decodes"].as_array().unwrap();
    // The second range passes the input's check below: run step 4 refuses, as for written data.
    assert_eq!(d[1]["expect"], json!({"refuse": "field_range"}));
    // A constant −7 through relu is all zeros.
    let zeros = digest_form([2, 1, 3], &[0; 6]);
    assert_eq!(d[2]["expect"]["outputs"][0], zeros);
    assert_eq!(d[0]["expect"]["outputs"][0]["samples"].as_array().unwrap().len(), 8);
}

#[test]
fn an_add_scale_record_with_state_fills_as_its_expansion() {
    let decode = |s: u64| {
        json!({"inputs": [
            recipe_tensor(&s.to_string(), "-128", "127", [3, 17, 9]),
            recipe_tensor(&(s + 100).to_string(), "-80", "80", [3, 17, 9]),
        ], "scalars": []})
    };
    let request = json!({
        "decodes": [decode(0), decode(1), decode(2)],
        "graph": add_graph(),
        "id": "add-scale",
        "load": "computed fields are ignored",
        "profiles": [],
    });
    let v = fill_both(&request);
    assert_eq!(v["load"], "ok");
    assert!(
        v["decodes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|d| d["expect"].get("outputs").is_some())
    );
}

#[test]
fn expand_writes_recipes_out_and_drops_computed_fields() {
    let request = json!({
        "decodes": [{"expect": {"refuse": "too_large"}, "inputs": [recipe_tensor("3", "-3", "3", [1, 3, 4])], "scalars": []}],
        "graph": relu_graph(),
        "id": "e",
        "load": "ok",
        "profiles": ["acc32", "acc64"],
    });
    let data = strs(&[-3, 1, 1, -3, -2, 1, -3, 3, 0, 3, 1, 1]);
    let want = json!({
        "decodes": [{"inputs": [{"data": data, "shape": ["1", "3", "4"]}], "scalars": []}],
        "graph": relu_graph(),
        "id": "e",
    });
    assert_eq!(expand(&request).unwrap(), want);
    // A record with no recipe (a refused load's `decodes: []`) expands to itself.
    let bare =
        json!({"decodes": [], "graph": "00", "id": "r", "load": "model_mismatch", "profiles": ["acc32", "acc64"]});
    assert_eq!(expand(&bare).unwrap(), json!({"decodes": [], "graph": "00", "id": "r"}));
}

#[test]
fn request_errors_name_their_field() {
    let line = |t: Value| json!({"decodes": [{"inputs": [t], "scalars": []}], "graph": relu_graph(), "id": "x"});
    let with = |f: &dyn Fn(&mut Value)| {
        let mut t = recipe_tensor("1", "-5", "5", [1, 2, 2]);
        f(&mut t);
        line(t)
    };
    let at = "decodes[0].inputs[0]";
    let cases: Vec<(Value, String)> = vec![
        (
            with(&|t| t["recipe"]["generator"] = json!("pcg32")),
            format!("{at}.recipe.generator: "),
        ),
        (
            with(&|t| t["recipe"]["generator"] = json!(7)),
            format!("{at}.recipe.generator: "),
        ),
        (
            with(&|t| t["recipe"]["seed"] = json!("18446744073709551616")),
            format!("{at}.recipe.seed: "),
        ),
        (
            with(&|t| t["recipe"]["seed"] = json!("-1")),
            format!("{at}.recipe.seed: "),
        ),
        (
            with(&|t| t["recipe"]["seed"] = json!("01")),
            format!("{at}.recipe.seed: "),
        ),
        (
            with(&|t| t["recipe"]["range"] = json!(["6", "5"])),
            format!("{at}.recipe.range: "),
        ),
        (
            with(&|t| t["recipe"]["range"] = json!(["-9223372036854775808", "9223372036854775808"])),
            format!("{at}.recipe.range: "),
        ),
        (
            with(&|t| t["recipe"]["range"] = json!(["1"])),
            format!("{at}.recipe.range: "),
        ),
        (
            with(&|t| t["recipe"]["range"] = json!(["1", "+2"])),
            format!("{at}.recipe.range[1]: "),
        ),
        (
            with(&|t| t["shape"] = json!(["1", "8193", "8192"])),
            format!("{at}.shape: "),
        ),
        (
            with(&|t| t["shape"] = json!(["9223372036854775808", "9223372036854775808", "4"])),
            format!("{at}.shape: "),
        ),
        (with(&|t| t["shape"] = json!(["1", "2"])), format!("{at}.shape: ")),
        (
            with(&|t| t["recipe"]["extra"] = json!("1")),
            format!("{at}.recipe.extra: "),
        ),
        (with(&|t| t["extra"] = json!("1")), format!("{at}.extra: ")),
        (
            with(&|t| t["data"] = json!(["1", "2", "3", "4"])),
            format!("{at}.data: "),
        ),
        (
            with(&|t| {
                t["recipe"].as_object_mut().unwrap().remove("seed");
            }),
            format!("{at}.recipe.seed: missing"),
        ),
        (
            with(&|t| {
                t.as_object_mut().unwrap().remove("shape");
            }),
            format!("{at}.shape: missing"),
        ),
    ];
    for (request, field) in cases {
        let m = request_error(&request.to_string());
        assert!(m.starts_with(&field), "{m} (want {field})");
        // The expansion refuses it the same way.
        assert!(expand(&request).unwrap_err().starts_with(&field), "{field}");
    }
    // At the limits the recipe is read: 2^26 elements, hi − lo = 2^64 − 1.
    let t = recipe_tensor("0", "-9223372036854775808", "9223372036854775807", [1, 8192, 8192]);
    assert!(RecipeTensor::read(&t, "t").is_ok());
}

#[test]
fn a_record_mixing_recipes_and_written_out_tensors_is_a_request_error() {
    let written = json!({"data": ["1", "2"], "shape": ["2", "1", "1"]});
    let r = recipe_tensor("1", "-5", "5", [2, 1, 1]);
    let across = json!({
        "decodes": [{"inputs": [r.clone()], "scalars": []}, {"inputs": [written.clone()], "scalars": []}],
        "graph": relu_graph(),
        "id": "mix",
    });
    let within = json!({"decodes": [{"inputs": [written, r], "scalars": []}], "graph": add_graph(), "id": "mix"});
    for (request, field) in [(across, "decodes[1].inputs[0]: "), (within, "decodes[0].inputs[0]: ")] {
        assert!(request_error(&request.to_string()).starts_with(field), "{field}");
        assert!(expand(&request).unwrap_err().starts_with(field), "{field}");
    }
}

#[test]
fn write_expanded_writes_expand_as_one_line() {
    let request = json!({
        "decodes": [
            { "expect": { "refuse": "field_range" }, "inputs": [recipe_tensor("5", "-9", "9", [2, 3, 4])], "scalars": [] },
            { "inputs": [recipe_tensor("6", "0", "0", [1, 1, 1])], "scalars": ["7"] },
        ],
        "graph": "00", "id": "a\"b", "load": "ok", "profiles": ["acc64"],
    });
    let mut line = Vec::new();
    recipe::write_expanded(&request, false, &mut line).unwrap();
    // One canonical line: what serde_json writes of it, members sorted, no whitespace.
    let expanded: Value = serde_json::from_slice(&line).unwrap();
    assert_eq!(String::from_utf8(line.clone()).unwrap(), format!("{expanded}\n"));
    assert_eq!(
        expanded["decodes"][1],
        json!({"inputs": [{"data": ["0"], "shape": ["1", "1", "1"]}], "scalars": ["7"]})
    );
    // The digests of the inputs' `data` arrays as written, per decode and input.
    let mut again = Vec::new();
    let digests = recipe::write_expanded_digests(&request, false, &mut again).unwrap();
    assert_eq!(again, line);
    let sha = |d: &Value| hex::encode(Sha256::digest(d.to_string().as_bytes()));
    let want: Vec<Vec<String>> = (0..2)
        .map(|i| vec![sha(&expanded["decodes"][i]["inputs"][0]["data"])])
        .collect();
    assert_eq!(digests, want);
    // A record that does not expand is InvalidData, not a writer's error.
    let bad = json!({ "decodes": [{ "inputs": [{ "recipe": {}, "shape": ["1", "1", "1"] }], "scalars": [] }], "graph": "", "id": "x" });
    let e = recipe::write_expanded(&bad, false, &mut Vec::new()).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
}

#[test]
fn compact_data_reads_the_written_bytes_as_digest_j_reads_the_values() {
    let bytes = br#"["-3","1","1","-3","-2","1"]"#;
    assert_eq!(
        recipe::compact_data([2, 1, 3], bytes).unwrap(),
        digest_form([2, 1, 3], &[-3, 1, 1, -3, -2, 1])
    );
    assert!(
        recipe::compact_data([1, 1, 1], br#"["01"]"#)
            .unwrap_err()
            .starts_with("data[0]: ")
    );
    assert!(
        recipe::compact_data([1, 1, 2], br#"["1"]"#)
            .unwrap_err()
            .starts_with("data: ")
    );
    // Not canonical: a leading zero, a space, a bare number, a count the shape does not hold.
    for bad in [&br#"["-3","01"]"#[..], br#"["-3", "1"]"#, br#"["-3",1]"#, br#"["-3"]"#] {
        assert!(
            recipe::compact_data([1, 1, 2], bad).is_err(),
            "{}",
            String::from_utf8_lossy(bad)
        );
    }
    assert_eq!(recipe::compact_data([0, 5, 5], b"[]").unwrap()["samples"], json!([]));
}

#[test]
fn echoes_data_is_the_recipe_element_by_element() {
    let t = RecipeTensor::read(&recipe_tensor("3", "-3", "3", [12, 1, 1]), "t").unwrap();
    let written = br#"["-3","1","1","-3","-2","1","-3","3","0","3","1","1"]"#;
    assert!(recipe::echoes_data(&t, written));
    assert!(!recipe::echoes_data(
        &t,
        br#"["-3","1","1","-3","-2","1","-3","3","0","3","1","2"]"#
    ));
    assert!(!recipe::echoes_data(
        &t,
        br#"["-3","1","1","-3","-2","1","-3","3","0","3","1"]"#
    ));
}
