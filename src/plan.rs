//! Planning (§3 caps, §4 run step 3, §5 shape rules, §10.5 step 7).
//!
//! Channel counts are planned once at load. Shapes are planned at load on the
//! declared sizes (when the inputs declare them) and at every decode on the
//! decode's sizes and scalars. Every size is formed in 64 bits with overflow
//! checked, and refused before anything is allocated.

use crate::refusal::{Code, Refusal, model_mismatch, too_large};
use crate::whg1::model::*;
use num_bigint::BigInt;

/// A tensor's shape `[C, H, W]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub c: u64,
    pub h: u64,
    pub w: u64,
}

impl Shape {
    pub fn new(c: u64, h: u64, w: u64) -> Shape {
        Shape { c, h, w }
    }

    /// `C·H·W`, or `None` past 64 bits.
    pub fn elems(&self) -> Option<u64> {
        self.c.checked_mul(self.h)?.checked_mul(self.w)
    }
}

/// Whether a shape is planned at load on declared sizes, or at run time on a
/// decode's sizes and scalars. They differ in the code a broken shape rule
/// gives and in how `crop` reads its scalar operands (§5.10).
#[derive(Clone, Copy, Debug)]
pub enum Stage<'a> {
    Load,
    Run { scalars: &'a [BigInt] },
}

impl Stage<'_> {
    fn shape_code(&self) -> Code {
        match self {
            Stage::Load => Code::ModelMismatch,
            Stage::Run { .. } => Code::GeometryMismatch,
        }
    }
}

/// A size an operator forms before its shape rule is read: refused `too_large`
/// past 64 bits or past `2^26` (§3, §4 run step 3).
fn formed(size: Option<u64>, what: &str) -> Result<u64, Refusal> {
    match size {
        Some(v) if v <= CAP => Ok(v),
        _ => too_large::<u64>(format!("{what} passes 2^26")).map_err(|r| r.within("size")),
    }
}

// ---------------------------------------------------------------------------
// Channel counts (load step 7, and §10.3's rule that each operator's output
// channel count equals its output tensor's).

/// Plans every operator's channel counts, in graph order.
pub fn channels(graph: &Graph) -> Result<(), Refusal> {
    for (index, node) in graph.nodes.iter().enumerate() {
        let cin: Vec<u64> = node
            .inputs
            .iter()
            .map(|&t| u64::from(graph.tensors[t as usize].channels))
            .collect();
        let out_records: Vec<u64> = node
            .outputs
            .iter()
            .map(|&t| u64::from(graph.tensors[t as usize].channels))
            .collect();
        let derived = node_channels(&node.op, &cin, &out_records).map_err(|why| {
            Refusal::new(
                Code::ModelMismatch,
                format!("operator {index} ({}): {why}", node.op.name()),
            )
        })?;
        if derived != out_records {
            return model_mismatch(format!(
                "operator {index} ({}): output channels {derived:?} differ from the tensor records {out_records:?}",
                node.op.name()
            ));
        }
    }
    Ok(())
}

fn need(cond: bool, why: &str) -> Result<(), String> {
    if cond { Ok(()) } else { Err(why.to_string()) }
}

