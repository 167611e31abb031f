//! A JSON line with its `data` arrays held apart. A scale answer written out holds up to hundreds of
//! megabytes of `data` (docs/protocol.md, the scale tier); parsed into `serde_json::Value`s that is
//! about 80 bytes an element. [`split`] parses the rest of the line and leaves each `data` array as
//! a slice of the line's bytes, so that an answer costs its line and little more.

use serde_json::Value;

/// The member that stands for a `data` array in the skeleton: `{"\u0000array": k}`, `k` its index.
const MARK: &str = "\u{0}array";

/// A line's skeleton and its `data` arrays, each the bytes `[…]` as the line holds them.
pub struct Split<'a> {
    pub skeleton: Value,
    arrays: Vec<&'a [u8]>,
}

impl<'a> Split<'a> {
    /// The bytes of the `data` array a skeleton tensor (`{"data", "shape"}`) stands for.
    pub fn data(&self, tensor: &Value) -> Option<&'a [u8]> {
        let k = tensor.get("data")?.get(MARK)?.as_u64()?;
        self.arrays.get(usize::try_from(k).ok()?).copied()
    }
}

/// Parses `line` with every array that is the value of a `data` member held apart. A `data` array
/// holds strings only (anything nested is not one, and is parsed as it is).
pub fn split(line: &[u8]) -> Result<Split<'_>, serde_json::Error> {
    let mut skeleton = Vec::with_capacity(line.len().min(1 << 20));
    let mut arrays = Vec::new();
    let mut i = 0;
    while i < line.len() {
        match line[i] {
            b'"' => {
                let end = string_end(line, i);
                skeleton.extend_from_slice(&line[i..end]);
                i = end;
            }
            b'[' if after_data_key(&skeleton) => match flat_array_end(line, i) {
                Some(end) => {
                    skeleton.extend_from_slice(format!("{{\"\\u0000array\":{}}}", arrays.len()).as_bytes());
                    arrays.push(&line[i..end]);
                    i = end;
                }
                None => {
                    skeleton.push(b'[');
                    i += 1;
                }
            },
            b => {
                skeleton.push(b);
                i += 1;
            }
        }
    }
    Ok(Split {
        // `Value`'s `FromStr` is serde_json's own, optimized, parse (xtask builds unoptimized);
        // bytes that are not UTF-8 are parsed as bytes, for the same error.
        skeleton: match std::str::from_utf8(&skeleton) {
            Ok(text) => text.parse()?,
            Err(_) => serde_json::from_slice(&skeleton)?,
        },
        arrays,
    })
}

/// The index just past the string that starts at `start` (or the line's end).
fn string_end(line: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < line.len() {
        match line[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    line.len()
}

/// Whether what precedes is the key `"data"` and its colon.
fn after_data_key(skeleton: &[u8]) -> bool {
    let s = skeleton.trim_ascii_end();
    s.strip_suffix(b":")
        .is_some_and(|s| s.trim_ascii_end().ends_with(b"\"data\""))
}

/// The index just past the array that starts at `start` when it holds no array or object.
fn flat_array_end(line: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    while i < line.len() {
        match line[i] {
            b'"' => i = string_end(line, i),
            b']' => return Some(i + 1),
            b'[' | b'{' => return None,
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_arrays_are_held_apart_and_nothing_else() {
        let line = br#"{"decodes":[{"expect":{"outputs":[{"data":["1","-2"],"shape":["1","1","2"]}]},"inputs":[{"data":[],"shape":["0","1","1"]}]}],"id":"data\":[","list":["3"]}"#;
        let s = split(line).unwrap();
        let out = &s.skeleton["decodes"][0]["expect"]["outputs"][0];
        assert_eq!(s.data(out), Some(&br#"["1","-2"]"#[..]));
        assert_eq!(s.data(&s.skeleton["decodes"][0]["inputs"][0]), Some(&b"[]"[..]));
        // A string that looks like the key, and an array under another key, stay as they are.
        assert_eq!(s.skeleton["id"], "data\":[");
        assert_eq!(s.skeleton["list"], serde_json::json!(["3"]));
    }

    #[test]
    fn a_nested_data_array_is_parsed_as_it_is() {
        let s = split(br#"{"data":[["1"]]}"#).unwrap();
        assert_eq!(s.skeleton["data"], serde_json::json!([["1"]]));
        assert!(split(b"{\"data\":[\"1\"").is_err());
    }
}
