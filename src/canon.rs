//! Canonical JSON (§8.5 rules, §14.1 line rules): the one writer for every
//! committed byte.
//!
//! No whitespace; object members in ascending order of their keys' bytes;
//! strings of printable ASCII with only `\"` and `\\` escaped; every integer a
//! decimal string (so a JSON number never occurs); `true`, `false`, `null`.

use num_bigint::BigInt;
use serde_json::{Map, Value};
use std::fmt;

/// Why a value has no canonical form.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CanonError {
    /// A JSON number: every integer is written as a string.
    Number(String),
    /// A character outside U+0020–U+007E.
    NotPrintableAscii(String),
}

impl fmt::Display for CanonError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CanonError::Number(n) => {
                write!(f, "the number {n} is not canonical: integers are strings")
            }
            CanonError::NotPrintableAscii(s) => write!(f, "the string {s:?} holds a character outside printable ASCII"),
        }
    }
}

impl std::error::Error for CanonError {}

/// The canonical bytes of `value`, with no final newline (a certificate file).
pub fn to_string(value: &Value) -> Result<String, CanonError> {
    let mut out = String::new();
    write_value(value, &mut out)?;
    Ok(out)
}

/// One JSON Lines line: the canonical bytes followed by one line feed.
pub fn to_line(value: &Value) -> Result<String, CanonError> {
    let mut out = to_string(value)?;
    out.push('\n');
    Ok(out)
}

/// A readable rendering for review (snapshots, diffs): the canonical member order and
/// values, indented two spaces per level, one member or element per line. Never committed
/// as a vector.
pub fn to_pretty(value: &Value) -> Result<String, CanonError> {
    let mut out = String::new();
    write_pretty(value, 0, &mut out)?;
    Ok(out)
}

fn write_pretty(value: &Value, depth: usize, out: &mut String) -> Result<(), CanonError> {
    let indent = |n: usize, out: &mut String| out.extend(std::iter::repeat_n("  ", n));
    match value {
        Value::Array(items) if !items.is_empty() => {
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                indent(depth + 1, out);
                write_pretty(item, depth + 1, out)?;
                out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
            }
            indent(depth, out);
            out.push(']');
        }
        Value::Object(members) if !members.is_empty() => {
            let mut keys: Vec<&String> = members.keys().collect();
            keys.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
            out.push_str("{\n");
            for (i, key) in keys.iter().enumerate() {
                indent(depth + 1, out);
                write_string(key, out)?;
                out.push_str(": ");
                write_pretty(&members[*key], depth + 1, out)?;
                out.push_str(if i + 1 < keys.len() { ",\n" } else { "\n" });
            }
            indent(depth, out);
            out.push('}');
        }
        other => write_value(other, out)?,
    }
    Ok(())
}

fn write_value(value: &Value, out: &mut String) -> Result<(), CanonError> {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => return Err(CanonError::Number(n.to_string())),
        Value::String(s) => write_string(s, out)?,
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(item, out)?;
            }
            out.push(']');
        }
        Value::Object(members) => write_object(members, out)?,
    }
    Ok(())
}

fn write_object(members: &Map<String, Value>, out: &mut String) -> Result<(), CanonError> {
    // Sorted here, whatever order the map keeps: ascending order of the keys' bytes.
    let mut keys: Vec<&String> = members.keys().collect();
    keys.sort_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    out.push('{');
    for (i, key) in keys.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_string(key, out)?;
        out.push(':');
        write_value(&members[key], out)?;
    }
    out.push('}');
    Ok(())
}

fn write_string(s: &str, out: &mut String) -> Result<(), CanonError> {
    if !s.bytes().all(|b| (0x20..=0x7e).contains(&b)) {
        return Err(CanonError::NotPrintableAscii(s.to_string()));
    }
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out.push('"');
    Ok(())
}

/// An integer as its canonical JSON value: a decimal string.
pub fn int(v: impl Into<BigInt>) -> Value {
    Value::String(v.into().to_string())
}

/// A canonical integer string, parsed: decimal digits, no leading zero, a `-`
/// only before a nonzero value. `None` for anything else.
pub fn parse_int(s: &str) -> Option<BigInt> {
    let digits = s.strip_prefix('-').unwrap_or(s);
    let canonical = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'))
        && !(s.starts_with('-') && digits == "0");
    if canonical { s.parse().ok() } else { None }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn members_sort_by_bytes_and_nothing_is_spaced() {
        let v = json!({"b": "1", "a": [true, false, null], "B": {"z": "-3", "aa": "0"}});
        assert_eq!(
            to_string(&v).unwrap(),
            r#"{"B":{"aa":"0","z":"-3"},"a":[true,false,null],"b":"1"}"#
        );
        assert_eq!(to_line(&json!([])).unwrap(), "[]\n");
    }

    #[test]
    fn only_two_escapes_and_only_printable_ascii() {
        assert_eq!(to_string(&json!("a\"b\\c")).unwrap(), r#""a\"b\\c""#);
        assert!(to_string(&json!("tab\there")).is_err());
        assert!(to_string(&json!("é")).is_err());
        assert!(to_string(&json!(1)).is_err());
    }

    #[test]
    fn integers_are_strings_without_leading_zeros() {
        assert_eq!(int(0), json!("0"));
        assert_eq!(int(-12), json!("-12"));
        assert_eq!(parse_int("0"), Some(BigInt::from(0)));
        assert_eq!(
            parse_int("-170141183460469231731687303715884105728").unwrap(),
            -(BigInt::from(1) << 127u32)
        );
        for bad in ["", "-", "-0", "01", "+1", "1.0", " 1", "1e3", "0x10"] {
            assert_eq!(parse_int(bad), None, "{bad:?}");
        }
    }
}
