//! §8.4's admissible ranges, oracle against checker: for every graph of the committed per-operator
//! vectors (`ops-conformance/vectors/*.jsonl`) that loads, every tensor and both profiles, the two
//! implementations give the same range, or both give none.

use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use wai_checker::bounds::admissible::admissible as checker_admissible;
use wai_checker::whg1::load as checker_load;
use wai_oracle::bounds::Certified;

const PROFILES: [(wai_oracle::bounds::profile::Profile, wai_checker::bounds::Profile); 2] = [
    (
        wai_oracle::bounds::profile::Profile::Acc32,
        wai_checker::bounds::Profile::Acc32,
    ),
    (
        wai_oracle::bounds::profile::Profile::Acc64,
        wai_checker::bounds::Profile::Acc64,
    ),
];

/// Every distinct graph of the committed per-operator vectors, by its file.
fn graphs() -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ops-conformance/vectors");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("the vectors directory")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for f in files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        for line in std::fs::read_to_string(&f).expect("a vector file").lines() {
            let v: Value = serde_json::from_str(line).expect("a vector line");
            let Some(hex) = v["graph"].as_str() else { continue };
            let bytes = hex::decode(hex).expect("hex");
            if seen.insert(bytes.clone()) {
                out.push((format!("{name} {}", v["id"].as_str().unwrap_or("?")), bytes));
            }
        }
    }
    out
}

/// A range as the command prints it, or `none`.
fn show<T: ToString>(r: Option<(T, T)>) -> String {
    r.map_or("none".into(), |(lo, hi)| {
        format!("[{}, {}]", lo.to_string(), hi.to_string())
    })
}

#[test]
fn the_checker_and_the_oracle_give_every_tensor_the_same_admissible_range() {
    let (mut cases, mut loaded, mut none) = (0usize, 0usize, 0usize);
    let mut disagree = Vec::new();
    for (id, bytes) in graphs() {
        let ours = wai_oracle::whg1::load(&bytes)
            .ok()
            .and_then(|l| Certified::new(&id, bytes.clone(), l.graph).ok());
        let theirs = checker_load::check(&bytes).ok();
        let (Some(o), Some(c)) = (ours, theirs) else {
            // Neither, or only the checker's pass without a profile: the oracle's load also
            // requires acc64 (docs/assumptions.md B1), which the checker's full load holds it to.
            assert!(
                checker_load::load(&bytes).is_err(),
                "{id}: the checker loads a graph the oracle refuses"
            );
            continue;
        };
        loaded += 1;
        for t in 0..c.graph.tensors.len() {
            for (po, pc) in PROFILES {
                let a = show(wai_oracle::bounds::admissible::admissible(
                    &o.graph, &o.pass, t as u32, po,
                ));
                let b = show(checker_admissible(&c.graph, c.shapes.as_deref(), &c.pass, t, pc));
                cases += 1;
                none += usize::from(b == "none");
                if a != b {
                    disagree.push(format!("{id} tensor {t} {}: oracle {a}, checker {b}", pc.name()));
                }
            }
        }
    }
    eprintln!("{loaded} graphs, {cases} graph × tensor × profile cases ({none} with no range)");
    assert!(
        loaded > 100 && cases > 1000,
        "too few cases: {loaded} graphs, {cases} cases"
    );
    assert!(
        disagree.is_empty(),
        "{} disagreements:\n{}",
        disagree.len(),
        disagree.join("\n")
    );
}
