//! `cargo xtask diff REV`: what changed in `ops-conformance/` since a git revision, record by
//! record.
//!
//! The old files are read with `git show REV:path`, the new ones from the working tree. Every
//! file added, removed or changed is named; for a JSON Lines file, the records added and removed
//! (by id) and, for each changed record, its id and the paths of the changed fields with short
//! old and new values (a long array of scalars is summarised: how many elements differ, and the
//! first). A certificate (or any JSON file) lists its changed fields the same way; any other file
//! is only said to be added, removed or changed.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;
use std::path::Path;
use std::process::Command;
use xtask::jsondiff::{self, Step};

const TREE: &str = "ops-conformance";
/// At most this many field changes are listed per record, and ids per added or removed file.
const MAX_LINES: usize = 12;

pub fn run(root: &Path, rev: &str) -> Result<(), String> {
    print!("{}", report(root, rev)?);
    Ok(())
}

fn git(root: &Path, args: &[&str]) -> Result<Vec<u8>, String> {
    let out = Command::new("git")
        .current_dir(root)
        .args(args)
        .output()
        .map_err(|e| format!("git {}: {e}", args.join(" ")))?;
    if !out.status.success() {
        return Err(format!(
            "git {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(out.stdout)
}

fn nul_separated(bytes: &[u8]) -> BTreeSet<String> {
    bytes
        .split(|b| *b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| String::from_utf8_lossy(p).into_owned())
        .collect()
}

/// The whole report for the tree under `root` against `rev`.
pub fn report(root: &Path, rev: &str) -> Result<String, String> {
    let commit = String::from_utf8_lossy(&git(root, &["rev-parse", "--verify", &format!("{rev}^{{commit}}")])?)
        .trim()
        .to_string();
    // Paths are relative to `root` (`./` in `git show`), so the tree may sit below the repository's top.
    let old = nul_separated(&git(
        root,
        &["ls-tree", "-r", "-z", "--name-only", &commit, "--", TREE],
    )?);
    let new: BTreeSet<String> = xtask::compare::files(&root.join(TREE))
        .into_iter()
        .map(|f| format!("{TREE}/{f}"))
        .collect();
    // Files present in both that git sees as changed in the working tree.
    let touched = nul_separated(&git(
        root,
        &["diff", "--no-renames", "--name-only", "-z", &commit, "--", TREE],
    )?);

    let short = &commit[..commit.len().min(10)];
    let mut out = format!("{TREE}/ since {rev} ({short}), against the working tree\n");
    let mut totals = Totals::default();
    for path in old.union(&new) {
        let name = path.strip_prefix(&format!("{TREE}/")).unwrap_or(path);
        match (old.contains(path), new.contains(path)) {
            (true, false) => {
                let bytes = git(root, &["show", &format!("{commit}:./{path}")])?;
                totals.removed += 1;
                out.push_str(&whole_file('-', "removed", name, &bytes, &mut totals.records_removed));
            }
            (false, true) => {
                let bytes = std::fs::read(root.join(path)).map_err(|e| format!("{path}: {e}"))?;
                totals.added += 1;
                out.push_str(&whole_file('+', "added", name, &bytes, &mut totals.records_added));
            }
            _ if touched.contains(path) => {
                let before = git(root, &["show", &format!("{commit}:./{path}")])?;
                let after = std::fs::read(root.join(path)).map_err(|e| format!("{path}: {e}"))?;
                if before == after {
                    continue;
                }
                totals.changed += 1;
                out.push_str(&changed_file(name, &before, &after, &mut totals));
            }
            _ => {}
        }
    }
    if totals.added + totals.removed + totals.changed == 0 {
        out.push_str("no change\n");
    } else {
        out.push_str(&format!(
            "{} files: {} added, {} removed, {} changed; records: {} added, {} removed, {} changed\n",
            totals.added + totals.removed + totals.changed,
            totals.added,
            totals.removed,
            totals.changed,
            totals.records_added,
            totals.records_removed,
            totals.records_changed
        ));
    }
    Ok(out)
}

#[derive(Default)]
struct Totals {
    added: usize,
    removed: usize,
    changed: usize,
    records_added: usize,
    records_removed: usize,
    records_changed: usize,
}

/// A file added or removed whole: its size, and for JSON Lines its records' ids.
fn whole_file(sign: char, what: &str, name: &str, bytes: &[u8], count: &mut usize) -> String {
    if !name.ends_with(".jsonl") {
        return format!("{sign} {name} ({what}, {} bytes)\n", bytes.len());
    }
    let records = records(&String::from_utf8_lossy(bytes));
    *count += records.len();
    let mut out = format!("{sign} {name} ({what}, {} records)\n", records.len());
    for (id, _) in records.iter().take(MAX_LINES) {
        out.push_str(&format!("    {sign} {id}\n"));
    }
    if records.len() > MAX_LINES {
        out.push_str(&format!("    … and {} more\n", records.len() - MAX_LINES));
    }
    out
}

fn changed_file(name: &str, before: &[u8], after: &[u8], totals: &mut Totals) -> String {
    if name.ends_with(".jsonl") {
        let d = jsonl(&String::from_utf8_lossy(before), &String::from_utf8_lossy(after));
        totals.records_added += d.added;
        totals.records_removed += d.removed;
        totals.records_changed += d.changed;
        return format!("~ {name}: {}\n{}", d.summary(), d.lines);
    }
    if let (Ok(x), Ok(y)) = (
        serde_json::from_slice::<Value>(before),
        serde_json::from_slice::<Value>(after),
    ) {
        let mut out = format!("~ {name} (changed)\n");
        let c = changes(&x, &y);
        if c.is_empty() {
            out.push_str("    (the same JSON value; the bytes differ)\n");
        }
        for line in c {
            out.push_str(&format!("    {line}\n"));
        }
        return out;
    }
    format!("~ {name} (changed, {} → {} bytes)\n", before.len(), after.len())
}

/// The records of a JSON Lines text, in order, by id (`(line N)` for a line without one).
fn records(text: &str) -> Vec<(String, Value)> {
    text.lines()
        .enumerate()
        .map(|(n, line)| match serde_json::from_str::<Value>(line) {
            Ok(v) => {
                let id = v.get("id").and_then(Value::as_str).map(str::to_string);
                (id.unwrap_or_else(|| format!("(line {})", n + 1)), v)
            }
            Err(_) => (format!("(line {}, not JSON)", n + 1), Value::String(line.to_string())),
        })
        .collect()
}

/// How two versions of a JSON Lines file differ, record by record.
pub struct FileDiff {
    pub added: usize,
    pub removed: usize,
    pub changed: usize,
    /// The report's lines, indented, each ending in a line feed.
    pub lines: String,
}

impl FileDiff {
    fn summary(&self) -> String {
        let mut parts = Vec::new();
        for (n, what) in [
            (self.added, "added"),
            (self.removed, "removed"),
            (self.changed, "changed"),
        ] {
            if n > 0 {
                parts.push(format!("{n} {what}"));
            }
        }
        if parts.is_empty() {
            "no record added, removed or changed".into()
        } else {
            format!("{} records", parts.join(", "))
        }
    }
}

/// Records added and removed (by id) and changed (id and field paths), in the new file's order,
/// the removed ones in the old file's.
pub fn jsonl(before: &str, after: &str) -> FileDiff {
    let (old, new) = (records(before), records(after));
    let old_by_id: BTreeMap<&str, &Value> = old.iter().map(|(id, v)| (id.as_str(), v)).collect();
    let new_by_id: BTreeMap<&str, &Value> = new.iter().map(|(id, v)| (id.as_str(), v)).collect();
    let mut d = FileDiff {
        added: 0,
        removed: 0,
        changed: 0,
        lines: String::new(),
    };
    for (id, v) in &new {
        match old_by_id.get(id.as_str()) {
            None => {
                d.added += 1;
                d.lines.push_str(&format!("    + {id}\n"));
            }
            Some(o) if *o != v => {
                d.changed += 1;
                d.lines.push_str(&format!("    ~ {id}\n"));
                for line in changes(o, v) {
                    d.lines.push_str(&format!("        {line}\n"));
                }
            }
            Some(_) => {}
        }
    }
    for (id, _) in &old {
        if !new_by_id.contains_key(id.as_str()) {
            d.removed += 1;
            d.lines.push_str(&format!("    - {id}\n"));
        }
    }
    let kept = |list: &[(String, Value)], other: &BTreeMap<&str, &Value>| -> Vec<String> {
        list.iter()
            .filter(|(id, _)| other.contains_key(id.as_str()))
            .map(|(id, _)| id.clone())
            .collect()
    };
    if kept(&old, &new_by_id) != kept(&new, &old_by_id) {
        d.lines.push_str("    (the records' order changed)\n");
    }
    if d.lines.is_empty() && before != after {
        d.lines.push_str("    (the same records; the bytes differ)\n");
    }
    d
}

/// The changed fields of a record: `path: old → new`, at most `MAX_LINES` of them.
pub fn changes(old: &Value, new: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk_changes("", old, new, &mut out);
    if out.len() > MAX_LINES {
        let more = out.len() - MAX_LINES;
        out.truncate(MAX_LINES);
        out.push(format!("… and {more} more changed fields"));
    }
    out
}

/// The changes between `old` and `new`, their paths under `prefix`. The elements of an array of
/// scalars that differ are one line past three of them; arrays of other values are compared
/// element by element even when their lengths differ.
fn walk_changes(prefix: &str, old: &Value, new: &Value, out: &mut Vec<String>) {
    // The scalar array whose differing elements are being gathered: its path, and theirs.
    let mut gathering: Option<(Vec<Step>, Vec<usize>)> = None;
    let flush = |g: &mut Option<(Vec<Step>, Vec<usize>)>, out: &mut Vec<String>| {
        if let Some((array, differ)) = g.take() {
            let side = |v| {
                jsondiff::at(v, &array)
                    .and_then(Value::as_array)
                    .map_or(&[][..], Vec::as_slice)
            };
            let p = under(prefix, &jsondiff::render(&array));
            elements(&p, side(old), side(new), &differ, out);
        }
    };
    let scalar_array = |v: Option<&Value>| v.and_then(Value::as_array).is_some_and(|a| scalars(a));
    jsondiff::walk(old, new, &mut |steps, a, b| {
        if let [parent @ .., Step::Index(i)] = steps
            && scalar_array(jsondiff::at(old, parent))
            && scalar_array(jsondiff::at(new, parent))
        {
            if gathering.as_ref().is_some_and(|g| g.0 != parent) {
                flush(&mut gathering, out);
            }
            gathering
                .get_or_insert_with(|| (parent.to_vec(), Vec::new()))
                .1
                .push(*i);
            return ControlFlow::Continue(());
        }
        flush(&mut gathering, out);
        let p = under(prefix, &jsondiff::render(steps));
        match (a, b) {
            (Some(x), None) => out.push(format!("{p}: {} → (absent)", short(x))),
            (None, Some(y)) => out.push(format!("{p}: (absent) → {}", short(y))),
            (Some(Value::Array(x)), Some(Value::Array(y))) if scalars(x) && scalars(y) => lengths(&p, x, y, out),
            (Some(Value::Array(x)), Some(Value::Array(y))) => {
                for i in 0..x.len().max(y.len()) {
                    let pi = format!("{p}[{i}]");
                    match (x.get(i), y.get(i)) {
                        (Some(u), Some(v)) => walk_changes(&pi, u, v, out),
                        (Some(u), None) => out.push(format!("{pi}: {} → (absent)", short(u))),
                        (None, Some(v)) => out.push(format!("{pi}: (absent) → {}", short(v))),
                        (None, None) => {}
                    }
                }
            }
            (Some(Value::String(x)), Some(Value::String(y))) if x.chars().count() > 40 || y.chars().count() > 40 => {
                out.push(long_strings(&p, x, y))
            }
            (Some(x), Some(y)) => out.push(format!("{}: {} → {}", named(&p), short(x), short(y))),
            (None, None) => {}
        }
        ControlFlow::Continue(())
    });
    flush(&mut gathering, out);
}

/// `prefix.path`, either possibly empty.
fn under(prefix: &str, path: &str) -> String {
    match (prefix.is_empty(), path.is_empty()) {
        (true, _) => path.to_string(),
        (false, true) => prefix.to_string(),
        (false, false) if path.starts_with('[') => format!("{prefix}{path}"),
        (false, false) => format!("{prefix}.{path}"),
    }
}

/// The whole value is the changed field: `(value)`.
fn named(p: &str) -> String {
    if p.is_empty() { "(value)".into() } else { p.to_string() }
}

/// The differing elements `differ` of two scalar arrays of one length: each when three or fewer,
/// else how many and the first.
fn elements(p: &str, a: &[Value], b: &[Value], differ: &[usize], out: &mut Vec<String>) {
    let p = named(p);
    if differ.len() <= 3 {
        for &i in differ {
            out.push(format!("{p}[{i}]: {} → {}", short(&a[i]), short(&b[i])));
        }
    } else {
        let i = differ[0];
        out.push(format!(
            "{p}: {} of {} elements differ; first [{i}]: {} → {}",
            differ.len(),
            a.len(),
            short(&a[i]),
            short(&b[i])
        ));
    }
}

/// Two scalar arrays of different lengths: both lengths and the first difference.
fn lengths(p: &str, a: &[Value], b: &[Value], out: &mut Vec<String>) {
    let first = (0..a.len().min(b.len()))
        .find(|&i| a[i] != b[i])
        .unwrap_or(a.len().min(b.len()));
    out.push(format!(
        "{}: length {} → {}; first difference at [{first}]: {} → {}",
        named(p),
        a.len(),
        b.len(),
        a.get(first).map(short).unwrap_or_else(|| "(absent)".into()),
        b.get(first).map(short).unwrap_or_else(|| "(absent)".into())
    ));
}

/// Long strings (hex bytes, digests): where they first differ, and a little of each.
fn long_strings(p: &str, a: &str, b: &str) -> String {
    let i = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    let from = |s: &str| {
        let tail: String = s.chars().skip(i).take(16).collect();
        let more = if s.chars().count() > i + 16 { "…" } else { "" };
        format!(
            "{}\"{tail}{more}\" ({} chars)",
            if i > 0 { "…" } else { "" },
            s.chars().count()
        )
    };
    let at = if i > 0 { format!(" (from [{i}])") } else { String::new() };
    format!("{}{at}: {} → {}", named(p), from(a), from(b))
}

fn scalars(a: &[Value]) -> bool {
    a.iter().all(|v| !matches!(v, Value::Array(_) | Value::Object(_)))
}

/// A value's JSON, cut to 40 characters with its length when longer.
fn short(v: &Value) -> String {
    let s = v.to_string();
    let n = s.chars().count();
    if n <= 40 {
        s
    } else {
        format!("{}…({n} chars)", s.chars().take(32).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_records_added_removed_and_changed_with_their_fields() {
        let before = concat!(
            r#"{"decodes":[{"expect":{"outputs":[{"data":["0","4"],"shape":["1","1","2"]}]}}],"id":"a","load":"ok"}"#,
            "\n",
            r#"{"id":"b","x":"1"}"#,
            "\n",
            r#"{"id":"gone","x":"1"}"#,
            "\n"
        );
        let after = concat!(
            r#"{"decodes":[{"expect":{"outputs":[{"data":["0","5"],"shape":["1","1","2"]}]}}],"id":"a","load":"ok"}"#,
            "\n",
            r#"{"id":"b","x":"1"}"#,
            "\n",
            r#"{"id":"new","x":"2"}"#,
            "\n"
        );
        let d = jsonl(before, after);
        assert_eq!((d.added, d.removed, d.changed), (1, 1, 1));
        let (x, y) = ("ab".repeat(30), format!("{}cd", "ab".repeat(29)));
        assert_eq!(
            changes(&Value::String(x), &Value::String(y)),
            ["(value) (from [58]): …\"ab\" (60 chars) → …\"cd\" (60 chars)"]
        );
        assert_eq!(
            d.lines,
            "    ~ a\n        decodes[0].expect.outputs[0].data[1]: \"4\" → \"5\"\n    + new\n    - gone\n"
        );
        assert_eq!(d.summary(), "1 added, 1 removed, 1 changed records");
    }

    #[test]
    fn summarises_long_arrays_and_notes_reordering() {
        let old = serde_json::json!({"data": ["1", "2", "3", "4", "5"], "refuse": null});
        let new = serde_json::json!({"data": ["1", "0", "0", "0", "0"], "refuse": "too_large"});
        assert_eq!(
            changes(&old, &new),
            [
                "data: 4 of 5 elements differ; first [1]: \"2\" → \"0\"",
                "refuse: null → \"too_large\""
            ]
        );
        let d = jsonl("{\"id\":\"a\"}\n{\"id\":\"b\"}\n", "{\"id\":\"b\"}\n{\"id\":\"a\"}\n");
        assert_eq!((d.added, d.removed, d.changed), (0, 0, 0));
        assert_eq!(d.lines, "    (the records' order changed)\n");
    }

    /// A scratch git repository with `ops-conformance/` committed, changed in the working tree.
    #[test]
    fn reports_a_working_tree_against_a_commit() {
        let dir = std::env::temp_dir().join(format!("xtask-diff-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let tree = dir.join(TREE);
        std::fs::create_dir_all(tree.join("vectors")).unwrap();
        std::fs::write(
            tree.join("vectors/relu.jsonl"),
            "{\"id\":\"a\",\"load\":\"ok\"}\n{\"id\":\"b\"}\n",
        )
        .unwrap();
        std::fs::write(tree.join("old.whg1"), [1u8, 2]).unwrap();
        std::fs::write(tree.join("cert.json"), "{\"verdict\":{\"acc32\":true}}").unwrap();
        let git = |args: &[&str]| {
            let ok = Command::new("git")
                .current_dir(&dir)
                .args([
                    "-c",
                    "user.name=t",
                    "-c",
                    "user.email=t@t",
                    "-c",
                    "commit.gpgsign=false",
                ])
                .args(args)
                .output()
                .unwrap()
                .status
                .success();
            assert!(ok, "git {args:?}");
        };
        git(&["init", "-q"]);
        git(&["add", "-A"]);
        git(&["commit", "-q", "-m", "tree"]);
        std::fs::write(
            tree.join("vectors/relu.jsonl"),
            "{\"id\":\"a\",\"load\":\"too_large\"}\n{\"id\":\"c\"}\n",
        )
        .unwrap();
        std::fs::remove_file(tree.join("old.whg1")).unwrap();
        std::fs::write(tree.join("new.whg1"), [3u8]).unwrap();
        std::fs::write(tree.join("cert.json"), "{\"verdict\":{\"acc32\":false}}").unwrap();

        let r = report(&dir, "HEAD").unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        let body: Vec<&str> = r.lines().skip(1).collect();
        assert_eq!(
            body,
            [
                "~ cert.json (changed)",
                "    verdict.acc32: true → false",
                "+ new.whg1 (added, 1 bytes)",
                "- old.whg1 (removed, 2 bytes)",
                "~ vectors/relu.jsonl: 1 added, 1 removed, 1 changed records",
                "    ~ a",
                "        load: \"ok\" → \"too_large\"",
                "    + c",
                "    - b",
                "4 files: 1 added, 1 removed, 2 changed; records: 1 added, 1 removed, 1 changed",
            ],
            "{r}"
        );
        assert!(r.starts_with("ops-conformance/ since HEAD ("), "{r}");
    }
}
