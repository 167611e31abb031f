//! `wai-checker`: an independent recomputation of the committed tree, written from the spec text
//! alone. It never depends on the oracle crate.
//!
//! ```text
//! wai-checker fill [--in FILE] [--out FILE]
//! wai-checker certify [--capability NAME] [--lowering ID] [--set-sha256 HEX] G.whg1...
//! ```

use std::io::{Read, Write};
use std::path::Path;
use std::process::ExitCode;
use wai_checker::{certify, fill};

fn usage() -> ExitCode {
    eprintln!(
        "usage: wai-checker fill [--in FILE] [--out FILE]\n       \
         wai-checker certify [--capability NAME] [--lowering ID] [--set-sha256 HEX] G.whg1..."
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

fn run_fill(args: &[String]) -> ExitCode {
    let Some((opts, pos)) = options(args, &["in", "out"]) else {
        return usage();
    };
    if !pos.is_empty() {
        return usage();
    }
    let mut input = Vec::new();
    let read = match opt(&opts, "in") {
        Some(path) => std::fs::read(path).map(|s| input = s),
        None => std::io::stdin().read_to_end(&mut input).map(|_| ()),
    };
    if let Err(e) = read {
        eprintln!("wai-checker: fill: cannot read the requests: {e}");
        return ExitCode::from(2);
    }
    let mut out = String::new();
    let bad = fill::fill(&input, &mut out, &mut |m| eprintln!("{m}"));
    let written = match opt(&opts, "out") {
        Some(path) => std::fs::write(path, out.as_bytes()),
        None => std::io::stdout().lock().write_all(out.as_bytes()),
    };
    if let Err(e) = written {
        eprintln!("wai-checker: fill: cannot write: {e}");
        return ExitCode::from(2);
    }
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

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("fill") => run_fill(&args[1..]),
        Some("certify") => run_certify(&args[1..]),
        _ => usage(),
    }
}
