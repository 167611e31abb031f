//! Table 8.5-A is written once (`bounds::profile::TABLE_8_5_A`): every node of every committed
//! graph that passes the bounds pass records exactly its operator's keys, in the table's order.

use std::path::Path;
use wai_oracle::bounds::pass;
use wai_oracle::bounds::profile::keys_of;
use wai_oracle::whg1::load::load;

#[test]
fn every_rule_records_exactly_its_operators_keys_in_table_order() {
    let mut nodes = 0;
    for folder in ["vectors", "graphs"] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("ops-conformance")
            .join(folder);
        for file in std::fs::read_dir(dir).unwrap() {
            let text = std::fs::read_to_string(file.unwrap().path()).unwrap();
            for line in text.lines() {
                let v: serde_json::Value = serde_json::from_str(line).unwrap();
                let Some(bytes) = v["graph"].as_str().and_then(|h| hex::decode(h).ok()) else {
                    continue;
                };
                let Ok(loaded) = load(&bytes) else { continue };
                let Ok(p) = pass::run(&loaded.graph) else { continue };
                for (node, rule) in loaded.graph.nodes.iter().zip(&p.nodes) {
                    let recorded: Vec<&str> = rule.intermediates.iter().map(|(k, _)| *k).collect();
                    let table: Vec<&str> = keys_of(node.op.name()).collect();
                    assert_eq!(recorded, table, "{}: {}", v["id"], node.op.name());
                    nodes += 1;
                }
            }
        }
    }
    assert!(nodes > 500, "{nodes} nodes");
}