/// The output channel counts §5 derives from the input channel counts (`fill`'s come
/// from its records).
pub fn node_channels(op: &Op, cin: &[u64], out_records: &[u64]) -> Result<Vec<u64>, String> {
    let c = cin[0];
    let same = |c: u64| Ok(vec![c]);
    match op {
        Op::Conv(p) => {
            need(c.is_multiple_of(u64::from(p.groups)), "cin is not a multiple of groups")?;
            need(
                u64::from(p.cout) % u64::from(p.groups) == 0,
                "cout is not a multiple of groups",
            )?;
            same(u64::from(p.cout))
        }
        Op::ConvTranspose(p) => same(u64::from(p.cout)),
        Op::Add => {
            need(cin[1] == c, "a and b have different channel counts")?;
            same(c)
        }
        Op::Mul(_) => {
            need(cin[1] == c || cin[1] == 1, "b has neither a's channel count nor 1")?;
            same(c)
        }
        Op::Concat => same(cin.iter().sum()),
        Op::ChunkAdd => {
            need(c.is_multiple_of(2), "C is odd")?;
            same(c / 2)
        }
        Op::Split { start, count } => {
            need(u64::from(*start) + u64::from(*count) <= c, "start + count passes C")?;
            same(u64::from(*count))
        }
        Op::PixelShuffle { r } => {
            let r2 = u128::from(*r) * u128::from(*r);
            need(u128::from(c) % r2 == 0, "C is not a multiple of r²")?;
            same((u128::from(c) / r2) as u64)
        }
        Op::PixelUnshuffle { r } => {
            let out = u128::from(c) * u128::from(*r) * u128::from(*r);
            need(out <= u128::from(u32::MAX), "C·r² does not fit a channel count")?;
            same(out as u64)
        }
        Op::SubposSplit { .. } => Ok(vec![c; 4]),
        Op::SubposMerge { .. } => {
            need(
                cin.iter().all(|&x| x == c),
                "the four inputs have different channel counts",
            )?;
            same(c)
        }
        Op::Gram(g) => {
            need(cin[1] == c, "A and B have different channel counts")?;
            need(c.is_multiple_of(u64::from(g.groups)), "C is not a multiple of groups")?;
            same(c)
        }
        Op::Apply(g) => {
            need(cin[1] == c, "A and V have different channel counts")?;
            need(c.is_multiple_of(u64::from(g.groups)), "C is not a multiple of groups")?;
            same(c)
        }
        // Only `ref`'s shape is read (docs/assumptions.md: its channels are free).
        Op::CropTo => same(c),
        // The output's channels come from its tensor record (§5.10).
        Op::Fill(_) => Ok(out_records.to_vec()),
        Op::Rescale(_)
        | Op::Chscale(_)
        | Op::Lut16(_)
        | Op::Clamp { .. }
        | Op::Relu
        | Op::Leaky { .. }
        | Op::PadRep { .. }
        | Op::Igdn(_)
        | Op::Abs
        | Op::Crop(_)
        | Op::LayernormC(_)
        | Op::L2norm { .. }
        | Op::Softmax
        | Op::Sigmoid
        | Op::Elu { .. } => same(c),
    }
}

// ---------------------------------------------------------------------------
// Shapes (§4 run step 3; §10.5 step 7 on declared sizes).

/// Plans every tensor's shape from the inputs' shapes (in input-table order,
/// each already within `max_elems`), operator by operator in graph order. For
/// each operator: the sizes it forms (`too_large`), its shape rule, then each
/// output against `max_elems` (`too_large`).
pub fn shapes(graph: &Graph, input_shapes: &[Shape], stage: Stage) -> Result<Vec<Shape>, Refusal> {
    let mut planned: Vec<Option<Shape>> = vec![None; graph.tensors.len()];
    for (inp, shape) in graph.inputs.iter().zip(input_shapes) {
        planned[inp.tensor as usize] = Some(*shape);
    }
    for (index, node) in graph.nodes.iter().enumerate() {
        let ins: Vec<Shape> = node
            .inputs
            .iter()
            .map(|&t| planned[t as usize])
            .collect::<Option<_>>()
            .ok_or_else(|| {
                Refusal::new(
                    Code::ModelMismatch,
                    format!("operator {index} reads a tensor not yet planned"),
                )
            })?;
        let out_c: Vec<u64> = node
            .outputs
            .iter()
            .map(|&t| u64::from(graph.tensors[t as usize].channels))
            .collect();
        let outs = node_shapes(graph, &node.op, &ins, &out_c, stage).map_err(|r| Refusal {
            why: format!("operator {index} ({}): {}", node.op.name(), r.why),
            ..r
        })?;
        for (k, (&t, shape)) in node.outputs.iter().zip(&outs).enumerate() {
            if shape.elems().is_none_or(|e| e > u64::from(graph.max_elems)) {
                let why = format!(
                    "operator {index} ({}): output {k} {shape:?} passes max_elems {}",
                    node.op.name(),
                    graph.max_elems
                );
                return Err(Refusal::new(Code::TooLarge, why).within("max_elems"));
            }
            planned[t as usize] = Some(*shape);
        }
    }
    planned
        .into_iter()
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| Refusal::new(Code::ModelMismatch, "a tensor is never planned"))
}

