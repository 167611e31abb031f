//! `wai-checker`: an independent recomputation of the committed tree, written from the spec text
//! alone. It never depends on the oracle crate.
//!
//! ```text
//! wai-checker fill [--in FILE] [--out FILE] [--tree DIR]
//! wai-checker dequant fill [--in FILE] [--out FILE]
//! wai-checker certify [--capability NAME] [--lowering ID] [--set-sha256 HEX] G.whg1...
//! wai-checker cis2 --model-dir DIR [--prompt P] [--gen-toks N] [--tininess after|before] [--unpinned]
//! wai-checker lower --lowering ID [--capability C] [--claim P] --out DIR FILES...
//! wai-checker admissible --profile acc32|acc64 --tensor N G.whg1
//! ```
//!
//! `cis2` prints the receipt on stdout, and on stderr what opening the model and each of the two
//! decodes took and the process's peak resident memory. `--unpinned` skips §2.1's hash check, for a
//! model other than the pinned one (`cargo xtask bench`'s seeded checkpoint).
//!
//! `admissible` prints tensor `N`'s admissible range (§8.4) as `[lo, hi]`, or `none: …` when `C(0)`
//! fails (docs/protocol.md); exit 1 when the graph is refused at load or has no tensor `N`.
//!
//! `lower` writes each lowered graph as `DIR/<role>.whg1` and the certificate as
//! `DIR/certificate.json` (docs/protocol.md, *Lowerings*), whatever of them the set reaches, and
//! prints the load outcome (`ok` or the capability's code). Exit 0 when the set loads, 1 when it is
//! refused, 2 on a usage or file error. `--capability` defaults to the lowering's one capability
//! (`whm1/1` lowers three, and requires it). For `jpegai-int/1` the files are found by their names
//! (`norm.json`, `hs_y.json`, `hs_uv.json`, docs/assumptions.md L7).
//!
//! `dequant fill` fills DetessDequant records only; it checks the floating-point environment first
//! and refuses to run (exit 2) when it is not the one the contract needs.

use std::io::{BufRead, Write};
use std::path::Path;
use std::process::ExitCode;
use wai_checker::bounds::Profile;
use wai_checker::bounds::admissible::admissible;
use wai_checker::lower::{self, Lowering};
use wai_checker::{certify, cis2, dequant, fill};

fn usage() -> ExitCode {
    eprintln!(
        "usage: wai-checker fill [--in FILE] [--out FILE] [--tree DIR]\n       \
         wai-checker dequant fill [--in FILE] [--out FILE]\n       \
         wai-checker cis2 --model-dir DIR [--prompt P] [--gen-toks N] [--tininess after|before] [--unpinned]\n       \
         wai-checker certify [--capability NAME] [--lowering ID] [--set-sha256 HEX] G.whg1...\n       \
         wai-checker lower --lowering ID [--capability C] [--claim P] --out DIR FILES...\n       \
         wai-checker admissible --profile acc32|acc64 --tensor N G.whg1"
    );
    ExitCode::from(2)
}

/// `--name value` pairs, in the order given.
type Opts = Vec<(String, String)>;

/// Splits `--name value` options from positional arguments; `None` on an unknown or valueless option.
fn options(args: &[String], known: &[&str]) -> Option<(Opts, Vec<String>)> {
    let mut opts = Vec::new();
    let mut pos = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if let Some(name) = a.strip_prefix("--") {
            let (name, value) = match name.split_once('=') {
                Some((n, v)) => (n.to_string(), v.to_string()),
                None => (name.to_string(), it.next()?.clone()),
            };
            if !known.contains(&name.as_str()) {
                return None;
            }
            opts.push((name, value));
        } else {
            pos.push(a.clone());
        }
    }
    Some((opts, pos))
}

fn opt<'a>(opts: &'a [(String, String)], name: &str) -> Option<&'a str> {
    opts.iter().rev().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
}

