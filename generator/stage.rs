//! Stage-operator cases (docs/corpus.md): `in` and `modes` written readably, integers as
//! numbers or expressions, byte strings as hex or recipes, tensors with recipes; each case
//! becomes a §14.1 stage request.

use crate::recipe::{self, ints};
use crate::value::*;
use num_bigint::BigInt;
use num_traits::ToPrimitive;
use serde_json::{Map, Value, json};
use wai_oracle::canon;
use wai_oracle::plan::Shape;
use wai_oracle::stage::rans64_decode::{Step, encode};

/// The request of a stage case of operator `op`.
pub fn request(op: &str, body: &Value, path: &str) -> Result<Value, Fail> {
    let o = object(body, path)?;
    only(o, &["id", "about", "covers", "in", "modes"], path)?;
    let id = string(member(o, "id", path)?, &format!("{path}.id"))?;
    let input = object(member(o, "in", path)?, &format!("{path}.in"))?;
    let mut inp = Map::new();
    for (k, v) in input {
        let p = format!("{path}.in.{k}");
        let value = match k.as_str() {
            "memory" | "stream" => Value::String(hex::encode(bytes(v, input, &p)?)),
            "mode" | "order" => Value::String(string(v, &p)?.to_string()),
            "anchor" => Value::Bool(v.as_bool().ok_or_else(|| format!("{p}: not true or false"))?),
            "x" => tensor(v, &p)?,
            "spans" => spans(v, &p)?,
            "tables" => tables(v, &p)?,
            _ => ints_anywhere(v, &p)?,
        };
        inp.insert(k.clone(), value);
    }
    let mut modes = Map::new();
    if let Some(m) = o.get("modes") {
        for (k, v) in object(m, &format!("{path}.modes"))? {
            let p = format!("{path}.modes.{k}");
            let value = if matches!(k.as_str(), "lo" | "hi") {
                canon::int(int(v, &p)?)
            } else {
                Value::String(string(v, &p)?.to_string())
            };
            modes.insert(k.clone(), value);
        }
    }
    Ok(json!({ "id": id, "in": inp, "modes": modes, "op": op }))
}

/// Integers (numbers or expressions) at any depth of arrays, as canonical strings.
fn ints_anywhere(v: &Value, path: &str) -> Result<Value, Fail> {
    match v {
        Value::Array(items) => Ok(Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, x)| ints_anywhere(x, &format!("{path}[{i}]")))
                .collect::<Result<_, _>>()?,
        )),
        Value::Bool(b) => Ok(Value::Bool(*b)),
        x => Ok(canon::int(int(x, path)?)),
    }
}

fn spans(v: &Value, path: &str) -> Result<Value, Fail> {
    let out: Vec<Value> = array(v, path)?
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let p = format!("{path}[{k}]");
            let o = object(s, &p)?;
            only(o, &["mask", "sigma"], &p)?;
            Ok(json!({ "mask": member(o, "mask", &p)?.clone(), "sigma": ints_anywhere(member(o, "sigma", &p)?, &format!("{p}.sigma"))? }))
        })
        .collect::<Result<_, Fail>>()?;
    Ok(Value::Array(out))
}

fn tables(v: &Value, path: &str) -> Result<Value, Fail> {
    let out: Vec<Value> = array(v, path)?
        .iter()
        .enumerate()
        .map(|(k, t)| {
            let p = format!("{path}[{k}]");
            let o = object(t, &p)?;
            only(o, &["cdf", "offset"], &p)?;
            Ok(json!({ "cdf": ints_anywhere(member(o, "cdf", &p)?, &format!("{p}.cdf"))?, "offset": canon::int(int(member(o, "offset", &p)?, &format!("{p}.offset"))?) }))
        })
        .collect::<Result<_, Fail>>()?;
    Ok(Value::Array(out))
}

