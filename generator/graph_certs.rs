//! Certificates of bare graphs (§8.5, `lowering` `"whg1"`, no capability, no set digest):
//! `graph-certificates/<name>.whg1` and `<name>.json`, one per graph that
//! `corpus/certificates.json` names by its vector file and id. They hold what only a
//! certificate shows of operators no §13 lowering emits (intervals of `layernorm_c`, `softmax`,
//! `sigmoid`, `elu`; the npu flags of a state input and a depthwise convolution).

use serde_json::Value;
use std::path::Path;
use wai_oracle::bounds::Certified;
use wai_oracle::bounds::certificate::{self, Header};

/// The tree's folder of bare-graph certificates.
pub const DIR: &str = "graph-certificates";

/// One named graph: `(name, vector file in the tree, record id)`.
fn entries(corpus: &Path) -> Result<Vec<(String, String, String)>, String> {
    let path = corpus.join("certificates.json");
    let Ok(text) = std::fs::read_to_string(&path) else {
        return Ok(vec![]);
    };
    let v: Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let field = |e: &Value, k: &str, n: usize| {
        e[k].as_str()
            .map(str::to_string)
            .ok_or_else(|| format!("{}: graphs[{n}].{k}: not a string", path.display()))
    };
    v["graphs"]
        .as_array()
        .ok_or_else(|| format!("{}: graphs: not an array", path.display()))?
        .iter()
        .enumerate()
        .map(|(n, e)| Ok((field(e, "name", n)?, field(e, "file", n)?, field(e, "id", n)?)))
        .collect()
}

/// The graph bytes of record `id` of tree file `file`, from the files already built.
fn graph_of(files: &[(String, Vec<u8>)], file: &str, id: &str) -> Result<Vec<u8>, String> {
    let (_, text) = files
        .iter()
        .find(|(f, _)| f == file)
        .ok_or_else(|| format!("corpus/certificates.json: no tree file {file}"))?;
    String::from_utf8_lossy(text)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|r| r["id"] == id)
        .and_then(|r| hex::decode(r["graph"].as_str()?).ok())
        .ok_or_else(|| format!("corpus/certificates.json: {file} has no graph record {id}"))
}

/// The tree files of every named graph: its bytes and its certificate, as `wai-oracle certify
/// <name>.whg1` writes it.
pub fn tree_files(corpus: &Path, files: &[(String, Vec<u8>)]) -> Result<Vec<(String, Vec<u8>)>, String> {
    let mut out = Vec::new();
    for (name, file, id) in entries(corpus)? {
        let bytes = graph_of(files, &file, &id)?;
        let loaded = wai_oracle::whg1::load(&bytes).map_err(|r| format!("{name}: refused at load: {r}"))?;
        let certified = Certified::new(&name, bytes.clone(), loaded.graph)
            .map_err(|r| format!("{name}: refused by the bounds pass: {r}"))?;
        let header = Header {
            lowering: "whg1".into(),
            ..Header::default()
        };
        out.push((format!("{DIR}/{name}.json"), certificate::bytes(&[certified], &header)));
        out.push((format!("{DIR}/{name}.whg1"), bytes));
    }
    Ok(out)
}
