//! Reading a parameter set's JSON (integers are JSON numbers there), with the member's
//! path in every error. The caller turns an error into its lowering's refusal code.

use serde_json::{Map, Value};

pub type Fail = String;

pub fn object<'a>(v: &'a Value, path: &str) -> Result<&'a Map<String, Value>, Fail> {
    v.as_object().ok_or_else(|| format!("{path}: not an object"))
}

pub fn array<'a>(v: &'a Value, path: &str) -> Result<&'a [Value], Fail> {
    v.as_array()
        .map(Vec::as_slice)
        .ok_or_else(|| format!("{path}: not an array"))
}

pub fn member<'a>(o: &'a Map<String, Value>, key: &str, path: &str) -> Result<&'a Value, Fail> {
    o.get(key).ok_or_else(|| format!("{path}.{key}: missing"))
}

/// A JSON integer that fits i64.
pub fn int(v: &Value, path: &str) -> Result<i64, Fail> {
    v.as_i64()
        .ok_or_else(|| format!("{path}: {v} is not an integer that fits i64"))
}

/// A JSON integer that fits u64.
pub fn uint(v: &Value, path: &str) -> Result<u64, Fail> {
    v.as_u64()
        .ok_or_else(|| format!("{path}: {v} is not a non-negative integer below 2^64"))
}

/// An optional non-negative member, `default` when absent.
pub fn uint_or(o: &Map<String, Value>, key: &str, default: u64, path: &str) -> Result<u64, Fail> {
    o.get(key).map_or(Ok(default), |v| uint(v, &format!("{path}.{key}")))
}

/// A nested array of integers, flattened in row-major order, with its dimensions checked
/// against `dims`.
pub fn tensor(v: &Value, dims: &[u64], path: &str) -> Result<Vec<i64>, Fail> {
    let mut out = Vec::new();
    flatten(v, dims, path, &mut out)?;
    Ok(out)
}

fn flatten(v: &Value, dims: &[u64], path: &str, out: &mut Vec<i64>) -> Result<(), Fail> {
    match dims.split_first() {
        None => {
            out.push(int(v, path)?);
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
