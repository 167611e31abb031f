//! The grader's worked examples: the checker graded as a third party passes everything, and the
//! checker built with its `mutants` feature — each mutant a real wrong implementation of one rule,
//! or a process that crashes, hangs or prints garbage — is caught on the vectors that expose it
//! and on no others.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;
use xtask::grade::{self, FileGrade, Options, Outcome};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// The checker, in a release build with and without the mutants (`xtask::mutant_checker`).
fn checker(mutants: bool) -> PathBuf {
    static PLAIN: OnceLock<PathBuf> = OnceLock::new();
    static MUTANT: OnceLock<PathBuf> = OnceLock::new();
    let cell = if mutants { &MUTANT } else { &PLAIN };
    cell.get_or_init(|| {
        if mutants {
            xtask::mutant_checker(&root()).unwrap()
        } else {
            xtask::build(&root(), &[("wai-checker", "wai-checker")])
                .unwrap()
                .join("wai-checker")
        }
    })
    .clone()
}

fn options(implementation: String, suites: &[&str], timeout: f64) -> Options {
    // The checker computes every field: graded as every target.
    Options {
        role: grade::Role::All,
        suites: suites.iter().map(|s| s.to_string()).collect(),
        timeout: Duration::from_secs_f64(timeout),
        ..Options::new(&implementation)
    }
}

fn run(mutant: Option<&str>, suites: &[&str], timeout: f64) -> Vec<FileGrade> {
    let implementation = match mutant {
        None => format!("{} fill", checker(false).display()),
        Some(m) => format!("WAI_MUTANT={m} {} fill", checker(true).display()),
    };
    grade::grade(
        &root().join("ops-conformance"),
        &options(implementation, suites, timeout),
    )
    .unwrap()
}

/// The `file#id` of every record that did not pass.
fn not_passed(grades: &[FileGrade]) -> BTreeSet<String> {
    grades
        .iter()
        .flat_map(|g| {
            g.records
                .iter()
                .filter(|r| r.outcome != Outcome::Passed)
                .map(move |r| format!("{}#{}", g.file.path, r.id))
        })
        .collect()
}

/// The records whose graph (a WHG1 hex in the committed line) satisfies `holds`.
fn records_where(suites: &[&str], holds: impl Fn(&str) -> bool) -> BTreeSet<String> {
    let tree = root().join("ops-conformance");
    let mut out = BTreeSet::new();
    for f in grade::select(&tree, &options(String::from("x"), suites, 1.0)) {
        for line in std::fs::read_to_string(tree.join(&f.path)).unwrap().lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            let graph = v["graph"].as_str().and_then(|h| hex::decode(h).ok());
            let model = graph.and_then(|b| wai_oracle::whg1::read::read(&b).ok());
            if model.is_some_and(|g| holds(&format!("{g:?}"))) {
                out.insert(format!("{}#{}", f.path, v["id"].as_str().unwrap()));
            }
        }
    }
    out
}

#[test]
fn the_checker_graded_as_a_third_party_passes_everything() {
    let grades = run(None, &[], 120.0);
    assert!(grades.len() >= 50);
    assert_eq!(not_passed(&grades), BTreeSet::new());
    let verdicts = grade::verdicts(&grades, &options(String::new(), &[], 1.0));
    assert!(verdicts.values().all(|v| v.conforms()), "{verdicts:?}");
    assert!(verdicts.contains_key("operator implementation, acc32"));
    // docs/example-grade.md is this report, as `cargo xtask grade --impl "target/release/wai-checker
    // fill" --role all --markdown docs/example-grade.md` writes it.
    let shown = options(String::from("target/release/wai-checker fill"), &[], 1.0);
    let doc = std::fs::read_to_string(root().join("docs/example-grade.md")).unwrap();
    assert_eq!(
        grade::markdown(&grades, &shown),
        doc,
        "regenerate docs/example-grade.md"
    );
}

#[test]
fn half_even_ties_rounded_up_fail_only_graphs_that_round_half_even() {
    let failed = not_passed(&run(Some("half-even-up"), &["vectors", "graphs"], 120.0));
    let exposed = records_where(&["vectors", "graphs"], |g| g.contains("HalfEven"));
    assert!(!failed.is_empty(), "no committed vector catches ties rounded up");
    assert!(
        failed.is_subset(&exposed),
        "{:?}",
        failed.difference(&exposed).collect::<Vec<_>>()
    );
}

#[test]
fn an_ignored_check_policy_fails_only_graphs_with_a_check() {
    let failed = not_passed(&run(Some("check-ignored"), &["vectors", "graphs"], 120.0));
    let exposed = records_where(&["vectors", "graphs"], |g| g.contains("Check"));
    assert!(!failed.is_empty());
    assert!(
        failed.is_subset(&exposed),
        "{:?}",
        failed.difference(&exposed).collect::<Vec<_>>()
    );
}

#[test]
fn floor_as_truncation_is_caught() {
    let grades = run(Some("floor-truncates"), &["vectors", "graphs", "stage"], 120.0);
    let failed = not_passed(&grades);
    assert!(!failed.is_empty());
    // Only integer evaluation changed: no record of another suite is touched.
    assert!(
        failed
            .iter()
            .all(|f| f.starts_with("vectors/") || f.starts_with("graphs/")),
        "{failed:?}"
    );
}

#[test]
fn a_state_not_carried_fails_only_graphs_with_state() {
    let failed = not_passed(&run(Some("state-not-carried"), &["vectors", "graphs"], 120.0));
    let exposed = records_where(&["vectors", "graphs"], |g| g.contains("State"));
    assert!(!failed.is_empty());
    assert!(
        failed.is_subset(&exposed),
        "{:?}",
        failed.difference(&exposed).collect::<Vec<_>>()
    );
}

#[test]
fn a_certificate_key_out_of_order_fails_the_certifier_only() {
    let grades = run(
        Some("certificate-key-order"),
        &["lowerings", "vectors", "graphs"],
        120.0,
    );
    let failed = not_passed(&grades);
    assert!(!failed.is_empty());
    assert!(failed.iter().all(|f| f.starts_with("lowerings/")), "{failed:?}");
    let verdicts = grade::verdicts(&grades, &options(String::new(), &[], 1.0));
    assert!(!verdicts["certifier"].conforms());
    assert!(verdicts["operator implementation, acc64"].conforms());
}

#[test]
fn a_crash_a_hang_and_garbage_mark_their_files_and_spare_the_others() {
    let crash = run(Some("crash-on-stage"), &["stage", "cis2"], 60.0);
    for g in &crash {
        let stage = g.file.suite == "stage";
        assert!(
            g.records
                .iter()
                .all(|r| matches!(r.outcome, Outcome::Unanswered(_)) == stage),
            "{}",
            g.file.path
        );
    }
    let hang = run(Some("hang-on-cis2"), &["cis2", "detessdequant"], 2.0);
    for g in &hang {
        let ops = g.file.path == "cis2/ops.jsonl";
        assert_eq!(
            g.records.iter().any(|r| matches!(r.outcome, Outcome::Unanswered(_))),
            ops,
            "{}",
            g.file.path
        );
        if ops {
            assert_eq!(g.ending, grade::Ending::TimedOut);
        }
    }
    let garbage = run(Some("garbage-on-dequant"), &["detessdequant", "stage"], 60.0);
    for g in &garbage {
        let calls = g.file.path == "detessdequant/calls.jsonl";
        let not_json = g
            .records
            .iter()
            .any(|r| matches!(&r.outcome, Outcome::Failed(d) if d[0].received.starts_with("not JSON")));
        assert_eq!(not_json, calls, "{}", g.file.path);
    }
}
