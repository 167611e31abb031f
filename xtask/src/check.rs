//! `cargo xtask check`: the byte-identity gate.
//!
//! 1. Regenerate the tree from the corpus into a temporary directory and compare it with
//!    `ops-conformance/`, file by file.
//! 2. Strip every committed file's computed fields, fill the requests with the independent
//!    checker (`wai-checker fill`), and compare with the committed bytes.
//! 3. For every set in the certificate trees (`certificates/` and `provisional/certificates/`,
//!    integer-operators §14.3), lower the set's own files with `wai-checker lower` and compare each
//!    lowered graph `<digest>/<role>.whg1` and the certificate `<digest>.json` with the committed
//!    bytes, and the folder's name with the set's digest (docs/assumptions.md L4, L6); and certify
//!    every bare graph of `graph-certificates/` with `wai-checker certify` and compare.
//!
//! Each differing file is reported by its first differing record; the exit is non-zero
//! when anything differs.

use crate::compare::{files, first_difference};
use crate::{GENERATOR, build, run as run_command};
use rayon::prelude::*;
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Instant;
use wai_oracle::suite::{self, Tier};

/// `cargo xtask check --tier T`: the gate over one tier of the tree, or both.
pub fn run(root: &Path, tier: Tier) -> Result<(), String> {
    let bin = build(root, &[GENERATOR, ("wai-checker", "wai-checker")])?;
    let tree = root.join("ops-conformance");
    if !tree.is_dir() {
        return Err("ops-conformance/ does not exist: run `cargo xtask regen`".into());
    }
    let differences = differences(root, &tree, &bin, tier)?;
    if differences.is_empty() {
        println!(
            "check: every committed byte of the {} reproduced, by the generator and by the checker",
            match tier {
                Tier::Small => "small tier is",
                Tier::Scale => "scale tier is",
                Tier::All => "tree is",
            }
        );
        Ok(())
    } else {
        for d in &differences {
            println!("{d}");
        }
        Err(format!("{} differences", differences.len()))
    }
}

/// A temporary directory of its own: unique within the process too, since two checks may run at
/// once in one process (the gate's tests do), each over the same sets.
fn scratch(what: &str) -> std::path::PathBuf {
    static RUN: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let run = RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    std::env::temp_dir().join(format!("wai-{what}-{}-{run}", std::process::id()))
}

/// Both comparisons for the tier `tier` of the tree at `tree`, with the binaries in `bin`: each
/// differing file's first differing record, as `file:line id field: committed vs recomputed`.
pub fn differences(root: &Path, tree: &Path, bin: &Path, tier: Tier) -> Result<Vec<String>, String> {
    let mut differences = Vec::new();
    let start = Instant::now();
    let scratch = scratch("check");
    let regen = run_command(
        Command::new(bin.join("wai-generate"))
            .current_dir(root)
            .args(["regen", "--corpus", "corpus", "--tier", tier.name(), "--out"])
            .arg(&scratch),
        "wai-generate regen",
    );
    if let Err(e) = regen {
        let _ = std::fs::remove_dir_all(&scratch);
        return Err(e);
    }
    differences.extend(compare_trees(tree, &scratch, tier));
    let _ = std::fs::remove_dir_all(&scratch);
    eprintln!(
        "check: regenerated and compared in {:.1} s",
        start.elapsed().as_secs_f64()
    );

    let start = Instant::now();
    let jsonl: Vec<String> = files(tree)
        .into_iter()
        .filter(|f| f.ends_with(".jsonl") && tier.holds(f))
        .collect();
    let refilled: Vec<Vec<String>> = jsonl
        .par_iter()
        .map(|name| {
            let committed = std::fs::read(tree.join(name)).map_err(|e| format!("{name}: {e}"))?;
            let requests = strip(&committed).map_err(|e| format!("{name}: {e}"))?;
            Ok(match checker_fill(&bin.join("wai-checker"), tree, &requests) {
                Ok(recomputed) => first_difference(name, &committed, &recomputed)
                    .map(|d| format!("checker {d}"))
                    .into_iter()
                    .collect(),
                Err(e) => vec![format!("{name}: wai-checker fill: {e}")],
            })
        })
        .collect::<Result<_, String>>()?;
    differences.extend(refilled.into_iter().flatten());
    if tier != Tier::Scale {
        differences.extend(certificate_sets(tree, &bin.join("wai-checker"), None));
    }
    eprintln!(
        "check: refilled and lowered with wai-checker in {:.1} s",
        start.elapsed().as_secs_f64()
    );
    Ok(differences)
}

/// One set of a certificate tree: `<root>/<capability>/<digest>/`, relative to the tree.
struct Set {
    capability: String,
    /// `<root>/<capability>/<digest>`.
    dir: String,
    digest: String,
}

