//! `--role` (integer-operators §1's targets, docs/protocol.md "Roles"): each target is sent the
//! records it computes something of and graded on its own fields only, so an operator
//! implementation needs no certifier and a certifier runs no decode.

mod common;

use common::{checker, root};
use std::path::PathBuf;
use std::process::Command;
use xtask::grade::{self, Options, Outcome, Role};

fn tree() -> PathBuf {
    root().join("ops-conformance")
}

/// The checker's fill with the answer's lines passed through a Python expression `edit` on the
/// parsed record `r` (and `q`, the request), written back canonically.
fn edited(edit: &str) -> String {
    let script = format!(
        "import json, subprocess, sys\n\
         for q in sys.stdin:\n\
         \x20   q = json.loads(q)\n\
         \x20   p = subprocess.run([{checker:?}, 'fill'], input=json.dumps(q) + '\\n', capture_output=True, text=True)\n\
         \x20   r = json.loads(p.stdout)\n\
         \x20   {edit}\n\
         \x20   print(json.dumps(r, separators=(',', ':'), sort_keys=True), flush=True)\n",
        checker = checker().display().to_string()
    );
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("wai-role-{}-{n}.py", std::process::id()));
    std::fs::write(&path, script).unwrap();
    format!("python3 {}", path.display())
}

fn options(implementation: &str, role: Role, suites: &[&str], only: &[&str]) -> Options {
    Options {
        role,
        suites: suites.iter().map(|s| s.to_string()).collect(),
        only: only.iter().map(|s| s.to_string()).collect(),
        ..Options::new(implementation)
    }
}

#[test]
fn an_operator_implementation_without_profiles_conforms_and_is_not_graded_as_a_certifier() {
    // Profiles wrong (and on another record absent): the certifier's field, not the operator's.
    let fill = edited("r.update(profiles=['acc16']) if r['id'] < 'm' else r.pop('profiles', None)");
    let only = ["rescale", "conv", "mixed"];
    let o = options(&fill, Role::Operator, &[], &only);
    let grades = grade::grade(&tree(), &o).unwrap();
    let v = grade::verdicts(&grades, &o);
    assert!(v["operator implementation, acc32"].conforms(), "{v:?}");
    assert!(v["operator implementation, acc64"].conforms(), "{v:?}");
    assert!(!v.contains_key("certifier"), "{v:?}");
    // Graded as every target, the same answers fail the certifier and only it.
    let o = options(&fill, Role::All, &[], &only);
    let v = grade::verdicts(&grade::grade(&tree(), &o).unwrap(), &o);
    assert!(v["operator implementation, acc64"].conforms(), "{v:?}");
    assert!(!v["certifier"].conforms() && v["certifier"].failed > 0, "{v:?}");
}

#[test]
fn an_operator_is_given_the_profiles_and_not_sent_what_load_step_8_refuses() {
    // Answers the profiles it was given: right only if it was given the committed tags.
    let fill = edited("r['profiles'] = q['profiles']");
    let o = options(&fill, Role::Operator, &["vectors"], &["rescale", "conv"]);
    let grades = grade::grade(&tree(), &o).unwrap();
    assert!(
        grades
            .iter()
            .flat_map(|g| &g.records)
            .all(|r| r.outcome == Outcome::Passed)
    );
    // rescale's q past 64 bits and conv's accumulators past acc64 are refused by the bounds pass:
    // the certifier's, withheld from an operator implementation and said so.
    let withheld: Vec<&str> = grades
        .iter()
        .flat_map(|g| &g.withheld)
        .map(|(id, _)| id.as_str())
        .collect();
    assert!(withheld.contains(&"rescale-q-past-64"), "{withheld:?}");
    assert_eq!(withheld.len(), 5, "{withheld:?}");
    let summary = grade::summary(&grades, &o);
    assert!(
        summary.contains("not sent: 5 records (vectors/conv.jsonl, vectors/rescale.jsonl): refused at load step 8"),
        "{summary}"
    );
    // Every record refused at steps 1–7 (the load-check graphs) is the operator's to refuse.
    let o = options(&fill, Role::Operator, &["graphs"], &["load_checks"]);
    let grades = grade::grade(&tree(), &o).unwrap();
    let sent = grades.iter().map(|g| g.records.len()).sum::<usize>();
    assert!(sent >= 30, "{sent}");
}

#[test]
fn a_sink_is_not_charged_for_the_certificate_and_a_certifier_is() {
    let fill = edited("r['expect']['certificate_sha256'] = None if 'certificate_sha256' in r.get('expect', {}) else 0");
    let o = options(&fill, Role::Sink, &["lowerings"], &[]);
    let grades = grade::grade(&tree(), &o).unwrap();
    let v = grade::verdicts(&grades, &o);
    assert!(v["sink"].conforms(), "{v:?} {}", grade::summary(&grades, &o));
    let o = options(&fill, Role::Certifier, &["lowerings"], &[]);
    let v = grade::verdicts(&grade::grade(&tree(), &o).unwrap(), &o);
    assert!(!v["certifier"].conforms(), "{v:?}");
}

#[test]
fn each_role_is_sent_only_the_record_forms_it_computes() {
    let files = |role: &str| {
        let o = Options::parse(&["--impl", "x", "--role", role].map(String::from)).unwrap();
        let suites: std::collections::BTreeSet<String> =
            grade::select(&tree(), &o).into_iter().map(|f| f.suite).collect();
        suites.into_iter().collect::<Vec<_>>().join(",")
    };
    assert_eq!(files("operator"), "graphs,stage,vectors");
    assert_eq!(files("certifier"), "graphs,lowerings,vectors");
    assert_eq!(files("sink"), "graphs,lowerings");
    assert_eq!(files("all"), "cis2,detessdequant,graphs,lowerings,stage,vectors");
    // The jpegai scale path is the sink's: an operator implementation is not sent it.
    let o = options("cat", Role::Operator, &["graphs"], &["jpegai_scale_path"]);
    let grades = grade::grade(&tree(), &o).unwrap();
    assert!(grades.iter().all(|g| g.records.is_empty() && !g.withheld.is_empty()));
}

#[test]
fn a_suite_the_role_computes_nothing_of_is_a_usage_error() {
    let e = Options::parse(&["--impl", "x", "--suite", "lowerings"].map(String::from)).unwrap_err();
    assert!(
        e.contains("--suite lowerings: --role operator computes nothing of its records"),
        "{e}"
    );
    assert!(Options::parse(&["--impl", "x", "--role", "sink", "--suite", "stage"].map(String::from)).is_err());
    assert!(Options::parse(&["--impl", "x", "--role", "painter"].map(String::from)).is_err());
    // Through the command line: clap's usage error, status 2.
    let out = Command::new(env!("CARGO"))
        .current_dir(root())
        .args(["xtask", "grade", "--impl", "x", "--suite", "lowerings"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", String::from_utf8_lossy(&out.stderr));
    let help = Command::new(env!("CARGO"))
        .current_dir(root())
        .args(["xtask", "grade", "--help"])
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout);
    for flag in [
        "--role",
        "--impl",
        "--suite",
        "--only",
        "--profile",
        "--timeout",
        "--json",
        "--markdown",
        "--strict",
    ] {
        assert!(help.contains(flag), "{flag}: {help}");
    }
}
