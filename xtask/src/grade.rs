//! `cargo xtask grade`: a third-party implementation of `fill` against the committed tree.
//!
//! Each committed file's records are stripped of their computed fields (the requests of
//! docs/protocol.md) and piped to the implementation, run with the tree as its working directory;
//! its lines are compared with the committed records field by field. A crash, a hang past the
//! timeout, a missing line or garbage marks the records it touches failed, with the reason; the
//! grader itself never crashes and never waits past the timeout.
//!
//! An implementation may decline a record it cannot compute: the line `{"id":…,"not_supported":
//! "reason"}` makes the record **not gradable**, a fourth outcome beside passed, failed and
//! unanswered (docs/protocol.md). A verdict over records some of which are not gradable is at
//! best "conforms on the gradable subset", never "conforms".

use crate::check::strip;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The suites, by the tree's folders.
pub const SUITES: [&str; 6] = ["vectors", "graphs", "stage", "lowerings", "cis2", "detessdequant"];

/// The two profiles of integer-operators §7.
pub const PROFILES: [&str; 2] = ["acc32", "acc64"];

#[derive(Clone, Debug)]
pub struct Options {
    pub implementation: String,
    pub suites: Vec<String>,
    pub only: Vec<String>,
    pub profile: Option<String>,
    pub include_provisional: bool,
    pub timeout: Duration,
    pub json: Option<PathBuf>,
    pub markdown: Option<PathBuf>,
    /// `--strict`: a not-gradable record fails the run's exit status like a failed one.
    pub strict: bool,
}

impl Options {
    pub fn parse(args: &[String]) -> Result<Options, String> {
        let mut o = Options {
            implementation: String::new(),
            suites: vec![],
            only: vec![],
            profile: None,
            include_provisional: false,
            timeout: Duration::from_secs(60),
            json: None,
            markdown: None,
            strict: false,
        };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let mut value = |name: &str| it.next().cloned().ok_or(format!("{name} needs a value"));
            match a.as_str() {
                "--impl" => o.implementation = value("--impl")?,
                "--suite" => o.suites.extend(value("--suite")?.split(',').map(String::from)),
                "--only" => o.only.extend(value("--only")?.split(',').map(String::from)),
                "--profile" => o.profile = Some(value("--profile")?),
                "--include-provisional" => o.include_provisional = true,
                "--strict" => o.strict = true,
                "--timeout" => {
                    let s = value("--timeout")?;
                    let secs: f64 = s
                        .parse()
                        .map_err(|_| format!("--timeout: {s:?} is not a number of seconds"))?;
                    if !(secs > 0.0 && secs < 1e6) {
                        return Err(format!("--timeout: {s} is not a positive number of seconds"));
                    }
                    o.timeout = Duration::from_secs_f64(secs);
                }
                "--json" => o.json = Some(value("--json")?.into()),
                "--markdown" => o.markdown = Some(value("--markdown")?.into()),
                other => return Err(format!("grade: unknown argument {other:?}")),
            }
        }
        if o.implementation.trim().is_empty() {
            return Err("grade: --impl \"COMMAND ARGS\" is required".into());
        }
        if let Some(bad) = o.suites.iter().find(|s| !SUITES.contains(&s.as_str())) {
            return Err(format!("--suite: {bad:?} is not one of {}", SUITES.join(", ")));
        }
        if let Some(p) = &o.profile
            && !PROFILES.contains(&p.as_str())
        {
            return Err(format!("--profile: {p:?} is neither acc32 nor acc64"));
        }
        Ok(o)
    }
}

/// A committed file the grade sends.
#[derive(Clone, Debug)]
pub struct GradedFile {
    /// The path in the tree: `vectors/conv.jsonl`, `provisional/stage/rans64_decode.jsonl`.
    pub path: String,
    pub suite: String,
    pub provisional: bool,
}

