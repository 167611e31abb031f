//! `wai-oracle`: the oracle's command line.

use clap::{Parser, Subcommand};
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use wai_oracle::bounds::{Certified, admissible::admissible, certificate, profile::Profile};
use wai_oracle::files::{self, Pending};
use wai_oracle::whg1;

#[derive(Parser)]
#[command(name = "wai-oracle", about = "The wai-ops/1 conformance oracle", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum DequantCommand {
    /// Fill DetessDequant request lines (docs/protocol.md, DetessDequant).
    Fill {
        #[arg(long = "in")]
        input: Option<PathBuf>,
        #[arg(long = "out")]
        output: Option<PathBuf>,
    },
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
        /// The tree CIS-2 decode records' `model` paths are relative to.
        #[arg(long)]
        tree: Option<PathBuf>,
    },
    /// Write scale records (docs/protocol.md, the scale tier) with every recipe written out and
    /// every output in full, for consumers without the grader.
    Expand {
        /// Read records from this file instead of stdin.
        #[arg(long = "in")]
        input: Option<PathBuf>,
        /// Write the expanded lines to this file instead of stdout.
        #[arg(long = "out")]
        output: Option<PathBuf>,
    },
    /// Write the bounds certificate (§8.5) of WHG1 graphs, in the order given, to stdout.
    Certify {
        /// The capability the set is certified for (null when absent).
        #[arg(long)]
        capability: Option<String>,
        /// The §13 lowering identifier.
        #[arg(long, default_value = "whg1")]
        lowering: String,
        /// The digest a pin over the set carries (null when absent).
        #[arg(long = "set-sha256")]
        set_sha256: Option<String>,
        /// The graphs; each one's role is its file's stem.
        #[arg(required = true)]
        graphs: Vec<PathBuf>,
    },
    /// DetessDequant: `dequant fill` fills numeric and call records (as `fill` does).
    Dequant {
        #[command(subcommand)]
        command: DequantCommand,
    },
    /// Run the CIS-2 pinned decode (cis2-spec-v0.3b §13.1) on SmolLM2-135M's files, checked
    /// against §2.1's hashes, and print the receipt (§12).
    Cis2 {
        /// The folder holding model.safetensors, config.json and tokenizer.json.
        #[arg(long = "model-dir")]
        model_dir: PathBuf,
        #[arg(long, default_value = wai_oracle::cis2::vector::PROMPT)]
        prompt: String,
        #[arg(long = "gen-toks", default_value_t = wai_oracle::cis2::vector::GEN_TOKS)]
        gen_toks: usize,
        /// Use the exact software binary32 instead of the pinned hardware (slow).
        #[arg(long)]
        exact: bool,
        /// Run on files other than §2.1's (no hash check; for benchmarks and other checkpoints).
        #[arg(long)]
        unpinned: bool,
    },
    /// Lower a parameter set (§13), certify it, and write the lowered graphs (`<role>.whg1`) and
    /// the certificate (`certificate.json`) into a folder.
    Lower {
        /// The §13 lowering identifier: int_synth/1, whm1/1, wam1/1, wmb1/1 or world/1.
        #[arg(long)]
        lowering: String,
        /// The capability (defaults to the one §13.0 gives the lowering).
        #[arg(long)]
        capability: Option<String>,
        /// The profile a pin over the set claims (acc32 or acc64).
        #[arg(long)]
        claim: Option<String>,
        /// The folder to write into (created if needed).
        #[arg(long)]
        out: PathBuf,
        /// The set's files.
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// Print the admissible range (§8.4) of one tensor of a graph for a profile.
    Admissible {
        #[arg(long)]
        profile: String,
        #[arg(long)]
        tensor: u32,
        graph: PathBuf,
    },
}

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Command::Fill { input, output, tree } => fill(input, output, |line| {
            wai_oracle::fill::fill_line_in(line, tree.as_deref())
        }),
        Command::Expand { input, output } => fill(input, output, wai_oracle::fill::expand_line),
        Command::Certify {
            capability,
            lowering,
            set_sha256,
            graphs,
        } => certify(capability, lowering, set_sha256, &graphs),
        Command::Admissible { profile, tensor, graph } => admissible_range(&profile, tensor, &graph),
        Command::Dequant {
            command: DequantCommand::Fill { input, output },
        } => fill(input, output, wai_oracle::fill::fill_line),
        Command::Cis2 {
            model_dir,
            prompt,
            gen_toks,
            exact,
            unpinned,
        } => cis2(&model_dir, &prompt, gen_toks, exact, unpinned),
        Command::Lower {
            lowering,
            capability,
            claim,
            out,
            files,
        } => lower(&lowering, capability, claim, &out, &files),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("wai-oracle: {e}");
            ExitCode::FAILURE
        }
    }
}

fn cis2(dir: &Path, prompt: &str, gen_toks: usize, exact: bool, unpinned: bool) -> Result<(), String> {
    use wai_oracle::cis2::vector;
    let files = if unpinned {
        eprintln!("cis2: --unpinned: the files are not checked against §2.1; this is not the pinned vector");
        vector::read(dir)?
    } else {
        vector::read_verified(dir)?
    };
    let (receipt, times) = vector::run(&files, prompt, gen_toks, exact)?;
    eprintln!(
        "cis2: {} path: the two runs (§12.4) took {:.2} s and {:.2} s (weights widened, tokenized, decoded)",
        if exact { "exact" } else { "fast" },
        times[0].as_secs_f64(),
        times[1].as_secs_f64()
    );
    if let Some(peak) = peak_resident_kb() {
        eprintln!("cis2: peak resident memory {peak} kB");
    }
    print!("{}", vector::receipt(&receipt, prompt));
    Ok(())
}

