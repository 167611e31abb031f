//! §5 Graph operators, exactly, on `BigInt`: one module per family. The sums of products are
//! formed by `mac` in a checked small form that falls back to `BigInt` (never a wrap).
//!
//! Each operator reads its planned input tensors and writes tensors of its
//! planned output shapes; policies are applied by `run`.

pub mod contraction;
pub mod elementwise;
pub mod linear;
pub mod mac;
pub mod movement;
pub mod norm;
pub mod observe;
pub mod requant;
pub mod rq;
pub mod scalar_fn;

use crate::plan::Shape;
use crate::tensor::Tensor;
use crate::whg1::{FillValue, Op, Operand};
use num_bigint::BigInt;
use observe::Observer;

/// Evaluates one operator. `outs` are the planned output shapes; `scalars` the
/// decode's scalar values (already within their ranges); `obs` sees the named
/// intermediates. An `Err` is a broken invariant of the caller (a graph the load
/// checks should have refused), never a refusal.
pub fn eval(
    op: &Op,
    ins: &[&Tensor],
    outs: &[Shape],
    scalars: &[BigInt],
    obs: &mut dyn Observer,
) -> Result<Vec<Tensor>, String> {
    let x = ins[0];
    let out = outs[0];
    let scalar = |k: u32| &scalars[k as usize];
    let one = |t: Tensor| Ok(vec![t]);
    match op {
        Op::Conv(p) => one(linear::conv(p, x, out, obs)),
        Op::ConvTranspose(p) => one(linear::conv_transpose(p, x, out, obs)),
        Op::Rescale(p) => one(requant::rescale(p, x, obs)),
        Op::Chscale(p) => {
            let r = usize::try_from(scalar(p.scalar)).map_err(|_| "chscale's row is not a row index")?;
            one(requant::chscale(p, x, r, obs))
        }
        Op::Mul(p) => one(requant::mul(p, x, ins[1], obs)),
        Op::Add => one(elementwise::add(x, ins[1])),
        Op::ChunkAdd => one(elementwise::chunk_add(x)),
        Op::Clamp { lo, hi } => one(elementwise::clamp(x, *lo, *hi)),
        Op::Relu => one(elementwise::relu(x)),
        Op::Leaky { a, f } => one(elementwise::leaky(x, *a, *f, obs)),
        Op::Abs => one(elementwise::abs(x)),
        Op::Lut16(p) => one(elementwise::lut16(p, x)?),
        Op::Igdn(p) => one(norm::igdn(p, x, obs)),
        Op::LayernormC(p) => one(norm::layernorm_c(p, x, obs)),
        Op::L2norm { eps } => one(norm::l2norm(*eps, x, obs)),
        Op::Softmax => one(norm::softmax(x, obs)),
        Op::Sigmoid => one(scalar_fn::sigmoid(x, obs)),
        Op::Elu { alpha } => one(scalar_fn::elu(x, *alpha, obs)),
        Op::Gram(p) => one(contraction::gram(p, x, ins[1], out, obs)),
        Op::Apply(p) => one(contraction::apply(p, x, ins[1], obs)),
        Op::Concat => one(movement::concat(ins, out)),
        Op::Split { start, .. } => one(movement::split(x, *start as usize, out)),
        Op::PixelShuffle { r } => one(movement::pixel_shuffle(x, *r as usize, out)),
        Op::PixelUnshuffle { r } => one(movement::pixel_unshuffle(x, *r as usize, out)),
        Op::PadRep { .. } => one(movement::pad_rep(x, out)),
        Op::CropTo => one(movement::crop(x, 0, 0, out)),
        Op::Crop(c) => {
            // The plan has checked that the operands fit the input.
            let value = |o: Operand| match o {
                Operand::Const(v) => Ok(v as usize),
                Operand::Scalar(k) => usize::try_from(scalar(k)).map_err(|_| "a crop start is not an index"),
            };
            one(movement::crop(x, value(c.y0)?, value(c.x0)?, out))
        }
        Op::SubposSplit { order } => Ok(movement::subpos_split(x, *order, out)),
        Op::SubposMerge { order } => one(movement::subpos_merge(ins, *order, out)),
        Op::Fill(v) => {
            let value = match *v {
                FillValue::Const(c) => BigInt::from(c),
                FillValue::Scalar(k) => scalar(k).clone(),
            };
            one(movement::fill(&value, out))
        }
    }
}
