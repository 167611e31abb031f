//! §9.2 `wai-ops/1-npu`: each node's flags, and the reasons (§8.5's closed vocabulary, other than
//! `acc32`) a graph is outside the subset, read from the operator alone.

use crate::num::Round;
use crate::whg1::{Graph, Kind, Op, OpKind, Operand, Placement, Rq};

/// The node's flags of §9.2, in ascending order (docs/assumptions.md B6, B7).
pub fn npu_flags(g: &Graph, op: &Op) -> Vec<&'static str> {
    let mut f: Vec<&'static str> = Vec::new();
    let rq_flags = |rq: &Rq, f: &mut Vec<&'static str>| {
        if rq.round == Round::HalfEven {
            f.push("rq_half_even");
        }
        if rq.round == Round::Floor && rq.has_mult() {
            f.push("rq_floor_mult");
        }
        if fault!("npu-post-bias-flag-missing", rq.placement == Placement::Post, false) {
            f.push("rq_post_bias");
        }
        let negative = rq.mult.iter().any(|&m| fault!("npu-neg-mult-zero", m < 0, m <= 0));
        if fault!("npu-neg-mult-flag-missing", negative, false) {
            f.push("rq_neg_mult");
        }
        let limit = fault!("npu-shift-range-32", 31, 32);
        if rq.shift.iter().any(|&s| s > limit) {
            f.push("rq_shift_range");
        }
    };
    match &op.kind {
        OpKind::Conv(p) => rq_flags(&p.rq, &mut f),
        OpKind::ConvT(p) => rq_flags(&p.rq, &mut f),
        OpKind::Rescale(rq) | OpKind::Mul(rq) | OpKind::Gram { rq, .. } | OpKind::Apply { rq, .. } => {
            rq_flags(rq, &mut f)
        }
        OpKind::Chscale { round, shift, m, .. } => {
            f.push("chscale");
            if *round == Round::HalfEven {
                f.push("rq_half_even");
            }
            if *round == Round::Floor {
                f.push("rq_floor_mult");
            }
            if m.iter().any(|&v| fault!("npu-neg-mult-zero", v < 0, v <= 0)) {
                f.push("rq_neg_mult");
            }
            if *shift > 31 {
                f.push("rq_shift_range");
            }
        }
        OpKind::Lut16 { .. } => f.push("lut16"),
        OpKind::Add | OpKind::ChunkAdd => {
            let state = op
                .ins
                .iter()
                .any(|&t| g.inputs.iter().any(|i| i.tensor == t && i.kind == Kind::State));
            if fault!("npu-state-add-missing", state, false) {
                f.push("state_add");
            }
        }
        _ => {}
    }
    f.sort_unstable();
    f.dedup();
    f
}

/// The node's reasons to be outside `wai-ops/1-npu` (§8.5's vocabulary, other than `acc32`).
pub fn npu_reasons(g: &Graph, op: &Op) -> Vec<String> {
    match &op.kind {
        OpKind::Igdn { .. }
        | OpKind::LayerNorm { .. }
        | OpKind::L2Norm { .. }
        | OpKind::Softmax
        | OpKind::Sigmoid
        | OpKind::Elu(_)
        | OpKind::Gram { .. }
        | OpKind::Apply { .. } => vec![format!("op:{}", op.name())],
        OpKind::Conv(p) => {
            let cin = g.channels(op.ins[0]);
            let groups = u64::from(p.groups);
            let cout_differs = fault!("npu-depthwise-cout-unchecked", u64::from(p.cout) != cin, false);
            let bad = (groups != 1 && groups != cin) || (groups == cin && groups > 1 && cout_differs);
            if bad { vec!["conv_groups".to_string()] } else { vec![] }
        }
        OpKind::Crop(ops) if ops.iter().any(|o| matches!(o, Operand::Scalar(_))) => {
            fault!("npu-crop-scalar-missing", vec!["crop_scalar".to_string()], vec![])
        }
        _ => vec![],
    }
}
