//! Corpus cases: matrix expansion, byte mutations, decodes with recipes, and the
//! request each case becomes (docs/corpus.md).

use crate::attain;
use crate::graph::graph;
use crate::recipe::ints;
use crate::value::*;
use serde_json::{Value, json};
use wai_oracle::plan::Shape;
use wai_oracle::tensor::Tensor;
use wai_oracle::whg1::{self, Graph};
use wai_oracle::{canon, files};

/// One expanded case.
pub struct Case {
    pub id: String,
    pub covers: Vec<String>,
    /// The case's JSON after expansion, for error messages and recipes.
    pub body: Value,
    /// The corpus it comes from (a graph may be a lowered set of `corpus/sets/`).
    pub root: std::path::PathBuf,
}

/// The cases of one corpus file, in order, each matrix expanded.
pub fn cases(file: &Value, path: &str, root: &std::path::Path) -> Result<Vec<Case>, Fail> {
    let o = object(file, path)?;
    only(o, &["about", "cases"], path)?;
    let mut out = Vec::new();
    for (i, entry) in array(member(o, "cases", path)?, &format!("{path}.cases"))?
        .iter()
        .enumerate()
    {
        let p = format!("{path}.cases[{i}]");
        for body in expand(entry, &p)? {
            let c = object(&body, &p)?;
            only(
                c,
                &[
                    "id",
                    "about",
                    "covers",
                    "graph",
                    "mutate",
                    "decodes",
                    "in",
                    "modes",
                    "bundle",
                    "replace",
                    "payload",
                    "fn",
                    "model",
                    "prompt",
                    "gen_toks",
                    "peer",
                    "scale",
                    "zero_point",
                    "q",
                    "input",
                    "output",
                    "inputs",
                    "outputs",
                    "input_buffer",
                    "output_buffer",
                    "input_buffers",
                    "output_buffers",
                ],
                &p,
            )?;
            let id = string(member(c, "id", &p)?, &format!("{p}.id"))?.to_string();
            let covers = match c.get("covers") {
                None => vec![],
                Some(v) => array(v, &format!("{p}.covers"))?
                    .iter()
                    .map(|x| string(x, &format!("{p}.covers")).map(str::to_string))
                    .collect::<Result<_, _>>()?,
            };
            out.push(Case {
                id,
                covers,
                body,
                root: root.to_path_buf(),
            });
        }
    }
    Ok(out)
}

/// A case, or `{"matrix": {name: [values…]…}, "case": …}`: one case per combination, in the
/// order of the names' bytes and of each list, with `"$name"` replaced by the value and
/// `{name}` inside strings by its text; `name.field` reads a field of an object value.
fn expand(entry: &Value, path: &str) -> Result<Vec<Value>, Fail> {
    let Some(matrix) = entry.get("matrix") else {
        return Ok(vec![entry.clone()]);
    };
    let o = object(entry, path)?;
    only(o, &["matrix", "case"], path)?;
    let template = member(o, "case", path)?;
    let mut combos: Vec<Vec<(String, Value)>> = vec![vec![]];
    for (name, values) in object(matrix, &format!("{path}.matrix"))? {
        let values = array(values, &format!("{path}.matrix.{name}"))?;
        combos = combos
            .into_iter()
            .flat_map(|combo| {
                values.iter().map(move |v| {
                    let mut c = combo.clone();
                    c.push((name.clone(), v.clone()));
                    c
                })
            })
            .collect();
    }
    Ok(combos.iter().map(|combo| substitute(template, combo)).collect())
}

/// The value a reference `name` or `name.field` names in a combination.
fn lookup(combo: &[(String, Value)], reference: &str) -> Option<Value> {
    let (name, field) = match reference.split_once('.') {
        Some((n, f)) => (n, Some(f)),
        None => (reference, None),
    };
    let value = &combo.iter().find(|(n, _)| n == name)?.1;
    match field {
        Some(f) => value.get(f).cloned(),
        None => Some(value.clone()),
    }
}

