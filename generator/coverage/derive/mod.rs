//! The derivation: the items each vector covers, told by replaying it with the oracle, per suite:
//! graph vectors (`graph`), stage-operator vectors (`stage`), the scale tier's records (their size
//! classes, `super::scale`), jpegai scale-path records, DetessDequant records; and the corpus's
//! parameter sets. A case's `covers` labels are claims, checked against what is derived here.

mod graph;
mod stage;

use crate::case::{self, Case};
use crate::tree::{self, Source};
use num_bigint::BigInt;
use std::collections::BTreeSet;
use wai_oracle::suite::{Cases, SCALE};
use wai_oracle::tensor::Tensor;

/// A vector of a tree file: its id, the items its case claims, and the items it covers.
pub struct Vector {
    pub id: String,
    pub claims: Vec<String>,
    pub items: BTreeSet<String>,
}

/// What a vector did, for items that compare two vectors.
#[derive(Default)]
struct Outcome {
    operators: Vec<&'static str>,
    /// Each decode's outputs (empty for a refused decode).
    outputs: Vec<Vec<Tensor>>,
}

struct Derived {
    items: BTreeSet<String>,
    outcome: Outcome,
}

impl Derived {
    /// Items alone, from a vector no other is compared with.
    fn of(items: BTreeSet<String>) -> Derived {
        Derived {
            items,
            outcome: Outcome::default(),
        }
    }
}

/// A vector's id, the items its case claims, and what was derived.
type Claimed = (String, Vec<String>, Derived);

/// A canonical integer string's value (0 when it is not one).
fn int(v: &serde_json::Value) -> BigInt {
    v.as_str().and_then(wai_oracle::canon::parse_int).unwrap_or_default()
}

/// The vectors of one corpus file, each with the items it covers.
pub fn file(src: &Source) -> Result<Vec<Vector>, String> {
    let cases: Vec<Case> = tree::read_cases(src)?;
    let vectors = cases
        .iter()
        .map(|c| Ok((c.id.clone(), c.covers.clone(), case(src, c)?)))
        .collect::<Result<Vec<Claimed>, String>>()?;
    let phase = phase_form(&vectors);
    Ok(vectors
        .into_iter()
        .map(|(id, claims, derived)| {
            let mut items = derived.items;
            if phase.contains(&id) {
                items.insert("graph:phase-form".into());
            }
            Vector { id, claims, items }
        })
        .collect())
}

/// What one case covers, by its file's suite.
fn case(src: &Source, c: &Case) -> Result<Derived, String> {
    let path = format!("{}: case {}", src.corpus.display(), c.id);
    let at = |e: String| format!("{path}: {e}");
    let mut derived = match src.cases {
        Cases::DetessDequant => Derived::of(crate::dequant::items(&crate::dequant::fill(&c.body, &path)?)),
        Cases::ScalePath => Derived::of(jpegai(&crate::jpegai::request(&c.body, &c.root, &path)?).map_err(at)?),
        Cases::StageOperator => {
            let request = crate::stage::request(&src.stem, &c.body, &path)?;
            Derived::of(stage::derive(&src.stem, &request).map_err(at)?)
        }
        _ if src.suite == &SCALE => Derived::of(scale(src, c, &path)?),
        Cases::Operator | Cases::Graphs => graph::derive(src.operator(), &case::request(c, &path)?).map_err(at)?,
    };
    // A graph lowered from a set, decoded: its lowering is covered (§14.2).
    let lowered = c.body["graph"]["lowered"]["set"].as_str();
    if let (Some(name), true) = (lowered, derived.outcome.outputs.iter().any(|o| !o.is_empty())) {
        let sets = crate::sets::read_all(&c.root)?;
        if let Some(set) = sets.iter().find(|s| s.name == name) {
            derived.items.insert(format!("lowering:{}", set.lowering));
        }
    }
    Ok(derived)
}

/// The size classes a scale record covers (docs/scale.md): `scale:<op>:…` in a per-operator file,
/// else `scale:graph:…`.
fn scale(src: &Source, c: &Case, path: &str) -> Result<BTreeSet<String>, String> {
    let lowering = match c.body["graph"]["lowered"]["set"].as_str() {
        Some(name) => crate::sets::read_all(&c.root)?
            .into_iter()
            .find(|s| s.name == name)
            .map(|s| s.lowering),
        None => None,
    };
    let prefix = match src.operator() {
        Some(op) => format!("scale:{op}:"),
        None => "scale:graph:".into(),
    };
    let items = super::scale::derive(src.operator(), &case::request(c, path)?, lowering.as_deref())
        .map_err(|e| format!("{path}: {e}"))?;
    Ok(items.into_iter().map(|i| format!("{prefix}{i}")).collect())
}

