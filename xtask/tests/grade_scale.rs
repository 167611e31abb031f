//! The scale tier under the grader (`--suite scale`): recipes expanded before the implementation
//! sees a request, written-out answers folded back to digests, an output that differs reported
//! element by element against the checker's expected tensor, and a declined record not gradable.

mod common;

use common::{checker, root};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;
use wai_oracle::suite::SCALE;
use xtask::grade::{self, Diff, Options, Outcome};

fn tree() -> PathBuf {
    root().join("ops-conformance")
}

/// `wai-checker fill`, built in release.
fn fill() -> String {
    format!("{} fill", checker().display())
}

/// The scale suite, `only` its smallest files.
fn options(implementation: String, only: &[&str]) -> Options {
    Options {
        suites: vec![SCALE.name.into()],
        only: only.iter().map(|s| s.to_string()).collect(),
        timeout: Duration::from_secs(120),
        ..Options::new(&implementation)
    }
}

/// A directory of this test's own.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("grade-scale-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn the_scale_suite_runs_only_when_named() {
    let suites = |args: &[&str]| -> BTreeSet<String> {
        let args: Vec<String> = ["--impl", "x"].iter().chain(args).map(|s| s.to_string()).collect();
        let o = Options::parse(&args).unwrap();
        grade::select(&tree(), &o).into_iter().map(|f| f.suite).collect()
    };
    let default = suites(&[]);
    assert!(default.contains("vectors") && !default.contains("scale"), "{default:?}");
    assert_eq!(suites(&["--suite", "scale"]), BTreeSet::from(["scale".to_string()]));
    let all = suites(&["--suite", "all"]);
    assert!(all.contains("scale") && default.is_subset(&all), "{all:?}");
    assert!(Options::parse(&["--impl".into(), "x".into(), "--suite".into(), "scales".into()]).is_err());
}

#[test]
fn the_checker_passes_the_scale_files() {
    let o = options(fill(), &["igdn", "layernorm_c"]);
    let grades = grade::grade(&tree(), &o).unwrap();
    let paths: Vec<&str> = grades.iter().map(|g| g.file.path.as_str()).collect();
    assert_eq!(paths, ["scale/igdn.jsonl", "scale/layernorm_c.jsonl"]);
    assert_eq!(grade::failures(&grades), Vec::<String>::new());
    assert!(
        grades
            .iter()
            .flat_map(|g| &g.records)
            .all(|r| r.outcome == Outcome::Passed)
    );
    // Scale records count in the operator verdicts, each file on its operator's row.
    let v = grade::verdicts(&grades, &o);
    let records: usize = grades.iter().map(|g| g.records.len()).sum();
    assert_eq!(v["operator implementation, acc64"].passed, records, "{v:?}");
    assert!(v.values().all(|v| v.conforms()), "{v:?}");
    let md = grade::markdown(&grades, &o);
    assert!(md.contains("| igdn | 18 | 18 |"), "{md}");
}

/// Pipes the answers through unchanged but for one element of one output, and writes what it
/// changed to `changed.json`: the record `id`, its decode `i`'s first output with more than one
/// channel, row and column, at `(C − 1, H / 2, W − 2)`.
const ALTER: &str = r#"
import json, sys
out, target, i = sys.argv[1], sys.argv[2], int(sys.argv[3])
for line in sys.stdin:
    r = json.loads(line)
    if r["id"] == target:
        ts = r["decodes"][i]["expect"]["outputs"]
        k = next(k for k, t in enumerate(ts) if min(map(int, t["shape"])) > 1)
        c, h, w = map(int, ts[k]["shape"])
        at = (c - 1, h // 2, w - 2)
        n = (at[0] * h + at[1]) * w + at[2]
        old = ts[k]["data"][n]
        ts[k]["data"][n] = str(int(old) + 1)
        json.dump({"path": f"decodes[{i}].expect.outputs[{k}]", "n": n, "at": at, "old": old,
                   "new": ts[k]["data"][n]}, open(out, "w"))
        line = json.dumps(r, separators=(",", ":"), sort_keys=True) + "\n"
    sys.stdout.write(line)
"#;

#[test]
fn one_element_changed_is_reported_with_its_position() {
    let dir = scratch("alter");
    std::fs::write(dir.join("alter.py"), ALTER).unwrap();
    let changed = dir.join("changed.json");
    let implementation = format!(
        "{} | python3 {} {} igdn-widths 2",
        fill(),
        dir.join("alter.py").display(),
        changed.display()
    );
    let grades = grade::grade(&tree(), &options(implementation, &["igdn"])).unwrap();
    let c: Value = serde_json::from_str(&std::fs::read_to_string(&changed).unwrap()).unwrap();
    let at = &c["at"];
    let failed: Vec<(&str, &Outcome)> = grades[0]
        .records
        .iter()
        .filter(|r| r.outcome != Outcome::Passed)
        .map(|r| (r.id.as_str(), &r.outcome))
        .collect();
    // Only the changed element: the record's inputs and other outputs fold back to the committed form.
    let want = Diff {
        path: format!(
            "{}.data[{}] (c, y, x) = ({}, {}, {})",
            c["path"].as_str().unwrap(),
            c["n"],
            at[0],
            at[1],
            at[2]
        ),
        committed: json!(c["old"]).to_string(),
        received: json!(c["new"]).to_string(),
    };
    assert_eq!(failed, [("igdn-widths", &Outcome::Failed(vec![want]))]);
    let report = grade::failures(&grades);
    assert!(
        report[0].starts_with("scale/igdn.jsonl#igdn-widths decodes[2].expect.outputs[0].data["),
        "{report:?}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_declined_scale_record_is_not_gradable() {
    let fake = r#"sed -E 's/.*"id":"([^"]*)".*/{"id":"\1","not_supported":"fake"}/'"#;
    let o = options(fake.into(), &["igdn"]);
    let grades = grade::grade(&tree(), &o).unwrap();
    assert!(
        grades
            .iter()
            .flat_map(|g| &g.records)
            .all(|r| r.outcome == Outcome::NotGradable("fake".into()))
    );
    let v = grade::verdicts(&grades, &o);
    assert_eq!(v["operator implementation, acc64"].not_gradable, 18);
    assert!(v.values().all(|v| v.status() == "not graded"), "{v:?}");
}

/// The committed record `id` of a scale file.
fn record(file: &str, id: &str) -> Value {
    let text = std::fs::read_to_string(tree().join("scale").join(file)).unwrap();
    let records = text.lines().map(|l| serde_json::from_str::<Value>(l).unwrap());
    records.into_iter().find(|r| r["id"] == id).unwrap()
}

#[test]
fn a_committed_digest_the_checker_disagrees_with_is_called_a_suite_bug() {
    let mut r = record("igdn.jsonl", "igdn-c-7");
    r["decodes"][0]["expect"]["outputs"][0]["sha256"] = json!("0".repeat(64));
    let r = grade::Sent::new(r, grade::Role::Operator);
    let (graded, _) = grade::grade_scale(&tree(), vec![r], &options(fill(), &[])).unwrap();
    let Outcome::Failed(d) = &graded[0].outcome else {
        panic!("{graded:?}")
    };
    assert_eq!(
        d[0].path,
        "decodes[0].expect.outputs[0] (SUITE BUG: the checker's expected tensor is not the committed one)"
    );
    assert!(d[0].received.starts_with("the checker's {\"samples\""), "{d:?}");
    // The implementation agrees with the checker: no element differs.
    assert_eq!(d.len(), 1, "{d:?}");
}
