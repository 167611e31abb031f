//! Filling scale-path records of `jpegai-int/1` (§13.6.1; docs/protocol.md, "The jpegai scale
//! path"): a bundle and a codestream's payloads in, every intermediate of both planes out.

use crate::json::*;
use crate::lower::jpegai::{self, CHROMA, LUMA, Plane};
use serde_json::{Map, Value, json};

fn bools(v: &Value, path: &str) -> Result<Vec<bool>, Fail> {
    array(v, path)?
        .iter()
        .map(|b| b.as_bool().ok_or_else(|| format!("{path}: not true or false")))
        .collect()
}

/// Fills one scale-path record.
pub fn fill(v: &Value) -> Result<Value, Fail> {
    let o = object(v, "")?;
    only(o, &["bundle", "expect", "id", "payload"], "")?;
    string(member(o, "id", "")?, "id")?;
    let files: Vec<(String, Vec<u8>)> = object(member(o, "bundle", "")?, "bundle")?
        .iter()
        .map(|(n, h)| Ok((n.clone(), hex_bytes(h, &join("bundle", n))?)))
        .collect::<Result<_, Fail>>()?;
    let p = object(member(o, "payload", "")?, "payload")?;
    only(p, &["soz", "sorp", "sors", "grfs_y", "grfs_uv"], "payload")?;
    let bytes = |k: &str| hex_bytes(member(p, k, "payload")?, &join("payload", k));
    let (soz, sorp, sors) = (bytes("soz")?, bytes("sorp")?, bytes("sors")?);
    let (grfs_y, grfs_uv) = (
        bools(member(p, "grfs_y", "payload")?, "payload.grfs_y")?,
        bools(member(p, "grfs_uv", "payload")?, "payload.grfs_uv")?,
    );
    let mut expect = Map::new();
    match jpegai::bundle(&files) {
        Err(r) => {
            expect.insert("load".into(), Value::String(r.code.to_string()));
        }
        Ok(b) => {
            expect.insert("load".into(), json!("ok"));
            let planes: [(Plane, &[u8], &[bool]); 2] = [(LUMA, &sorp, &grfs_y), (CHROMA, &sors, &grfs_uv)];
            for (plane, latent, grfs) in planes {
                let out = match jpegai::decode_plane(&b, plane, &soz, latent, grfs) {
                    Ok(x) => json!({
                        "likely": tensor_value(&x.likely), "mask": tensor_value(&x.mask), "sigma_idx": tensor_value(&x.sigma_idx),
                        "v": tensor_value(&x.v), "y_q": tensor_value(&x.y_q), "z": tensor_value(&x.z),
                    }),
                    Err(r) => json!({ "refuse": r.code.to_string() }),
                };
                expect.insert(plane.name.into(), out);
            }
        }
    }
    let mut out = o.clone();
    out.insert("expect".into(), Value::Object(expect));
    Ok(Value::Object(out))
}
