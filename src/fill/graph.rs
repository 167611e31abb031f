//! Filling per-operator and graph vectors (§14.1, §14.2): `load` and every
//! decode's `expect`, from the graph bytes and the decodes' inputs.

use super::json::*;
use crate::bounds::{self, profile::Profile};
use crate::canon;
use crate::refusal::Refusal;
use crate::run::{Sequence, Stop};
use crate::tensor::Tensor;
use crate::whg1;
use num_bigint::BigInt;
use serde_json::{Map, Value, json};

/// The computed fields of a graph vector. A request may hold them or not.
pub const COMPUTED: [&str; 2] = ["load", "profiles"];

/// One decode of a request: its data inputs and scalars.
struct DecodeRequest {
    inputs: Vec<Tensor>,
    scalars: Vec<BigInt>,
    /// The request's own JSON for `inputs` and `scalars`, echoed in canonical form.
    echo: (Value, Value),
}

/// Fills one graph vector: load steps 1–8 (step 8 against `acc64`), then the decodes.
pub fn fill(v: &Value) -> Result<Value, Fail> {
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
                let expect = match sequence.decode(d.inputs, &d.scalars) {
                    Ok(outputs) => {
                        json!({ "outputs": outputs.iter().map(tensor_value).collect::<Vec<_>>() })
                    }
                    Err(Stop::Refused(r)) => json!({ "refuse": code(&r) }),
                    Err(Stop::Error(e)) => return Err(format!("decodes[{i}]: {e}")),
                };
                filled.push(json!({ "expect": expect, "inputs": d.echo.0, "scalars": d.echo.1 }));
            }
            out.insert("decodes".into(), Value::Array(filled));
        }
    }
    Ok(Value::Object(out))
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
        .map(|(i, t)| tensor(t, &format!("{inputs_path}[{i}]")))
        .collect::<Result<Vec<_>, _>>()?;
    let scalars = integers(member(o, "scalars", path)?, &join(path, "scalars"))?;
    let echo = (
        Value::Array(inputs.iter().map(tensor_value).collect()),
        Value::Array(scalars.iter().map(|s| canon::int(s.clone())).collect()),
    );
    Ok(DecodeRequest { inputs, scalars, echo })
}
