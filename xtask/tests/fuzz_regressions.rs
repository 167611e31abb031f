//! Every input the fuzzers ever found (`fuzz/regressions/<target>/`), replayed through its
//! target's body: each must now pass (docs/fuzzing.md). A sample of the seed corpus built from
//! the committed tree runs too, so a target that rejects its own seeds fails here, not in a
//! ten-minute fuzzing run.

use std::path::Path;
use xtask::fuzzing::{TARGETS, check, root, seeds};

#[test]
fn every_regression_input_passes_its_target() {
    let dir = root().join("fuzz/regressions");
    let mut replayed = 0;
    for target in TARGETS {
        let Ok(entries) = std::fs::read_dir(dir.join(target)) else {
            continue;
        };
        let mut files: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        files.sort();
        for file in files {
            let bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
            if let Err(finding) = check(target, &bytes) {
                panic!("{}: {finding}", file.display());
            }
            replayed += 1;
        }
    }
    assert!(replayed > 0, "no regression inputs under {}", dir.display());
}

#[test]
fn every_target_has_a_regression_directory() {
    for target in TARGETS {
        let dir = root().join("fuzz/regressions").join(target);
        assert!(dir.is_dir(), "{} is missing", dir.display());
    }
}

#[test]
fn every_target_passes_a_sample_of_its_seeds() {
    let all = seeds(&root().join("ops-conformance")).expect("seeds from the committed tree");
    for target in TARGETS {
        let mine: Vec<_> = all.iter().filter(|s| s.0 == target).collect();
        assert!(!mine.is_empty(), "target {target} has no seeds");
        // Every seventh seed (at least one per target) keeps this test to seconds.
        for (_, name, bytes) in mine.iter().step_by(7) {
            if let Err(finding) = check(target, bytes) {
                panic!("{}: seed {name}: {finding}", Path::new(target).display());
            }
        }
    }
}
