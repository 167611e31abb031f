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

use crate::arrays;
use crate::check::strip;
use crate::jsondiff;
pub use crate::roles::Role;
use crate::roles::{self, Grading, Target};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
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
        }
    }
}

/// `cargo xtask grade`'s command line (clap): the raw flags, checked as they are parsed; [`Options`]
/// is what they select.
#[derive(clap::Args, Clone, Debug)]
pub struct GradeArgs {
    /// The implementation's command line, run by `sh -c` with `ops-conformance/` as its working
    /// directory; every word naming an existing file or directory relative to where you stand is
    /// made absolute first (`python3 fill.py` → `python3 /abs/fill.py`).
    #[arg(long = "impl", value_name = "COMMAND", value_parser = non_blank)]
    pub implementation: String,
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
}

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
            implementation: a.implementation,
            role: a.role,
            suites,
            only: a.only,
            profile: a.profile,
            include_provisional: a.include_provisional,
            timeout: a.timeout,
            json: a.json,
            markdown: a.markdown,
            strict: a.strict,
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

/// The implementation's command line with every word that names an existing file or directory
/// relative to where the grader was started made absolute (the implementation runs with the tree
/// as its working directory): a program path with a `/` (a bare program name is looked up on `PATH`)
/// and any later argument (`python3 fill.py` → `python3 /abs/fill.py`). Everything else, quoting,
/// flags and `NAME=value` words included, is kept as written.
pub fn command_line(implementation: &str) -> String {
    let mut out = String::new();
    let mut at = 0;
    let mut program_seen = false;
    for (start, word) in words(implementation) {
        out.push_str(&implementation[at..start]);
        at = start + word.len();
        let assignment = word.contains('=');
        let is_program = !program_seen && !assignment;
        program_seen |= is_program;
        let path = Path::new(word);
        let candidate = !assignment
            && !word.starts_with('-')
            && path.is_relative()
            && (!is_program || word.contains('/'))
            && path.exists();
        match candidate.then(|| std::fs::canonicalize(path)) {
            Some(Ok(abs)) => out.push_str(&shell_word(&abs.to_string_lossy())),
            _ => out.push_str(word),
        }
    }
    out.push_str(&implementation[at..]);
    out
}

/// The whitespace-separated words of a command line with their byte offsets.
fn words(s: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, ch) in s.char_indices() {
        match (ch.is_whitespace(), start) {
            (true, Some(b)) => {
                out.push((b, &s[b..i]));
                start = None;
            }
            (false, None) => start = Some(i),
            _ => {}
        }
    }
    if let Some(b) = start {
        out.push((b, &s[b..]));
    }
    out
}

/// A path as one `sh` word: as is when it is plain, single-quoted otherwise.
fn shell_word(path: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._+-,:@%".contains(c);
    if path.chars().all(plain) {
        path.to_string()
    } else {
        format!("'{}'", path.replace('\'', "'\\''"))
    }
}

/// The program the implementation's command line runs: its first word that is no `NAME=value`.
fn program(implementation: &str) -> &str {
    words(implementation)
        .into_iter()
        .map(|(_, w)| w)
        .find(|w| !w.contains('='))
        .unwrap_or("")
}

/// The last lines the implementation wrote to its standard error: at most [`Stderr::LINES`] lines
/// and [`Stderr::BYTES`] bytes are ever held, older ones dropped as newer ones arrive.
#[derive(Default)]
struct Stderr {
    lines: std::collections::VecDeque<Vec<u8>>,
    /// The line being written, its first [`Stderr::BYTES`] bytes.
    current: Vec<u8>,
    /// Bytes of `lines`.
    bytes: usize,
}

impl Stderr {
    const LINES: usize = 20;
    const BYTES: usize = 4096;

    fn push(&mut self, chunk: &[u8]) {
        for piece in chunk.split_inclusive(|&b| b == b'\n') {
            let (text, ends) = match piece.strip_suffix(b"\n") {
                Some(t) => (t, true),
                None => (piece, false),
            };
            let room = Stderr::BYTES.saturating_sub(self.current.len());
            self.current.extend_from_slice(&text[..text.len().min(room)]);
            if ends {
                self.end_line();
            }
        }
    }

    fn end_line(&mut self) {
        let line = std::mem::take(&mut self.current);
        self.bytes += line.len();
        self.lines.push_back(line);
        while self.lines.len() > Stderr::LINES || (self.bytes > Stderr::BYTES && self.lines.len() > 1) {
            let gone = self.lines.pop_front().map_or(0, |l| l.len());
            self.bytes -= gone;
        }
    }

    fn tail(mut self) -> Vec<String> {
        if !self.current.is_empty() {
            self.end_line();
        }
        self.lines
            .iter()
            .map(|l| String::from_utf8_lossy(l).into_owned())
            .collect()
    }
}

