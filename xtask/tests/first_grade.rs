//! The example operator implementation (`examples/fill.py`, standard-library Python) graded as an
//! operator implementation: its five operators pass, everything else it declines, nothing fails;
//! and docs/first-grade.md shows the grader's real reports, for the example and for the example
//! with `R_half_up` rounding ties away from zero.

use std::path::{Path, PathBuf};
use xtask::grade::{self, Options, Outcome};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn example() -> PathBuf {
    root().join("examples/fill.py")
}

const FIVE: [&str; 5] = ["relu", "clamp", "add", "rescale", "conv"];

/// The fenced block after `<!-- report: NAME -->` in docs/first-grade.md.
fn doc_block(name: &str) -> String {
    let doc = std::fs::read_to_string(root().join("docs/first-grade.md")).unwrap();
    let after = doc
        .split(&format!("<!-- report: {name} -->\n```text\n"))
        .nth(1)
        .unwrap();
    after.split("\n```").next().unwrap().to_string()
}

#[test]
fn the_example_passes_its_operators_and_declines_the_rest() {
    let o = Options::new(&format!("python3 {}", example().display()));
    let grades = grade::grade(&root().join("ops-conformance"), &o).unwrap();
    assert!(grade::failures(&grades).is_empty(), "{:?}", grade::failures(&grades));
    for g in &grades {
        let stem = g.file.path.trim_start_matches("vectors/").trim_end_matches(".jsonl");
        let mine = FIVE.contains(&stem);
        for r in &g.records {
            match &r.outcome {
                Outcome::Passed => {}
                Outcome::NotGradable(why) => assert!(!mine, "{}#{}: declined: {why}", g.file.path, r.id),
                other => panic!("{}#{}: {other:?}", g.file.path, r.id),
            }
        }
    }
    let verdicts = grade::summary(&grades, &o);
    let shown = verdicts
        .split("\nverdicts")
        .nth(1)
        .unwrap()
        .split("\n\n")
        .next()
        .unwrap();
    assert_eq!(format!("verdicts{shown}"), doc_block("fixed"));
    // Its five operators alone: conformance on every vector of theirs it is sent.
    let only = Options {
        only: FIVE.iter().map(|s| s.to_string()).collect(),
        ..o
    };
    let v = grade::verdicts(&grade::grade(&root().join("ops-conformance"), &only).unwrap(), &only);
    assert!(v.values().all(|v| v.conforms()), "{v:?}");
}

#[test]
fn the_walk_through_shows_the_graders_report_of_a_rounding_bug() {
    let text = std::fs::read_to_string(example()).unwrap();
    let right = "        return (p + (1 << (s - 1))) >> s\n";
    let wrong = "        return (p + (1 << (s - 1))) >> s if p >= 0 else -((-p + (1 << (s - 1))) >> s)  # C round()\n";
    assert_eq!(
        text.matches(right).count(),
        1,
        "examples/fill.py's R_half_up line moved"
    );
    let dir = std::env::temp_dir().join(format!("wai-first-grade-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mine = dir.join("my-fill.py");
    std::fs::write(&mine, text.replace(right, wrong)).unwrap();
    let o = Options {
        only: vec!["rescale".into()],
        ..Options::new(&format!("python3 {}", mine.display()))
    };
    let grades = grade::grade(&root().join("ops-conformance"), &o).unwrap();
    let report = grade::summary(&grades, &o).replace(&mine.display().to_string(), "my-fill.py");
    let shown = doc_block("buggy");
    assert!(
        report.starts_with(&shown),
        "docs/first-grade.md shows\n{shown}\nthe grader says\n{report}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}
