//! `wai-generate coverage` (in progress).

use std::path::Path;

pub fn run(_corpus: &Path, _quiet: bool) -> Result<(), String> {
    Err("coverage: not yet available".into())
}
