//! The scale tier under faults (docs/protocol.md, the scale tier): an implementation that crashes,
//! hangs or answers garbage on one record loses that record alone; it is started again on the
//! records after it, whose grades are kept, and the lost record says what it was lost to.

mod common;

use common::{checker, root};
use serde_json::Value;
use std::time::Duration;
use wai_oracle::suite::SCALE;
use xtask::grade::{self, Ending, Graded, Options, Outcome};

/// The first five records of `scale/igdn.jsonl` (102 to 1,530 elements each).
fn records() -> Vec<Value> {
    let text = std::fs::read_to_string(root().join("ops-conformance/scale/igdn.jsonl")).unwrap();
    text.lines().take(5).map(|l| serde_json::from_str(l).unwrap()).collect()
}

/// An implementation that fills each request with `wai-checker fill`, but does `fault` (a shell
/// command) on the request of the third record.
fn faulty(fault: &str, ids: &[String]) -> String {
    let script = format!(
        "while IFS= read -r line; do case \"$line\" in *'\"id\":\"{}\"'*) {fault};; \
         *) printf '%s\\n' \"$line\" | {} fill;; esac; done",
        ids[2],
        checker().display()
    );
    format!("sh -c '{}'", script.replace('\'', "'\\''"))
}

/// `records` graded as the scale suite with `implementation`.
fn grade_scale(implementation: &str, records: Vec<Value>, timeout: u64) -> (Vec<Graded>, Ending) {
    let o = Options {
        suites: vec![SCALE.name.into()],
        timeout: Duration::from_secs(timeout),
        ..Options::new(implementation)
    };
    let sent = records.into_iter().map(|r| grade::Sent::new(r, o.role)).collect();
    grade::grade_scale(&root().join("ops-conformance"), sent, &o).unwrap()
}

/// The five records graded with the checker doing `fault` on the third.
fn grade(fault: &str, timeout: u64) -> (Vec<Graded>, Ending) {
    let records = records();
    let ids: Vec<String> = records.iter().map(|r| r["id"].as_str().unwrap().to_string()).collect();
    grade_scale(&faulty(fault, &ids), records, timeout)
}

/// Every record but the third passed; the third's outcome.
fn third(graded: &[Graded]) -> &Outcome {
    assert_eq!(graded.len(), 5);
    for (i, g) in graded.iter().enumerate() {
        assert!(i == 2 || g.outcome == Outcome::Passed, "record {i}: {:?}", g.outcome);
    }
    &graded[2].outcome
}

#[test]
fn a_crash_loses_one_record_and_the_rest_are_graded() {
    let (graded, ending) = grade("exit 3", 60);
    assert_eq!(ending, Ending::Exited(3));
    let Outcome::Unanswered(why) = third(&graded) else {
        panic!("{graded:?}")
    };
    assert_eq!(
        why,
        "the implementation exited with status 3 before answering; it was started again on the records after it"
    );
}

#[test]
fn a_hang_loses_one_record_at_the_timeout_and_the_rest_are_graded() {
    let (graded, ending) = grade("sleep 600", 2);
    assert_eq!(ending, Ending::TimedOut);
    let Outcome::Unanswered(why) = third(&graded) else {
        panic!("{graded:?}")
    };
    assert!(
        why.starts_with("the implementation did not answer within the timeout; it was started again"),
        "{why}"
    );
}

#[test]
fn garbage_fails_its_record_alone() {
    let (graded, ending) = grade("echo garbage", 60);
    assert_eq!(ending, Ending::Exited(0));
    let Outcome::Failed(d) = third(&graded) else {
        panic!("{graded:?}")
    };
    assert!(d[0].received.starts_with("not JSON"), "{d:?}");
}

#[test]
fn an_implementation_that_always_crashes_is_started_again_at_most_eight_times() {
    // `exit 3` on every record: nine runs, each losing one record, and the rest unanswered.
    let (graded, ending) = grade_scale("exit 3", [records(), records(), records()].concat(), 60);
    assert_eq!(ending, Ending::Exited(3));
    let again = graded
        .iter()
        .filter(
            |g| matches!(&g.outcome, Outcome::Unanswered(w) if w.ends_with("started again on the records after it")),
        )
        .count();
    assert_eq!(again, 8);
    assert!(graded.iter().all(|g| matches!(g.outcome, Outcome::Unanswered(_))));
}
