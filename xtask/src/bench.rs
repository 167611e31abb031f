//! `cargo xtask bench [--runs N] [--exact-large]`: speed, measured and reported, never asserted.
//! Writes `docs/bench.md`: the machine, then each figure's median and spread over the runs.
//!
//! 1. The gate: `regen` and `check` on the committed tree (warm build), and each suite's fill by the
//!    oracle and by the checker.
//! 2. Certification: `certify` by both on the synthetic graphs of `corpus/bench/graphs.json`, as
//!    weights per second.
//! 3. Fill throughput per record, the grader's overhead per record against `cat`, and on the scale
//!    tier the grader's throughput (MB/s of answers compared) against the checker's.
//! 4. CIS-2: the fast path's 16-token decode of the SmolLM2-135M-shaped checkpoint of
//!    `corpus/cis2/bench.json` against streaming its f32 weights once per position; the exact path
//!    on the smaller checkpoint, and its ratio to the fast path there.

use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;
use wai_oracle::suite::{Tier, VECTORS};
use xtask::check::strip;
use xtask::{GENERATOR, build, run};

/// Median and extremes of some seconds.
struct Spread {
    median: f64,
    min: f64,
    max: f64,
}

fn spread(mut xs: Vec<f64>) -> Spread {
    xs.sort_by(f64::total_cmp);
    Spread {
        median: xs[xs.len() / 2],
        min: xs[0],
        max: xs[xs.len() - 1],
    }
}

fn seconds(s: &Spread) -> String {
    format!("{:.3} s [{:.3}–{:.3}]", s.median, s.min, s.max)
}

/// Runs a command `runs` times, each's wall time.
fn timed(runs: usize, mut f: impl FnMut() -> Result<(), String>) -> Result<Spread, String> {
    let mut xs = Vec::new();
    for _ in 0..runs {
        let start = Instant::now();
        f()?;
        xs.push(start.elapsed().as_secs_f64());
    }
    Ok(spread(xs))
}

/// A command fed `input` on stdin in `cwd`, its stdout discarded; fails unless it succeeds.
fn feed(program: &Path, args: &[&str], cwd: &Path, input: &[u8]) -> Result<(), String> {
    use std::io::Write;
    let mut child = Command::new(program)
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("{}: {e}", program.display()))?;
    child
        .stdin
        .take()
        .expect("piped")
        .write_all(input)
        .map_err(|e| e.to_string())?;
    let status = child.wait().map_err(|e| e.to_string())?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{} {args:?} failed", program.display()))
    }
}

fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map_or("unknown".to_string(), |m| m.trim().to_string());
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    format!("{cores} cores, {model}")
}

/// The number of convolution weights in a WHG1 graph.
fn weights(bytes: &[u8]) -> usize {
    use wai_oracle::whg1::model::Op;
    let Ok(g) = wai_oracle::whg1::read::read(bytes) else {
        return 0;
    };
    g.nodes
        .iter()
        .map(|n| match &n.op {
            Op::Conv(c) => c.weights.len(),
            Op::ConvTranspose(c) => c.weights.len(),
            _ => 0,
        })
        .sum()
}

/// The two run times `wai-oracle cis2` reports on stderr, in seconds.
fn cis2_runs(bin: &Path, model: &Path, extra: &[&str]) -> Result<(Vec<f64>, String), String> {
    let out = Command::new(bin.join("wai-oracle"))
        .args(["cis2", "--unpinned", "--model-dir"])
        .arg(model)
        .args(extra)
        .output()
        .map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(format!("wai-oracle cis2: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let err = String::from_utf8_lossy(&out.stderr);
    let line = err.lines().find(|l| l.contains("took")).unwrap_or_default();
    let times: Vec<f64> = line.split_whitespace().filter_map(|w| w.parse::<f64>().ok()).collect();
    Ok((times, String::from_utf8_lossy(&out.stdout).into_owned()))
}

/// The pairs of runs the grader's own cost is the median of.
fn pairs(runs: usize) -> usize {
    runs.max(5)
}

/// This process's CPU time so far, all its threads (not its children's), in seconds.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes the struct it is given; a zeroed rusage is a valid one.
    let u = unsafe {
        let mut u: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut u);
        u
    };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 * 1e-6;
    t(u.ru_utime) + t(u.ru_stime)
}

/// The grader's cost per record against `cat` in docs/bench.md before its runs were pipelined.
const GRADER_BEFORE_US: f64 = 418.4;

/// The scale files whose grading `bench` times: a long accumulation with small tensors, the
/// largest elementwise one, and channel reductions.
const SCALE_GRADED: [&str; 3] = ["conv", "mul", "layernorm_c"];

