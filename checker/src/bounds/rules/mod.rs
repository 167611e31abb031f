//! §8.3's operator bound rules: one module per operator family, as [`crate::ops`] has, and one
//! function per operator. A rule reads its inputs' intervals and records the intermediates of Table
//! 8.5-A, each the hull over channels (§8.1), and returns its producer results.
//!
//! - `rq`: the `rq` rules every requantising operator ends in;
//! - `linear`: `conv`, `conv_transpose` (§8.2's closed form);
//! - `requant`: `rescale`, `chscale`, `mul`;
//! - `contraction`: `gram`, `apply`;
//! - `elementwise`: `add`, `chunk_add`, `clamp`, `relu`, `abs`, `leaky`, `lut16`;
//! - `norm`: `igdn`, `layernorm_c`, `l2norm`, `softmax`;
//! - `scalar_fn`: `exp_neg_q16`, `sigmoid`, `elu`;
//! - `movement`: the data-movement operators.

mod contraction;
mod elementwise;
mod linear;
mod movement;
mod norm;
mod requant;
mod rq;
mod scalar_fn;

use super::interval::{Iv, Rec};
use super::sat::{Ctx, S};
use crate::plan::Shape;
use crate::whg1::{Graph, Op, OpKind, Operand};

/// Why the pass refuses the graph (load step 8, `model_mismatch`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refuse {
    /// A `check` range that no producer value can meet (§8.1).
    EmptyCheck(usize),
    /// A `lut16` input interval outside `[−32767, 32767]` (§5.6).
    Lut16Range(usize),
}

pub(super) fn si(v: i64) -> S {
    S::from_i128(i128::from(v))
}
fn su(v: u64) -> S {
    S::from_u64(v)
}

/// `K_c = ⌊(2^31 − 1) / P⌋` over a term interval, `None` (unbounded) when `P = 0` (§6, B4).
fn k_c(c: &mut Ctx, term: Iv) -> Option<S> {
    let a = c.abs(term.lo);
    let b = c.abs(term.hi);
    let p = a.max(b);
    if p.is_zero() {
        return fault!("kc-zero-when-unbounded", None, Some(S::ZERO));
    }
    let k = S::from_i128((1 << 31) - 1);
    Some(fault!("kc-ceil", c.div_floor(k, p), k_c_ceil(c, p)))
}

/// `kc-ceil`: `⌈(2^31 − 1) / P⌉`.
#[cfg(feature = "mutants")]
fn k_c_ceil(c: &mut Ctx, p: S) -> S {
    let q = c.div_floor(S::from_i128(-((1 << 31) - 1)), p);
    c.neg(q)
}

/// What a rule gives besides its recorded intermediates.
pub(super) struct Out {
    /// The producer result of each output.
    pub(super) results: Vec<Iv>,
    /// `K_c` (§6), for the operators §8.5 gives it.
    pub(super) k_c: Option<Option<S>>,
    /// `bits` of the weights' (or `M`'s) range, for §8.5's `mac`.
    pub(super) w_bits: Option<u32>,
    /// Whether §8.5's `mac` is recorded.
    pub(super) mac: bool,
}

fn plain(results: Vec<Iv>) -> Out {
    Out {
        results,
        k_c: None,
        w_bits: None,
        mac: false,
    }
}

