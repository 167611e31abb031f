//! Stage-operator vectors (§5E, §14.1; docs/protocol.md "Stage-operator vectors"): a request line
//! whose object has an `"op"` member. Filling checks the operator's operands, modes and tables (a
//! refusal with `at = −1`), then computes its result or the first refusal its stream gives.
//!
//! Implemented: E1 `rans64_decode` (over docs/assumptions.md E1's reconstructed core), E2
//! `dequantize`, E3 `bucket`, E4 `coded`, E5 `scale_index`, E6 `block_stat`, E7 `band_lookup`,
//! E8 `mans_decode`, E9 `residual_step`, E13 `coding_order`. A request naming E10–E12 or any
//! other name is a line error.

pub mod block_stat;
pub mod coding_order;
pub mod dec;
pub mod mans_decode;
pub mod rans64_decode;
pub mod scalar;

use crate::canon::{self, J};
use crate::request::{Bad, LineError, array, bad, members, shape, string};
use dec::Dec;
use serde_json::Value;

/// A stage refusal code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    ModelMismatch,
    FieldRange,
    TooLarge,
    StreamExhausted,
    StreamNoncanonical,
}

impl Code {
    pub fn name(self) -> &'static str {
        match self {
            Code::ModelMismatch => "model_mismatch",
            Code::FieldRange => "field_range",
            Code::TooLarge => "too_large",
            Code::StreamExhausted => "stream_exhausted",
            Code::StreamNoncanonical => "stream_noncanonical",
        }
    }
}

/// A refusal and §14.1's index `at`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub code: Code,
    pub at: i64,
}

/// A stage result or its refusal.
pub type SR<T> = Result<T, Refusal>;

fn boolean(v: &Value, field: &str) -> Result<bool, Bad> {
    v.as_bool().map_or_else(|| bad(field, "not true or false"), Ok)
}

fn int(v: &Value, field: &str) -> Result<Dec, Bad> {
    match v.as_str() {
        Some(s) => Dec::parse(s).map_or_else(|| bad(field, "not a canonical integer string"), Ok),
        None => bad(field, "not an integer string"),
    }
}

fn ints(v: &Value, field: &str) -> Result<Vec<Dec>, Bad> {
    array(v, field)?
        .iter()
        .enumerate()
        .map(|(i, x)| int(x, &format!("{field}[{i}]")))
        .collect()
}

fn hex_bytes(v: &Value, field: &str) -> Result<Vec<u8>, Bad> {
    let s = string(v, field)?;
    if s.len() % 2 != 0 || !s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return bad(field, "not lowercase hexadecimal bytes");
    }
    hex::decode(s).map_err(|e| format!("{field}: {e}"))
}

fn tensor(v: &Value, field: &str) -> Result<block_stat::DecTensor, Bad> {
    let m = members(v, field, &["data", "shape"], &[])?;
    let shape = shape(&m["shape"], &format!("{field}.shape"))?;
    let data = ints(&m["data"], &format!("{field}.data"))?;
    if scalar::elems(shape) != Some(data.len() as u128) {
        let [c, h, w] = shape;
        return bad(
            &format!("{field}.data"),
            &format!("holds {} elements, not C·H·W = {c}·{h}·{w}", data.len()),
        );
    }
    Ok(block_stat::DecTensor { shape, data })
}

/// One of several names.
fn choice<'a>(v: &Value, field: &str, names: &[&'a str]) -> Result<&'a str, Bad> {
    let s = string(v, field)?;
    names
        .iter()
        .find(|n| **n == s)
        .copied()
        .map_or_else(|| bad(field, &format!("{s:?} is not one of {names:?}")), Ok)
}

/// `modes` must be `{}` for every operator but two.
fn no_modes(modes: &Value) -> Result<(), Bad> {
    members(modes, "modes", &[], &[]).map(|_| ())
}

