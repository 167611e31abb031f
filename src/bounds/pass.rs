//! §8.1 The bounds pass: every tensor's interval, visiting operators in graph order.

use super::interval::Interval;
use super::rules::{self, NodeRule, Sizes};
use crate::plan::{self, Shape, Stage};
use crate::refusal::{Refusal, model_mismatch};
use crate::whg1::load::declared_shapes;
use crate::whg1::{Graph, Policy};
use num_bigint::BigInt;

/// The pass's result for one graph.
#[derive(Clone, Debug)]
pub struct Pass {
    /// Every tensor's interval, after its policy.
    pub tensors: Vec<Interval>,
    /// Each node's rule, in graph order.
    pub nodes: Vec<NodeRule>,
    /// The load-time plan on the declared sizes, when the inputs declare them.
    pub shapes: Option<Vec<Shape>>,
}

/// A tensor's interval from its producer result and its policy: `derived` keeps it,
/// `clamp` clamps both ends, `check` intersects, and an empty intersection refuses the
/// graph (`model_mismatch`).
pub fn after_policy(result: &Interval, policy: Policy) -> Result<Interval, Refusal> {
    match policy {
        Policy::Derived => Ok(result.clone()),
        Policy::Clamp { lo, hi } => {
            let (lo, hi) = (BigInt::from(lo), BigInt::from(hi));
            let clamp = |v: &BigInt| v.max(&lo).min(&hi).clone();
            Ok(Interval {
                lo: clamp(&result.lo),
                hi: clamp(&result.hi),
            })
        }
        Policy::Check { lo, hi } => {
            let i = Interval {
                lo: result.lo.clone().max(lo.into()),
                hi: result.hi.clone().min(hi.into()),
            };
            if i.lo > i.hi {
                return model_mismatch(format!(
                    "the check range [{lo}, {hi}] holds no value of its producer's [{}, {}]",
                    result.lo, result.hi
                ));
            }
            Ok(i)
        }
    }
}

/// Runs the pass over a graph that passed load steps 1–7.
pub fn run(graph: &Graph) -> Result<Pass, Refusal> {
    let shapes = if graph.inputs.iter().all(|i| i.declares_sizes()) {
        Some(plan::shapes(graph, &declared_shapes(graph)?, Stage::Load)?)
    } else {
        None
    };
    let sizes = Sizes {
        shapes: shapes.as_deref(),
    };
    let mut tensors: Vec<Option<Interval>> = vec![None; graph.tensors.len()];
    for inp in &graph.inputs {
        let (lo, hi) = graph.tensors[inp.tensor as usize].policy.range().unwrap_or((0, 0));
        tensors[inp.tensor as usize] = Some(Interval::new(lo, hi));
    }
    let mut nodes = Vec::new();
    for (index, node) in graph.nodes.iter().enumerate() {
        let ins: Vec<Interval> = node
            .inputs
            .iter()
            .map(|&t| tensors[t as usize].clone())
            .collect::<Option<_>>()
            .ok_or_else(|| {
                Refusal::new(
                    crate::refusal::Code::ModelMismatch,
                    "an operator reads a tensor the pass has not reached",
                )
            })?;
        let rule = rules::apply(graph, node, &ins, &sizes)
            .map_err(|r| Refusal::new(r.code, format!("operator {index} ({}): {}", node.op.name(), r.why)))?;
        for (&t, result) in node.outputs.iter().zip(&rule.results) {
            let interval = after_policy(result, graph.tensors[t as usize].policy)
                .map_err(|r| Refusal::new(r.code, format!("operator {index} ({}): {}", node.op.name(), r.why)))?;
            tensors[t as usize] = Some(interval);
        }
        nodes.push(rule);
    }
    let tensors = tensors
        .into_iter()
        .map(|t| t.unwrap_or_else(|| Interval::point(0)))
        .collect();
    Ok(Pass { tensors, nodes, shapes })
}
