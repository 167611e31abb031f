//! `cargo xtask mutants --tool`: mutants nobody here wrote (docs/mutation-audit.md, "Mutants from a
//! tool").
//!
//! cargo-mutants, configured by `.cargo/mutants.toml`, mutates the oracle's spec modules; a mutant
//! is killed when regenerating the small tier with it changes a committed byte or fails
//! (`generator/tests/committed_bytes.rs`). The whole list does not fit a session on two cores, so
//! the run takes one round-robin shard of it (`--shard K/N`: every N-th mutant of the tool's list,
//! from the K-th). Every survivor is classified by hand in `docs/mutation-survivors.txt`: equivalent,
//! unreached by the tree (with where the code serves instead), or closed by a vector, which
//! `--recheck` proves by running those mutants again. The section this writes replaces the part of
//! docs/mutation-audit.md from its heading on; the catalogue's audit keeps it.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The heading the section starts at.
pub const HEADING: &str = "## Mutants from a tool";
const SURVIVORS: &str = "docs/mutation-survivors.txt";
const VERSION: &str = "27.1.0";

/// What `--tool` was asked.
pub struct ToolOptions {
    /// `K/N`.
    pub shard: String,
    /// Render from this earlier run's `mutants.out` instead of running.
    pub from: Option<PathBuf>,
    /// Run again only the survivors classified `closed`; each must now be caught.
    pub recheck: bool,
}

/// A survivor's classification: `equivalent`, `unreached` or `closed`, and why (or by what).
struct Class {
    verdict: String,
    why: String,
}

pub fn main(root: &Path, o: ToolOptions) -> Result<(), String> {
    let version = cargo(root, &["mutants", "--version"])
        .map_err(|e| format!("{e}: install it with `cargo install cargo-mutants --locked --version {VERSION}`"))?;
    let classes = survivors(root)?;
    if o.recheck {
        return recheck(root, &classes);
    }
    let out = match o.from {
        Some(dir) => dir,
        None => run(root, &o.shard)?,
    };
    let generated = cargo(root, &["mutants", "--list"])?.lines().count();
    let read = |name: &str| -> Vec<String> {
        std::fs::read_to_string(out.join("mutants.out").join(name))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    };
    let (caught, missed, timeout, unviable) = (
        read("caught.txt"),
        read("missed.txt"),
        read("timeout.txt"),
        read("unviable.txt"),
    );
    let unclassified: Vec<&String> = missed.iter().filter(|m| !classes.contains_key(&key(m))).collect();
    let section = section(
        version.trim(),
        &o.shard,
        minutes(&out.join("mutants.out/outcomes.json")),
        generated,
        [&caught, &missed, &timeout, &unviable],
        &classes,
    );
    let doc = root.join("docs/mutation-audit.md");
    let text = std::fs::read_to_string(&doc).map_err(|e| format!("{}: {e}", doc.display()))?;
    let head = text.split(HEADING).next().unwrap_or_default().trim_end();
    wai_oracle::files::write(&doc, format!("{head}\n\n{section}").as_bytes())
        .map_err(|e| format!("{}: {e}", doc.display()))?;
    eprintln!("mutants --tool: wrote the tool's section of docs/mutation-audit.md");
    if unclassified.is_empty() {
        Ok(())
    } else {
        let list: Vec<&str> = unclassified.iter().map(|s| s.as_str()).collect();
        Err(format!(
            "survivors not classified in {SURVIVORS}:\n  {}",
            list.join("\n  ")
        ))
    }
}

/// The regeneration test on the unmutated tree, as `.cargo/mutants.toml` names it (cargo-mutants 27
/// runs its baseline on the mutated package's own tests, not the configured ones, so the baseline
/// is this), then the shard.
fn run(root: &Path, shard: &str) -> Result<PathBuf, String> {
    cargo(
        root,
        &[
            "test",
            "--profile",
            "mutation",
            "-p",
            "wai-generate",
            "--test",
            "committed_bytes",
            "--",
            "--ignored",
        ],
    )
    .map_err(|e| format!("the unmutated tree fails the regeneration test: {e}"))?;
    let out = root.join("target/mutants-tool");
    let status = mutants(root, &out)
        .args(["--shard", shard])
        .status()
        .map_err(|e| format!("cargo mutants: {e}"))?;
    // 0: all caught; 2: some missed; 3: some timed out (cargo-mutants' exit codes).
    match status.code() {
        Some(0 | 2 | 3) => Ok(out),
        _ => Err(format!("cargo mutants failed: {status}")),
    }
}

