//! A refusal with another code (docs/protocol.md, "Refused as required, with another code"): on
//! DetessDequant's calls (reading D3) and CIS-2's decodes (reading C12) the specifications fix when
//! to refuse and name no code, so an implementation that refuses with its own codes conforms, and
//! the report lists those records apart.

mod common;

use common::{checker, root};
use std::time::Duration;
use xtask::grade::{self, Options, Outcome, Role};

/// The grade of `suite` under `--role all` of the checker, its output edited by `sed`.
fn grade_edited(suite: &str, sed: &str) -> (Vec<grade::FileGrade>, Options) {
    let implementation = format!("{} fill | sed '{sed}'", checker().display());
    let o = Options {
        role: Role::All,
        suites: vec![suite.into()],
        timeout: Duration::from_secs(120),
        ..Options::new(&implementation)
    };
    (grade::grade(&root().join("ops-conformance"), &o).unwrap(), o)
}

/// The checker, its refusal code `from` renamed `to` on the way out.
fn grade(suite: &str, from: &str, to: &str) -> (Vec<grade::FileGrade>, Options) {
    grade_edited(suite, &format!("s/\"refuse\":\"{from}\"/\"refuse\":\"{to}\"/"))
}

/// The records that are not passed, as `id: outcome`.
fn not_passed(grades: &[grade::FileGrade]) -> Vec<String> {
    let records = grades.iter().flat_map(|g| &g.records);
    records
        .filter(|r| r.outcome != Outcome::Passed)
        .map(|r| format!("{}: {:?}", r.id, r.outcome))
        .collect()
}

/// The committed records of `file` refused with `code`.
fn refused_with(file: &str, code: &str) -> usize {
    let text = std::fs::read_to_string(root().join("ops-conformance").join(file)).unwrap();
    let records = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap());
    records.filter(|r| r["expect"]["refuse"] == code).count()
}

#[test]
fn another_code_for_a_detessdequant_refusal_is_told_apart_and_conforms() {
    let (grades, o) = grade("detessdequant", "scale", "bad_scale");
    let differs = not_passed(&grades);
    // Every record refused `scale`, and nothing else.
    assert_eq!(
        differs.len(),
        refused_with("detessdequant/calls.jsonl", "scale"),
        "{differs:#?}"
    );
    assert!(
        differs
            .iter()
            .all(|d| d.contains("CodeDiffers { reading: \"D3\", committed: \"scale\", received: \"bad_scale\" }"))
    );
    let verdicts = grade::verdicts(&grades, &o);
    assert!(verdicts.values().all(|v| v.conforms()), "{verdicts:?}");
    let summary = grade::summary(&grades, &o);
    assert!(summary.contains(
        "detessdequant/calls.jsonl#refuse-scale-nan: refused as required; code differs (reading D3): committed \"scale\", received \"bad_scale\""
    ), "{summary}");
}

#[test]
fn another_code_for_a_cis2_refusal_is_told_apart() {
    let (grades, _) = grade("cis2", "tensor_mismatch", "weights_wrong");
    let differs = not_passed(&grades);
    assert_eq!(
        differs.len(),
        refused_with("cis2/decode.jsonl", "tensor_mismatch"),
        "{differs:#?}"
    );
    assert!(
        differs[0]
            .contains("CodeDiffers { reading: \"C12\", committed: \"tensor_mismatch\", received: \"weights_wrong\" }")
    );
}

#[test]
fn a_refusal_where_an_output_is_due_still_fails() {
    // Refusing a call that succeeds is a failure, whatever the code: the seed's example's outputs
    // replaced by a refusal.
    let outputs = "\"outputs\":\\[\"0000004000000000000080be000002420000fac10000403f\"\\]";
    let (grades, _) = grade_edited("detessdequant", &format!("s/{outputs}/\"refuse\":\"scale\"/"));
    let failed = not_passed(&grades);
    assert!(
        !failed.is_empty() && failed.iter().all(|f| f.contains("Failed(")),
        "{failed:#?}"
    );
}