/// The expectation of a result, or of a refusal.
fn expect(r: SR<Vec<(&str, J)>>) -> J {
    match r {
        Ok(members) => J::obj(members),
        Err(Refusal { code, at }) => J::obj(vec![("at", J::int(at)), ("refuse", J::str(code.name()))]),
    }
}

fn dec_j(d: &Dec) -> J {
    J::Str(d.to_string())
}

/// Computes the `expect` of one request: its `in` and `modes` checked as the operator's form.
fn compute(op: &str, inp: &Value, modes: &Value) -> Result<J, LineError> {
    let bad = LineError::Bad;
    let one = |key: &'static str, v: J| Ok(vec![(key, v)]);
    let e = match op {
        "rans64_decode" => {
            let mm = members(modes, "modes", &["end", "escape", "table"], &["hi", "lo"]).map_err(bad)?;
            let table = match choice(&mm["table"], "modes.table", &["t4097", "t2"]).map_err(bad)? {
                "t4097" => rans64_decode::TableRule::T4097,
                _ => rans64_decode::TableRule::T2,
            };
            let escape = match choice(&mm["escape"], "modes.escape", &["lenient", "strict"]).map_err(bad)? {
                "lenient" => {
                    members(modes, "modes", &["end", "escape", "table"], &[]).map_err(bad)?;
                    rans64_decode::Escape::Lenient
                }
                _ => {
                    members(modes, "modes", &["end", "escape", "hi", "lo", "table"], &[]).map_err(bad)?;
                    rans64_decode::Escape::Strict {
                        lo: int(&mm["lo"], "modes.lo").map_err(bad)?,
                        hi: int(&mm["hi"], "modes.hi").map_err(bad)?,
                    }
                }
            };
            let end = match choice(&mm["end"], "modes.end", &["canonical", "final_only"]).map_err(bad)? {
                "canonical" => rans64_decode::End::Canonical,
                _ => rans64_decode::End::FinalOnly,
            };
            let m = members(inp, "in", &["reads", "stream", "tables"], &[]).map_err(bad)?;
            let stream = hex_bytes(&m["stream"], "in.stream").map_err(bad)?;
            let reads = ints(&m["reads"], "in.reads").map_err(bad)?;
            let mut tables = Vec::new();
            for (i, t) in array(&m["tables"], "in.tables").map_err(bad)?.iter().enumerate() {
                let f = format!("in.tables[{i}]");
                let tm = members(t, &f, &["cdf", "offset"], &[]).map_err(bad)?;
                tables.push(rans64_decode::TableIn {
                    cdf: ints(&tm["cdf"], &format!("{f}.cdf")).map_err(bad)?,
                    offset: int(&tm["offset"], &format!("{f}.offset")).map_err(bad)?,
                });
            }
            let modes = rans64_decode::Modes { table, escape, end };
            expect(
                rans64_decode::decode(&stream, &tables, &reads, &modes)
                    .map(|s| vec![("symbols", J::Arr(s.iter().map(J::int).collect()))]),
            )
        }
        "dequantize" => {
            no_modes(modes).map_err(bad)?;
            let m = members(inp, "in", &["base", "f", "sym"], &[]).map_err(bad)?;
            let g = |k: &str| int(&m[k], &format!("in.{k}")).map_err(bad);
            expect(scalar::dequantize(&g("sym")?, &g("f")?, &g("base")?).and_then(|v| one("value", J::int(v))))
        }
        "bucket" => {
            let mm = members(modes, "modes", &["bucket"], &[]).map_err(bad)?;
            let rule = match choice(&mm["bucket"], "modes.bucket", &["ceil", "floor"]).map_err(bad)? {
                "ceil" => scalar::BucketRule::Ceil,
                _ => scalar::BucketRule::Floor,
            };
            let m = members(inp, "in", &["edges", "sigma"], &[]).map_err(bad)?;
            let sigma = int(&m["sigma"], "in.sigma").map_err(bad)?;
            let edges = ints(&m["edges"], "in.edges").map_err(bad)?;
            expect(scalar::bucket(&sigma, &edges, rule).and_then(|b| one("index", J::int(b))))
        }
        "coded" => {
            no_modes(modes).map_err(bad)?;
            let m = members(inp, "in", &["thr", "v"], &[]).map_err(bad)?;
            let v = int(&m["v"], "in.v").map_err(bad)?;
            let thr = int(&m["thr"], "in.thr").map_err(bad)?;
            expect(one("coded", J::Bool(scalar::coded(&v, &thr))))
        }
        "scale_index" => {
            no_modes(modes).map_err(bad)?;
            let m = members(inp, "in", &["n", "s", "v"], &[]).map_err(bad)?;
            let g = |k: &str| int(&m[k], &format!("in.{k}")).map_err(bad);
            expect(scalar::scale_index(&g("v")?, &g("s")?, &g("n")?).and_then(|i| one("index", dec_j(&i))))
        }
        "block_stat" => {
            no_modes(modes).map_err(bad)?;
            let m = members(inp, "in", &["b", "hi", "lo", "s", "x"], &[]).map_err(bad)?;
            let g = |k: &str| int(&m[k], &format!("in.{k}")).map_err(bad);
            let x = tensor(&m["x"], "in.x").map_err(bad)?;
            let r = block_stat::block_stat(&x, &g("b")?, &g("s")?, &g("lo")?, &g("hi")?);
            expect(r.map(|out| {
                vec![(
                    "out",
                    J::obj(vec![
                        ("data", J::Arr(out.iter().map(dec_j).collect())),
                        ("shape", J::Arr(x.shape.iter().map(J::int).collect())),
                    ]),
                )]
            }))
        }
        "band_lookup" => {
            no_modes(modes).map_err(bad)?;
            let m = members(inp, "in", &["edges", "row", "table", "v"], &[]).map_err(bad)?;
            let v = int(&m["v"], "in.v").map_err(bad)?;
            let row = int(&m["row"], "in.row").map_err(bad)?;
            let edges = ints(&m["edges"], "in.edges").map_err(bad)?;
            let table = array(&m["table"], "in.table")
                .map_err(bad)?
                .iter()
                .enumerate()
                .map(|(i, r)| ints(r, &format!("in.table[{i}]")))
                .collect::<Result<Vec<_>, _>>()
                .map_err(bad)?;
            expect(scalar::band_lookup(&v, &edges, &table, &row).and_then(|x| one("value", dec_j(x))))
        }
        "mans_decode" => {
            no_modes(modes).map_err(bad)?;
            let Some(obj) = inp.as_object() else {
                return Err(bad("in: not an object".into()));
            };
            let Some(mode) = obj.get("mode") else {
                return Err(bad("in.mode: missing".into()));
            };
            let mode = choice(mode, "in.mode", &["sgm", "fac"]).map_err(bad)?;
            let rows_j = |rows: Vec<Vec<i64>>| {
                vec![(
                    "symbols",
                    J::Arr(rows.iter().map(|r| J::Arr(r.iter().map(J::int).collect())).collect()),
                )]
            };
            if mode == "sgm" {
                let m = members(inp, "in", &["bounds", "memory", "mode", "pmf", "spans"], &[]).map_err(bad)?;
                let memory = hex_bytes(&m["memory"], "in.memory").map_err(bad)?;
                let bounds = ints(&m["bounds"], "in.bounds").map_err(bad)?;
                let pmf = array(&m["pmf"], "in.pmf")
                    .map_err(bad)?
                    .iter()
                    .enumerate()
                    .map(|(i, r)| ints(r, &format!("in.pmf[{i}]")))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(bad)?;
                let mut spans = Vec::new();
                for (i, s) in array(&m["spans"], "in.spans").map_err(bad)?.iter().enumerate() {
                    let f = format!("in.spans[{i}]");
                    let sm = members(s, &f, &["mask", "sigma"], &[]).map_err(bad)?;
                    let mask = array(&sm["mask"], &format!("{f}.mask"))
                        .map_err(bad)?
                        .iter()
                        .enumerate()
                        .map(|(k, b)| boolean(b, &format!("{f}.mask[{k}]")))
                        .collect::<Result<Vec<_>, _>>()
                        .map_err(bad)?;
                    let sigma = ints(&sm["sigma"], &format!("{f}.sigma")).map_err(bad)?;
                    spans.push(mans_decode::SpanIn { mask, sigma });
                }
                expect(mans_decode::decode_sgm(&memory, &pmf, &bounds, &spans).map(rows_j))
            } else {
                let m = members(inp, "in", &["lengths", "memory", "mode", "rows"], &[]).map_err(bad)?;
                let memory = hex_bytes(&m["memory"], "in.memory").map_err(bad)?;
                let lengths = ints(&m["lengths"], "in.lengths").map_err(bad)?;
                let rows = array(&m["rows"], "in.rows")
                    .map_err(bad)?
                    .iter()
                    .enumerate()
                    .map(|(i, r)| ints(r, &format!("in.rows[{i}]")))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(bad)?;
                expect(mans_decode::decode_fac(&memory, &rows, &lengths).map(rows_j))
            }
        }
        "residual_step" => {
            no_modes(modes).map_err(bad)?;
            let m = members(inp, "in", &["hi", "lo", "pred", "q", "r"], &[]).map_err(bad)?;
            let g = |k: &str| int(&m[k], &format!("in.{k}")).map_err(bad);
            let r = scalar::residual_step(&g("pred")?, &g("r")?, &g("q")?, &g("lo")?, &g("hi")?);
            expect(r.and_then(|v| one("value", dec_j(&v))))
        }
        "coding_order" => {
            no_modes(modes).map_err(bad)?;
            let m = members(inp, "in", &["order", "shape"], &["anchor"]).map_err(bad)?;
            let shape = shape(&m["shape"], "in.shape").map_err(bad)?;
            let order = match choice(&m["order"], "in.order", &["raster", "checkerboard"]).map_err(bad)? {
                "raster" => {
                    if let Some(a) = m.get("anchor") {
                        boolean(a, "in.anchor").map_err(bad)?;
                    }
                    coding_order::Order::Raster
                }
                _ => match m.get("anchor") {
                    Some(a) => coding_order::Order::Checkerboard(boolean(a, "in.anchor").map_err(bad)?),
                    None => return Err(bad("in.anchor: missing".into())),
                },
            };
            expect(
                coding_order::coding_order(shape, order)
                    .and_then(|ix| one("indices", J::Arr(ix.iter().map(J::int).collect()))),
            )
        }
        "mc_predict" | "up2_predict" | "rate_predict" => {
            return Err(bad(format!(
                "op: {op} rests on a text the seeds do not contain and is not implemented (docs/assumptions.md)"
            )));
        }
        other => return Err(bad(format!("op: {other:?} is not a stage operator"))),
    };
    Ok(e)
}

