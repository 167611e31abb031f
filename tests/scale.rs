//! The scale tier's compact record form (docs/protocol.md, the scale tier): the `splitmix64`
//! recipe against the doc's test vectors, the output digest and samples, and a scale record
//! filled to the digests of its written-out expansion.

mod common;
use common::*;
use num_bigint::BigInt;
use serde_json::{Value, json};
use wai_oracle::fill::recipe::{self, splitmix64};
use wai_oracle::fill::{expand_line, fill_line};
use wai_oracle::plan::Shape;
use wai_oracle::tensor::Tensor;
use wai_oracle::whg1::build::Builder;
use wai_oracle::whg1::{Op, write};

fn recipe_tensor(seed: &str, lo: &str, hi: &str, shape: [u64; 3]) -> Value {
    json!({
        "recipe": { "generator": "splitmix64", "range": [lo, hi], "seed": seed },
        "shape": shape.map(|d| d.to_string()),
    })
}

fn elements(seed: &str, lo: &str, hi: &str, n: u64) -> Vec<String> {
    let r = recipe::read(&recipe_tensor(seed, lo, hi, [n, 1, 1]), "t").unwrap();
    r.tensor().data.iter().map(BigInt::to_string).collect()
}

#[test]
fn splitmix64_from_state_zero_is_the_published_sequence() {
    // SplitMix64's first outputs from state 0 (Steele, Lea and Flood; every implementation agrees).
    assert_eq!(splitmix64(0, 0), 0xe220a8397b1dcdaf);
    assert_eq!(splitmix64(0, 1), 0x6e789e6aa1b965f4);
    assert_eq!(splitmix64(0, 2), 0x06c45d188009454f);
}

#[test]
fn the_docs_test_vectors() {
    let rows: [(&str, &str, &str, &[i128]); 7] = [
        ("0", "-128", "127", &[98, -18, -122, 120, -101, -45, -84, 69]),
        ("1", "-128", "127", &[17, 62, 120, -15, -15, 67, 96, 5]),
        (
            "7",
            "-32768",
            "32767",
            &[-7221, -31668, 26264, 5434, -3117, -16422, -2101, -11268],
        ),
        (
            "18446744073709551615",
            "-9223372036854775808",
            "9223372036854775807",
            &[
                7266964230113668128,
                7611075020235113161,
                -5174644438530358807,
                -1360734232541297966,
            ],
        ),
        ("42", "5", "5", &[5, 5, 5]),
        ("42", "0", "1", &[1, 0, 0, 0, 0, 1, 0, 1]),
        ("3", "-3", "3", &[-3, 1, 1, -3, -2, 1, -3, 3, 0, 3, 1, 1]),
    ];
    for (seed, lo, hi, want) in rows {
        let want: Vec<String> = want.iter().map(i128::to_string).collect();
        assert_eq!(
            elements(seed, lo, hi, want.len() as u64),
            want,
            "seed {seed}, [{lo}, {hi}]"
        );
    }
    // The full range maps z to lo + z: element 0 of seed 0 is −2^63 + 0xe220a8397b1dcdaf.
    let z = BigInt::from(0xe220a8397b1dcdafu64);
    assert_eq!(
        elements("0", "-9223372036854775808", "9223372036854775807", 1),
        [(z - (BigInt::from(1) << 63u32)).to_string()]
    );
}

#[test]
fn the_digest_is_of_the_quoted_canonical_data_array() {
    let data = [-3, 1, 1, -3, -2, 1, -3, 3, 0, 3, 1, 1].map(BigInt::from).to_vec();
    let t = Tensor {
        shape: Shape::new(12, 1, 1),
        data,
    };
    let d = recipe::digest(&t);
    // The doc's example: ["-3","1",…] hashed as the bytes a written-out `data` holds.
    assert_eq!(
        d["sha256"],
        "c50f6cdf9ed3719c9af8f803c2717def357376ed496cdf8f7c23af18798f184f"
    );
    // A [12, 1, 1] tensor: every channel's only element, once.
    assert_eq!(d["samples"].as_array().unwrap().len(), 12);
    assert_eq!(d["samples"][4], json!(["4", "0", "0", "-2"]));
}

#[test]
fn samples_are_each_channels_corners_once() {
    // [2, 3, 4] holding 0..24: channel c's corners are c·12 + {0, 3, 8, 11}.
    let t = Tensor {
        shape: Shape::new(2, 3, 4),
        data: (0..24).map(BigInt::from).collect(),
    };
    let s = recipe::digest(&t)["samples"].clone();
    let want: Vec<Value> = [(0, 0, 0, 0), (0, 0, 3, 3), (0, 2, 0, 8), (0, 2, 3, 11), (1, 0, 0, 12)]
        .iter()
        .map(|&(c, y, x, v): &(i32, i32, i32, i32)| json!([c.to_string(), y.to_string(), x.to_string(), v.to_string()]))
        .collect();
    assert_eq!(s.as_array().unwrap()[..5], want[..]);
    assert_eq!(s.as_array().unwrap().len(), 8);
    // A row [1, 1, 5]: (0, 0) and (0, 4) only.
    let row = Tensor {
        shape: Shape::new(1, 1, 5),
        data: (0..5).map(BigInt::from).collect(),
    };
    assert_eq!(
        recipe::digest(&row)["samples"],
        json!([["0", "0", "0", "0"], ["0", "0", "4", "4"]])
    );
    // No element, no sample.
    let empty = Tensor {
        shape: Shape::new(3, 0, 5),
        data: vec![],
    };
    assert_eq!(recipe::digest(&empty)["samples"], json!([]));
}