/// The filler a fill command streams its input through.
type Filler = fn(&mut dyn BufRead, &mut dyn Write, &mut dyn FnMut(String)) -> std::io::Result<usize>;

fn run_fill(args: &[String]) -> ExitCode {
    let Some((opts, pos)) = options(args, &["in", "out", "tree"]) else {
        return usage();
    };
    if !pos.is_empty() {
        return usage();
    }
    // CIS-2 decode records name model folders relative to --tree (docs/protocol.md).
    cis2::fill::set_tree(opt(&opts, "tree").map(std::path::PathBuf::from));
    fill_with(&opts, fill::fill_stream)
}

/// `dequant fill`: DetessDequant records only, after the environment check.
fn run_dequant(args: &[String]) -> ExitCode {
    if args.first().map(String::as_str) != Some("fill") {
        return usage();
    }
    let Some((opts, pos)) = options(&args[1..], &["in", "out"]) else {
        return usage();
    };
    if !pos.is_empty() {
        return usage();
    }
    if let Err(e) = dequant::env::check() {
        eprintln!("wai-checker: dequant fill: {e}");
        return ExitCode::from(2);
    }
    fill_with(&opts, dequant::fill::fill_stream)
}

/// Writes `path` whole or not at all: `write` fills a temporary file beside it, which then takes
/// its place (a run killed midway leaves the old file).
fn write_whole<T>(path: &Path, write: impl FnOnce(&mut dyn Write) -> std::io::Result<T>) -> std::io::Result<T> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let fail = |e: std::io::Error| std::io::Error::new(e.kind(), format!("{}: {e}", path.display()));
    let mut file = std::io::BufWriter::new(tempfile::NamedTempFile::new_in(dir).map_err(fail)?);
    let made = write(&mut file).map_err(fail)?;
    let file = file.into_inner().map_err(|e| fail(e.into_error()))?;
    std::fs::set_permissions(file.path(), std::os::unix::fs::PermissionsExt::from_mode(0o644)).map_err(fail)?;
    file.persist(path).map_err(|e| fail(e.error))?;
    Ok(made)
}

fn fill_with(opts: &[(String, String)], filler: Filler) -> ExitCode {
    let mut input: Box<dyn BufRead> = match opt(opts, "in") {
        Some(path) => match std::fs::File::open(path) {
            Ok(f) => Box::new(std::io::BufReader::new(f)),
            Err(e) => {
                eprintln!("wai-checker: fill: cannot read the requests: {path}: {e}");
                return ExitCode::from(2);
            }
        },
        None => Box::new(std::io::stdin().lock()),
    };
    let report = &mut |m: String| eprintln!("{m}");
    let filled = match opt(opts, "out") {
        Some(path) => write_whole(Path::new(path), |out| filler(&mut input, out, report)),
        None => filler(
            &mut input,
            &mut std::io::BufWriter::new(std::io::stdout().lock()),
            report,
        ),
    };
    let bad = match filled {
        Ok(bad) => bad,
        Err(e) => {
            eprintln!("wai-checker: fill: {e}");
            return ExitCode::from(2);
        }
    };
    if bad > 0 {
        eprintln!("wai-checker: fill: {bad} bad lines");
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

fn run_certify(args: &[String]) -> ExitCode {
    let Some((opts, files)) = options(args, &["capability", "lowering", "set-sha256"]) else {
        return usage();
    };
    if files.is_empty() {
        return usage();
    }
    let mut graphs = Vec::with_capacity(files.len());
    for f in &files {
        let bytes = match std::fs::read(f) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("wai-checker: certify: {f}: {e}");
                return ExitCode::from(2);
            }
        };
        let name = Path::new(f)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        graphs.push(certify::Input { name, bytes });
    }
    let capability = opt(&opts, "capability");
    let lowering = opt(&opts, "lowering").unwrap_or("whg1");
    let set = opt(&opts, "set-sha256");
    for (what, v) in [("capability", capability), ("lowering", Some(lowering))] {
        if let Some(v) = v
            && !wai_checker::canon::printable(v)
        {
            eprintln!("wai-checker: certify: --{what} is not printable ASCII");
            return ExitCode::from(2);
        }
    }
    if let Some(s) = set
        && !(s.len() == 64 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)))
    {
        eprintln!("wai-checker: certify: --set-sha256 is not 64 lowercase hexadecimal digits");
        return ExitCode::from(2);
    }
    match certify::certify(&graphs, capability, lowering, set) {
        Ok(bytes) => {
            if std::io::stdout().lock().write_all(bytes.as_bytes()).is_err() {
                return ExitCode::from(2);
            }
            ExitCode::SUCCESS
        }
        Err((i, m)) => {
            eprintln!("wai-checker: certify: {}: {m}", files[i]);
            ExitCode::from(1)
        }
    }
}

