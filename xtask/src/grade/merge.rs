//! `cargo xtask grade --merge A.json B.json …`: the `--json` reports of a grade's shards
//! (`--shard K/N`, [`Shard`]) made into the reports of the grade run whole.
//!
//! Each shard's report carries what the whole grade's reports are made of (every record's outcome
//! and the verdicts it counts in, the records not sent, how the implementation ended on each file,
//! the selection) and which shard it is, of how many, over which files (each selected file's path,
//! its records sent by the selection and its SHA-256). The merge takes the shards of one grade only
//! (one implementation, one selection, one N, one tree), each K from 0 to N − 1 exactly once, and
//! names a shard missing or given twice; it puts every file's records back in their order by the
//! rule of [`Shard`].
//!
//! A file's ending and standard error are those of one process per shard: the merge takes the first
//! shard's (by K) whose run of the file did not end with status 0, or else the first shard's that ran
//! it. When the implementation answers each record on its own, the merge is byte for byte the
//! unsharded run's `--json` and `--markdown`; a crash or a hang cuts each shard's run of a file at
//! its own place.

use super::*;

/// `--merge`: the shards' reports, and where the whole grade's go.
#[derive(Clone, Debug)]
pub struct Merge {
    pub reports: Vec<PathBuf>,
    pub json: Option<PathBuf>,
    pub markdown: Option<PathBuf>,
    pub strict: bool,
}

impl Merge {
    /// The merge `grade`'s flags ask for, when they name `--merge`.
    pub fn of(a: &GradeArgs) -> Option<Merge> {
        (!a.merge.is_empty()).then(|| Merge {
            reports: a.merge.clone(),
            json: a.json.clone(),
            markdown: a.markdown.clone(),
            strict: a.strict,
        })
    }
}

/// `cargo xtask grade --merge`: reads the shards' reports, prints the whole grade's summary,
/// writes its `--json` and `--markdown`, and fails as the whole grade would.
pub fn merge_main(m: Merge) -> Result<(), String> {
    let mut reports = Vec::new();
    for p in &m.reports {
        let text = std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))?;
        let v: Value = serde_json::from_str(&text).map_err(|e| format!("{}: not a --json report: {e}", p.display()))?;
        reports.push((p.display().to_string(), v));
    }
    let (grades, mut o) = merge(&reports)?;
    (o.json, o.markdown, o.strict) = (m.json, m.markdown, m.strict);
    print!("{}", summary(&grades, &o));
    eprintln!(
        "grade: {} shards' reports merged, {} files",
        reports.len(),
        grades.len()
    );
    write_reports(&grades, &o, &json_report(&grades, &o))?;
    exit_status(&grades, &o)
}

/// One shard's report, read.
struct ShardReport<'a> {
    name: &'a str,
    shard: Shard,
    grades: Vec<FileGrade>,
}

/// The whole grade of its shards' `--json` reports, each with a name for the errors (its path),
/// and its options (without `--json`, `--markdown` or `--strict`, which are the merge's own).
pub fn merge(reports: &[(String, Value)]) -> Result<(Vec<FileGrade>, Options), String> {
    let Some((first, head)) = reports.first() else {
        return Err("--merge: no report given".into());
    };
    let covers = |name: &str, v: &Value| -> Result<(Shard, Value), String> {
        let s = v.get("shard").filter(|s| s.is_object()).ok_or_else(|| {
            format!("{name}: not a shard's report (graded without --shard K/N, or not a --json report)")
        })?;
        let n = |k: &str| s[k].as_u64().and_then(|x| usize::try_from(x).ok());
        match (n("k"), n("n")) {
            (Some(k), Some(n)) if k < n => Ok((Shard { k, n }, s["files"].clone())),
            _ => Err(format!(
                "{name}: its \"shard\" is not {{\"k\": K, \"n\": N}} with K < N"
            )),
        }
    };
    let (head_shard, files) = covers(first, head)?;
    let o = options(first, head)?;
    let mut shards = Vec::new();
    for (name, v) in reports {
        let (shard, their_files) = covers(name, v)?;
        let theirs = options(name, v)?;
        if theirs.implementation != o.implementation {
            return Err(format!(
                "{name} grades `{}` and {first} `{}`: the shards of one grade only",
                theirs.implementation, o.implementation
            ));
        }
        if v["selection"] != head["selection"] {
            return Err(format!(
                "{name} was graded on the selection {} and {first} on {}: the shards of one grade only",
                v["selection"], head["selection"]
            ));
        }
        if shard.n != head_shard.n {
            return Err(format!(
                "{name} is shard {shard} and {first} shard {head_shard}: the shards of one grade only"
            ));
        }
        if their_files != files {
            let differing = tree_difference(&their_files, &files);
            return Err(format!(
                "{name} and {first} were graded on different trees or selections ({differing}): the shards of one grade only"
            ));
        }
        shards.push(ShardReport {
            name,
            shard,
            grades: file_grades(name, v)?,
        });
    }
    let n = head_shard.n;
    let mut problems = Vec::new();
    for k in 0..n {
        let given: Vec<&str> = shards.iter().filter(|s| s.shard.k == k).map(|s| s.name).collect();
        match given.len() {
            0 => problems.push(format!("shard {k}/{n} is missing")),
            1 => {}
            _ => problems.push(format!(
                "shard {k}/{n} is given {} times ({})",
                given.len(),
                given.join(", ")
            )),
        }
    }
    if !problems.is_empty() {
        return Err(format!(
            "--merge: {}: every shard K/{n}, K from 0 to {}, once",
            problems.join("; "),
            n - 1
        ));
    }
    shards.sort_by_key(|s| s.shard.k);
    let files = files
        .as_array()
        .ok_or_else(|| format!("{first}: its shard's \"files\" is not a list"))?;
    let mut out = Vec::new();
    let mut before = 0;
    for f in files {
        let (Some(path), Some(sent)) = (f["file"].as_str(), f["sent"].as_u64()) else {
            return Err(format!(
                "{first}: a shard's file is not {{\"file\", \"sent\", \"sha256\"}}: {f}"
            ));
        };
        let sent = sent as usize;
        if let Some(g) = merged_file(&mut shards, path, before, sent)? {
            out.push(g);
        }
        before += sent;
    }
    for s in &shards {
        if let Some(g) = s.grades.first() {
            return Err(format!(
                "{}: holds {} which its shard's files do not name, or out of their order",
                s.name, g.file.path
            ));
        }
    }
    Ok((out, o))
}