/// Runs the implementation on `input` with the tree as its working directory; its standard
/// output (at most `cap` bytes are kept) and how it ended. Never waits past `timeout`.
pub fn run(implementation: &str, tree: &Path, input: Vec<u8>, timeout: Duration, cap: usize) -> (Vec<u8>, Ending) {
    let (out, ending, _) = run_capturing(implementation, tree, input, timeout, cap);
    (out, ending)
}

/// [`run`], with the last lines of the implementation's standard error.
pub fn run_capturing(
    implementation: &str,
    tree: &Path,
    input: Vec<u8>,
    timeout: Duration,
    cap: usize,
) -> (Vec<u8>, Ending, Vec<String>) {
    // What the reader has kept so far stays ours even if a stray descendant holds the pipe open.
    let kept = Arc::new(Mutex::new(Vec::new()));
    let (ending, stderr) = supervise(
        implementation,
        tree,
        timeout,
        move |mut stdin| {
            // A broken pipe (the implementation stopped reading) is the implementation's failure.
            let _ = stdin.write_all(&input);
        },
        {
            let kept = kept.clone();
            move |mut stdout| {
                let mut buf = [0u8; 65536];
                while let Ok(n) = stdout.read(&mut buf) {
                    if n == 0 {
                        break;
                    }
                    let mut kept = lock(&kept);
                    let room = cap.saturating_sub(kept.len());
                    kept.extend_from_slice(&buf[..n.min(room)]);
                }
            }
        },
    );
    let out = std::mem::take(&mut *lock(&kept));
    (out, ending, stderr)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Starts the implementation with the tree as its working directory, `write` feeding its standard
/// input and `read` taking its standard output, each on a thread of its own; how it ended. Never
/// waits past `timeout` for the implementation, and after it ends waits for `read` only while
/// `read` works on what it received, not while it waits on a pipe a stray descendant holds open.
/// The last lines of its standard error come back with how it ended.
fn supervise(
    implementation: &str,
    tree: &Path,
    timeout: Duration,
    write: impl FnOnce(ChildStdin) + Send + 'static,
    read: impl FnOnce(Pipe) + Send + 'static,
) -> (Ending, Vec<String>) {
    use std::os::unix::process::CommandExt;
    // Its own process group, so that a timeout kills the shell and everything it started.
    let child = Command::new("sh")
        .arg("-c")
        .arg(command_line(implementation))
        .process_group(0)
        .current_dir(tree)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => return (Ending::NotStarted(e.to_string()), vec![]),
    };
    let stderr = Arc::new(Mutex::new(Stderr::default()));
    let errors = {
        let (mut pipe, stderr) = (child.stderr.take().expect("piped"), stderr.clone());
        std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n @ 1..) = pipe.read(&mut buf) {
                lock(&stderr).push(&buf[..n]);
            }
        })
    };
    let stdin = child.stdin.take().expect("piped");
    let writer = std::thread::spawn(move || write(stdin));
    let pipe = Pipe {
        out: child.stdout.take().expect("piped"),
        waits: Arc::default(),
    };
    let waits = pipe.waits.clone();
    let reader = std::thread::spawn(move || read(pipe));
    let ending = wait(&mut child, timeout);
    let _ = writer.join();
    waits.outlast(&reader);
    // A stray descendant may hold standard error open too: what arrived by now is kept.
    let since = Instant::now();
    while !errors.is_finished() && since.elapsed() < Duration::from_millis(200) {
        std::thread::sleep(Duration::from_millis(5));
    }
    let tail = std::mem::take(&mut *lock(&stderr)).tail();
    (ending, tail)
}

/// Waits for the implementation to end, killing it and everything it started at `timeout`.
fn wait(child: &mut Child, timeout: Duration) -> Ending {
    let start = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return status.code().map_or(Ending::Killed, Ending::Exited),
            Ok(None) if start.elapsed() >= timeout => {
                // `-s KILL -- -PGID`: procps' kill reads `-KILL -PGID` as two signal options.
                let _ = Command::new("kill")
                    .args(["-s", "KILL", "--", &format!("-{}", child.id())])
                    .status();
                let _ = child.kill();
                let _ = child.wait();
                return Ending::TimedOut;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Ending::NotStarted(e.to_string()),
        }
    }
}

/// The implementation's standard output, noting when its reader waits on it.
struct Pipe {
    out: ChildStdout,
    waits: Arc<Waits>,
}

#[derive(Default)]
struct Waits {
    /// The reader is inside a read of the pipe.
    waiting: AtomicBool,
    /// Reads returned so far.
    reads: AtomicU64,
}

impl Read for Pipe {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.waits.waiting.store(true, Ordering::SeqCst);
        let n = self.out.read(buf);
        self.waits.reads.fetch_add(1, Ordering::SeqCst);
        self.waits.waiting.store(false, Ordering::SeqCst);
        n
    }
}

