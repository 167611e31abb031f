//! `cargo xtask`: the project's own commands.
//!
//! - `regen`: rebuild `ops-conformance/` from `corpus/`.
//! - `coverage`: list every coverage item of §14.1/§14.2 with its vectors; fail on a gap.
//! - `check`: the byte-identity gate: regenerate into a temporary tree and compare; then
//!   refill every committed file with the independent checker and compare.
//! - `fuzz-diff`: random graphs through the oracle and the checker; a disagreement becomes a
//!   corpus case.
//! - `fuzz-seeds`: write the fuzz targets' seed corpora (`fuzz/corpus/`) from the committed tree.
//! - `fuzz TARGET [--seconds N]`: one fuzz target under libFuzzer with docs/fuzzing.md's limits.
//! - `diff REV`: what changed in `ops-conformance/` since a git revision, record by record.
//! - `grade`: a third-party `fill` against the committed tree, with verdicts per profile.
//! - `mutants`: the mutation audit: every fault of the checker's catalogue over the whole tree, each
//!   killed by a vector or shown equivalent; writes docs/mutation-audit.md.
//! - `faults`: the checker's implementation faults (a 32-bit accumulator, a `float32` `rq`, …) over
//!   both tiers: which catches each, at operand widths an int8/int16 kernel accepts; writes the table
//!   of docs/scale.md.
//! - `bench`: speed, measured and reported, written to docs/bench.md (the gate, certification,
//!   fill and grading, CIS-2).

mod bench;
mod diff;
mod faults;
mod fuzz_diff;
mod mutants;

use xtask::{build, check, run};

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = workspace_root();
    let result = match args.first().map(String::as_str) {
        Some("regen") => regen(&root, &args[1..]),
        Some("coverage") => coverage(&root, &args[1..]),
        Some("check") => check::run(&root, &args[1..]),
        Some("fuzz-diff") => fuzz_diff::run(&root, &args[1..]),
        Some("bench") => bench::main(&root, &args[1..]),
        Some("grade") => xtask::grade::main(&root, &args[1..]),
        Some("diff") => diff::run(&root, &args[1..]),
        Some("fuzz-seeds") => fuzz_seeds(&root),
        Some("fuzz") => fuzz(&root, &args[1..]),
        Some("mutants") => mutants::main(&root, &args[1..]),
        Some("faults") => faults::main(&root, &args[1..]),
        _ => Err(
            "usage: cargo xtask <regen [--tier T] [--only STEMS] | coverage [--quiet] [--only OPS] | check [--tier small|scale|all] | fuzz-diff [--cases N] [--start S] | fuzz-seeds | fuzz TARGET [--seconds N] | bench [--runs N] | mutants [--only NAMES] [--jobs N] [--all] | faults [--only NAMES] [--jobs N] | diff REV | grade --impl CMD [--suite S] [--only F] [--profile P] [--include-provisional] [--strict] [--timeout SECS] [--json FILE] [--markdown FILE]>"
                .to_string(),
        ),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: {e}");
            ExitCode::FAILURE
        }
    }
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// `regen [--tier small|scale|all] [--only STEMS]`: the options pass to `wai-generate regen`.
fn regen(root: &Path, args: &[String]) -> Result<(), String> {
    let bin = build(root, &[("wai-oracle", "wai-generate")])?;
    let start = Instant::now();
    run(
        Command::new(bin.join("wai-generate"))
            .current_dir(root)
            .args(["regen", "--corpus", "corpus", "--out", "ops-conformance"])
            .args(args),
        "wai-generate regen",
    )?;
    eprintln!("regen: {:.1} s", start.elapsed().as_secs_f64());
    Ok(())
}

fn coverage(root: &Path, args: &[String]) -> Result<(), String> {
    let bin = build(root, &[("wai-oracle", "wai-generate")])?;
    run(
        Command::new(bin.join("wai-generate"))
            .current_dir(root)
            .arg("coverage")
            .args(args),
        "wai-generate coverage",
    )
}

fn fuzz_seeds(root: &Path) -> Result<(), String> {
    for (target, n) in xtask::fuzzing::write_seeds(root)? {
        eprintln!("fuzz-seeds: fuzz/corpus/{target}: {n} seeds");
    }
    Ok(())
}

/// `cargo xtask fuzz TARGET [--seconds N]`: seeds the corpus from the tree if it is empty, then
/// runs the target under `cargo +nightly fuzz` with the limits docs/fuzzing.md states.
fn fuzz(root: &Path, args: &[String]) -> Result<(), String> {
    use xtask::fuzzing::{TARGETS, max_len};
    let target = args.first().filter(|t| TARGETS.contains(&t.as_str())).ok_or_else(|| {
        format!(
            "cargo xtask fuzz TARGET [--seconds N]: TARGET is one of {}",
            TARGETS.join(", ")
        )
    })?;
    let seconds: u64 = match args.iter().position(|a| a == "--seconds") {
        Some(i) => args.get(i + 1).and_then(|n| n.parse().ok()).ok_or("--seconds N")?,
        None => 600,
    };
    let corpus = root.join("fuzz/corpus").join(target);
    if std::fs::read_dir(&corpus).map_or(true, |mut d| d.next().is_none()) {
        fuzz_seeds(root)?;
    }
    run(
        Command::new("cargo")
            .current_dir(root.join("fuzz"))
            .args(["+nightly", "fuzz", "run", "-O", "-a", target])
            .arg(&corpus)
            .arg("--")
            .arg(format!("-max_total_time={seconds}"))
            .arg(format!("-max_len={}", max_len(target)))
            .args([
                "-timeout=60",
                "-rss_limit_mb=2048",
                "-malloc_limit_mb=1024",
                "-print_final_stats=1",
            ]),
        "cargo +nightly fuzz run",
    )
}
