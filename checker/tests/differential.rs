//! The checker against the oracle binary on random graphs. Ignored by default: it needs the binary
//! (`cargo build --release --bin wai-oracle`, or `WAI_ORACLE=path`). Run with
//! `cargo test -p wai-checker --test differential -- --ignored`.

use std::path::PathBuf;
use wai_checker::testgen::differential;

#[test]
#[ignore = "needs the oracle binary"]
fn the_checker_agrees_with_the_oracle_on_random_graphs() {
    let oracle = std::env::var_os("WAI_ORACLE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../target/release/wai-oracle")));
    assert!(oracle.exists(), "no oracle binary at {}", oracle.display());
    let dir = std::env::temp_dir().join(format!("wai-checker-differential-{}", std::process::id()));
    let seeds: u64 = std::env::var("WAI_DIFF_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000);
    let report = differential::run(&oracle, 0..seeds, &dir).expect("the run");
    let _ = std::fs::remove_dir_all(&dir);
    assert!(report.differences.is_empty(), "{:#?}", report.differences);
    assert!(
        report.loads_ok > seeds / 4 && report.certificates > seeds / 4,
        "{report:?}"
    );
}
