//! Reading a set's JSON files (the forms §13 lowers): members, integers and nested arrays, each
//! with the reason a value is refused. Every reader works on the parsed document, so nothing is
//! allocated beyond the values the file itself holds: a declared dimension is compared with an
//! array's length, never used to size a buffer.
//!
//! A JSON number is an integer of this reading when `serde_json` holds it as an integer (`i64` or
//! `u64`); a fraction or an exponent (`1.0`, `1e3`) is not an integer, and an integer past `u64` is
//! past every range a form allows, so both are refused like any value out of range.

use serde_json::{Map, Value};

/// Why a set is refused: for people only; the code is the capability's.
pub type Why = String;

pub type R<T> = Result<T, Why>;

pub fn refuse<T>(why: impl Into<String>) -> R<T> {
    Err(why.into())
}

/// A file's bytes as one JSON document.
pub fn parse(bytes: &[u8], file: &str) -> R<Value> {
    serde_json::from_slice(bytes).map_err(|e| format!("{file}: not JSON: {e}"))
}

pub fn object<'a>(v: &'a Value, what: &str) -> R<&'a Map<String, Value>> {
    v.as_object().ok_or_else(|| format!("{what}: not an object"))
}

pub fn array<'a>(v: &'a Value, what: &str) -> R<&'a Vec<Value>> {
    v.as_array().ok_or_else(|| format!("{what}: not an array"))
}

/// A member that must be present.
pub fn member<'a>(m: &'a Map<String, Value>, key: &str, what: &str) -> R<&'a Value> {
    m.get(key).ok_or_else(|| format!("{what}.{key}: missing"))
}

/// A JSON integer, exactly, or `None` for anything else (a fraction, a string, a value past `u64`).
pub fn as_int(v: &Value) -> Option<i128> {
    match v {
        Value::Number(n) => n.as_i64().map(i128::from).or_else(|| n.as_u64().map(i128::from)),
        _ => None,
    }
}

/// An integer in `[lo, hi]`.
pub fn int_in(v: &Value, lo: i128, hi: i128, what: &str) -> R<i128> {
    match as_int(v) {
        Some(x) if (lo..=hi).contains(&x) => Ok(x),
        Some(x) => refuse(format!("{what}: {x} is outside [{lo}, {hi}]")),
        None => refuse(format!("{what}: not an integer")),
    }
}

/// A member that must be an integer in `[lo, hi]`.
pub fn int_member(m: &Map<String, Value>, key: &str, lo: i128, hi: i128, what: &str) -> R<i128> {
    int_in(member(m, key, what)?, lo, hi, &format!("{what}.{key}"))
}

/// A member that may be absent (then `default`), else an integer in `[lo, hi]`.
pub fn int_or(m: &Map<String, Value>, key: &str, default: i128, lo: i128, hi: i128, what: &str) -> R<i128> {
    match m.get(key) {
        None => Ok(default),
        Some(v) => int_in(v, lo, hi, &format!("{what}.{key}")),
    }
}

/// An array of integers nested exactly as `dims` (row-major, the last dimension innermost), each
/// in `[lo, hi]`. `dims` may be large: each level is compared with the array's own length first.
pub fn nested(v: &Value, dims: &[u64], lo: i128, hi: i128, what: &str) -> R<Vec<i64>> {
    let mut out = Vec::new();
    nested_into(v, dims, lo, hi, what, &mut out)?;
    Ok(out)
}

fn nested_into(v: &Value, dims: &[u64], lo: i128, hi: i128, what: &str, out: &mut Vec<i64>) -> R<()> {
    let Some((&d, rest)) = dims.split_first() else {
        let x = int_in(v, lo, hi, what)?;
        out.push(x as i64);
        return Ok(());
    };
    let a = array(v, what)?;
    if a.len() as u64 != d {
        return refuse(format!("{what}: {} entries, not {d}", a.len()));
    }
    for (i, x) in a.iter().enumerate() {
        nested_into(x, rest, lo, hi, &format!("{what}[{i}]"), out)?;
    }
    Ok(())
}

/// A flat array of integers, each in `[lo, hi]`.
pub fn flat_row(v: &Value, lo: i128, hi: i128, what: &str) -> R<Vec<i64>> {
    array(v, what)?
        .iter()
        .enumerate()
        .map(|(i, x)| int_in(x, lo, hi, &format!("{what}[{i}]")).map(|x| x as i64))
        .collect()
}

/// Every integer of an array, flattened in order through any nesting, each in `[lo, hi]`.
pub fn flat(v: &Value, lo: i128, hi: i128, what: &str) -> R<Vec<i64>> {
    let mut out = Vec::new();
    flat_into(v, lo, hi, what, &mut out)?;
    Ok(out)
}

fn flat_into(v: &Value, lo: i128, hi: i128, what: &str, out: &mut Vec<i64>) -> R<()> {
    for (i, x) in array(v, what)?.iter().enumerate() {
        if x.is_array() {
            flat_into(x, lo, hi, &format!("{what}[{i}]"), out)?;
        } else {
            out.push(int_in(x, lo, hi, &format!("{what}[{i}]"))? as i64);
        }
    }
    Ok(())
}

/// `i64`'s range as `i128` bounds.
pub const I64: (i128, i128) = (i64::MIN as i128, i64::MAX as i128);
/// `i32`'s.
pub const I32: (i128, i128) = (i32::MIN as i128, i32::MAX as i128);
/// `i16`'s.
pub const I16: (i128, i128) = (i16::MIN as i128, i16::MAX as i128);
/// The values a `u32` field holds.
pub const U32: (i128, i128) = (0, u32::MAX as i128);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_are_json_integers_only() {
        let v: Value =
            serde_json::from_str("[1, -2, 1.0, 1e3, \"4\", 18446744073709551615, 18446744073709551616]").unwrap();
        let a = v.as_array().unwrap();
        assert_eq!(as_int(&a[0]), Some(1));
        assert_eq!(as_int(&a[1]), Some(-2));
        assert_eq!(as_int(&a[2]), None);
        assert_eq!(as_int(&a[3]), None);
        assert_eq!(as_int(&a[4]), None);
        assert_eq!(as_int(&a[5]), Some(u64::MAX as i128));
        assert_eq!(as_int(&a[6]), None);
    }

    #[test]
    fn nesting_is_exact_and_huge_dimensions_allocate_nothing() {
        let v: Value = serde_json::from_str("[[1,2,3],[4,5,6]]").unwrap();
        assert_eq!(nested(&v, &[2, 3], -9, 9, "w").unwrap(), [1, 2, 3, 4, 5, 6]);
        assert!(nested(&v, &[3, 2], -9, 9, "w").is_err());
        assert!(nested(&v, &[2, 3, 1], -9, 9, "w").is_err());
        assert!(nested(&v, &[u64::MAX, 3], -9, 9, "w").is_err());
        assert!(nested(&v, &[2, 3], 2, 9, "w").is_err());
        assert_eq!(flat(&v, 0, 9, "f").unwrap(), [1, 2, 3, 4, 5, 6]);
    }
}
