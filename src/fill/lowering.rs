//! Filling lowering records (docs/protocol.md, "Lowerings"): a parameter set's files in, the
//! lowered graphs' and the certificate's digests and the load outcome out.

use crate::bounds::certificate::{Header, sha256_hex};
use crate::bounds::profile::Profile;
use crate::json::*;
use crate::lower;
use serde_json::{Map, Value};

/// The capability a record naming none means (§13.0's table).
pub fn capability_of(lowering: &str) -> &'static str {
    lower::capabilities(lowering).first().copied().unwrap_or_default()
}

/// Whether a lowering reads a form the seeds do not define (its certificates are provisional, and
/// carry no set digest).
pub fn provisional(lowering: &str) -> bool {
    matches!(lowering, "whm1/1" | "wam1/1" | "wmb1/1" | "world/1")
}

/// The set digest a certificate records (§8.5): the SHA-256 of a one-file set; none for a
/// provisional rendering, nor for a set of several files, whose `wai.prior.set` listing (SPEC
/// §3.1) the seeds do not define (docs/assumptions.md L6).
pub fn set_sha256(lowering: &str, files: &[(String, Vec<u8>)]) -> Option<String> {
    match files {
        [(_, bytes)] if !provisional(lowering) => Some(sha256_hex(bytes)),
        _ => None,
    }
}

/// Lowers and certifies a set: the lowered graphs by role, the certificate's bytes (when the
/// bounds pass accepts every graph), and the load outcome under the capability's profile and
/// the pin's claim.
pub struct Outcome {
    pub graphs: Vec<(String, Vec<u8>)>,
    pub certificate: Option<Vec<u8>>,
    pub load: Result<(), crate::refusal::Refusal>,
}

pub fn run(lowering: &str, capability: &str, files: &[(String, Vec<u8>)], claim: Option<Profile>) -> Outcome {
    // Every refusal of a set is the capability's code (§4, §13.1, §13.2).
    let refuse_with = |r: crate::refusal::Refusal| crate::refusal::Refusal {
        code: lower::required(lowering).1,
        ..r
    };
    let lowered = match lower::lower(lowering, capability, files) {
        Ok(l) => l,
        Err(r) => {
            return Outcome {
                graphs: vec![],
                certificate: None,
                load: Err(refuse_with(r)),
            };
        }
    };
    let header = Header {
        capability: Some(capability.to_string()),
        lowering: lowering.to_string(),
        set_sha256: set_sha256(lowering, files),
    };
    match lower::certify(&lowered, &header) {
        Err(r) => Outcome {
            graphs: lowered.graphs,
            certificate: None,
            load: Err(refuse_with(r)),
        },
        Ok((certified, bytes)) => {
            let load = lower::check_profile(lowering, &certified, claim);
            Outcome {
                graphs: lowered.graphs,
                certificate: Some(bytes),
                load,
            }
        }
    }
}

/// Fills one lowering record.
pub fn fill(v: &Value) -> Result<Value, Fail> {
    let o = object(v, "")?;
    only(o, &["capability", "claim", "expect", "files", "id", "lowering"], "")?;
    string(member(o, "id", "")?, "id")?;
    let lowering = string(member(o, "lowering", "")?, "lowering")?;
    if !lower::LOWERINGS.contains(&lowering) {
        return Err(format!(
            "lowering: {lowering:?} is not a lowering this oracle implements"
        ));
    }
    let capability = string(member(o, "capability", "")?, "capability")?;
    // A member of every lowering record, `null` for no claim (docs/protocol.md, Lowerings).
    let claim = match member(o, "claim", "")? {
        Value::Null => None,
        c => Some(Profile::parse(string(c, "claim")?).ok_or("claim: neither acc32 nor acc64")?),
    };
    let files_o = object(member(o, "files", "")?, "files")?;
    let files: Vec<(String, Vec<u8>)> = files_o
        .iter()
        .map(|(name, hexv)| Ok((name.clone(), hex_bytes(hexv, &join("files", name))?)))
        .collect::<Result<_, Fail>>()?;
    // A capability the lowering does not decode, or a one-file form given another number of
    // files, is a request that names no set (docs/protocol.md), not a set to refuse.
    if !lower::capabilities(lowering).contains(&capability) {
        return Err(format!("capability: {capability} is not lowered by {lowering}"));
    }
    if lower::one_file(lowering) && files.len() != 1 {
        return Err(format!("files: {} files, but {lowering} reads one", files.len()));
    }
    let outcome = run(lowering, capability, &files, claim);
    let mut expect = Map::new();
    expect.insert(
        "certificate_sha256".into(),
        outcome
            .certificate
            .as_ref()
            .map_or(Value::Null, |c| Value::String(sha256_hex(c))),
    );
    let graphs: Map<String, Value> = outcome
        .graphs
        .iter()
        .map(|(role, b)| (role.clone(), Value::String(sha256_hex(b))))
        .collect();
    expect.insert("graphs".into(), Value::Object(graphs));
    expect.insert(
        "load".into(),
        Value::String(
            outcome
                .load
                .as_ref()
                .map_or_else(|r| r.code.to_string(), |_| "ok".into()),
        ),
    );
    let mut out = o.clone();
    out.remove("expect");
    out.insert("expect".into(), Value::Object(expect));
    Ok(Value::Object(out))
}
