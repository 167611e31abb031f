//! Comparing two trees of canonical files record by record, and naming the first
//! difference of each file as `file:line id field: committed vs recomputed`.

use crate::jsondiff::{self, short};
use serde_json::Value;
use std::ops::ControlFlow;
use std::path::Path;

/// Every file under `dir`, as paths relative to it with `/` separators, sorted.
pub fn files(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(root, &p, out);
        } else if let Ok(rel) = p.strip_prefix(root) {
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
}

/// The first difference between two files' bytes, described for a reviewer; `None` when
/// they are identical.
pub fn first_difference(name: &str, committed: &[u8], recomputed: &[u8]) -> Option<String> {
    if committed == recomputed {
        return None;
    }
    let (a, b) = (String::from_utf8_lossy(committed), String::from_utf8_lossy(recomputed));
    let (la, lb): (Vec<&str>, Vec<&str>) = (a.split_inclusive('\n').collect(), b.split_inclusive('\n').collect());
    for (n, (x, y)) in la.iter().zip(&lb).enumerate() {
        if x != y {
            return Some(format!("{name}:{} {}", n + 1, describe(x, y)));
        }
    }
    Some(format!("{name}: {} lines committed, {} recomputed", la.len(), lb.len()))
}

/// `id field: committed vs recomputed` for two differing lines.
fn describe(committed: &str, recomputed: &str) -> String {
    match (
        serde_json::from_str::<Value>(committed),
        serde_json::from_str::<Value>(recomputed),
    ) {
        (Ok(x), Ok(y)) => {
            let id = x.get("id").and_then(Value::as_str).unwrap_or("?").to_string();
            let (path, cx, cy) = field(&x, &y).unwrap_or_else(|| ("(bytes)".into(), Value::Null, Value::Null));
            format!("{id} {path}: committed {} vs recomputed {}", short(&cx), short(&cy))
        }
        _ => format!(
            "(not JSON): committed {:?} vs recomputed {:?}",
            clip(committed),
            clip(recomputed)
        ),
    }
}

/// The path of the first differing field, with both values (`null` for an absent member).
fn field(x: &Value, y: &Value) -> Option<(String, Value, Value)> {
    let mut first = None;
    jsondiff::walk(x, y, &mut |path, a, b| {
        let path = if path.is_empty() {
            "(line)".into()
        } else {
            jsondiff::render(path)
        };
        let value = |v: Option<&Value>| v.cloned().unwrap_or(Value::Null);
        first = Some((path, value(a), value(b)));
        ControlFlow::Break(())
    });
    first
}

fn clip(s: &str) -> String {
    let s = s.trim_end();
    if s.chars().count() > 120 {
        format!("{}…", s.chars().take(120).collect::<String>())
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_the_line_the_id_and_the_field() {
        let a = "{\"id\":\"a\",\"x\":\"1\"}\n{\"decodes\":[{\"expect\":{\"refuse\":\"too_large\"}}],\"id\":\"b\"}\n";
        let b = "{\"id\":\"a\",\"x\":\"1\"}\n{\"decodes\":[{\"expect\":{\"refuse\":\"field_range\"}}],\"id\":\"b\"}\n";
        assert_eq!(
            first_difference("f.jsonl", a.as_bytes(), b.as_bytes()).unwrap(),
            "f.jsonl:2 b decodes[0].expect.refuse: committed \"too_large\" vs recomputed \"field_range\""
        );
        assert_eq!(first_difference("f", a.as_bytes(), a.as_bytes()), None);
    }
}
