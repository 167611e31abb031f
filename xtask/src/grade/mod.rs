//! `cargo xtask grade`: a third-party implementation of `fill` against the committed tree.
//!
//! Each committed file's records are stripped of their computed fields (the requests of
//! docs/protocol.md) and piped to the implementation, run with the tree as its working directory;
//! its lines are compared with the committed records field by field. A crash, a hang past the
//! timeout, a missing line or garbage marks the records it touches failed, with the reason; the
//! grader itself never crashes and never waits past the timeout.
//!
//! The scale tier (`scale/`, docs/scale.md) is graded the same way, with its recipes expanded before
//! the implementation sees a request and its written-out answers folded back to digests as they
//! arrive, one record at a time ([`grade_scale`]).
//!
//! An implementation may decline a record it cannot compute: the line `{"id":…,"not_supported":
//! "reason"}` makes the record **not gradable**, a fourth outcome beside passed, failed and
//! unanswered (docs/protocol.md). A verdict over records some of which are not gradable is at
//! best "conforms on the gradable subset", never "conforms".
//!
//! `--shard K/N` grades one of N disjoint parts of the selection ([`Shard`]) and `--merge` makes
//! the whole grade's reports from every part's `--json` ([`merge`]).
//!
//! The grader is this module: `process` runs the implementation, `compare` grades one answer,
//! `scale` streams the scale tier, `report` writes the verdicts and reports, `roles` says who
//! computes what, `merge` joins shards. Everything else in xtask reaches it through what this file exports.

mod compare;
mod merge;
mod process;
mod report;
pub mod roles;
mod scale;

use compare::*;
pub use compare::{Diff, Graded, Outcome, Sent, diff, grade_answers, grade_lines, not_supported};
pub use merge::{Merge, merge, merge_main};
use process::*;
pub use process::{Answer, Ending, command_line, run, run_capturing};
pub use report::{
    Verdict, codes_differing, endings, failures, json_report, json_text, markdown, not_gradable_reasons, shard_report,
    summary, verdicts,
};
pub use roles::Role;
pub use scale::grade_scale;
use scale::*;

use crate::arrays;
use crate::jsondiff::{self, short};
use roles::{Grading, Target};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use wai_checker::recipe;
use wai_oracle::suite::{self, Form, SUITES};

/// Whether a suite's records are graph vectors, whose verdicts are per profile.
fn graph_suite(name: &str) -> bool {
    suite::named(name).is_some_and(|s| s.forms.contains(&Form::GraphVector))
}

/// The two profiles of integer-operators §7.
pub const PROFILES: [&str; 2] = ["acc32", "acc64"];

#[derive(Clone, Debug)]
pub struct Options {
    pub implementation: String,
    /// The target graded (§1): which records are sent and which of their fields are graded.
    pub role: Role,
    pub suites: Vec<String>,
    pub only: Vec<String>,
    pub profile: Option<String>,
    pub include_provisional: bool,
    pub timeout: Duration,
    pub json: Option<PathBuf>,
    pub markdown: Option<PathBuf>,
    /// `--strict`: a not-gradable record fails the run's exit status like a failed one.
    pub strict: bool,
    /// `--shard K/N`: only the selection's records that [`Shard::takes`].
    pub shard: Option<Shard>,
}

impl Options {
    /// The options `cargo xtask grade --impl IMPLEMENTATION` takes with no other flag.
    pub fn new(implementation: &str) -> Options {
        Options {
            implementation: implementation.into(),
            role: Role::Operator,
            suites: vec![],
            only: vec![],
            profile: None,
            include_provisional: false,
            timeout: Duration::from_secs(60),
            json: None,
            markdown: None,
            strict: false,
            shard: None,
        }
    }
}

/// `--shard K/N` (0 ≤ K < N): one of N disjoint parts of the selection, which together are the
/// whole of it. The rule: number the records the selection sends from 0, files in path order
/// ([`select`]) and each file's records in its line order (a record not sent, withheld from the
/// role, is not numbered); record `i` is shard `i mod N`'s. Every shard is within one record of
/// `1/N` of the selection, and of every file with at least `N` records sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub k: usize,
    pub n: usize,
}