/// A request value as the canonical writer echoes it. Every member was checked, so only strings,
/// booleans, arrays and objects remain.
fn echo(v: &Value) -> Result<J, LineError> {
    Ok(match v {
        Value::String(s) => J::Str(s.clone()),
        Value::Bool(b) => J::Bool(*b),
        Value::Array(a) => J::Arr(a.iter().map(echo).collect::<Result<_, _>>()?),
        Value::Object(m) => J::Obj(
            m.iter()
                .map(|(k, x)| Ok((k.clone(), echo(x)?)))
                .collect::<Result<_, LineError>>()?,
        ),
        Value::Null | Value::Number(_) => return Err(LineError::Bug("an unchecked value in a stage request".into())),
    })
}

/// Fills one stage request (a parsed line whose object has an `"op"` member).
pub fn fill_line(v: &Value) -> Result<String, LineError> {
    let m = members(v, "", &["id", "in", "modes", "op"], &["expect"]).map_err(LineError::Bad)?;
    let id = match m["id"].as_str() {
        Some(s) if canon::printable(s) => s,
        Some(_) => return Err(LineError::Bad("id: not printable ASCII".into())),
        None => return Err(LineError::Bad("id: not a string".into())),
    };
    let op = string(&m["op"], "op").map_err(LineError::Bad)?;
    let expect = compute(op, &m["in"], &m["modes"])?;
    let filled = J::obj(vec![
        ("expect", expect),
        ("id", J::str(id)),
        ("in", echo(&m["in"])?),
        ("modes", echo(&m["modes"])?),
        ("op", J::str(op)),
    ]);
    canon::write(&filled).map_err(|e| LineError::Bad(format!("a string that cannot be written canonically: {e}")))
}

