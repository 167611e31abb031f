//! The generator and the coverage tool, run as binaries on the committed corpus.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The workspace root, where `corpus/` and `ops-conformance/` are.
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

fn generate(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_wai-generate"))
        .current_dir(root())
        .args(args)
        .output()
        .unwrap()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let target = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_dir(&p, &target)
        } else {
            std::fs::copy(&p, &target).map(|_| ()).unwrap()
        }
    }
}

fn corpus() -> PathBuf {
    root().join("corpus")
}

#[test]
fn the_committed_corpus_covers_every_item() {
    // The small tier: the scale tier's coverage runs in release (`cargo xtask coverage`, CI).
    let out = generate(&["coverage", "--quiet", "--tier", "small"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains(" 0 with no vector; 0 claims that do not hold"), "{text}");
}

#[test]
fn dropping_a_covering_case_fails_the_coverage() {
    // relu-check-output is the only vector that brings relu's checked output one past each end.
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&corpus(), dir.path());
    let relu = dir.path().join("vectors/relu.json");
    let mut v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&relu).unwrap()).unwrap();
    let cases = v["cases"].as_array_mut().unwrap();
    let before = cases.len();
    cases.retain(|c| c["id"] != "relu-check-output");
    assert_eq!(cases.len(), before - 1);
    std::fs::write(&relu, v.to_string()).unwrap();
    let out = generate(&[
        "coverage",
        "--quiet",
        "--tier",
        "small",
        "--corpus",
        dir.path().to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success());
    for item in [
        "relu:check-out:lo",
        "relu:check-out:hi",
        "relu:check-out:below",
        "relu:check-out:above",
    ] {
        assert!(text.contains(&format!("{item}: NONE")), "{item} in {text}");
    }
}

#[test]
fn a_claim_the_vector_does_not_hold_fails_the_coverage() {
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&corpus(), dir.path());
    let relu = dir.path().join("vectors/relu.json");
    let text = std::fs::read_to_string(&relu).unwrap();
    // relu-planes decodes inside its check range only; it cannot claim a refusal one past it.
    let text = text.replacen(
        "\"covers\": [\"decode\", \"1x1\", \"odd\", \"profiles:both\"]",
        "\"covers\": [\"decode\", \"check-in:below\"]",
        1,
    );
    std::fs::write(&relu, text).unwrap();
    let out = generate(&[
        "coverage",
        "--quiet",
        "--tier",
        "small",
        "--only",
        "relu",
        "--corpus",
        dir.path().to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success());
    assert!(
        text.contains("vectors/relu.jsonl#relu-planes: claims check-in:below, which it does not cover"),
        "{text}"
    );
}

#[test]
fn regenerating_twice_gives_the_same_bytes_as_the_committed_tree() {
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    for d in [&a, &b] {
        // The small tier; `cargo xtask check` regenerates the scale tier in release.
        let out = generate(&["regen", "--tier", "small", "--out", d.path().to_str().unwrap()]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let manifest = |p: &Path| std::fs::read_to_string(p.join("MANIFEST.sha256")).unwrap();
    assert_eq!(manifest(a.path()), manifest(b.path()));
    let committed = root().join("ops-conformance");
    assert_eq!(
        manifest(a.path()),
        manifest(&committed),
        "the committed tree is not current: run cargo xtask regen"
    );
}

/// Every file under `dir` with its bytes, by path.
fn snapshot(dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.strip_prefix(dir).unwrap().to_path_buf(), std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

#[test]
fn a_regen_killed_at_any_point_leaves_the_old_tree_or_the_new() {
    // The committed vectors' corpus; the old tree is made from half of its files, the new from all.
    // Both hold 4,000 files under scale/, which a small-tier regen keeps: linking them into its
    // staged copy takes a while, so that the kills below land while the new tree is being made.
    let d = tempfile::tempdir().unwrap();
    let (corpus, half) = (d.path().join("corpus"), d.path().join("half"));
    copy_dir(&root().join("corpus/vectors"), &corpus.join("vectors"));
    copy_dir(&root().join("corpus/vectors"), &half.join("vectors"));
    for (i, e) in std::fs::read_dir(half.join("vectors")).unwrap().enumerate() {
        if i % 2 == 0 {
            std::fs::remove_file(e.unwrap().path()).unwrap();
        }
    }
    let regen = |corpus: &Path, out: &Path| {
        Command::new(env!("CARGO_BIN_EXE_wai-generate"))
            .args(["regen", "--tier", "small", "--corpus"])
            .arg(corpus)
            .arg("--out")
            .arg(out)
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap()
    };
    let (old, new) = (d.path().join("old"), d.path().join("new"));
    for (c, out) in [(&half, &old), (&corpus, &new)] {
        std::fs::create_dir_all(out.join("scale")).unwrap();
        for i in 0..4000 {
            std::fs::write(out.join(format!("scale/{i}")), i.to_string()).unwrap();
        }
        assert!(regen(c, out).wait().unwrap().success());
    }
    let (old_files, new_files) = (snapshot(&old), snapshot(&new));
    assert_ne!(old_files, new_files);
    let mut killed_while_staged = 0;
    for k in 0..12u64 {
        let out = d.path().join(format!("out{k}"));
        copy_dir(&old, &out);
        let mut child = regen(&corpus, &out);
        let staged = d.path().join(format!(".out{k}.new-{}", child.id()));
        // Kill it k × 3 ms after its staged tree appears (or once it has ended).
        let start = std::time::Instant::now();
        while !staged.exists() && child.try_wait().unwrap().is_none() && start.elapsed().as_secs() < 60 {}
        std::thread::sleep(std::time::Duration::from_millis(3 * k));
        let _ = child.kill();
        child.wait().unwrap();
        killed_while_staged += usize::from(staged.exists());
        let files = snapshot(&out);
        assert!(
            files == old_files || files == new_files,
            "kill {k}: a tree neither old nor new"
        );
        // The next run removes what the killed one left and makes the new tree.
        assert!(regen(&corpus, &out).wait().unwrap().success());
        assert_eq!(snapshot(&out), new_files);
        assert!(!staged.exists(), "kill {k}: the abandoned staged tree is left");
    }
    assert!(
        killed_while_staged > 0,
        "no kill landed while the new tree was being made"
    );
}
