//! `wai-oracle`: the oracle's command line.

use clap::{Parser, Subcommand};
use std::fs::File;
use std::io::{self, BufReader, BufWriter};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "wai-oracle", about = "The wai-ops/1 conformance oracle", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Fill request lines (JSON Lines) with their computed fields.
    Fill {
        /// Read requests from this file instead of stdin.
        #[arg(long = "in")]
        input: Option<PathBuf>,
        /// Write filled lines to this file instead of stdout.
        #[arg(long = "out")]
        output: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Fill { input, output } => match fill(input, output) {
            Ok(0) => ExitCode::SUCCESS,
            Ok(bad) => {
                eprintln!("wai-oracle fill: {bad} bad lines");
                ExitCode::FAILURE
            }
            Err(e) => {
                eprintln!("wai-oracle fill: {e}");
                ExitCode::FAILURE
            }
        },
    }
}

fn fill(input: Option<PathBuf>, output: Option<PathBuf>) -> Result<usize, String> {
    let reader: Box<dyn io::BufRead> = match &input {
        Some(p) => Box::new(BufReader::new(
            File::open(p).map_err(|e| format!("{}: {e}", p.display()))?,
        )),
        None => Box::new(io::stdin().lock()),
    };
    let writer: Box<dyn io::Write> = match &output {
        Some(p) => Box::new(BufWriter::new(
            File::create(p).map_err(|e| format!("{}: {e}", p.display()))?,
        )),
        None => Box::new(BufWriter::new(io::stdout().lock())),
    };
    wai_oracle::fill::fill_stream(reader, writer, io::stderr().lock()).map_err(|e| e.to_string())
}