/// One operator's output shapes, given its input shapes and output channels.
fn node_shapes(graph: &Graph, op: &Op, ins: &[Shape], out_c: &[u64], stage: Stage) -> Result<Vec<Shape>, Refusal> {
    let x = ins[0];
    let rule = |cond: bool, why: &str| -> Result<(), Refusal> {
        if cond {
            Ok(())
        } else {
            Err(Refusal::new(stage.shape_code(), why.to_string()).within("shape"))
        }
    };
    let like = |s: Shape| Ok(vec![Shape::new(out_c[0], s.h, s.w)]);
    match op {
        Op::Conv(p) => {
            let hp = formed(x.h.checked_add(2 * u64::from(p.ph)), "the padded side H + 2ph")?;
            let wp = formed(x.w.checked_add(2 * u64::from(p.pw)), "the padded side W + 2pw")?;
            rule(
                hp >= u64::from(p.kh) && wp >= u64::from(p.kw),
                "the kernel is larger than the padded input",
            )?;
            let ho = (hp - u64::from(p.kh)) / u64::from(p.sh) + 1;
            let wo = (wp - u64::from(p.kw)) / u64::from(p.sw) + 1;
            Ok(vec![Shape::new(out_c[0], ho, wo)])
        }
        Op::ConvTranspose(p) => {
            let uncropped = |n: u64, s: u32, k: u32, op: u32| {
                (n - 1)
                    .checked_mul(u64::from(s))?
                    .checked_add(u64::from(k))?
                    .checked_add(u64::from(op))
            };
            let uh = formed(uncropped(x.h, p.sh, p.kh, p.oph), "the uncropped side uh")?;
            let uw = formed(uncropped(x.w, p.sw, p.kw, p.opw), "the uncropped side uw")?;
            formed(
                u64::from(p.cout).checked_mul(uh).and_then(|v| v.checked_mul(uw)),
                "the uncropped output cout·uh·uw",
            )?;
            let (ho, wo) = (
                i128::from(uh) - 2 * i128::from(p.ph),
                i128::from(uw) - 2 * i128::from(p.pw),
            );
            rule(ho >= 1 && wo >= 1, "Ho or Wo is below 1")?;
            Ok(vec![Shape::new(out_c[0], ho as u64, wo as u64)])
        }
        Op::Add | Op::Mul(_) => {
            rule(ins[1].h == x.h && ins[1].w == x.w, "the two inputs' sizes differ")?;
            like(x)
        }
        Op::Concat => {
            rule(
                ins.iter().all(|s| s.h == x.h && s.w == x.w),
                "the inputs do not share H and W",
            )?;
            like(x)
        }
        Op::PixelShuffle { r } => {
            let h = formed(x.h.checked_mul(u64::from(*r)), "the output side H·r")?;
            let w = formed(x.w.checked_mul(u64::from(*r)), "the output side W·r")?;
            Ok(vec![Shape::new(out_c[0], h, w)])
        }
        Op::PixelUnshuffle { r } => {
            let r = u64::from(*r);
            rule(
                x.h.is_multiple_of(r) && x.w.is_multiple_of(r),
                "H or W is not a multiple of r",
            )?;
            Ok(vec![Shape::new(out_c[0], x.h / r, x.w / r)])
        }
        Op::PadRep { m } => {
            let m = u64::from(*m);
            let h = formed(x.h.div_ceil(m).checked_mul(m), "the output side ⌈H/m⌉·m")?;
            let w = formed(x.w.div_ceil(m).checked_mul(m), "the output side ⌈W/m⌉·m")?;
            Ok(vec![Shape::new(out_c[0], h, w)])
        }
        Op::CropTo => {
            rule(ins[1].h <= x.h && ins[1].w <= x.w, "ref is larger than in")?;
            Ok(vec![Shape::new(out_c[0], ins[1].h, ins[1].w)])
        }
        Op::Crop(c) => {
            let (h, w) = crop_sides(graph, c, x, stage)?;
            Ok(vec![Shape::new(out_c[0], h, w)])
        }
        Op::SubposSplit { .. } => {
            rule(x.h.is_multiple_of(2) && x.w.is_multiple_of(2), "H or W is odd")?;
            Ok(vec![Shape::new(x.c, x.h / 2, x.w / 2); 4])
        }
        Op::SubposMerge { .. } => {
            // The output sides are formed from the first input's (docs/assumptions.md).
            let h = formed(x.h.checked_mul(2), "the output side 2H")?;
            let w = formed(x.w.checked_mul(2), "the output side 2W")?;
            rule(ins.iter().all(|s| *s == x), "the four inputs' shapes differ")?;
            Ok(vec![Shape::new(x.c, h, w)])
        }
        Op::Gram(g) => {
            rule(ins[1] == x, "A and B have different shapes")?;
            Ok(vec![Shape::new(x.c, 1, x.c / u64::from(g.groups))])
        }
        Op::Apply(g) => {
            let d = x.c / u64::from(g.groups);
            rule(x.h == 1 && x.w == d, "A is not [C, 1, C/groups]")?;
            Ok(vec![ins[1]])
        }
        Op::ChunkAdd
        | Op::Split { .. }
        | Op::Fill(_)
        | Op::Rescale(_)
        | Op::Chscale(_)
        | Op::Lut16(_)
        | Op::Clamp { .. }
        | Op::Relu
        | Op::Leaky { .. }
        | Op::Igdn(_)
        | Op::Abs
        | Op::LayernormC(_)
        | Op::L2norm { .. }
        | Op::Softmax
        | Op::Sigmoid
        | Op::Elu { .. } => like(x),
    }
}