/// The committed files the options select, in path order.
pub fn select(tree: &Path, o: &Options) -> Vec<GradedFile> {
    crate::compare::files(tree)
        .into_iter()
        .filter(|f| f.ends_with(".jsonl"))
        .filter_map(|path| {
            let (provisional, rest) = match path.strip_prefix("provisional/") {
                Some(r) => (true, r.to_string()),
                None => (false, path.clone()),
            };
            let suite = rest.split('/').next()?.to_string();
            let stem = rest.rsplit('/').next()?.trim_end_matches(".jsonl").to_string();
            let keep = SUITES.contains(&suite.as_str())
                && (o.suites.is_empty() || o.suites.contains(&suite))
                && (o.include_provisional || !provisional)
                && (o.only.is_empty() || o.only.iter().any(|x| *x == stem || *x == path || *x == rest));
            keep.then_some(GradedFile {
                path,
                suite,
                provisional,
            })
        })
        .collect()
}

/// How the implementation's run on one file ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Ending {
    Exited(i32),
    Killed,
    TimedOut,
    NotStarted(String),
}

impl Ending {
    fn why(&self) -> String {
        match self {
            Ending::Exited(0) => "the implementation wrote no line for it".into(),
            Ending::Exited(c) => format!("the implementation exited with status {c} before answering"),
            Ending::Killed => "the implementation was killed by a signal before answering".into(),
            Ending::TimedOut => "the implementation did not answer within the timeout".into(),
            Ending::NotStarted(e) => format!("the implementation could not be started: {e}"),
        }
    }
}

/// The implementation's command line with a relative program path made absolute (it runs with
/// the tree as its working directory); everything else, quoting and leading `NAME=value`
/// assignments included, is kept as written.
fn command_line(implementation: &str) -> String {
    let mut at = 0;
    for word in implementation.split_whitespace() {
        let start = at + implementation[at..].find(word).unwrap_or(0);
        at = start + word.len();
        if word.contains('=') {
            continue;
        }
        let path = Path::new(word);
        if word.contains('/')
            && path.is_relative()
            && let Ok(abs) = std::fs::canonicalize(path)
        {
            return format!("{}{}{}", &implementation[..start], abs.display(), &implementation[at..]);
        }
        break;
    }
    implementation.to_string()
}

/// Runs the implementation on `input` with the tree as its working directory; its standard
/// output (at most `cap` bytes are kept) and how it ended. Never waits past `timeout`.
pub fn run(implementation: &str, tree: &Path, input: Vec<u8>, timeout: Duration, cap: usize) -> (Vec<u8>, Ending) {
    use std::os::unix::process::CommandExt;
    // Its own process group, so that a timeout kills the shell and everything it started.
    let child = Command::new("sh")
        .arg("-c")
        .arg(command_line(implementation))
        .process_group(0)
        .current_dir(tree)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => return (vec![], Ending::NotStarted(e.to_string())),
    };
    let mut stdin = child.stdin.take().expect("piped");
    let writer = std::thread::spawn(move || {
        // A broken pipe (the implementation stopped reading) is the implementation's failure.
        let _ = stdin.write_all(&input);
    });
    let mut stdout = child.stdout.take().expect("piped");
    // What the reader has kept so far stays ours even if a stray descendant holds the pipe open.
    let kept = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let reader = std::thread::spawn({
        let kept = kept.clone();
        move || {
            let mut buf = [0u8; 65536];
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut kept = kept.lock().unwrap_or_else(|e| e.into_inner());
                let room = cap.saturating_sub(kept.len());
                kept.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    });
    let start = Instant::now();
    let ending = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status.code().map_or(Ending::Killed, Ending::Exited),
            Ok(None) if start.elapsed() >= timeout => {
                // `-s KILL -- -PGID`: procps' kill reads `-KILL -PGID` as two signal options.
                let _ = Command::new("kill")
                    .args(["-s", "KILL", "--", &format!("-{}", child.id())])
                    .status();
                let _ = child.kill();
                let _ = child.wait();
                break Ending::TimedOut;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => break Ending::NotStarted(e.to_string()),
        }
    };
    let _ = writer.join();
    // A killed child's descendants may still hold the pipe: give the reader a moment only.
    let deadline = Instant::now() + Duration::from_millis(500);
    while !reader.is_finished() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(5));
    }
    let out = std::mem::take(&mut *kept.lock().unwrap_or_else(|e| e.into_inner()));
    (out, ending)
}

