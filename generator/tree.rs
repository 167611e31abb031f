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
use wai_oracle::suite::{self, Cases, SUITES, Suite, Tier};
use wai_oracle::{files, fill};

/// A corpus file and the tree file it becomes.
pub struct Source {
    pub corpus: PathBuf,
    /// The path inside the tree, with `/` separators: `vectors/conv.jsonl`.
    pub target: String,
    /// The suite the tree file belongs to.
    pub suite: &'static Suite,
    /// What its cases describe.
    pub cases: Cases,
    /// The corpus file's stem: the operator of a per-operator or stage-operator file.
    pub stem: String,
}

impl Source {
    /// For a per-operator file, the operator every vector's graph holds alone.
    pub fn operator(&self) -> Option<&str> {
        (self.cases == Cases::Operator).then_some(self.stem.as_str())
    }

    /// The operator of a small-tier file of one operator's vectors (or one stage operator's), whose
    /// cases claim its items without the `<op>:` prefix (docs/corpus.md).
    pub fn claimed_operator(&self) -> Option<&str> {
        let one = self.cases == Cases::StageOperator || self.operator().is_some();
        (one && self.suite != &suite::SCALE).then_some(self.stem.as_str())
    }
}

/// The scale tier's folder in the tree and in the corpus.
const SCALE: &str = suite::SCALE.name;

