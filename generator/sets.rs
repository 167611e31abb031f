//! Parameter sets (`corpus/sets/<name>.json`): each is lowered and certified into the certificate
//! tree (§14.3), and recorded as a lowering record (docs/protocol.md, "Lowerings").
//!
//! A set case: `{ "about", "lowering", "capability" (optional), "claim" (optional), "files": {
//! name: content } }`. A file's content is JSON written out, in which `{"$random": {"seed",
//! "range", "shape"}}` and `{"$fill": {"value", "shape"}}` expand to nested arrays; the file's
//! bytes are the compact JSON (members in byte order).

use crate::recipe;
use crate::value::*;
use num_bigint::BigInt;
use serde_json::{Map, Value, json};
use std::path::Path;
use wai_oracle::bounds::certificate::sha256_hex;
use wai_oracle::bounds::profile::Profile;
use wai_oracle::fill::lowering::{self, capability_of, provisional};

/// A set, read and expanded.
pub struct Set {
    pub name: String,
    pub lowering: String,
    pub capability: String,
    pub claim: Option<String>,
    pub files: Vec<(String, Vec<u8>)>,
}

impl Set {
    /// The digest that names the set in the tree: the SHA-256 of a one-file set (the set's digest,
    /// or a provisional rendering's); for several files, the SHA-256 of their `sha256sum` listing
    /// in name order, the project's name for the folder (docs/assumptions.md L6).
    pub fn digest(&self) -> String {
        match &self.files[..] {
            [(_, bytes)] => sha256_hex(bytes),
            files => {
                let mut named: Vec<&(String, Vec<u8>)> = files.iter().collect();
                named.sort_by(|a, b| a.0.cmp(&b.0));
                let listing: String = named.iter().map(|(n, b)| format!("{}  {n}\n", sha256_hex(b))).collect();
                sha256_hex(listing.as_bytes())
            }
        }
    }

    /// Where its certificate goes: `[provisional/]certificates/<capability>/<digest>`.
    pub fn dir(&self) -> String {
        let base = if provisional(&self.lowering) {
            "provisional/certificates"
        } else {
            "certificates"
        };
        format!("{base}/{}/{}", self.capability, self.digest())
    }

    /// The lowering record file it joins: `[provisional/]lowerings/<lowering>.jsonl`.
    pub fn record_file(&self) -> String {
        let stem = self.lowering.split('/').next().unwrap_or_default();
        let base = if provisional(&self.lowering) {
            "provisional/lowerings"
        } else {
            "lowerings"
        };
        format!("{base}/{stem}.jsonl")
    }

    /// The request of its lowering record.
    pub fn request(&self) -> Value {
        let files: Map<String, Value> = self
            .files
            .iter()
            .map(|(n, b)| (n.clone(), Value::String(hex::encode(b))))
            .collect();
        json!({
            "capability": self.capability,
            "claim": self.claim,
            "files": files,
            "id": self.name,
            "lowering": self.lowering,
        })
    }

    /// Lowers and certifies it.
    pub fn run(&self) -> lowering::Outcome {
        let claim = self.claim.as_deref().and_then(Profile::parse);
        lowering::run(&self.lowering, &self.capability, &self.files, claim)
    }
}

/// Every set of the corpus, sorted by name.
pub fn read_all(corpus: &Path) -> Result<Vec<Set>, Fail> {
    let dir = corpus.join("sets");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok(vec![]);
    };
    let mut paths: Vec<_> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    paths.iter().map(|p| read(p)).collect()
}

fn read(path: &Path) -> Result<Set, Fail> {
    let at = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| format!("{at}: {e}"))?;
    let v: Value = serde_json::from_str(&text).map_err(|e| format!("{at}: {e}"))?;
    let o = object(&v, &at)?;
    only(o, &["about", "lowering", "capability", "claim", "files"], &at)?;
    let lowering = string(member(o, "lowering", &at)?, &format!("{at}.lowering"))?.to_string();
    let capability = match o.get("capability") {
        Some(c) => string(c, &format!("{at}.capability"))?.to_string(),
        None => capability_of(&lowering).to_string(),
    };
    let claim = o
        .get("claim")
        .map(|c| string(c, &format!("{at}.claim")).map(str::to_string))
        .transpose()?;
    let mut files = Vec::new();
    for (name, content) in object(member(o, "files", &at)?, &format!("{at}.files"))? {
        files.push((name.clone(), file_bytes(content, &format!("{at}.files.{name}"))?));
    }
    let name = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default()
        .to_string();
    Ok(Set {
        name,
        lowering,
        capability,
        claim,
        files,
    })
}

