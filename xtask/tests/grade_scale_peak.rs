//! The grader's peak memory on the scale tier's largest record (`pad_rep`'s, `2^26` output elements
//! and `2^26 + 2^22`-odd input elements written out), graded with the checker as the
//! implementation: stated in docs/fuzzing.md (`--nocapture` prints it; about 12 s, and 4 GB for the
//! checker's fill). Alone in its test binary, so that the process's peak is the grader's.

mod common;

use common::{checker, peak_rss, root};
use serde_json::Value;
use wai_oracle::suite::SCALE;
use xtask::grade::{self, Ending, Options, Outcome};

#[test]
fn the_grader_holds_the_largest_scale_record_in_a_stated_bound() {
    let tree = root().join("ops-conformance");
    let text = std::fs::read_to_string(tree.join("scale/pad_rep.jsonl")).unwrap();
    let record: Value = serde_json::from_str(text.lines().last().unwrap()).unwrap();
    let o = Options {
        suites: vec![SCALE.name.into()],
        ..Options::new(&format!("{} fill", checker().display()))
    };
    std::fs::write("/proc/self/clear_refs", "5").unwrap();
    let before = peak_rss();
    let (graded, ending) = grade::grade_scale(&tree, vec![grade::Sent::new(record, o.role)], &o).unwrap();
    let grew = peak_rss() - before;
    assert_eq!((ending, &graded[0].outcome), (Ending::Exited(0), &Outcome::Passed));
    eprintln!("the grader's peak grew by {} MiB", grew >> 20);
    // One answer line, held as bytes (at most its allowance), and the request being written.
    assert!(grew < 2 << 30, "the grader grew by {grew} bytes");
}
