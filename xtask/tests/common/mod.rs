//! What the grader's tests share: the workspace root and the checker they grade.

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
