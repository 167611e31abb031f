//! §7–§9: the bounds pass, profiles, the verdict and the certificate.
//!
//! `interval` is §8.1–§8.2's arithmetic; `rules` is §8.3, one module per operator
//! family; `pass` visits a graph; `profile` is §7; `npu` is §9.2; `certificate` writes
//! §8.5's canonical bytes; `admissible` is §8.4.

pub mod admissible;
pub mod certificate;
pub mod interval;
pub mod npu;
pub mod pass;
pub mod profile;
pub mod rules;

use crate::refusal::Refusal;
use crate::whg1::Graph;
use pass::Pass;
use profile::{Failure, Profile, node_failure, range_fits};

/// One graph with its role and its pass.
#[derive(Clone, Debug)]
pub struct Certified {
    /// The graph's role (for a bare graph, its file's stem).
    pub name: String,
    /// The graph's WHG1 bytes, whose digest the certificate records.
    pub bytes: Vec<u8>,
    pub graph: Graph,
    pub pass: Pass,
}

impl Certified {
    /// Runs the bounds pass (load step 8's first half) over a loaded graph.
    pub fn new(name: &str, bytes: Vec<u8>, graph: Graph) -> Result<Certified, Refusal> {
        let pass = pass::run(&graph)?;
        Ok(Certified {
            name: name.to_string(),
            bytes,
            graph,
            pass,
        })
    }
}

/// Where a profile first fails (§8.5 *First failure*).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FirstFailure {
    /// The role of the graph.
    pub graph: String,
    /// `"input"`, `"scalar"` or `"node"`.
    pub place: &'static str,
    pub index: usize,
    pub failure: Failure,
}

/// The first input, scalar or node of the graphs, in order, that does not meet `profile`.
pub fn first_failure(graphs: &[Certified], profile: Profile) -> Option<FirstFailure> {
    for c in graphs {
        let g = &c.graph;
        let at = |place, index, failure| {
            Some(FirstFailure {
                graph: c.name.clone(),
                place,
                index,
                failure,
            })
        };
        for (i, inp) in g.inputs.iter().enumerate() {
            let (lo, hi) = g.tensors[inp.tensor as usize].policy.range().unwrap_or((0, 0));
            if !range_fits(lo, hi, profile) {
                return at("input", i, range_failure(lo, hi));
            }
        }
        for (k, s) in g.scalars.iter().enumerate() {
            if !range_fits(s.lo, s.hi, profile) {
                return at("scalar", k, range_failure(s.lo, s.hi));
            }
        }
        for index in 0..g.nodes.len() {
            if let Some(f) = node_failure(g, &c.pass, index, profile) {
                return at("node", index, f);
            }
        }
    }
    None
}

fn range_failure(lo: i64, hi: i64) -> Failure {
    Failure {
        key: "range".into(),
        bits: Some(interval::Interval::new(lo, hi).bits()),
    }
}

/// The profiles the graphs' verdict meets, in ascending order.
pub fn profiles_met(graphs: &[Certified]) -> Vec<Profile> {
    Profile::ALL
        .into_iter()
        .filter(|&p| first_failure(graphs, p).is_none())
        .collect()
}

/// Load step 8 (§10.5): the bounds pass, with `lut16`'s range check and the empty
/// `check` intersection, then the profile `required` against the verdict (§8.6). A graph
/// vector names no capability, so `fill` requires `acc64`, which every `acc32` graph meets
/// too (docs/assumptions.md).
pub fn step8(name: &str, bytes: &[u8], graph: &Graph, required: Profile) -> Result<Certified, Refusal> {
    let certified = Certified::new(name, bytes.to_vec(), graph.clone()).map_err(|r| r.within("load.8.pass"))?;
    if let Some(f) = first_failure(std::slice::from_ref(&certified), required) {
        let why = format!(
            "the verdict does not meet {}: {} {} fails {}",
            required.name(),
            f.place,
            f.index,
            f.failure.key
        );
        return Err(Refusal::new(crate::refusal::Code::ModelMismatch, why).within("load.8.profile"));
    }
    Ok(certified)
}
