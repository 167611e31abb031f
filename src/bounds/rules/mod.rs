//! §8.3 Operator bound rules: one module per family, as `ops` has.
//!
//! A rule reads the intervals of its operator's input tensors and returns the
//! interval of every named intermediate of Table 8.5-A and of every producer
//! result. A rule that names a channel runs per channel, and the recorder keeps
//! the hull over channels (§8.1).

pub mod contraction;
pub mod elementwise;
pub mod linear;
pub mod movement;
pub mod norm;
pub mod requant;
pub mod rq;
pub mod scalar_fn;

use super::interval::{Interval, Sat, hull};
use crate::plan::Shape;
use crate::refusal::Refusal;
use crate::whg1::{Graph, Node, Op};

/// What a rule gives for one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeRule {
    /// Table 8.5-A's keys, in the table's order, each the hull over channels.
    pub intermediates: Vec<(&'static str, Interval)>,
    /// The producer result of each output.
    pub results: Vec<Interval>,
    /// Whether `sat` changed any result of this node's computation (§8.1).
    pub saturated: bool,
}

/// Collects a node's intervals: saturating arithmetic, and a hull per key.
#[derive(Default)]
pub struct Recorder {
    pub sat: Sat,
    keys: Vec<(&'static str, Interval)>,
}

impl Recorder {
    /// Records `i` under `key`, as the hull with what the key already holds.
    pub fn record(&mut self, key: &'static str, i: &Interval) {
        match self.keys.iter_mut().find(|(k, _)| *k == key) {
            Some((_, held)) => *held = hull([&*held, i]).unwrap_or_else(|| i.clone()),
            None => self.keys.push((key, i.clone())),
        }
    }

    fn finish(self, results: Vec<Interval>) -> NodeRule {
        NodeRule {
            intermediates: self.keys,
            results,
            saturated: self.sat.saturated,
        }
    }
}

/// The sizes a reduction reads (§8.1 *Sizes*): the load-time plan on the
/// declared sizes, when the inputs declare them.
pub struct Sizes<'a> {
    pub shapes: Option<&'a [Shape]>,
}

impl Sizes<'_> {
    fn of(&self, tensor: u32) -> Result<Shape, Refusal> {
        self.shapes
            .and_then(|s| s.get(tensor as usize).copied())
            .ok_or_else(|| {
                Refusal::new(
                    crate::refusal::Code::ModelMismatch,
                    "a reduction needs the declared input sizes",
                )
            })
    }
}

/// Applies the rule of `node`'s operator to its input intervals `ins`.
pub fn apply(graph: &Graph, node: &Node, ins: &[Interval], sizes: &Sizes) -> Result<NodeRule, Refusal> {
    let mut r = Recorder::default();
    let x = &ins[0];
    let results = match &node.op {
        Op::Conv(p) => vec![linear::conv(&mut r, p, x)],
        Op::ConvTranspose(p) => vec![linear::conv_transpose(&mut r, p, x)],
        Op::Rescale(p) => vec![requant::rescale(
            &mut r,
            p,
            x,
            graph.tensors[node.inputs[0] as usize].channels,
        )],
        Op::Chscale(p) => {
            let range = graph.scalars[p.scalar as usize];
            let c = graph.tensors[node.inputs[0] as usize].channels;
            vec![requant::chscale(&mut r, p, x, c, range.lo, range.hi)]
        }
        Op::Mul(p) => vec![requant::mul(
            &mut r,
            p,
            x,
            &ins[1],
            graph.tensors[node.inputs[0] as usize].channels,
        )],
        Op::Gram(p) => {
            let l = node
                .inputs
                .iter()
                .map(|&t| sizes.of(t).map(|s| s.h * s.w))
                .collect::<Result<Vec<_>, _>>()?;
            let c = graph.tensors[node.inputs[0] as usize].channels;
            vec![contraction::gram(
                &mut r,
                p,
                x,
                &ins[1],
                c,
                l.into_iter().max().unwrap_or(0),
            )]
        }
        Op::Apply(p) => {
            let c = graph.tensors[node.inputs[0] as usize].channels;
            vec![contraction::apply(&mut r, p, x, &ins[1], c)]
        }
        Op::Add => vec![elementwise::add(&mut r, x, &ins[1])],
        Op::ChunkAdd => vec![elementwise::chunk_add(&mut r, x)],
        Op::Clamp { lo, hi } => vec![elementwise::clamp(&mut r, x, *lo, *hi)],
        Op::Relu => vec![elementwise::relu(&mut r, x)],
        Op::Abs => vec![elementwise::abs(&mut r.sat, x)],
        Op::Leaky { a, f } => vec![elementwise::leaky(&mut r, x, *a, *f)],
        Op::Lut16(p) => vec![elementwise::lut16(p, x)?],
        Op::Igdn(p) => vec![norm::igdn(&mut r, p, x)],
        Op::LayernormC(p) => vec![norm::layernorm_c(&mut r, p, x)],
        Op::L2norm { eps } => {
            let s = sizes.of(node.inputs[0])?;
            vec![norm::l2norm(&mut r, *eps, x, s.h * s.w)]
        }
        Op::Softmax => vec![norm::softmax(&mut r, x, sizes.of(node.inputs[0])?.w)],
        Op::Sigmoid => vec![scalar_fn::sigmoid(&mut r, x)],
        Op::Elu { alpha } => vec![scalar_fn::elu(&mut r, x, *alpha)],
        Op::Concat
        | Op::Split { .. }
        | Op::PixelShuffle { .. }
        | Op::PixelUnshuffle { .. }
        | Op::PadRep { .. }
        | Op::CropTo
        | Op::Crop(_)
        | Op::SubposSplit { .. }
        | Op::SubposMerge { .. }
        | Op::Fill(_) => movement::results(graph, &node.op, ins, node.outputs.len()),
    };
    Ok(r.finish(results))
}
