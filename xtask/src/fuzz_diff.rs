//! `cargo xtask fuzz-diff [--cases N] [--start S]`: `N` random graphs (seeds `S..S+N`) through
//! the oracle and the checker. Every disagreement is printed and appended to
//! `corpus/graphs/fuzz_regressions.json` as a case, so that it becomes a committed vector.

use serde_json::{Value, json};
use std::path::Path;
use std::time::Instant;
use xtask::differential;

pub fn run(root: &Path, cases: u64, start: u64) -> Result<(), String> {
    let t = Instant::now();
    let mut total = differential::Stats::default();
    let mut found = Vec::new();
    // In chunks, so that a long run reports as it goes.
    let chunk = 100_000;
    let mut next = start;
    while next < start + cases {
        let end = (next + chunk).min(start + cases);
        let (s, d) = differential::run(next..end);
        total.requests += s.requests;
        total.loads_ok += s.loads_ok;
        total.decodes += s.decodes;
        total.refused_decodes += s.refused_decodes;
        total.certificates += s.certificates;
        found.extend(d);
        eprintln!(
            "fuzz-diff: seeds {next}..{end}: {} disagreements so far ({:.0} s)",
            found.len(),
            t.elapsed().as_secs_f64()
        );
        next = end;
    }
    println!(
        "fuzz-diff: {} requests ({} loaded, {} decodes of which {} refused, {} certificates) in {:.0} s; {} disagreements",
        total.requests,
        total.loads_ok,
        total.decodes,
        total.refused_decodes,
        total.certificates,
        t.elapsed().as_secs_f64(),
        found.len()
    );
    if found.is_empty() {
        return Ok(());
    }
    for d in &found {
        println!("seed {}: {}", d.seed, d.what);
    }
    record(root, &found)?;
    Err(format!(
        "{} disagreements, written to corpus/graphs/fuzz_regressions.json",
        found.len()
    ))
}

/// Appends each disagreement to the regression corpus: the graph as bytes, the decodes as given.
fn record(root: &Path, found: &[differential::Disagreement]) -> Result<(), String> {
    let path = root.join("corpus/graphs/fuzz_regressions.json");
    let mut file: Value = match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?,
        Err(_) => {
            json!({ "about": "Requests on which the oracle and the checker once disagreed (cargo xtask fuzz-diff).", "cases": [] })
        }
    };
    let cases = file["cases"]
        .as_array_mut()
        .ok_or("fuzz_regressions.json has no cases")?;
    for d in found {
        let req: Value = serde_json::from_str(&d.request).map_err(|e| e.to_string())?;
        cases.push(json!({
            "id": format!("fuzz-seed-{}", d.seed),
            "about": d.what.lines().next().unwrap_or_default(),
            "graph": { "hex": req["graph"] },
            "decodes": req["decodes"],
        }));
    }
    let text = serde_json::to_string_pretty(&file).map_err(|e| e.to_string())?;
    wai_oracle::files::write(&path, (text + "\n").as_bytes()).map_err(|e| format!("{}: {e}", path.display()))
}
