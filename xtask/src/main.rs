//! `cargo xtask`: the project's own commands.

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some(cmd) => {
            eprintln!("cargo xtask {cmd}: not available yet");
            ExitCode::FAILURE
        }
        None => {
            eprintln!("usage: cargo xtask <command>");
            ExitCode::FAILURE
        }
    }
}
