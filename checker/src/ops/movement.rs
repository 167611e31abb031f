//! Data movement (§5.10).

use super::{E, Tensor};
use crate::plan::Shape;
use crate::whg1::{Op, OpKind, Operand};

fn operand(o: Operand, scalars: &[i64]) -> i64 {
    match o {
        Operand::Const(v) => v,
        Operand::Scalar(k) => fault!("operand-scalar-index", scalars[k], k as i64),
    }
}

/// Builds an output of `shape` whose element `(c, y, x)` is `f(c, y, x)`.
fn build(shape: Shape, f: impl Fn(usize, usize, usize) -> i64) -> Tensor {
    let (c, h, w) = (shape.c as usize, shape.h as usize, shape.w as usize);
    let mut data = Vec::with_capacity(c * h * w);
    for ch in 0..c {
        for y in 0..h {
            for x in 0..w {
                data.push(f(ch, y, x));
            }
        }
    }
    Tensor { shape, data }
}

pub fn eval(op: &Op, ins: &[&Tensor], outs: &[Shape], scalars: &[i64]) -> E<Vec<Tensor>> {
    let x = ins[0];
    let o = outs[0];
    Ok(vec![match &op.kind {
        OpKind::Concat => {
            let mut data = Vec::with_capacity(o.elems() as usize);
            for k in 0..ins.len() {
                data.extend_from_slice(&ins[fault!("concat-reversed", k, ins.len() - 1 - k)].data);
            }
            Tensor { shape: o, data }
        }
        OpKind::Split { start, .. } => {
            let n = (x.shape.h * x.shape.w) as usize;
            let s = fault!("split-start-ignored", *start, 0) as usize * n;
            Tensor {
                shape: o,
                data: x.data[s..s + o.elems() as usize].to_vec(),
            }
        }
        OpKind::PixelShuffle(r) => {
            let r = *r as usize;
            build(o, |c, y, xx| {
                let (i, j) = fault!("pixel-shuffle-transposed", (y % r, xx % r), (xx % r, y % r));
                x.at(c * r * r + i * r + j, y / r, xx / r)
            })
        }
        OpKind::PixelUnshuffle(r) => {
            let r = *r as usize;
            build(o, |c, y, xx| {
                let (base, k) = (c / (r * r), c % (r * r));
                let (i, j) = fault!("pixel-unshuffle-transposed", (k / r, k % r), (k % r, k / r));
                x.at(base, y * r + i, xx * r + j)
            })
        }
        OpKind::PadRep(_) => {
            let (_, h, w) = x.dims();
            build(o, |c, y, xx| {
                let v = x.at(c, y.min(h - 1), xx.min(w - 1));
                fault!("pad-rep-zeros", v, if y < h && xx < w { v } else { 0 })
            })
        }
        OpKind::CropTo => {
            let (dy, dx) = fault!("crop-to-bottom-right", (0, 0), bottom_right(x, o));
            build(o, |c, y, xx| x.at(c, dy + y, dx + xx))
        }
        OpKind::Crop([y0, x0, _, _]) => {
            let (y0, x0) = (operand(*y0, scalars) as usize, operand(*x0, scalars) as usize);
            let (y0, x0) = fault!("crop-offsets-swapped", (y0, x0), swapped_if_fits(x, o, y0, x0));
            build(o, |c, y, xx| x.at(c, y0 + y, x0 + xx))
        }
        OpKind::SubposSplit(order) => {
            return Ok(order
                .iter()
                .map(|&k| {
                    let k = usize::from(k);
                    let (a, b) = fault!("subpos-split-ab-swapped", (k / 2, k % 2), (k % 2, k / 2));
                    build(o, |c, y, xx| x.at(c, 2 * y + a, 2 * xx + b))
                })
                .collect());
        }
        OpKind::SubposMerge(order) => {
            // Output position (2y + a, 2x + b) comes from the input k whose order[k] = 2a + b.
            let mut src = [0usize; 4];
            for (k, &p) in order.iter().enumerate() {
                src[usize::from(p)] = k;
            }
            let src = fault!("subpos-merge-order-not-inverted", src, order.map(usize::from));
            build(o, |c, y, xx| ins[src[(y % 2) * 2 + xx % 2]].at(c, y / 2, xx / 2))
        }
        OpKind::Fill(v) => Tensor::filled(o, operand(*v, scalars)),
        _ => unreachable!("not a movement operator"),
    }])
}

/// `crop-to-bottom-right`: the offsets of the bottom-right corner of `x` that `o` covers.
#[cfg(feature = "mutants")]
fn bottom_right(x: &Tensor, o: Shape) -> (usize, usize) {
    ((x.shape.h - o.h) as usize, (x.shape.w - o.w) as usize)
}

/// `crop-offsets-swapped`: the offsets read the other way round, where that window fits.
#[cfg(feature = "mutants")]
fn swapped_if_fits(x: &Tensor, o: Shape, y0: usize, x0: usize) -> (usize, usize) {
    let fits = x0 as u64 + o.h <= x.shape.h && y0 as u64 + o.w <= x.shape.w;
    if fits { (x0, y0) } else { (y0, x0) }
}
