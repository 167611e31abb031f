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
//!   killed by two records or shown equivalent; writes docs/mutation-audit.md. `mutants --tool`:
//!   cargo-mutants' mutants of the oracle against the committed tree; writes that file's last section.
//! - `faults`: the checker's implementation faults (a 32-bit accumulator, a `float32` `rq`, …) over
//!   both tiers: which catches each, at operand widths an int8/int16 kernel accepts; writes the table
//!   of docs/scale.md.
//! - `bench`: speed, measured and reported, written to docs/bench.md (the gate, certification,
//!   fill and grading, CIS-2).

mod bench;
mod diff;
mod faults;
mod first_run;
mod fuzz_diff;
mod mutants;
mod mutants_tool;

use wai_oracle::suite::Tier;
use xtask::{FaultOptions, GENERATOR, build, run};

use clap::{Args, Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

/// The project's own commands: regenerate and check the tree, grade an implementation, fuzz,
/// audit and measure.
#[derive(Parser)]
#[command(name = "cargo xtask", bin_name = "cargo xtask")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Rebuild ops-conformance/ from corpus/ (`wai-generate regen`).
    Regen {
        /// The tier to rewrite: small, scale or all.
        #[arg(long, value_name = "TIER", value_parser = Tier::NAMES)]
        tier: Option<String>,
        /// Only these corpus stems, a comma list (passed to `wai-generate regen --only`).
        #[arg(long, value_name = "STEMS")]
        only: Option<String>,
    },
    /// Every coverage item of §14.1/§14.2 with its vectors; fails on a gap
    /// (`wai-generate coverage`, e.g. `--quiet`, `--only OPS`, `--tier T`).
    Coverage {
        /// Passed to `wai-generate coverage` as written.
        #[arg(value_name = "ARGS", trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// The byte-identity gate: regenerate into a temporary tree and compare; refill every committed
    /// file with the independent checker and compare.
    Check {
        /// The tier to check: small, scale or all.
        #[arg(long, value_name = "TIER", default_value = "all", value_parser = tier())]
        tier: Tier,
    },
    /// Random graphs through the oracle and the checker; a disagreement becomes a corpus case.
    FuzzDiff {
        /// How many graphs.
        #[arg(long, value_name = "N", default_value_t = 100_000)]
        cases: u64,
        /// The first seed.
        #[arg(long, value_name = "S", default_value_t = 0)]
        start: u64,
    },
    /// Write the fuzz targets' seed corpora (fuzz/corpus/) from the committed tree.
    FuzzSeeds,
    /// One fuzz target under libFuzzer with docs/fuzzing.md's limits (nightly + cargo-fuzz).
    Fuzz {
        /// The fuzz target.
        #[arg(value_parser = xtask::fuzzing::TARGETS)]
        target: String,
        /// How long to fuzz.
        #[arg(long, value_name = "N", default_value_t = 600)]
        seconds: u64,
    },
    /// Speed, measured and reported, written to docs/bench.md.
    Bench {
        /// Runs of each measurement.
        #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..))]
        runs: u64,
        /// Also a newcomer's first run (a fresh clone, a cold build, the README's two commands:
        /// about half an hour); without it, docs/bench.md keeps the section of the last such run.
        #[arg(long)]
        first_run: bool,
    },
    /// The mutation audit: every fault of the checker's catalogue over the whole tree; writes
    /// docs/mutation-audit.md.
    Mutants {
        #[command(flatten)]
        faults: MutantArgs,
        /// Run each fault over every file (by default a fault stops once two records kill it).
        #[arg(long)]
        all: bool,
        /// Instead of the catalogue, cargo-mutants' own mutants of the oracle against the committed
        /// tree (one shard of them); writes the tool's section of docs/mutation-audit.md.
        #[arg(long)]
        tool: bool,
        /// With `--tool`: the round-robin shard, `K/N` (the committed sample's by default).
        #[arg(long, value_name = "K/N", default_value = "0/16", requires = "tool")]
        shard: String,
        /// With `--tool`: render the section from an earlier run's output directory (the one
        /// holding `mutants.out`) instead of running.
        #[arg(long, value_name = "DIR", requires = "tool")]
        from: Option<PathBuf>,
        /// With `--tool`: run again only the survivors classified `closed`; each must be caught.
        #[arg(long, requires = "tool")]
        recheck: bool,
    },
    /// The checker's implementation faults over both tiers: which catches each; writes the table
    /// of docs/scale.md.
    Faults {
        #[command(flatten)]
        faults: FaultArgs,
    },
    /// What changed in ops-conformance/ since a git revision, record by record.
    Diff {
        /// A git revision: HEAD, main, a commit.
        rev: String,
    },
    /// Grade a third-party `fill` against the committed tree, with verdicts per profile
    /// (docs/protocol.md, "Grading").
    Grade(xtask::grade::GradeArgs),
}

/// `mutants`' `--only` and `--jobs`.
#[derive(Args)]
struct MutantArgs {
    /// Only these faults of the catalogue, a comma list, repeatable.
    #[arg(long, value_name = "NAMES", value_delimiter = ',', value_parser = catalogue_name)]
    only: Vec<String>,
    /// Faults run at a time.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..))]
    jobs: u64,
}

/// `faults`' `--only` and `--jobs`.
#[derive(Args)]
struct FaultArgs {
    /// Only these implementation faults, a comma list, repeatable.
    #[arg(long, value_name = "NAMES", value_delimiter = ',', value_parser = fault_name)]
    only: Vec<String>,
    /// Faults run at a time.
    #[arg(long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..))]
    jobs: u64,
}

use wai_checker::mutants::{CATALOGUE, FAULTS};

fn catalogue_name(s: &str) -> Result<String, String> {
    let known = CATALOGUE.iter().any(|m| m.name == s);
    known
        .then(|| s.to_string())
        .ok_or(format!("{s:?} is not in the catalogue"))
}

fn fault_name(s: &str) -> Result<String, String> {
    let known = FAULTS.iter().any(|f| f.name == s);
    known
        .then(|| s.to_string())
        .ok_or(format!("{s:?} is not in the implementation faults"))
}

/// `--tier small|scale|all`.
fn tier() -> impl clap::builder::TypedValueParser<Value = Tier> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(Tier::NAMES).map(|t| Tier::parse(&t).unwrap_or(Tier::All))
}

