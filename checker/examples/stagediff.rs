//! Differential run of stage-operator vectors: seeded requests (`wai_checker_testgen::stage`), or
//! the request lines of a file, through another `fill` (such as the oracle binary) and through this
//! checker, compared byte for byte.
//!
//! ```text
//! cargo run --release -p wai-checker --example stagediff -- OTHER [FIRST_SEED] [COUNT] [OUT_DIR]
//! cargo run --release -p wai-checker --example stagediff -- OTHER --file REQUESTS [OUT_DIR]
//! ```

use std::path::PathBuf;
use wai_checker_testgen::differential;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(other) = args.first() else {
        eprintln!("usage: stagediff OTHER [FIRST_SEED] [COUNT] [OUT_DIR] | OTHER --file REQUESTS [OUT_DIR]");
        std::process::exit(2);
    };
    let dir = |i: usize| {
        args.get(i)
            .map_or_else(|| std::env::temp_dir().join("wai-stagediff"), PathBuf::from)
    };
    let r = if args.get(1).map(String::as_str) == Some("--file") {
        let requests = std::fs::read_to_string(args.get(2).expect("a file")).expect("readable");
        differential::compare_stage(other.as_ref(), &requests, &dir(3)).expect("the run")
    } else {
        let first: u64 = args.get(1).map_or(0, |s| s.parse().expect("a seed"));
        let count: u64 = args.get(2).map_or(2000, |s| s.parse().expect("a count"));
        differential::run_stage(other.as_ref(), first..first + count, &dir(3)).expect("the run")
    };
    for d in &r.differences {
        println!("{d}");
    }
    for (op, (n, refused)) in &r.by_op {
        let total: u64 = refused.values().sum();
        println!("{op}: {n} requests, {total} refused {refused:?}");
    }
    println!("{} requests: {} differ", r.requests, r.differences.len());
    if !r.differences.is_empty() {
        std::process::exit(1);
    }
}
