//! `cargo xtask mutants`: the mutation audit (docs/mutation-audit.md).
//!
//! The checker is built once with its `mutants` feature (its own target directory, so the ordinary
//! binary is never mutated). Each fault of its catalogue (`wai_checker::mutants::CATALOGUE`) is then
//! switched on in turn with `WAI_MUTANT` and run over the whole committed tree: every suite,
//! provisional files included, refilled from its stripped requests as the grader sends them
//! (`xtask::grade`), and every certificate set lowered as `cargo xtask check` lowers it. A fault is
//! **killed** by the vectors it fails (a crash, a hang past the timeout and garbage count, and are
//! named); one that fails none **survived**, unless the catalogue shows it **equivalent** (the same
//! integers on every input the spec allows), with the argument. The audit fails on a survivor, and on
//! a fault so marked that some vector kills.
//!
//! A fault's run stops after the first file or set that brings its killing records to two (files in
//! ascending size, then the certificate sets), so a fault that one record alone kills has run over the
//! whole tree when the report says so; the audit fails on such a fault, as on a survivor: each clause
//! is pinned by two different records. `--all` runs every fault over the whole tree. `--only a,b`
//! runs the named faults only (and writes no report); `--jobs N` runs N faults at a time (default 2).

use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::Path;
use std::time::{Duration, Instant};
use wai_checker::mutants::{CATALOGUE, Expect, Mutant};
use wai_oracle::suite::Tier;
use xtask::FaultOptions;
use xtask::check::certificate_sets;
use xtask::grade::{self, Ending, FileGrade, Options, Outcome};

/// What one fault did to the tree.
struct Run {
    /// Each failed vector: `file#id`, or a certificate set's file.
    killed_by: Vec<String>,
    /// How the run failed besides wrong records: `crash (exit 101) in vectors/conv.jsonl`, ….
    how: Vec<String>,
    seconds: f64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Killed,
    Equivalent,
    Survived,
    /// Marked equivalent, yet a vector kills it: the argument is wrong.
    MarkedButKilled,
}

impl Verdict {
    fn of(m: &Mutant, r: &Run) -> Verdict {
        match (m.expect, r.killed_by.is_empty()) {
            (Expect::Killed, false) => Verdict::Killed,
            (Expect::Killed, true) => Verdict::Survived,
            (Expect::Equivalent(_), true) => Verdict::Equivalent,
            (_, false) => Verdict::MarkedButKilled,
        }
    }
    fn name(self) -> &'static str {
        match self {
            Verdict::Killed => "killed",
            Verdict::Equivalent => "equivalent",
            Verdict::Survived => "**survived**",
            Verdict::MarkedButKilled => "**marked, but killed**",
        }
    }
}

pub fn main(root: &Path, FaultOptions { only, jobs }: FaultOptions, all: bool) -> Result<(), String> {
    let bin = xtask::mutant_checker(root)?;
    let tree = root.join("ops-conformance");
    let start = Instant::now();
    // The build without a fault reproduces the tree, and sets the timeout.
    let plain = run(&tree, &bin, None, Duration::from_secs(600), true);
    if !plain.killed_by.is_empty() {
        return Err(format!(
            "the mutants build without a fault fails {} vectors, first {}",
            plain.killed_by.len(),
            plain.killed_by[0]
        ));
    }
    let timeout = Duration::from_secs_f64((10.0 * plain.seconds).max(30.0));
    eprintln!(
        "mutants: the tree in {:.1} s without a fault; each fault's timeout per file is {:.0} s",
        plain.seconds,
        timeout.as_secs_f64()
    );
    let chosen: Vec<&Mutant> = CATALOGUE
        .iter()
        .filter(|m| only.is_empty() || only.iter().any(|n| n == m.name))
        .collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .map_err(|e| e.to_string())?;
    let runs: Vec<Run> = pool.install(|| {
        chosen
            .par_iter()
            .map(|m| {
                let r = run(&tree, &bin, Some(m.name), timeout, all);
                eprintln!(
                    "mutants: {:<40} {:<28} {:>5.1} s {}",
                    m.name,
                    Verdict::of(m, &r).name(),
                    r.seconds,
                    r.killed_by.first().map_or("", String::as_str)
                );
                r
            })
            .collect()
    });
    let elapsed = start.elapsed().as_secs_f64();
    let results: Vec<(&Mutant, Run)> = chosen.into_iter().zip(runs).collect();
    let bad: Vec<&str> = results
        .iter()
        .filter(|(m, r)| {
            matches!(Verdict::of(m, r), Verdict::Survived | Verdict::MarkedButKilled) || r.killed_by.len() == 1
        })
        .map(|(m, _)| m.name)
        .collect();
    if only.is_empty() {
        // The tool's section (`mutants --tool`) is kept as it is.
        let doc = root.join("docs/mutation-audit.md");
        let old = std::fs::read_to_string(&doc).unwrap_or_default();
        let tool = old.find(crate::mutants_tool::HEADING).map_or("", |i| &old[i..]);
        wai_oracle::files::write(&doc, format!("{}\n{tool}", report(&results, elapsed, jobs)).as_bytes())
            .map_err(|e| format!("docs/mutation-audit.md: {e}"))?;
        eprintln!("mutants: wrote docs/mutation-audit.md");
    }
    eprintln!("mutants: {} faults in {:.0} s", results.len(), elapsed);
    if bad.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "survived, marked and killed, or killed by one record: {}",
            bad.join(", ")
        ))
    }
}

