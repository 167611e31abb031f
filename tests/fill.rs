//! The `fill` protocol for graph vectors (§14.1): request lines in, canonical
//! filled lines out; a bad line is reported by number and never panics.

mod common;
use common::*;
use serde_json::{Value, json};
use std::io::Write;
use std::process::{Command, Stdio};
use wai_oracle::fill::{fill_line, fill_stream};
use wai_oracle::whg1::build::Builder;
use wai_oracle::whg1::{Op, write};

/// y = relu(x) with x `check [−5, 5]`, and an output `clamp [0, 3]`.
fn relu_hex() -> String {
    let mut b = Builder::new();
    let x = b.input(1, check(-5, 5));
    let y = b.op(Op::Relu, &[x], 1);
    b.policy(y, clamp(0, 3));
    b.output(y);
    hex::encode(write(&b.build()))
}

fn request(graph: &str, decodes: Value) -> String {
    json!({ "id": "relu-1", "graph": graph, "decodes": decodes }).to_string()
}

#[test]
fn a_request_is_filled_canonically() {
    let line = request(
        &relu_hex(),
        json!([
            // relu(−2, 4) = 0, 4, clamped to 0, 3.
            { "inputs": [{ "shape": ["1", "1", "2"], "data": ["-2", "4"] }], "scalars": [] },
            // 6 breaks x's check: field_range.
            { "inputs": [{ "shape": ["1", "1", "1"], "data": ["6"] }], "scalars": [] },
        ]),
    );
    let filled = fill_line(&line).unwrap();
    let expected = format!(
        concat!(
            r#"{{"decodes":[{{"expect":{{"outputs":[{{"data":["0","3"],"shape":["1","1","2"]}}]}},"#,
            r#""inputs":[{{"data":["-2","4"],"shape":["1","1","2"]}}],"scalars":[]}},"#,
            r#"{{"expect":{{"refuse":"field_range"}},"inputs":[{{"data":["6"],"shape":["1","1","1"]}}],"scalars":[]}}],"#,
            r#""graph":"{}","id":"relu-1","load":"ok","profiles":["acc32","acc64"]}}"#,
            "\n"
        ),
        relu_hex()
    );
    assert_eq!(filled, expected);
    // A filled line is a request too, and fills to itself.
    assert_eq!(fill_line(filled.trim_end()).unwrap(), filled);
}

#[test]
fn a_refused_load_has_no_decodes() {
    let mut bytes = hex::decode(relu_hex()).unwrap();
    bytes[6] = 1; // a reserved header byte
    let line = request(&hex::encode(bytes), json!([{ "inputs": [], "scalars": [] }]));
    let filled: Value = serde_json::from_str(&fill_line(&line).unwrap()).unwrap();
    assert_eq!(filled["load"], json!("model_mismatch"));
    assert_eq!(filled["profiles"], json!(["acc32", "acc64"]));
    assert_eq!(filled["decodes"], json!([]));
}

