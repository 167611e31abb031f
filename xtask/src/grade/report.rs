//! The verdicts of §1's targets and the reports: the terminal summary, `--json` and `--markdown`.

use super::*;

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
            Outcome::Passed | Outcome::CodeDiffers { .. } => self.passed += 1,
            Outcome::NotGradable(_) => self.not_gradable += 1,
            Outcome::Failed(_) | Outcome::Unanswered(_) => self.failed += 1,
        }
    }

    /// A record's count in one target's verdict: `ok` when that target's fields matched.
    fn note_target(&mut self, outcome: &Outcome, ok: bool) {
        match outcome {
            Outcome::NotGradable(_) => self.not_gradable += 1,
            _ if ok => self.passed += 1,
            _ => self.failed += 1,
        }
    }
}

/// The verdicts of §1's targets that the role grades (each on its own fields, [`roles::owned`]),
/// and each other specification's suite. A not-gradable record keeps a verdict from "conforms" (it
/// is at best "conforms on the gradable subset", [`Verdict::status`]).
pub fn verdicts(grades: &[FileGrade], o: &Options) -> BTreeMap<String, Verdict> {
    let mut v: BTreeMap<String, Verdict> = BTreeMap::new();
    for g in grades.iter().filter(|g| !g.file.provisional) {
        for r in &g.records {
            for &(t, ok) in &r.targets {
                if let Target::Operator(p) = t
                    && o.profile.as_deref().is_some_and(|q| q != p)
                {
                    continue;
                }
                v.entry(t.name()).or_default().note_target(&r.outcome, ok);
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

/// Each record refused with another code than the committed one (`file#id: refused as required;
/// code differs (reading D3): committed "x", received "y"`).
pub fn codes_differing(grades: &[FileGrade]) -> Vec<String> {
    let mut lines = Vec::new();
    for g in grades {
        for r in &g.records {
            if let Outcome::CodeDiffers {
                reading,
                committed,
                received,
            } = &r.outcome
            {
                lines.push(format!(
                    "{}#{}: refused as required; code differs (reading {reading}): committed {committed:?}, received {received:?}",
                    g.file.path, r.id
                ));
            }
        }
    }
    lines
}

/// The terminal report.
pub fn summary(grades: &[FileGrade], o: &Options) -> String {
    let mut s = format!("{}\n", graded_as(o));
    if let Some(shard) = o.shard {
        s.push_str(&format!("{}\n", shard_words(shard, grades)));
    }
    s.push('\n');
    s.push_str(&format!(
        "{:<52} {:>7} {:>7} {:>11} {:>13}\n",
        "file", "passed", "failed", "unanswered", "not gradable"
    ));
    for g in grades.iter().filter(|g| !g.records.is_empty()) {
        let unanswered = g.count(|x| matches!(x, Outcome::Unanswered(_)));
        let failed = g.count(|x| matches!(x, Outcome::Failed(_)));
        s.push_str(&format!(
            "{:<52} {:>7} {:>7} {:>11} {:>13}{}\n",
            g.file.path,
            g.count(Outcome::passes),
            failed,
            unanswered,
            g.count(|x| matches!(x, Outcome::NotGradable(_))),
            if failed + unanswered > 0 { "  ✗" } else { "" }
        ));
    }
    for w in withheld(grades) {
        s.push_str(&format!("{w}\n"));
    }
    s.push_str(&format!("\nverdicts ({}):\n", verdicts_over(o)));
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
        if reasons.len() > 20 {
            s.push_str(&format!("  … and {} more reasons not shown\n", reasons.len() - 20));
        }
    }
    let differing = codes_differing(grades);
    if !differing.is_empty() {
        s.push_str("\nrefused as required; code differs (a reading, counted as passed):\n");
        for line in &differing {
            s.push_str(&format!("  {line}\n"));
        }
    }
    let endings = endings(grades, o);
    if !endings.is_empty() {
        s.push_str("\nhow the implementation ended:\n");
        for e in endings {
            s.push_str(&format!("  {}\n", e.replace('\n', "\n  ")));
        }
    }
    let records = failed_records(grades);
    if !records.is_empty() {
        s.push_str("\nfailed records, one line each:\n");
        for line in one_line_each(grades, 50) {
            s.push_str(&format!("  {line}\n"));
        }
        s.push_str("\nfailures, field by field:\n");
        for f in shown(&records, 50, &mut |line| s.push_str(&format!("  {line}\n"))) {
            s.push_str(&format!("  {f}\n"));
        }
    }
    s
}

/// What a shard's reports are of.
fn shard_words(shard: Shard, grades: &[FileGrade]) -> String {
    let records: usize = grades.iter().map(|g| g.records.len()).sum();
    format!(
        "Shard {shard} of the selection (`--shard {shard}`): {records} records sent, the selection's record i being shard \
         i mod {}'s; `cargo xtask grade --merge` makes the whole grade's reports from every shard's `--json`.",
        shard.n
    )
}

/// What the grade graded the implementation as, in words.
fn graded_as(o: &Options) -> String {
    format!(
        "grading `{}` as {} (--role {})",
        o.implementation,
        role_words(o.role),
        o.role.name()
    )
}

fn role_words(role: Role) -> &'static str {
    match role {
        Role::Operator => {
            "an operator implementation (integer-operators §1): each decode and load steps 1–7, the profiles given"
        }
        Role::Certifier => {
            "a certifier (integer-operators §1): graph vectors' load and profiles, and the lowering records"
        }
        Role::Sink => "a sink (integer-operators §1): the lowering records' graphs and load, and the jpegai scale path",
        Role::All => "every target at once: every field of every record, each verdict on its own fields",
    }
}

/// What the verdicts are over: the normative files, and only the selection when `--only`,
/// `--profile` or a narrower `--suite` made one (conformance is over the whole of each suite).
fn verdicts_over(o: &Options) -> String {
    let mut narrowed = Vec::new();
    if !o.only.is_empty() {
        narrowed.push(format!("--only {}", o.only.join(",")));
    }
    if let Some(p) = &o.profile {
        narrowed.push(format!("--profile {p}"));
    }
    let defaults = o.role.default_suites();
    if !o.suites.is_empty() && defaults.iter().any(|d| !o.suites.iter().any(|s| s == d)) {
        narrowed.push(format!("--suite {}", o.suites.join(",")));
    }
    if narrowed.is_empty() {
        "normative files".into()
    } else {
        format!(
            "normative files of this selection only, {}: not conformance, which is over every record of each suite",
            narrowed.join(" ")
        )
    }
}

/// The records not sent, one line per reason: how many, and in which files.
fn withheld(grades: &[FileGrade]) -> Vec<String> {
    let mut by_reason: BTreeMap<&str, (usize, Vec<&str>)> = BTreeMap::new();
    for g in grades {
        for (_, why) in &g.withheld {
            let e = by_reason.entry(why).or_default();
            e.0 += 1;
            if e.1.last() != Some(&g.file.path.as_str()) {
                e.1.push(&g.file.path);
            }
        }
    }
    by_reason
        .into_iter()
        .map(|(why, (n, files))| {
            let records = if n == 1 { "record" } else { "records" };
            format!("not sent: {n} {records} ({}): {why}", files.join(", "))
        })
        .collect()
}

/// Writes (by `line`) the first `lines` lines of the failed records' lines, and returns the notes of
/// what was left out: "… and 37 more failed records" (their lines), "… and 12 more lines of …".
fn shown(records: &[(String, Vec<String>)], lines: usize, line: &mut dyn FnMut(&str)) -> Vec<String> {
    let mut left = lines;
    let mut notes = Vec::new();
    for (i, (record, record_lines)) in records.iter().enumerate() {
        if left == 0 {
            let rest = &records[i..];
            let n: usize = rest.iter().map(|r| r.1.len()).sum();
            notes.push(format!(
                "… and {} more failed or unanswered records ({n} lines) not shown",
                rest.len()
            ));
            break;
        }
        let k = record_lines.len().min(left);
        record_lines[..k].iter().for_each(|l| line(l));
        left -= k;
        if k < record_lines.len() {
            notes.push(format!(
                "… and {} more lines of {record} not shown",
                record_lines.len() - k
            ));
        }
    }
    notes
}

/// How the implementation ended on each file where it did not end well (a non-zero exit, a
/// signal, the timeout, not started) or left records unanswered: what happened, in words when
/// `sh` says the program is not executable (126) or not found (127), and the last lines of its
/// standard error. Files where the same happened are told once.
pub fn endings(grades: &[FileGrade], o: &Options) -> Vec<String> {
    // Per distinct story: its first file, the story, the other files, the records unanswered.
    let mut told: Vec<(String, String, usize, usize)> = Vec::new();
    for g in grades {
        let unanswered = g.count(|x| matches!(x, Outcome::Unanswered(_)));
        if g.ending == Ending::Exited(0) && unanswered == 0 {
            continue;
        }
        let mut what = match &g.ending {
            Ending::Exited(0) => "exited with status 0".to_string(),
            Ending::Exited(c) => format!("exited with status {c}"),
            Ending::Killed => "was killed by a signal".into(),
            Ending::TimedOut => "did not finish within its timeout (--timeout) and was killed".into(),
            Ending::NotStarted(e) => format!("could not be started: {e}"),
        };
        let program = program(&o.implementation);
        match g.ending {
            Ending::Exited(126) => what.push_str(&format!(
                ": `{program}` is not executable (or a program it runs is not): chmod +x {program}"
            )),
            Ending::Exited(127) => what.push_str(&format!(
                ": `{program}` not found (or a program it runs was not): give its path (relative to where \
                 you stand, or absolute) or put it on PATH"
            )),
            _ => {}
        }
        if g.stderr.is_empty() {
            what.push_str("\n(nothing on its standard error)");
        } else {
            what.push_str("\nthe last lines of its standard error:");
            for l in &g.stderr {
                what.push_str(&format!("\n  | {l}"));
            }
        }
        match told.iter_mut().find(|t| t.1 == what) {
            Some(t) => (t.2, t.3) = (t.2 + 1, t.3 + unanswered),
            None => told.push((g.file.path.clone(), what, 0, unanswered)),
        }
    }
    told.into_iter()
        .map(|(file, what, more, unanswered)| {
            let others = match more {
                0 => String::new(),
                1 => " (and 1 more file the same)".into(),
                n => format!(" (and {n} more files the same)"),
            };
            let unanswered = match unanswered {
                0 => String::new(),
                1 => ", 1 record unanswered".into(),
                n => format!(", {n} records unanswered"),
            };
            format!("on {file}{others}{unanswered}: the implementation {what}")
        })
        .collect()
}

/// The first `most` failed or unanswered records, one line each: `file#id: what`, then how many
/// more were left out.
fn one_line_each(grades: &[FileGrade], most: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut more = 0;
    for g in grades {
        for r in g.records.iter().filter(|r| r.outcome.is_bad()) {
            if lines.len() == most {
                more += 1;
                continue;
            }
            let what = match &r.outcome {
                Outcome::Failed(d) => {
                    let first = d.first().map_or("", |d| d.path.split(", fed by").next().unwrap_or(""));
                    match d.len() {
                        1 => format!("{first} differs"),
                        n => format!("{first} differs ({n} lines below)"),
                    }
                }
                Outcome::Unanswered(why) => format!("unanswered: {why}"),
                _ => continue,
            };
            lines.push(format!("{}#{}: {what}", g.file.path, r.id));
        }
    }
    if more > 0 {
        lines.push(format!("… and {more} more failed or unanswered records not shown"));
    }
    lines
}

/// Each failed or unanswered record (`file#id`) with its lines of [`failures`].
fn failed_records(grades: &[FileGrade]) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    for g in grades {
        for r in &g.records {
            let record = format!("{}#{}", g.file.path, r.id);
            let lines = match &r.outcome {
                Outcome::Passed | Outcome::NotGradable(_) | Outcome::CodeDiffers { .. } => continue,
                Outcome::Unanswered(why) => vec![format!("{record}: unanswered: {why}")],
                Outcome::Failed(diffs) => diffs
                    .iter()
                    .map(|d| {
                        if d.committed.is_empty() && d.received.is_empty() {
                            format!("{record} {}", d.path)
                        } else {
                            format!(
                                "{record} {}: committed {} vs received {}",
                                d.path, d.committed, d.received
                            )
                        }
                    })
                    .collect(),
            };
            out.push((record, lines));
        }
    }
    out
}

/// Each failed or unanswered record, with its reason or its differing fields.
pub fn failures(grades: &[FileGrade]) -> Vec<String> {
    failed_records(grades)
        .into_iter()
        .flat_map(|(_, lines)| lines)
        .collect()
}

/// The machine-readable report: the implementation and the selection it was graded on, every
/// file's records (each with its outcome and the verdicts it counts in), the records not sent,
/// and the verdicts. It holds everything the other reports are made of, so that `--merge` makes
/// them again from shards' reports ([`super::merge`]).
pub fn json_report(grades: &[FileGrade], o: &Options) -> Value {
    let files: Vec<Value> = grades
        .iter()
        .map(|g| {
            let records: Vec<Value> = g
                .records
                .iter()
                .map(|r| {
                    let mut v = match &r.outcome {
                        Outcome::Passed => json!({ "id": r.id, "outcome": "passed" }),
                        Outcome::Unanswered(why) => json!({ "id": r.id, "outcome": "unanswered", "why": why }),
                        Outcome::NotGradable(why) => json!({ "id": r.id, "outcome": "not_gradable", "why": why }),
                        Outcome::CodeDiffers { reading, committed, received } => json!({ "id": r.id,
                            "outcome": "code_differs", "reading": reading, "committed": committed, "received": received }),
                        Outcome::Failed(d) => json!({ "id": r.id, "outcome": "failed", "fields": d.iter().map(|d| json!({
                            "path": d.path, "committed": d.committed, "received": d.received })).collect::<Vec<_>>() }),
                    };
                    let targets: Map<String, Value> = r.targets.iter().map(|(t, ok)| (t.name(), json!(ok))).collect();
                    v["targets"] = Value::Object(targets);
                    v
                })
                .collect();
            let withheld: Vec<Value> = g.withheld.iter().map(|(id, why)| json!({ "id": id, "why": why })).collect();
            let mut file = json!({ "file": g.file.path, "suite": g.file.suite, "provisional": g.file.provisional,
                    "ending": format!("{:?}", g.ending), "stderr": g.stderr, "records": records, "withheld": withheld });
            if let Ending::NotStarted(e) = &g.ending {
                file["not_started"] = json!(e);
            }
            file
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
    json!({ "implementation": o.implementation, "selection": selection(o), "files": files, "verdicts": verdicts })
}

/// What the options select, as the `--json` report says it: the role and the flags that narrow
/// the records sent. A merge takes only shards of one selection.
pub(super) fn selection(o: &Options) -> Value {
    json!({ "role": o.role.name(), "suites": o.suites, "only": o.only, "profile": o.profile,
            "include_provisional": o.include_provisional })
}

/// A shard's `--json` report (`--shard K/N`): [`json_report`] of its records, and which shard it is
/// of how many, over which files: each selected file's path, the number of its records the
/// selection sends (every shard's) and the SHA-256 of its committed bytes.
pub fn shard_report(grades: &[FileGrade], o: &Options, covered: &[Covered]) -> Value {
    let mut v = json_report(grades, o);
    if let Some(s) = o.shard {
        let files: Vec<Value> = covered
            .iter()
            .map(|c| json!({ "file": c.path, "sent": c.sent, "sha256": c.sha256 }))
            .collect();
        v["shard"] = json!({ "k": s.k, "n": s.n, "files": files,
            "rule": "the selection's records sent are numbered from 0, files in path order and each file's records in line order; record i is shard i mod n's" });
    }
    v
}

/// A `--json` report's text, as written.
pub fn json_text(report: &Value) -> String {
    serde_json::to_string_pretty(report).expect("a JSON value serializes")
}

/// A graph-vector file's row of the operator matrix: its operator (`vectors/<op>.jsonl`,
/// `scale/<op>.jsonl`) or `graphs: <name>` (`graphs/<name>.jsonl`, `scale/graphs/<name>.jsonl`).
fn matrix_row(file: &GradedFile) -> String {
    let path = file
        .path
        .strip_prefix("scale/")
        .unwrap_or(&file.path)
        .trim_end_matches(".jsonl");
    match path.strip_prefix("graphs/") {
        Some(name) => format!("graphs: {name}"),
        None => path.trim_start_matches("vectors/").to_string(),
    }
}

/// The per-operator × profile matrix, for a README: per row and profile the vectors tagged with the
/// profile that pass out of those graded, and those not gradable; then every file's counts, the
/// verdicts and the not-gradable reasons.
pub fn markdown(grades: &[FileGrade], o: &Options) -> String {
    let mut rows: BTreeMap<String, BTreeMap<String, Verdict>> = BTreeMap::new();
    for g in grades.iter().filter(|g| graph_suite(&g.file.suite)) {
        let row = matrix_row(&g.file);
        for r in &g.records {
            let cells = rows.entry(row.clone()).or_default();
            cells.entry("all".into()).or_default().note(&r.outcome);
            for &(t, ok) in &r.targets {
                if let Target::Operator(p) = t {
                    cells.entry(p.into()).or_default().note_target(&r.outcome, ok);
                }
            }
        }
    }
    let mut s = format!(
        "# Grade of `{}`\n\nGraded as {} (`--role {}`).\n\n",
        o.implementation,
        role_words(o.role),
        o.role.name()
    );
    if let Some(shard) = o.shard {
        s.push_str(&format!("{}\n\n", shard_words(shard, grades)));
    }
    s.push_str(
        "Operator × profile: the vectors tagged with the profile that pass, out of those graded (`n/g`: not \
         gradable, the implementation declined them; `—`: no vector, or none graded as an operator \
         implementation):\n\n",
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
    let withheld = withheld(grades);
    if !withheld.is_empty() {
        s.push('\n');
        for w in withheld {
            s.push_str(&format!("- {w}\n"));
        }
    }
    let others: Vec<&FileGrade> = grades
        .iter()
        .filter(|g| !graph_suite(&g.file.suite) && !g.records.is_empty())
        .collect();
    if !others.is_empty() {
        s.push_str("\nOther suites:\n\n| file | passed | graded | total |\n|---|---|---|---|\n");
    }
    for g in others {
        s.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            g.file.path,
            g.count(Outcome::passes),
            g.count(|x| !matches!(x, Outcome::NotGradable(_))),
            g.records.len()
        ));
    }
    s.push_str(&format!("\nVerdicts ({}):\n\n", verdicts_over(o)));
    for (name, v) in verdicts(grades, o) {
        s.push_str(&format!("- {name}: {} ({})\n", v.status(), v.counts()));
    }
    let endings = endings(grades, o);
    if !endings.is_empty() {
        s.push_str("\nHow the implementation ended:\n\n");
        for e in endings {
            let (head, rest) = e.split_once('\n').unwrap_or((&e, ""));
            s.push_str(&format!("- {head}\n"));
            if !rest.is_empty() {
                s.push_str(&format!("\n  ```text\n  {}\n  ```\n", rest.replace('\n', "\n  ")));
            }
        }
    }
    let records = failed_records(grades);
    if !records.is_empty() {
        s.push_str("\nFailed records, one line each:\n\n");
        for line in one_line_each(grades, 100) {
            s.push_str(&format!("- `{line}`\n"));
        }
        s.push_str("\nFailures, field by field:\n\n");
        for note in shown(&records, 100, &mut |line| s.push_str(&format!("- `{line}`\n"))) {
            s.push_str(&format!("- {note}\n"));
        }
    }
    let differing = codes_differing(grades);
    if !differing.is_empty() {
        s.push_str("\nRefused as required; code differs (a reading, counted as passed):\n\n");
        for line in &differing {
            s.push_str(&format!("- `{line}`\n"));
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