/// One field that differs: its path, and the committed and received values (shortened).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diff {
    pub path: String,
    pub committed: String,
    pub received: String,
}

/// One record's grade.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Passed,
    Failed(Vec<Diff>),
    Unanswered(String),
    /// The implementation answered `{"id":…,"not_supported":"reason"}`: it declines the record.
    NotGradable(String),
}

impl Outcome {
    /// Failed or unanswered: the outcomes that make a verdict "does not conform".
    pub fn is_bad(&self) -> bool {
        matches!(self, Outcome::Failed(_) | Outcome::Unanswered(_))
    }
}

/// The reason of a `{"id":…,"not_supported":"reason"}` answer for the record `id`: exactly those
/// two members, the id the request's, the reason a non-empty string. Anything else is graded as an
/// ordinary answer (and fails).
pub fn not_supported(answer: &Value, id: &str) -> Option<String> {
    let o = answer.as_object()?;
    let reason = o.get("not_supported")?.as_str()?;
    (o.len() == 2 && o.get("id")?.as_str()? == id && !reason.trim().is_empty()).then(|| reason.to_string())
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 120 {
        // Cut at a character boundary: a received value may hold any UTF-8.
        let cut = (0..=117).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0);
        format!("{}…", &s[..cut])
    } else {
        s
    }
}

/// The differences between a committed value and a received one, at most `limit` of them; a
/// tensor (`{data, shape}`) is compared element by element with each element's `(c, y, x)`.
pub fn diff(committed: &Value, received: &Value, path: &str, limit: usize, out: &mut Vec<Diff>) {
    if out.len() >= limit || committed == received {
        return;
    }
    match (committed, received) {
        (Value::Object(a), Value::Object(b)) if is_tensor(a) && is_tensor(b) && a["shape"] == b["shape"] => {
            let (x, y) = (a["data"].as_array().unwrap(), b["data"].as_array().unwrap());
            let dims: Vec<usize> = a["shape"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| d.as_str().and_then(|s| s.parse().ok()).unwrap_or(0))
                .collect();
            if x.len() != y.len() {
                out_push(
                    out,
                    limit,
                    format!("{path}.data"),
                    format!("{} elements", x.len()),
                    format!("{} elements", y.len()),
                );
                return;
            }
            for (i, (p, q)) in x.iter().zip(y).enumerate().filter(|(_, (p, q))| p != q).take(limit) {
                out_push(
                    out,
                    limit,
                    format!("{path}.data[{i}] (c, y, x) = {}", position(i, &dims)),
                    short(p),
                    short(q),
                );
            }
        }
        (Value::Object(a), Value::Object(b)) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for k in keys {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                match (a.get(k), b.get(k)) {
                    (Some(x), Some(y)) => diff(x, y, &p, limit, out),
                    (Some(x), None) => out_push(out, limit, p, short(x), "(absent)".into()),
                    (None, Some(y)) => out_push(out, limit, p, "(absent)".into(), short(y)),
                    (None, None) => {}
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                diff(x, y, &format!("{path}[{i}]"), limit, out);
            }
        }
        _ => out_push(out, limit, path.to_string(), short(committed), short(received)),
    }
}

fn out_push(out: &mut Vec<Diff>, limit: usize, path: String, committed: String, received: String) {
    if out.len() < limit {
        out.push(Diff {
            path,
            committed,
            received,
        });
    }
}

fn is_tensor(o: &Map<String, Value>) -> bool {
    o.len() == 2 && o.get("data").is_some_and(Value::is_array) && o.get("shape").is_some_and(Value::is_array)
}

/// An element's CHW position in a `[C, H, W]` tensor (or its index for another rank).
fn position(i: usize, dims: &[usize]) -> String {
    match dims {
        [_, h, w] if *h > 0 && *w > 0 => format!("({}, {}, {})", i / (h * w), (i / w) % h, i % w),
        _ => format!("({i})"),
    }
}

/// One graded record.
#[derive(Clone, Debug)]
pub struct Graded {
    pub id: String,
    /// The profiles the committed record is tagged with (graph and per-operator vectors).
    pub profiles: Vec<String>,
    pub outcome: Outcome,
    /// Whether the received `load` equals the committed one (graph vectors; for the certifier).
    pub load_matches: Option<bool>,
}

