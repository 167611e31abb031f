//! The library half of `cargo xtask`: what its commands share with its tests.

pub mod check;
pub mod compare;
pub mod differential;
pub mod fuzzing;
pub mod grade;

use std::path::{Path, PathBuf};
use std::process::Command;

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