impl Shard {
    /// `K/N` with `0 ≤ K < N`.
    pub fn parse(s: &str) -> Result<Shard, String> {
        let bad = || format!("{s:?} is not K/N with 0 ≤ K < N (the shards of N are 0/N … N-1/N)");
        let (k, n) = s.split_once('/').ok_or_else(bad)?;
        let (k, n): (usize, usize) = (
            k.trim().parse().map_err(|_| bad())?,
            n.trim().parse().map_err(|_| bad())?,
        );
        if k < n { Ok(Shard { k, n }) } else { Err(bad()) }
    }

    /// Whether the selection's record `i` (numbered by the rule of [`Shard`]) is this shard's.
    pub fn takes(self, i: usize) -> bool {
        i % self.n == self.k
    }
}

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

/// `cargo xtask grade`'s command line (clap): the raw flags, checked as they are parsed; [`Options`]
/// is what they select.
#[derive(clap::Args, Clone, Debug)]
pub struct GradeArgs {
    /// The implementation's command line, run by `sh -c` with `ops-conformance/` as its working
    /// directory; every word naming an existing file or directory relative to where you stand is
    /// made absolute first (`python3 fill.py` → `python3 /abs/fill.py`).
    #[arg(long = "impl", value_name = "COMMAND", value_parser = non_blank, required_unless_present = "merge")]
    pub implementation: Option<String>,
    /// What the implementation is graded as (integer-operators §1): `operator` computes each
    /// decode and load steps 1–7, and is given the profiles; `certifier` computes `load`, `profiles`
    /// and the lowering records; `sink` the lowering records' graphs and load, and the jpegai scale
    /// path; `all` every field (docs/protocol.md, "Roles").
    #[arg(long, value_name = "ROLE", value_enum, default_value_t = Role::Operator)]
    pub role: Role,
    /// The suites to grade, a comma list, repeatable: vectors, graphs, stage, lowerings, cis2,
    /// detessdequant, scale, or all (every suite the role computes something of) [default: the
    /// role's: operator vectors,graphs,stage; certifier vectors,graphs,lowerings; sink
    /// graphs,lowerings; all every suite but scale].
    #[arg(long = "suite", value_name = "SUITES", value_delimiter = ',', value_parser = suite_name)]
    pub suites: Vec<String>,
    /// Only these files, a comma list, repeatable: a stem (`conv`), a tree path
    /// (`vectors/conv.jsonl`) or a path under `provisional/`.
    #[arg(long, value_name = "FILES", value_delimiter = ',')]
    pub only: Vec<String>,
    /// Only the graph vectors tagged with this profile, and only its verdict.
    #[arg(long, value_name = "PROFILE", value_parser = PROFILES)]
    pub profile: Option<String>,
    /// Grade the files under `provisional/` too (never in a verdict).
    #[arg(long)]
    pub include_provisional: bool,
    /// A not-gradable record fails the exit status like a failed one.
    #[arg(long)]
    pub strict: bool,
    /// Seconds the implementation may take per file (a scale file gets one more per 4 Mi
    /// elements it writes out).
    #[arg(long, value_name = "SECS", default_value = "60", value_parser = seconds)]
    pub timeout: Duration,
    /// Write the machine-readable report here.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Write the Markdown report (the operator × profile matrix) here.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Grade only shard K of N (0 ≤ K < N) of the selected records: record i of the selection
    /// (files in path order, records in file order) is shard i mod N's. Its `--json` report is
    /// one of those `--merge` takes.
    #[arg(long, value_name = "K/N", value_parser = Shard::parse)]
    pub shard: Option<Shard>,
    /// Grade nothing: merge the `--json` reports of every shard of one grade (`--shard K/N`, each
    /// K once) into the reports an unsharded run writes (`--json`, `--markdown`, the summary and
    /// the exit status).
    #[arg(long, value_name = "REPORT.json", num_args = 1.., conflicts_with_all = MERGE_CONFLICTS)]
    pub merge: Vec<PathBuf>,
}

