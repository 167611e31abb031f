//! `--shard K/N` and `--merge` (docs/protocol.md, "Grading over several machines"): a grade split
//! into shards and merged is the unsharded grade, byte for byte, and a merge that lacks a shard or
//! holds one twice names it.

mod common;

use common::{checker, root};
use std::path::{Path, PathBuf};
use xtask::grade::{self, Merge, Options};

/// `wai-checker fill`, built in release.
fn fill() -> String {
    format!("{} fill", checker().display())
}

/// A directory of this test's own.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("grade-shards-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `cargo xtask grade ARGS --json DIR/NAME.json --markdown DIR/NAME.md`, in process; its exit
/// status, and the reports' paths.
fn grade(args: &[&str], dir: &Path, name: &str) -> (Result<(), String>, PathBuf, PathBuf) {
    let (json, md) = (dir.join(format!("{name}.json")), dir.join(format!("{name}.md")));
    let mut args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    args.extend(["--json".into(), json.display().to_string()]);
    args.extend(["--markdown".into(), md.display().to_string()]);
    let status = grade::main(&root(), Options::parse(&args).unwrap());
    (status, json, md)
}

/// `cargo xtask grade --merge REPORTS --json DIR/merged.json --markdown DIR/merged.md`, in process.
fn merge(reports: &[&Path], dir: &Path) -> (Result<(), String>, PathBuf, PathBuf) {
    let (json, markdown) = (dir.join("merged.json"), dir.join("merged.md"));
    let m = Merge {
        reports: reports.iter().map(|p| p.to_path_buf()).collect(),
        json: Some(json.clone()),
        markdown: Some(markdown.clone()),
        strict: false,
    };
    (grade::merge_main(m), json, markdown)
}