/// `python3 replay.py ANSWERS`: each request line read, then the next line of ANSWERS written.
const REPLAY: &str = "import sys
answers = open(sys.argv[1], 'rb')
out = sys.stdout.buffer
for _ in sys.stdin.buffer:
    out.write(answers.readline())
    out.flush()
";

/// A scale file's grade timed: its answers' bytes, and the checker alone, the grader alone and the
/// two together.
struct Throughput {
    file: String,
    bytes: u64,
    checker: Spread,
    grader: Spread,
    both: Spread,
}

/// Times the grading of [`SCALE_GRADED`]: the checker's `fill` alone on the requests the grader
/// writes out, the grader alone on the checker's answers replayed ([`REPLAY`]), and the grade of
/// the checker. Each grade must pass every record.
fn scale_grading(tree: &Path, bin: &Path, scratch: &Path, runs: usize) -> Result<Vec<Throughput>, String> {
    use xtask::grade::{Options, Outcome};
    let checker = bin.join("wai-checker");
    let dir = scratch.join("scale-grading");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    // An implementation that answers each request, once read, with the next of the answers kept.
    let replay = dir.join("replay.py");
    std::fs::write(&replay, REPLAY).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for stem in SCALE_GRADED {
        let file = format!("scale/{stem}.jsonl");
        let grade = |implementation: String| -> Result<(), String> {
            let args = [
                "--impl",
                &implementation,
                "--role",
                "all",
                "--suite",
                "scale",
                "--only",
                stem,
            ];
            let o = Options::parse(&args.map(String::from))?;
            let grades = xtask::grade::grade(tree, &o)?;
            let records: Vec<_> = grades.iter().flat_map(|g| &g.records).collect();
            if records.is_empty() || records.iter().any(|r| r.outcome != Outcome::Passed) {
                return Err(format!(
                    "bench: {file}: the grade of `{implementation}` did not pass every record"
                ));
            }
            Ok(())
        };
        let (requests, answers) = (
            dir.join(format!("{stem}.requests")),
            dir.join(format!("{stem}.answers")),
        );
        // Kept once, untimed: the requests as the grader writes them out, and the checker's answers.
        grade(format!(
            "tee {} | {} fill | tee {}",
            requests.display(),
            checker.display(),
            answers.display()
        ))?;
        let bytes = std::fs::metadata(&answers).map_err(|e| e.to_string())?.len();
        let alone = timed(runs, || {
            let input = std::fs::File::open(&requests).map_err(|e| e.to_string())?;
            run(
                Command::new(&checker)
                    .arg("fill")
                    .current_dir(tree)
                    .stdin(input)
                    .stdout(Stdio::null()),
                "wai-checker fill",
            )
        })?;
        let replayed = timed(runs, || {
            grade(format!("python3 {} {}", replay.display(), answers.display()))
        })?;
        let both = timed(runs, || grade(format!("{} fill", checker.display())))?;
        let _ = (std::fs::remove_file(&requests), std::fs::remove_file(&answers));
        out.push(Throughput {
            file,
            bytes,
            checker: alone,
            grader: replayed,
            both,
        });
    }
    Ok(out)
}