#[test]
fn bad_lines_name_the_line_and_the_field() {
    let good = request(&relu_hex(), json!([]));
    let cases = [
        ("not json", "not JSON"),
        (
            r#"{"id":"a","graph":"00","decodes":[],"extra":"1"}"#,
            "unknown member \"extra\"",
        ),
        (r#"{"id":"a","decodes":[]}"#, "graph: missing"),
        (r#"{"id":"a","graph":"0g","decodes":[]}"#, "graph: not hex"),
        (
            r#"{"id":"a","graph":"AB","decodes":[]}"#,
            "graph: hex must be lowercase",
        ),
        (r#"{"id":1,"graph":"00","decodes":[]}"#, "id: not a string"),
        (
            &request(
                &relu_hex(),
                json!([{ "inputs": [{ "shape": ["1", "1", "2"], "data": ["1"] }], "scalars": [] }]),
            ),
            "decodes[0].inputs[0].data: 1 elements, and the shape has 2",
        ),
        (
            &request(
                &relu_hex(),
                json!([{ "inputs": [{ "shape": ["1", "1", "1"], "data": ["01"] }], "scalars": [] }]),
            ),
            "decodes[0].inputs[0].data[0]: \"01\" is not a canonical integer string",
        ),
        (
            &request(
                &relu_hex(),
                json!([{ "inputs": [{ "shape": ["1", "1", "1"], "data": [1] }], "scalars": [] }]),
            ),
            "decodes[0].inputs[0].data[0]: not a string",
        ),
        (
            &request(&relu_hex(), json!([{ "inputs": [], "scalars": [] }])),
            "decodes[0]: the graph has 1 data inputs",
        ),
    ];
    let mut input = String::new();
    for (line, _) in &cases {
        input.push_str(line);
        input.push('\n');
    }
    input.push_str(&good);
    input.push('\n');
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let bad = fill_stream(input.as_bytes(), &mut out, &mut err, None).unwrap();
    assert_eq!(bad, cases.len());
    let err = String::from_utf8(err).unwrap();
    for (n, (_, what)) in cases.iter().enumerate() {
        let line = err.lines().nth(n).unwrap();
        assert!(line.starts_with(&format!("line {}: ", n + 1)), "{line}");
        assert!(line.contains(what), "line {}: {line:?} does not say {what:?}", n + 1);
    }
    // The one good line is filled.
    assert_eq!(String::from_utf8(out).unwrap().lines().count(), 1);
}

#[test]
fn the_binary_fills_stdin_and_exits_non_zero_on_a_bad_line() {
    let run = |input: &str| {
        let mut child = Command::new(env!("CARGO_BIN_EXE_wai-oracle"))
            .arg("fill")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child.stdin.take().unwrap().write_all(input.as_bytes()).unwrap();
        child.wait_with_output().unwrap()
    };
    let good = request(&relu_hex(), json!([]));
    let ok = run(&format!("{good}\n"));
    assert!(ok.status.success());
    assert!(
        String::from_utf8(ok.stdout)
            .unwrap()
            .ends_with("\"load\":\"ok\",\"profiles\":[\"acc32\",\"acc64\"]}\n")
    );
    let bad = run(&format!("{good}\n{{\n"));
    assert!(!bad.status.success());
    assert!(String::from_utf8(bad.stderr).unwrap().contains("line 2: not JSON"));
}

/// Every line through `stream_capped` with a cap of 8 bytes, echoed: the good lines and the errors.
fn echo_capped(input: &[u8]) -> (String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    wai_oracle::fill::stream_capped(input, &mut out, &mut err, 8, |l| Ok(format!("{l}\n"))).unwrap();
    (String::from_utf8(out).unwrap(), String::from_utf8(err).unwrap())
}

#[test]
fn a_line_past_the_cap_is_refused_and_the_stream_goes_on() {
    // Exactly 8 bytes is a line; 9 is not, nor is 10 MB; the lines after each are read as usual,
    // and a carriage return before the line feed is not part of the line.
    let long = "x".repeat(10 << 20);
    let input = format!("12345678\n123456789\nabc\n{long}\nlast\r\n12345678");
    let (out, err) = echo_capped(input.as_bytes());
    assert_eq!(out, "12345678\nabc\nlast\n12345678\n");
    assert_eq!(err, "line 2: longer than 8 bytes\nline 4: longer than 8 bytes\n");
    // A last line past the cap, without a line feed, is refused too; a non-UTF-8 line is still bad.
    let (out, err) = echo_capped(b"\xff\n123456789");
    assert_eq!(out, "");
    assert_eq!(err, "line 1: not JSON: not UTF-8\nline 2: longer than 8 bytes\n");
}

#[test]
fn the_cap_holds_the_largest_legal_tensor_written_out() {
    // 2^26 elements (§3) of the widest written integer and its comma.
    let widest = format!("\"{}\",", i64::MIN).len();
    assert!(wai_oracle::fill::MAX_LINE >= widest << 26);
}
