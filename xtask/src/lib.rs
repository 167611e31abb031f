//! The library half of `cargo xtask`: what its commands share with its tests.

pub mod arrays;
pub mod check;
pub mod compare;
pub mod differential;
pub mod fuzzing;
pub mod grade;
pub mod jsondiff;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The generator's binary (`generator/`), by package and name, as [`build`] takes it.
pub const GENERATOR: (&str, &str) = ("wai-generate", "wai-generate");

/// Builds release binaries of the workspace into `target/` and returns the directory they are in.
pub fn build(root: &Path, bins: &[(&str, &str)]) -> Result<PathBuf, String> {
    build_with(root, bins, &[])
}

/// The checker built with its `mutants` feature: `wai-checker-mutants`, the same program under its
/// own name, so that the ordinary binary is never mutated while the two share `target/`'s builds
/// of every dependency.
pub fn mutant_checker(root: &Path) -> Result<PathBuf, String> {
    let dir = build_with(root, &[("wai-checker", "wai-checker-mutants")], &["mutants"])?;
    Ok(dir.join("wai-checker-mutants"))
}

fn build_with(root: &Path, bins: &[(&str, &str)], features: &[&str]) -> Result<PathBuf, String> {
    let target = root.join("target");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root)
        .args(["build", "--release", "--quiet", "--target-dir"])
        .arg(&target);
    for (package, bin) in bins {
        cmd.args(["-p", package, "--bin", bin]);
    }
    if !features.is_empty() {
        cmd.args(["--features", &features.join(",")]);
    }
    run(&mut cmd, "cargo build")?;
    Ok(target.join("release"))
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

/// The options of the commands that run the checker's faults (`mutants`, `faults`), their names
/// checked by the command line (`main.rs`).
pub struct FaultOptions {
    /// `--only a,b`: the faults to run (all when empty).
    pub only: Vec<String>,
    /// `--jobs N`: faults at a time (default 2).
    pub jobs: usize,
}
