//! §9.2 `wai-ops/1-npu`: each node's flags, and the closed vocabulary of reasons a
//! set of graphs is outside the subset.

use crate::num::Round;
use crate::whg1::{Graph, InputKind, Node, Op, Operand, Placement, Rq};

/// The flags of one node, in ascending order.
pub fn flags(graph: &Graph, node: &Node) -> Vec<&'static str> {
    let mut flags = Vec::new();
    let rq = |rq: &Rq, flags: &mut Vec<&'static str>| {
        if rq.round == Round::HalfEven {
            flags.push("rq_half_even");
        }
        // "Has a multiplier": the field is present, whatever it holds (docs/assumptions.md).
        if rq.round == Round::Floor && rq.mult.is_some() {
            flags.push("rq_floor_mult");
        }
        if rq.bias.as_ref().is_some_and(|b| b.placement == Placement::Post) {
            flags.push("rq_post_bias");
        }
        if rq
            .mult
            .as_ref()
            .is_some_and(|m| m.values.values().iter().any(|&v| v < 0))
        {
            flags.push("rq_neg_mult");
        }
        if rq.shift.values().iter().any(|&s| s > 31) {
            flags.push("rq_shift_range");
        }
    };
    match &node.op {
        Op::Conv(p) => rq(&p.rq, &mut flags),
        Op::ConvTranspose(p) => rq(&p.rq, &mut flags),
        Op::Rescale(p) | Op::Mul(p) => rq(p, &mut flags),
        Op::Gram(p) | Op::Apply(p) => rq(&p.rq, &mut flags),
        Op::Chscale(p) => {
            flags.push("chscale");
            // chscale's multiplier is M, always present.
            if p.round == Round::HalfEven {
                flags.push("rq_half_even");
            }
            if p.round == Round::Floor {
                flags.push("rq_floor_mult");
            }
            if p.m.iter().any(|&v| v < 0) {
                flags.push("rq_neg_mult");
            }
            if p.shift > 31 {
                flags.push("rq_shift_range");
            }
        }
        Op::Lut16(_) => flags.push("lut16"),
        Op::Add | Op::ChunkAdd => {
            let state = node.inputs.iter().any(|&t| {
                graph
                    .inputs
                    .iter()
                    .any(|i| i.tensor == t && matches!(i.kind, InputKind::State { .. }))
            });
            if state {
                flags.push("state_add");
            }
        }
        _ => {}
    }
    flags.sort_unstable();
    flags
}

/// The reasons a graph's operators put it outside the subset (without `"acc32"`,
/// which the verdict adds).
pub fn reasons(graph: &Graph) -> Vec<String> {
    let mut reasons = Vec::new();
    for node in &graph.nodes {
        match &node.op {
            Op::Igdn(_)
            | Op::LayernormC(_)
            | Op::L2norm { .. }
            | Op::Softmax
            | Op::Sigmoid
            | Op::Elu { .. }
            | Op::Gram(_)
            | Op::Apply(_) => reasons.push(format!("op:{}", node.op.name())),
            Op::Conv(p) => {
                let cin = graph.tensors[node.inputs[0] as usize].channels;
                let depthwise = p.groups == cin && p.cout == cin;
                if p.groups != 1 && !depthwise {
                    reasons.push("conv_groups".into());
                }
            }
            Op::Crop(c) if [c.y0, c.x0, c.h, c.w].iter().any(|o| matches!(o, Operand::Scalar(_))) => {
                reasons.push("crop_scalar".into())
            }
            _ => {}
        }
    }
    reasons
}