#[cfg(test)]
mod tests {
    use super::fill_line;
    use crate::request::LineError;

    fn filled(line: &str) -> String {
        match fill_line(&serde_json::from_str(line).unwrap()) {
            Ok(s) => s,
            Err(LineError::Bad(m) | LineError::Bug(m)) => panic!("{m}"),
        }
    }

    fn bad(line: &str) -> String {
        match fill_line(&serde_json::from_str(line).unwrap()) {
            Err(LineError::Bad(m)) => m,
            other => panic!("{line}: not a request error: {:?}", other.ok()),
        }
    }

    #[test]
    fn the_protocols_example() {
        let req = r#"{"id":"dequantize-example","in":{"sym":"-3","f":"4","base":"7"},"modes":{},"op":"dequantize"}"#;
        assert_eq!(
            filled(req),
            r#"{"expect":{"value":"-41"},"id":"dequantize-example","in":{"base":"7","f":"4","sym":"-3"},"modes":{},"op":"dequantize"}"#
        );
        let req =
            r#"{"expect":{"value":"0"},"id":"d","in":{"base":"7","f":"63","sym":"-3"},"modes":{},"op":"dequantize"}"#;
        assert_eq!(
            filled(req),
            r#"{"expect":{"at":"0","refuse":"field_range"},"id":"d","in":{"base":"7","f":"63","sym":"-3"},"modes":{},"op":"dequantize"}"#
        );
    }

