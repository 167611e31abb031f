//! Evaluation of the 30 graph operators (§5) in fixed width: tensors are i64, and every wider value
//! (a `wide` or `product` intermediate) is i128. Every operation that could leave its width is
//! checked; since a loaded graph's certificate meets `acc64`, an overflow here is a bug of the
//! checker, reported as [`Bug`], never wrapped.

mod acc;
mod contraction;
mod elementwise;
mod linear;
mod movement;
mod norm;
mod requant;
pub mod rq;
mod scalar_fn;

use crate::plan::Shape;
use crate::whg1::{Op, OpKind};

/// An overflow the certificate should have excluded: a bug of the checker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bug(pub String);

pub type E<T> = Result<T, Bug>;

/// Converts a failed checked operation into a [`Bug`] naming the value.
pub fn ck<T>(v: Option<T>, what: &str) -> E<T> {
    v.ok_or_else(|| Bug(format!("overflow in {what}")))
}

/// A tensor `[C, H, W]` in CHW order (§3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tensor {
    pub shape: Shape,
    pub data: Vec<i64>,
}

impl Tensor {
    pub fn filled(shape: Shape, v: i64) -> Tensor {
        Tensor {
            shape,
            data: vec![v; shape.elems() as usize],
        }
    }
    pub fn dims(&self) -> (usize, usize, usize) {
        (self.shape.c as usize, self.shape.h as usize, self.shape.w as usize)
    }
    /// The element at `(c, y, x)`.
    pub fn at(&self, c: usize, y: usize, x: usize) -> i64 {
        let (_, h, w) = self.dims();
        self.data[(c * h + y) * w + x]
    }
    /// Channel `c`'s plane.
    pub fn plane(&self, c: usize) -> &[i64] {
        let (_, h, w) = self.dims();
        &self.data[c * h * w..(c + 1) * h * w]
    }
}

/// Runs one operator on its inputs; `outs` are the planned output shapes, `scalars` this decode's values.
pub fn eval(op: &Op, ins: &[&Tensor], outs: &[Shape], scalars: &[i64]) -> E<Vec<Tensor>> {
    let x = ins[0];
    let o = outs[0];
    let one = |t: Tensor| Ok(vec![t]);
    match &op.kind {
        OpKind::Conv(p) => one(linear::conv(p, x, o)?),
        OpKind::ConvT(p) => one(linear::conv_transpose(p, x, o)?),
        OpKind::Rescale(rq) => one(requant::rescale(rq, x)?),
        OpKind::Chscale {
            scalar,
            round,
            shift,
            m,
            ..
        } => one(requant::chscale(x, scalars[*scalar], *round, u32::from(*shift), m)?),
        OpKind::Mul(rq) => one(requant::mul(rq, x, ins[1])?),
        OpKind::Lut16 { table, .. } => one(elementwise::lut16(x, table)?),
        OpKind::Add => one(elementwise::add(x, ins[1])?),
        OpKind::ChunkAdd => one(elementwise::chunk_add(x)?),
        // Equivalent when written max(min(v, hi), lo): the two agree whenever lo ≤ hi (§5.5).
        OpKind::Clamp(lo, hi) => one(elementwise::map(x, |v| {
            Ok(fault!("clamp-min-first", v.clamp(*lo, *hi), v.min(*hi).max(*lo)))
        })?),
        OpKind::Relu => one(elementwise::map(x, |v| Ok(v.max(0)))?),
        OpKind::Abs => one(elementwise::map(x, |v| ck(v.checked_abs(), "abs"))?),
        OpKind::Leaky { a, f } => one(elementwise::leaky(x, *a, *f)?),
        OpKind::Igdn { gf, frac, gamma, beta } => one(norm::igdn(x, *gf, *frac, gamma, beta)?),
        OpKind::LayerNorm { eps, gamma, beta } => one(norm::layernorm_c(x, *eps, gamma, beta)?),
        OpKind::L2Norm { eps } => one(norm::l2norm(x, *eps)?),
        OpKind::Softmax => one(norm::softmax(x)?),
        OpKind::Sigmoid => one(elementwise::map(x, scalar_fn::sigmoid)?),
        OpKind::Elu(alpha) => one(elementwise::map(x, |v| scalar_fn::elu(v, *alpha))?),
        OpKind::Gram { groups, rq } => one(contraction::gram(x, ins[1], *groups, rq, o)?),
        OpKind::Apply { groups, rq } => one(contraction::apply(x, ins[1], *groups, rq)?),
        _ => movement::eval(op, ins, outs, scalars),
    }
}
