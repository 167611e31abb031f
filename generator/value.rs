//! Reading the corpus's readable JSON: integers as JSON numbers or as short
//! expressions (`"2^63-1"`, `"-2^31"`), fields named by their path in errors. Objects, members,
//! arrays and strings are read as the oracle reads a request's (`wai_oracle::json`); the integers
//! are the corpus's own.

use num_bigint::BigInt;
use num_traits::ToPrimitive;
use serde_json::Value;
pub use wai_oracle::json::{Fail, array, member, object, only, string};

/// An integer: a JSON integer, or a string of terms joined by `+` and `-`, each a
/// decimal number or `2^k`, with an optional leading `-`.
pub fn int(v: &Value, path: &str) -> Result<BigInt, Fail> {
    match v {
        Value::Number(n) => n
            .as_i64()
            .map(BigInt::from)
            .or_else(|| n.as_u64().map(BigInt::from))
            .ok_or_else(|| format!("{path}: {n} is not an integer")),
        Value::String(s) => expr(s).ok_or_else(|| format!("{path}: {s:?} is not an integer expression")),
        other => Err(format!("{path}: {other} is not an integer")),
    }
}

fn expr(s: &str) -> Option<BigInt> {
    let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
    let mut total = BigInt::from(0);
    let mut rest = s.as_str();
    let mut sign = 1;
    if let Some(r) = rest.strip_prefix('-') {
        sign = -1;
        rest = r;
    }
    loop {
        let end = rest.find(['+', '-']).unwrap_or(rest.len());
        let term = &rest[..end];
        let value = match term.split_once('^') {
            Some(("2", k)) => BigInt::from(1) << k.parse::<u32>().ok()?,
            Some(_) => return None,
            None if !term.is_empty() && term.bytes().all(|b| b.is_ascii_digit()) => term.parse().ok()?,
            None => return None,
        };
        total += value * sign;
        if end == rest.len() {
            return Some(total);
        }
        sign = if rest.as_bytes()[end] == b'+' { 1 } else { -1 };
        rest = &rest[end + 1..];
    }
}

pub fn i64_(v: &Value, path: &str) -> Result<i64, Fail> {
    int(v, path)?
        .to_i64()
        .ok_or_else(|| format!("{path}: does not fit i64"))
}

pub fn u64_(v: &Value, path: &str) -> Result<u64, Fail> {
    int(v, path)?
        .to_u64()
        .ok_or_else(|| format!("{path}: does not fit u64"))
}

pub fn u32_(v: &Value, path: &str) -> Result<u32, Fail> {
    int(v, path)?
        .to_u32()
        .ok_or_else(|| format!("{path}: does not fit u32"))
}

pub fn u8_(v: &Value, path: &str) -> Result<u8, Fail> {
    int(v, path)?.to_u8().ok_or_else(|| format!("{path}: does not fit u8"))
}

/// A pair `[a, b]` of u32 (kernel sizes, strides, paddings).
pub fn pair(v: Option<&Value>, default: (u32, u32), path: &str) -> Result<(u32, u32), Fail> {
    match v {
        None => Ok(default),
        Some(v) => match array(v, path)? {
            [a, b] => Ok((u32_(a, &format!("{path}[0]"))?, u32_(b, &format!("{path}[1]"))?)),
            _ => Err(format!("{path}: not a pair")),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn expressions() {
        let e = |s: &str| int(&json!(s), "x").unwrap();
        assert_eq!(e("2^63-1"), BigInt::from(i64::MAX));
        assert_eq!(e("-2^63"), BigInt::from(i64::MIN));
        assert_eq!(e("-2^31+1"), BigInt::from(-(1i64 << 31) + 1));
        assert_eq!(e("12"), BigInt::from(12));
        assert_eq!(e("2^16+2^15-3"), BigInt::from(65536 + 32768 - 3));
        assert!(int(&json!("3^2"), "x").is_err());
        assert!(int(&json!("2^"), "x").is_err());
        assert!(int(&json!(1.5), "x").is_err());
    }
}
