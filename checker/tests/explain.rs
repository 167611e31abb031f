//! `explain::element`, the grader's words for an element an implementation got wrong: on every
//! one-operator vector of the tree whose operator ends in `rq`, its steps are the element's own
//! (applied in CHW order), so `y` is the committed element wherever the output's policy is not
//! `clamp`.

use serde_json::Value;
use std::path::Path;
use wai_checker::explain;
use wai_checker::whg1::{self, Policy};

fn records(op: &str) -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../ops-conformance/vectors/{op}.jsonl"));
    let text = std::fs::read_to_string(path).unwrap();
    text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// Every element of every completed decode of `op`'s vectors, explained: (policy of the output,
/// the committed element, the words).
fn explained(op: &str) -> Vec<(Policy, String, String)> {
    let mut out = Vec::new();
    for r in records(op).iter().filter(|r| r["load"] == "ok") {
        let g = whg1::read(&hex::decode(r["graph"].as_str().unwrap()).unwrap()).unwrap();
        let policy = g.tensors[g.outputs[0]].policy;
        for (d, decode) in r["decodes"].as_array().unwrap().iter().enumerate() {
            let Some(data) = decode.pointer("/expect/outputs/0/data").and_then(Value::as_array) else {
                continue;
            };
            for (i, e) in data.iter().enumerate() {
                let words = explain::element(r, d, 0, i).unwrap_or_default();
                out.push((policy, e.as_str().unwrap().to_string(), words));
            }
        }
    }
    out
}

#[test]
fn every_rq_step_is_its_elements_own() {
    for op in ["rescale", "mul", "conv", "conv_transpose"] {
        let all = explained(op);
        assert!(all.len() > 50, "{op}: {} elements", all.len());
        for (policy, element, words) in all {
            assert!(words.contains("rq (§5.1): v = "), "{op}: {words:?}");
            if !matches!(policy, Policy::Clamp(..)) {
                assert!(
                    words.ends_with(&format!("+ post = {element}")),
                    "{op}: {element} vs {words}"
                );
            }
        }
    }
}

#[test]
fn an_elementwise_operator_shows_its_inputs_at_the_elements_position() {
    // `add` has two inputs of its output's shape (§5.5): each element's words name both.
    let r = &records("add")[0];
    let inputs = r["decodes"][0]["inputs"].as_array().unwrap();
    let words = explain::element(r, 0, 0, 0).unwrap();
    assert_eq!(
        words,
        format!(
            "inputs[0] = {}; inputs[1] = {}",
            inputs[0]["data"][0].as_str().unwrap(),
            inputs[1]["data"][0].as_str().unwrap()
        )
    );
}

#[test]
fn a_graph_of_several_operators_is_not_explained() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ops-conformance/graphs/phase_form.jsonl");
    let text = std::fs::read_to_string(path).unwrap();
    let several = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|r| {
            let g = whg1::read(&hex::decode(r["graph"].as_str().unwrap()).unwrap()).unwrap();
            g.ops.len() > 1 && r.pointer("/decodes/0/expect/outputs").is_some()
        })
        .expect("a phase-form graph of several operators that decodes");
    assert_eq!(explain::element(&several, 0, 0, 0), None);
}