/// The first file on which two shards' lists of files differ.
fn tree_difference(a: &Value, b: &Value) -> String {
    let (a, b) = (a.as_array(), b.as_array());
    let (a, b) = (a.into_iter().flatten(), b.into_iter().flatten());
    let mut pairs = a
        .map(Some)
        .chain(std::iter::repeat(None))
        .zip(b.map(Some).chain(std::iter::repeat(None)));
    match pairs.find(|(x, y)| x != y) {
        Some((Some(x), Some(y))) if x["file"] == y["file"] => format!("{}: {x} and {y}", x["file"]),
        Some((x, y)) => format!(
            "{} against {}",
            x.map_or("no more files".into(), |x| x["file"].to_string()),
            y.map_or("no more files".into(), |y| y["file"].to_string())
        ),
        None => "the same files".into(),
    }
}

/// The file `path`'s grade from every shard (its next file, in each that holds it): its records in
/// the order of the rule of [`Shard`] (the file's records sent being the selection's `before` to
/// `before + sent`), its records not sent, and how the implementation ended on it.
fn merged_file(
    shards: &mut [ShardReport],
    path: &str,
    before: usize,
    sent: usize,
) -> Result<Option<FileGrade>, String> {
    let mut parts: Vec<Option<FileGrade>> = Vec::new();
    for s in shards.iter_mut() {
        let part = match s.grades.first() {
            Some(g) if g.file.path == path => Some(s.grades.remove(0)),
            _ => None,
        };
        let have = part.as_ref().map_or(0, |g| g.records.len());
        let owed = (before..before + sent).filter(|&i| s.shard.takes(i)).count();
        if have != owed {
            return Err(format!(
                "{}: holds {have} records of {path}, and shard {} is owed {owed} of its {sent}",
                s.name, s.shard
            ));
        }
        parts.push(part);
    }
    let Some(first) = parts.iter().flatten().next() else {
        return Ok(None);
    };
    let (file, withheld) = (first.file.clone(), first.withheld.clone());
    for (s, p) in shards.iter().zip(&parts) {
        if let Some(p) = p
            && (p.withheld != withheld || p.file.suite != file.suite || p.file.provisional != file.provisional)
        {
            return Err(format!(
                "{} and {}: {path} differs in what it is or in the records not sent",
                s.name, shards[0].name
            ));
        }
    }
    // How it ended: the first shard's run that did not end with status 0, or the first run.
    let ran: Vec<&FileGrade> = parts.iter().flatten().filter(|p| !p.records.is_empty()).collect();
    let told = ran
        .iter()
        .find(|p| p.ending != Ending::Exited(0))
        .or(ran.first())
        .map_or((Ending::Exited(0), vec![]), |p| (p.ending.clone(), p.stderr.clone()));
    let mut records = Vec::with_capacity(sent);
    let mut each: Vec<std::vec::IntoIter<Graded>> = parts
        .into_iter()
        .map(|p| p.map_or(vec![], |p| p.records).into_iter())
        .collect();
    let n = shards.first().map_or(1, |s| s.shard.n);
    for i in before..before + sent {
        records.extend(each[i % n].next());
    }
    Ok(Some(FileGrade {
        file,
        records,
        ending: told.0,
        stderr: told.1,
        withheld,
    }))
}