/// The tree through the checker with `mutant` on: every suite's files in ascending size, then every
/// certificate set; unless `all`, it stops after the first file that brings its killing records
/// to two.
fn run(tree: &Path, bin: &Path, mutant: Option<&str>, timeout: Duration, all: bool) -> Run {
    let start = Instant::now();
    let env = mutant.map_or(String::new(), |m| format!("WAI_MUTANT={m} "));
    let mut options = Options {
        role: grade::Role::All,
        suites: Tier::Small.suites().map(|s| s.name.to_string()).collect(),
        include_provisional: true,
        timeout,
        ..Options::new(&format!("{env}{} fill", bin.display()))
    };
    let mut out = Run {
        killed_by: vec![],
        how: vec![],
        seconds: 0.0,
    };
    let mut files: Vec<(u64, String)> = grade::select(tree, &options)
        .into_iter()
        .map(|f| (std::fs::metadata(tree.join(&f.path)).map_or(0, |m| m.len()), f.path))
        .collect();
    files.sort();
    for (_, path) in files {
        options.only = vec![path];
        match grade::grade(tree, &options) {
            Ok(grades) => grades.iter().for_each(|g| record(g, &mut out)),
            Err(e) => out.how.push(format!("the grader failed: {e}")),
        }
        if !all && out.killed_by.len() >= 2 {
            out.seconds = start.elapsed().as_secs_f64();
            return out;
        }
    }
    for d in certificate_sets(tree, bin, mutant) {
        // `checker <file>: …` or `<set>: wai-checker lower: …`.
        let name = d.trim_start_matches("checker ").split([':', ' ']).next().unwrap_or("?");
        if !d.starts_with("checker ") {
            out.how.push(format!("lower failed in {name}"));
        }
        out.killed_by.push(name.to_string());
    }
    out.seconds = start.elapsed().as_secs_f64();
    out
}

/// One file's grade into a run: the records that did not pass, and how the process ended.
fn record(g: &FileGrade, out: &mut Run) {
    let path = &g.file.path;
    match &g.ending {
        Ending::Exited(0) => {}
        Ending::Exited(c) => out.how.push(format!("exit status {c} in {path}")),
        Ending::Killed => out.how.push(format!("crash (signal) in {path}")),
        Ending::TimedOut => out.how.push(format!("hang (timeout) in {path}")),
        Ending::NotStarted(e) => out.how.push(format!("not started ({e}) in {path}")),
    }
    for r in &g.records {
        let garbage = matches!(&r.outcome, Outcome::Failed(d) if d.iter().any(|d| d.received.starts_with("not JSON")));
        if garbage && !out.how.iter().any(|h| h.starts_with("garbage")) {
            out.how.push(format!("garbage in {path}"));
        }
        if r.outcome != Outcome::Passed {
            out.killed_by.push(format!("{path}#{}", r.id));
        }
    }
}