fn run_lower(args: &[String]) -> ExitCode {
    let Some((opts, files)) = options(args, &["lowering", "capability", "claim", "out"]) else {
        return usage();
    };
    let (Some(id), Some(out)) = (opt(&opts, "lowering"), opt(&opts, "out")) else {
        return usage();
    };
    if files.is_empty() {
        return usage();
    }
    let Some(lowering) = Lowering::parse(id) else {
        eprintln!("wai-checker: lower: --lowering {id:?} is not a lowering of §13");
        return ExitCode::from(2);
    };
    let capability = match (opt(&opts, "capability"), lowering.capabilities()) {
        (Some(c), _) => c,
        (None, [only]) => only,
        (None, _) => {
            eprintln!("wai-checker: lower: {id} lowers several capabilities: give --capability");
            return ExitCode::from(2);
        }
    };
    let claim = match opt(&opts, "claim") {
        None => None,
        Some("acc32") => Some(Profile::Acc32),
        Some("acc64") => Some(Profile::Acc64),
        Some(p) => {
            eprintln!("wai-checker: lower: --claim {p:?} is not acc32 or acc64");
            return ExitCode::from(2);
        }
    };
    let mut set = Vec::with_capacity(files.len());
    for f in &files {
        match std::fs::read(f) {
            Ok(bytes) => set.push(lower::File {
                name: f.replace('\\', "/"),
                bytes,
            }),
            Err(e) => {
                eprintln!("wai-checker: lower: {f}: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let outcome = match lower::run(lowering, capability, claim, &set) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("wai-checker: lower: {e}");
            return ExitCode::from(2);
        }
    };
    let dir = Path::new(out);
    if let Err(e) = std::fs::create_dir_all(dir) {
        eprintln!("wai-checker: lower: {out}: {e}");
        return ExitCode::from(2);
    }
    let mut written: Vec<(String, &[u8])> = outcome
        .graphs
        .iter()
        .map(|(role, b)| (format!("{role}.whg1"), b.as_slice()))
        .collect();
    if let Some(c) = &outcome.certificate {
        written.push(("certificate.json".into(), c.as_bytes()));
    }
    for (name, bytes) in written {
        if let Err(e) = write_whole(&dir.join(&name), |f| f.write_all(bytes)) {
            eprintln!("wai-checker: lower: {name}: {e}");
            return ExitCode::from(2);
        }
    }
    match outcome.refused {
        None => {
            println!("ok");
            ExitCode::SUCCESS
        }
        Some(code) => {
            println!("{code}");
            eprintln!("wai-checker: lower: refused: {}", outcome.why);
            ExitCode::from(1)
        }
    }
}

/// `admissible`: the admissible range of one tensor of one graph (§8.4). Exit 0 with the range or
/// `none: …`, 1 when the graph is refused or unreadable or has no such tensor, 2 on a usage error.
fn run_admissible(args: &[String]) -> ExitCode {
    let Some((opts, files)) = options(args, &["profile", "tensor"]) else {
        return usage();
    };
    let ([file], Some(p), Some(n)) = (files.as_slice(), opt(&opts, "profile"), opt(&opts, "tensor")) else {
        return usage();
    };
    let profile = match p {
        "acc32" => Profile::Acc32,
        "acc64" => Profile::Acc64,
        _ => {
            eprintln!("wai-checker: admissible: --profile {p:?} is not acc32 or acc64");
            return ExitCode::from(2);
        }
    };
    let Ok(tensor) = n.parse::<usize>() else {
        eprintln!("wai-checker: admissible: --tensor {n:?} is not a tensor index");
        return ExitCode::from(2);
    };
    let bytes = match std::fs::read(file) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("wai-checker: {file}: {e}");
            return ExitCode::from(1);
        }
    };
    let checked = match wai_checker::whg1::load::check(&bytes) {
        Ok(c) => c,
        Err(code) => {
            eprintln!("wai-checker: {file}: refused at load: {}", code.name());
            return ExitCode::from(1);
        }
    };
    if tensor >= checked.graph.tensors.len() {
        eprintln!("wai-checker: {file}: tensor {tensor} does not exist");
        return ExitCode::from(1);
    }
    let shapes = checked.shapes.as_deref();
    match admissible(&checked.graph, shapes, &checked.pass, tensor, profile) {
        Some((lo, hi)) => println!("[{lo}, {hi}]"),
        None => println!(
            "none: no value of tensor {tensor} lets its consumers meet {}",
            profile.name()
        ),
    }
    ExitCode::SUCCESS
}