/// Grades one file's responses against its committed records.
pub fn grade_lines(committed: &[Value], response: &[u8], ending: &Ending) -> Vec<Graded> {
    let text = String::from_utf8_lossy(response);
    let lines: Vec<&str> = text.lines().collect();
    committed
        .iter()
        .enumerate()
        .map(|(n, c)| {
            let id = c.get("id").and_then(Value::as_str).unwrap_or("?").to_string();
            let profiles = c
                .get("profiles")
                .and_then(Value::as_array)
                .map(|p| p.iter().filter_map(Value::as_str).map(String::from).collect())
                .unwrap_or_default();
            let (outcome, load_matches) = match lines.get(n) {
                None => (Outcome::Unanswered(ending.why()), c.get("load").map(|_| false)),
                Some(line) => match serde_json::from_str::<Value>(line) {
                    Err(e) => (
                        Outcome::Failed(vec![Diff {
                            path: "(line)".into(),
                            committed: "a JSON record".into(),
                            received: format!("not JSON ({e}): {}", short(&Value::String(line.to_string()))),
                        }]),
                        c.get("load").map(|_| false),
                    ),
                    Ok(r) if not_supported(&r, &id).is_some() => {
                        (Outcome::NotGradable(not_supported(&r, &id).unwrap_or_default()), None)
                    }
                    Ok(r) => {
                        let mut d = Vec::new();
                        diff(c, &r, "", 8, &mut d);
                        let load = c.get("load").map(|l| r.get("load") == Some(l));
                        (
                            if d.is_empty() {
                                Outcome::Passed
                            } else {
                                Outcome::Failed(d)
                            },
                            load,
                        )
                    }
                },
            };
            Graded {
                id,
                profiles,
                outcome,
                load_matches,
            }
        })
        .collect()
}

/// A file's grade.
#[derive(Clone, Debug)]
pub struct FileGrade {
    pub file: GradedFile,
    pub records: Vec<Graded>,
    pub ending: Ending,
}

impl FileGrade {
    pub fn count(&self, f: impl Fn(&Outcome) -> bool) -> usize {
        self.records.iter().filter(|r| f(&r.outcome)).count()
    }
}

/// Grades every selected file.
pub fn grade(tree: &Path, o: &Options) -> Result<Vec<FileGrade>, String> {
    let mut out = Vec::new();
    for file in select(tree, o) {
        let text = std::fs::read_to_string(tree.join(&file.path)).map_err(|e| format!("{}: {e}", file.path))?;
        let mut committed: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).map_err(|e| format!("{}: {e}", file.path)))
            .collect::<Result<_, _>>()?;
        if let Some(p) = &o.profile
            && matches!(file.suite.as_str(), "vectors" | "graphs")
        {
            committed.retain(|c| {
                c["profiles"]
                    .as_array()
                    .is_some_and(|a| a.iter().any(|x| x == p.as_str()))
            });
        }
        if committed.is_empty() {
            continue;
        }
        let requests: Vec<u8> = committed
            .iter()
            .map(|c| strip(format!("{c}\n").as_bytes()))
            .collect::<Result<Vec<_>, _>>()?
            .concat();
        // Room for the answers: twice the committed bytes, and some.
        let cap = 2 * text.len() + (1 << 20);
        let (response, ending) = run(&o.implementation, tree, requests, o.timeout, cap);
        let records = grade_lines(&committed, &response, &ending);
        out.push(FileGrade { file, records, ending });
    }
    Ok(out)
}

/// One verdict's counts. `failed` counts failed and unanswered records alike.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Verdict {
    pub passed: usize,
    pub failed: usize,
    pub not_gradable: usize,
}

impl Verdict {
    pub fn total(&self) -> usize {
        self.passed + self.failed + self.not_gradable
    }

    /// Full conformance: every record passed, none declined.
    pub fn conforms(&self) -> bool {
        self.failed == 0 && self.not_gradable == 0
    }

    /// No record failed or went unanswered (some may be not gradable).
    pub fn no_failure(&self) -> bool {
        self.failed == 0
    }

