//! Reading JSON with each field's path in errors, so that a bad request line is reported as
//! `line N: <field>: <what is wrong>` and a refused parameter set names the member at fault.
//!
//! Integers come in two encodings. A request's (the `fill` protocol, docs/protocol.md) are canonical
//! decimal strings: [`integer`], [`tensor`], [`shape`]. A parameter set's files hold JSON numbers, as
//! the forms a lowering reads define them (§13): [`i64_number`], [`u64_number`], [`number_tensor`].

use crate::canon;
use crate::plan::Shape;
use crate::tensor::Tensor;
use num_bigint::BigInt;
use serde_json::{Map, Value, json};

pub type Fail = String;

// ---------------------------------------------------------------------------------------------
// Objects, members, arrays, strings

/// `path.key`, or `key` at the top.
pub fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

pub fn object<'a>(v: &'a Value, path: &str) -> Result<&'a Map<String, Value>, Fail> {
    v.as_object().ok_or_else(|| format!("{}: not an object", display(path)))
}

fn display(path: &str) -> &str {
    if path.is_empty() { "the line" } else { path }
}

/// Refuses members other than `allowed`.
pub fn only(o: &Map<String, Value>, allowed: &[&str], path: &str) -> Result<(), Fail> {
    match o.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(format!("{}: unknown member {k:?}", display(path))),
        None => Ok(()),
    }
}

pub fn member<'a>(o: &'a Map<String, Value>, key: &str, path: &str) -> Result<&'a Value, Fail> {
    o.get(key).ok_or_else(|| format!("{}: missing", join(path, key)))
}

pub fn string<'a>(v: &'a Value, path: &str) -> Result<&'a str, Fail> {
    v.as_str().ok_or_else(|| format!("{path}: not a string"))
}

pub fn array<'a>(v: &'a Value, path: &str) -> Result<&'a [Value], Fail> {
    v.as_array()
        .map(Vec::as_slice)
        .ok_or_else(|| format!("{path}: not an array"))
}

// ---------------------------------------------------------------------------------------------
// A request's canonical integers (docs/protocol.md)

/// A canonical decimal integer string.
pub fn integer(v: &Value, path: &str) -> Result<BigInt, Fail> {
    let s = string(v, path)?;
    canon::parse_int(s).ok_or_else(|| format!("{path}: {s:?} is not a canonical integer string"))
}

pub fn integers(v: &Value, path: &str) -> Result<Vec<BigInt>, Fail> {
    array(v, path)?
        .iter()
        .enumerate()
        .map(|(i, x)| integer(x, &format!("{path}[{i}]")))
        .collect()
}

/// Lowercase hexadecimal bytes.
pub fn hex_bytes(v: &Value, path: &str) -> Result<Vec<u8>, Fail> {
    let s = string(v, path)?;
    if s.bytes().any(|b| b.is_ascii_uppercase()) {
        return Err(format!("{path}: hex must be lowercase"));
    }
    hex::decode(s).map_err(|e| format!("{path}: not hex: {e}"))
}

/// A tensor `{ "data", "shape" }`: three dimensions, and `C·H·W` elements.
pub fn tensor(v: &Value, path: &str) -> Result<Tensor, Fail> {
    let o = object(v, path)?;
    only(o, &["data", "shape"], path)?;
    let shape = shape(member(o, "shape", path)?, &join(path, "shape"))?;
    let data_path = join(path, "data");
    let data = integers(member(o, "data", path)?, &data_path)?;
    let want = BigInt::from(shape.c) * shape.h * shape.w;
    if BigInt::from(data.len()) != want {
        return Err(format!(
            "{data_path}: {} elements, and the shape has {want}",
            data.len()
        ));
    }
    Ok(Tensor { shape, data })
}

/// A shape `[C, H, W]`: three dimensions, each in `0..2^64`.
pub fn shape(v: &Value, path: &str) -> Result<Shape, Fail> {
    let dims = integers(v, path)?;
    if dims.len() != 3 {
        return Err(format!("{path}: {} dimensions, not 3", dims.len()));
    }
    let dim = |i: usize| u64::try_from(&dims[i]).map_err(|_| format!("{path}[{i}]: not in 0..2^64"));
    Ok(Shape::new(dim(0)?, dim(1)?, dim(2)?))
}

/// A shape as its canonical JSON value.
pub fn shape_value(s: Shape) -> Value {
    json!([canon::int(s.c), canon::int(s.h), canon::int(s.w)])
}

/// A tensor as its canonical JSON value.
pub fn tensor_value(t: &Tensor) -> Value {
    json!({
        "data": t.data.iter().map(|v| canon::int(v.clone())).collect::<Vec<_>>(),
        "shape": shape_value(t.shape),
    })
}

// ---------------------------------------------------------------------------------------------
// A parameter set's JSON numbers (§13)

/// A JSON integer that fits i64.
pub fn i64_number(v: &Value, path: &str) -> Result<i64, Fail> {
    v.as_i64()
        .ok_or_else(|| format!("{path}: {v} is not an integer that fits i64"))
}

/// A JSON integer that fits u64.
pub fn u64_number(v: &Value, path: &str) -> Result<u64, Fail> {
    v.as_u64()
        .ok_or_else(|| format!("{path}: {v} is not a non-negative integer below 2^64"))
}

/// An optional non-negative member, `default` when absent.
pub fn u64_number_or(o: &Map<String, Value>, key: &str, default: u64, path: &str) -> Result<u64, Fail> {
    o.get(key).map_or(Ok(default), |v| u64_number(v, &join(path, key)))
}

/// A nested array of integers, flattened in row-major order, with its dimensions checked
/// against `dims`.
pub fn number_tensor(v: &Value, dims: &[u64], path: &str) -> Result<Vec<i64>, Fail> {
    let mut out = Vec::new();
    flatten(v, dims, path, &mut out)?;
    Ok(out)
}

fn flatten(v: &Value, dims: &[u64], path: &str, out: &mut Vec<i64>) -> Result<(), Fail> {
    match dims.split_first() {
        None => {
            out.push(i64_number(v, path)?);
            Ok(())
        }
        Some((&n, rest)) => {
            let items = array(v, path)?;
            if items.len() as u64 != n {
                return Err(format!("{path}: {} entries where {n} are needed", items.len()));
            }
            items
                .iter()
                .enumerate()
                .try_for_each(|(i, x)| flatten(x, rest, &format!("{path}[{i}]"), out))
        }
    }
}
