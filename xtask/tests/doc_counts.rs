//! The counts README.md and docs/scale.md state about the tree are the tree's: a changed corpus that
//! leaves them stale fails here. (The TOSA grade's counts are checked by CI against its report.)

use serde_json::Value;
use std::path::{Path, PathBuf};
use xtask::grade::{self, Options, Role};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn records(folder: &str) -> Vec<(String, Value)> {
    let dir = root().join("ops-conformance").join(folder);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    files
        .iter()
        .flat_map(|p| {
            let stem = p.file_stem().unwrap().to_string_lossy().to_string();
            let text = std::fs::read_to_string(p).unwrap();
            let lines: Vec<(String, Value)> = text
                .lines()
                .map(|l| (stem.clone(), serde_json::from_str(l).unwrap()))
                .collect();
            lines
        })
        .collect()
}

/// `n` with a comma every three digits, as the documents write counts.
fn grouped(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[test]
fn the_readme_counts_the_vectors_and_what_an_operator_is_sent() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let (vectors, graphs) = (records("vectors").len(), records("graphs").len());
    let o = Options::new("x");
    let sent = grade::select(&root().join("ops-conformance"), &o)
        .into_iter()
        .filter(|f| f.suite != "stage")
        .flat_map(|f| {
            let text = std::fs::read_to_string(root().join("ops-conformance").join(&f.path)).unwrap();
            let sent: Vec<bool> = text
                .lines()
                .map(|l| {
                    let s = grade::Sent::new(serde_json::from_str(l).unwrap(), Role::Operator);
                    !s.how.targets.is_empty()
                })
                .collect();
            sent
        })
        .filter(|s| *s)
        .count();
    let said = format!(
        "Of the {vectors} vectors in `vectors/` and {graphs} records in `graphs/`, an operator implementation is sent\n{sent} "
    );
    assert!(readme.contains(&said), "README.md should say: {said}");
}

#[test]
fn docs_scale_counts_the_tier() {
    let doc = std::fs::read_to_string(root().join("docs/scale.md")).unwrap();
    let mut all: Vec<(String, Value)> = records("scale");
    all.extend(
        records("scale/graphs")
            .into_iter()
            .map(|(s, v)| (format!("graphs/{s}"), v)),
    );
    let decodes = |v: &Value| v["decodes"].as_array().unwrap().len() as u64;
    let total: u64 = all.iter().map(|(_, v)| decodes(v)).sum();
    let said = format!("{} records, ", all.len());
    assert!(doc.contains(&format!("\n{said}")), "docs/scale.md should say: {said}");
    assert!(doc.contains(&format!("{} decodes", grouped(total))), "{total} decodes");
    // The per-file table: records, decodes and the largest tensor a record reads or writes.
    let elements = |t: &Value| -> u64 {
        t["shape"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d.as_str().unwrap().parse::<u64>().unwrap())
            .product()
    };
    let mut files: Vec<&str> = all.iter().map(|(f, _)| f.as_str()).collect();
    files.dedup();
    for file in files {
        let mine: Vec<&Value> = all.iter().filter(|(f, _)| f == file).map(|(_, v)| v).collect();
        let largest = mine
            .iter()
            .flat_map(|v| v["decodes"].as_array().unwrap())
            .flat_map(|d| {
                let outputs = d
                    .pointer("/expect/outputs")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                d["inputs"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .cloned()
                    .chain(outputs)
                    .collect::<Vec<_>>()
            })
            .map(|t| elements(&t))
            .max()
            .unwrap_or(0);
        let row = format!(
            "| {file} | {} | {} | {} |",
            mine.len(),
            grouped(mine.iter().map(|v| decodes(v)).sum()),
            grouped(largest)
        );
        let cells = row.trim_start_matches("| ");
        assert!(
            doc.contains(&row) || doc.contains(&format!(" {cells}")),
            "docs/scale.md's table should hold {row}"
        );
    }
}