    /// `conforms`, `conforms on the gradable subset` (every graded record passed, some declined),
    /// `not graded` (every record declined) or `does not conform`.
    pub fn status(&self) -> &'static str {
        if self.failed > 0 {
            "does not conform"
        } else if self.not_gradable == 0 {
            "conforms"
        } else if self.passed > 0 {
            "conforms on the gradable subset"
        } else {
            "not graded"
        }
    }

    /// `passed/graded`, and the not-gradable count when there is one.
    pub fn counts(&self) -> String {
        let graded = self.passed + self.failed;
        if self.not_gradable == 0 {
            format!("{}/{graded}", self.passed)
        } else {
            format!("{}/{graded} graded, {} not gradable", self.passed, self.not_gradable)
        }
    }

    fn note(&mut self, outcome: &Outcome) {
        match outcome {
            Outcome::Passed => self.passed += 1,
            Outcome::NotGradable(_) => self.not_gradable += 1,
            Outcome::Failed(_) | Outcome::Unanswered(_) => self.failed += 1,
        }
    }
}

/// The verdicts: an operator implementation per profile (integer-operators §1: every per-operator
/// and graph vector tagged with the profile, refusals included), a certifier (every lowering
/// record and every graph vector's `load`), and each other suite. A not-gradable record keeps a
/// verdict from "conforms" (it is at best "conforms on the gradable subset", [`Verdict::status`]).
pub fn verdicts(grades: &[FileGrade], o: &Options) -> BTreeMap<String, Verdict> {
    let mut v: BTreeMap<String, Verdict> = BTreeMap::new();
    let mut note = |name: String, outcome: &Outcome| v.entry(name).or_default().note(outcome);
    let certifier = "certifier (load verdicts, lowering records)";
    for g in grades.iter().filter(|g| !g.file.provisional) {
        let graph_suite = matches!(g.file.suite.as_str(), "vectors" | "graphs");
        for r in &g.records {
            if graph_suite {
                for p in PROFILES
                    .iter()
                    .filter(|p| o.profile.as_deref().is_none_or(|q| q == **p))
                {
                    if r.profiles.iter().any(|x| x == p) {
                        note(format!("operator implementation, {p}"), &r.outcome);
                    }
                }
                match (&r.outcome, r.load_matches) {
                    (Outcome::NotGradable(why), _) => note(certifier.into(), &Outcome::NotGradable(why.clone())),
                    (_, Some(true)) => note(certifier.into(), &Outcome::Passed),
                    (_, Some(false)) => note(certifier.into(), &Outcome::Failed(vec![])),
                    (_, None) => {}
                }
            } else if g.file.suite == "lowerings" {
                note(certifier.into(), &r.outcome);
            } else {
                note(format!("{} suite", g.file.suite), &r.outcome);
            }
        }
    }
    v
}

/// Each distinct not-gradable reason with the number of records that gave it, most frequent first.
pub fn not_gradable_reasons(grades: &[FileGrade]) -> Vec<(String, usize)> {
    let mut n: BTreeMap<String, usize> = BTreeMap::new();
    for r in grades.iter().flat_map(|g| &g.records) {
        if let Outcome::NotGradable(why) = &r.outcome {
            *n.entry(why.clone()).or_default() += 1;
        }
    }
    let mut v: Vec<(String, usize)> = n.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v
}