impl Waits {
    /// Waits for `reader` to finish once the implementation has ended: as long as it works on what
    /// it received (a scale answer takes seconds to fold), but only half a second of it waiting on
    /// the pipe with nothing coming (a killed implementation's descendant may hold it open).
    fn outlast(&self, reader: &JoinHandle<()>) {
        let mut seen = (u64::MAX, Instant::now());
        while !reader.is_finished() {
            let reads = self.reads.load(Ordering::SeqCst);
            if reads != seen.0 || !self.waiting.load(Ordering::SeqCst) {
                seen = (reads, Instant::now());
            } else if seen.1.elapsed() >= Duration::from_millis(500) {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }
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
    // Written only as far as shown: a value may be a tensor of millions of elements.
    let mut head = Head(Vec::new());
    let _ = serde_json::to_writer(&mut head, v);
    let s = String::from_utf8_lossy(&head.0);
    if s.len() > 120 {
        // Cut at a character boundary: a received value may hold any UTF-8.
        let cut = (0..=117).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0);
        format!("{}…", &s[..cut])
    } else {
        s.into_owned()
    }
}

/// A writer that keeps the first [`Head::KEEP`] bytes written to it, then refuses more.
struct Head(Vec<u8>);

impl Head {
    /// Enough to tell a value longer than [`short`] shows.
    const KEEP: usize = 124;
}

impl Write for Head {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let room = Head::KEEP.saturating_sub(self.0.len());
        if room == 0 {
            return Err(std::io::ErrorKind::WriteZero.into());
        }
        let n = buf.len().min(room);
        self.0.extend_from_slice(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The differences between a committed value and a received one, at most `limit` of them; a
/// tensor (`{data, shape}`) is compared element by element with each element's `(c, y, x)`, and the
/// elements of a tensor past the limit are counted.
pub fn diff(committed: &Value, received: &Value, path: &str, limit: usize, out: &mut Vec<Diff>) {
    // Per tensor past the limit: its `data` path and how many more elements differ.
    let mut more: Vec<(String, usize)> = Vec::new();
    jsondiff::walk(committed, received, &mut |steps, c, r| {
        let here = joined(path, &jsondiff::render(steps));
        let show = |v: Option<&Value>| v.map_or("(absent)".into(), short);
        match tensor_element(committed, received, steps) {
            Some(_) if out.len() >= limit => {
                let data = here.rsplit_once('[').map_or(here.clone(), |x| x.0.to_string());
                match more.iter_mut().find(|m| m.0 == data) {
                    Some(m) => m.1 += 1,
                    None => more.push((data, 1)),
                }
            }
            Some((i, dims)) => out.push(Diff {
                path: format!("{here} (c, y, x) = {}", position(i, &dims)),
                committed: show(c),
                received: show(r),
            }),
            None => match (c, r) {
                (Some(Value::Array(a)), Some(Value::Array(b))) if tensor_data(committed, received, steps) => out_push(
                    out,
                    limit,
                    here,
                    format!("{} elements", a.len()),
                    format!("{} elements", b.len()),
                ),
                _ => out_push(out, limit, here, show(c), show(r)),
            },
        }
        ControlFlow::Continue(())
    });
    for (data, n) in more {
        more_elements(out, &data, n);
    }
}

/// `a.b` from a prefix path and a rendered one.
fn joined(prefix: &str, path: &str) -> String {
    match (prefix.is_empty(), path.is_empty()) {
        (true, _) => path.to_string(),
        (false, true) => prefix.to_string(),
        (false, false) => format!("{prefix}.{path}"),
    }
}

/// When `steps` is an element of a tensor's `data` (`…data[i]`) whose shape both sides share: its
/// index and the tensor's dimensions.
fn tensor_element(committed: &Value, received: &Value, steps: &[jsondiff::Step]) -> Option<(usize, Vec<usize>)> {
    let [parent @ .., jsondiff::Step::Key("data"), jsondiff::Step::Index(i)] = steps else {
        return None;
    };
    let dims = shared_shape(committed, received, parent)?;
    Some((*i, dims))
}

/// Whether `steps` is the `data` of a tensor whose shape both sides share.
fn tensor_data(committed: &Value, received: &Value, steps: &[jsondiff::Step]) -> bool {
    matches!(steps, [parent @ .., jsondiff::Step::Key("data")] if shared_shape(committed, received, parent).is_some())
}

/// The dimensions of the tensor at `path` when it is a tensor on both sides with one shape.
fn shared_shape(committed: &Value, received: &Value, path: &[jsondiff::Step]) -> Option<Vec<usize>> {
    let (a, b) = (
        jsondiff::at(committed, path)?.as_object()?,
        jsondiff::at(received, path)?.as_object()?,
    );
    if !(is_tensor(a) && is_tensor(b) && a["shape"] == b["shape"]) {
        return None;
    }
    let dims = a["shape"].as_array()?.iter();
    Some(
        dims.map(|d| d.as_str().and_then(|s| s.parse().ok()).unwrap_or(0))
            .collect(),
    )
}

/// Notes, past the limit, how many more elements of the tensor at `path` differ than are listed.
fn more_elements(out: &mut Vec<Diff>, path: &str, more: usize) {
    if more > 0 {
        out.push(Diff {
            path: format!("{path}: … {more} more differing elements not shown"),
            committed: String::new(),
            received: String::new(),
        });
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
    pub outcome: Outcome,
    /// The verdicts the record counts in, each with whether the fields its target computes matched
    /// (all false when the record failed as a whole: no line, not JSON).
    pub targets: Vec<(Target, bool)>,
}

/// A committed record as the grade sends it: its form and how the role grades it.
#[derive(Clone, Debug)]
pub struct Sent {
    pub record: Value,
    pub form: Form,
    pub how: Grading,
}

impl Sent {
    /// A committed record as `role` grades it.
    pub fn new(record: Value, role: Role) -> Sent {
        let form = Form::of(&record);
        let bounds = role == Role::Operator && form == Form::GraphVector && roles::refused_at_bounds(&record);
        let how = roles::grading(role, form, &record, bounds);
        Sent { record, form, how }
    }

    /// The request: the record without its computed fields, with the profiles when they are given.
    fn request(&self) -> Result<String, String> {
        let line = strip(format!("{}\n", self.record).as_bytes())?;
        if !self.how.profiles_given {
            return String::from_utf8(line).map_err(|e| e.to_string());
        }
        let mut r: Value = serde_json::from_slice(&line).map_err(|e| e.to_string())?;
        r["profiles"] = self.record["profiles"].clone();
        Ok(format!("{r}\n"))
    }
}

/// The most differing fields a failed record reports.
const LIMIT: usize = 8;

/// Grades one file's responses against its committed records.
pub fn grade_lines(committed: &[Sent], response: &[u8], ending: &Ending) -> Vec<Graded> {
    let text = String::from_utf8_lossy(response);
    let mut lines = text.lines();
    committed
        .iter()
        .map(|c| match lines.next() {
            None => unanswered(c, ending),
            Some(line) => grade_answer(c, line, |c, r| {
                let mut d = Vec::new();
                diff(c, r, "", LIMIT, &mut d);
                d.iter_mut().for_each(|d| explain(c, d));
                d
            }),
        })
        .collect()
}

/// Adds to a differing output element of a one-operator graph vector what feeds it, by the checker
/// (the input elements at its position, an `rq`'s steps): `… (c, y, x) = (0, 0, 3), fed by inputs[0]
/// = 5; rq (§5.1): …`.
fn explain(record: &Value, d: &mut Diff) {
    let at = |s: &str, prefix: &str| -> Option<(usize, String)> {
        let (n, rest) = s.strip_prefix(prefix)?.split_once(']')?;
        Some((n.parse().ok()?, rest.to_string()))
    };
    let element = at(&d.path, "decodes[").and_then(|(decode, rest)| {
        let (output, rest) = at(&rest, ".expect.outputs[")?;
        let (index, _) = at(&rest, ".data[")?;
        wai_checker::explain::element(record, decode, output, index)
    });
    if let Some(words) = element {
        d.path = format!("{}, fed by {words}", d.path);
    }
}

/// A record with no answer line.
fn unanswered(c: &Sent, ending: &Ending) -> Graded {
    failed_whole(c, Outcome::Unanswered(ending.why()))
}

/// A record whose answer failed as a whole: failed in every verdict it counts in.
fn failed_whole(c: &Sent, outcome: Outcome) -> Graded {
    Graded {
        id: record_id(&c.record),
        outcome,
        targets: c.how.targets.iter().map(|t| (*t, false)).collect(),
    }
}

/// Grades one answer line: garbage fails, a decline is not gradable, and a record is compared with
/// the committed one by `differences`.
fn grade_answer(c: &Sent, line: &str, differences: impl FnMut(&Value, &Value) -> Vec<Diff>) -> Graded {
    match serde_json::from_str::<Value>(line) {
        Ok(r) => grade_value(c, &r, differences),
        Err(e) => not_json(c, line, e),
    }
}

/// A line that is not JSON: failed, with the line's start.
fn not_json(c: &Sent, line: &str, e: serde_json::Error) -> Graded {
    // Only the line's start is shown, and a scale answer's line may hold a gigabyte.
    let start = Value::String(line.chars().take(120).collect());
    let d = Diff {
        path: "(line)".into(),
        committed: "a JSON record".into(),
        received: format!("not JSON ({e}): {}", short(&start)),
    };
    failed_whole(c, Outcome::Failed(vec![d]))
}

/// Grades a parsed answer: a decline is not gradable; otherwise each target's fields
/// ([`roles::owned`]) are compared by `differences`, and the record's differences are theirs
/// together.
fn grade_value(c: &Sent, r: &Value, mut differences: impl FnMut(&Value, &Value) -> Vec<Diff>) -> Graded {
    let id = record_id(&c.record);
    if let Some(why) = not_supported(r, &id) {
        let targets = c.how.targets.iter().map(|t| (*t, false)).collect();
        return Graded {
            id,
            outcome: Outcome::NotGradable(why),
            targets,
        };
    }
    let mut all: Vec<Diff> = Vec::new();
    let mut targets = Vec::new();
    // Targets that own the same fields (an operator's two profiles) are compared once.
    let mut compared: Vec<(Value, bool)> = Vec::new();
    for &t in &c.how.targets {
        let mine = roles::owned(t, c.form, &c.record);
        let ok = match compared.iter().find(|(v, _)| *v == mine) {
            Some((_, ok)) => *ok,
            None => {
                let d = differences(&mine, &roles::owned(t, c.form, r));
                let ok = d.is_empty();
                all.extend(d.into_iter().filter(|x| !all.contains(x)).collect::<Vec<_>>());
                compared.push((mine, ok));
                ok
            }
        };
        targets.push((t, ok));
    }
    let outcome = if all.is_empty() {
        Outcome::Passed
    } else {
        Outcome::Failed(all)
    };
    Graded { id, outcome, targets }
}

fn record_id(c: &Value) -> String {
    c.get("id").and_then(Value::as_str).unwrap_or("?").to_string()
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

/// Grades every selected file.
pub fn grade(tree: &Path, o: &Options) -> Result<Vec<FileGrade>, String> {
    let mut out = Vec::new();
    for file in select(tree, o) {
        let text = std::fs::read_to_string(tree.join(&file.path)).map_err(|e| format!("{}: {e}", file.path))?;
        let (committed, withheld) = committed_records(&text, &file, o)?;
        let (records, ending, stderr) = if committed.is_empty() {
            (vec![], Ending::Exited(0), vec![])
        } else if file.suite == suite::SCALE.name {
            grade_scale_capturing(tree, committed, o).map_err(|e| format!("{}: {e}", file.path))?
        } else {
            // Room for the answers: twice the committed bytes, and some.
            grade_written(tree, &committed, 2 * text.len() + (1 << 20), o)?
        };
        if !records.is_empty() || !withheld.is_empty() {
            out.push(FileGrade {
                file,
                records,
                ending,
                stderr,
                withheld,
            });
        }
    }
    Ok(out)
}

/// A file's committed records that the role computes something of (those of graph vectors only
/// when tagged with `--profile`), and the ids of the others with why they are not sent.
fn committed_records(text: &str, file: &GradedFile, o: &Options) -> Result<(Vec<Sent>, Vec<Withheld>), String> {
    let (mut sent, mut withheld) = (Vec::new(), Vec::new());
    for line in text.lines() {
        let record: Value = serde_json::from_str(line).map_err(|e| format!("{}: {e}", file.path))?;
        let form = Form::of(&record);
        if let Some(p) = &o.profile
            && form == Form::GraphVector
            && !record["profiles"]
                .as_array()
                .is_some_and(|a| a.iter().any(|x| x == p.as_str()))
        {
            continue;
        }
        let c = Sent::new(record, o.role);
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

/// Grades a file whose records are written out: every request at once, the answers kept up to `cap`
/// bytes.
fn grade_written(
    tree: &Path,
    committed: &[Sent],
    cap: usize,
    o: &Options,
) -> Result<(Vec<Graded>, Ending, Vec<String>), String> {
    let requests: Vec<u8> = committed
        .iter()
        .map(Sent::request)
        .collect::<Result<String, _>>()?
        .into_bytes();
    let (response, ending, stderr) = run_capturing(&o.implementation, tree, requests, o.timeout, cap);
    Ok((grade_lines(committed, &response, &ending), ending, stderr))
}

/// Grades a scale file (docs/protocol.md, the scale tier). A written-out request or answer may take
/// hundreds of megabytes, so neither is ever held for more than one record: the writer thread
/// expands one record's recipes at a time, and the reader thread folds each answer back into the
/// record's form as its line arrives, compares it, and keeps only its grade.
pub fn grade_scale(tree: &Path, committed: Vec<Sent>, o: &Options) -> Result<(Vec<Graded>, Ending), String> {
    grade_scale_capturing(tree, committed, o).map(|(records, ending, _)| (records, ending))
}

/// [`grade_scale`], with the last lines of the implementation's standard error.
fn grade_scale_capturing(
    tree: &Path,
    committed: Vec<Sent>,
    o: &Options,
) -> Result<(Vec<Graded>, Ending, Vec<String>), String> {
    let timeout = scale_timeout(&committed, o.timeout);
    let committed = Arc::new(committed);
    let grades = Arc::new(Mutex::new(Vec::new()));
    let unexpanded = Arc::new(Mutex::new(None));
    let (ending, stderr) = supervise(
        &o.implementation,
        tree,
        timeout,
        {
            let (committed, unexpanded) = (committed.clone(), unexpanded.clone());
            move |stdin| {
                if let Err(e) = write_expanded(&committed, stdin) {
                    *lock(&unexpanded) = Some(e);
                }
            }
        },
        {
            let (committed, grades) = (committed.clone(), grades.clone());
            move |stdout| read_answers(&committed, stdout, &grades)
        },
    );
    if let Some(e) = lock(&unexpanded).take() {
        return Err(e);
    }
    let mut records = std::mem::take(&mut *lock(&grades));
    records.extend(committed[records.len()..].iter().map(|c| unanswered(c, &ending)));
    Ok((records, ending, stderr))
}

/// A scale file's run may take one more `--timeout` per this many elements of its records' tensors.
const ELEMENTS_PER_TIMEOUT: u64 = 1 << 22;

/// A scale file's timeout: `timeout` once, and once more per [`ELEMENTS_PER_TIMEOUT`] elements of
/// its records' tensors written out.
fn scale_timeout(committed: &[Sent], timeout: Duration) -> Duration {
    let elements: u64 = committed.iter().map(|c| written_elements(&c.record)).sum();
    let extra = u32::try_from(elements / ELEMENTS_PER_TIMEOUT).unwrap_or(u32::MAX);
    timeout.saturating_mul(extra.saturating_add(1))
}

/// The elements a scale record's answer writes out, by its committed shapes: every decode's inputs
/// (echoed) and outputs.
fn written_elements(c: &Value) -> u64 {
    let decodes = c["decodes"].as_array().into_iter().flatten();
    decodes
        .flat_map(|d| {
            let outputs = d.pointer("/expect/outputs").and_then(Value::as_array);
            d["inputs"]
                .as_array()
                .into_iter()
                .flatten()
                .chain(outputs.into_iter().flatten())
        })
        .map(|t| {
            let dims = t["shape"].as_array().into_iter().flatten();
            dims.map(|d| d.as_str().and_then(|d| d.parse().ok()).unwrap_or(0))
                .fold(1u64, u64::saturating_mul)
        })
        .fold(0, u64::saturating_add)
}

/// The most bytes a scale record's answer line may take: 24 per element written out (a quoted
/// 64-bit integer and its comma), twice the committed record, and 1 MiB. The rest of a longer line
/// is read and dropped, so that a runaway implementation never grows the grader.
fn allowance(c: &Value) -> usize {
    let bytes = 24u64
        .saturating_mul(written_elements(c))
        .saturating_add(2 * c.to_string().len() as u64 + (1 << 20));
    usize::try_from(bytes).unwrap_or(usize::MAX)
}

/// Writes each record's request, its recipes expanded as they are written, one record at a time.
/// Stops quietly when the implementation stops reading (its failure, graded as such); fails on a
/// record that does not expand, a suite bug.
fn write_expanded(committed: &[Sent], stdin: ChildStdin) -> Result<(), String> {
    let mut w = BufWriter::new(stdin);
    for c in committed {
        // The stripped record's expansion: `write_expanded` drops the computed fields.
        match recipe::write_expanded(&c.record, c.how.profiles_given, &mut w).and_then(|_| w.flush()) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                return Err(format!("record {}: {e}", record_id(&c.record)));
            }
            Err(_) => break,
        }
    }
    Ok(())
}

/// Grades each answer line as it arrives, keeping only the grades; past the last record's answer,
/// reads on and keeps nothing, so that the implementation never blocks on a full pipe.
fn read_answers(committed: &[Sent], stdout: Pipe, grades: &Mutex<Vec<Graded>>) {
    let mut stdout = BufReader::new(stdout);
    for c in committed {
        let cap = allowance(&c.record);
        let Some((line, whole)) = read_line(&mut stdout, cap) else {
            return;
        };
        let g = if whole {
            grade_scale_answer(c, &line)
        } else {
            let d = Diff {
                path: "(line)".into(),
                committed: format!("a line of at most {cap} bytes"),
                received: "a longer line (the rest was not read)".into(),
            };
            failed_whole(c, Outcome::Failed(vec![d]))
        };
        lock(grades).push(g);
    }
    let _ = std::io::copy(&mut stdout, &mut std::io::sink());
}

/// The next line, without its line feed, and whether it was whole: a line longer than `cap` bytes
/// is read to its end and dropped. `None` at the end of the output.
fn read_line(r: &mut impl BufRead, cap: usize) -> Option<(Vec<u8>, bool)> {
    let mut line = Vec::new();
    // One byte past the cap tells a longer line.
    let n = r.take(cap as u64 + 1).read_until(b'\n', &mut line).ok()?;
    if n == 0 {
        return None;
    }
    if line.last() == Some(&b'\n') {
        line.pop();
    } else if line.len() > cap {
        let _ = r.skip_until(b'\n');
        return Some((Vec::new(), false));
    }
    Some((line, true))
}

/// Grades one scale answer as [`grade_answer`] does, its `data` arrays never parsed into JSON
/// values ([`arrays::split`]).
fn grade_scale_answer(c: &Sent, line: &[u8]) -> Graded {
    match arrays::split(line) {
        Ok(split) => {
            // Folded once, before each target's fields are picked out.
            let mut r = split.skeleton.clone();
            let written = fold(&c.record, &mut r, &split);
            grade_value(c, &r, |mine, theirs| {
                scale_differences(&c.record, mine, theirs, &written)
            })
        }
        Err(e) => not_json(c, &String::from_utf8_lossy(&line[..line.len().min(480)]), e),
    }
}

/// A tensor of an answer as the implementation wrote it, kept until its record is compared.
struct Written<'a> {
    /// Its path in the record, as a diff names it: `decodes[0].expect.outputs[1]`.
    path: String,
    /// The same, as a JSON pointer.
    pointer: String,
    shape: [u64; 3],
    data: &'a [u8],
}

/// A target's fields of a scale answer (`theirs`, folded back into the record's form by [`fold`]:
/// an input echo that is its recipe written out becomes the recipe, an output its digest) against
/// the record's (`mine`), field by field; a tensor that differs is diffed element by element
/// against the checker's, computed only then.
fn scale_differences(record: &Value, mine: &Value, theirs: &Value, written: &[Written]) -> Vec<Diff> {
    let mut d = Vec::new();
    diff(mine, theirs, "", LIMIT, &mut d);
    let differing: Vec<&Written> = written
        .iter()
        .filter(|w| d.iter().any(|x| under(&x.path, &w.path)))
        .collect();
    if differing.is_empty() {
        d
    } else {
        element_diffs(record, d, &differing)
    }
}

/// Whether a diff's path lies in the tensor at `tensor`.
fn under(path: &str, tensor: &str) -> bool {
    path.strip_prefix(tensor)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
}

/// Folds an answer's written-out tensors into the record's form in place; returns each folded
/// tensor as written (an input echo only when it is not its recipe written out).
fn fold<'a>(c: &Value, r: &mut Value, split: &arrays::Split<'a>) -> Vec<Written<'a>> {
    let mut written = Vec::new();
    let decodes = r.get_mut("decodes").and_then(Value::as_array_mut);
    for (i, d) in decodes.into_iter().flatten().enumerate() {
        let inputs = d.get_mut("inputs").and_then(Value::as_array_mut);
        for (k, t) in inputs.into_iter().flatten().enumerate() {
            let recipe = &c["decodes"][i]["inputs"][k];
            let path = format!("decodes[{i}].inputs[{k}]");
            if echoes(recipe, t, split) {
                *t = recipe.clone();
            } else if let Some(w) = compacted(t, split, path, format!("/decodes/{i}/inputs/{k}")) {
                written.push(w);
            }
        }
        let outputs = d.pointer_mut("/expect/outputs").and_then(Value::as_array_mut);
        for (k, t) in outputs.into_iter().flatten().enumerate() {
            let path = format!("decodes[{i}].expect.outputs[{k}]");
            written.extend(compacted(t, split, path, format!("/decodes/{i}/expect/outputs/{k}")));
        }
    }
    written
}

/// The shape and `data` bytes of a written-out tensor of the skeleton.
fn tensor_parts<'a>(t: &Value, split: &arrays::Split<'a>) -> Result<([u64; 3], &'a [u8]), String> {
    let o = t
        .as_object()
        .filter(|o| o.len() == 2)
        .ok_or("not a tensor {\"data\", \"shape\"}")?;
    let data = split.data(t).ok_or("data: not an array of integer strings")?;
    let dims: Vec<u64> = o["shape"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| d.as_str().and_then(wai_checker::canon::parse_u64))
        .collect::<Option<_>>()
        .ok_or("shape: not canonical integers")?;
    let shape: [u64; 3] = dims.try_into().map_err(|_| "shape: not three dimensions")?;
    Ok((shape, data))
}

/// Replaces a written-out tensor by its digest form (or, when it is no tensor, by why) and returns
/// it as written, when it is a tensor.
fn compacted<'a>(t: &mut Value, split: &arrays::Split<'a>, path: String, pointer: String) -> Option<Written<'a>> {
    let parts = tensor_parts(t, split);
    let form = parts
        .clone()
        .and_then(|(shape, data)| recipe::compact_data(shape, data))
        .unwrap_or_else(|e| Value::String(format!("not a tensor: {e}")));
    *t = form;
    let (shape, data) = parts.ok()?;
    Some(Written {
        path,
        pointer,
        shape,
        data,
    })
}