/// `cargo mutants` with this audit's options, its output in `out`: `.cargo/mutants.toml`'s files,
/// test and profile, two mutants at a time, and no baseline (`run` runs it; without one the
/// timeouts are given).
fn mutants(root: &Path, out: &Path) -> Command {
    let mut cmd = Command::new(cargo_bin());
    cmd.current_dir(root)
        .args(["mutants", "--baseline", "skip", "--timeout", "300"])
        .args(["--build-timeout", "900", "--jobs", "2", "-o"])
        .arg(out);
    cmd
}

/// Runs every `closed` survivor again; each must be caught now.
fn recheck(root: &Path, classes: &BTreeMap<String, Class>) -> Result<(), String> {
    let closed: Vec<&String> = classes
        .iter()
        .filter(|(_, c)| c.verdict == "closed")
        .map(|(k, _)| k)
        .collect();
    if closed.is_empty() {
        return Ok(());
    }
    let out = root.join("target/mutants-recheck");
    let mut cmd = mutants(root, &out);
    for k in &closed {
        let (file, what) = k.split_once(": ").unwrap_or(("", k));
        cmd.args(["-f", file, "-F", &format!("{}$", escape(what))]);
    }
    let _ = cmd.status().map_err(|e| format!("cargo mutants: {e}"))?;
    let missed = std::fs::read_to_string(out.join("mutants.out/missed.txt")).unwrap_or_default();
    let caught = std::fs::read_to_string(out.join("mutants.out/caught.txt")).unwrap_or_default();
    // cargo-mutants 27 lets some mutants past `-F` (a struct field's deletion): only the closed
    // names count. Every mutant of such a name, wherever it sits, must be caught.
    let caught: Vec<String> = caught.lines().map(key).collect();
    let missed: Vec<String> = missed.lines().map(key).collect();
    let still: Vec<&&String> = closed
        .iter()
        .filter(|k| !caught.contains(k) || missed.contains(k))
        .collect();
    if still.is_empty() {
        eprintln!(
            "mutants --tool --recheck: all {} closed survivors are caught",
            closed.len()
        );
        Ok(())
    } else {
        Err(format!("closed survivors not caught: {still:?}"))
    }
}

/// A mutant's name without its line and column: `src/num.rs: replace + with - in wrap16`, which
/// stays put when lines move.
fn key(name: &str) -> String {
    let mut parts = name.splitn(4, ':');
    let file = parts.next().unwrap_or_default();
    let (_line, _col, what) = (parts.next(), parts.next(), parts.next().unwrap_or_default());
    format!("{file}: {}", what.trim())
}

/// `docs/mutation-survivors.txt`: `key | verdict | why`, `#` comments.
fn survivors(root: &Path) -> Result<BTreeMap<String, Class>, String> {
    let text = std::fs::read_to_string(root.join(SURVIVORS)).map_err(|e| format!("{SURVIVORS}: {e}"))?;
    let mut out = BTreeMap::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        // A mutant's name may hold ` | ` itself (`replace | with ^`): split at the verdict.
        let split = ["equivalent", "unreached", "closed"]
            .iter()
            .filter_map(|v| line.find(&format!(" | {v} | ")).map(|i| (i, *v)))
            .min();
        let Some((i, verdict)) = split else {
            return Err(format!(
                "{SURVIVORS}:{}: not `mutant | equivalent, unreached or closed | why`",
                n + 1
            ));
        };
        let why = &line[i + verdict.len() + 6..];
        out.insert(
            line[..i].to_string(),
            Class {
                verdict: verdict.into(),
                why: why.into(),
            },
        );
    }
    Ok(out)
}

