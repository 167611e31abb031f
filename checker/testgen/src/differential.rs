//! Differential runs: random requests through another implementation's `fill` and `certify` (a
//! command such as the oracle binary) and through this checker, compared byte for byte.

use crate::random;
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use wai_checker::{certify, fill};

/// What a run found.
#[derive(Default, Debug)]
pub struct Report {
    pub requests: u64,
    pub loads_ok: u64,
    pub decodes: u64,
    pub refused_decodes: u64,
    pub certificates: u64,
    /// One entry per differing record: its id and the fields that differ.
    pub differences: Vec<String>,
}

/// The paths at which two JSON values differ.
fn diff(a: &Value, b: &Value, path: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for k in x.keys().chain(y.keys().filter(|k| !x.contains_key(*k))) {
                match (x.get(k), y.get(k)) {
                    (Some(p), Some(q)) => diff(p, q, &format!("{path}.{k}"), out),
                    _ => out.push(format!("{path}.{k}: present on one side only")),
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                diff(p, q, &format!("{path}[{i}]"), out);
            }
        }
        _ if a != b => {
            let s = |v: &Value| {
                let t = v.to_string();
                if t.len() > 160 { format!("{}…", &t[..160]) } else { t }
            };
            out.push(format!("{path}: other {} vs checker {}", s(a), s(b)));
        }
        _ => {}
    }
}

fn describe(id: &str, other: &str, mine: &str) -> String {
    let mut d = Vec::new();
    match (
        serde_json::from_str::<Value>(other),
        serde_json::from_str::<Value>(mine),
    ) {
        (Ok(a), Ok(b)) => diff(&a, &b, "", &mut d),
        _ => d.push("not comparable as JSON".into()),
    }
    d.truncate(8);
    format!("{id}: {}", d.join("; "))
}

/// Runs the requests of `seeds` through `other fill`, and each graph through `other certify`, into
/// `dir`, and compares them with this checker's.
pub fn run(other: &Path, seeds: std::ops::Range<u64>, dir: &Path) -> std::io::Result<Report> {
    std::fs::create_dir_all(dir.join("graphs"))?;
    let mut report = Report::default();
    let mut requests = String::new();
    for seed in seeds {
        requests.push_str(&random::request(seed));
        requests.push('\n');
        report.requests += 1;
    }
    let req_path = dir.join("requests.jsonl");
    std::fs::write(&req_path, &requests)?;
    let out = Command::new(other).arg("fill").arg("--in").arg(&req_path).output()?;
    let theirs = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut mine = String::new();
    let mut errs = Vec::new();
    fill::fill(requests.as_bytes(), &mut mine, &mut |m| errs.push(m));
    std::fs::write(dir.join("other.jsonl"), &theirs)?;
    std::fs::write(dir.join("checker.jsonl"), &mine)?;
    let their_err = String::from_utf8_lossy(&out.stderr);
    if !their_err.trim().is_empty() || !errs.is_empty() {
        report.differences.push(format!(
            "stderr: other {:?} vs checker {:?}",
            their_err.trim(),
            errs.join("; ")
        ));
    }
    let (a, b): (Vec<&str>, Vec<&str>) = (theirs.lines().collect(), mine.lines().collect());
    if a.len() != b.len() {
        report
            .differences
            .push(format!("line counts: other {} vs checker {}", a.len(), b.len()));
    }
    for (x, y) in a.iter().zip(&b) {
        let v: Value = serde_json::from_str(x).unwrap_or(Value::Null);
        if v["load"] == "ok" {
            report.loads_ok += 1;
            for d in v["decodes"].as_array().into_iter().flatten() {
                report.decodes += 1;
                report.refused_decodes += u64::from(d["expect"].get("refuse").is_some());
            }
        }
        if x != y {
            report
                .differences
                .push(format!("fill {}", describe(v["id"].as_str().unwrap_or("?"), x, y)));
        }
    }
    for line in requests.lines() {
        let v: Value = serde_json::from_str(line).expect("a generated request is JSON");
        let id = v["id"].as_str().unwrap_or("?");
        let bytes = hex::decode(v["graph"].as_str().unwrap_or("")).unwrap_or_default();
        let path = dir.join("graphs").join(format!("{id}.whg1"));
        std::fs::write(&path, &bytes)?;
        let o = Command::new(other).arg("certify").arg(&path).output()?;
        let mine = certify::certify(
            &[certify::Input {
                name: id.to_string(),
                bytes,
            }],
            None,
            "whg1",
            None,
        );
        match (&mine, o.status.success()) {
            (Ok(c), true) => {
                report.certificates += 1;
                if c.as_bytes() != o.stdout.as_slice() {
                    report.differences.push(format!(
                        "certificate {}",
                        describe(id, &String::from_utf8_lossy(&o.stdout), c)
                    ));
                }
            }
            (Err(_), false) => {}
            (m, _) => report.differences.push(format!(
                "certificate {id}: other {} vs checker {}",
                if o.status.success() { "certified" } else { "refused" },
                if m.is_ok() { "certified" } else { "refused" }
            )),
        }
    }
    Ok(report)
}

