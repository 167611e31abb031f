//! The `fill` protocol (docs/protocol.md): request lines in, canonical filled lines out. A line whose
//! object has an `"op"` member is a stage-operator vector ([`crate::stage`]); any other a graph vector,
//! written out or a scale record whose inputs are recipes and outputs digests ([`crate::recipe`]).

use crate::canon::{self, J};
use crate::ops::{Bug, Tensor};
use crate::recipe::{self, RecipeTensor};
use crate::request::{Bad, LineError, array, at, bad, int_str, members, shape};
use crate::run::{Given, Outcome, Sequence};
use crate::whg1::Kind;
use crate::whg1::load;
use serde_json::Value;
use std::io::{BufRead, Write};

/// A decode's data inputs as the request gives them.
pub(crate) enum Inputs {
    /// Written out: the tensors, and each one's element strings for the echo.
    Written(Vec<Given>, Vec<Vec<String>>),
    /// Recipes (docs/protocol.md, the scale tier): their elements exist only while the decode runs.
    Recipes(Vec<RecipeTensor>),
}

impl Inputs {
    fn len(&self) -> usize {
        match self {
            Inputs::Written(ts, _) => ts.len(),
            Inputs::Recipes(rs) => rs.len(),
        }
    }

    fn echo(&self) -> J {
        match self {
            Inputs::Written(ts, raw) => J::Arr(ts.iter().zip(raw).map(|(t, r)| tensor_json(t.shape, r)).collect()),
            Inputs::Recipes(rs) => J::Arr(rs.iter().map(RecipeTensor::echo).collect()),
        }
    }
}

pub(crate) struct ReqDecode {
    pub(crate) inputs: Inputs,
    pub(crate) scalars: Vec<i128>,
    raw_scalars: Vec<String>,
}

pub(crate) struct Request {
    id: String,
    graph_hex: String,
    pub(crate) graph: Vec<u8>,
    /// A scale record: its outputs are written as digests (docs/protocol.md, the scale tier).
    scale: bool,
    pub(crate) decodes: Vec<ReqDecode>,
}

/// A written-out tensor, and its elements' canonical strings.
fn tensor(v: &Value, field: &str) -> Result<(Given, Vec<String>), Bad> {
    let m = members(v, field, &["data", "shape"], &[])?;
    let shape = shape(&m["shape"], &at(field, "shape"))?;
    let data_v = array(&m["data"], &at(field, "data"))?;
    // Three sides below 2^64 can pass u128: such a product holds no request's data.
    let n = shape.iter().try_fold(1u128, |n, &d| n.checked_mul(u128::from(d)));
    if n != Some(data_v.len() as u128) {
        let [c, h, w] = shape;
        return bad(
            &at(field, "data"),
            &format!("holds {} elements, not C·H·W = {c}·{h}·{w}", data_v.len()),
        );
    }
    let mut data = Vec::with_capacity(data_v.len());
    let mut raw_data = Vec::with_capacity(data_v.len());
    for (i, d) in data_v.iter().enumerate() {
        let s = int_str(d, &format!("{field}.data[{i}]"))?;
        data.push(canon::parse_int(s).expect("canonical").clamped());
        raw_data.push(s.to_string());
    }
    Ok((Given { shape, data }, raw_data))
}

/// A decode's `inputs`: every one a recipe in a scale record, every one written out elsewhere.
fn inputs(v: &Value, field: &str, scale: bool) -> Result<Inputs, Bad> {
    let each = array(v, field)?
        .iter()
        .enumerate()
        .map(|(k, t)| (t, format!("{field}[{k}]")));
    if scale {
        let rs = each.map(|(t, f)| recipe::read_input(t, &f)).collect::<Result<_, _>>()?;
        return Ok(Inputs::Recipes(rs));
    }
    let (ts, raw) = each
        .map(|(t, f)| tensor(t, &f))
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .unzip();
    Ok(Inputs::Written(ts, raw))
}