fn read(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Grades `args` whole and in `n` shards, merges the shards, and requires the merged reports to be
/// the whole grade's, byte for byte, and the exit status its own.
fn sharded_is_whole(args: &[&str], n: usize, name: &str) {
    let dir = scratch(name);
    let (whole, whole_json, whole_md) = grade(args, &dir, "whole");
    let mut shards = Vec::new();
    for k in 0..n {
        let shard = format!("{k}/{n}");
        let args: Vec<&str> = args.iter().copied().chain(["--shard", shard.as_str()]).collect();
        let (_, json, md) = grade(&args, &dir, &format!("shard{k}"));
        assert!(
            read(&md).contains(&format!("Shard {k}/{n} of the selection")),
            "{}",
            read(&md)
        );
        shards.push(json);
    }
    // Given in any order.
    shards.reverse();
    let given: Vec<&Path> = shards.iter().map(PathBuf::as_path).collect();
    let (merged, json, md) = merge(&given, &dir);
    assert_eq!(merged, whole);
    assert!(
        read(&json) == read(&whole_json),
        "{name}: the merged --json is not the unsharded one"
    );
    assert_eq!(
        read(&md),
        read(&whole_md),
        "{name}: the merged --markdown is not the unsharded one"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_checker_graded_in_three_shards_and_merged_is_the_unsharded_grade() {
    let fill = fill();
    // Every suite but the scale tier's, as docs/example-grade.md.
    sharded_is_whole(&["--impl", &fill, "--role", "all"], 3, "checker");
    // The scale tier's smallest files, streamed, and the operator role's records not sent.
    sharded_is_whole(
        &[
            "--impl",
            &fill,
            "--suite",
            "scale,vectors",
            "--only",
            "igdn,relu,conv,rescale",
            "--timeout",
            "120",
        ],
        3,
        "checker-scale",
    );
}

#[test]
fn failing_records_merge_into_the_unsharded_report_too() {
    // `cat` answers every request with itself: every record fails, and the reports' lists are cut.
    sharded_is_whole(
        &["--impl", "cat", "--role", "all", "--suite", "vectors,stage"],
        4,
        "cat",
    );
}

#[test]
fn refusals_with_other_codes_merge_into_the_unsharded_report_too() {
    // The checker with its `scale` refusals renamed: "code differs" records, kept through a merge.
    let implementation = format!("{} | sed 's/\"refuse\":\"scale\"/\"refuse\":\"bad_scale\"/'", fill());
    sharded_is_whole(
        &["--impl", &implementation, "--role", "all", "--suite", "detessdequant"],
        2,
        "codes",
    );
}

/// Three shards of `cat` over the per-operator vectors, and the error merging `shards` of them.
fn merge_error(shards: &[usize], name: &str) -> String {
    let dir = scratch(name);
    let reports: Vec<PathBuf> = (0..3)
        .map(|k| {
            let shard = format!("{k}/3");
            grade(
                &["--impl", "cat", "--suite", "vectors", "--shard", &shard],
                &dir,
                &format!("shard{k}"),
            )
            .1
        })
        .collect();
    let given: Vec<&Path> = shards.iter().map(|&k| reports[k].as_path()).collect();
    let (status, json, _) = merge(&given, &dir);
    assert!(!json.exists(), "a failed merge writes no report");
    std::fs::remove_dir_all(dir).unwrap();
    status.unwrap_err()
}

#[test]
fn a_missing_shard_is_named() {
    let e = merge_error(&[0, 2], "missing");
    assert!(e.contains("shard 1/3 is missing"), "{e}");
}

#[test]
fn a_duplicated_shard_is_named() {
    let e = merge_error(&[0, 1, 2, 1], "duplicated");
    assert!(e.contains("shard 1/3 is given 2 times"), "{e}");
    assert!(
        e.contains("shard1.json, ") && e.matches("shard1.json").count() == 2,
        "{e}"
    );
}

#[test]
fn shards_of_different_grades_do_not_merge() {
    let dir = scratch("different");
    let shard = |args: &[&str], k: usize, name: &str| {
        let s = format!("{k}/2");
        let args: Vec<&str> = args.iter().copied().chain(["--shard", s.as_str()]).collect();
        grade(&args, &dir, name).1
    };
    let a = shard(&["--impl", "cat", "--suite", "vectors"], 0, "a");
    let role = shard(&["--impl", "cat", "--suite", "vectors", "--role", "all"], 1, "role");
    let only = shard(&["--impl", "cat", "--suite", "vectors", "--only", "conv"], 1, "only");
    let other = shard(&["--impl", "cat -u", "--suite", "vectors"], 1, "other");
    let (whole, _, _) = grade(&["--impl", "cat", "--suite", "vectors"], &dir, "whole");
    assert!(whole.is_err());
    let error = |b: &Path| merge(&[&a, b], &dir).0.unwrap_err();
    assert!(error(&role).contains("selection"), "{}", error(&role));
    assert!(error(&only).contains("selection"), "{}", error(&only));
    assert!(error(&other).contains("grades `cat -u`"), "{}", error(&other));
    let unsharded = merge(&[&a, &dir.join("whole.json")], &dir).0.unwrap_err();
    assert!(unsharded.contains("whole.json: not a shard's report"), "{unsharded}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_shard_flags_are_checked() {
    let parse = |args: &[&str]| Options::parse(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>());
    let o = parse(&["--impl", "x", "--shard", "2/3"]).unwrap();
    assert_eq!(o.shard, Some(grade::Shard { k: 2, n: 3 }));
    for bad in ["3/3", "1/0", "1", "a/3", "1/x"] {
        let e = parse(&["--impl", "x", "--shard", bad]).unwrap_err();
        assert!(e.contains("K/N"), "{bad}: {e}");
    }
    // The merge takes its selection from the shards: no --impl, no selecting flag.
    for extra in [
        &["--impl", "x"][..],
        &["--role", "all"],
        &["--shard", "0/2"],
        &["--only", "conv"],
    ] {
        let mut args = vec!["--merge", "a.json"];
        args.extend(extra);
        assert!(parse(&args).is_err(), "{args:?}");
    }
    let e = parse(&["--role", "all"]).unwrap_err();
    assert!(e.contains("--impl"), "{e}");
    // Rule: the selection's records, numbered across files, round-robin.
    let s = grade::Shard { k: 1, n: 3 };
    assert_eq!((0..9).filter(|&i| s.takes(i)).collect::<Vec<_>>(), [1, 4, 7]);
}
