//! What the grader's tests share: the workspace root, the checker they grade, the process's peak.
//! Each test binary uses part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The workspace root, where `ops-conformance/` is.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// `wai-checker`, built in release once per test binary.
pub fn checker() -> PathBuf {
    static CHECKER: OnceLock<PathBuf> = OnceLock::new();
    CHECKER
        .get_or_init(|| {
            xtask::build(&root(), &[("wai-checker", "wai-checker")])
                .unwrap()
                .join("wai-checker")
        })
        .clone()
}

/// The process's peak resident set (`VmHWM`), in bytes; `/proc/self/clear_refs` (`5`) resets it.
pub fn peak_rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kb: u64 = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kb << 10
}