/// Operator `k`'s rule (§8.3) on its inputs' intervals `ins`; `shapes` are the load-time shapes
/// when the inputs declare sizes.
pub(super) fn rule(
    g: &Graph,
    k: usize,
    op: &Op,
    ins: &[Iv],
    shapes: Option<&[Option<Shape>]>,
    c: &mut Ctx,
    rec: &mut Rec,
) -> Result<Out, Refuse> {
    let x = ins[0];
    let cin = g.channels(op.ins[0]);
    let in_shape = |i: usize| shapes.and_then(|s| s[op.ins[i]]).expect("declared sizes are planned");
    Ok(match &op.kind {
        OpKind::Conv(p) => linear::conv(c, rec, p, x),
        OpKind::ConvT(p) => linear::conv_transpose(c, rec, p, x, cin),
        OpKind::Rescale(rq) => requant::rescale(c, rec, rq, x),
        OpKind::Chscale {
            scalar,
            round,
            shift,
            m,
            ..
        } => requant::chscale(c, rec, x, cin, g.scalars[*scalar], m, (*round, *shift)),
        OpKind::Mul(rq) => requant::mul(c, rec, rq, x, ins[1]),
        OpKind::Gram { rq, .. } => contraction::gram(c, rec, rq, x, ins[1], in_shape(0)),
        OpKind::Apply { groups, rq } => contraction::apply(c, rec, rq, x, ins[1], cin, *groups),
        OpKind::Add => elementwise::add(c, x, ins[1]),
        OpKind::ChunkAdd => elementwise::chunk_add(c, x),
        OpKind::Clamp(lo, hi) => elementwise::clamp(x, *lo, *hi),
        OpKind::Relu => elementwise::relu(x),
        OpKind::Abs => elementwise::abs(c, x),
        OpKind::Leaky { a, f } => elementwise::leaky(c, rec, x, *a, *f),
        OpKind::Lut16 { table, .. } => elementwise::lut16(x, table).ok_or(Refuse::Lut16Range(k))?,
        OpKind::Igdn { gf, frac, gamma, beta } => norm::igdn(c, rec, x, cin, (*gf, *frac), gamma, beta),
        OpKind::LayerNorm { eps, gamma, beta } => norm::layernorm_c(c, rec, x, cin, *eps, gamma, beta),
        OpKind::L2Norm { eps } => norm::l2norm(c, rec, x, in_shape(0), *eps),
        OpKind::Softmax => norm::softmax(c, rec, x, in_shape(0)),
        OpKind::Sigmoid => scalar_fn::sigmoid(c, rec, x),
        OpKind::Elu(alpha) => scalar_fn::elu(c, rec, x, *alpha),
        OpKind::Concat | OpKind::SubposMerge(_) => movement::merged(ins),
        OpKind::SubposSplit(_) => movement::subpos_split(x),
        OpKind::Fill(Operand::Const(v)) => movement::fill_const(*v),
        OpKind::Fill(Operand::Scalar(s)) => movement::fill_scalar(g.scalars[*s]),
        OpKind::Split { .. }
        | OpKind::PixelShuffle(_)
        | OpKind::PixelUnshuffle(_)
        | OpKind::PadRep(_)
        | OpKind::CropTo
        | OpKind::Crop(_) => movement::moved(x),
    })
}

fn min_max(w: &[i64]) -> (i64, i64) {
    let lo = w.iter().copied().min().unwrap_or(0);
    let hi = w.iter().copied().max().unwrap_or(0);
    (lo, hi)
}

/// `mac.w_bits` (§8.5): `bits` of `[min, max]` over the weights or `M`, given as that pair.
fn w_bits((lo, hi): (i64, i64)) -> u32 {
    range_bits(fault!("mac-w-bits-magnitude", (lo, hi), magnitude(lo, hi)))
}

/// `mac-w-bits-magnitude`: `[−m, m]`, `m` the largest magnitude.
#[cfg(feature = "mutants")]
fn magnitude(lo: i64, hi: i64) -> (i64, i64) {
    let m = lo.saturating_abs().max(hi.saturating_abs());
    (-m, m)
}

/// `bits` of the interval `[lo, hi]`.
fn range_bits((lo, hi): (i64, i64)) -> u32 {
    Iv::new(si(lo), si(hi)).bits()
}

/// A declared range as an interval.
pub fn range_iv(lo: i64, hi: i64) -> Iv {
    Iv::new(si(lo), si(hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn k_c_is_zero_past_i32_and_unbounded_at_zero() {
        // docs/assumptions.md B4.
        let mut c = Ctx::default();
        assert_eq!(k_c(&mut c, Iv::i(0, 0)), None);
        assert_eq!(k_c(&mut c, Iv::i(-(1 << 31), 5)), Some(S::ZERO));
        assert_eq!(k_c(&mut c, Iv::i(-3, 2)), Some(S::from_i128(((1 << 31) - 1) / 3)));
    }
}
