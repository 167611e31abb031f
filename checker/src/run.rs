//! A decode through a loaded graph: §4's run steps 1–4 in order, and a sequence of decodes carrying
//! state (§10.3).

use crate::ops::{self, E, Tensor};
use crate::plan::{self, PlanErr, Shape, When};
use crate::refusal::Code;
use crate::whg1::{Graph, Kind, Policy};
use std::borrow::Cow;

/// A data input as a request gives it: its shape and its values (clamped into i128, which keeps
/// every comparison with an i64 bound).
#[derive(Clone, Debug)]
pub struct Given {
    pub shape: [u64; 3],
    pub data: Vec<i128>,
}

/// A decode's outcome.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Outputs(Vec<Tensor>),
    Refused(Code),
}

/// One sequence of decodes through one graph.
pub struct Sequence<'a> {
    g: &'a Graph,
    /// For each input record: the tensor carried from the last completed decode (state inputs only).
    carried: Vec<Option<Tensor>>,
}

impl<'a> Sequence<'a> {
    pub fn new(g: &'a Graph) -> Self {
        Sequence {
            g,
            carried: vec![None; g.inputs.len()],
        }
    }

    /// Runs one decode. `data` holds the data inputs in input-table order; `scalars` every scalar.
    /// A refused decode changes no state.
    pub fn decode(&mut self, data: &[Given], scalars: &[i128]) -> E<Outcome> {
        let outcome = self.decode_once(data, scalars)?;
        if matches!(outcome, Outcome::Refused(_)) {
            fault!("refused-decode-resets-state", (), self.carried.fill(None));
        }
        Ok(outcome)
    }

    fn decode_once(&mut self, data: &[Given], scalars: &[i128]) -> E<Outcome> {
        let g = self.g;
        // Step 1: each input, in input-table order, state inputs included.
        let mut shapes = Vec::with_capacity(g.inputs.len());
        let mut next_data = data.iter();
        let mut first: Option<[u64; 3]> = None;
        for (k, rec) in g.inputs.iter().enumerate() {
            let [c, h, w] = match rec.kind {
                Kind::Data => next_data.next().expect("one given tensor per data input").shape,
                Kind::State => match &self.carried[k] {
                    Some(t) => [t.shape.c, t.shape.h, t.shape.w],
                    None => {
                        let [_, h0, w0] = first.expect("input 0 is data");
                        [g.channels(rec.tensor), h0, w0]
                    }
                },
            };
            let s = Shape { c, h, w };
            if fault!("run-sizes-before-channels", false, too_large(g, k, s)) {
                return Ok(Outcome::Refused(Code::TooLarge));
            }
            if c != g.channels(rec.tensor) || h < 1 || w < 1 {
                return Ok(Outcome::Refused(Code::ModelMismatch));
            }
            if too_large(g, k, s) {
                return Ok(Outcome::Refused(Code::TooLarge));
            }
            if k == 0 {
                first = Some([c, h, w]);
            }
            if fault!("run-values-in-step-1", false, outside_check(g, rec, data, k)) {
                return Ok(Outcome::Refused(Code::FieldRange));
            }
            shapes.push(s);
        }
        // Step 2: each scalar against its declared range.
        let in_range = g
            .scalars
            .iter()
            .zip(scalars)
            .all(|(s, &v)| v >= i128::from(s.lo) && v <= i128::from(s.hi));
        let values: Vec<i64> = scalars
            .iter()
            .zip(&g.scalars)
            .map(|(&v, s)| v.clamp(i128::from(s.lo), i128::from(s.hi)) as i64)
            .collect();
        if fault!("run-scalars-after-plan", !in_range, false) {
            return Ok(Outcome::Refused(Code::FieldRange));
        }
        // Step 3: the run-time plan.
        let planned = match plan::plan(g, &shapes, When::Run(&values)) {
            Ok(p) => p,
            Err(PlanErr::TooLarge) => return Ok(Outcome::Refused(Code::TooLarge)),
            Err(PlanErr::Shape) => return Ok(Outcome::Refused(Code::GeometryMismatch)),
        };
        if fault!("run-scalars-after-plan", false, !in_range) {
            return Ok(Outcome::Refused(Code::FieldRange));
        }
        // Step 4: evaluation, starting with the inputs' policies.
        let mut tensors: Vec<Option<Tensor>> = vec![None; g.tensors.len()];
        let mut next_data = data.iter();
        for (k, rec) in g.inputs.iter().enumerate() {
            // A data input is read in place: a scale tier's tensor holds up to 2^26 elements.
            let raw: Cow<[i128]> = match rec.kind {
                Kind::Data => Cow::Borrowed(&next_data.next().expect("given").data),
                Kind::State => Cow::Owned(match &self.carried[k] {
                    Some(t) => t.data.iter().map(|&v| i128::from(v)).collect(),
                    None => vec![i128::from(fault!("state-init-zero", rec.init, 0)); shapes[k].elems() as usize],
                }),
            };
            let policy = match (rec.kind, &self.carried[k]) {
                (Kind::State, Some(_)) => fault!(
                    "state-policy-skipped",
                    g.tensors[rec.tensor].policy,
                    Policy::Check(i64::MIN, i64::MAX)
                ),
                _ => g.tensors[rec.tensor].policy,
            };
            let vals = match fault!("input-clamp-as-check", policy, as_check(policy)) {
                Policy::Clamp(lo, hi) => raw
                    .iter()
                    .map(|&v| v.clamp(i128::from(lo), i128::from(hi)) as i64)
                    .collect(),
                Policy::Check(lo, hi) => {
                    let outside = raw.iter().any(|&v| v < i128::from(lo) || v > i128::from(hi));
                    if fault!("input-check-ignored", outside, false) {
                        return Ok(Outcome::Refused(Code::FieldRange));
                    }
                    raw.iter().map(|&v| v as i64).collect()
                }
                Policy::Derived => unreachable!("a graph input is check or clamp"),
            };
            tensors[rec.tensor] = Some(Tensor {
                shape: shapes[k],
                data: vals,
            });
        }
        // The producer results before their policies, for `state-carried-before-policy` only.
        #[cfg(feature = "mutants")]
        let mut raw_results: Vec<Option<Tensor>> = vec![None; g.tensors.len()];
        for op in &g.ops {
            let ins: Vec<&Tensor> = op
                .ins
                .iter()
                .map(|&t| tensors[t].as_ref().expect("graph order"))
                .collect();
            let outs: Vec<Shape> = op.outs.iter().map(|&t| planned[t].expect("planned")).collect();
            let early: Option<Vec<Tensor>> = fault!("clamp-policy-before-op", None, clamp_early(g, op, &ins));
            let results = match &early {
                Some(clamped) => ops::eval(op, &clamped.iter().collect::<Vec<_>>(), &outs, &values)?,
                None => ops::eval(op, &ins, &outs, &values)?,
            };
            for (&t, mut r) in op.outs.iter().zip(results) {
                if r.shape != planned[t].expect("planned") || r.data.len() as u128 != r.shape.elems() {
                    return Err(ops::Bug(format!("{} produced a tensor of the wrong shape", op.name())));
                }
                fault!("state-carried-before-policy", (), raw_results[t] = Some(r.clone()));
                match g.tensors[t].policy {
                    Policy::Derived => {}
                    Policy::Clamp(..) if early.is_some() => {} // clamp-policy-before-op clamped the inputs
                    Policy::Clamp(lo, hi) => fault!("clamp-policy-ignored", clamp(&mut r.data, lo, hi), ()),
                    Policy::Check(lo, hi) => {
                        let outside = r
                            .data
                            .iter()
                            .any(|&v| v < lo || fault!("check-hi-exclusive", v > hi, v >= hi));
                        if fault!("check-ignored", outside, false) {
                            return Ok(Outcome::Refused(Code::FieldRange));
                        }
                    }
                }
                tensors[t] = Some(r);
            }
        }
        let outputs: Vec<Tensor> = g
            .outputs
            .iter()
            .map(|&t| tensors[t].clone().expect("every output is defined"))
            .collect();
        // The decode completed: each state input carries its output.
        for (k, rec) in g.inputs.iter().enumerate() {
            if rec.kind == Kind::State {
                let src = fault!(
                    "whg1-state-src-as-tensor",
                    &outputs[rec.src as usize],
                    tensors[rec.src as usize].as_ref().expect("a graph input")
                );
                let carried = Some(fault!(
                    "state-carried-before-policy",
                    src.clone(),
                    raw_results[g.outputs[rec.src as usize]]
                        .clone()
                        .unwrap_or_else(|| src.clone())
                ));
                fault!("state-not-carried", self.carried[k] = carried, ());
            }
        }
        Ok(Outcome::Outputs(outputs))
    }
}

