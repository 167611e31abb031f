//! `cargo xtask bench`: speed, measured and reported, never asserted.
//!
//! CIS-2: the SmolLM2-135M-shaped checkpoint of `corpus/cis2/bench.json` (seeded weights, built
//! into `target/bench/` on first use, never committed) decoded for 16 tokens on the fast path
//! (pinned hardware, row-parallel) and, with `--exact`, on the exact software binary32. Both
//! must print the same receipt.

use crate::{build, run};
use std::path::Path;
use std::process::Command;

pub fn cis2(root: &Path, args: &[String]) -> Result<(), String> {
    let exact = args.iter().any(|a| a == "--exact");
    let bin = build(root, &[("wai-oracle", "wai-generate"), ("wai-oracle", "wai-oracle")])?;
    let bench = root.join("target/bench");
    let model = bench.join("smollm2-shaped");
    if !model.join("model.safetensors").exists() {
        run(
            Command::new(bin.join("wai-generate"))
                .current_dir(root)
                .args(["cis2-models", "--recipe", "corpus/cis2/bench.json", "--out"])
                .arg(&bench),
            "wai-generate cis2-models",
        )?;
    }
    let mut receipts = Vec::new();
    for path in if exact { &["fast", "exact"][..] } else { &["fast"][..] } {
        let mut cmd = Command::new(bin.join("wai-oracle"));
        cmd.args(["cis2", "--unpinned", "--model-dir"]).arg(&model);
        if *path == "exact" {
            cmd.arg("--exact");
        }
        let out = cmd.output().map_err(|e| format!("wai-oracle cis2: {e}"))?;
        if !out.status.success() {
            return Err(format!("wai-oracle cis2: {}", String::from_utf8_lossy(&out.stderr)));
        }
        let times: Vec<&str> = std::str::from_utf8(&out.stderr)
            .unwrap_or_default()
            .lines()
            .filter(|l| l.starts_with("cis2: ") && l.contains("took"))
            .collect();
        println!("bench cis2 (SmolLM2-135M shape, 16 tokens): {}", times.join("; "));
        receipts.push(out.stdout);
    }
    if receipts.windows(2).any(|w| w[0] != w[1]) {
        return Err("bench cis2: the fast and exact paths printed different receipts".into());
    }
    print!("{}", String::from_utf8_lossy(&receipts[0]));
    Ok(())
}
