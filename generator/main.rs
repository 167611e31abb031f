//! `wai-generate`: the corpus (`corpus/`) to the committed tree (`ops-conformance/`).
//!
//! `regen` expands every corpus case into a request, fills it with the oracle and writes
//! the canonical files and `MANIFEST.sha256`. `coverage` lists each coverage item of §14.1
//! and §14.2 with the vectors that cover it, checking every claim it can.

mod attain;
mod case;
mod cis2;
mod cis2_model;
mod coverage;
mod dequant;
mod graph;
mod graph_certs;
mod jpegai;
mod recipe;
mod sets;
mod stage;
mod tree;
mod value;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;
use wai_oracle::suite::Tier;

#[derive(Parser)]
#[command(name = "wai-generate", about = "corpus/ -> ops-conformance/")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Regenerate the tree from the corpus.
    Regen {
        #[arg(long, default_value = "corpus")]
        corpus: PathBuf,
        #[arg(long, default_value = "ops-conformance")]
        out: PathBuf,
        /// The small tier (everything but scale/), the scale tier, or both: small, scale or all.
        #[arg(long, default_value = "all", value_parser = Tier::parse)]
        tier: Tier,
        /// Only these scale files (by stem: `conv`); the rest of scale/ is kept.
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
    },
    /// List every coverage item with the vectors that cover it; fail if any has none.
    Coverage {
        #[arg(long, default_value = "corpus")]
        corpus: PathBuf,
        /// Print only the items with no vector, and the claims that do not hold.
        #[arg(long)]
        quiet: bool,
        /// Only these corpus files (by stem: `conv`, `load_checks`), and only their operators' items.
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        /// Only the small tier's items and files, or the scale tier's (docs/scale.md): small, scale
        /// or all.
        #[arg(long, default_value = "all", value_parser = Tier::parse)]
        tier: Tier,
    },
    /// Write the graphs of a file of cases (corpus/bench/graphs.json) as DIR/<id>.whg1.
    Graphs {
        #[arg(long)]
        cases: PathBuf,
        #[arg(long)]
        out: PathBuf,
    },
    /// Write the CIS-2 checkpoints of a recipe file (models.json's form) into DIR/<name>/.
    Cis2Models {
        #[arg(long)]
        recipe: PathBuf,
        #[arg(long)]
        out: PathBuf,
    },
}

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Command::Regen {
            corpus,
            out,
            tier,
            only,
        } => tree::regen(&corpus, &out, tier, &only),
        Command::Coverage {
            corpus,
            quiet,
            only,
            tier,
        } => coverage::run(&corpus, quiet, &only, tier),
        Command::Cis2Models { recipe, out } => cis2::write_models(&recipe, &out),
        Command::Graphs { cases, out } => case::write_graphs(&cases, &out),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("wai-generate: {e}");
            ExitCode::FAILURE
        }
    }
}