/// The terminal report.
pub fn summary(grades: &[FileGrade], o: &Options) -> String {
    let mut s = String::new();
    s.push_str(&format!(
        "{:<52} {:>7} {:>7} {:>11} {:>13}\n",
        "file", "passed", "failed", "unanswered", "not gradable"
    ));
    for g in grades {
        let unanswered = g.count(|x| matches!(x, Outcome::Unanswered(_)));
        let failed = g.count(|x| matches!(x, Outcome::Failed(_)));
        s.push_str(&format!(
            "{:<52} {:>7} {:>7} {:>11} {:>13}{}\n",
            g.file.path,
            g.count(|x| *x == Outcome::Passed),
            failed,
            unanswered,
            g.count(|x| matches!(x, Outcome::NotGradable(_))),
            if failed + unanswered > 0 { "  ✗" } else { "" }
        ));
    }
    s.push_str("\nverdicts (normative files):\n");
    for (name, v) in verdicts(grades, o) {
        let status = if v.conforms() {
            "CONFORMS".to_string()
        } else {
            v.status().to_string()
        };
        s.push_str(&format!("  {name}: {status} ({})\n", v.counts()));
    }
    let reasons = not_gradable_reasons(grades);
    if !reasons.is_empty() {
        s.push_str("\nnot gradable (the implementation's reasons):\n");
        for (why, n) in reasons.iter().take(20) {
            s.push_str(&format!("  {n:>5}  {why}\n"));
        }
    }
    let failures: Vec<String> = failures(grades).into_iter().take(50).collect();
    if !failures.is_empty() {
        s.push_str("\nfailures (first 50):\n");
        for f in failures {
            s.push_str(&format!("  {f}\n"));
        }
    }
    s
}

/// Each failed or unanswered record, with its reason or its differing fields.
pub fn failures(grades: &[FileGrade]) -> Vec<String> {
    let mut out = Vec::new();
    for g in grades {
        for r in &g.records {
            match &r.outcome {
                Outcome::Passed | Outcome::NotGradable(_) => {}
                Outcome::Unanswered(why) => out.push(format!("{}#{}: unanswered: {why}", g.file.path, r.id)),
                Outcome::Failed(diffs) => {
                    for d in diffs {
                        out.push(format!(
                            "{}#{} {}: committed {} vs received {}",
                            g.file.path, r.id, d.path, d.committed, d.received
                        ));
                    }
                }
            }
        }
    }
    out
}

/// The machine-readable report.
pub fn json_report(grades: &[FileGrade], o: &Options) -> Value {
    let files: Vec<Value> = grades
        .iter()
        .map(|g| {
            let records: Vec<Value> = g
                .records
                .iter()
                .map(|r| match &r.outcome {
                    Outcome::Passed => json!({ "id": r.id, "outcome": "passed" }),
                    Outcome::Unanswered(why) => json!({ "id": r.id, "outcome": "unanswered", "why": why }),
                    Outcome::NotGradable(why) => json!({ "id": r.id, "outcome": "not_gradable", "why": why }),
                    Outcome::Failed(d) => json!({ "id": r.id, "outcome": "failed", "fields": d.iter().map(|d| json!({
                        "path": d.path, "committed": d.committed, "received": d.received })).collect::<Vec<_>>() }),
                })
                .collect();
            json!({ "file": g.file.path, "suite": g.file.suite, "provisional": g.file.provisional,
                    "ending": format!("{:?}", g.ending), "records": records })
        })
        .collect();
    let verdicts: Map<String, Value> = verdicts(grades, o)
        .into_iter()
        .map(|(k, v)| {
            (
                k,
                json!({ "conforms": v.conforms(), "status": v.status(), "passed": v.passed, "failed": v.failed,
                        "not_gradable": v.not_gradable, "total": v.total() }),
            )
        })
        .collect();
    json!({ "implementation": o.implementation, "files": files, "verdicts": verdicts })
}

