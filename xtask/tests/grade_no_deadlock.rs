//! The grader never blocks with both pipes full (docs/protocol.md, Grading): on a stream of 256 MiB
//! of requests, an implementation that answers each line as it reads it, one that reads everything
//! before answering, and one that answers without reading each finish or time out, with the answers
//! they gave graded. Ignored by `cargo test` for its size; `.ci/run` runs it.

use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};
use xtask::grade::{self, Ending, FileGrade, Options, Outcome};

/// Records of 64 KiB each, 4,096 of them: 256 MiB. A graph vector without `load`, its one
/// computed field under `--role operator` (`profiles` is given), is its own request, so an
/// implementation that echoes a request has answered it exactly, and each answer is graded by
/// comparing bytes.
fn tree() -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(d.path().join("vectors")).unwrap();
    let graph = "0".repeat(64 << 10);
    let mut text = String::with_capacity(4096 * (graph.len() + 64));
    for i in 0..4096 {
        text.push_str(
            &json!({"decodes": [], "graph": graph, "id": format!("r{i:04}"), "profiles": ["acc32"]}).to_string(),
        );
        text.push('\n');
    }
    assert!(text.len() >= 256 << 20);
    std::fs::write(d.path().join("vectors/big.jsonl"), text).unwrap();
    d
}

fn grade(tree: &Path, implementation: &str, timeout: u64) -> FileGrade {
    let o = Options {
        suites: vec!["vectors".into()],
        timeout: Duration::from_secs(timeout),
        ..Options::new(implementation)
    };
    let start = Instant::now();
    let mut grades = grade::grade(tree, &o).unwrap();
    eprintln!("{implementation}: {:.1} s", start.elapsed().as_secs_f64());
    assert_eq!(grades.len(), 1);
    grades.remove(0)
}

fn passed(g: &FileGrade) -> usize {
    g.records.iter().filter(|r| r.outcome == Outcome::Passed).count()
}

#[test]
#[ignore = "256 MiB each way; .ci/run runs it"]
fn the_grader_never_blocks_on_full_pipes() {
    let tree = tree();
    // Answers each line as it reads it.
    let g = grade(tree.path(), "cat", 120);
    assert_eq!((g.ending.clone(), passed(&g)), (Ending::Exited(0), 4096));
    // Reads everything before it answers.
    let g = grade(tree.path(), "tac | tac", 120);
    assert_eq!((g.ending.clone(), passed(&g)), (Ending::Exited(0), 4096));
    // Answers its first 100 records from the file itself without reading a byte, then hangs: it
    // is killed at the timeout, and what it wrote is graded.
    let g = grade(tree.path(), "head -n 100 vectors/big.jsonl; sleep 600", 5);
    assert_eq!(g.ending, Ending::TimedOut);
    assert_eq!(passed(&g), 100);
    assert!(
        g.records[100..]
            .iter()
            .all(|r| matches!(r.outcome, Outcome::Unanswered(_)))
    );
}
