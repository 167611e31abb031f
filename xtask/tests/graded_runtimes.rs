//! The graded runtimes' bookkeeping (README "Graded runtimes", docs/findings.md): every configuration
//! of adapters/grades.txt has its committed report and its README row, the row's counts are the
//! report's, and every record a report fails is named by a finding.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn read(path: &str) -> String {
    std::fs::read_to_string(root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The names of adapters/grades.txt's configurations.
fn configurations() -> Vec<String> {
    read("adapters/grades.txt")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| l.split('|').next().unwrap().trim().to_string())
        .collect()
}

/// A report's graded count (the operator matrix's **all** row and the "Other suites" rows) and its
/// failed or unanswered record ids, with how many more it says it did not list.
fn counts(report: &str) -> (usize, BTreeSet<String>, usize) {
    let cell = |l: &str, k: usize| -> usize {
        let c = l.split('|').nth(k).unwrap().split_whitespace().next().unwrap();
        c.parse().unwrap_or_else(|_| panic!("not a count: {l}"))
    };
    let matrix: usize = report
        .lines()
        .filter(|l| l.starts_with("| **all** |"))
        .map(|l| cell(l, 3))
        .sum();
    let others = report.split("Other suites:").nth(1).unwrap_or("");
    let others: usize = others
        .lines()
        .skip_while(|l| !l.starts_with("|---"))
        .skip(1)
        .take_while(|l| l.starts_with('|'))
        .map(|l| cell(l, 3))
        .sum();
    let failed: BTreeSet<String> = report
        .lines()
        .filter_map(|l| l.strip_prefix("- `"))
        .filter_map(|l| l.split_once(": ").map(|(id, _)| id))
        .filter(|id| id.contains('#') && !id.contains([' ', '`']))
        .map(str::to_string)
        .collect();
    let more = report
        .lines()
        .filter_map(|l| l.strip_prefix("… and "))
        .filter(|l| l.contains("more failed or unanswered records not shown"))
        .map(|l| l.split_whitespace().next().unwrap().parse::<usize>().unwrap())
        .sum();
    (matrix + others, failed, more)
}

#[test]
fn every_configuration_has_its_report_and_readme_row_with_the_reports_counts() {
    let readme = read("README.md");
    let mut reports: Vec<String> = std::fs::read_dir(root().join("docs/grades"))
        .unwrap()
        .map(|e| {
            e.unwrap()
                .file_name()
                .to_string_lossy()
                .trim_end_matches(".md")
                .to_string()
        })
        .collect();
    reports.sort();
    let mut configs = configurations();
    configs.sort();
    assert_eq!(
        reports, configs,
        "docs/grades/ holds exactly one report per adapters/grades.txt line"
    );
    for name in &configs {
        let link = format!("| [{name}](docs/grades/{name}.md) |");
        let row = readme
            .lines()
            .find(|l| l.starts_with(&link))
            .unwrap_or_else(|| panic!("README.md's table of graded runtimes has no row {link}"));
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let (graded, failed, more) = counts(&read(&format!("docs/grades/{name}.md")));
        let failed = failed.len() + more;
        let want = [graded, graded - failed, failed].map(|n| n.to_string());
        assert_eq!(
            cells[5..8],
            want,
            "README.md's row for {name}: gradable, passed, failed as the report says"
        );
    }
}

#[test]
fn every_failing_record_is_explained_by_a_finding() {
    let findings = read("docs/findings.md");
    for name in configurations() {
        let (_, failed, more) = counts(&read(&format!("docs/grades/{name}.md")));
        assert_eq!(more, 0, "docs/grades/{name}.md lists every failing record");
        for id in failed {
            let bare = format!("`{}`", id.split_once('#').unwrap().1);
            assert!(
                findings.contains(&id) || findings.contains(&bare),
                "docs/findings.md explains no failure of {id} (docs/grades/{name}.md): name it, or its id in backticks"
            );
        }
    }
}