/// `graph:phase-form`: `<id>-convT` through `conv_transpose` and `<id>-phase` through
/// convolutions only, with the same decodes' outputs, every decode completing.
fn phase_form(vectors: &[Claimed]) -> Vec<String> {
    let mut ids = Vec::new();
    for (id, _, d) in vectors {
        let Some(base) = id.strip_suffix("-phase") else {
            continue;
        };
        let Some((_, _, t)) = vectors.iter().find(|(other, _, _)| *other == format!("{base}-convT")) else {
            continue;
        };
        let (p, t) = (&d.outcome, &t.outcome);
        if t.operators.contains(&"conv_transpose")
            && !p.operators.contains(&"conv_transpose")
            && p.operators.contains(&"conv")
            && !p.outputs.is_empty()
            && p.outputs.iter().all(|o| !o.is_empty())
            && p.outputs == t.outputs
        {
            ids.push(id.clone());
        }
    }
    ids
}

/// The items the corpus's parameter sets cover (§14.3): a set that fails `acc64` by one unit, and
/// one whose pin claims `acc32` and that fails it by one unit (an interval one past i32).
pub fn sets(sets: &[crate::sets::Set]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for set in sets {
        let outcome = set.run();
        let Some(cert) = &outcome.certificate else { continue };
        let Ok(cert) = serde_json::from_slice::<serde_json::Value>(cert) else {
            continue;
        };
        let verdict = &cert["verdict"];
        let one_past = |profile: &str, top: BigInt| {
            let f = &verdict[format!("{profile}_first_failure")];
            interval_of(&cert, f).is_some_and(|(lo, hi)| hi == top || lo == -&top - 1)
        };
        if verdict["acc64"] == false && one_past("acc64", BigInt::from(1u64 << 63)) {
            out.push(("sets:acc64-by-one".into(), set.name.clone()));
        }
        if set.claim.as_deref() == Some("acc32")
            && outcome.load.is_err()
            && verdict["acc64"] == true
            && one_past("acc32", BigInt::from(1u64 << 31))
        {
            out.push(("sets:claim-acc32-by-one".into(), set.name.clone()));
        }
    }
    out
}

/// The interval a certificate's first failure names.
fn interval_of(cert: &serde_json::Value, f: &serde_json::Value) -> Option<(BigInt, BigInt)> {
    let graph = cert["graphs"].as_array()?.iter().find(|g| g["name"] == f["graph"])?;
    let index: usize = f["index"].as_str()?.parse().ok()?;
    let key = f["key"].as_str()?;
    let i = match f["where"].as_str()? {
        "input" => &graph["inputs"][index],
        "scalar" => &graph["scalars"][index],
        _ => {
            let node = &graph["nodes"][index];
            match key.strip_prefix("out.") {
                Some(k) => &node["out"][k.parse::<usize>().ok()?]["result"],
                None => &node["intermediates"][key],
            }
        }
    };
    Some((int(&i["lo"]), int(&i["hi"])))
}

/// The items a `jpegai-int/1` scale-path record covers.
fn jpegai(request: &serde_json::Value) -> Result<BTreeSet<String>, String> {
    let filled = wai_oracle::fill::jpegai::fill(request)?;
    let e = &filled["expect"];
    let mut items = BTreeSet::new();
    if e["load"] != "ok" {
        items.insert("jpegai:load-refused".to_string());
        items.insert(format!("code:{}", e["load"].as_str().unwrap_or_default()));
        return Ok(items);
    }
    let decoded: Vec<bool> = ["y", "uv"].iter().map(|p| e[p].get("refuse").is_none()).collect();
    for p in ["y", "uv"] {
        if let Some(code) = e[p]["refuse"].as_str() {
            items.insert(format!("code:{code}"));
            if code == "stream_exhausted" {
                items.insert("jpegai:stream-exhausted".into());
            }
        }
    }
    if decoded.iter().all(|&d| d) {
        items.insert("jpegai:decode".into());
        items.insert("lowering:jpegai-int/1".into());
    } else if decoded.iter().any(|&d| d) {
        items.insert("jpegai:decode-one-plane".into());
    }
    Ok(items)
}