pub(crate) fn parse(v: &Value) -> Result<Request, Bad> {
    let m = members(v, "", &["decodes", "graph", "id"], &["load", "profiles"])?;
    let id = match m["id"].as_str() {
        Some(s) if canon::printable(s) => s.to_string(),
        Some(_) => return bad("id", "not printable ASCII"),
        None => return bad("id", "not a string"),
    };
    let graph_hex = match m["graph"].as_str() {
        Some(s) if s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) && s.len() % 2 == 0 => s,
        Some(_) => return bad("graph", "not lowercase hexadecimal bytes"),
        None => return bad("graph", "not a string"),
    };
    let graph = hex::decode(graph_hex).map_err(|e| format!("graph: {e}"))?;
    let scale = recipe::is_scale(v);
    let mut decodes = Vec::new();
    for (i, d) in array(&m["decodes"], "decodes")?.iter().enumerate() {
        let f = format!("decodes[{i}]");
        let dm = members(d, &f, &["inputs", "scalars"], &["expect"])?;
        let inputs = inputs(&dm["inputs"], &format!("{f}.inputs"), scale)?;
        let mut scalars = Vec::new();
        let mut raw_scalars = Vec::new();
        for (k, s) in array(&dm["scalars"], &format!("{f}.scalars"))?.iter().enumerate() {
            let s = int_str(s, &format!("{f}.scalars[{k}]"))?;
            scalars.push(canon::parse_int(s).expect("canonical").clamped());
            raw_scalars.push(s.to_string());
        }
        decodes.push(ReqDecode {
            inputs,
            scalars,
            raw_scalars,
        });
    }
    Ok(Request {
        id,
        graph_hex: graph_hex.to_string(),
        graph,
        scale,
        decodes,
    })
}

fn tensor_json(shape: [u64; 3], data: &[String]) -> J {
    J::obj(vec![
        ("data", J::Arr(data.iter().map(|s| J::str(s)).collect())),
        ("shape", J::Arr(shape.iter().map(J::int).collect())),
    ])
}

/// An output tensor: written out, or in a scale record its digest form.
fn out_tensor_json(t: &Tensor, scale: bool) -> J {
    let shape = [t.shape.c, t.shape.h, t.shape.w];
    if scale {
        return recipe::digest_j(shape, &t.data);
    }
    J::obj(vec![
        ("data", J::Arr(t.data.iter().map(J::int).collect())),
        ("shape", J::Arr(shape.iter().map(J::int).collect())),
    ])
}

/// Runs one decode; a scale record's recipes are expanded here and dropped after it.
fn run_decode(seq: &mut Sequence, d: &ReqDecode, scale: bool) -> Result<J, Bug> {
    let expanded: Vec<Given>;
    let given = match &d.inputs {
        Inputs::Written(ts, _) => ts,
        Inputs::Recipes(rs) => {
            expanded = rs.iter().map(RecipeTensor::given).collect();
            &expanded
        }
    };
    Ok(match seq.decode(given, &d.scalars)? {
        Outcome::Outputs(ts) => J::obj(vec![(
            "outputs",
            J::Arr(ts.iter().map(|t| out_tensor_json(t, scale)).collect()),
        )]),
        Outcome::Refused(c) => J::obj(vec![("refuse", J::str(c.name()))]),
    })
}