fn fault_options(only: Vec<String>, jobs: u64) -> FaultOptions {
    FaultOptions {
        only,
        jobs: usize::try_from(jobs).unwrap_or(usize::MAX),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let root = workspace_root();
    let result = match cli.command {
        Cmd::Regen { tier, only } => regen(&root, tier, only),
        Cmd::Coverage { args } => coverage(&root, &args),
        Cmd::Check { tier } => xtask::check::run(&root, tier),
        Cmd::FuzzDiff { cases, start } => fuzz_diff::run(&root, cases, start),
        Cmd::Bench { runs, first_run } => bench::main(&root, usize::try_from(runs).unwrap_or(usize::MAX), first_run),
        Cmd::Grade(args) if !args.merge.is_empty() => {
            xtask::grade::merge_main(xtask::grade::Merge::of(&args).expect("--merge"))
        }
        Cmd::Grade(args) => match xtask::grade::Options::try_from(args) {
            Ok(o) => xtask::grade::main(&root, o),
            Err(e) => {
                use clap::CommandFactory;
                Cli::command().error(clap::error::ErrorKind::ArgumentConflict, e).exit()
            }
        },
        Cmd::Diff { rev } => diff::run(&root, &rev),
        Cmd::FuzzSeeds => fuzz_seeds(&root),
        Cmd::Fuzz { target, seconds } => fuzz(&root, &target, seconds),
        Cmd::Mutants {
            tool: true,
            shard,
            from,
            recheck,
            ..
        } => mutants_tool::main(&root, mutants_tool::ToolOptions { shard, from, recheck }),
        Cmd::Mutants { faults, all, .. } => mutants::main(&root, fault_options(faults.only, faults.jobs), all),
        Cmd::Faults { faults } => faults::main(&root, fault_options(faults.only, faults.jobs)),
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
fn regen(root: &Path, tier: Option<String>, only: Option<String>) -> Result<(), String> {
    let mut args = Vec::new();
    if let Some(t) = tier {
        args.extend(["--tier".to_string(), t]);
    }
    if let Some(o) = only {
        args.extend(["--only".to_string(), o]);
    }
    let bin = build(root, &[GENERATOR])?;
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
    let bin = build(root, &[GENERATOR])?;
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
fn fuzz(root: &Path, target: &str, seconds: u64) -> Result<(), String> {
    use xtask::fuzzing::max_len;
    let corpus = root.join("fuzz/corpus").join(target);
    if std::fs::read_dir(&corpus).map_or(true, |mut d| d.next().is_none()) {
        fuzz_seeds(root)?;
    }
    run(
        Command::new("cargo")
            .current_dir(root.join("fuzz"))
            .args(["+nightly", "fuzz", "run", "-O", "-a", "-s", "none", target])
            .arg(&corpus)
            .arg("--")
            .arg(format!("-max_total_time={seconds}"))
            .arg(format!("-max_len={}", max_len(target)))
            .args(["-timeout=60", "-rss_limit_mb=2048", "-print_final_stats=1"]),
        "cargo +nightly fuzz run",
    )
}
