//! The library half of `cargo xtask`: what its commands share with its tests.

pub mod arrays;
pub mod check;
pub mod compare;
pub mod differential;
pub mod fuzzing;
pub mod grade;

use std::path::{Path, PathBuf};
use std::process::Command;

/// Builds release binaries of the workspace into `target/` and returns the directory they are in.
pub fn build(root: &Path, bins: &[(&str, &str)]) -> Result<PathBuf, String> {
    build_into(root, &root.join("target"), bins, &[])
}

/// The checker built with its `mutants` feature, in `target/mutants`: apart, so that the ordinary
/// binary is never mutated.
pub fn mutant_checker(root: &Path) -> Result<PathBuf, String> {
    let dir = build_into(
        root,
        &root.join("target/mutants"),
        &[("wai-checker", "wai-checker")],
        &["mutants"],
    )?;
    Ok(dir.join("wai-checker"))
}

fn build_into(root: &Path, target: &Path, bins: &[(&str, &str)], features: &[&str]) -> Result<PathBuf, String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(root)
        .args(["build", "--release", "--quiet", "--target-dir"])
        .arg(target);
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

/// The options of the commands that run the checker's faults (`mutants`, `faults`).
pub struct FaultOptions {
    /// `--only a,b`: the faults to run (all when empty), each one of the command's.
    pub only: Vec<String>,
    /// `--jobs N`: faults at a time (default 2).
    pub jobs: usize,
    /// The command's own flags that were given.
    pub flags: Vec<String>,
}

/// Reads `--only`, `--jobs` and the command's `flags`; `--only` names must be among `names`, the
/// faults of `table` (for the message).
pub fn fault_options(
    command: &str,
    args: &[String],
    names: &[&str],
    table: &str,
    flags: &[&str],
) -> Result<FaultOptions, String> {
    let mut o = FaultOptions {
        only: vec![],
        jobs: 2,
        flags: vec![],
    };
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--only" => o
                .only
                .extend(it.next().ok_or("--only needs a value")?.split(',').map(String::from)),
            "--jobs" => {
                let v = it.next().ok_or("--jobs needs a value")?;
                o.jobs = v.parse().ok().filter(|&n| n >= 1).ok_or(format!("--jobs: {v:?}"))?;
            }
            flag if flags.contains(&flag) => o.flags.push(a.clone()),
            other => return Err(format!("{command}: unknown argument {other:?}")),
        }
    }
    if let Some(bad) = o.only.iter().find(|n| !names.contains(&n.as_str())) {
        return Err(format!("--only: {bad:?} is not in {table}"));
    }
    Ok(o)
}