/// `run-values-in-step-1`: data input `k`'s given values against its `check` range.
#[cfg(feature = "mutants")]
fn outside_check(g: &Graph, rec: &crate::whg1::InputRec, data: &[Given], k: usize) -> bool {
    let Policy::Check(lo, hi) = g.tensors[rec.tensor].policy else {
        return false;
    };
    if rec.kind != Kind::Data {
        return false;
    }
    let d = g.inputs[..k].iter().filter(|i| i.kind == Kind::Data).count();
    data[d].data.iter().any(|&v| v < i128::from(lo) || v > i128::from(hi))
}

/// Run step 1's size checks on input `k`: its sides against `max_h` and `max_w` when it declares
/// them, and `C·H·W` against `max_elems` (§4).
fn too_large(g: &Graph, k: usize, s: Shape) -> bool {
    let rec = &g.inputs[k];
    let (max_h, max_w) = fault!("run-max-sides-swapped", (rec.max_h, rec.max_w), (rec.max_w, rec.max_h));
    let sides = rec.declares_sizes() && (s.h > u64::from(max_h) || s.w > u64::from(max_w));
    let cap = u128::from(g.max_elems);
    sides || fault!("run-max-elems-exclusive", s.elems() > cap, s.elems() >= cap)
}

/// A `clamp` policy applied to a produced tensor (§3).
fn clamp(data: &mut [i64], lo: i64, hi: i64) {
    data.iter_mut().for_each(|v| *v = (*v).clamp(lo, hi));
}

/// `input-clamp-as-check`: a clamp input read as a check input.
#[cfg(feature = "mutants")]
fn as_check(p: Policy) -> Policy {
    match p {
        Policy::Clamp(lo, hi) => Policy::Check(lo, hi),
        p => p,
    }
}

/// `clamp-policy-before-op`: an operator whose output has a `clamp` policy sees its inputs clamped
/// to that range, instead of its results (§3). `None` when the output has no such policy.
#[cfg(feature = "mutants")]
fn clamp_early(g: &Graph, op: &crate::whg1::Op, ins: &[&Tensor]) -> Option<Vec<Tensor>> {
    let Policy::Clamp(lo, hi) = g.tensors[op.outs[0]].policy else {
        return None;
    };
    let clamped = ins
        .iter()
        .map(|t| Tensor {
            shape: t.shape,
            data: t.data.iter().map(|v| (*v).clamp(lo, hi)).collect(),
        })
        .collect();
    Some(clamped)
}