/// `crop`'s output sides (§5.10). At run time the operands take their values;
/// at load each side is planned on the smallest start and the largest length.
fn crop_sides(graph: &Graph, c: &Crop, x: Shape, stage: Stage) -> Result<(u64, u64), Refusal> {
    let side = |start: Operand, len: Operand, size: u64| -> Result<u64, Refusal> {
        let (s0, n): (i128, i128) = match stage {
            Stage::Run { scalars } => (run_operand(start, scalars), run_operand(len, scalars)),
            Stage::Load => {
                let s0 = match start {
                    Operand::Const(v) => i128::from(v),
                    Operand::Scalar(_) => 0,
                };
                let n = match len {
                    Operand::Const(v) => i128::from(v),
                    Operand::Scalar(k) => i128::from(graph.scalars[k as usize].hi).min(i128::from(size) - s0),
                };
                (s0, n)
            }
        };
        if s0 >= 0 && n >= 1 && s0 + n <= i128::from(size) {
            Ok(n as u64)
        } else {
            let why = format!("a crop side (start {s0}, length {n}) does not fit {size}");
            Err(Refusal::new(stage.shape_code(), why).within("shape"))
        }
    };
    Ok((side(c.y0, c.h, x.h)?, side(c.x0, c.w, x.w)?))
}

/// A crop operand's value in this decode. Scalars were checked against their
/// `i64` ranges in run step 2.
fn run_operand(o: Operand, scalars: &[BigInt]) -> i128 {
    match o {
        Operand::Const(v) => i128::from(v),
        Operand::Scalar(k) => i128::try_from(&scalars[k as usize]).unwrap_or(i128::MIN),
    }
}