/// A file's bytes: its content with the recipes expanded, as compact JSON.
pub fn file_bytes(content: &Value, path: &str) -> Result<Vec<u8>, Fail> {
    serde_json::to_vec(&expand(content, path)?).map_err(|e| e.to_string())
}

/// Expands `$random` and `$fill` into nested arrays of the given shape.
fn expand(v: &Value, path: &str) -> Result<Value, Fail> {
    match v {
        Value::Object(o) if o.contains_key("$random") || o.contains_key("$fill") => {
            let (key, r) = o.iter().next().ok_or("empty recipe")?;
            let r = object(r, path)?;
            let shape: Vec<usize> = array(member(r, "shape", path)?, path)?
                .iter()
                .map(|d| u32_(d, path).map(|d| d as usize))
                .collect::<Result<_, _>>()?;
            let count: usize = shape.iter().product();
            let values = if key == "$random" {
                let (lo, hi) = recipe::range(member(r, "range", path)?, path)?;
                recipe::random(u64_(member(r, "seed", path)?, path)?, &lo, &hi, count)
            } else {
                vec![int(member(r, "value", path)?, path)?; count]
            };
            Ok(nest(&values, &shape))
        }
        Value::Object(o) => Ok(Value::Object(
            o.iter()
                .map(|(k, x)| Ok((k.clone(), expand(x, &format!("{path}.{k}"))?)))
                .collect::<Result<_, Fail>>()?,
        )),
        Value::Array(items) => Ok(Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, x)| expand(x, &format!("{path}[{i}]")))
                .collect::<Result<_, _>>()?,
        )),
        other => Ok(other.clone()),
    }
}

fn nest(values: &[BigInt], shape: &[usize]) -> Value {
    match shape.split_first() {
        None => values.first().map_or(Value::Null, |v| {
            serde_json::from_str(&v.to_string()).unwrap_or(Value::Null)
        }),
        Some((&n, rest)) => {
            let step: usize = rest.iter().product();
            Value::Array((0..n).map(|i| nest(&values[i * step..(i + 1) * step], rest)).collect())
        }
    }
}

/// The tree files the sets become: each certificate, lowered graph and set file, and the
/// lowering records, by path.
pub fn tree_files(sets: &[Set]) -> Result<Vec<(String, Vec<u8>)>, Fail> {
    let mut files = Vec::new();
    let mut records: std::collections::BTreeMap<String, String> = Default::default();
    for set in sets {
        let outcome = set.run();
        let dir = set.dir();
        if let Some(cert) = &outcome.certificate {
            files.push((format!("{dir}.json"), cert.clone()));
        }
        for (role, bytes) in &outcome.graphs {
            files.push((format!("{dir}/{role}.whg1"), bytes.clone()));
        }
        for (name, bytes) in &set.files {
            files.push((format!("{dir}/{name}"), bytes.clone()));
        }
        let filled = wai_oracle::fill::lowering::fill(&set.request()).map_err(|e| format!("set {}: {e}", set.name))?;
        let line = wai_oracle::canon::to_line(&filled).map_err(|e| e.to_string())?;
        records.entry(set.record_file()).or_default().push_str(&line);
    }
    files.extend(records.into_iter().map(|(p, t)| (p, t.into_bytes())));
    Ok(files)
}

/// The bytes of role `role` of set `name`, lowered.
pub fn lowered_graph(sets: &[Set], name: &str, role: &str) -> Result<Vec<u8>, Fail> {
    let set = sets
        .iter()
        .find(|s| s.name == name)
        .ok_or_else(|| format!("no set named {name:?}"))?;
    let outcome = set.run();
    outcome
        .graphs
        .into_iter()
        .find(|(r, _)| r == role)
        .map(|(_, b)| b)
        .ok_or_else(|| format!("set {name:?} lowers to no graph {role:?}"))
}