    #[test]
    fn each_expectation_has_its_keys() {
        let cases = [
            (
                r#"{"id":"a","in":{"edges":["1","2"],"sigma":"2"},"modes":{"bucket":"floor"},"op":"bucket"}"#,
                r#"{"index":"2"}"#,
            ),
            (
                r#"{"id":"a","in":{"thr":"2","v":"2"},"modes":{},"op":"coded"}"#,
                r#"{"coded":false}"#,
            ),
            (
                r#"{"id":"a","in":{"n":"32","s":"1","v":"3"},"modes":{},"op":"scale_index"}"#,
                r#"{"index":"2"}"#,
            ),
            (
                r#"{"id":"a","in":{"b":"1","hi":"9","lo":"0","s":"0","x":{"data":["-1","12"],"shape":["1","1","2"]}},"modes":{},"op":"block_stat"}"#,
                r#"{"out":{"data":["0","9"],"shape":["1","1","2"]}}"#,
            ),
            (
                r#"{"id":"a","in":{"edges":["5"],"row":"0","table":[["1","2"]],"v":"5"},"modes":{},"op":"band_lookup"}"#,
                r#"{"value":"2"}"#,
            ),
            (
                r#"{"id":"a","in":{"hi":"255","lo":"0","pred":"250","q":"3","r":"2"},"modes":{},"op":"residual_step"}"#,
                r#"{"value":"255"}"#,
            ),
            (
                r#"{"id":"a","in":{"anchor":false,"order":"checkerboard","shape":["1","2","2"]},"modes":{},"op":"coding_order"}"#,
                r#"{"indices":["1","2"]}"#,
            ),
            (
                r#"{"id":"a","in":{"reads":[],"stream":"0000008000000000","tables":[]},"modes":{"end":"canonical","escape":"strict","hi":"0","lo":"0","table":"t2"},"op":"rans64_decode"}"#,
                r#"{"symbols":[]}"#,
            ),
            (
                r#"{"id":"a","in":{"reads":[],"stream":"0100008000000000","tables":[]},"modes":{"end":"canonical","escape":"lenient","table":"t4097"},"op":"rans64_decode"}"#,
                r#"{"at":"0","refuse":"stream_noncanonical"}"#,
            ),
            (
                r#"{"id":"a","in":{"bounds":["0"],"memory":"0000000000000080","mode":"sgm","pmf":[["256"]],"spans":[{"mask":[false,true],"sigma":["0","0"]},{"mask":[],"sigma":[]}]},"modes":{},"op":"mans_decode"}"#,
                r#"{"symbols":[["0","0"],[]]}"#,
            ),
            (
                r#"{"id":"a","in":{"lengths":[],"memory":"","mode":"fac","rows":[]},"modes":{},"op":"mans_decode"}"#,
                r#"{"at":"0","refuse":"stream_exhausted"}"#,
            ),
        ];
        for (req, want) in cases {
            let v: serde_json::Value = serde_json::from_str(&filled(req)).unwrap();
            let want: serde_json::Value = serde_json::from_str(want).unwrap();
            assert_eq!(v["expect"], want, "{req}");
        }
    }

