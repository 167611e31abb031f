//! What every request reader shares (docs/protocol.md): a line that breaks its form is a request
//! error `<field>: <what is wrong>`, never a refusal.

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