/// Whether a received input is the committed recipe written out, element by element (the
/// expansion itself is never formed).
fn echoes(recipe: &Value, received: &Value, split: &arrays::Split) -> bool {
    let Ok(t) = recipe::RecipeTensor::read(recipe, "input") else {
        return false;
    };
    matches!(tensor_parts(received, split), Ok((shape, data)) if shape == t.shape && recipe::echoes_data(&t, data))
}

/// `d` with the differences in each differing tensor replaced by its first differing elements
/// against the checker's expected tensor (the record's expansion, filled by the checker), with
/// their `(c, y, x)`. An expected output whose digest is not the committed one is a suite bug, said
/// loudly.
fn element_diffs(c: &Value, d: Vec<Diff>, differing: &[&Written]) -> Vec<Diff> {
    let line = match expected(c) {
        Ok(line) => line,
        Err(e) => {
            let mut d = d;
            d.push(Diff {
                path: "(expected tensors)".into(),
                committed: format!("the checker could not fill the expanded record: {e}"),
                received: String::new(),
            });
            return d;
        }
    };
    let expected = match arrays::split(line.as_bytes()) {
        Ok(e) => e,
        Err(e) => {
            return vec![bug(
                c,
                "(expected tensors)",
                format!("the checker's line is not JSON: {e}"),
            )];
        }
    };
    let mut out = Vec::new();
    let mut done: Vec<&str> = Vec::new();
    for x in d {
        let w = differing.iter().find(|w| under(&x.path, &w.path));
        let e = w.and_then(|w| {
            expected
                .skeleton
                .pointer(&w.pointer)
                .map(|e| (w, tensor_parts(e, &expected)))
        });
        match e {
            None => out.push(x),
            Some((w, _)) if done.contains(&w.path.as_str()) => {}
            Some((w, Err(e))) => out.push(bug(c, &w.path, format!("the checker's tensor: {e}"))),
            Some((w, Ok((shape, data)))) => {
                done.push(&w.path);
                suite_bug(c, w, shape, data, &mut out);
                elements_differing(w, shape, data, &mut out);
            }
        }
    }
    out
}