/// The flags that say what to grade and how, which a merge takes from its shards' reports.
const MERGE_CONFLICTS: [&str; 8] = [
    "implementation",
    "role",
    "suites",
    "only",
    "profile",
    "include_provisional",
    "timeout",
    "shard",
];

fn non_blank(s: &str) -> Result<String, String> {
    if s.trim().is_empty() {
        Err("the implementation's command line is empty".into())
    } else {
        Ok(s.to_string())
    }
}

fn suite_name(s: &str) -> Result<String, String> {
    if suite::named(s).is_some() || s == "all" {
        Ok(s.to_string())
    } else {
        let names: Vec<&str> = SUITES.iter().map(|s| s.name).collect();
        Err(format!("{s:?} is not one of {} or all", names.join(", ")))
    }
}

fn seconds(s: &str) -> Result<Duration, String> {
    let secs: f64 = s.parse().map_err(|_| format!("{s:?} is not a number of seconds"))?;
    if !(secs > 0.0 && secs < 1e6) {
        return Err(format!("{s} is not a positive number of seconds"));
    }
    Ok(Duration::from_secs_f64(secs))
}

impl TryFrom<GradeArgs> for Options {
    type Error = String;

    /// The options, or why a named suite has nothing the role computes.
    fn try_from(a: GradeArgs) -> Result<Options, String> {
        if !a.merge.is_empty() {
            return Err("--merge grades nothing: run it with `cargo xtask grade --merge`".into());
        }
        let implementation = a.implementation.ok_or("--impl COMMAND is required")?;
        let mut suites = a.suites;
        if suites.iter().any(|s| s == "all") {
            suites = SUITES.iter().map(|s| s.name.to_string()).collect();
            suites.retain(|s| a.role.grades_suite(s));
        }
        if let Some(s) = suites.iter().find(|s| !a.role.grades_suite(s)) {
            let whose = if s == suite::STAGE.name {
                "an operator implementation's (--role operator)"
            } else {
                "the certifier's and the sink's (--role certifier or sink)"
            };
            return Err(format!(
                "--suite {s}: --role {} computes nothing of its records; they are {whose}, or use --role all",
                a.role.name()
            ));
        }
        Ok(Options {
            implementation,
            role: a.role,
            suites,
            only: a.only,
            profile: a.profile,
            include_provisional: a.include_provisional,
            timeout: a.timeout,
            json: a.json,
            markdown: a.markdown,
            strict: a.strict,
            shard: a.shard,
        })
    }
}

/// `grade`'s flags alone, for [`Options::parse`].
#[derive(clap::Parser)]
#[command(name = "grade", no_binary_name = true)]
struct GradeCommand {
    #[command(flatten)]
    args: GradeArgs,
}

impl Options {
    /// The options of `grade`'s flags (without the word `grade`); a bad flag is clap's message.
    pub fn parse(args: &[String]) -> Result<Options, String> {
        use clap::Parser;
        GradeCommand::try_parse_from(args)
            .map_err(|e| e.to_string())
            .and_then(|c| c.args.try_into())
    }

    /// Whether the options select a suite: those named, or without `--suite` the role's.
    pub fn selects(&self, suite: &str) -> bool {
        if self.suites.is_empty() {
            self.role.default_suites().contains(&suite)
        } else {
            suite::named(suite).is_some() && self.suites.iter().any(|s| s == suite)
        }
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
            let (suite, provisional) = suite::of_path(&path)?;
            let rest = path.strip_prefix(&format!("{}/", suite::PROVISIONAL)).unwrap_or(&path);
            let stem = rest.rsplit('/').next()?.trim_end_matches(".jsonl");
            let keep = o.selects(suite.name)
                && (o.include_provisional || !provisional)
                && (o.only.is_empty() || o.only.iter().any(|x| x == stem || *x == path || x == rest));
            keep.then(|| GradedFile {
                suite: suite.name.to_string(),
                path,
                provisional,
            })
        })
        .collect()
}

/// A file's grade.
#[derive(Clone, Debug)]
pub struct FileGrade {
    pub file: GradedFile,
    pub records: Vec<Graded>,
    pub ending: Ending,
    /// The last lines the implementation wrote to its standard error on this file.
    pub stderr: Vec<String>,
    /// The records not sent, because the role computes nothing of them.
    pub withheld: Vec<Withheld>,
}

