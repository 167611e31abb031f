//! `cargo xtask faults`: the checker's implementation faults (`wai_checker::mutants::FAULTS`) and
//! which tier of the tree catches each, written to docs/scale.md ("Faults and the tier that catches
//! them").
//!
//! The checker is built once with its `mutants` feature (`xtask::mutant_checker`). Every small-tier
//! graph and per-operator file (`vectors/`, `graphs/`) and every scale-tier file (`scale/`) is
//! stripped of its computed fields (`check::strip`) and refilled with `wai-checker fill` with
//! `WAI_MUTANT` naming one fault (`check::fill_process`); a record whose line differs from the
//! committed one, or that the checker fails to fill, catches the fault. The point is the operands' widths: the small tier catches these
//! faults too, but mostly through operands wider than an int8 or int16 × int8 kernel accepts, which
//! says nothing of such a kernel. So each catching record is classed by whether its operands fit
//! int16 × int8 (docs/scale.md), and the command fails when the scale tier catches a fault on no
//! record whose operands fit.
//!
//! Unlike `cargo xtask mutants`, a fault's run never stops early: the counts are of every record.
//! `--only a,b` runs the named faults only (and writes nothing); `--jobs N` runs N at a time (default 2).

use rayon::prelude::*;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::Path;
use std::time::Instant;
use wai_checker::mutants::{FAULTS, Fault};
use wai_checker::whg1::load;
use wai_checker::whg1::{Graph, Kind, Op, OpKind};
use wai_oracle::suite::Tier;
use xtask::FaultOptions;
use xtask::check::{fill_process, first_lines, strip};
use xtask::compare::files;

/// The section of docs/scale.md this command owns.
const HEADING: &str = "## Faults and the tier that catches them";

/// One committed file, read once for every run.
struct File {
    path: String,
    committed: Vec<u8>,
    requests: Vec<u8>,
    /// Each line's record: its id, and whether its operands fit int16 × int8.
    records: Vec<(String, bool)>,
}

/// A record that caught a fault.
struct Hit {
    /// `file#id`.
    record: String,
    scale: bool,
    narrow: bool,
}

/// What one fault did to the two tiers.
struct Run {
    hits: Vec<Hit>,
    /// Fills that failed: the file, and the checker's message (the records it could not fill are
    /// among the hits).
    failed: Vec<String>,
    seconds: f64,
}

/// One tier's share of a run: records caught, of which with operands that fit, and an example
/// (one that fits when there is one).
struct Count<'a> {
    caught: usize,
    narrow: usize,
    example: Option<&'a Hit>,
}

impl Run {
    fn count(&self, scale: bool) -> Count<'_> {
        let hits: Vec<&Hit> = self.hits.iter().filter(|h| h.scale == scale).collect();
        Count {
            caught: hits.len(),
            narrow: hits.iter().filter(|h| h.narrow).count(),
            example: hits.iter().find(|h| h.narrow).or(hits.first()).copied(),
        }
    }
}

pub fn main(root: &Path, FaultOptions { only, jobs }: FaultOptions) -> Result<(), String> {
    let bin = xtask::mutant_checker(root)?;
    let tree = root.join("ops-conformance");
    let start = Instant::now();
    let files = read_files(&tree)?;
    let chosen: Vec<&Fault> = FAULTS
        .iter()
        .filter(|f| only.is_empty() || only.iter().any(|n| n == f.name))
        .collect();
    // The build without a fault goes first in the queue: it must reproduce every record, or a
    // count below would not be the fault's.
    let names: Vec<Option<&str>> = std::iter::once(None)
        .chain(chosen.iter().map(|f| Some(f.name)))
        .collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs)
        .build()
        .map_err(|e| e.to_string())?;
    let mut runs: Vec<Run> = pool.install(|| names.par_iter().map(|&n| run(&files, &tree, &bin, n)).collect());
    let plain = runs.remove(0);
    if let Some(h) = plain.hits.first() {
        return Err(format!(
            "the mutants build without a fault differs on {} records, first {}",
            plain.hits.len(),
            h.record
        ));
    }
    let elapsed = start.elapsed().as_secs_f64();
    let results: Vec<(&Fault, Run)> = chosen.into_iter().zip(runs).collect();
    if only.is_empty() {
        write_section(root, &section(&results, &files, elapsed, jobs))?;
        eprintln!("faults: wrote docs/scale.md, {HEADING:?}");
    }
    eprintln!(
        "faults: {} faults in {elapsed:.1} s (the checker's build apart)",
        results.len()
    );
    let missed: Vec<&str> = results
        .iter()
        .filter(|(_, r)| r.count(true).narrow == 0)
        .map(|(f, _)| f.name)
        .collect();
    if missed.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "not caught by the scale tier at int8/int16×int8 widths: {}",
            missed.join(", ")
        ))
    }
}