/// The first elements of a written tensor that differ from the expected one, with their `(c, y, x)`.
fn elements_differing(w: &Written, shape: [u64; 3], expected: &[u8], out: &mut Vec<Diff>) {
    if w.shape != shape {
        let dims = |s: [u64; 3]| format!("{s:?}");
        return out_push(out, LIMIT, format!("{}.shape", w.path), dims(shape), dims(w.shape));
    }
    let dims = shape.map(|d| d as usize);
    let mut received = recipe::data_elements(w.data);
    // Past the limit the rest is only counted, for the report's "… more not shown".
    let mut more = 0;
    for (i, e) in recipe::data_elements(expected).enumerate() {
        let (e, r) = (e.unwrap_or_default(), received.next());
        let r = match r {
            Some(Ok(r)) if r == e => continue,
            Some(Ok(r)) => format!("{r:?}"),
            Some(Err(why)) => why,
            None => "(absent)".into(),
        };
        if out.len() >= LIMIT {
            more += 1;
            continue;
        }
        let path = format!("{}.data[{i}] (c, y, x) = {}", w.path, position(i, &dims));
        out_push(out, LIMIT, path, format!("{e:?}"), r);
    }
    more_elements(out, &format!("{}.data", w.path), more);
}

/// The checker's answer to a record's expanded request: every tensor written out.
fn expected(c: &Value) -> Result<String, String> {
    use wai_checker::fill::fill_line;
    use wai_checker::request::LineError;
    let mut request = Vec::new();
    recipe::write_expanded(c, false, &mut request).map_err(|e| e.to_string())?;
    fill_line(String::from_utf8_lossy(&request).trim_end()).map_err(|e| match e {
        LineError::Bad(m) | LineError::Bug(m) => m,
    })
}