/// A record not sent: its id, and why.
pub type Withheld = (String, String);

impl FileGrade {
    pub fn count(&self, f: impl Fn(&Outcome) -> bool) -> usize {
        self.records.iter().filter(|r| f(&r.outcome)).count()
    }
}

/// Grades every selected file (with `--shard`, only the shard's records of each).
pub fn grade(tree: &Path, o: &Options) -> Result<Vec<FileGrade>, String> {
    grade_covering(tree, o).map(|(grades, _)| grades)
}

/// A selected file as a shard's report names it: its path, the number of its records the
/// selection sends (all shards together) and the SHA-256 of its committed bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Covered {
    pub path: String,
    pub sent: usize,
    pub sha256: String,
}

/// [`grade`], with every selected file's [`Covered`], which a shard's report carries.
///
/// Three stages overlap, each on a thread of its own, so that the grader's work hides behind the
/// implementation's runs (docs/bench.md, the grader's cost per record): the next files are read and
/// their requests made while the implementation runs on this one, and the last file's answers are
/// graded meanwhile. The implementation itself runs on one file at a time, in path order, as ever.
pub fn grade_covering(tree: &Path, o: &Options) -> Result<(Vec<FileGrade>, Vec<Covered>), String> {
    let selected = select(tree, o);
    std::thread::scope(|scope| {
        let (prepared, ready) = std::sync::mpsc::sync_channel(1);
        scope.spawn(move || {
            // The selection's records sent before each file's: the shard rule's numbering.
            let mut before = 0;
            for file in selected {
                let p = prepare(tree, file, o, &mut before);
                let failed = p.is_err();
                if prepared.send(p).is_err() || failed {
                    break;
                }
            }
        });
        let (answered, to_grade) = std::sync::mpsc::sync_channel::<Answered>(1);
        let grader = scope.spawn(move || to_grade.into_iter().filter_map(Answered::graded).collect::<Vec<_>>());
        let mut covered = Vec::new();
        for p in ready {
            let Prepared {
                file,
                committed,
                withheld,
                requests,
                covers,
            } = p?;
            covered.extend(covers);
            let answered_now = if committed.is_empty() {
                Answered::Graded(file, vec![], Ending::Exited(0), vec![], withheld)
            } else if file.suite == suite::SCALE.name {
                let (records, ending, stderr) =
                    grade_scale_capturing(tree, committed, o).map_err(|e| format!("{}: {e}", file.path))?;
                Answered::Graded(file, records, ending, stderr, withheld)
            } else {
                let caps = committed.iter().map(allowance).collect();
                let (response, ending, stderr) = run_capturing(&o.implementation, tree, requests, o.timeout, caps);
                Answered::Written {
                    file,
                    committed,
                    response,
                    ending,
                    stderr,
                    withheld,
                }
            };
            if answered.send(answered_now).is_err() {
                break;
            }
        }
        drop(answered);
        let out = grader.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
        Ok((out, covered))
    })
}

/// A selected file read: the records sent (only the shard's, with `--shard`) and their requests
/// when they are written out, and the records not sent.
struct Prepared {
    file: GradedFile,
    committed: Vec<Sent>,
    withheld: Vec<Withheld>,
    requests: Vec<u8>,
    /// The file as a shard's report names it, with `--shard`.
    covers: Option<Covered>,
}

/// Reads a selected file; `before` is the number of the selection's records sent before it, and
/// becomes the number sent up to its end.
fn prepare(tree: &Path, file: GradedFile, o: &Options, before: &mut usize) -> Result<Prepared, String> {
    let text = std::fs::read_to_string(tree.join(&file.path)).map_err(|e| format!("{}: {e}", file.path))?;
    let (mut committed, withheld) = committed_records(&text, &file, o)?;
    let mut covers = None;
    if let Some(shard) = o.shard {
        covers = Some(Covered {
            path: file.path.clone(),
            sent: committed.len(),
            sha256: wai_oracle::bounds::certificate::sha256_hex(text.as_bytes()),
        });
        let mut i = *before;
        committed.retain(|_| {
            i += 1;
            shard.takes(i - 1)
        });
        *before = i;
    }
    // A scale file's requests are expanded as the implementation reads them (`scale`).
    let requests = if file.suite == suite::SCALE.name {
        vec![]
    } else {
        committed.iter().map(Sent::request).collect::<String>().into_bytes()
    };
    Ok(Prepared {
        file,
        committed,
        withheld,
        requests,
        covers,
    })
}

