//! §4 run steps 1–4 and §10.3 state carried across a sequence.

use crate::ops;
use crate::ops::observe::{Observer, Silent};
use crate::plan::{self, Shape, Stage};
use crate::refusal::{Code, Refusal};
use crate::tensor::Tensor;
use crate::whg1::{Graph, InputKind, Loaded, Policy};
use num_bigint::BigInt;

/// Why a decode stopped without outputs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stop {
    /// A refusal of §4: the decode's outcome.
    Refused(Refusal),
    /// Not an outcome: the request does not fit the graph (for example the
    /// wrong number of inputs), or a graph reached evaluation that the load
    /// checks should have refused.
    Error(String),
}

impl From<Refusal> for Stop {
    fn from(r: Refusal) -> Stop {
        Stop::Refused(r)
    }
}

fn refuse<T>(at: &str, code: Code, why: String) -> Result<T, Stop> {
    Err(Stop::Refused(Refusal::new(code, why).within(at)))
}

/// A sequence of decodes through one loaded graph (§10.3): each state input is
/// `init` until a decode completes, then what output `src` held at the end of
/// the last completed decode. A refused decode changes no state.
pub struct Sequence<'a> {
    graph: &'a Graph,
    /// Per input-table position: the carried tensor of a state input, once a
    /// decode has completed.
    carried: Vec<Option<Tensor>>,
}

impl<'a> Sequence<'a> {
    pub fn new(loaded: &'a Loaded) -> Sequence<'a> {
        Sequence {
            graph: &loaded.graph,
            carried: vec![None; loaded.graph.inputs.len()],
        }
    }

    /// One decode: `data` holds the data inputs in input-table order, `scalars`
    /// the scalar values in scalar-table order. Returns the graph outputs in
    /// output-table order.
    pub fn decode(&mut self, data: Vec<Tensor>, scalars: &[BigInt]) -> Result<Vec<Tensor>, Stop> {
        self.decode_observed(data, scalars, &mut Silent)
    }

    /// `decode`, with every named intermediate the operators form shown to `obs`,
    /// each tagged with the index of its node.
    pub fn decode_observed(
        &mut self,
        data: Vec<Tensor>,
        scalars: &[BigInt],
        obs: &mut dyn NodeObserver,
    ) -> Result<Vec<Tensor>, Stop> {
        let g = self.graph;
        let n_data = g.inputs.iter().filter(|i| i.kind == InputKind::Data).count();
        if data.len() != n_data {
            return Err(Stop::Error(format!(
                "the graph has {n_data} data inputs and the decode gives {}",
                data.len()
            )));
        }
        if scalars.len() != g.scalars.len() {
            return Err(Stop::Error(format!(
                "the graph has {} scalars and the decode gives {}",
                g.scalars.len(),
                scalars.len()
            )));
        }
        let mut data = data.into_iter();
        let mut given: Vec<Option<Tensor>> = Vec::new();
        for inp in &g.inputs {
            given.push(if inp.kind == InputKind::Data { data.next() } else { None });
        }

        let shapes = self.step1_inputs(&given)?;
        step2_scalars(g, scalars)?;
        let planned = plan::shapes(g, &shapes, Stage::Run { scalars }).map_err(|r| r.within("run.3"))?;
        let values = self.step4_evaluate(given, &planned, scalars, obs)?;

        // The decode completed: every state input now carries its output.
        let outputs: Vec<Tensor> = g.outputs.iter().map(|&t| values[t as usize].clone()).collect();
        for (i, inp) in g.inputs.iter().enumerate() {
            if let InputKind::State { src, .. } = inp.kind {
                self.carried[i] = Some(outputs[src as usize].clone());
            }
        }
        Ok(outputs)
    }

    /// Step 1: each input in input-table order, state inputs included: its
    /// channel count and `H, W ≥ 1` (`model_mismatch`), then its declared sizes
    /// and `max_elems` (`too_large`). No value is read, and an `init` state is
    /// not yet formed.
    fn step1_inputs(&self, given: &[Option<Tensor>]) -> Result<Vec<Shape>, Stop> {
        let g = self.graph;
        let mut shapes = Vec::new();
        for (i, inp) in g.inputs.iter().enumerate() {
            let shape = match (&given[i], &self.carried[i]) {
                (Some(t), _) | (None, Some(t)) => t.shape,
                // `init`, sized from input 0 at this decode (input 0 is data).
                (None, None) => {
                    let first: &Shape = shapes.first().ok_or_else(|| Stop::Error("input 0 is a state".into()))?;
                    Shape {
                        c: u64::from(g.tensors[inp.tensor as usize].channels),
                        ..*first
                    }
                }
            };
            let channels = u64::from(g.tensors[inp.tensor as usize].channels);
            if shape.c != channels {
                return refuse(
                    "run.1.channels",
                    Code::ModelMismatch,
                    format!("input {i} has {} channels, its record {channels}", shape.c),
                );
            }
            if shape.h < 1 || shape.w < 1 {
                return refuse("run.1.sides", Code::ModelMismatch, format!("input {i} has a side of 0"));
            }
            if inp.declares_sizes() && (shape.h > u64::from(inp.max_h) || shape.w > u64::from(inp.max_w)) {
                return refuse(
                    "run.1.declared",
                    Code::TooLarge,
                    format!("input {i} is larger than its declared max_h, max_w"),
                );
            }
            if shape.elems().is_none_or(|e| e > u64::from(g.max_elems)) {
                return refuse(
                    "run.1.max_elems",
                    Code::TooLarge,
                    format!("input {i} passes max_elems {}", g.max_elems),
                );
            }
            shapes.push(shape);
        }
        Ok(shapes)
    }

    /// Step 4: the inputs' policies, in input-table order, then the operators
    /// in graph order, each output's policy applied as it is produced.
    fn step4_evaluate(
        &self,
        given: Vec<Option<Tensor>>,
        planned: &[Shape],
        scalars: &[BigInt],
        obs: &mut dyn NodeObserver,
    ) -> Result<Vec<Tensor>, Stop> {
        let g = self.graph;
        let mut values: Vec<Option<Tensor>> = vec![None; g.tensors.len()];
        for (i, (inp, t)) in g.inputs.iter().zip(given).enumerate() {
            let t = match (t, &self.carried[i], inp.kind) {
                (Some(t), _, _) => t,
                (None, Some(carried), _) => carried.clone(),
                (None, None, InputKind::State { init, .. }) => {
                    Tensor::filled(planned[inp.tensor as usize], &init.into())
                }
                (None, None, InputKind::Data) => {
                    return Err(Stop::Error(format!("data input {i} is missing")));
                }
            };
            obs.input(i, &t);
            let policy = g.tensors[inp.tensor as usize].policy;
            let t = apply_policy(t, policy).map_err(|r| in_context(r.within("run.4.input"), &format!("input {i}")))?;
            values[inp.tensor as usize] = Some(t);
        }
        for (index, node) in g.nodes.iter().enumerate() {
            let ins: Vec<&Tensor> = node
                .inputs
                .iter()
                .map(|&t| values[t as usize].as_ref())
                .collect::<Option<_>>()
                .ok_or_else(|| Stop::Error(format!("operator {index} reads a tensor with no value")))?;
            let outs: Vec<Shape> = node.outputs.iter().map(|&t| planned[t as usize]).collect();
            let results = ops::eval(&node.op, &ins, &outs, scalars, &mut AtNode { index, inner: obs })
                .map_err(|e| Stop::Error(format!("operator {index} ({}): {e}", node.op.name())))?;
            for (k, (&t, result)) in node.outputs.iter().zip(results).enumerate() {
                obs.result(index, k, &result);
                let policy = g.tensors[t as usize].policy;
                let context = format!("operator {index} ({}) output tensor {t}", node.op.name());
                values[t as usize] =
                    Some(apply_policy(result, policy).map_err(|r| in_context(r.within("run.4.check"), &context))?);
            }
        }
        values
            .into_iter()
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| Stop::Error("a tensor has no value".into()))
    }
}