/// The options a report was graded with, but `--json`, `--markdown`, `--strict` and the timeout.
fn options(name: &str, v: &Value) -> Result<Options, String> {
    let bad = |what: &str| format!("{name}: not a --json report of this grader ({what})");
    let implementation = v["implementation"].as_str().ok_or_else(|| bad("no implementation"))?;
    let s = &v["selection"];
    let role = [Role::Operator, Role::Certifier, Role::Sink, Role::All]
        .into_iter()
        .find(|r| s["role"] == r.name())
        .ok_or_else(|| bad("no selection.role"))?;
    let strings = |k: &str| -> Result<Vec<String>, String> {
        s[k].as_array()
            .ok_or_else(|| bad(&format!("no selection.{k}")))?
            .iter()
            .map(|x| {
                x.as_str()
                    .map(String::from)
                    .ok_or_else(|| bad(&format!("selection.{k}")))
            })
            .collect()
    };
    Ok(Options {
        role,
        suites: strings("suites")?,
        only: strings("only")?,
        profile: s["profile"].as_str().map(String::from),
        include_provisional: s["include_provisional"]
            .as_bool()
            .ok_or_else(|| bad("no selection.include_provisional"))?,
        ..Options::new(implementation)
    })
}

/// A report's files, read back into the grades it was written from.
fn file_grades(name: &str, v: &Value) -> Result<Vec<FileGrade>, String> {
    let bad = |what: String| format!("{name}: not a --json report of this grader ({what})");
    let files = v["files"].as_array().ok_or_else(|| bad("no files".into()))?;
    let strings = |x: &Value, what: &str| -> Result<Vec<String>, String> {
        x.as_array()
            .ok_or_else(|| bad(what.into()))?
            .iter()
            .map(|s| s.as_str().map(String::from).ok_or_else(|| bad(what.into())))
            .collect()
    };
    let text = |x: &Value, what: &str| x.as_str().map(String::from).ok_or_else(|| bad(what.into()));
    let mut out = Vec::new();
    for f in files {
        let path = text(&f["file"], "a file's path")?;
        let at = |what: &str| format!("{path}: {what}");
        let ending = match f["ending"].as_str().ok_or_else(|| bad(at("ending")))? {
            "Killed" => Ending::Killed,
            "TimedOut" => Ending::TimedOut,
            e if e.starts_with("NotStarted(") => Ending::NotStarted(text(&f["not_started"], &at("not_started"))?),
            e => e
                .strip_prefix("Exited(")
                .and_then(|e| e.strip_suffix(')'))
                .and_then(|c| c.parse().ok())
                .map(Ending::Exited)
                .ok_or_else(|| bad(at("ending")))?,
        };
        let mut records = Vec::new();
        for r in f["records"].as_array().ok_or_else(|| bad(at("records")))? {
            let id = text(&r["id"], &at("a record's id"))?;
            let why = || text(&r["why"], &at(&format!("{id}'s why")));
            let outcome = match r["outcome"].as_str() {
                Some("passed") => Outcome::Passed,
                Some("unanswered") => Outcome::Unanswered(why()?),
                Some("not_gradable") => Outcome::NotGradable(why()?),
                Some("code_differs") => {
                    let field = |k: &str| text(&r[k], &at(&format!("{id}'s {k}")));
                    Outcome::CodeDiffers {
                        reading: field("reading")?,
                        committed: field("committed")?,
                        received: field("received")?,
                    }
                }
                Some("failed") => Outcome::Failed(
                    r["fields"]
                        .as_array()
                        .ok_or_else(|| bad(at(&format!("{id}'s fields"))))?
                        .iter()
                        .map(|d| {
                            let field = |k: &str| text(&d[k], &at(&format!("{id}'s fields")));
                            Ok(Diff {
                                path: field("path")?,
                                committed: field("committed")?,
                                received: field("received")?,
                            })
                        })
                        .collect::<Result<_, String>>()?,
                ),
                _ => return Err(bad(at(&format!("{id}'s outcome")))),
            };
            let targets = r["targets"]
                .as_object()
                .ok_or_else(|| bad(at(&format!("{id}'s targets"))))?
                .iter()
                .map(|(t, ok)| match (Target::named(t), ok.as_bool()) {
                    (Some(t), Some(ok)) => Ok((t, ok)),
                    _ => Err(bad(at(&format!("{id}'s target {t}")))),
                })
                .collect::<Result<_, String>>()?;
            records.push(Graded { id, outcome, targets });
        }
        let withheld = f["withheld"]
            .as_array()
            .ok_or_else(|| bad(at("withheld")))?
            .iter()
            .map(|w| Ok((text(&w["id"], &at("withheld"))?, text(&w["why"], &at("withheld"))?)))
            .collect::<Result<_, String>>()?;
        out.push(FileGrade {
            file: GradedFile {
                suite: text(&f["suite"], &at("suite"))?,
                provisional: f["provisional"].as_bool().ok_or_else(|| bad(at("provisional")))?,
                path,
            },
            records,
            ending,
            stderr: strings(&f["stderr"], "stderr")?,
            withheld,
        });
    }
    Ok(out)
}
