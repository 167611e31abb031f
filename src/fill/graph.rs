//! Filling per-operator and graph vectors (§14.1, §14.2): `load` and every
//! decode's `expect`, from the graph bytes and the decodes' inputs.

use super::recipe::{self, Recipe};
use crate::bounds::{self, profile::Profile};
use crate::canon;
use crate::json::*;
use crate::refusal::Refusal;
use crate::run::{Sequence, Stop};
use crate::tensor::Tensor;
use crate::whg1;
use num_bigint::BigInt;
use serde_json::{Map, Value, json};

/// A request's input tensor: written out, or a scale record's recipe, made only when its decode runs.
enum Input {
    Data(Tensor),
    Recipe(Recipe),
}

/// One decode of a request: its data inputs and scalars.
struct DecodeRequest {
    inputs: Vec<Input>,
    scalars: Vec<BigInt>,
    /// The request's own JSON for `inputs` and `scalars`, echoed in canonical form.
    echo: (Value, Value),
}

/// How the outputs are written: in full, or (a scale record) as digests.
#[derive(Clone, Copy, PartialEq)]
pub enum Form {
    Data,
    Digest,
}

/// Fills one graph vector: load steps 1–8 (step 8 against `acc64`), then the decodes. A scale
/// record's outputs are digests (docs/protocol.md, the scale tier).
pub fn fill(v: &Value) -> Result<Value, Fail> {
    fill_as(v, None)
}

/// Fills a graph vector with its recipes written out and every output in full (`wai-oracle expand`).
pub fn expand(v: &Value) -> Result<Value, Fail> {
    fill_as(v, Some(Form::Data))
}

/// Fills one graph vector, its outputs in `form`, or as the record's inputs are given.
fn fill_as(v: &Value, form: Option<Form>) -> Result<Value, Fail> {
    let o = object(v, "")?;
    only(o, &["decodes", "graph", "id", "load", "profiles"], "")?;
    let id = string(member(o, "id", "")?, "id")?;
    let graph_value = member(o, "graph", "")?;
    let bytes = hex_bytes(graph_value, "graph")?;
    let decodes = array(member(o, "decodes", "")?, "decodes")?
        .iter()
        .enumerate()
        .map(|(i, d)| decode_request(d, &format!("decodes[{i}]")))
        .collect::<Result<Vec<_>, _>>()?;
    let recipes = decodes
        .iter()
        .flat_map(|d| &d.inputs)
        .filter(|t| matches!(t, Input::Recipe(_)));
    let scale = recipes.count() > 0;
    if scale
        && decodes
            .iter()
            .flat_map(|d| &d.inputs)
            .any(|t| matches!(t, Input::Data(_)))
    {
        return Err("decodes: a scale record gives every input as a recipe".into());
    }
    let form = form.unwrap_or(if scale { Form::Digest } else { Form::Data });

    let mut out = Map::new();
    out.insert("graph".into(), graph_value.clone());
    out.insert("id".into(), Value::String(id.to_string()));
    let loaded = whg1::load(&bytes).and_then(|l| bounds::step8(id, &bytes, &l.graph, Profile::Acc64).map(|c| (l, c)));
    match loaded {
        Err(refusal) => {
            // A refused load has no decodes, and both profiles must reproduce it.
            out.insert("load".into(), code(&refusal));
            out.insert("profiles".into(), json!(["acc32", "acc64"]));
            out.insert("decodes".into(), json!([]));
        }
        Ok((loaded, certified)) => {
            out.insert("load".into(), json!("ok"));
            let met = bounds::profiles_met(std::slice::from_ref(&certified));
            out.insert(
                "profiles".into(),
                json!(met.iter().map(|p| p.name()).collect::<Vec<_>>()),
            );
            let mut sequence = Sequence::new(&loaded);
            let mut filled = Vec::new();
            for (i, d) in decodes.into_iter().enumerate() {
                // `expand` writes the recipes out; otherwise the request's inputs are echoed.
                let inputs_echo = match (form, scale) {
                    (Form::Data, true) => Value::Array(d.inputs.iter().map(|t| tensor_value(&t.tensor())).collect()),
                    _ => d.echo.0,
                };
                let inputs = d.inputs.into_iter().map(Input::into_tensor).collect();
                let expect = match sequence.decode(inputs, &d.scalars) {
                    Ok(outputs) => {
                        let write = |t: &Tensor| match form {
                            Form::Data => tensor_value(t),
                            Form::Digest => recipe::digest(t),
                        };
                        json!({ "outputs": outputs.iter().map(write).collect::<Vec<_>>() })
                    }
                    Err(Stop::Refused(r)) => json!({ "refuse": code(&r) }),
                    Err(Stop::Error(e)) => return Err(format!("decodes[{i}]: {e}")),
                };
                filled.push(json!({ "expect": expect, "inputs": inputs_echo, "scalars": d.echo.1 }));
            }
            out.insert("decodes".into(), Value::Array(filled));
        }
    }
    Ok(Value::Object(out))
}

impl Input {
    fn echo(&self) -> Value {
        match self {
            Input::Data(t) => tensor_value(t),
            Input::Recipe(r) => r.echo.clone(),
        }
    }

    fn tensor(&self) -> Tensor {
        match self {
            Input::Data(t) => t.clone(),
            Input::Recipe(r) => r.tensor(),
        }
    }

    fn into_tensor(self) -> Tensor {
        match self {
            Input::Data(t) => t,
            Input::Recipe(r) => r.tensor(),
        }
    }
}

fn code(r: &Refusal) -> Value {
    Value::String(r.code.as_str().to_string())
}

fn decode_request(v: &Value, path: &str) -> Result<DecodeRequest, Fail> {
    let o = object(v, path)?;
    only(o, &["expect", "inputs", "scalars"], path)?;
    let inputs_path = join(path, "inputs");
    let inputs = array(member(o, "inputs", path)?, &inputs_path)?
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let p = format!("{inputs_path}[{i}]");
            if recipe::is_recipe(t) {
                recipe::read(t, &p).map(Input::Recipe)
            } else {
                tensor(t, &p).map(Input::Data)
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    let scalars = integers(member(o, "scalars", path)?, &join(path, "scalars"))?;
    let echo = (
        Value::Array(inputs.iter().map(Input::echo).collect()),
        Value::Array(scalars.iter().map(|s| canon::int(s.clone())).collect()),
    );
    Ok(DecodeRequest { inputs, scalars, echo })
}