/// The graph and per-operator files of the small tier and every file of the scale tier.
fn read_files(tree: &Path) -> Result<Vec<File>, String> {
    let ours = |f: &String| {
        f.ends_with(".jsonl") && (f.starts_with("vectors/") || f.starts_with("graphs/") || Tier::Scale.holds(f))
    };
    files(tree)
        .into_iter()
        .filter(ours)
        .map(|path| {
            let committed = std::fs::read(tree.join(&path)).map_err(|e| format!("{path}: {e}"))?;
            let requests = strip(&committed).map_err(|e| format!("{path}: {e}"))?;
            let records = lines(&committed)
                .map(|line| {
                    (
                        id_of(line),
                        operands_fit(&serde_json::from_slice(line).unwrap_or_default()),
                    )
                })
                .collect();
            Ok(File {
                path,
                committed,
                requests,
                records,
            })
        })
        .collect()
}

fn lines(bytes: &[u8]) -> impl Iterator<Item = &[u8]> {
    bytes.strip_suffix(b"\n").unwrap_or(bytes).split(|&b| b == b'\n')
}

/// Every file refilled with `fault` on (none: the plain build); the records whose line differs.
fn run(files: &[File], tree: &Path, bin: &Path, fault: Option<&str>) -> Run {
    let start = Instant::now();
    let mut out = Run {
        hits: vec![],
        failed: vec![],
        seconds: 0.0,
    };
    for f in files {
        let refilled = match fill_process(bin, tree, &f.requests, fault) {
            Ok(p) if p.status.success() => p.stdout,
            Ok(p) => {
                out.failed.push(format!("{}: {}", f.path, first_lines(&p.stderr)));
                p.stdout
            }
            Err(e) => {
                out.failed.push(format!("{}: {e}", f.path));
                vec![]
            }
        };
        // By id: a fill leaves out the lines it fails on, and those records catch the fault too.
        let got: HashMap<String, &[u8]> = lines(&refilled).map(|l| (id_of(l), l)).collect();
        for (line, (id, narrow)) in lines(&f.committed).zip(&f.records) {
            if got.get(id) != Some(&line) {
                out.hits.push(Hit {
                    record: format!("{}#{id}", f.path),
                    scale: Tier::Scale.holds(&f.path),
                    narrow: *narrow,
                });
            }
        }
    }
    out.seconds = start.elapsed().as_secs_f64();
    if let Some(name) = fault {
        let (small, scale) = (out.count(false), out.count(true));
        eprintln!(
            "faults: {name:<14} small tier {:>3} ({:>3} fit)  scale tier {:>3} ({:>3} fit)  {:>5.1} s",
            small.caught, small.narrow, scale.caught, scale.narrow, out.seconds
        );
    }
    out
}

/// A record line's id (`?` when it has none).
fn id_of(line: &[u8]) -> String {
    let v: Value = serde_json::from_slice(line).unwrap_or_default();
    v.get("id").and_then(Value::as_str).unwrap_or("?").to_string()
}

