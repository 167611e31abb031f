//! Loading a graph: §10.5 steps 1–7 in order (step 8, the bounds pass, is
//! `bounds::step8`).

use super::model::*;
use super::read::read;
use crate::plan::{self, Shape, Stage};
use crate::refusal::{Refusal, model_mismatch, too_large};

/// A graph that passed the load checks.
#[derive(Clone, Debug)]
pub struct Loaded {
    pub graph: Graph,
}

/// Steps 1–7 of §10.5. The first failing step gives the refusal.
pub fn load(bytes: &[u8]) -> Result<Loaded, Refusal> {
    let graph = read(bytes)?; // steps 1–5
    step6_graph_rules(&graph).map_err(|r| r.within("load.6"))?;
    step7_plan(&graph).map_err(|r| r.within("load.7"))?;
    Ok(Loaded { graph })
}

/// Step 6: the graph rules of §10.3 (state rules included) and the exponent
/// rules of §3 and §5.6.
pub fn step6_graph_rules(g: &Graph) -> Result<(), Refusal> {
    // Every tensor is a graph input or the output of exactly one operator,
    // and no graph input is an operator's output.
    let mut producer: Vec<Option<Producer>> = vec![None; g.tensors.len()];
    for (i, inp) in g.inputs.iter().enumerate() {
        let slot = &mut producer[inp.tensor as usize];
        if slot.is_some() {
            return model_mismatch(format!("tensor {} is input {i} and something else", inp.tensor));
        }
        *slot = Some(Producer::Input);
    }
    for (index, node) in g.nodes.iter().enumerate() {
        // An operator reads only graph inputs and the outputs of earlier operators.
        for &t in &node.inputs {
            if producer[t as usize].is_none() {
                return model_mismatch(format!("operator {index} reads tensor {t} before it is produced"));
            }
        }
        for &t in &node.outputs {
            let slot = &mut producer[t as usize];
            match slot {
                Some(Producer::Input) => {
                    return model_mismatch(format!("operator {index} writes graph input {t}"));
                }
                Some(Producer::Node) => {
                    return model_mismatch(format!("tensor {t} is written twice"));
                }
                None => *slot = Some(Producer::Node),
            }
        }
    }
    if let Some(t) = producer.iter().position(Option::is_none) {
        return model_mismatch(format!("tensor {t} is neither a graph input nor an operator's output"));
    }
    // Every graph output is defined: every tensor is, by the rule above.
    for (i, inp) in g.inputs.iter().enumerate() {
        let t = &g.tensors[inp.tensor as usize];
        if t.policy == Policy::Derived {
            return model_mismatch(format!("input {i} has the policy derived"));
        }
        if i == 0 && inp.kind != InputKind::Data {
            return model_mismatch("input 0 is not of kind data");
        }
        if let InputKind::State { src, init } = inp.kind {
            state_rules(g, i, t, src, init)?;
        }
    }
    for (index, node) in g.nodes.iter().enumerate() {
        exponent_rules(g, node).map_err(|why| mm(format!("operator {index} ({}): {why}", node.op.name())))?;
    }
    Ok(())
}

#[derive(Clone, Copy)]
enum Producer {
    Input,
    Node,
}

fn mm(why: String) -> Refusal {
    Refusal::new(crate::refusal::Code::ModelMismatch, why)
}

/// §10.3 State: `src` names an output whose tensor has the state input's
/// channel count, and `init` lies within the state input's declared range.
fn state_rules(g: &Graph, i: usize, t: &TensorRecord, src: u32, init: i64) -> Result<(), Refusal> {
    let Some(&out) = g.outputs.get(src as usize) else {
        return model_mismatch(format!("state input {i}: src {src} is not an output"));
    };
    if g.tensors[out as usize].channels != t.channels {
        return model_mismatch(format!("state input {i}: output {src} has another channel count"));
    }
    match t.policy.range() {
        Some((lo, hi)) if (lo..=hi).contains(&init) => Ok(()),
        _ => model_mismatch(format!("state input {i}: init {init} is outside its declared range")),
    }
}

/// §3 Exponent, and §5.6 for `lut16`.
fn exponent_rules(g: &Graph, node: &Node) -> Result<(), String> {
    let exp = |t: u32| g.tensors[t as usize].exponent;
    let all_or_none_equal = |ts: &mut dyn Iterator<Item = u32>| {
        let es: Vec<Option<i8>> = ts.map(exp).collect();
        es.iter().all(Option::is_none) || (es.iter().all(Option::is_some) && es.windows(2).all(|w| w[0] == w[1]))
    };
    match &node.op {
        Op::Add | Op::Concat | Op::ChunkAdd
            if !all_or_none_equal(&mut node.inputs.iter().chain(&node.outputs).copied()) =>
        {
            return Err("its tensors' exponents are neither all absent nor all equal".into());
        }
        Op::Lut16(l) if (l.e_in != exp(node.inputs[0]) || l.e_out != exp(node.outputs[0])) => {
            return Err("e_in or e_out differs from its tensor's exponent".into());
        }
        _ => {}
    }
    Ok(())
}

/// Step 7: every operator's channel counts; then the rule that a `gram`,
/// `l2norm` or `softmax` needs declared sizes; then, when the inputs declare
/// their sizes, every shape planned on them.
pub fn step7_plan(g: &Graph) -> Result<(), Refusal> {
    plan::channels(g)?;
    let declared = g.inputs.iter().all(Input::declares_sizes);
    if !declared
        && let Some(node) = g
            .nodes
            .iter()
            .find(|n| matches!(n.op, Op::Gram(_) | Op::L2norm { .. } | Op::Softmax))
    {
        return model_mismatch(format!("a {} needs the inputs to declare their sizes", node.op.name()));
    }
    if declared {
        plan::shapes(g, &declared_shapes(g)?, Stage::Load)?;
    }
    Ok(())
}

/// Each input at its declared sizes, within `max_elems` (docs/assumptions.md).
pub fn declared_shapes(g: &Graph) -> Result<Vec<Shape>, Refusal> {
    g.inputs
        .iter()
        .enumerate()
        .map(|(i, inp)| {
            let shape = Shape::new(
                u64::from(g.tensors[inp.tensor as usize].channels),
                inp.max_h.into(),
                inp.max_w.into(),
            );
            match shape.elems() {
                Some(e) if e <= u64::from(g.max_elems) => Ok(shape),
                _ => too_large(format!(
                    "input {i}: its declared size {shape:?} passes max_elems {}",
                    g.max_elems
                )),
            }
        })
        .collect()
}