/// Fills one request line; returns the canonical filled line, without its line feed.
pub fn fill_line(line: &str) -> Result<String, LineError> {
    let v: Value = serde_json::from_str(line).map_err(|e| LineError::Bad(format!("not JSON: {e}")))?;
    // A stage-operator vector has an "op" member (docs/protocol.md); other lines are graph vectors.
    if v.as_object().is_some_and(|m| m.contains_key("op")) {
        return crate::stage::fill_line(&v);
    }
    // A CIS-2 record has an "fn" (ops.jsonl) or a "model" (decode.jsonl) member.
    if crate::cis2::fill::is_cis2(&v) {
        return crate::cis2::fill::fill_line(&v);
    }
    // A lowering record has a "lowering" member; a jpegai scale-path record a "bundle" member.
    if v.as_object().is_some_and(|m| m.contains_key("lowering")) {
        return crate::lower::fill_line(&v);
    }
    if v.as_object().is_some_and(|m| m.contains_key("bundle")) {
        return crate::lower::scale_path::fill_line(&v);
    }
    // A DetessDequant record has a "buffers" member (a call) or an "in" holding "q" (numeric).
    if crate::dequant::fill::is_dequant(&v) {
        return crate::dequant::fill::fill_value(&v);
    }
    let req = parse(&v).map_err(LineError::Bad)?;
    let loaded = load::load(&req.graph);
    let (load_j, profiles, decodes) = match &loaded {
        Err(code) => (J::str(code.name()), vec![J::str("acc32"), J::str("acc64")], Vec::new()),
        Ok(l) => {
            let g = &l.checked.graph;
            let n_data = g.inputs.iter().filter(|i| i.kind == Kind::Data).count();
            for (i, d) in req.decodes.iter().enumerate() {
                if d.inputs.len() != n_data {
                    return Err(LineError::Bad(format!(
                        "decodes[{i}].inputs: {} tensors, not the graph's {n_data} data inputs",
                        d.inputs.len()
                    )));
                }
                if d.scalars.len() != g.scalars.len() {
                    return Err(LineError::Bad(format!(
                        "decodes[{i}].scalars: {} values, not the graph's {} scalars",
                        d.scalars.len(),
                        g.scalars.len()
                    )));
                }
            }
            let mut seq = Sequence::new(g);
            let mut out = Vec::with_capacity(req.decodes.len());
            for d in &req.decodes {
                out.push(J::obj(vec![
                    ("expect", run_decode(&mut seq, d, req.scale)?),
                    ("inputs", d.inputs.echo()),
                    ("scalars", J::Arr(d.raw_scalars.iter().map(|s| J::str(s)).collect())),
                ]));
            }
            let profiles = l.profiles.iter().map(|p| J::str(p.name())).collect();
            (J::str("ok"), profiles, out)
        }
    };
    let filled = J::obj(vec![
        ("decodes", J::Arr(decodes)),
        ("graph", J::str(&req.graph_hex)),
        ("id", J::str(&req.id)),
        ("load", load_j),
        ("profiles", J::Arr(profiles)),
    ]);
    canon::write(&filled).map_err(LineError::Bug)
}

/// Fills every line of `input` into `out`; returns the number of bad lines, after reporting each on
/// `err` as `line N: <field>: <what is wrong>`. Every line ends with a line feed; a last line without
/// one is read as well.
pub fn fill(input: &[u8], out: &mut String, err: &mut dyn FnMut(String)) -> usize {
    crate::request::fill_bytes(input, out, err, &fill_one)
}

/// [`fill`], streaming: each filled line is written as it is made, and lines are read up to
/// [`crate::request::MAX_LINE`] bytes.
pub fn fill_stream(
    input: &mut dyn BufRead,
    out: &mut dyn Write,
    err: &mut dyn FnMut(String),
) -> std::io::Result<usize> {
    crate::request::fill_lines(input, out, err, crate::request::MAX_LINE, &fill_one)
}

/// One line, through the implementation faults of `--features mutants`.
fn fill_one(line: &str) -> Result<String, LineError> {
    fault!("crash-on-stage", (), crash_on(line, "\"op\""));
    fault!("hang-on-cis2", (), hang_on(line, "\"fn\""));
    fault!("garbage-on-dequant", fill_line(line), garbage_on(line, "\"buffers\""))
}

/// `crash-on-stage`: the process exits at a line holding `key` (a stage request's).
#[cfg(feature = "mutants")]
fn crash_on(line: &str, key: &str) {
    if line.contains(key) {
        std::process::exit(3);
    }
}

/// `hang-on-cis2`: the process sleeps forever at a line holding `key` (a CIS-2 ops request's).
#[cfg(feature = "mutants")]
fn hang_on(line: &str, key: &str) {
    while line.contains(key) {
        std::thread::sleep(std::time::Duration::from_secs(3600));
    }
}

/// `garbage-on-dequant`: a line that is not JSON for a line holding `key` (a DetessDequant
/// request's), else the record.
#[cfg(feature = "mutants")]
fn garbage_on(line: &str, key: &str) -> Result<String, LineError> {
    if line.contains(key) {
        return Ok("garbage, not a record".to_string());
    }
    fill_line(line)
}