fn substitute(v: &Value, combo: &[(String, Value)]) -> Value {
    match v {
        Value::String(s) => {
            if let Some(value) = s.strip_prefix('$').and_then(|r| lookup(combo, r)) {
                return value;
            }
            // Each `{reference}` inside the string becomes its value's text.
            let mut out = String::new();
            let mut rest = s.as_str();
            while let Some(open) = rest.find('{') {
                let Some(close) = rest[open..].find('}') else { break };
                let reference = &rest[open + 1..open + close];
                out.push_str(&rest[..open]);
                match lookup(combo, reference) {
                    Some(Value::String(t)) => out.push_str(&t),
                    Some(other) => out.push_str(&other.to_string()),
                    None => out.push_str(&rest[open..=open + close]),
                }
                rest = &rest[open + close + 1..];
            }
            out.push_str(rest);
            Value::String(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(|x| substitute(x, combo)).collect()),
        Value::Object(members) => {
            Value::Object(members.iter().map(|(k, x)| (k.clone(), substitute(x, combo))).collect())
        }
        other => other.clone(),
    }
}

/// The case's graph model (before mutation).
pub fn model(case: &Case, path: &str) -> Result<Graph, Fail> {
    if let Some(hex) = raw_graph(case, path)? {
        let bytes = hex::decode(&hex).map_err(|e| format!("{path}.graph: {e}"))?;
        return whg1::read(&bytes).map_err(|r| format!("{path}.graph: {r}"));
    }
    graph(
        member(object(&case.body, path)?, "graph", path)?,
        &format!("{path}.graph"),
    )
}

/// The bytes of a graph given as `{"hex": …}` (a regression recorded as it was found), or as
/// `{"lowered": {"set", "role"}}` (a graph a set of `corpus/sets/` lowers to).
fn raw_graph(case: &Case, path: &str) -> Result<Option<String>, Fail> {
    let Some(g) = case.body.get("graph") else {
        return Ok(None);
    };
    if let Some(h) = g.get("hex") {
        return Ok(Some(string(h, &format!("{path}.graph.hex"))?.to_string()));
    }
    if let Some(l) = g.get("lowered") {
        let p = format!("{path}.graph.lowered");
        let set = string(l.get("set").ok_or(format!("{p}.set: missing"))?, &p)?;
        let role = string(l.get("role").ok_or(format!("{p}.role: missing"))?, &p)?;
        let sets = crate::sets::read_all(&case.root)?;
        return Ok(Some(hex::encode(crate::sets::lowered_graph(&sets, set, role)?)));
    }
    Ok(None)
}

/// The case's request line: its id, its graph's bytes (mutated), and its decodes.
pub fn request(case: &Case, path: &str) -> Result<Value, Fail> {
    let o = object(&case.body, path)?;
    if let Some(hex) = raw_graph(case, path)? {
        let bytes = hex::decode(&hex).map_err(|e| format!("{path}.graph.hex: {e}"))?;
        let g = whg1::read(&bytes).unwrap_or_else(|_| Graph {
            max_elems: 1,
            scalars: vec![],
            inputs: vec![],
            outputs: vec![],
            tensors: vec![],
            nodes: vec![],
        });
        let decodes = match o.get("decodes") {
            None => vec![],
            Some(d) => array(d, &format!("{path}.decodes"))?
                .iter()
                .enumerate()
                .map(|(i, d)| decode(d, &g, &format!("{path}.decodes[{i}]")))
                .collect::<Result<_, _>>()?,
        };
        return Ok(json!({ "decodes": decodes, "graph": hex, "id": case.id }));
    }
    let g = model(case, path)?;
    let mut bytes = whg1::write(&g);
    if let Some(m) = o.get("mutate") {
        mutate(&mut bytes, &g, m, &format!("{path}.mutate"))?;
    }
    let decodes = match o.get("decodes") {
        None => vec![],
        Some(d) => array(d, &format!("{path}.decodes"))?
            .iter()
            .enumerate()
            .map(|(i, d)| decode(d, &g, &format!("{path}.decodes[{i}]")))
            .collect::<Result<_, _>>()?,
    };
    Ok(json!({ "decodes": decodes, "graph": hex::encode(&bytes), "id": case.id }))
}

/// Where each table starts in the graph's bytes (§10.1, §10.2).
fn anchor(g: &Graph, name: &str, path: &str) -> Result<usize, Fail> {
    let scalars = 32;
    let inputs = scalars + 16 * g.scalars.len();
    let outputs = inputs + 32 * g.inputs.len();
    let tensors = outputs + 4 * g.outputs.len();
    let ops = tensors + 24 * g.tensors.len();
    Ok(match name {
        "header" => 0,
        "scalars" => scalars,
        "inputs" => inputs,
        "outputs" => outputs,
        "tensors" => tensors,
        "ops" => ops,
        other => return Err(format!("{path}: no anchor {other:?}")),
    })
}

/// Byte mutations, in order: `{"at": [anchor, offset], "hex": …}` overwrites,
/// `{"truncate": n}` keeps the first n bytes, `{"append": hex}` appends.
fn mutate(bytes: &mut Vec<u8>, g: &Graph, v: &Value, path: &str) -> Result<(), Fail> {
    for (i, m) in array(v, path)?.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let o = object(m, &p)?;
        only(o, &["at", "hex", "truncate", "append"], &p)?;
        let hex_of = |key: &str| {
            hex::decode(string(member(o, key, &p)?, &format!("{p}.{key}"))?).map_err(|e| format!("{p}.{key}: {e}"))
        };
        if let Some(at) = o.get("at") {
            let offset = match array(at, &format!("{p}.at"))? {
                [a, off] => {
                    anchor(g, string(a, &format!("{p}.at[0]"))?, &p)? + u32_(off, &format!("{p}.at[1]"))? as usize
                }
                _ => return Err(format!("{p}.at: not [anchor, offset]")),
            };
            let patch = hex_of("hex")?;
            let end = offset + patch.len();
            if end > bytes.len() {
                return Err(format!(
                    "{p}: the patch ends at {end}, past the graph's {} bytes",
                    bytes.len()
                ));
            }
            bytes[offset..end].copy_from_slice(&patch);
        } else if let Some(n) = o.get("truncate") {
            bytes.truncate(u32_(n, &format!("{p}.truncate"))? as usize);
        } else {
            bytes.extend(hex_of("append")?);
        }
    }
    Ok(())
}