/// docs/mutation-audit.md.
fn report(results: &[(&Mutant, Run)], seconds: f64, jobs: usize) -> String {
    let mut s = String::new();
    let count = |v: Verdict| results.iter().filter(|(m, r)| Verdict::of(m, r) == v).count();
    let (killed, equivalent) = (count(Verdict::Killed), count(Verdict::Equivalent));
    let _ = writeln!(
        s,
        "# Mutation audit\n\n\
         Written by `cargo xtask mutants` (`xtask/src/mutants.rs`); do not edit by hand.\n\n\
         Each fault of the checker's catalogue (`checker/src/mutants.rs`) is a realistic wrong reading of one \
         clause of integer-operators, built in only under the checker's `mutants` feature and switched on with \
         `WAI_MUTANT=name`. The audit runs each over the whole committed tree (every suite, provisional files \
         included, refilled from its stripped requests as `cargo xtask grade` sends them, and every certificate \
         set lowered and every bare graph of `graph-certificates/` certified as `cargo xtask check` does) and \
         records the vectors it fails. A fault that fails none would be a clause the vectors do not pin down. \
         Each is killed, or shown **equivalent** (the same integers on every input the spec allows) with its \
         argument below; the audit fails if a vector kills a fault so marked.\n\n\
         **{} faults: {killed} killed, {equivalent} equivalent, {} survived.** The \
         last run took {:.1} minutes, {jobs} faults at a time.\n",
        results.len(),
        results.len() - killed - equivalent,
        seconds / 60.0
    );
    let single: Vec<&str> = results
        .iter()
        .filter(|(_, r)| r.killed_by.len() == 1)
        .map(|(m, _)| m.name)
        .collect();
    let _ = writeln!(
        s,
        "A fault's run stops after the first file or certificate set that brings its killing records to two \
         (files in ascending size, then the sets): its killing vectors below are those files'. A fault killed \
         by one record alone has then run over the whole tree, and fails the audit: every clause is pinned by \
         two different records. Faults killed by one record: {}. `cargo xtask mutants --all` runs each over \
         the whole tree.\n",
        if single.is_empty() {
            "none".to_string()
        } else {
            single.join(", ")
        }
    );
    let _ = writeln!(
        s,
        "## By section\n\n\
         \"Killing records\" counts the distinct records (`file#id`, or a certificate set) that kill the \
         section's faults, as far as the runs went.\n\n\
         | section | faults | killed | equivalent | survived | killing records |\n|---|---|---|---|---|---|"
    );
    // Per section: killed, equivalent and survived faults, and the distinct killing records.
    type Tally<'a> = ([usize; 3], BTreeSet<&'a str>);
    let mut sections: BTreeMap<(u32, &str), Tally> = BTreeMap::new();
    for (m, r) in results {
        let (e, records) = sections.entry((section_order(m.section), m.section)).or_default();
        records.extend(r.killed_by.iter().map(String::as_str));
        match Verdict::of(m, r) {
            Verdict::Killed => e[0] += 1,
            Verdict::Equivalent => e[1] += 1,
            _ => e[2] += 1,
        }
    }
    for ((_, sec), ([k, e, v], records)) in &sections {
        let _ = writeln!(s, "| {sec} | {} | {k} | {e} | {v} | {} |", k + e + v, records.len());
    }
    let _ = writeln!(
        s,
        "\n## Every fault\n\n\"First killing vectors\" names up to three of them (`file#id`, or a certificate \
         set's file) and, past three, the count of all; \"how\" says when the process itself failed.\n\n\
         | fault | section | the wrong rule | verdict | first killing vectors | how |\n|---|---|---|---|---|---|"
    );
    for (m, r) in results {
        let first: Vec<String> = r.killed_by.iter().take(3).map(|k| format!("`{k}`")).collect();
        let first = if r.killed_by.len() > 3 {
            format!("{} (of {})", first.join(", "), r.killed_by.len())
        } else {
            first.join(", ")
        };
        let how = r.how.iter().take(2).cloned().collect::<Vec<_>>().join("; ");
        let _ = writeln!(
            s,
            "| `{}` | {} | {} | {} | {} | {} |",
            m.name,
            m.section,
            m.about.replace('|', "\\|"),
            Verdict::of(m, r).name(),
            first,
            how
        );
    }
    let _ = writeln!(s, "\n## The equivalent faults\n");
    for (m, _) in results {
        if let Expect::Equivalent(why) = m.expect {
            let _ = writeln!(s, "- `{}` ({}: {}): {why}.", m.name, m.section, m.about);
        }
    }
    s
}

/// Sections in the spec's order: §2 … §13.6.1, then `process`.
fn section_order(sec: &str) -> u32 {
    let Some(num) = sec.strip_prefix('§') else {
        return u32::MAX;
    };
    let mut parts = num.split('.');
    let major = parts.next().unwrap_or("");
    let (n, letter) = match major.strip_suffix('E') {
        Some(n) => (n, 1),
        None => (major, 0),
    };
    let n: u32 = n.parse().unwrap_or(99);
    let minor: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    let sub: u32 = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
    ((n * 2 + letter) * 100 + minor) * 100 + sub
}
