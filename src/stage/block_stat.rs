//! E6 `block_stat(x; b, s, lo, hi)`: each channel's plane tiled by `b × b` blocks from
//! `(0, 0)`, the last row and column of blocks possibly partial; every position of a block
//! takes `clamp(R_half_up(S, s), lo, hi)`, with `S` the sum over the block's positions in the
//! plane. `s` applies whatever the block's size.

use super::{Stop, require};
use crate::num::{clamp, r_half_up};
use crate::tensor::Tensor;
use num_bigint::BigInt;
use num_traits::ToPrimitive;

pub fn block_stat(x: &Tensor, b: &BigInt, s: &BigInt, lo: &BigInt, hi: &BigInt) -> Result<Tensor, Stop> {
    let b = b
        .to_usize()
        .filter(|&b| b >= 1)
        .ok_or_else(|| Stop::condition("b", format!("b = {b} is below 1")))?;
    let s = s
        .to_u32()
        .filter(|&s| s <= 127)
        .ok_or_else(|| Stop::condition("s", format!("s = {s} is not in 0..=127")))?;
    require(lo <= hi, "range", || format!("lo = {lo} is above hi = {hi}"))?;
    let value = |c: usize, y: usize, xo: usize| {
        let (by, bx) = (y / b * b, xo / b * b);
        let mut sum = BigInt::ZERO;
        for u in by..(by + b).min(x.h()) {
            for v in bx..(bx + b).min(x.w()) {
                sum += x.at(c, u, v);
            }
        }
        clamp(&r_half_up(&sum, s), lo, hi)
    };
    Ok(Tensor::from_fn(x.shape, value))
}