/// A decode: `{"inputs": [tensor…], "scalars": [int…]}`, each tensor written out, made
/// by a recipe, or `{"attain": …}`.
fn decode(v: &Value, g: &Graph, path: &str) -> Result<Value, Fail> {
    let o = object(v, path)?;
    only(o, &["inputs", "scalars"], path)?;
    let inputs: Vec<Value> = array(member(o, "inputs", path)?, &format!("{path}.inputs"))?
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let p = format!("{path}.inputs[{i}]");
            match t.get("recipe") {
                Some(_) => recipe_input(t, &p),
                None => tensor(t, g, &p).map(|t| tensor_value(&t)),
            }
        })
        .collect::<Result<_, _>>()?;
    let scalars: Vec<Value> = match o.get("scalars") {
        None => vec![],
        Some(s) => array(s, &format!("{path}.scalars"))?
            .iter()
            .enumerate()
            .map(|(k, x)| int(x, &format!("{path}.scalars[{k}]")).map(canon::int))
            .collect::<Result<_, _>>()?,
    };
    Ok(json!({ "inputs": inputs, "scalars": scalars }))
}

/// A scale record's input, `{"shape", "recipe": {"seed", "range"}}` (docs/protocol.md, the scale
/// tier): written in the request's canonical form and read back as a request would be.
fn recipe_input(v: &Value, path: &str) -> Result<Value, Fail> {
    let o = object(v, path)?;
    only(o, &["shape", "recipe"], path)?;
    let shape = shape(member(o, "shape", path)?, &format!("{path}.shape"))?;
    let rp = format!("{path}.recipe");
    let r = object(member(o, "recipe", path)?, &rp)?;
    only(r, &["seed", "range"], &rp)?;
    let seed = u64_(member(r, "seed", &rp)?, &format!("{rp}.seed"))?;
    let (lo, hi) = crate::recipe::range(member(r, "range", &rp)?, &format!("{rp}.range"))?;
    let request = json!({
        "recipe": { "generator": "splitmix64", "range": [canon::int(lo), canon::int(hi)], "seed": canon::int(seed) },
        "shape": [canon::int(shape.c), canon::int(shape.h), canon::int(shape.w)],
    });
    wai_oracle::fill::recipe::read(&request, path)?;
    Ok(request)
}

fn tensor_value(t: &Tensor) -> Value {
    wai_oracle::json::tensor_value(t)
}

fn shape(v: &Value, path: &str) -> Result<Shape, Fail> {
    match array(v, path)? {
        [c, h, w] => Ok(Shape::new(u64_(c, path)?, u64_(h, path)?, u64_(w, path)?)),
        _ => Err(format!("{path}: not [C, H, W]")),
    }
}

fn tensor(v: &Value, g: &Graph, path: &str) -> Result<Tensor, Fail> {
    let o = object(v, path)?;
    only(o, &["shape", "data", "attain"], path)?;
    let shape = shape(member(o, "shape", path)?, &format!("{path}.shape"))?;
    if let Some(a) = o.get("attain") {
        return attain::input(g, shape, a, &format!("{path}.attain"));
    }
    let count = shape
        .elems()
        .ok_or_else(|| format!("{path}.shape: too many elements"))? as usize;
    let data = ints(member(o, "data", path)?, count, &format!("{path}.data"))?;
    Ok(Tensor { shape, data })
}

/// Writes each case's graph of a file as `out/<id>.whg1` (the benchmark's synthetic graphs).
pub fn write_graphs(file: &std::path::Path, out: &std::path::Path) -> Result<(), Fail> {
    let path = file.display().to_string();
    let text = std::fs::read_to_string(file).map_err(|e| format!("{path}: {e}"))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))?;
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    for c in cases(&v, &path, file.parent().unwrap_or(std::path::Path::new(".")))? {
        let bytes = whg1::write(&model(&c, &format!("{path}: case {}", c.id))?);
        let target = out.join(format!("{}.whg1", c.id));
        files::write(&target, &bytes).map_err(|e| format!("{}: {e}", target.display()))?;
    }
    Ok(())
}