pub fn main(root: &Path, runs: usize) -> Result<(), String> {
    let started = Instant::now();
    let bin = build(
        root,
        &[
            GENERATOR,
            ("wai-oracle", "wai-oracle"),
            ("wai-checker", "wai-checker"),
            ("xtask", "membw"),
        ],
    )?;
    let tree = root.join("ops-conformance");
    let scratch = std::env::temp_dir().join(format!("wai-bench-{}", std::process::id()));
    let mut md = String::new();
    writeln!(
        md,
        "# Benchmarks\n\nWritten by `cargo xtask bench` (release builds, {runs} runs each: median [min–max])."
    )
    .ok();
    writeln!(md, "Machine: {}.\n", machine()).ok();

    // 1. The gate.
    eprintln!("bench: the gate");
    let regen_of = |tier: Tier| {
        run(
            Command::new(bin.join("wai-generate"))
                .current_dir(root)
                .args(["regen", "--corpus", "corpus", "--tier", tier.name(), "--out"])
                .arg(scratch.join("tree"))
                .stderr(Stdio::null()),
            "regen",
        )
    };
    let check_of = |tier: Tier| xtask::check::differences(root, &tree, &bin, tier).map(|_| ());
    let regen = timed(runs, || regen_of(Tier::Small))?;
    let check = timed(runs, || check_of(Tier::Small))?;
    // The scale tier takes about a minute a run: once.
    let regen_all = timed(1, || regen_of(Tier::All))?;
    let check_all = timed(1, || check_of(Tier::All))?;
    writeln!(md, "## The gate\n\n| step | time |\n|---|---|").ok();
    writeln!(
        md,
        "| `regen --tier small` (the tree without `scale/`) | {} |",
        seconds(&regen)
    )
    .ok();
    writeln!(
        md,
        "| `check --tier small` (regenerate and compare, then refill and re-lower with the checker) | {} |",
        seconds(&check)
    )
    .ok();
    writeln!(md, "| `regen` (both tiers; one run) | {} |", seconds(&regen_all)).ok();
    writeln!(
        md,
        "| `check` (both tiers: the whole gate; one run) | {} |",
        seconds(&check_all)
    )
    .ok();
    writeln!(
        md,
        "\nEach suite's fill (every normative record of it, one process), records per second:\n"
    )
    .ok();
    writeln!(md, "| suite | records | oracle | checker |\n|---|---|---|---|").ok();
    let mut vectors_rate = (0.0, 0.0);
    for suite in Tier::Small.suites().map(|s| s.name) {
        let files: Vec<String> = xtask::compare::files(&tree.join(suite))
            .into_iter()
            .filter(|f| f.ends_with(".jsonl"))
            .collect();
        let mut requests = Vec::new();
        for f in &files {
            requests.extend(strip(
                &std::fs::read(tree.join(suite).join(f)).map_err(|e| e.to_string())?,
            )?);
        }
        let records = requests.iter().filter(|&&b| b == b'\n').count();
        let oracle = timed(runs, || feed(&bin.join("wai-oracle"), &["fill"], &tree, &requests))?;
        let checker = timed(runs, || feed(&bin.join("wai-checker"), &["fill"], &tree, &requests))?;
        let rate = |s: &Spread| records as f64 / s.median;
        if suite == VECTORS.name {
            vectors_rate = (rate(&oracle), rate(&checker));
        }
        writeln!(
            md,
            "| {suite} | {records} | {:.0}/s ({}) | {:.0}/s ({}) |",
            rate(&oracle),
            seconds(&oracle),
            rate(&checker),
            seconds(&checker)
        )
        .ok();
    }

    // 2. Certification.
    eprintln!("bench: certification");
    let graphs = scratch.join("graphs");
    run(
        Command::new(bin.join("wai-generate"))
            .current_dir(root)
            .args(["graphs", "--cases", "corpus/bench/graphs.json", "--out"])
            .arg(&graphs),
        "wai-generate graphs",
    )?;
    writeln!(
        md,
        "\n## Certification\n\n| graph | weights | oracle | checker |\n|---|---|---|---|"
    )
    .ok();
    let mut names = xtask::compare::files(&graphs);
    names.sort_by_key(|n| std::fs::metadata(graphs.join(n)).map(|m| m.len()).unwrap_or(0));
    let mut largest_checker_rate = 0.0;
    for name in names {
        let path = graphs.join(&name);
        let w = weights(&std::fs::read(&path).map_err(|e| e.to_string())?);
        let certify = |program: &str| {
            timed(runs, || {
                run(
                    Command::new(bin.join(program))
                        .arg("certify")
                        .arg(&path)
                        .stdout(Stdio::null()),
                    "certify",
                )
            })
        };
        let (oracle, checker) = (certify("wai-oracle")?, certify("wai-checker")?);
        let rate = |s: &Spread| w as f64 / s.median;
        largest_checker_rate = rate(&checker);
        writeln!(
            md,
            "| {} | {w} | {:.2e}/s ({}) | {:.2e}/s ({}) |",
            name.trim_end_matches(".whg1"),
            rate(&oracle),
            seconds(&oracle),
            rate(&checker),
            seconds(&checker)
        )
        .ok();
    }

    // 3. Fill throughput, the grader's cost per record, and its throughput on the scale tier.
    eprintln!("bench: the grader");
    let options =
        xtask::grade::Options::parse(&["--impl", "cat", "--role", "all", "--suite", "vectors"].map(String::from))?;
    // The implementation's share: the same `cat` runs, one per file on its requests, started and
    // read as the grader does, with nothing graded. Measured in pairs with the grade, each pair
    // close in time, for the machine's load moves.
    let requests: Vec<Vec<u8>> = xtask::grade::select(&tree, &options)
        .iter()
        .map(|f| strip(&std::fs::read(tree.join(&f.path)).map_err(|e| e.to_string())?))
        .collect::<Result<_, _>>()?;
    let mut graded = 0;
    let (mut grade_s, mut alone_s, mut own_s, mut own_cpu) = (vec![], vec![], vec![], vec![]);
    for _ in 0..pairs(runs) {
        let (start, cpu) = (Instant::now(), cpu_seconds());
        for r in &requests {
            let (_, ending) = xtask::grade::run("cat", &tree, r.clone(), options.timeout, 2 * r.len() + (1 << 20));
            if ending != xtask::grade::Ending::Exited(0) {
                return Err(format!("bench: `cat` ended {ending:?}"));
            }
        }
        let (alone, alone_cpu) = (start.elapsed().as_secs_f64(), cpu_seconds() - cpu);
        let (start, cpu) = (Instant::now(), cpu_seconds());
        graded = xtask::grade::grade(&tree, &options)?
            .iter()
            .map(|g| g.records.len())
            .sum();
        let (grade, grade_cpu) = (start.elapsed().as_secs_f64(), cpu_seconds() - cpu);
        grade_s.push(grade);
        alone_s.push(alone);
        own_s.push(grade - alone);
        own_cpu.push(grade_cpu - alone_cpu);
    }
    let us = |s: f64| s * 1e6 / graded.max(1) as f64;
    let (grader, alone) = (spread(grade_s), spread(alone_s));
    let (own, own_cpu) = (spread(own_s), spread(own_cpu));
    let per_record = us(grader.median);
    eprintln!("bench: the grader on the scale tier");
    let scale = scale_grading(&tree, &bin, &scratch, runs)?;
    writeln!(md, "\n## Fill and grading\n").ok();
    writeln!(
        md,
        "- Per-operator vectors filled: oracle {:.0} records/s, checker {:.0} records/s.",
        vectors_rate.0, vectors_rate.1
    )
    .ok();
    writeln!(md, "- The grader's overhead, against `cat` as the implementation (every record answered at once, and failed): {per_record:.1} µs per record over {graded} records ({}; before the grader's runs were pipelined and waited on without polling, {GRADER_BEFORE_US} µs).", seconds(&grader)).ok();
    writeln!(md, "- Of which `cat`'s own: the same {} runs of `sh -c cat`, one per file on its requests, started and read as the grader does with nothing graded: {:.1} µs per record ({}).", requests.len(), us(alone.median), seconds(&alone)).ok();
    writeln!(md, "- The grader's own cost, the difference (median over {} pairs of runs, each pair close in time): {:.1} µs per record [{:.1}–{:.1}]; its process's CPU time beyond running `cat` (all its threads): {:.1} µs per record [{:.1}–{:.1}].", pairs(runs), us(own.median), us(own.min), us(own.max), us(own_cpu.median), us(own_cpu.min), us(own_cpu.max)).ok();
    writeln!(
        md,
        "- Target: the grader's own cost at most 100 µs per record: {} ({:.1} µs).",
        if us(own.median) <= 100.0 { "met" } else { "not met" },
        us(own.median)
    )
    .ok();
    writeln!(md, "\nThe scale tier graded (`--role all --suite scale --only FILE`), in MB/s of answers compared (the checker's lines, written out): `wai-checker fill` alone on the written-out requests; the grader alone (the same answers replayed by a Python script that writes each answer once it has read its request, while the grader writes out the requests and folds and compares every answer); and the grade of `wai-checker fill`, the two together:\n").ok();
    writeln!(
        md,
        "| file | answers | the checker alone | the grader alone | graded together | grader / checker |\n|---|---|---|---|---|---|"
    )
    .ok();
    let rate = |bytes: u64, s: &Spread| bytes as f64 / s.median / 1e6;
    for t in &scale {
        writeln!(
            md,
            "| {} | {:.1} MB | {:.0} MB/s ({}) | {:.0} MB/s ({}) | {:.0} MB/s ({}) | {:.1}× |",
            t.file,
            t.bytes as f64 / 1e6,
            rate(t.bytes, &t.checker),
            seconds(&t.checker),
            rate(t.bytes, &t.grader),
            seconds(&t.grader),
            rate(t.bytes, &t.both),
            seconds(&t.both),
            t.checker.median / t.grader.median
        )
        .ok();
    }
    let slowest = scale
        .iter()
        .map(|t| t.checker.median / t.grader.median)
        .fold(f64::INFINITY, f64::min);
    writeln!(
        md,
        "\n- Target: on the scale tier the grader is never the bottleneck, comparing answers faster than the implementation writes them: {} (the grader at least {slowest:.1}× the checker's MB/s on every file).",
        if slowest > 1.0 { "met" } else { "not met" }
    )
    .ok();

    // 4. CIS-2.
    eprintln!("bench: CIS-2");
    let bench = root.join("target/bench");
    if !bench.join("smollm2-shaped/model.safetensors").exists()
        || !bench.join("small-shaped/model.safetensors").exists()
    {
        run(
            Command::new(bin.join("wai-generate"))
                .current_dir(root)
                .args(["cis2-models", "--recipe", "corpus/cis2/bench.json", "--out"])
                .arg(&bench),
            "wai-generate cis2-models",
        )?;
    }
    let large = bench.join("smollm2-shaped");
    let weight_bytes = std::fs::metadata(large.join("model.safetensors"))
        .map_err(|e| e.to_string())?
        .len()
        * 2;
    let mut fast = Vec::new();
    let mut receipt = String::new();
    for _ in 0..runs.div_ceil(2) {
        let (times, r) = cis2_runs(&bin, &large, &[])?;
        fast.extend(times);
        receipt = r;
    }
    let fast = spread(fast);
    let (load, _) = cis2_runs(&bin, &large, &["--prompt", "a", "--gen-toks", "0"])?;
    let load = spread(load);
    let prompt_toks: f64 = receipt
        .split_whitespace()
        .find_map(|w| w.strip_prefix("prompt_toks="))
        .and_then(|n| n.parse().ok())
        .unwrap_or(0.0);
    let positions = prompt_toks + 16.0 - 1.0;
    let out = Command::new(bin.join("membw"))
        .arg(weight_bytes.to_string())
        .output()
        .map_err(|e| e.to_string())?;
    let stream: f64 = String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0.0);
    let bound = positions * stream;
    let decode = fast.median - load.median;
    writeln!(md, "\n## CIS-2\n").ok();
    writeln!(md, "SmolLM2-135M's shape (`corpus/cis2/bench.json`, seeded weights, {:.0} MB of f32), a {prompt_toks:.0}-token prompt and 16 greedy tokens: {positions:.0} forward passes.\n", weight_bytes as f64 / 1e6).ok();
    writeln!(md, "| figure | time |\n|---|---|").ok();
    writeln!(
        md,
        "| fast path, one run (load, widen, tokenize, decode) | {} |",
        seconds(&fast)
    )
    .ok();
    writeln!(
        md,
        "| load and one position (`--prompt a --gen-toks 0`) | {} |",
        seconds(&load)
    )
    .ok();
    writeln!(md, "| the decode alone (the difference) | {decode:.3} s |").ok();
    writeln!(
        md,
        "| streaming the f32 weights once (this machine's threads) | {stream:.4} s ({:.1} GB/s) |",
        weight_bytes as f64 / stream / 1e9
    )
    .ok();
    writeln!(
        md,
        "| the memory-streaming bound, once per forward pass | {bound:.3} s |"
    )
    .ok();
    writeln!(md, "| decode / bound | {:.2}× |", decode / bound).ok();
    let small = bench.join("small-shaped");
    let (small_fast, _) = cis2_runs(&bin, &small, &[])?;
    let (small_exact, _) = cis2_runs(&bin, &small, &["--exact"])?;
    let (sf, se) = (spread(small_fast), spread(small_exact));
    writeln!(md, "\nThe exact software binary32 on the smaller checkpoint (`small-shaped`), both paths giving the same receipt:\n").ok();
    writeln!(
        md,
        "| path | one run |\n|---|---|\n| fast | {} |\n| exact | {} |\n| exact / fast | {:.1}× |",
        seconds(&sf),
        seconds(&se),
        se.median / sf.median
    )
    .ok();

    writeln!(md, "\n## Against the targets\n").ok();
    writeln!(
        md,
        "- `check --tier small` under 60 s: {:.1} s; `regen --tier small` under 60 s: {:.1} s.",
        check.median, regen.median
    )
    .ok();
    writeln!(
        md,
        "- The whole gate, scale tier included, within 10 minutes: {:.1} s.",
        check_all.median
    )
    .ok();
    writeln!(md, "- The checker certifies at least 10^8 weights per second on the largest set: {largest_checker_rate:.2e}/s (the process's start and its output included).").ok();
    writeln!(
        md,
        "- The CIS-2 fast path within 2× of the memory-streaming bound: {:.2}×.",
        decode / bound
    )
    .ok();
    writeln!(
        md,
        "- The exact path at most 30× slower than the fast path: {:.1}×.",
        se.median / sf.median
    )
    .ok();
    writeln!(md, "\nThe whole run took {:.0} s.", started.elapsed().as_secs_f64()).ok();
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::write(root.join("docs/bench.md"), &md).map_err(|e| format!("docs/bench.md: {e}"))?;
    print!("{md}");
    Ok(())
}