/// A suite bug's difference, printed too: the checker and the suite disagree.
fn bug(c: &Value, path: &str, what: String) -> Diff {
    eprintln!("grade: SUITE BUG: record {}: {path}: {what}", record_id(c));
    Diff {
        path: format!("{path} (SUITE BUG)"),
        committed: what,
        received: String::new(),
    }
}

/// Notes (and prints) an expected output that does not match the committed digest: the checker and
/// the suite disagree, so the suite or the checker has a bug.
fn suite_bug(c: &Value, w: &Written, shape: [u64; 3], data: &[u8], out: &mut Vec<Diff>) {
    // Outputs only: an input's recipe has no digest to disagree with.
    let Some(committed) = c.pointer(&w.pointer).filter(|_| w.pointer.contains("/expect/")) else {
        return;
    };
    let form = recipe::compact_data(shape, data).unwrap_or_else(Value::String);
    if form != *committed {
        let d = Diff {
            path: format!(
                "{} (SUITE BUG: the checker's expected tensor is not the committed one)",
                w.path
            ),
            committed: short(committed),
            received: format!("the checker's {}", short(&form)),
        };
        eprintln!(
            "grade: SUITE BUG: record {}: {}: committed {} vs the checker's {}",
            record_id(c),
            w.path,
            d.committed,
            d.received
        );
        out.push(d);
    }
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

/// The terminal report.
pub fn summary(grades: &[FileGrade], o: &Options) -> String {
    let mut s = format!("{}\n\n", graded_as(o));
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
            g.count(|x| *x == Outcome::Passed),
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
                Outcome::Passed | Outcome::NotGradable(_) => continue,
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
                    "ending": format!("{:?}", g.ending), "stderr": g.stderr, "records": records })
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
        "# Grade of `{}`\n\nGraded as {} (`--role {}`).\n\nOperator × profile: the vectors tagged with the profile \
         that pass, out of those graded (`n/g`: not gradable, the implementation declined them; `—`: no vector, or \
         none graded as an operator implementation):\n\n",
        o.implementation,
        role_words(o.role),
        o.role.name()
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
            g.count(|x| *x == Outcome::Passed),
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
pub fn main(root: &Path, o: Options) -> Result<(), String> {
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
