//! Writes a CIS-2 model of SmolLM2-135M's shape (§2.2) with seeded weights into DIR, then runs
//! the receipt on it without §2.1's hash check and prints the time taken: a timing aid for the
//! pinned decode, whose real model is not in the tree.
//!
//! ```text
//! cargo run --release -p wai-checker --example cis2_synth -- DIR [GEN_TOKS]
//! ```
use std::path::Path;
use std::time::Instant;
use wai_checker::cis2::vector::{self, Tininess};
use wai_checker_testgen::cis2_synth::{self, Spec};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(dir) = args.first() else {
        eprintln!("usage: cis2_synth DIR [GEN_TOKS]");
        std::process::exit(2);
    };
    let steps: u128 = args.get(1).map_or(16, |s| s.parse().expect("GEN_TOKS"));
    let dir = Path::new(dir);
    std::fs::create_dir_all(dir).expect("DIR");
    if !dir.join("model.safetensors").exists() {
        cis2_synth::write_model(dir, &Spec::smollm2_shape(), 1).expect("write");
    }
    let t = Instant::now();
    match vector::receipt(dir, vector::PINNED_PROMPT, steps, Tininess::host(), false) {
        Ok(r) => print!("{r}"),
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
    eprintln!("{:.2} s (load, tokenize, two decodes)", t.elapsed().as_secs_f64());
}
