//! The one walk over two JSON values that the gate's first difference (`compare.rs`), `cargo xtask
//! diff` (`diff.rs`) and the grader (`grade.rs`) share: every place two values differ, in one order
//! (object members by their keys' bytes, array elements by index). Each caller says how it shows
//! them.

use serde_json::Value;
use std::ops::ControlFlow;

/// One step of a path into a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// What [`walk`] calls at each place: its path, and the value on each side.
pub type Visit<'v, 'a> = dyn FnMut(&[Step<'a>], Option<&'a Value>, Option<&'a Value>) -> ControlFlow<()> + 'v;

/// Visits each place `old` and `new` differ, until `visit` breaks: objects member by member, arrays
/// of one length element by element; anything else that differs (a scalar, arrays of different
/// lengths, values of different kinds) is one place. A member on one side only is a place with
/// `None` on the other.
pub fn walk<'a>(old: &'a Value, new: &'a Value, visit: &mut Visit<'_, 'a>) {
    let _ = walk_from(&mut Vec::new(), old, new, None, visit);
}

/// A member left out of a walk: the one named `.1` of the object at the keys `.0`.
pub type Skip<'s> = (&'s [&'s str], &'s str);

/// [`walk`], as if the member `skip` names were absent from both values (when the values at its
/// object's path are objects on both sides, the walk of both with that member removed).
pub fn walk_skipping<'a>(old: &'a Value, new: &'a Value, skip: Option<Skip>, visit: &mut Visit<'_, 'a>) {
    let _ = walk_from(&mut Vec::new(), old, new, skip, visit);
}

fn walk_from<'a>(
    path: &mut Vec<Step<'a>>,
    old: &'a Value,
    new: &'a Value,
    skip: Option<Skip>,
    visit: &mut Visit<'_, 'a>,
) -> ControlFlow<()> {
    if old == new {
        return ControlFlow::Continue(());
    }
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            // The member skipped here, when this is its object.
            let skipped = skip.filter(|(at, _)| {
                at.len() == path.len() && path.iter().zip(at.iter()).all(|(s, k)| *s == Step::Key(k))
            });
            for k in union(a.keys(), b.keys()) {
                if skipped.is_some_and(|(_, member)| k == member) {
                    continue;
                }
                path.push(Step::Key(k));
                let r = match (a.get(k), b.get(k)) {
                    (Some(x), Some(y)) => walk_from(path, x, y, skip, visit),
                    (x, y) => visit(path, x, y),
                };
                path.pop();
                r?;
            }
            ControlFlow::Continue(())
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                path.push(Step::Index(i));
                let r = walk_from(path, x, y, skip, visit);
                path.pop();
                r?;
            }
            ControlFlow::Continue(())
        }
        _ => visit(path, Some(old), Some(new)),
    }
}

/// The keys of two objects, each once, in order: a merge of their sorted keys.
fn union<'a>(
    a: impl Iterator<Item = &'a String>,
    b: impl Iterator<Item = &'a String>,
) -> impl Iterator<Item = &'a String> {
    let (mut a, mut b) = (a.peekable(), b.peekable());
    std::iter::from_fn(move || match (a.peek(), b.peek()) {
        (Some(x), Some(y)) if x < y => a.next(),
        (Some(x), Some(y)) if y < x => b.next(),
        (Some(_), Some(_)) => {
            b.next();
            a.next()
        }
        (Some(_), None) => a.next(),
        (None, _) => b.next(),
    })
}

/// A path as the reports write it: `decodes[0].expect.outputs`; the empty path is `""`.
pub fn render(path: &[Step]) -> String {
    let mut s = String::new();
    for step in path {
        match step {
            Step::Key(k) if s.is_empty() => s.push_str(k),
            Step::Key(k) => s.push_str(&format!(".{k}")),
            Step::Index(i) => s.push_str(&format!("[{i}]")),
        }
    }
    s
}

/// The value at `path` in `root`.
pub fn at<'a>(root: &'a Value, path: &[Step]) -> Option<&'a Value> {
    path.iter().try_fold(root, |v, step| match step {
        Step::Key(k) => v.get(*k),
        Step::Index(i) => v.get(*i),
    })
}

/// A value's JSON as a report shows it: at most 120 bytes, cut at a character with `…`.
pub fn short(v: &Value) -> String {
    // Written only as far as shown: a value may be a tensor of millions of elements.
    let mut head = Head(Vec::new());
    let _ = std::fmt::Write::write_fmt(&mut head, format_args!("{v}"));
    let s = String::from_utf8_lossy(&head.0);
    if s.len() > 120 {
        // Cut at a character boundary: a received value may hold any UTF-8.
        let cut = (0..=117).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0);
        format!("{}…", &s[..cut])
    } else {
        s.into_owned()
    }
}

/// A writer that keeps the first [`Head::KEEP`] bytes written to it, then refuses more.
struct Head(Vec<u8>);

impl Head {
    /// Enough to tell a value longer than [`short`] shows.
    const KEEP: usize = 124;
}

impl std::fmt::Write for Head {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let room = Head::KEEP.saturating_sub(self.0.len());
        if room == 0 {
            return Err(std::fmt::Error);
        }
        self.0.extend_from_slice(&s.as_bytes()[..s.len().min(room)]);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn places(a: &Value, b: &Value) -> Vec<String> {
        let mut out = Vec::new();
        walk(a, b, &mut |p, x, y| {
            out.push(format!("{} {x:?} {y:?}", render(p)));
            ControlFlow::Continue(())
        });
        out
    }

    #[test]
    fn every_place_in_key_then_index_order() {
        let a = json!({"b": ["1", "2"], "a": {"x": 1}, "c": [1]});
        let b = json!({"b": ["1", "3"], "a": {"y": 1}, "c": [1, 2]});
        assert_eq!(
            places(&a, &b),
            [
                "a.x Some(Number(1)) None",
                "a.y None Some(Number(1))",
                "b[1] Some(String(\"2\")) Some(String(\"3\"))",
                "c Some(Array [Number(1)]) Some(Array [Number(1), Number(2)])",
            ]
        );
        assert_eq!(at(&b, &[Step::Key("b"), Step::Index(1)]), Some(&json!("3")));
        assert!(places(&a, &a).is_empty());
    }
}