fn tensor(v: &Value, path: &str) -> Result<Value, Fail> {
    let o = object(v, path)?;
    only(o, &["shape", "data"], path)?;
    let dims: Vec<u64> = array(member(o, "shape", path)?, &format!("{path}.shape"))?
        .iter()
        .map(|d| u64_(d, path))
        .collect::<Result<_, _>>()?;
    let [c, h, w] = dims[..] else {
        return Err(format!("{path}.shape: not [C, H, W]"));
    };
    let shape = Shape::new(c, h, w);
    let count = shape
        .elems()
        .ok_or_else(|| format!("{path}.shape: too many elements"))? as usize;
    let data = ints(member(o, "data", path)?, count, &format!("{path}.data"))?;
    Ok(wai_oracle::json::tensor_value(&wai_oracle::tensor::Tensor {
        shape,
        data,
    }))
}

/// A byte string: hex, or a list of parts appended in order: `{"hex": …}`, `{"zeros": n}`,
/// `{"random": {"seed", "length"}}`, `{"rans64": [item…]}` (the provisional encoder, over the
/// request's `tables` and `reads`), and `{"truncate": n}` (keep the first n bytes so far).
pub fn bytes(v: &Value, input: &Map<String, Value>, path: &str) -> Result<Vec<u8>, Fail> {
    if let Value::String(s) = v {
        return hex::decode(s).map_err(|e| format!("{path}: {e}"));
    }
    let mut out = Vec::new();
    for (i, part) in array(v, path)?.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let o = object(part, &p)?;
        if let Some(h) = o.get("hex") {
            out.extend(hex::decode(string(h, &p)?).map_err(|e| format!("{p}: {e}"))?);
        } else if let Some(n) = o.get("zeros") {
            out.extend(vec![0u8; u32_(n, &p)? as usize]);
        } else if let Some(r) = o.get("random") {
            let r = object(r, &p)?;
            only(r, &["seed", "length"], &p)?;
            let seed = u64_(member(r, "seed", &p)?, &p)?;
            let n = u32_(member(r, "length", &p)?, &p)? as usize;
            let values = recipe::random(seed, &BigInt::from(0), &BigInt::from(255), n);
            out.extend(values.iter().map(|b| b.to_u8().unwrap_or(0)));
        } else if let Some(items) = o.get("rans64") {
            out.extend(encode(&steps(items, input, &p)?));
        } else if let Some(n) = o.get("truncate") {
            out.truncate(u32_(n, &p)? as usize);
        } else {
            return Err(format!("{p}: not a byte recipe"));
        }
    }
    Ok(out)
}

/// The decoder's steps for `rans64` items aligned with the request's `reads`: a symbol index `k`
/// of that read's table, or `{"escape": {"count": [nibble…], "groups": [nibble…]}}` (the table's
/// last symbol, then each nibble as `bits(4)`).
fn steps(items: &Value, input: &Map<String, Value>, path: &str) -> Result<Vec<Step>, Fail> {
    let tables = array(
        input
            .get("tables")
            .ok_or_else(|| format!("{path}: the request has no tables"))?,
        path,
    )?;
    let reads = array(
        input
            .get("reads")
            .ok_or_else(|| format!("{path}: the request has no reads"))?,
        path,
    )?;
    let mut steps = Vec::new();
    for (i, item) in array(items, path)?.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let read = reads.get(i).ok_or_else(|| format!("{p}: more items than reads"))?;
        let t = tables
            .get(u32_(read, &p)? as usize)
            .ok_or_else(|| format!("{p}: no such table"))?;
        let cdf: Vec<BigInt> = array(&t["cdf"], &p)?
            .iter()
            .map(|c| int(c, &p))
            .collect::<Result<_, _>>()?;
        match item.get("escape") {
            None => steps.push(Step::Symbol {
                cdf,
                k: u32_(item, &p)? as usize,
            }),
            Some(e) => {
                let n = cdf.len();
                steps.push(Step::Symbol { cdf, k: n - 2 });
                for key in ["count", "groups"] {
                    for g in array(e.get(key).unwrap_or(&Value::Array(vec![])), &p)? {
                        steps.push(Step::Bits {
                            k: 4,
                            value: int(g, &p)?,
                        });
                    }
                }
            }
        }
    }
    Ok(steps)
}