/// Sees every named intermediate of a decode, with the index of the node that formed it,
/// and every input and producer result before its policy applies.
pub trait NodeObserver {
    fn see(&mut self, node: usize, key: &'static str, channel: usize, value: &BigInt);
    /// Input `index` as the decode supplies it (or as the state holds it).
    fn input(&mut self, _index: usize, _t: &Tensor) {}
    /// Output `k` of node `node`: its producer result.
    fn result(&mut self, _node: usize, _k: usize, _t: &Tensor) {}
}

impl NodeObserver for Silent {
    fn see(&mut self, _: usize, _: &'static str, _: usize, _: &BigInt) {}
}

/// Tags one node's observations with its index.
struct AtNode<'a> {
    index: usize,
    inner: &'a mut dyn NodeObserver,
}

impl Observer for AtNode<'_> {
    fn see(&mut self, key: &'static str, channel: usize, value: &BigInt) {
        self.inner.see(self.index, key, channel, value);
    }
}

fn in_context(r: Refusal, context: &str) -> Stop {
    Stop::Refused(Refusal {
        why: format!("{context}: {}", r.why),
        ..r
    })
}

/// Step 2: each scalar against its declared range (`field_range`).
fn step2_scalars(g: &Graph, scalars: &[BigInt]) -> Result<(), Stop> {
    for (k, (s, v)) in g.scalars.iter().zip(scalars).enumerate() {
        if *v < BigInt::from(s.lo) || *v > BigInt::from(s.hi) {
            return refuse(
                "run.2",
                Code::FieldRange,
                format!("scalar {k} = {v} is outside [{}, {}]", s.lo, s.hi),
            );
        }
    }
    Ok(())
}

/// §3: `clamp` replaces each value by `clamp(v, lo, hi)`; `check` refuses the
/// decode (`field_range`) if any element lies outside `[lo, hi]`.
pub fn apply_policy(t: Tensor, policy: Policy) -> Result<Tensor, Refusal> {
    match policy {
        Policy::Derived => Ok(t),
        Policy::Clamp { lo, hi } => Ok(crate::ops::elementwise::clamp(&t, lo, hi)),
        Policy::Check { lo, hi } => {
            let (lo_b, hi_b) = (BigInt::from(lo), BigInt::from(hi));
            match t.data.iter().position(|v| *v < lo_b || *v > hi_b) {
                None => Ok(t),
                Some(at) => Err(Refusal::new(
                    Code::FieldRange,
                    format!("element {at} = {} is outside [{lo}, {hi}]", t.data[at]),
                )),
            }
        }
    }
}
