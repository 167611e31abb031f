//! The scale grader's memory with a runaway implementation: an answer line that never ends is kept
//! only up to its record's allowance, however much the implementation writes before its timeout.
//! Alone in its test binary, so that the process's peak is this test's.

mod common;

use common::peak_rss;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;
use wai_oracle::suite::SCALE;
use xtask::grade::{self, Ending, Options, Outcome};

#[test]
fn an_endless_answer_line_is_cut_at_its_allowance() {
    let tree: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .join("ops-conformance");
    let text = std::fs::read_to_string(tree.join("scale/apply.jsonl")).unwrap();
    // A record of 31 elements: its allowance is about 1 MiB.
    let record: Value = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|r| r["id"] == "apply-c-1")
        .unwrap();
    let o = Options {
        suites: vec![SCALE.name.into()],
        timeout: Duration::from_secs(1),
        ..Options::new("yes | tr -d '\\n'")
    };
    // Reset the peak to what is resident now.
    std::fs::write("/proc/self/clear_refs", "5").unwrap();
    let before = peak_rss();
    let sent = |r: serde_json::Value| grade::Sent::new(r, o.role);
    let (graded, ending) = grade::grade_scale(&tree, vec![sent(record.clone()), sent(record)], &o).unwrap();
    let grew = peak_rss() - before;
    assert_eq!(ending, Ending::TimedOut);
    assert!(
        matches!(&graded[0].outcome, Outcome::Failed(d) if d[0].received.starts_with("a longer line")),
        "{graded:?}"
    );
    assert!(matches!(graded[1].outcome, Outcome::Unanswered(_)), "{graded:?}");
    // `yes` writes hundreds of megabytes a second; the grader keeps one allowance of them.
    assert!(grew < 32 << 20, "the grader grew by {grew} bytes");
}
