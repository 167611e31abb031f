//! The grader's fourth outcome: an implementation that declines a record with
//! `{"id":…,"not_supported":"reason"}` makes it not gradable, apart from passed, failed and
//! unanswered, and keeps every verdict it touches from "conforms".

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use xtask::grade::{self, Ending, FileGrade, GradedFile, Options, Outcome};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn options(implementation: &str, only: &[&str]) -> Options {
    Options {
        suites: vec!["vectors".into()],
        only: only.iter().map(|s| s.to_string()).collect(),
        ..Options::new(implementation)
    }
}

fn record(id: &str, profiles: &[&str]) -> Value {
    json!({ "decodes": [], "graph": "00", "id": id, "load": "ok", "profiles": profiles })
}

/// Graph vectors as `--role all` grades them (every target's verdict).
fn sent(records: Vec<Value>) -> Vec<grade::Sent> {
    records
        .into_iter()
        .map(|r| grade::Sent::new(r, grade::Role::All))
        .collect()
}

fn line(v: &Value) -> String {
    format!("{v}\n")
}

fn file_grade(records: Vec<grade::Graded>) -> FileGrade {
    FileGrade {
        file: GradedFile {
            path: "vectors/x.jsonl".into(),
            suite: "vectors".into(),
            provisional: false,
        },
        records,
        ending: Ending::Exited(0),
        stderr: vec![],
        withheld: vec![],
    }
}

#[test]
fn a_not_supported_answer_is_not_gradable_and_the_verdict_is_on_the_gradable_subset() {
    let committed = sent(vec![record("a", &["acc32", "acc64"]), record("b", &["acc32", "acc64"])]);
    let response = line(&json!({ "id": "a", "not_supported": "no such operator" })) + &line(&committed[1].record);
    let graded = grade::grade_lines(&committed, response.as_bytes(), &Ending::Exited(0));
    assert_eq!(graded[0].outcome, Outcome::NotGradable("no such operator".into()));
    assert_eq!(graded[1].outcome, Outcome::Passed);
    let grades = vec![file_grade(graded)];
    let o = options("x", &[]);
    let v = grade::verdicts(&grades, &o);
    let acc32 = v["operator implementation, acc32"];
    assert_eq!((acc32.passed, acc32.failed, acc32.not_gradable), (1, 0, 1));
    assert!(!acc32.conforms());
    assert!(acc32.no_failure());
    assert_eq!(acc32.status(), "conforms on the gradable subset");
    // The certifier cannot be judged on a declined record either.
    assert_eq!(v["certifier"].not_gradable, 1);

    let summary = grade::summary(&grades, &o);
    assert!(summary.contains("not gradable"), "{summary}");
    assert!(
        summary.contains("conforms on the gradable subset (1/1 graded, 1 not gradable)"),
        "{summary}"
    );
    assert!(summary.contains("no such operator"), "{summary}");
    assert!(grade::failures(&grades).is_empty());

    let report = grade::json_report(&grades, &o);
    assert_eq!(report["files"][0]["records"][0]["outcome"], "not_gradable");
    assert_eq!(report["files"][0]["records"][0]["why"], "no such operator");
    assert_eq!(report["verdicts"]["operator implementation, acc32"]["not_gradable"], 1);
    assert_eq!(report["verdicts"]["operator implementation, acc32"]["conforms"], false);

    let md = grade::markdown(&grades, &o);
    assert!(md.contains("| x | 2 | 1 | ✓ 1/1 (+1 n/g) | ✓ 1/1 (+1 n/g) |"), "{md}");
    assert!(md.contains("| 1 | no such operator |"), "{md}");
}

#[test]
fn only_the_exact_form_declines() {
    let committed = sent(vec![record("a", &["acc64"]); 4]);
    let response = [
        json!({ "id": "b", "not_supported": "wrong id" }),
        json!({ "id": "a", "not_supported": "" }),
        json!({ "id": "a", "not_supported": "extra member", "load": "ok" }),
        json!({ "id": "a", "not_supported": 3 }),
    ]
    .iter()
    .map(line)
    .collect::<String>();
    let graded = grade::grade_lines(&committed, response.as_bytes(), &Ending::Exited(0));
    assert!(
        graded.iter().all(|g| matches!(g.outcome, Outcome::Failed(_))),
        "{graded:?}"
    );
}

#[test]
fn an_implementation_that_declines_everything_is_not_graded_and_never_conforms() {
    // A fake implementation: every request line answered with its id and a reason.
    let fake = r#"sed -E 's/.*"id":"([^"]*)".*/{"id":"\1","not_supported":"fake"}/'"#;
    let tree = root().join("ops-conformance");
    let grades = grade::grade(&tree, &options(fake, &["relu", "abs"])).unwrap();
    assert_eq!(grades.len(), 2);
    assert!(
        grades
            .iter()
            .flat_map(|g| &g.records)
            .all(|r| r.outcome == Outcome::NotGradable("fake".into()))
    );
    let v = grade::verdicts(&grades, &options(fake, &[]));
    assert!(v.values().all(|v| v.status() == "not graded" && !v.conforms()), "{v:?}");
}