    #[test]
    fn request_errors() {
        let lines = [
            r#"{"id":"a","in":{"x":"1"},"modes":{},"op":"mc_predict"}"#,
            r#"{"id":"a","in":{"x":"1"},"modes":{},"op":"up2_predict"}"#,
            r#"{"id":"a","in":{"x":"1"},"modes":{},"op":"rate_predict"}"#,
            r#"{"id":"a","in":{"x":"1"},"modes":{},"op":"nope"}"#,
            r#"{"id":"a","in":{"base":"07","f":"4","sym":"-3"},"modes":{},"op":"dequantize"}"#,
            r#"{"id":"a","in":{"base":7,"f":"4","sym":"-3"},"modes":{},"op":"dequantize"}"#,
            r#"{"id":"a","in":{"base":"7","f":"4","sym":"-3"},"modes":{"x":"1"},"op":"dequantize"}"#,
            r#"{"id":"a","in":{"base":"7","f":"4","sym":"-3"},"op":"dequantize"}"#,
            r#"{"id":"a","in":{"edges":[],"sigma":"2"},"modes":{"bucket":"round"},"op":"bucket"}"#,
            r#"{"id":"a","in":{"order":"raster","shape":["2","18446744073709551616","3"]},"modes":{},"op":"coding_order"}"#,
            r#"{"id":"a","in":{"order":"checkerboard","shape":["2","1","3"]},"modes":{},"op":"coding_order"}"#,
            r#"{"id":"a","in":{"reads":[],"stream":"000000800000000","tables":[]},"modes":{"end":"canonical","escape":"lenient","table":"t4097"},"op":"rans64_decode"}"#,
            r#"{"id":"a","in":{"reads":[],"stream":"0000008000000000","tables":[]},"modes":{"end":"canonical","escape":"strict","table":"t4097"},"op":"rans64_decode"}"#,
            r#"{"id":"a","in":{"reads":[],"stream":"0000008000000000","tables":[]},"modes":{"end":"canonical","escape":"lenient","hi":"1","table":"t4097"},"op":"rans64_decode"}"#,
            r#"{"id":"a","in":{"lengths":[],"memory":"01","mode":"sgm","rows":[]},"modes":{},"op":"mans_decode"}"#,
            r#"{"id":"a","in":{"bounds":[],"memory":"0A","mode":"sgm","pmf":[],"spans":[]},"modes":{},"op":"mans_decode"}"#,
            r#"{"id":"a","in":{"b":"1","hi":"3","lo":"0","s":"1","x":{"data":["1"],"shape":["1","2","1"]}},"modes":{},"op":"block_stat"}"#,
        ];
        for l in lines {
            bad(l);
        }
    }
}