/// The process's peak resident set (Linux's `VmHWM`), for the benchmark; none elsewhere.
fn peak_resident_kb() -> Option<u64> {
    std::fs::read_to_string("/proc/self/status")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}

/// Each line of `input` through `each` into `output`; a bad line is reported and skipped.
fn fill(
    input: Option<PathBuf>,
    output: Option<PathBuf>,
    each: impl Fn(&str) -> Result<String, String>,
) -> Result<(), String> {
    let reader: Box<dyn io::BufRead> = match &input {
        Some(p) => Box::new(BufReader::new(
            File::open(p).map_err(|e| format!("{}: {e}", p.display()))?,
        )),
        None => Box::new(io::stdin().lock()),
    };
    let bad = match &output {
        Some(p) => {
            let fail = |e: io::Error| format!("{}: {e}", p.display());
            let mut file = Pending::create(p).map_err(fail)?;
            let bad = wai_oracle::fill::stream(reader, &mut file, io::stderr().lock(), each).map_err(fail)?;
            file.commit().map_err(fail)?;
            bad
        }
        None => wai_oracle::fill::stream(reader, BufWriter::new(io::stdout().lock()), io::stderr().lock(), each)
            .map_err(|e| e.to_string())?,
    };
    match bad {
        0 => Ok(()),
        bad => Err(format!("fill: {bad} bad lines")),
    }
}

/// Reads a graph file and makes load steps 1–7 and the bounds pass.
fn certified(path: &Path) -> Result<Certified, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let name = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default()
        .to_string();
    let loaded = whg1::load(&bytes).map_err(|r| format!("{}: refused at load: {r}", path.display()))?;
    Certified::new(&name, bytes, loaded.graph)
        .map_err(|r| format!("{}: refused by the bounds pass: {r}", path.display()))
}

fn printable(what: &str, s: &str) -> Result<(), String> {
    if s.bytes().all(|b| (0x20..=0x7e).contains(&b)) {
        Ok(())
    } else {
        Err(format!(
            "{what} {s:?} holds a character outside printable ASCII and cannot be certified"
        ))
    }
}

fn certify(
    capability: Option<String>,
    lowering: String,
    set_sha256: Option<String>,
    paths: &[PathBuf],
) -> Result<(), String> {
    if let Some(d) = &set_sha256
        && !(d.len() == 64 && d.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
    {
        return Err(format!("--set-sha256 {d:?} is not 64 lowercase hexadecimal digits"));
    }
    let graphs = paths.iter().map(|p| certified(p)).collect::<Result<Vec<_>, _>>()?;
    for g in &graphs {
        printable("the role", &g.name)?;
    }
    if let Some(c) = &capability {
        printable("the capability", c)?;
    }
    printable("the lowering", &lowering)?;
    let header = certificate::Header {
        capability,
        lowering,
        set_sha256,
    };
    io::stdout()
        .lock()
        .write_all(&certificate::bytes(&graphs, &header))
        .map_err(|e| e.to_string())
}

fn admissible_range(profile: &str, tensor: u32, path: &Path) -> Result<(), String> {
    let profile = Profile::parse(profile).ok_or_else(|| format!("--profile {profile:?} is neither acc32 nor acc64"))?;
    let c = certified(path)?;
    if tensor as usize >= c.graph.tensors.len() {
        return Err(format!("{}: tensor {tensor} does not exist", path.display()));
    }
    match admissible(&c.graph, &c.pass, tensor, profile) {
        Some((lo, hi)) => println!("[{lo}, {hi}]"),
        None => println!(
            "none: no value of tensor {tensor} lets its consumers meet {}",
            profile.name()
        ),
    }
    Ok(())
}

fn lower(
    lowering: &str,
    capability: Option<String>,
    claim: Option<String>,
    out: &Path,
    paths: &[PathBuf],
) -> Result<(), String> {
    use wai_oracle::fill::lowering;
    if !wai_oracle::lower::LOWERINGS.contains(&lowering) {
        return Err(format!(
            "--lowering {lowering:?} is not one of {:?}",
            wai_oracle::lower::LOWERINGS
        ));
    }
    let claim = claim
        .map(|c| Profile::parse(&c).ok_or_else(|| format!("--claim {c:?} is neither acc32 nor acc64")))
        .transpose()?;
    let capability = capability.unwrap_or_else(|| lowering::capability_of(lowering).to_string());
    printable("the capability", &capability)?;
    let files = paths
        .iter()
        .map(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
            std::fs::read(p)
                .map(|b| (name, b))
                .map_err(|e| format!("{}: {e}", p.display()))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let outcome = lowering::run(lowering, &capability, &files, claim);
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))?;
    for (role, bytes) in &outcome.graphs {
        let path = out.join(format!("{role}.whg1"));
        files::write(&path, bytes).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    if let Some(cert) = &outcome.certificate {
        let path = out.join("certificate.json");
        files::write(&path, cert).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    match outcome.load {
        Ok(()) => {
            println!("load: ok");
            Ok(())
        }
        Err(r) => Err(format!("load: refused, {r}")),
    }
}
