//! Canonical JSON (§8.5's rules, §14.1's line rules): an output value type and its writer, and the
//! reading of canonical integer strings.
//!
//! The writer sorts object members by their keys' bytes when it writes, so a builder may add members
//! in any order. Every integer is written as a JSON string; strings hold printable ASCII only, with
//! `"` and `\` the only escapes.

use std::fmt::Write as _;

/// A JSON value as the canonical writer sees it. Integers are `Str` of their decimal form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum J {
    Null,
    Bool(bool),
    Str(String),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
}

impl J {
    /// An integer, written as a decimal string.
    pub fn int<T: std::fmt::Display>(v: T) -> J {
        J::Str(v.to_string())
    }

    pub fn str(s: &str) -> J {
        J::Str(s.to_string())
    }

    /// An object from `(key, value)` pairs; the writer orders them.
    pub fn obj<K: Into<String>>(members: Vec<(K, J)>) -> J {
        J::Obj(members.into_iter().map(|(k, v)| (k.into(), v)).collect())
    }
}

/// Whether a string can be written canonically: printable ASCII (U+0020–U+007E) only.
pub fn printable(s: &str) -> bool {
    s.bytes().all(|b| (0x20..=0x7e).contains(&b))
}

/// Writes `v` canonically. Fails (with the offending string) when a string or key is not printable
/// ASCII, which §8.5 says cannot be written.
pub fn write(v: &J) -> Result<String, String> {
    let mut out = String::new();
    write_into(v, &mut out)?;
    Ok(out)
}

fn write_str(s: &str, out: &mut String) -> Result<(), String> {
    if !printable(s) {
        return Err(format!("not printable ASCII: {s:?}"));
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

fn write_into(v: &J, out: &mut String) -> Result<(), String> {
    match v {
        J::Null => out.push_str("null"),
        J::Bool(b) => {
            let _ = write!(out, "{b}");
        }
        J::Str(s) => write_str(s, out)?,
        J::Arr(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_into(item, out)?;
            }
            out.push(']');
        }
        J::Obj(members) => {
            let mut sorted: Vec<&(String, J)> = members.iter().collect();
            sorted.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            for pair in sorted.windows(2) {
                if pair[0].0 == pair[1].0 {
                    return Err(format!("duplicate key {:?}", pair[0].0));
                }
            }
            fault!("certificate-key-order", (), last_two_swapped(&mut sorted));
            out.push('{');
            for (i, (k, item)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_str(k, out)?;
                out.push(':');
                write_into(item, out)?;
            }
            out.push('}');
        }
    }
    Ok(())
}

/// `certificate-key-order`: a certificate (an object with a `verdict`) with its last two members
/// in the wrong order.
#[cfg(feature = "mutants")]
fn last_two_swapped(sorted: &mut [&(String, J)]) {
    if sorted.iter().any(|m| m.0 == "verdict") {
        let n = sorted.len();
        sorted.swap(n - 2, n - 1);
    }
}

/// A request integer: exact when it fits i128, otherwise only its side (§4 applies policies by
/// comparison with bounds that fit i64, so a value past i128 behaves as any other value past i64).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReqInt {
    Val(i128),
    Below,
    Above,
}

impl ReqInt {
    /// The value clamped into i128, preserving every comparison with an i64 bound.
    pub fn clamped(self) -> i128 {
        match self {
            ReqInt::Val(v) => v,
            ReqInt::Below => i128::MIN,
            ReqInt::Above => i128::MAX,
        }
    }
}

/// Whether `s` is a canonical decimal integer: `0`, or an optional `-` then a nonzero digit then digits.
pub fn is_canonical_int(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    if digits == "0" {
        return s == "0";
    }
    !digits.starts_with('0')
}

/// Parses a canonical integer string; `None` when it is not canonical.
pub fn parse_int(s: &str) -> Option<ReqInt> {
    if !is_canonical_int(s) {
        return None;
    }
    Some(match s.parse::<i128>() {
        Ok(v) => ReqInt::Val(v),
        Err(_) if s.starts_with('-') => ReqInt::Below,
        Err(_) => ReqInt::Above,
    })
}

/// Parses a canonical non-negative integer below 2^64.
pub fn parse_u64(s: &str) -> Option<u64> {
    if !is_canonical_int(s) || s.starts_with('-') {
        return None;
    }
    s.parse::<u64>().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_sorted_by_bytes_and_integers_are_strings() {
        let v = J::obj(vec![
            ("b", J::int(-5)),
            ("a", J::Arr(vec![J::int(0), J::Bool(true), J::Null])),
            ("B", J::str("x\"y\\")),
        ]);
        assert_eq!(write(&v).unwrap(), r#"{"B":"x\"y\\","a":["0",true,null],"b":"-5"}"#);
    }

    #[test]
    fn unprintable_strings_are_refused() {
        assert!(write(&J::str("a\nb")).is_err());
        assert!(write(&J::str("é")).is_err());
    }

    #[test]
    fn canonical_integers() {
        for ok in [
            "0",
            "1",
            "-1",
            "10",
            "-9223372036854775808",
            "123456789012345678901234567890123456789012",
        ] {
            assert!(is_canonical_int(ok), "{ok}");
        }
        for bad in ["", "-", "-0", "01", "+1", "1.0", " 1", "1e3", "--1", "-01"] {
            assert!(!is_canonical_int(bad), "{bad}");
        }
        assert_eq!(
            parse_int("-99999999999999999999999999999999999999999"),
            Some(ReqInt::Below)
        );
        assert_eq!(
            parse_int("99999999999999999999999999999999999999999"),
            Some(ReqInt::Above)
        );
        assert_eq!(parse_u64("18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64("18446744073709551616"), None);
    }
}