/// Every set folder of both certificate trees, and every certificate without one.
fn sets(tree: &Path) -> (Vec<Set>, Vec<String>) {
    let mut out = Vec::new();
    let mut orphans = Vec::new();
    for root in ["certificates", "provisional/certificates"] {
        let Ok(caps) = std::fs::read_dir(tree.join(root)) else {
            continue;
        };
        let mut caps: Vec<PathBuf> = caps.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
        caps.sort();
        for cap in caps {
            let capability = cap.file_name().unwrap_or_default().to_string_lossy().into_owned();
            let mut entries: Vec<PathBuf> = std::fs::read_dir(&cap)
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.path())
                .collect();
            entries.sort();
            for e in entries {
                let name = e.file_name().unwrap_or_default().to_string_lossy().into_owned();
                if e.is_dir() {
                    out.push(Set {
                        dir: format!("{root}/{capability}/{name}"),
                        capability: capability.clone(),
                        digest: name,
                    });
                } else if let Some(d) = name.strip_suffix(".json")
                    && !cap.join(d).is_dir()
                {
                    orphans.push(format!(
                        "{root}/{capability}/{name}: a certificate with no set folder beside it"
                    ));
                }
            }
        }
    }
    (out, orphans)
}

/// Each set's files (everything in its folder but the lowered graphs) through `wai-checker lower`,
/// the outputs against the committed ones. With `mutant`, the checker runs with `WAI_MUTANT` set to
/// it (a build with the `mutants` feature, `cargo xtask mutants`).
pub fn certificate_sets(tree: &Path, checker: &Path, mutant: Option<&str>) -> Vec<String> {
    let (sets, mut out) = sets(tree);
    let per_set: Vec<Vec<String>> = sets.par_iter().map(|s| lower_set(tree, checker, s, mutant)).collect();
    out.extend(per_set.into_iter().flatten());
    out.extend(graph_certificates(tree, checker, mutant));
    out
}

/// The tree's folder of bare-graph certificates (`<name>.whg1` beside `<name>.json`).
const GRAPH_CERTIFICATES: &str = "graph-certificates";

