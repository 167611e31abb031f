//! Data movement (§5.10).

use super::{E, Tensor};
use crate::plan::Shape;
use crate::whg1::{Op, OpKind, Operand};

fn operand(o: Operand, scalars: &[i64]) -> i64 {
    match o {
        Operand::Const(v) => v,
        Operand::Scalar(k) if crate::mutants::active("operand-scalar-index") => k as i64,
        Operand::Scalar(k) => scalars[k],
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
            let reversed = crate::mutants::active("concat-reversed");
            for k in 0..ins.len() {
                let t = ins[if reversed { ins.len() - 1 - k } else { k }];
                data.extend_from_slice(&t.data);
            }
            Tensor { shape: o, data }
        }
        OpKind::Split { start, .. } => {
            let n = (x.shape.h * x.shape.w) as usize;
            let start = if crate::mutants::active("split-start-ignored") {
                0
            } else {
                *start
            };
            let s = start as usize * n;
            Tensor {
                shape: o,
                data: x.data[s..s + o.elems() as usize].to_vec(),
            }
        }
        OpKind::PixelShuffle(r) => {
            let r = *r as usize;
            if crate::mutants::active("pixel-shuffle-transposed") {
                build(o, |c, y, xx| x.at(c * r * r + (xx % r) * r + y % r, y / r, xx / r))
            } else {
                build(o, |c, y, xx| x.at(c * r * r + (y % r) * r + xx % r, y / r, xx / r))
            }
        }
        OpKind::PixelUnshuffle(r) => {
            let r = *r as usize;
            build(o, |c, y, xx| {
                let (base, k) = (c / (r * r), c % (r * r));
                if crate::mutants::active("pixel-unshuffle-transposed") {
                    x.at(base, y * r + k % r, xx * r + k / r)
                } else {
                    x.at(base, y * r + k / r, xx * r + k % r)
                }
            })
        }
        OpKind::PadRep(_) => {
            let (_, h, w) = x.dims();
            if crate::mutants::active("pad-rep-zeros") {
                build(o, |c, y, xx| if y < h && xx < w { x.at(c, y, xx) } else { 0 })
            } else {
                build(o, |c, y, xx| x.at(c, y.min(h - 1), xx.min(w - 1)))
            }
        }
        OpKind::CropTo if crate::mutants::active("crop-to-bottom-right") => {
            let (dy, dx) = ((x.shape.h - o.h) as usize, (x.shape.w - o.w) as usize);
            build(o, |c, y, xx| x.at(c, dy + y, dx + xx))
        }
        OpKind::CropTo => build(o, |c, y, xx| x.at(c, y, xx)),
        OpKind::Crop([y0, x0, _, _]) => {
            let (y0, x0) = (operand(*y0, scalars) as usize, operand(*x0, scalars) as usize);
            // A fault that reads the offsets the other way round, where that window fits.
            let fits = x0 as u64 + o.h <= x.shape.h && y0 as u64 + o.w <= x.shape.w;
            let (y0, x0) = if crate::mutants::active("crop-offsets-swapped") && fits {
                (x0, y0)
            } else {
                (y0, x0)
            };
            build(o, |c, y, xx| x.at(c, y0 + y, x0 + xx))
        }
        OpKind::SubposSplit(order) => {
            return Ok(order
                .iter()
                .map(|&k| {
                    let (a, b) = if crate::mutants::active("subpos-split-ab-swapped") {
                        (usize::from(k % 2), usize::from(k / 2))
                    } else {
                        (usize::from(k / 2), usize::from(k % 2))
                    };
                    build(o, |c, y, xx| x.at(c, 2 * y + a, 2 * xx + b))
                })
                .collect());
        }
        OpKind::SubposMerge(order) => {
            // Output position (2y + a, 2x + b) comes from the input k whose order[k] = 2a + b.
            let mut src = [0usize; 4];
            for (k, &p) in order.iter().enumerate() {
                if crate::mutants::active("subpos-merge-order-not-inverted") {
                    src[k] = usize::from(p);
                } else {
                    src[usize::from(p)] = k;
                }
            }
            build(o, |c, y, xx| ins[src[(y % 2) * 2 + xx % 2]].at(c, y / 2, xx / 2))
        }
        OpKind::Fill(v) => Tensor::filled(o, operand(*v, scalars)),
        _ => unreachable!("not a movement operator"),
    }])
}