/// `cis2`: the pinned decode's receipt (CIS-2 §2.1, §12.4, §13.1). Exit 0 with the receipt, 1 on a
/// hash mismatch, a refusal or a failed check, 2 on a usage error.
fn run_cis2(args: &[String]) -> ExitCode {
    use cis2::vector::{self, Tininess};
    // `--unpinned`, the one option without a value.
    let unpinned = args.iter().any(|a| a == "--unpinned");
    let args: Vec<String> = args.iter().filter(|a| *a != "--unpinned").cloned().collect();
    let Some((opts, pos)) = options(&args, &["model-dir", "prompt", "gen-toks", "tininess"]) else {
        return usage();
    };
    let Some(dir) = opt(&opts, "model-dir") else {
        return usage();
    };
    if !pos.is_empty() {
        return usage();
    }
    let prompt = opt(&opts, "prompt").unwrap_or(vector::PINNED_PROMPT);
    let gen_toks = match opt(&opts, "gen-toks").map(str::parse::<u128>) {
        None => u128::from(vector::PINNED_GEN_TOKS),
        Some(Ok(n)) => n,
        Some(Err(_)) => {
            eprintln!("wai-checker: cis2: --gen-toks is not a non-negative integer");
            return ExitCode::from(2);
        }
    };
    let rule = match opt(&opts, "tininess") {
        None => Tininess::host(),
        Some("after") => Tininess::After,
        Some("before") => Tininess::Before,
        Some(t) => {
            eprintln!("wai-checker: cis2: --tininess {t:?} is not after (x86-64) or before (aarch64)");
            return ExitCode::from(2);
        }
    };
    match vector::receipt_timed(Path::new(dir), prompt, gen_toks, rule, !unpinned) {
        Ok((lines, t)) => {
            print!("{lines}");
            let rss = vector::peak_rss().map_or("unknown".to_string(), |b| format!("{b} bytes"));
            eprintln!(
                "wai-checker: cis2: open {:.3} s, decodes {:.3} s {:.3} s, peak RSS {rss}",
                t.open, t.decodes[0], t.decodes[1]
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("wai-checker: cis2: {e}");
            ExitCode::from(1)
        }
    }
}

pub fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("fill") => run_fill(&args[1..]),
        Some("dequant") => run_dequant(&args[1..]),
        Some("certify") => run_certify(&args[1..]),
        Some("cis2") => run_cis2(&args[1..]),
        Some("lower") => run_lower(&args[1..]),
        Some("admissible") => run_admissible(&args[1..]),
        _ => usage(),
    }
}