/// The corpus files every suite's folders hold, sorted by target path.
pub fn sources(corpus: &Path) -> Result<Vec<Source>, String> {
    let mut out = Vec::new();
    for suite in SUITES {
        for folder in suite.folders {
            let d = corpus.join(folder.corpus);
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
                out.push(Source {
                    target: format!("{}{stem}.jsonl", folder.tree),
                    suite,
                    cases: folder.cases,
                    stem,
                    corpus: path,
                });
            }
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

/// The filled lines of one tree file. A scale file's records are filled in parallel, one
/// record's tensors per worker, with a progress bar.
pub fn build(src: &Source) -> Result<String, String> {
    let cases = read_cases(src)?;
    let mut ids = HashSet::new();
    for c in &cases {
        if !ids.insert(c.id.clone()) {
            return Err(format!(
                "{}: case {}: the id is not unique in its file",
                src.corpus.display(),
                c.id
            ));
        }
    }
    if src.suite == &suite::SCALE {
        let bar = indicatif::ProgressBar::new(cases.len() as u64).with_style(
            indicatif::ProgressStyle::with_template("{msg:28} [{bar:30}] {pos}/{len} records, {elapsed}")
                .expect("a valid template")
                .progress_chars("=> "),
        );
        bar.set_message(src.target.clone());
        let lines: Vec<String> = cases
            .par_iter()
            .map(|c| {
                let line = build_one(src, c);
                bar.inc(1);
                line
            })
            .collect::<Result<_, _>>()?;
        bar.finish_and_clear();
        return Ok(lines.concat());
    }
    cases.iter().map(|c| build_one(src, c)).collect()
}

/// One case's filled line.
fn build_one(src: &Source, c: &Case) -> Result<String, String> {
    let path = format!("{}: case {}", src.corpus.display(), c.id);
    if let Some(op) = src.operator() {
        let g = case::model(c, &path)?;
        if g.nodes.len() != 1 || g.nodes[0].op.name() != op {
            return Err(format!("{path}: a per-operator vector's graph holds exactly one {op}"));
        }
    }
    let filled = match src.cases {
        Cases::StageOperator => fill::stage::fill(&crate::stage::request(&src.stem, &c.body, &path)?),
        Cases::ScalePath => fill::jpegai::fill(&crate::jpegai::request(&c.body, &c.root, &path)?),
        Cases::DetessDequant => crate::dequant::fill(&c.body, &path),
        Cases::Operator | Cases::Graphs => fill::graph::fill(&case::request(c, &path)?),
    }
    .map_err(|e| format!("{path}: {e}"))?;
    wai_oracle::canon::to_line(&filled).map_err(|e| format!("{path}: {e}"))
}

/// Regenerates one tier of the tree (or both) under `out` from `corpus`; with `only`, just the
/// scale files of those stems (the rest of `out/scale/` is kept and its manifest rewritten).
pub fn regen(corpus: &Path, out: &Path, tier: Tier, only: &[String]) -> Result<(), String> {
    let all = sources(corpus)?;
    let scale_targets: Vec<String> = all
        .iter()
        .filter(|s| s.suite == &suite::SCALE)
        .map(|s| s.target.clone())
        .collect();
    let sources: Vec<Source> = all
        .into_iter()
        .filter(|s| {
            let stem = Path::new(&s.target)
                .file_stem()
                .and_then(|x| x.to_str())
                .unwrap_or_default();
            let chosen = only.is_empty() || only.iter().any(|o| o == stem);
            tier.holds(&s.target) && (chosen || s.suite != &suite::SCALE)
        })
        .collect();
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
    let (scale, mut small): (Vec<_>, Vec<_>) = files.into_iter().partition(|f| Tier::Scale.holds(&f.0));
    if tier.has_small() {
        let sets = crate::sets::read_all(corpus)?;
        let set_files = crate::sets::tree_files(&sets)?;
        eprintln!("{} sets: {} files", sets.len(), set_files.len());
        small.extend(set_files);
        small.extend(crate::cis2::tree_files(corpus)?);
        let certificates = crate::graph_certs::tree_files(corpus, &small)?;
        small.extend(certificates);
    }
    replace_tree(out, |stage| {
        if tier.has_small() {
            write_small(stage, small)?;
        }
        if tier.has_scale() {
            write_scale(stage, scale, &scale_targets, only.is_empty())?;
        }
        Ok(())
    })
}

/// Rewrites the tree at `out` in one step: `write` works on a copy of it made beside it of hard
/// links (`.NAME.new-PID`), which then takes its place at once (`renameat2`'s `RENAME_EXCHANGE`),
/// and the old tree is removed. A run killed at any point leaves the old tree or the new one, each
/// with its manifests. Every file `write` makes replaces its link (`files::write`), so the old tree's
/// files are never written through.
fn replace_tree(out: &Path, write: impl FnOnce(&Path) -> Result<(), String>) -> Result<(), String> {
    let fail = |p: &Path, e: std::io::Error| format!("{}: {e}", p.display());
    let name = out
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or(format!("{}: not a folder name", out.display()))?;
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    remove_abandoned(parent, name);
    let stage = parent.join(format!(".{name}.new-{}", std::process::id()));
    if stage.exists() {
        std::fs::remove_dir_all(&stage).map_err(|e| fail(&stage, e))?;
    }
    let staged = link_tree(out, &stage)
        .map_err(|e| fail(&stage, e))
        .and_then(|()| write(&stage));
    if let Err(e) = staged {
        let _ = std::fs::remove_dir_all(&stage);
        return Err(e);
    }
    if out.exists() {
        exchange(out, &stage).map_err(|e| fail(out, e))?;
        // `stage` holds the old tree now.
        std::fs::remove_dir_all(&stage).map_err(|e| fail(&stage, e))
    } else {
        std::fs::rename(&stage, out).map_err(|e| fail(out, e))
    }
}

/// Removes the staged trees of `regen` runs that were killed (their process is gone).
fn remove_abandoned(parent: &Path, name: &str) {
    let prefix = format!(".{name}.new-");
    for e in std::fs::read_dir(parent).into_iter().flatten().flatten() {
        let file_name = e.file_name();
        let pid = file_name.to_str().and_then(|n| n.strip_prefix(&prefix));
        if pid.is_some_and(|pid| !Path::new("/proc").join(pid).exists()) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Makes `to` a copy of the tree `from` (when it exists) of hard links, folders made anew.
fn link_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    let Ok(entries) = std::fs::read_dir(from) else {
        return Ok(());
    };
    for e in entries {
        let e = e?;
        let (src, dst) = (e.path(), to.join(e.file_name()));
        if e.file_type()?.is_dir() {
            link_tree(&src, &dst)?;
        } else {
            std::fs::hard_link(&src, &dst)?;
        }
    }
    Ok(())
}

/// Swaps two paths in one step (Linux's `renameat2` with `RENAME_EXCHANGE`). Where the file system
/// cannot, `a` is renamed aside and `b` put in its place: two steps, between which `a` is missing.
fn exchange(a: &Path, b: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = |p: &Path| std::ffi::CString::new(p.as_os_str().as_bytes()).map_err(std::io::Error::other);
    let (ca, cb) = (c(a)?, c(b)?);
    // SAFETY: two NUL-terminated paths that live across the call; no memory is written.
    let r = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            ca.as_ptr(),
            libc::AT_FDCWD,
            cb.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if r == 0 {
        return Ok(());
    }
    let e = std::io::Error::last_os_error();
    if !matches!(e.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS)) {
        return Err(e);
    }
    let aside = b.with_extension("old");
    std::fs::rename(a, &aside)?;
    std::fs::rename(b, a)?;
    std::fs::rename(&aside, b)
}

/// Replaces the small tier (everything under `out` but `scale/`) with `files` and its manifest.
fn write_small(out: &Path, mut files: Vec<(String, Vec<u8>)>) -> Result<(), String> {
    let fail = |p: &Path, e: std::io::Error| format!("{}: {e}", p.display());
    for e in std::fs::read_dir(out).into_iter().flatten().flatten() {
        let p = e.path();
        if p.file_name() == Some(SCALE.as_ref()) {
            continue;
        }
        if p.is_dir() {
            std::fs::remove_dir_all(&p)
        } else {
            std::fs::remove_file(&p)
        }
        .map_err(|e| fail(&p, e))?;
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    write_files(out, &files)?;
    write_manifest(out, &files, "MANIFEST.sha256")
}

/// Writes the scale tier's `files` under `out/scale/` (replacing the folder when `whole`), then
/// its manifest over every file the corpus makes there (`targets`, sorted), those not rebuilt read
/// back from `out`.
fn write_scale(out: &Path, files: Vec<(String, Vec<u8>)>, targets: &[String], whole: bool) -> Result<(), String> {
    let dir = out.join(SCALE);
    if whole && dir.exists() {
        std::fs::remove_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    write_files(out, &files)?;
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut all = Vec::new();
    for target in targets {
        let text = std::fs::read(out.join(target))
            .map_err(|e| format!("{target}: {e} (regenerate the whole tier: regen --tier scale)"))?;
        all.push((target.clone(), text));
    }
    write_manifest(out, &all, &format!("{SCALE}/MANIFEST.sha256"))
}

fn write_files(out: &Path, files: &[(String, Vec<u8>)]) -> Result<(), String> {
    for (target, text) in files {
        let path = out.join(target);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        files::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(())
}

/// `files` (sorted by path) as `sha256  path` lines in `out/name`.
fn write_manifest(out: &Path, files: &[(String, Vec<u8>)], name: &str) -> Result<(), String> {
    let manifest: String = files
        .iter()
        .map(|(target, text)| format!("{}  {target}\n", hex::encode(Sha256::digest(text))))
        .collect();
    files::write(&out.join(name), manifest.as_bytes()).map_err(|e| format!("{name}: {e}"))
}
