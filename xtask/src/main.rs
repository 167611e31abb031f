//! `cargo xtask`: the project's own commands.
//!
//! - `regen`: rebuild `ops-conformance/` from `corpus/`.
//! - `coverage`: list every coverage item of §14.1/§14.2 with its vectors; fail on a gap.
//! - `check`: the byte-identity gate: regenerate into a temporary tree and compare; then
//!   refill every committed file with the independent checker and compare.

mod check;
mod compare;

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let root = workspace_root();
    let result = match args.first().map(String::as_str) {
        Some("regen") => regen(&root),
        Some("coverage") => coverage(&root, &args[1..]),
        Some("check") => check::run(&root),
        _ => Err("usage: cargo xtask <regen | coverage [--quiet] | check>".to_string()),
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

/// Builds release binaries of the workspace and returns the directory they are in.
pub fn build(root: &Path, bins: &[(&str, &str)]) -> Result<PathBuf, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root).args(["build", "--release", "--quiet"]);
    for (package, bin) in bins {
        cmd.args(["-p", package, "--bin", bin]);
    }
    let status = cmd.status().map_err(|e| format!("cargo build: {e}"))?;
    if !status.success() {
        return Err("cargo build failed".into());
    }
    Ok(root.join("target").join("release"))
}

/// Runs a command and fails with its name when it does.
pub fn run(cmd: &mut Command, what: &str) -> Result<(), String> {
    let status = cmd.status().map_err(|e| format!("{what}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{what} failed"))
    }
}

fn regen(root: &Path) -> Result<(), String> {
    let bin = build(root, &[("wai-oracle", "wai-generate")])?;
    let start = Instant::now();
    run(
        Command::new(bin.join("wai-generate")).current_dir(root).args([
            "regen",
            "--corpus",
            "corpus",
            "--out",
            "ops-conformance",
        ]),
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
