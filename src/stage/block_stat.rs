//! E6 `block_stat(x; b, s, lo, hi)`: each channel's plane tiled by `b × b` blocks from
//! `(0, 0)`, the last row and column of blocks possibly partial; every position of a block
//! takes `clamp(R_half_up(S, s), lo, hi)`, with `S` the sum over the block's positions in the
//! plane. `s` applies whatever the block's size.

use super::{Stop, extent, require};
use crate::num::{clamp, r_half_up};
use crate::tensor::Tensor;
use num_bigint::BigInt;
use num_traits::ToPrimitive;

pub fn block_stat(x: &Tensor, b: &BigInt, s: &BigInt, lo: &BigInt, hi: &BigInt) -> Result<Tensor, Stop> {
    extent(x.shape)?;
    require(*b >= BigInt::from(1), "b", || format!("b = {b} is below 1"))?;
    let s = s
        .to_u32()
        .filter(|&s| s <= 127)
        .ok_or_else(|| Stop::condition("s", format!("s = {s} is not in 0..=127")))?;
    require(lo <= hi, "range", || format!("lo = {lo} is above hi = {hi}"))?;
    // A block wider than the plane is the whole plane, however large `b` is.
    let b = b.to_usize().unwrap_or(usize::MAX);
    let (rows, cols) = (x.h().div_ceil(b), x.w().div_ceil(b));
    let block = |c: usize, y: usize, xo: usize| (c * rows + y / b) * cols + xo / b;
    let mut sums = vec![BigInt::ZERO; x.c() * rows * cols];
    for c in 0..x.c() {
        for y in 0..x.h() {
            for xo in 0..x.w() {
                sums[block(c, y, xo)] += x.at(c, y, xo);
            }
        }
    }
    Ok(Tensor::from_fn(x.shape, |c, y, xo| {
        clamp(&r_half_up(&sums[block(c, y, xo)], s), lo, hi)
    }))
}
