//! Writing the committed tree: one JSON Lines file per corpus file, filled by the oracle,
//! and `MANIFEST.sha256`. Files are built in parallel; the bytes do not depend on the
//! order they finish in.

use crate::case::{self, Case};
use rayon::prelude::*;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A corpus file and the tree file it becomes.
pub struct Source {
    pub corpus: PathBuf,
    /// The path inside the tree, with `/` separators: `vectors/conv.jsonl`.
    pub target: String,
    /// For a per-operator file, the operator every vector's graph holds alone.
    pub operator: Option<String>,
    /// For a stage-operator file, the operator (§5E).
    pub stage: Option<String>,
    /// A file of `jpegai-int/1` scale-path records.
    pub jpegai: bool,
    /// A file of DetessDequant records.
    pub dequant: bool,
}

/// The corpus files, sorted by target path.
pub fn sources(corpus: &Path) -> Result<Vec<Source>, String> {
    let mut out = Vec::new();
    for (dir, kind) in [
        ("vectors", 'o'),
        ("graphs", 'g'),
        ("stage", 's'),
        ("jpegai", 'j'),
        ("provisional/stage", 's'),
        ("detessdequant", 'd'),
        ("provisional/detessdequant", 'd'),
    ] {
        let d = corpus.join(dir);
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries {
            let path = e.map_err(|e| format!("{}: {e}", d.display()))?.path();
            if path.extension().and_then(|x| x.to_str()) != Some("json") {
                continue;
            }
            let stem = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default()
                .to_string();
            // Scale-path records are graph vectors' neighbours (§14.2, §13.6.1).
            let target = if kind == 'j' {
                format!("graphs/jpegai_{stem}.jsonl")
            } else {
                format!("{dir}/{stem}.jsonl")
            };
            out.push(Source {
                target,
                operator: (kind == 'o').then(|| stem.clone()),
                stage: (kind == 's').then(|| stem.clone()),
                jpegai: kind == 'j',
                dequant: kind == 'd',
                corpus: path,
            });
        }
    }
    out.sort_by(|a, b| a.target.cmp(&b.target));
    Ok(out)
}

/// The expanded cases of one corpus file.
pub fn read_cases(src: &Source) -> Result<Vec<Case>, String> {
    let text = std::fs::read_to_string(&src.corpus).map_err(|e| format!("{}: {e}", src.corpus.display()))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", src.corpus.display()))?;
    let root = src
        .corpus
        .ancestors()
        .find(|a| a.join("sets").is_dir() || a.join("vectors").is_dir())
        .unwrap_or(Path::new("."));
    case::cases(&v, &src.corpus.display().to_string(), root)
}

/// The filled lines of one tree file.
pub fn build(src: &Source) -> Result<String, String> {
    let cases = read_cases(src)?;
    let mut ids = HashSet::new();
    let mut out = String::new();
    for c in &cases {
        let path = format!("{}: case {}", src.corpus.display(), c.id);
        if !ids.insert(c.id.clone()) {
            return Err(format!("{path}: the id is not unique in its file"));
        }
        if let Some(op) = &src.operator {
            let g = case::model(c, &path)?;
            if g.nodes.len() != 1 || g.nodes[0].op.name() != op {
                return Err(format!("{path}: a per-operator vector's graph holds exactly one {op}"));
            }
        }
        let filled = match &src.stage {
            Some(op) => wai_oracle::fill::stage::fill(&crate::stage::request(op, &c.body, &path)?),
            None if src.jpegai => wai_oracle::fill::jpegai::fill(&crate::jpegai::request(&c.body, &c.root, &path)?),
            None if src.dequant => crate::dequant::fill(&c.body, &path),
            None => wai_oracle::fill::graph::fill(&case::request(c, &path)?),
        }
        .map_err(|e| format!("{path}: {e}"))?;
        out.push_str(&wai_oracle::canon::to_line(&filled).map_err(|e| format!("{path}: {e}"))?);
    }
    Ok(out)
}

/// Regenerates the whole tree under `out` from `corpus`.
pub fn regen(corpus: &Path, out: &Path) -> Result<(), String> {
    let sources = sources(corpus)?;
    let done = AtomicUsize::new(0);
    let files: Vec<(String, Vec<u8>)> = sources
        .par_iter()
        .map(|src| {
            let text = build(src)?;
            let n = done.fetch_add(1, Ordering::Relaxed) + 1;
            eprintln!(
                "[{n}/{}] {} ({} vectors)",
                sources.len(),
                src.target,
                text.lines().count()
            );
            Ok((src.target.clone(), text.into_bytes()))
        })
        .collect::<Result<_, String>>()?;
    let mut files = files;
    let sets = crate::sets::read_all(corpus)?;
    let set_files = crate::sets::tree_files(&sets)?;
    eprintln!("{} sets: {} files", sets.len(), set_files.len());
    files.extend(set_files);
    files.extend(crate::cis2::tree_files(corpus)?);
    let certificates = crate::graph_certs::tree_files(corpus, &files)?;
    files.extend(certificates);
    files.sort_by(|a, b| a.0.cmp(&b.0));
    write_tree(out, &files)
}

/// Replaces the tree with `files` (sorted by path) and their manifest.
fn write_tree(out: &Path, files: &[(String, Vec<u8>)]) -> Result<(), String> {
    if out.exists() {
        std::fs::remove_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    }
    let mut manifest = String::new();
    for (target, text) in files {
        let path = out.join(target);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        manifest.push_str(&format!("{}  {target}\n", hex::encode(Sha256::digest(text))));
    }
    std::fs::write(out.join("MANIFEST.sha256"), manifest).map_err(|e| format!("MANIFEST.sha256: {e}"))
}
