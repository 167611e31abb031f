//! Table 8.5-A (`bounds::profile::INTERMEDIATES`): on every per-operator vector of the tree whose
//! graph passes the bounds pass, each node records exactly the keys the table gives its operator,
//! so a key a rule records that the table does not hold fails here, with the operator named.

use std::collections::BTreeSet;
use std::path::Path;
use wai_checker::bounds::profile::INTERMEDIATES;
use wai_checker::whg1::{OPS, load};

/// The keys Table 8.5-A gives `op`.
fn table_keys(op: &str) -> BTreeSet<&'static str> {
    INTERMEDIATES
        .iter()
        .filter(|(_, _, ops)| ops.contains(&op))
        .map(|(key, _, _)| *key)
        .collect()
}

#[test]
fn every_node_records_its_operators_keys_of_table_8_5_a() {
    let vectors = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ops-conformance/vectors");
    for &(_, name, _, _) in &OPS {
        let text = std::fs::read_to_string(vectors.join(format!("{name}.jsonl"))).unwrap();
        let mut nodes = 0;
        for line in text.lines() {
            let record: serde_json::Value = serde_json::from_str(line).unwrap();
            let bytes = hex::decode(record["graph"].as_str().unwrap()).unwrap();
            let Ok(checked) = load::check(&bytes) else { continue };
            for (op, node) in checked.graph.ops.iter().zip(&checked.pass.nodes) {
                let recorded: BTreeSet<&str> = node.rec.items.iter().map(|(key, _)| *key).collect();
                assert_eq!(
                    recorded,
                    table_keys(op.name()),
                    "{name}.jsonl {}: {}",
                    record["id"],
                    op.name()
                );
                nodes += 1;
            }
        }
        assert!(nodes > 0, "{name}.jsonl: no graph passes the bounds pass");
    }
}
