//! The grader explains itself: its command line documents every flag, a relative `--impl` is
//! resolved from where the user stands, the implementation's last stderr lines and a program
//! without its run bit are told in words, and a report that stops listing says how much it left
//! out.

mod common;

use common::{checker, root};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;
use xtask::grade::{self, Ending, FileGrade, GradedFile, Options, Outcome};

fn options(implementation: &str) -> Options {
    Options {
        suites: vec!["stage".into()],
        only: vec!["coded".into()],
        ..Options::new(implementation)
    }
}

/// A directory of this test's own, holding `rel/`.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("grade-explains-{}-{name}", std::process::id()));
    std::fs::create_dir_all(dir.join("rel")).unwrap();
    dir
}

/// `cargo xtask grade ARGS` (the built binary), run from `dir`: its exit success and its output.
fn xtask_grade(dir: &Path, args: &[&str]) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .current_dir(dir)
        .arg("grade")
        .args(args)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

#[test]
fn grade_help_lists_every_flag() {
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["grade", "--help"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--impl",
        "--suite",
        "--only",
        "--profile",
        "--include-provisional",
        "--strict",
        "--timeout",
        "--json",
        "--markdown",
    ] {
        assert!(help.contains(flag), "{flag} missing from:\n{help}");
    }
    let top = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("--help")
        .output()
        .unwrap();
    let top = String::from_utf8_lossy(&top.stdout);
    for command in [
        "regen",
        "coverage",
        "check",
        "fuzz-diff",
        "fuzz-seeds",
        "fuzz",
        "bench",
        "mutants",
        "faults",
        "diff",
        "grade",
    ] {
        assert!(top.contains(&format!("  {command} ")), "{command} missing from:\n{top}");
    }
}

#[test]
fn a_bad_flag_is_a_usage_error() {
    let (ok, text) = xtask_grade(&root(), &["--impl", "cat", "--timeout", "soon"]);
    assert!(!ok);
    assert!(text.contains("invalid value 'soon' for '--timeout <SECS>'"), "{text}");
    assert!(Options::parse(&["--suite".into(), "vectors".into()]).is_err());
    let o = Options::parse(&["--impl", "x", "--suite", "stage,cis2", "--suite", "graphs"].map(String::from)).unwrap();
    assert_eq!(o.suites, ["stage", "cis2", "graphs"]);
    assert_eq!(o.timeout, Duration::from_secs(60));
}

#[test]
fn an_implementation_that_exits_early_shows_its_last_stderr_lines() {
    let noisy = "for i in $(seq 1 40); do echo \"warming up $i\" >&2; done; \
                 echo 'fill: cannot open model.bin' >&2; exit 3";
    let o = options(noisy);
    let grades = grade::grade(&root().join("ops-conformance"), &o).unwrap();
    assert_eq!(grades[0].ending, Ending::Exited(3));
    assert!(grades[0].stderr.len() <= 20, "{:?}", grades[0].stderr);
    assert_eq!(grades[0].stderr.last().unwrap(), "fill: cannot open model.bin");
    let summary = grade::summary(&grades, &o);
    assert!(
        summary.contains("on stage/coded.jsonl, 7 records unanswered: the implementation exited with status 3"),
        "{summary}"
    );
    assert!(summary.contains("| fill: cannot open model.bin"), "{summary}");
    assert!(
        !summary.contains("warming up 1\n"),
        "the ring keeps only the last lines:\n{summary}"
    );
    let markdown = grade::markdown(&grades, &o);
    assert!(markdown.contains("| fill: cannot open model.bin"), "{markdown}");
    let report = grade::json_report(&grades, &o);
    assert_eq!(
        report["files"][0]["stderr"].as_array().unwrap().last().unwrap(),
        "fill: cannot open model.bin"
    );
}