fn section(
    version: &str,
    shard: &str,
    minutes: f64,
    generated: usize,
    [caught, missed, timeout, unviable]: [&Vec<String>; 4],
    classes: &BTreeMap<String, Class>,
) -> String {
    let tested = caught.len() + missed.len() + timeout.len() + unviable.len();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{HEADING}\n\n\
         Written by `cargo xtask mutants --tool` (`xtask/src/mutants_tool.rs`); the classifications are \
         `{SURVIVORS}`'s.\n\n\
         The catalogue above was written by the hands that wrote the corpus. Here {version} generates the mutants \
         instead, over the oracle's spec modules (`.cargo/mutants.toml`: `src/num.rs`, `src/ops/`, `src/run.rs`, \
         `src/plan.rs`, `src/whg1/load.rs`, `src/bounds/`, `src/stage/`, `src/lower/`, `src/cis2/`, \
         `src/dequant/`), and the test is the tree itself: a mutant is **caught** when regenerating the small \
         tier with it changes any committed byte or fails (`generator/tests/committed_bytes.rs`, built in the \
         incremental `mutation` profile).\n\n\
         **Sampling.** The run takes the round-robin shard `--shard {shard} --sharding round-robin`: every \
         {}-th mutant of the tool's list of {generated}, in its order (the order of its walk of the source), \
         from the {}-th. The shard is the seed: the same source and the same shard give the same sample. \
         This sample took {minutes} minutes on this 2-core machine, two mutants at a time; every mutant \
         would take about {} hours.\n",
        shard.split('/').nth(1).unwrap_or("?"),
        shard.split('/').next().unwrap_or("?"),
        (minutes * generated as f64 / tested.max(1) as f64 / 60.0).round(),
    );
    let _ = writeln!(
        s,
        "| | mutants |\n|---|---|\n| generated | {generated} |\n| sampled | {tested} |\n| caught | {} |\n\
         | timed out (caught: a hang fails the gate) | {} |\n| unviable (does not build) | {} |\n| survived | {} |\n",
        caught.len(),
        timeout.len(),
        unviable.len(),
        missed.len()
    );
    let by = |v: &str| {
        missed
            .iter()
            .filter(|m| classes.get(&key(m)).is_some_and(|c| c.verdict == v))
            .count()
    };
    let _ = writeln!(
        s,
        "Of the survivors: **{} equivalent** (the same bytes on every input the spec allows), **{} unreached** \
         (code the regeneration never runs: it serves `fill`, a command or a unit test, named below), \
         **{} closed** (missed by the tree as it was; a vector added since kills it, proved by \
         `cargo xtask mutants --tool --recheck`), {} unclassified.\n",
        by("equivalent"),
        by("unreached"),
        by("closed"),
        missed.iter().filter(|m| !classes.contains_key(&key(m))).count()
    );
    let sampled: Vec<String> = missed.iter().map(|m| key(m)).collect();
    let _ = writeln!(
        s,
        "`{SURVIVORS}` also classifies {} mutants outside this sample, met by an earlier, larger shard or by \
         `--recheck` (cargo-mutants 27 lets a struct field's deletion past `-F`).\n",
        classes.keys().filter(|k| !sampled.contains(k)).count()
    );
    let _ = writeln!(
        s,
        "### Every survivor\n\n| mutant | verdict | why, or the vector that kills it now |\n|---|---|---|"
    );
    for m in missed {
        let (v, why) = classes
            .get(&key(m))
            .map_or(("**unclassified**", ""), |c| (c.verdict.as_str(), c.why.as_str()));
        let _ = writeln!(s, "| `{}` | {v} | {} |", m.replace('|', "\\|"), why.replace('|', "\\|"));
    }
    let mut files: BTreeMap<&str, [usize; 2]> = BTreeMap::new();
    for (list, i) in [(caught, 0), (timeout, 0), (missed, 1)] {
        for m in list {
            files.entry(m.split(':').next().unwrap_or("?")).or_default()[i] += 1;
        }
    }
    let _ = writeln!(s, "\n### By file\n\n| file | caught | survived |\n|---|---|---|");
    for (f, [c, m]) in &files {
        let _ = writeln!(s, "| `{f}` | {c} | {m} |");
    }
    s
}

/// The run's wall time in minutes, from its `outcomes.json` (`start_time`, `end_time`).
fn minutes(outcomes: &Path) -> f64 {
    let v: serde_json::Value = std::fs::read(outcomes)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    // RFC 3339 UTC times of one day or two: `2026-12-02T00:08:59.868Z`.
    let seconds = |k: &str| -> Option<f64> {
        let s = v[k].as_str()?;
        let (date, time) = s.trim_end_matches('Z').split_once('T')?;
        let day: f64 = date.rsplit('-').next()?.parse().ok()?;
        let mut hms = time.split(':').map(|x| x.parse::<f64>().ok());
        Some(day * 86400.0 + hms.next()?? * 3600.0 + hms.next()?? * 60.0 + hms.next()??)
    };
    match (seconds("start_time"), seconds("end_time")) {
        (Some(a), Some(b)) if b > a => ((b - a) / 60.0).round(),
        _ => f64::NAN,
    }
}

/// A regular expression matching `s` literally.
fn escape(s: &str) -> String {
    s.chars()
        .map(|c| {
            if "\\.+*?()|[]{}^$#&-~".contains(c) {
                format!("\\{c}")
            } else {
                c.to_string()
            }
        })
        .collect()
}

fn cargo_bin() -> String {
    std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
}

/// `cargo ARGS` in `root`, its stdout; an error with its stderr's last lines when it fails.
fn cargo(root: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new(cargo_bin())
        .current_dir(root)
        .args(args)
        .output()
        .map_err(|e| format!("cargo {}: {e}", args.join(" ")))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = err.lines().rev().take(5).collect();
        Err(format!(
            "cargo {} failed: {}",
            args.join(" "),
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        ))
    }
}
