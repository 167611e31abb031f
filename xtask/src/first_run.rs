//! `cargo xtask bench --first-run`: a newcomer's first run (issue #25). A fresh clone of `HEAD`
//! with a cold target directory runs the README's two commands in order, `cargo xtask check` and
//! then `cargo test --workspace`, each split into its compiling and its running:
//!
//! 1. `cargo build -p xtask` (what `cargo xtask` compiles before it starts);
//! 2. the release binaries the gate builds (the command of [`crate::build`]);
//! 3. `cargo xtask check`, now only the gate itself;
//! 4. `cargo test --workspace --no-run` (compiling the tests);
//! 5. `cargo test --workspace`, each test binary's time read from its report.
//!
//! The compiling steps run with cargo's `--timings`, whose report gives each unit's time: the
//! section names the slowest units and the crates compiled in both profiles.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io::Read;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

/// What issue #25 cut from the first run, and the run before the cuts.
const CUT: &str = "
What was cut (issue #25), each measured on its own on this machine:

- The checker with its `mutants` feature (the grader's tests, `cargo xtask faults`) was built into a
  target directory of its own, every dependency compiled a third time (95 s of a cold run, inside
  `xtask/tests/grade.rs`). It is now the binary `wai-checker-mutants`, beside the plain one in
  `target/`, and only the checker itself is compiled again.
- The oracle and the generator are built at `opt-level = 1` in the dev profile: they compile faster
  than unoptimised (the oracle 35 s → 28 s) and the tests that run them over whole tiers take less
  (`generator/tests/generator.rs` 45 s → 25 s).
- Dev builds keep line tables only (`debug = \"line-tables-only\"`): a panic's backtrace still has its
  files and lines, and the tests' binaries compile and link with less debug information to write.

Before the cuts (commit 059cfb5): `cargo xtask check` 402 s (295 s compiling, 107 s the gate), then
`cargo test --workspace` 579 s (138 s compiling, 440 s running, `tests/grade.rs` alone 160 s): 16.4
minutes, and a target directory of 8.2 GB. Left as they are: the 55 integration test binaries (each
links the crates it tests; merging each crate's into one binary would link them once) and the
release build of the gate's binaries, which the gate needs (the scale tier in the dev profile is
many times slower).
";

/// One compiled unit of a `--timings` report: its crate and its seconds.
struct Unit {
    name: String,
    seconds: f64,
}

/// One step of the run: what it ran, its wall seconds, and the units it compiled.
struct Step {
    what: &'static str,
    seconds: f64,
    units: Vec<Unit>,
}

/// A cargo command in the clone, with nothing of this process's cargo environment that would
/// redirect or change its build.
fn cargo(clone: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(clone).args(args);
    for var in [
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET_DIR",
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

/// Runs `cmd` with its standard output and error on one pipe, in the order written (`cargo test`
/// names each test binary on one and reports it on the other); its wall seconds and that output.
fn timed(mut cmd: Command, what: &str) -> Result<(f64, String), String> {
    let failed = |e: std::io::Error| format!("{what}: {e}");
    let start = Instant::now();
    let (mut reader, writer) = std::io::pipe().map_err(failed)?;
    let mut child = cmd
        .stdout(writer.try_clone().map_err(failed)?)
        .stderr(writer)
        .spawn()
        .map_err(failed)?;
    // The command holds the pipe's only writers: the read ends when the process and its children do.
    drop(cmd);
    let mut bytes = Vec::new();
    reader.read_to_end(&mut bytes).map_err(failed)?;
    let status = child.wait().map_err(failed)?;
    let seconds = start.elapsed().as_secs_f64();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    if !status.success() {
        let tail: Vec<&str> = text.lines().rev().take(20).collect();
        let tail: Vec<&str> = tail.into_iter().rev().collect();
        return Err(format!("{what} failed:\n{}", tail.join("\n")));
    }
    Ok((seconds, text))
}

/// The units of the newest `--timings` report in `target/cargo-timings/` (its `UNIT_DATA`).
fn units(clone: &Path) -> Vec<Unit> {
    let report = clone.join("target/cargo-timings/cargo-timing.html");
    let Ok(html) = std::fs::read_to_string(report) else {
        return Vec::new();
    };
    // `const UNIT_DATA = [ … ];`, the array over many lines: read as the first JSON value there.
    const START: &str = "const UNIT_DATA = ";
    let data = html.find(START).map(|at| &html[at + START.len()..]);
    let first = data.and_then(|d| {
        serde_json::Deserializer::from_str(d)
            .into_iter::<serde_json::Value>()
            .next()
    });
    let Some(Ok(serde_json::Value::Array(entries))) = first else {
        return Vec::new();
    };
    entries
        .iter()
        .map(|u| Unit {
            name: u["name"].as_str().unwrap_or("?").to_string(),
            seconds: u["duration"].as_f64().unwrap_or(0.0),
        })
        .filter(|u| u.seconds > 0.0) // listed, but not compiled in this step
        .collect()
}

/// A compiling step: `args` run with `--timings`, and the units it compiled.
fn compiling(clone: &Path, what: &'static str, args: &[&str]) -> Result<Step, String> {
    let _ = std::fs::remove_file(clone.join("target/cargo-timings/cargo-timing.html"));
    let mut all = args.to_vec();
    all.push("--timings");
    let (seconds, _) = timed(cargo(clone, &all), what)?;
    Ok(Step {
        what,
        seconds,
        units: units(clone),
    })
}

/// Each test binary of a `cargo test` run's output, by the line that starts it, with the seconds
/// its `test result` line reports.
fn test_binaries(output: &str) -> Vec<(String, f64)> {
    let mut binaries = Vec::new();
    let mut current: Option<String> = None;
    for line in output.lines().map(str::trim) {
        if let Some(rest) = line
            .strip_prefix("Running ")
            .or_else(|| line.strip_prefix("Doc-tests "))
        {
            let name = rest.split(" (").next().unwrap_or(rest);
            current = Some(if line.starts_with("Doc-tests") {
                format!("doc-tests {name}")
            } else {
                name.to_string()
            });
        } else if let (Some(r), Some(name)) = (line.strip_prefix("test result: "), &current) {
            let seconds = r
                .rsplit("finished in ")
                .next()
                .and_then(|s| s.trim_end_matches('s').parse().ok())
                .unwrap_or(0.0);
            binaries.push((name.clone(), seconds));
            current = None;
        }
    }
    binaries
}

/// The run, and its section of docs/bench.md.
pub fn measure(root: &Path) -> Result<String, String> {
    let dir = std::env::temp_dir().join(format!("wai-first-run-{}", std::process::id()));
    let clone = dir.join("x");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let head = timed(
        {
            let mut c = Command::new("git");
            c.current_dir(root).args(["rev-parse", "--short", "HEAD"]);
            c
        },
        "git rev-parse",
    )?
    .1;
    let mut git = Command::new("git");
    git.args(["clone", "--quiet"]).arg(root).arg(&clone);
    timed(git, "git clone")?;
    let section = run_in(&clone, head.trim());
    let _ = std::fs::remove_dir_all(&dir);
    section
}

fn run_in(clone: &Path, head: &str) -> Result<String, String> {
    let mut steps = Vec::new();
    eprintln!("first run: compiling xtask");
    steps.push(compiling(
        clone,
        "compiling xtask (`cargo xtask`'s build)",
        &["build", "--quiet", "-p", "xtask", "--bin", "xtask"],
    )?);
    eprintln!("first run: the gate's release binaries");
    steps.push(compiling(
        clone,
        "compiling the gate's release binaries (`wai-generate`, `wai-checker`)",
        &[
            "build",
            "--release",
            "--quiet",
            "--target-dir",
            "target",
            "-p",
            "wai-generate",
            "--bin",
            "wai-generate",
            "-p",
            "wai-checker",
            "--bin",
            "wai-checker",
        ],
    )?);
    eprintln!("first run: cargo xtask check");
    let (gate, _) = timed(cargo(clone, &["xtask", "check"]), "cargo xtask check")?;
    steps.push(Step {
        what: "the gate (`cargo xtask check`, built)",
        seconds: gate,
        units: Vec::new(),
    });
    eprintln!("first run: compiling the tests");
    steps.push(compiling(
        clone,
        "compiling the tests (`cargo test --workspace --no-run`)",
        &["test", "--workspace", "--no-run"],
    )?);
    eprintln!("first run: cargo test --workspace");
    let (tests, output) = timed(cargo(clone, &["test", "--workspace"]), "cargo test --workspace")?;
    steps.push(Step {
        what: "the tests (`cargo test --workspace`, built)",
        seconds: tests,
        units: Vec::new(),
    });
    let bytes = size(&clone.join("target"));
    Ok(section(&steps, &test_binaries(&output), head, bytes))
}

/// The bytes of the files under `dir`.
fn size(dir: &Path) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.file_type() {
            Ok(t) if t.is_dir() => size(&e.path()),
            Ok(t) if t.is_file() => e.metadata().map_or(0, |m| m.len()),
            _ => 0,
        })
        .sum()
}

fn section(steps: &[Step], binaries: &[(String, f64)], head: &str, target_bytes: u64) -> String {
    let mut md = String::new();
    let total: f64 = steps.iter().map(|s| s.seconds).sum();
    writeln!(md, "\n{}\n", crate::bench::FIRST_RUN).ok();
    writeln!(md, "`cargo xtask bench --first-run` (measured once, at commit {head}; other runs of `cargo xtask bench` keep this section): a fresh clone, a cold target directory, the README's two commands in order, each split into compiling and running. The crates' sources were already downloaded.\n").ok();
    writeln!(md, "| step | wall | units compiled |\n|---|---|---|").ok();
    for s in steps {
        let units = if s.units.is_empty() {
            String::new()
        } else {
            s.units.len().to_string()
        };
        writeln!(md, "| {} | {:.0} s | {units} |", s.what, s.seconds).ok();
    }
    writeln!(
        md,
        "| **both commands** | **{:.0} s ({:.1} min)** | |",
        total,
        total / 60.0
    )
    .ok();
    let compile: f64 = steps.iter().filter(|s| !s.units.is_empty()).map(|s| s.seconds).sum();
    writeln!(
        md,
        "\nCompiling takes {:.0} s of the {:.0} s ({:.0}%); the target directory ends at {:.1} GB.",
        compile,
        total,
        100.0 * compile / total,
        target_bytes as f64 / 1e9
    )
    .ok();

    // The crates compiled in both profiles: the dev steps' against the release step's.
    let lib_names = |s: &Step| -> BTreeSet<String> { s.units.iter().map(|u| u.name.clone()).collect() };
    if let [xtask, release, _, tests, _] = steps {
        let dev: BTreeSet<String> = lib_names(xtask).union(&lib_names(tests)).cloned().collect();
        let twice: Vec<&Unit> = release.units.iter().filter(|u| dev.contains(&u.name)).collect();
        let names: BTreeSet<&str> = twice.iter().map(|u| u.name.as_str()).collect();
        let seconds: f64 = twice.iter().map(|u| u.seconds).sum();
        writeln!(md, "\nCompiled in both profiles (dev for `cargo xtask` and the tests, release for the gate's binaries): {} crates, {:.0} s of the release step's units (unit seconds, summed over both cores' work).", names.len(), seconds).ok();
        let mut by_crate: BTreeMap<&str, f64> = BTreeMap::new();
        for s in steps {
            for u in &s.units {
                *by_crate.entry(&u.name).or_default() += u.seconds;
            }
        }
        let mut slow: Vec<(&str, f64)> = by_crate.into_iter().collect();
        slow.sort_by(|a, b| b.1.total_cmp(&a.1));
        writeln!(
            md,
            "\nThe crates that take longest to compile, all units and both profiles together (unit seconds):\n"
        )
        .ok();
        writeln!(md, "| crate | seconds |\n|---|---|").ok();
        for (name, s) in slow.iter().take(10) {
            writeln!(md, "| {name} | {s:.1} |").ok();
        }
    }
    md.push_str(CUT);
    let run: f64 = binaries.iter().map(|b| b.1).sum();
    writeln!(md, "\n`cargo test --workspace` runs {} test binaries (doc-tests included), their tests taking {:.0} s by their own reports; the slowest:\n", binaries.len(), run).ok();
    let mut slow = binaries.to_vec();
    slow.sort_by(|a, b| b.1.total_cmp(&a.1));
    writeln!(md, "| test binary | seconds |\n|---|---|").ok();
    for (name, s) in slow.iter().take(10) {
        writeln!(md, "| {name} | {s:.1} |").ok();
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timings_reports_units_are_read() {
        let dir = std::env::temp_dir().join(format!("first-run-units-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("target/cargo-timings")).unwrap();
        let html = "<script>\nconst UNIT_DATA = [\n  {\n    \"name\": \"serde\",\n    \"duration\": 2.5\n  },\n  {\"name\": \"fresh\", \"duration\": 0.0}\n];\nconst CONCURRENCY_DATA = [];\n";
        std::fs::write(dir.join("target/cargo-timings/cargo-timing.html"), html).unwrap();
        let units = units(&dir);
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(units.len(), 1, "the unit not compiled is left out");
        assert_eq!((units[0].name.as_str(), units[0].seconds), ("serde", 2.5));
    }

    #[test]
    fn each_test_binary_is_paired_with_its_report() {
        let output = "   Compiling x v0.1.0\n     Running unittests src/lib.rs (target/debug/deps/x-1)\n\nrunning 2 tests\ntest result: ok. 2 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 1.25s\n\n     Running tests/gate.rs (target/debug/deps/gate-2)\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 30.00s\n   Doc-tests x\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n";
        assert_eq!(
            test_binaries(output),
            [
                ("unittests src/lib.rs".to_string(), 1.25),
                ("tests/gate.rs".to_string(), 30.0),
                ("doc-tests x".to_string(), 0.0)
            ]
        );
    }

    #[test]
    fn standard_output_and_error_arrive_in_the_order_written() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo one; echo two >&2; echo three"]);
        let (_, text) = timed(cmd, "sh").unwrap();
        assert_eq!(text, "one\ntwo\nthree\n");
    }
}
