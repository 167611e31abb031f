//! Differential runs: random graphs (the checker's seeded generator) filled and certified
//! by the oracle and by the checker, in process, compared byte for byte.

use rayon::prelude::*;
use serde_json::Value;
use std::ops::Range;
use wai_oracle::bounds::{Certified, certificate};

/// What a run saw.
#[derive(Default, Debug, Clone)]
pub struct Stats {
    pub requests: u64,
    pub loads_ok: u64,
    pub decodes: u64,
    pub refused_decodes: u64,
    pub certificates: u64,
}

impl Stats {
    fn add(&mut self, o: &Stats) {
        self.requests += o.requests;
        self.loads_ok += o.loads_ok;
        self.decodes += o.decodes;
        self.refused_decodes += o.refused_decodes;
        self.certificates += o.certificates;
    }
}

/// A request on which the two implementations disagree.
#[derive(Debug, Clone)]
pub struct Disagreement {
    pub seed: u64,
    pub what: String,
    /// The request line.
    pub request: String,
}

/// Runs the requests of `seeds` through both implementations.
pub fn run(seeds: Range<u64>) -> (Stats, Vec<Disagreement>) {
    seeds
        .into_par_iter()
        .map(one)
        .fold(
            || (Stats::default(), Vec::new()),
            |(mut s, mut d), (s1, d1)| {
                s.add(&s1);
                d.extend(d1);
                (s, d)
            },
        )
        .reduce(
            || (Stats::default(), Vec::new()),
            |(mut s, mut d), (s1, d1)| {
                s.add(&s1);
                d.extend(d1);
                (s, d)
            },
        )
}

/// One random request: `fill` on both sides, then the graph's certificate on both sides.
pub fn one(seed: u64) -> (Stats, Option<Disagreement>) {
    let request = wai_checker_testgen::random::request(seed);
    let mut stats = Stats {
        requests: 1,
        ..Stats::default()
    };
    let disagree = |what: String| {
        Some(Disagreement {
            seed,
            what,
            request: request.clone(),
        })
    };
    let oracle = wai_oracle::fill::fill_line(&request);
    let checker = wai_checker::fill::fill_line(&request).map(|l| format!("{l}\n"));
    match (&oracle, &checker) {
        (Ok(a), Ok(b)) if a == b => {
            let v: Value = serde_json::from_str(a).unwrap_or(Value::Null);
            if v["load"] == "ok" {
                stats.loads_ok += 1;
                for d in v["decodes"].as_array().into_iter().flatten() {
                    stats.decodes += 1;
                    stats.refused_decodes += u64::from(d["expect"].get("refuse").is_some());
                }
            }
        }
        (Ok(a), Ok(b)) => {
            return (
                stats,
                disagree(format!("fill differs:\n  oracle  {}\n  checker {}", a.trim(), b.trim())),
            );
        }
        (Err(_), Err(_)) => {}
        (a, b) => {
            let side = |ok: bool| if ok { "filled it" } else { "rejected it" };
            return (
                stats,
                disagree(format!(
                    "fill: the oracle {} and the checker {}",
                    side(a.is_ok()),
                    side(b.is_ok())
                )),
            );
        }
    }
    let v: Value = serde_json::from_str(&request).unwrap_or(Value::Null);
    let id = v["id"].as_str().unwrap_or("g").to_string();
    let bytes = hex::decode(v["graph"].as_str().unwrap_or_default()).unwrap_or_default();
    let header = certificate::Header {
        lowering: "whg1".into(),
        ..certificate::Header::default()
    };
    let ours = wai_oracle::whg1::load(&bytes)
        .ok()
        .and_then(|l| Certified::new(&id, bytes.clone(), l.graph).ok())
        .map(|c| certificate::bytes(&[c], &header));
    let theirs = wai_checker::certify::certify(&[wai_checker::certify::Input { name: id, bytes }], None, "whg1", None)
        .ok()
        .map(String::into_bytes);
    match (ours, theirs) {
        (Some(a), Some(b)) if a == b => stats.certificates += 1,
        (None, None) => {}
        (a, b) => {
            let show = |c: &Option<Vec<u8>>| {
                c.as_ref()
                    .map_or("refused".to_string(), |c| String::from_utf8_lossy(c).into_owned())
            };
            return (
                stats,
                disagree(format!(
                    "certificate differs:\n  oracle  {}\n  checker {}",
                    show(&a),
                    show(&b)
                )),
            );
        }
    }
    (stats, None)
}
