//! `cargo xtask check`: the byte-identity gate.
//!
//! 1. Regenerate the tree from the corpus into a temporary directory and compare it with
//!    `ops-conformance/`, file by file.
//! 2. Strip every committed file's computed fields, fill the requests with the independent
//!    checker (`wai-checker fill`), and compare with the committed bytes.
//!
//! Each differing file is reported by its first differing record; the exit is non-zero
//! when anything differs.

use crate::compare::{files, first_difference};
use crate::{build, run as run_command};
use serde_json::Value;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

pub fn run(root: &Path) -> Result<(), String> {
    let bin = build(root, &[("wai-oracle", "wai-generate"), ("wai-checker", "wai-checker")])?;
    let tree = root.join("ops-conformance");
    if !tree.is_dir() {
        return Err("ops-conformance/ does not exist: run `cargo xtask regen`".into());
    }
    let differences = differences(root, &tree, &bin)?;
    if differences.is_empty() {
        println!("check: every committed byte is reproduced, by the generator and by the checker");
        Ok(())
    } else {
        for d in &differences {
            println!("{d}");
        }
        Err(format!("{} differences", differences.len()))
    }
}

/// Both comparisons for the tree at `tree`, with the binaries in `bin`: each differing file's
/// first differing record, as `file:line id field: committed vs recomputed`.
pub fn differences(root: &Path, tree: &Path, bin: &Path) -> Result<Vec<String>, String> {
    let mut differences = Vec::new();
    let start = Instant::now();
    let scratch = std::env::temp_dir().join(format!(
        "wai-check-{}-{}",
        std::process::id(),
        tree.display().to_string().len()
    ));
    let regen = run_command(
        Command::new(bin.join("wai-generate"))
            .current_dir(root)
            .args(["regen", "--corpus", "corpus", "--out"])
            .arg(&scratch),
        "wai-generate regen",
    );
    if let Err(e) = regen {
        let _ = std::fs::remove_dir_all(&scratch);
        return Err(e);
    }
    differences.extend(compare_trees(tree, &scratch));
    let _ = std::fs::remove_dir_all(&scratch);
    eprintln!(
        "check: regenerated and compared in {:.1} s",
        start.elapsed().as_secs_f64()
    );

    let start = Instant::now();
    for name in files(tree).into_iter().filter(|f| f.ends_with(".jsonl")) {
        let committed = std::fs::read(tree.join(&name)).map_err(|e| format!("{name}: {e}"))?;
        let requests = strip(&committed).map_err(|e| format!("{name}: {e}"))?;
        match checker_fill(&bin.join("wai-checker"), &requests) {
            Ok(recomputed) => {
                differences.extend(first_difference(&name, &committed, &recomputed).map(|d| format!("checker {d}")))
            }
            Err(e) => differences.push(format!("{name}: wai-checker fill: {e}")),
        }
    }
    eprintln!(
        "check: refilled with wai-checker in {:.1} s",
        start.elapsed().as_secs_f64()
    );
    Ok(differences)
}

/// Every file of the committed tree against the regenerated one.
fn compare_trees(committed: &Path, regenerated: &Path) -> Vec<String> {
    let (a, b) = (files(committed), files(regenerated));
    let mut out = Vec::new();
    for name in a.iter().filter(|n| !b.contains(n)) {
        out.push(format!("{name}: committed, but the corpus does not produce it"));
    }
    for name in b.iter().filter(|n| !a.contains(n)) {
        out.push(format!("{name}: produced by the corpus, but not committed"));
    }
    for name in a.iter().filter(|n| b.contains(n)) {
        let x = std::fs::read(committed.join(name)).unwrap_or_default();
        let y = std::fs::read(regenerated.join(name)).unwrap_or_default();
        out.extend(first_difference(name, &x, &y).map(|d| format!("regenerated {d}")));
    }
    out
}

/// A committed file with its computed fields removed: the requests a `fill` receives.
pub fn strip(committed: &[u8]) -> Result<Vec<u8>, String> {
    let text = std::str::from_utf8(committed).map_err(|e| e.to_string())?;
    let mut out = String::new();
    for (n, line) in text.lines().enumerate() {
        let mut v: Value = serde_json::from_str(line).map_err(|e| format!("line {}: {e}", n + 1))?;
        if let Some(o) = v.as_object_mut() {
            // Graph vectors' load, profiles and decodes' expect; stage vectors' and lowering
            // records' expect.
            o.remove("load");
            o.remove("profiles");
            o.remove("expect");
            for d in o.get_mut("decodes").and_then(Value::as_array_mut).into_iter().flatten() {
                if let Some(d) = d.as_object_mut() {
                    d.remove("expect");
                }
            }
        }
        out.push_str(&v.to_string());
        out.push('\n');
    }
    Ok(out.into_bytes())
}

/// `wai-checker fill` on `requests`, its stdout.
fn checker_fill(checker: &Path, requests: &[u8]) -> Result<Vec<u8>, String> {
    let mut child = Command::new(checker)
        .arg("fill")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let mut stdin = child.stdin.take().ok_or("no stdin")?;
    let input = requests.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    let _ = writer.join();
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        return Err(stderr.lines().take(3).collect::<Vec<_>>().join("; "));
    }
    Ok(out.stdout)
}
