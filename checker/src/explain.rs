//! What feeds one output element of a one-operator graph vector, for the grader's report of an
//! element an implementation got wrong (docs/protocol.md, "Grading"): the input elements at the
//! same position, and for an operator that ends in `rq` (§5.1) its steps up to the rounding.

use crate::fill::{self, Inputs};
use crate::num::Round;
use crate::ops::rq;
use crate::run::{Outcome, Sequence};
use crate::whg1::Kind;
use crate::whg1::load;
use serde_json::Value;

/// The operands of element `index` (CHW) of output `output` of decode `decode` of a written-out
/// graph vector (a request or a committed record), in words; `None` when the record is not a
/// one-operator graph without state that loads and completes that decode, or nothing feeds the
/// element at its own position.
pub fn element(record: &Value, decode: usize, output: usize, index: usize) -> Option<String> {
    let request = fill::parse(record).ok()?;
    let graph = load::load(&request.graph).ok()?.checked.graph;
    if graph.ops.len() != 1 || graph.inputs.iter().any(|i| i.kind == Kind::State) {
        return None;
    }
    let d = request.decodes.get(decode)?;
    let Inputs::Written(given, raw) = &d.inputs else {
        return None;
    };
    let (outcome, steps) = rq::traced(|| Sequence::new(&graph).decode(given, &d.scalars));
    let Ok(Outcome::Outputs(outs)) = outcome else {
        return None;
    };
    let out = outs.get(output)?;
    let shape = [out.shape.c, out.shape.h, out.shape.w];
    let mut parts: Vec<String> = given
        .iter()
        .zip(raw)
        .enumerate()
        .filter(|(_, (g, _))| g.shape == shape)
        .map(|(k, (_, r))| format!("inputs[{k}] = {}", r[index]))
        .collect();
    // One `rq` per element of the one output, applied in CHW order.
    if outs.len() == 1 && steps.len() == out.data.len() {
        parts.push(rq_words(&steps[index], out.data[index]));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// `rq_o(v)` (§5.1) in words: `t = v + pre`, `p = t·mult`, the rounding and `y = q + post`, and the
/// output's policy when it changed `y`.
fn rq_words(s: &rq::Steps, element: i64) -> String {
    let round = match s.round {
        Round::Floor => "floor",
        Round::HalfUp => "half_up",
        Round::HalfEven => "half_even",
    };
    let mut w = format!(
        "rq (§5.1): v = {}, t = v + pre = {}, p = t·mult = {}, y = R_{round}(p, {}) + post = {}",
        s.v, s.t, s.p, s.shift, s.y
    );
    if element != s.y {
        w.push_str(&format!(", then the output's policy: {element}"));
    }
    w
}