/// Every bare graph's certificate through `wai-checker certify`, against the committed one.
fn graph_certificates(tree: &Path, checker: &Path, mutant: Option<&str>) -> Vec<String> {
    let dir = tree.join(GRAPH_CERTIFICATES);
    let all = files(&dir);
    let mut out = Vec::new();
    for json in all.iter().filter(|f| f.ends_with(".json")) {
        let graph = format!("{}.whg1", json.trim_end_matches(".json"));
        let name = format!("{GRAPH_CERTIFICATES}/{json}");
        if !all.contains(&graph) {
            out.push(format!("{name}: a certificate with no graph beside it"));
            continue;
        }
        let committed = std::fs::read(dir.join(json)).unwrap_or_default();
        let run = Command::new(checker)
            .envs(mutant.map(|m| ("WAI_MUTANT", m)))
            .current_dir(&dir)
            .args(["certify", &graph])
            .output();
        match run {
            Ok(o) if o.status.success() => {
                if let Some(d) = first_difference(&name, &committed, &o.stdout) {
                    out.push(format!("checker {d}"));
                }
            }
            Ok(o) => out.push(format!(
                "{name}: wai-checker certify: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            )),
            Err(e) => out.push(format!("{name}: wai-checker certify: {e}")),
        }
    }
    out
}

fn lower_set(tree: &Path, checker: &Path, set: &Set, mutant: Option<&str>) -> Vec<String> {
    let folder = tree.join(&set.dir);
    let Some(lowering) = wai_oracle::lower::lowering_of(&set.capability) else {
        return vec![format!("{}: no lowering is registered for {}", set.dir, set.capability)];
    };
    let all = files(&folder);
    let inputs: Vec<&String> = all.iter().filter(|f| !f.ends_with(".whg1")).collect();
    let committed_graphs: Vec<&String> = all.iter().filter(|f| f.ends_with(".whg1")).collect();
    let mut out = Vec::new();
    // The folder's name: the set's digest.
    let set_files: Vec<wai_checker::lower::File> = inputs
        .iter()
        .map(|f| wai_checker::lower::File {
            name: (*f).clone(),
            bytes: std::fs::read(folder.join(f)).unwrap_or_default(),
        })
        .collect();
    let digest = wai_checker::lower::tree_digest(&set_files);
    if digest != set.digest {
        out.push(format!(
            "checker {}: committed digest {} vs recomputed {digest}",
            set.dir, set.digest
        ));
    }
    let scratch = scratch(&format!(
        "lower-{}-{}",
        mutant.unwrap_or("plain"),
        set.dir.replace('/', "_")
    ));
    let _ = std::fs::remove_dir_all(&scratch);
    let run = Command::new(checker)
        .envs(mutant.map(|m| ("WAI_MUTANT", m)))
        .current_dir(&folder)
        .args([
            "lower",
            "--lowering",
            lowering,
            "--capability",
            &set.capability,
            "--out",
        ])
        .arg(&scratch)
        .args(&inputs)
        .output();
    match run {
        Ok(o) if matches!(o.status.code(), Some(0 | 1)) => {}
        Ok(o) => {
            let _ = std::fs::remove_dir_all(&scratch);
            let stderr = String::from_utf8_lossy(&o.stderr);
            return vec![format!("{}: wai-checker lower: {}", set.dir, stderr.trim())];
        }
        Err(e) => return vec![format!("{}: wai-checker lower: {e}", set.dir)],
    }
    let recomputed = files(&scratch);
    // (name in the tree, committed path, recomputed name)
    let mut pairs: Vec<(String, Option<PathBuf>, Option<String>)> = Vec::new();
    for g in &committed_graphs {
        let r = recomputed.iter().find(|r| r == g).cloned();
        pairs.push((format!("{}/{g}", set.dir), Some(folder.join(g)), r));
    }
    for r in recomputed
        .iter()
        .filter(|r| r.ends_with(".whg1") && !committed_graphs.contains(r))
    {
        pairs.push((format!("{}/{r}", set.dir), None, Some(r.clone())));
    }
    let cert = tree.join(format!("{}.json", set.dir));
    let recomputed_cert = recomputed.iter().find(|r| *r == "certificate.json").cloned();
    if cert.is_file() || recomputed_cert.is_some() {
        pairs.push((
            format!("{}.json", set.dir),
            cert.is_file().then_some(cert),
            recomputed_cert,
        ));
    }
    for (name, committed, recomputed) in pairs {
        let a = committed.and_then(|p| std::fs::read(p).ok());
        let b = recomputed.and_then(|r| std::fs::read(scratch.join(r)).ok());
        match (a, b) {
            (Some(a), Some(b)) if a == b => {}
            (Some(a), Some(b)) if name.ends_with(".json") => {
                if let Some(d) = first_difference(&name, &a, &b) {
                    out.push(format!("checker {d}"));
                }
            }
            (Some(a), Some(b)) => out.push(format!(
                "checker {name}: committed {} vs recomputed {}",
                bytes_summary(&a, &b),
                bytes_summary(&b, &a)
            )),
            (Some(_), None) => out.push(format!(
                "checker {name}: committed vs recomputed (none: wai-checker lower writes no such file)"
            )),
            (None, Some(_)) => out.push(format!(
                "checker {name}: committed (none) vs recomputed (wai-checker lower writes it)"
            )),
            (None, None) => {}
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    out
}

/// `N bytes, first difference at byte K` of one side of a binary comparison.
fn bytes_summary(x: &[u8], y: &[u8]) -> String {
    let at = x
        .iter()
        .zip(y)
        .position(|(a, b)| a != b)
        .unwrap_or(x.len().min(y.len()));
    format!(
        "{} bytes (byte {at}: {})",
        x.len(),
        x.get(at).map_or("end".into(), |b| format!("{b:#04x}"))
    )
}

/// Every file of the tier in the committed tree against the regenerated one.
fn compare_trees(committed: &Path, regenerated: &Path, tier: Tier) -> Vec<String> {
    let of_tier = |dir| files(dir).into_iter().filter(|f| tier.holds(f)).collect::<Vec<_>>();
    let (a, b) = (of_tier(committed), of_tier(regenerated));
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

/// A committed file with its computed fields removed (`suite::strip`): the requests a `fill`
/// receives.
pub fn strip(committed: &[u8]) -> Result<Vec<u8>, String> {
    let text = std::str::from_utf8(committed).map_err(|e| e.to_string())?;
    let mut out = String::new();
    for (n, line) in text.lines().enumerate() {
        let mut v: Value = serde_json::from_str(line).map_err(|e| format!("line {}: {e}", n + 1))?;
        suite::strip(&mut v);
        out.push_str(&v.to_string());
        out.push('\n');
    }
    Ok(out.into_bytes())
}

/// `wai-checker fill --tree TREE` on `requests`, its stdout (CIS-2 decode records name their model
/// folders relative to the tree, docs/protocol.md).
fn checker_fill(checker: &Path, tree: &Path, requests: &[u8]) -> Result<Vec<u8>, String> {
    let out = fill_process(checker, tree, requests, None)?;
    if out.status.success() {
        Ok(out.stdout)
    } else {
        Err(first_lines(&out.stderr))
    }
}

/// The `wai-checker fill --tree TREE` process on `requests`, run to its end: a failed fill's stdout
/// still holds every line it could fill. With `mutant`, the checker runs with `WAI_MUTANT` set to it
/// (a build with the `mutants` feature, `cargo xtask faults`).
pub fn fill_process(checker: &Path, tree: &Path, requests: &[u8], mutant: Option<&str>) -> Result<Output, String> {
    let mut child = Command::new(checker)
        .envs(mutant.map(|m| ("WAI_MUTANT", m)))
        .arg("fill")
        .arg("--tree")
        .arg(tree)
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
    Ok(out)
}

/// A failed process's stderr: its first three lines, on one.
pub fn first_lines(stderr: &[u8]) -> String {
    let stderr = String::from_utf8_lossy(stderr);
    stderr.lines().take(3).collect::<Vec<_>>().join("; ")
}