#[test]
fn a_relative_impl_runs_from_where_the_user_stands() {
    let dir = scratch("relative");
    let script = format!(
        "import os\nos.execv({0:?}, [{0:?}, \"fill\"])\n",
        checker().display().to_string()
    );
    std::fs::write(dir.join("rel/fill.py"), script).unwrap();
    let (ok, text) = xtask_grade(
        &dir,
        &["--impl", "python3 rel/fill.py", "--suite", "stage", "--only", "coded"],
    );
    assert!(ok, "{text}");
    assert!(
        text.contains("operator implementation, stage operators: CONFORMS"),
        "{text}"
    );
    // Tests run in the package's folder: every word naming a file there is made absolute, the
    // rest (a bare program, a subcommand, a flag, an assignment) is kept.
    let abs = std::fs::canonicalize("tests/grade_explains.rs").unwrap();
    assert_eq!(
        grade::command_line("X=1 python3 tests/grade_explains.rs fill --x tests"),
        format!(
            "X=1 python3 {} fill --x {}",
            abs.display(),
            abs.parent().unwrap().display()
        )
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_program_without_its_run_bit_or_not_found_is_explained() {
    let dir = scratch("run-bit");
    std::fs::write(dir.join("rel/fill.sh"), "#!/bin/sh\nexec cat\n").unwrap();
    let (ok, text) = xtask_grade(&dir, &["--impl", "rel/fill.sh", "--suite", "stage", "--only", "coded"]);
    assert!(!ok);
    assert!(text.contains("exited with status 126"), "{text}");
    assert!(text.contains("`rel/fill.sh` is not executable"), "{text}");
    assert!(text.contains("chmod +x rel/fill.sh"), "{text}");
    std::fs::remove_dir_all(dir).unwrap();
    let o = options("no-such-fill-program-anywhere");
    let grades = grade::grade(&root().join("ops-conformance"), &o).unwrap();
    let summary = grade::summary(&grades, &o);
    assert!(
        summary.contains("`no-such-fill-program-anywhere` not found"),
        "{summary}"
    );
}

fn failing(path: &str, n: usize) -> FileGrade {
    FileGrade {
        file: GradedFile {
            path: path.into(),
            suite: "stage".into(),
            provisional: false,
        },
        records: (0..n)
            .map(|i| grade::Graded {
                id: format!("r{i}"),
                outcome: Outcome::Unanswered("the implementation wrote no line for it".into()),
                targets: vec![],
            })
            .collect(),
        ending: Ending::Exited(0),
        stderr: vec![],
        withheld: vec![],
    }
}

#[test]
fn a_report_that_stops_listing_says_how_much_it_left_out() {
    let o = options("x");
    let grades = vec![failing("stage/a.jsonl", 87), failing("stage/b.jsonl", 87)];
    let summary = grade::summary(&grades, &o);
    assert!(
        summary.contains("… and 124 more failed or unanswered records (124 lines) not shown"),
        "{summary}"
    );
    // The same ending on both files is told once.
    assert!(
        summary.contains("on stage/a.jsonl (and 1 more file the same), 174 records unanswered: the implementation exited with status 0"),
        "{summary}"
    );
    let markdown = grade::markdown(&grades, &o);
    assert!(
        markdown.contains("… and 74 more failed or unanswered records (74 lines) not shown"),
        "{markdown}"
    );

    // A tensor with 100 differing elements lists 8 and counts the rest.
    let tensor = |v: &str| json!({ "data": vec![v; 100], "shape": ["1", "10", "10"] });
    let committed = vec![grade::Sent::new(
        json!({ "id": "t", "op": "x", "out": tensor("0") }),
        grade::Role::All,
    )];
    let response = format!("{}\n", json!({ "id": "t", "op": "x", "out": tensor("1") }));
    let graded = grade::grade_lines(&committed, response.as_bytes(), &Ending::Exited(0));
    let Outcome::Failed(d) = &graded[0].outcome else {
        panic!("{graded:?}")
    };
    assert_eq!(d.len(), 9, "{d:?}");
    let mut g = failing("stage/t.jsonl", 0);
    g.records = graded;
    let lines = grade::failures(&[g]);
    assert_eq!(
        lines.last().unwrap(),
        "stage/t.jsonl#t out.data: … 92 more differing elements not shown"
    );
}