/// Whether a record's operands fit int16 × int8 (docs/scale.md): every graph input's values (the
/// written-out data of every decode, or a recipe's range; a state input's declared range) within
/// int16, every `conv` and `conv_transpose` weight within int8, and one of the two operands of each
/// `gram` and `apply` within int8. An operand that an earlier operator produces is held to its
/// certified interval (§8.1), which the graph's inputs do not bound. A record whose graph does not
/// load, or an input without values, does not fit.
fn operands_fit(record: &Value) -> bool {
    let checked = record
        .get("graph")
        .and_then(Value::as_str)
        .and_then(|h| hex::decode(h).ok())
        .and_then(|b| load::check(&b).ok());
    let Some(checked) = checked else { return false };
    let Some(inputs) = input_ranges(&checked.graph, record) else {
        return false;
    };
    let operand = |t: usize, bits: u32| match inputs.get(&t) {
        Some(&r) => within(r, bits),
        None => checked.pass.tensors[t].is_some_and(|iv| iv.fits(bits)),
    };
    inputs.values().all(|&r| within(r, 16)) && checked.graph.ops.iter().all(|op| op_fits(op, operand))
}

/// Each graph input's tensor and the hull of its values over every decode.
fn input_ranges(g: &Graph, record: &Value) -> Option<BTreeMap<usize, (i128, i128)>> {
    let mut out = BTreeMap::new();
    let mut hull = |t: usize, (lo, hi): (i128, i128)| {
        let e = out.entry(t).or_insert((lo, hi));
        *e = (e.0.min(lo), e.1.max(hi));
    };
    // A state input's values are earlier outputs, held to its declared range.
    for i in g.inputs.iter().filter(|i| i.kind == Kind::State) {
        let (lo, hi) = g.tensors[i.tensor].policy.range()?;
        hull(i.tensor, (lo.into(), hi.into()));
    }
    let data: Vec<usize> = g
        .inputs
        .iter()
        .filter(|i| i.kind == Kind::Data)
        .map(|i| i.tensor)
        .collect();
    for d in record.get("decodes").and_then(Value::as_array).into_iter().flatten() {
        let given = d.get("inputs").and_then(Value::as_array)?;
        for (&t, tensor) in data.iter().zip(given) {
            hull(t, value_range(tensor)?);
        }
    }
    Some(out)
}

/// A request tensor's values: a recipe's range, or the written-out data's extremes.
fn value_range(t: &Value) -> Option<(i128, i128)> {
    let values = match t.get("recipe") {
        Some(r) => r.get("range"),
        None => t.get("data"),
    };
    let values: Vec<i128> = values?
        .as_array()?
        .iter()
        .map(|v| v.as_str()?.parse().ok())
        .collect::<Option<_>>()?;
    Some((*values.iter().min()?, *values.iter().max()?))
}

/// Whether one operator's operands fit, given whether tensor `t` fits i`bits` (`operand(t, bits)`).
fn op_fits(op: &Op, operand: impl Fn(usize, u32) -> bool) -> bool {
    let weights = |(lo, hi): (i64, i64)| within((lo.into(), hi.into()), 8);
    match &op.kind {
        OpKind::Conv(c) => operand(op.ins[0], 16) && weights(c.w.range()),
        OpKind::ConvT(c) => operand(op.ins[0], 16) && weights(c.w.range()),
        OpKind::Gram { .. } | OpKind::Apply { .. } => {
            op.ins.iter().all(|&t| operand(t, 16)) && op.ins.iter().any(|&t| operand(t, 8))
        }
        _ => true,
    }
}

/// Whether `[lo, hi]` fits i`bits`.
fn within((lo, hi): (i128, i128), bits: u32) -> bool {
    let half = 1i128 << (bits - 1);
    -half <= lo && hi < half
}

/// The verdict on a fault, by what each tier catches with operands that fit.
fn verdict(small: &Count, scale: &Count) -> &'static str {
    match (small.narrow, scale.narrow) {
        (_, 0) => "**not caught by the scale tier at those widths**",
        (0, _) => "caught only by the scale tier at int8/int16×int8 widths",
        _ => "already caught by the small tier at those widths",
    }
}