/// What a stage run found.
#[derive(Default, Debug)]
pub struct StageReport {
    pub requests: u64,
    /// Per operator: requests, and those refused (by code).
    pub by_op: std::collections::BTreeMap<String, (u64, std::collections::BTreeMap<String, u64>)>,
    /// One entry per differing line: its id and the fields that differ.
    pub differences: Vec<String>,
}

/// Runs `requests` (stage request lines) through `other fill` and through this checker, into
/// `dir`, and compares them line by line.
pub fn compare_stage(other: &Path, requests: &str, dir: &Path) -> std::io::Result<StageReport> {
    std::fs::create_dir_all(dir)?;
    let mut report = StageReport::default();
    let req_path = dir.join("stage-requests.jsonl");
    std::fs::write(&req_path, requests)?;
    let out = Command::new(other).arg("fill").arg("--in").arg(&req_path).output()?;
    let theirs = String::from_utf8_lossy(&out.stdout).into_owned();
    let mut mine = String::new();
    let mut errs = Vec::new();
    fill::fill(requests.as_bytes(), &mut mine, &mut |m| errs.push(m));
    std::fs::write(dir.join("stage-other.jsonl"), &theirs)?;
    std::fs::write(dir.join("stage-checker.jsonl"), &mine)?;
    let their_err = String::from_utf8_lossy(&out.stderr);
    if !their_err.trim().is_empty() || !errs.is_empty() {
        report.differences.push(format!(
            "stderr: other {:?} vs checker {:?}",
            their_err.trim(),
            errs.join("; ")
        ));
    }
    let (a, b): (Vec<&str>, Vec<&str>) = (theirs.lines().collect(), mine.lines().collect());
    if a.len() != b.len() {
        report
            .differences
            .push(format!("line counts: other {} vs checker {}", a.len(), b.len()));
    }
    for (x, y) in a.iter().zip(&b) {
        report.requests += 1;
        let v: Value = serde_json::from_str(y).unwrap_or(Value::Null);
        let entry = report
            .by_op
            .entry(v["op"].as_str().unwrap_or("?").to_string())
            .or_default();
        entry.0 += 1;
        if let Some(code) = v["expect"]["refuse"].as_str() {
            *entry
                .1
                .entry(format!("{code}@{}", v["expect"]["at"].as_str().unwrap_or("?")))
                .or_default() += 1;
        }
        if x != y {
            report.differences.push(describe(v["id"].as_str().unwrap_or("?"), x, y));
        }
    }
    Ok(report)
}

/// The stage requests of `seeds` (testgen::stage) through `other` and this checker.
pub fn run_stage(other: &Path, seeds: std::ops::Range<u64>, dir: &Path) -> std::io::Result<StageReport> {
    let mut requests = String::new();
    for seed in seeds {
        requests.push_str(&crate::stage::request(seed));
        requests.push('\n');
    }
    compare_stage(other, &requests, dir)
}