/// The per-operator × profile matrix, for a README: per row and profile the vectors tagged with the
/// profile that pass out of those graded, and those not gradable; then every file's counts, the
/// verdicts and the not-gradable reasons.
pub fn markdown(grades: &[FileGrade], o: &Options) -> String {
    let mut rows: BTreeMap<String, BTreeMap<String, Verdict>> = BTreeMap::new();
    for g in grades
        .iter()
        .filter(|g| matches!(g.file.suite.as_str(), "vectors" | "graphs"))
    {
        let row = if g.file.suite == "vectors" {
            g.file
                .path
                .trim_start_matches("vectors/")
                .trim_end_matches(".jsonl")
                .to_string()
        } else {
            format!(
                "graphs: {}",
                g.file.path.trim_start_matches("graphs/").trim_end_matches(".jsonl")
            )
        };
        for r in &g.records {
            let cells = rows.entry(row.clone()).or_default();
            cells.entry("all".into()).or_default().note(&r.outcome);
            for p in &r.profiles {
                cells.entry(p.clone()).or_default().note(&r.outcome);
            }
        }
    }
    let mut s = format!(
        "# Grade of `{}`\n\nOperator × profile: the vectors tagged with the profile that pass, out of those graded \
         (`n/g`: not gradable, the implementation declined them; `—`: no vector):\n\n",
        o.implementation
    );
    s.push_str("| operator | vectors | graded | acc32 | acc64 |\n|---|---|---|---|---|\n");
    let mut all = Verdict::default();
    for (row, cells) in &rows {
        let cell = |p: &str| match cells.get(p) {
            None => "—".to_string(),
            Some(v) => {
                let mark = if v.failed > 0 {
                    "✗ "
                } else if v.passed > 0 {
                    "✓ "
                } else {
                    ""
                };
                let ng = if v.not_gradable > 0 {
                    format!(" (+{} n/g)", v.not_gradable)
                } else {
                    String::new()
                };
                format!("{mark}{}/{}{ng}", v.passed, v.passed + v.failed)
            }
        };
        let v = cells.get("all").copied().unwrap_or_default();
        all.passed += v.passed;
        all.failed += v.failed;
        all.not_gradable += v.not_gradable;
        s.push_str(&format!(
            "| {row} | {} | {} | {} | {} |\n",
            v.total(),
            v.passed + v.failed,
            cell("acc32"),
            cell("acc64")
        ));
    }
    if all.total() > 0 {
        s.push_str(&format!(
            "| **all** | {} | {} ({:.1}%) | | |\n",
            all.total(),
            all.passed + all.failed,
            100.0 * (all.passed + all.failed) as f64 / all.total() as f64
        ));
    }
    let others: Vec<&FileGrade> = grades
        .iter()
        .filter(|g| !matches!(g.file.suite.as_str(), "vectors" | "graphs"))
        .collect();
    if !others.is_empty() {
        s.push_str("\nOther suites:\n\n| file | passed | graded | total |\n|---|---|---|---|\n");
    }
    for g in others {
        s.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            g.file.path,
            g.count(|x| *x == Outcome::Passed),
            g.count(|x| !matches!(x, Outcome::NotGradable(_))),
            g.records.len()
        ));
    }
    s.push_str("\nVerdicts (normative files):\n\n");
    for (name, v) in verdicts(grades, o) {
        s.push_str(&format!("- {name}: {} ({})\n", v.status(), v.counts()));
    }
    let failures = failures(grades);
    if !failures.is_empty() {
        s.push_str("\nFailures:\n\n");
        for f in failures.iter().take(100) {
            s.push_str(&format!("- `{f}`\n"));
        }
    }
    let reasons = not_gradable_reasons(grades);
    if !reasons.is_empty() {
        s.push_str("\nNot gradable, by the implementation's reason:\n\n| records | reason |\n|---|---|\n");
        for (why, n) in reasons {
            s.push_str(&format!("| {n} | {} |\n", why.replace('|', "\\|")));
        }
    }
    s
}

/// `cargo xtask grade`.
pub fn main(root: &Path, args: &[String]) -> Result<(), String> {
    let o = Options::parse(args)?;
    let tree = root.join("ops-conformance");
    let start = Instant::now();
    let grades = grade(&tree, &o)?;
    print!("{}", summary(&grades, &o));
    eprintln!(
        "grade: {} files in {:.1} s",
        grades.len(),
        start.elapsed().as_secs_f64()
    );
    if let Some(p) = &o.json {
        let text = serde_json::to_string_pretty(&json_report(&grades, &o)).map_err(|e| e.to_string())?;
        std::fs::write(p, text).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    if let Some(p) = &o.markdown {
        std::fs::write(p, markdown(&grades, &o)).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    // Not-gradable records are reported, not failures, unless `--strict`.
    let bad = |r: &Graded| r.outcome.is_bad() || (o.strict && matches!(r.outcome, Outcome::NotGradable(_)));
    if grades.iter().all(|g| !g.records.iter().any(bad)) {
        Ok(())
    } else if o.strict && grades.iter().all(|g| !g.records.iter().any(|r| r.outcome.is_bad())) {
        Err("some records were not gradable (--strict)".into())
    } else {
        Err("some records failed".into())
    }
}
