//! What every request reader shares (docs/protocol.md): a line that breaks its form is a request
//! error `<field>: <what is wrong>`, never a refusal. Every filler returns a line's outcome as a
//! [`LineError`] or the filled line, and [`fill_lines`] is the loop both `fill` commands run.

use crate::canon;
use crate::ops::Bug;
use serde_json::{Map, Value};

/// A request error: `<field>: <what is wrong>`.
pub type Bad = String;

pub fn bad<T>(field: &str, what: &str) -> Result<T, Bad> {
    Err(format!("{field}: {what}"))
}

/// The path of member `k` of `field` (`k` itself at the top).
pub fn at(field: &str, k: &str) -> String {
    if field.is_empty() {
        k.to_string()
    } else {
        format!("{field}.{k}")
    }
}

/// The members of an object, checked: none unknown, none missing.
pub fn members<'a>(
    v: &'a Value,
    field: &str,
    required: &[&str],
    optional: &[&str],
) -> Result<&'a Map<String, Value>, Bad> {
    let Some(m) = v.as_object() else {
        return bad(if field.is_empty() { "line" } else { field }, "not an object");
    };
    for k in m.keys() {
        if !required.contains(&k.as_str()) && !optional.contains(&k.as_str()) {
            return bad(&at(field, k), "a member the form does not have");
        }
    }
    for k in required {
        if !m.contains_key(*k) {
            return bad(&at(field, k), "missing");
        }
    }
    Ok(m)
}

pub fn array<'a>(v: &'a Value, field: &str) -> Result<&'a Vec<Value>, Bad> {
    v.as_array().map_or_else(|| bad(field, "not an array"), Ok)
}

pub fn string<'a>(v: &'a Value, field: &str) -> Result<&'a str, Bad> {
    v.as_str().map_or_else(|| bad(field, "not a string"), Ok)
}

/// A canonical integer string (§14.1), as it is.
pub fn int_str<'a>(v: &'a Value, field: &str) -> Result<&'a str, Bad> {
    match v.as_str() {
        Some(s) if canon::is_canonical_int(s) => Ok(s),
        Some(_) => bad(field, "not a canonical integer string"),
        None => bad(field, "not an integer string"),
    }
}

/// A tensor's `shape`: three canonical dimensions, each below 2^64 (docs/protocol.md, graph vectors).
pub fn shape(v: &Value, field: &str) -> Result<[u64; 3], Bad> {
    let dims = array(v, field)?;
    if dims.len() != 3 {
        return bad(field, "not three dimensions");
    }
    let mut shape = [0u64; 3];
    for (i, d) in dims.iter().enumerate() {
        let f = format!("{field}[{i}]");
        shape[i] = canon::parse_u64(int_str(d, &f)?).map_or_else(|| bad(&f, "not a dimension below 2^64"), Ok)?;
    }
    Ok(shape)
}

/// What went wrong with one line.
pub enum LineError {
    /// The request is malformed.
    Bad(String),
    /// The checker found a bug in itself.
    Bug(String),
}

impl From<Bug> for LineError {
    fn from(b: Bug) -> Self {
        LineError::Bug(b.0)
    }
}

/// Fills every line of `input` with `fill_line` into `out`; returns the number of bad lines,
/// after reporting each on `err` as `line N: …` (a line that is not UTF-8 is one).
pub fn fill_lines(
    input: &[u8],
    out: &mut String,
    err: &mut dyn FnMut(String),
    fill_line: &dyn Fn(&str) -> Result<String, LineError>,
) -> usize {
    if input.is_empty() {
        return 0;
    }
    let body = input.strip_suffix(b"\n").unwrap_or(input);
    let mut bad_lines = 0;
    for (n, line) in body.split(|&b| b == b'\n').enumerate() {
        let result = match std::str::from_utf8(line) {
            Ok(line) => fill_line(line),
            Err(_) => Err(LineError::Bad("not JSON: not UTF-8".into())),
        };
        match result {
            Ok(s) => {
                out.push_str(&s);
                out.push('\n');
            }
            Err(LineError::Bad(m)) => {
                bad_lines += 1;
                err(format!("line {}: {m}", n + 1));
            }
            Err(LineError::Bug(m)) => {
                bad_lines += 1;
                err(format!("line {}: checker bug: {m}", n + 1));
            }
        }
    }
    bad_lines
}