#[test]
fn a_recipe_that_breaks_the_form_is_a_request_error_naming_its_field() {
    let cases = [
        (
            json!({"recipe": {"generator": "xorshift", "range": ["0", "1"], "seed": "0"}, "shape": ["1", "1", "1"]}),
            "t.recipe.generator",
        ),
        (
            json!({"recipe": {"generator": "splitmix64", "range": ["0", "1"], "seed": "18446744073709551616"}, "shape": ["1", "1", "1"]}),
            "t.recipe.seed",
        ),
        (
            json!({"recipe": {"generator": "splitmix64", "range": ["2", "1"], "seed": "0"}, "shape": ["1", "1", "1"]}),
            "t.recipe.range",
        ),
        (
            json!({"recipe": {"generator": "splitmix64", "range": ["0", "18446744073709551616"], "seed": "0"}, "shape": ["1", "1", "1"]}),
            "t.recipe.range",
        ),
        (
            json!({"recipe": {"generator": "splitmix64", "range": ["0", "1"], "seed": "0"}, "shape": ["1", "8193", "8193"]}),
            "t.shape",
        ),
        (
            json!({"recipe": {"generator": "splitmix64", "range": ["0", "1"], "seed": "0", "x": "1"}, "shape": ["1", "1", "1"]}),
            "t.recipe",
        ),
    ];
    for (v, field) in cases {
        let e = recipe::read(&v, "t").unwrap_err();
        assert!(e.starts_with(&format!("{field}:")), "{v}: {e}");
    }
}

/// y = relu(x), x `check [−100, 100]`.
fn relu_hex() -> String {
    let mut b = Builder::new();
    let x = b.input(3, check(-100, 100));
    let y = b.op(Op::Relu, &[x], 3);
    b.output(y);
    hex::encode(write(&b.build()))
}

#[test]
fn a_scale_record_fills_to_the_digests_of_its_expansion() {
    let line = json!({
        "id": "relu-scale",
        "graph": relu_hex(),
        "decodes": [
            { "inputs": [recipe_tensor("9", "-100", "100", [3, 5, 17])], "scalars": [] },
            // Past the check: field_range, as written-out data would be.
            { "inputs": [recipe_tensor("9", "-101", "100", [3, 5, 17])], "scalars": [] },
        ],
    })
    .to_string();
    let filled: Value = serde_json::from_str(&fill_line(&line).unwrap()).unwrap();
    let expanded: Value = serde_json::from_str(&expand_line(&line).unwrap()).unwrap();
    let written = &expanded["decodes"][0]["expect"]["outputs"][0];
    let t = wai_oracle::json::tensor(written, "t").unwrap();
    assert_eq!(filled["decodes"][0]["expect"]["outputs"][0], recipe::digest(&t));
    assert_eq!(filled["decodes"][1]["expect"], json!({ "refuse": "field_range" }));
    assert_eq!(expanded["decodes"][1]["expect"], json!({ "refuse": "field_range" }));
    // The echo keeps the recipe; the expansion writes it out, relu's input before its output.
    assert_eq!(filled["decodes"][0]["inputs"][0]["recipe"]["seed"], "9");
    let input = wai_oracle::json::tensor(&expanded["decodes"][0]["inputs"][0], "x").unwrap();
    let relu: Vec<BigInt> = input.data.iter().map(|v| v.max(&BigInt::from(0)).clone()).collect();
    assert_eq!(t.data, relu);
    // A filled scale record is a request too, and fills to itself.
    let again = fill_line(&filled.to_string()).unwrap();
    assert_eq!(serde_json::from_str::<Value>(&again).unwrap(), filled);
}

#[test]
fn a_record_mixing_recipes_and_written_out_inputs_is_refused_as_a_line() {
    let line = json!({
        "id": "mixed",
        "graph": relu_hex(),
        "decodes": [
            { "inputs": [recipe_tensor("1", "0", "1", [3, 1, 1])], "scalars": [] },
            { "inputs": [{ "data": ["1", "2", "3"], "shape": ["3", "1", "1"] }], "scalars": [] },
        ],
    })
    .to_string();
    assert!(fill_line(&line).unwrap_err().contains("recipe"));
}
