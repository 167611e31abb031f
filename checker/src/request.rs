//! What every request reader shares (docs/protocol.md): a line that breaks its form is a request
//! error `<field>: <what is wrong>`, never a refusal. Every filler returns a line's outcome as a
//! [`LineError`] or the filled line, and [`fill_lines`] is the loop both `fill` commands run.

use crate::canon;
use crate::ops::Bug;
use serde_json::{Map, Value};
use std::io::{BufRead, Write};

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

/// The longest request line a `fill` reads (docs/protocol.md, "Line length"): the `2^26` elements of
/// the cap (integer-operators §3) at 24 bytes each, a quoted 64-bit integer and its comma, and 1 MiB
/// besides.
pub const MAX_LINE: usize = (1 << 26) * 24 + (1 << 20);

/// A filler of one request line.
pub type LineFiller<'a> = &'a dyn Fn(&str) -> Result<String, LineError>;

/// Fills every line of `input` with `fill_line`, writing each filled line to `out` as it is made;
/// returns the number of bad lines, after reporting each on `err` as `line N: …` (a line that is
/// not UTF-8 is one, and so is a line past `max_line` bytes, of which no more than `max_line` are
/// held).
pub fn fill_lines(
    input: &mut dyn BufRead,
    out: &mut dyn Write,
    err: &mut dyn FnMut(String),
    max_line: usize,
    fill_line: LineFiller,
) -> std::io::Result<usize> {
    let mut bad_lines = 0;
    let mut line = Vec::new();
    let mut n = 0;
    while let Some(whole) = read_line(input, &mut line, max_line)? {
        n += 1;
        let result = match (whole, std::str::from_utf8(&line)) {
            (false, _) => Err(LineError::Bad(format!("longer than {max_line} bytes"))),
            (true, Ok(line)) => fill_line(line),
            (true, Err(_)) => Err(LineError::Bad("not JSON: not UTF-8".into())),
        };
        match result {
            Ok(s) => {
                out.write_all(s.as_bytes())?;
                out.write_all(b"\n")?;
            }
            Err(LineError::Bad(m)) => {
                bad_lines += 1;
                err(format!("line {n}: {m}"));
            }
            Err(LineError::Bug(m)) => {
                bad_lines += 1;
                err(format!("line {n}: checker bug: {m}"));
            }
        }
    }
    out.flush()?;
    Ok(bad_lines)
}

/// [`fill_lines`] over bytes in memory, into a string.
pub fn fill_bytes(input: &[u8], out: &mut String, err: &mut dyn FnMut(String), fill_line: LineFiller) -> usize {
    let mut written = Vec::new();
    let bad = fill_lines(&mut { input }, &mut written, err, MAX_LINE, fill_line).expect("memory never fails");
    out.push_str(&String::from_utf8(written).expect("filled lines are text"));
    bad
}

/// Reads the next line into `line`, without its line feed: `Some(true)` when it is whole,
/// `Some(false)` when it is longer than `max` bytes (then `line` is empty and the rest of it was
/// consumed chunk by chunk, never held), `None` at the end of the input. A last line without a
/// line feed is a line.
fn read_line(input: &mut dyn BufRead, line: &mut Vec<u8>, max: usize) -> std::io::Result<Option<bool>> {
    line.clear();
    let (mut started, mut over) = (false, false);
    loop {
        let buf = input.fill_buf()?;
        if buf.is_empty() {
            return Ok(started.then_some(!over));
        }
        started = true;
        let end = buf.iter().position(|&b| b == b'\n');
        let chunk = &buf[..end.unwrap_or(buf.len())];
        if !over && line.len() + chunk.len() > max {
            over = true;
            line.clear();
        }
        if !over {
            line.extend_from_slice(chunk);
        }
        let used = chunk.len() + usize::from(end.is_some());
        input.consume(used);
        if end.is_some() {
            return Ok(Some(!over));
        }
    }
}
