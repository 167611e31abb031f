//! §5: the reductions, strictly left to right, each product and each sum rounded on its own.

use super::arith::{Arith, F32};
use super::artifact::widen_bf16;
use rayon::prelude::*;

/// §5.1: `Σ a[i]·b[i]` in index order from `+0.0`.
pub fn dot_seq(a: &impl Arith, x: &[F32], y: &[F32]) -> F32 {
    debug_assert_eq!(x.len(), y.len());
    x.iter().zip(y).fold(F32::ZERO, |acc, (&p, &q)| a.add(acc, a.mul(p, q)))
}

/// §5.3: `Σ a[i]` in index order from `+0.0`.
pub fn sum_seq(a: &impl Arith, x: &[F32]) -> F32 {
    x.iter().fold(F32::ZERO, |acc, &v| a.add(acc, v))
}

/// §5.4: `a[i] + b[i]`.
pub fn add(a: &impl Arith, x: &[F32], y: &[F32]) -> Vec<F32> {
    x.iter().zip(y).map(|(&p, &q)| a.add(p, q)).collect()
}

/// Rows per block of a [`Matrix`]'s pass: their dot products run side by side.
const BLOCK: usize = 8;

/// A row-major `[rows, cols]` matrix (§2.5's `[out_features, in_features]`), read in place
/// from the safetensors bytes as bf16 patterns and widened (§4.1, a shift) as each element is
/// used: a pass over it reads two bytes a weight, and no copy of the weights is made.
pub struct Matrix<'a> {
    pub rows: usize,
    pub cols: usize,
    /// `2·rows·cols` bytes: each element's bf16 pattern, little-endian.
    data: &'a [u8],
}

impl<'a> Matrix<'a> {
    pub fn new(rows: usize, cols: usize, data: &'a [u8]) -> Matrix<'a> {
        assert_eq!(data.len(), 2 * rows * cols, "a [{rows}, {cols}] bf16 matrix");
        Matrix { rows, cols, data }
    }

    fn row_bytes(&self, o: usize) -> &'a [u8] {
        &self.data[2 * o * self.cols..2 * (o + 1) * self.cols]
    }

    /// Row `o`, widened.
    pub fn row(&self, o: usize) -> Vec<F32> {
        self.row_bytes(o)
            .chunks_exact(2)
            .map(|b| widen_bf16(u16::from_le_bytes([b[0], b[1]])))
            .collect()
    }

    /// §5.2: `y[o] = dot_seq(w[o, :], x)`.
    pub fn matvec(&self, a: &impl Arith, x: &[F32]) -> Vec<F32> {
        self.matvecs(a, std::slice::from_ref(&x.to_vec())).remove(0)
    }

    /// §5.2 for each of `xs` in one pass over the weights (prefill's positions share it). Blocks
    /// of [`BLOCK`] rows run in parallel, and a block's rows side by side, each element widened
    /// as it is used; every `y[o]` is §5.1's sum, in its order.
    pub fn matvecs(&self, a: &impl Arith, xs: &[Vec<F32>]) -> Vec<Vec<F32>> {
        let blocks: Vec<Vec<[F32; BLOCK]>> = (0..self.rows.div_ceil(BLOCK))
            .into_par_iter()
            .map(|b| {
                // The block's rows interleaved (element `i` of row `r` at `i·BLOCK + r`, missing
                // rows zero), so the inner loop reads one contiguous group per element.
                let mut block = vec![0u16; BLOCK * self.cols];
                for (r, o) in (b * BLOCK..self.rows.min((b + 1) * BLOCK)).enumerate() {
                    for (i, w) in self.row_bytes(o).chunks_exact(2).enumerate() {
                        block[i * BLOCK + r] = u16::from_le_bytes([w[0], w[1]]);
                    }
                }
                let mut acc = vec![[F32::ZERO; BLOCK]; xs.len()];
                for (acc, x) in acc.iter_mut().zip(xs) {
                    for (w, &xi) in block.chunks_exact(BLOCK).zip(x) {
                        for r in 0..BLOCK {
                            acc[r] = a.add(acc[r], a.mul(widen_bf16(w[r]), xi));
                        }
                    }
                }
                acc
            })
            .collect();
        (0..xs.len())
            .map(|p| blocks.iter().flat_map(|b| b[p]).take(self.rows).collect())
            .collect()
    }
}
