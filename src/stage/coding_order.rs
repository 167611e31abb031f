//! E13 `coding_order`: `raster` (channel, then row, then column), or
//! `checkerboard(anchor)`: the elements with `(row + col) mod 2 = 0` when `anchor` is set,
//! the rest otherwise, each in raster order. Each element is named by its CHW position
//! `(c·H + y)·W + x` (§14.1).

use super::{Stop, extent};
use crate::plan::Shape;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    Raster,
    Checkerboard { anchor: bool },
}

/// The positions in coding order. A shape has every side at least 1 (§3) and at most
/// `2^26` elements (docs/assumptions.md).
pub fn coding_order(shape: Shape, order: Order) -> Result<Vec<u64>, Stop> {
    let n = extent(shape)?;
    let keep = |y: u64, x: u64| match order {
        Order::Raster => true,
        Order::Checkerboard { anchor } => (y + x).is_multiple_of(2) == anchor,
    };
    let mut out = Vec::with_capacity(n as usize);
    for c in 0..shape.c {
        for y in 0..shape.h {
            for x in 0..shape.w {
                if keep(y, x) {
                    out.push((c * shape.h + y) * shape.w + x);
                }
            }
        }
    }
    Ok(out)
}