/// The section of docs/scale.md, heading included.
fn section(results: &[(&Fault, Run)], files: &[File], seconds: f64, jobs: usize) -> String {
    let tally = |scale: bool| {
        let of_tier: Vec<&File> = files.iter().filter(|f| Tier::Scale.holds(&f.path) == scale).collect();
        let records: usize = of_tier.iter().map(|f| f.records.len()).sum();
        let narrow: usize = of_tier.iter().map(|f| f.records.iter().filter(|r| r.1).count()).sum();
        format!(
            "{} files, {records} records, {narrow} of them with operands that fit",
            of_tier.len()
        )
    };
    let only_scale = results
        .iter()
        .filter(|(_, r)| r.count(false).narrow == 0 && r.count(true).narrow > 0)
        .count();
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{HEADING}\n\n\
         Written by `cargo xtask faults` (`xtask/src/faults.rs`); do not edit this section by hand.\n\n\
         The checker's implementation faults (`FAULTS` in `checker/src/mutants.rs`) read every clause \
         right and compute it as a real int8/int16 kernel goes wrong. They are not the mutation audit's \
         (docs/mutation-audit.md), and do not count in it. Each runs over every record of the small \
         tier's graph and per-operator files (`vectors/`, `graphs/`: {}) and of the scale tier \
         (`scale/`: {}), refilled from its stripped request with the fault on; a record whose line \
         differs from the committed one catches it (a line the checker fails to fill too). A catching \
         record is counted apart when its operands fit int16 × int8 as defined above, which an int8 \
         kernel's operands do too: every graph input's values within int16 (the written-out data of \
         every decode, or a recipe's range), every `conv` and `conv_transpose` weight within int8, one \
         operand of each `gram` and `apply` within int8; in the small tier's multi-operator graphs an \
         operand that an earlier operator produces is held to its certified interval (§8.1). A catch \
         through wider operands says nothing of an int8 or int16 × int8 kernel. The command fails when \
         the scale tier catches a fault on no record whose operands fit.\n",
        tally(false),
        tally(true)
    );
    let _ = writeln!(
        s,
        "**{} faults: the scale tier catches each at int8/int16×int8 widths{}; {only_scale} only \
         there.** The last run took {seconds:.0} s (the checker's build apart), {jobs} faults at a time.\n",
        results.len(),
        if results.iter().all(|(_, r)| r.count(true).narrow > 0) {
            ""
        } else {
            " **but not all of them**"
        }
    );
    let _ = writeln!(
        s,
        "| fault | what it does | small tier: caught (operands fit) | scale tier: caught (operands fit) | \
         verdict | example, small tier | example, scale tier |\n|---|---|---|---|---|---|---|"
    );
    for (f, r) in results {
        let (small, scale) = (r.count(false), r.count(true));
        let example = |c: &Count| match c.example {
            Some(h) if h.narrow => format!("`{}`", h.record),
            Some(h) => format!("`{}` (operands wider)", h.record),
            None => "—".to_string(),
        };
        let _ = writeln!(
            s,
            "| `{}` | {} | {} ({}) | {} ({}) | {} | {} | {} |",
            f.name,
            f.about.replace('|', "\\|"),
            small.caught,
            small.narrow,
            scale.caught,
            scale.narrow,
            verdict(&small, &scale),
            example(&small),
            example(&scale)
        );
    }
    let failed: Vec<String> = results
        .iter()
        .flat_map(|(f, r)| r.failed.iter().map(move |e| format!("- `{}`: {e}", f.name)))
        .collect();
    if !failed.is_empty() {
        let _ = writeln!(
            s,
            "\nFills that failed, on the records they name (counted as caught):\n\n{}",
            failed.join("\n")
        );
    }
    s
}

/// docs/scale.md with this command's section in place of the old one, or after the rest.
fn write_section(root: &Path, section: &str) -> Result<(), String> {
    let path = root.join("docs/scale.md");
    let doc = std::fs::read_to_string(&path).map_err(|e| format!("docs/scale.md: {e}"))?;
    let (before, after) = match doc.find(&format!("\n{HEADING}\n")) {
        Some(at) => {
            let rest = &doc[at + 1 + HEADING.len()..];
            // The section runs to the next heading of its level.
            let end = rest.find("\n## ").map_or("", |k| &rest[k + 1..]);
            (&doc[..at + 1], end)
        }
        None => (doc.as_str(), ""),
    };
    let mut out = before.trim_end().to_string();
    out.push_str("\n\n");
    out.push_str(section.trim_end());
    out.push('\n');
    if !after.is_empty() {
        out.push('\n');
        out.push_str(after);
    }
    wai_oracle::files::write(&path, out.as_bytes()).map_err(|e| format!("docs/scale.md: {e}"))
}