/// A file the implementation has answered: graded already (a scale file is graded as its answers
/// arrive), or its answers to grade.
enum Answered {
    Graded(GradedFile, Vec<Graded>, Ending, Vec<String>, Vec<Withheld>),
    Written {
        file: GradedFile,
        committed: Vec<Sent>,
        response: Vec<Answer>,
        ending: Ending,
        stderr: Vec<String>,
        withheld: Vec<Withheld>,
    },
}

impl Answered {
    /// The file's grade, unless it has neither a record sent nor one withheld.
    fn graded(self) -> Option<FileGrade> {
        let (file, records, ending, stderr, withheld) = match self {
            Answered::Graded(file, records, ending, stderr, withheld) => (file, records, ending, stderr, withheld),
            Answered::Written {
                file,
                committed,
                response,
                ending,
                stderr,
                withheld,
            } => {
                let records = grade_answers(&committed, &response, &ending);
                (file, records, ending, stderr, withheld)
            }
        };
        (!records.is_empty() || !withheld.is_empty()).then_some(FileGrade {
            file,
            records,
            ending,
            stderr,
            withheld,
        })
    }
}

/// A file's committed records that the role computes something of (those of graph vectors only
/// when tagged with `--profile`), and the ids of the others with why they are not sent.
fn committed_records(text: &str, file: &GradedFile, o: &Options) -> Result<(Vec<Sent>, Vec<Withheld>), String> {
    let (mut sent, mut withheld) = (Vec::new(), Vec::new());
    for line in text.lines() {
        // `Value`'s `FromStr`: serde_json's own, optimized, parse (xtask builds unoptimized).
        let record: Value = line.parse().map_err(|e| format!("{}: {e}", file.path))?;
        let form = Form::of(&record);
        if let Some(p) = &o.profile
            && form == Form::GraphVector
            && !record["profiles"]
                .as_array()
                .is_some_and(|a| a.iter().any(|x| x == p.as_str()))
        {
            continue;
        }
        let c = Sent::new(record, o.role).with_line(line);
        if c.how.targets.is_empty() {
            let why = if c.form == Form::GraphVector {
                "refused at load step 8, the bounds pass: the certifier's (docs/assumptions.md G1)".to_string()
            } else {
                format!("{}: not computed under --role {}", c.form.name(), o.role.name())
            };
            withheld.push((record_id(&c.record), why));
        } else {
            sent.push(c);
        }
    }
    Ok((sent, withheld))
}

/// `cargo xtask grade`.
pub fn main(root: &Path, o: Options) -> Result<(), String> {
    let tree = root.join("ops-conformance");
    let start = Instant::now();
    let (grades, covered) = grade_covering(&tree, &o)?;
    print!("{}", summary(&grades, &o));
    eprintln!(
        "grade: {} files in {:.1} s",
        grades.len(),
        start.elapsed().as_secs_f64()
    );
    let report = match o.shard {
        Some(_) => shard_report(&grades, &o, &covered),
        None => json_report(&grades, &o),
    };
    write_reports(&grades, &o, &report)?;
    exit_status(&grades, &o)
}

/// Writes the `--json` report (`report`) and the `--markdown` one where the options say.
fn write_reports(grades: &[FileGrade], o: &Options, report: &Value) -> Result<(), String> {
    if let Some(p) = &o.json {
        wai_oracle::files::write(p, json_text(report).as_bytes()).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    if let Some(p) = &o.markdown {
        wai_oracle::files::write(p, markdown(grades, o).as_bytes()).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    Ok(())
}

/// The exit status: an error when a record failed or went unanswered (or, with `--strict`, was
/// not gradable).
fn exit_status(grades: &[FileGrade], o: &Options) -> Result<(), String> {
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
