//! Reading request lines: each accessor names the field it reads, so that a bad
//! line is reported as `line N: <field>: <what is wrong>`.

use crate::canon;
use crate::plan::Shape;
use crate::tensor::Tensor;
use num_bigint::BigInt;
use serde_json::{Map, Value, json};

pub type Fail = String;

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
