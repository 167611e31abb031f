//! `jpegai-int/1` scale-path cases (`corpus/jpegai/<name>.json` → `graphs/jpegai_<name>.jsonl`):
//! a bundle (a set of `corpus/sets/`, with members replaced if the case says so) and the
//! codestream's payloads, as byte recipes.
//!
//! A case: `{ "id", "about", "covers", "bundle": set name, "replace": [{ "file", "members": { member:
//! value or null } }],
//! "payload": { "soz", "sorp", "sors": bytes, "grfs_y", "grfs_uv": flags } }`. Flags are a list, or
//! `{"all": b}`, or `{"random": seed}`.

use crate::value::*;
use serde_json::{Map, Value, json};
use std::path::Path;

fn flags(v: &Value, n: usize, path: &str) -> Result<Value, Fail> {
    if let Value::Array(_) = v {
        return Ok(v.clone());
    }
    let o = object(v, path)?;
    if let Some(b) = o.get("all") {
        return Ok(Value::Array(vec![b.clone(); n]));
    }
    let seed = u64_(member(o, "random", path)?, path)?;
    let bits = crate::recipe::random(seed, &0.into(), &1.into(), n);
    Ok(Value::Array(bits.iter().map(|b| Value::Bool(*b == 1.into())).collect()))
}

/// The request of a scale-path case.
pub fn request(body: &Value, root: &Path, path: &str) -> Result<Value, Fail> {
    let o = object(body, path)?;
    only(o, &["id", "about", "covers", "bundle", "replace", "payload"], path)?;
    let id = string(member(o, "id", path)?, &format!("{path}.id"))?;
    let name = string(member(o, "bundle", path)?, &format!("{path}.bundle"))?;
    let sets = crate::sets::read_all(root)?;
    let set = sets
        .iter()
        .find(|s| s.name == name)
        .ok_or_else(|| format!("{path}.bundle: no set {name:?}"))?;
    let mut bundle = Map::new();
    let replaced: Vec<&Value> = match o.get("replace") {
        None => vec![],
        Some(r) => array(r, &format!("{path}.replace"))?.iter().collect(),
    };
    for (file, bytes) in &set.files {
        let mut bytes = bytes.clone();
        for r in replaced
            .iter()
            .filter(|r| r.get("file").and_then(Value::as_str) == Some(file.as_str()))
        {
            let members = member(object(r, path)?, "members", path)?;
            let mut v: Value = serde_json::from_slice(&bytes).map_err(|e| e.to_string())?;
            for (k, x) in object(members, &format!("{path}.replace.{file}"))? {
                match x {
                    Value::Null => {
                        v.as_object_mut().map(|m| m.remove(k));
                    }
                    x => v[k] = x.clone(),
                }
            }
            bytes = crate::sets::file_bytes(&v, path)?;
        }
        bundle.insert(file.clone(), Value::String(hex::encode(bytes)));
    }
    let p = object(member(o, "payload", path)?, &format!("{path}.payload"))?;
    let mut payload = Map::new();
    for k in ["soz", "sorp", "sors"] {
        let pp = format!("{path}.payload.{k}");
        payload.insert(
            k.into(),
            Value::String(hex::encode(crate::stage::bytes(member(p, k, &pp)?, &Map::new(), &pp)?)),
        );
    }
    payload.insert("grfs_y".into(), flags(member(p, "grfs_y", path)?, 160, path)?);
    payload.insert("grfs_uv".into(), flags(member(p, "grfs_uv", path)?, 96, path)?);
    Ok(json!({ "bundle": bundle, "id": id, "payload": payload }))
}
