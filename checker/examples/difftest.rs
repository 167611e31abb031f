//! Differential run: random requests (`wai_checker_testgen::random`) through another
//! `fill`/`certify` (such as the oracle binary) and through this checker, compared byte for byte.
//!
//! ```text
//! cargo run --release -p wai-checker --example difftest -- OTHER [FIRST_SEED] [COUNT] [OUT_DIR]
//! ```

use std::path::PathBuf;
use wai_checker_testgen::differential;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(other) = args.first() else {
        eprintln!("usage: difftest OTHER [FIRST_SEED] [COUNT] [OUT_DIR]");
        std::process::exit(2);
    };
    let first: u64 = args.get(1).map_or(0, |s| s.parse().expect("a seed"));
    let count: u64 = args.get(2).map_or(200, |s| s.parse().expect("a count"));
    let dir = args
        .get(3)
        .map_or_else(|| std::env::temp_dir().join("wai-difftest"), PathBuf::from);
    let r = differential::run(other.as_ref(), first..first + count, &dir).expect("the run");
    for d in &r.differences {
        println!("{d}");
    }
    println!(
        "{} requests from seed {first}: {} differ; {} load ok, {} decodes ({} refused); {} certificates",
        r.requests,
        r.differences.len(),
        r.loads_ok,
        r.decodes,
        r.refused_decodes,
        r.certificates
    );
    if !r.differences.is_empty() {
        std::process::exit(1);
    }
}
