//! §5: the reductions, strictly left to right, each product and each sum rounded on its own.

use super::arith::{Arith, F32};
use super::artifact::widen_bf16_le;
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
pub const BLOCK: usize = 8;

/// [`BLOCK`] rows by [`BLOCK`] columns of a [`Matrix`], row by row, each element its bf16
/// pattern's two little-endian bytes; past the matrix's last row or column, zero.
pub type Tile = [[u8; 2 * BLOCK]; BLOCK];

/// §5.1's steps over the tile at column `c0`, its rows side by side: for each `x` of `xs` and its
/// accumulators, `acc[r] ← acc[r] + w[r][c]·x[c0 + c]` for `c` in `0..width`, in order, each
/// product and each sum rounded on its own; `w` widened by §4.1.
pub fn tile_steps(a: &impl Arith, tile: &Tile, c0: usize, width: usize, xs: &[Vec<F32>], acc: &mut [[F32; BLOCK]]) {
    let columns: [[F32; BLOCK]; BLOCK] =
        std::array::from_fn(|c| std::array::from_fn(|r| widen_bf16_le([tile[r][2 * c], tile[r][2 * c + 1]])));
    for (acc, x) in acc.iter_mut().zip(xs) {
        for (column, &xc) in columns[..width].iter().zip(&x[c0..]) {
            for r in 0..BLOCK {
                acc[r] = a.add(acc[r], a.mul(column[r], xc));
            }
        }
    }
}

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
            .map(|b| widen_bf16_le([b[0], b[1]]))
            .collect()
    }

    /// §5.2: `y[o] = dot_seq(w[o, :], x)`.
    pub fn matvec(&self, a: &impl Arith, x: &[F32]) -> Vec<F32> {
        self.matvecs(a, std::slice::from_ref(&x.to_vec())).remove(0)
    }

    /// §5.2 for each of `xs` in one pass over the weights (prefill's positions share it). Blocks
    /// of [`BLOCK`] rows run in parallel; a block is read tile by tile, left to right, each
    /// tile's steps taken for every position ([`Arith::tile_steps`]) before the next tile is read.
    pub fn matvecs(&self, a: &impl Arith, xs: &[Vec<F32>]) -> Vec<Vec<F32>> {
        let blocks: Vec<Vec<[F32; BLOCK]>> = (0..self.rows.div_ceil(BLOCK))
            .into_par_iter()
            .map(|b| {
                let mut acc = vec![[F32::ZERO; BLOCK]; xs.len()];
                for c0 in (0..self.cols).step_by(BLOCK) {
                    a.tile_steps(&self.tile(b * BLOCK, c0), c0, BLOCK.min(self.cols - c0), xs, &mut acc);
                }
                acc
            })
            .collect();
        (0..xs.len())
            .map(|p| blocks.iter().flat_map(|b| b[p]).take(self.rows).collect())
            .collect()
    }

    /// The tile of rows `o0 …` and columns `c0 …`.
    fn tile(&self, o0: usize, c0: usize) -> Tile {
        let at = |r: usize| 2 * ((o0 + r) * self.cols + c0);
        if o0 + BLOCK <= self.rows && c0 + BLOCK <= self.cols {
            return std::array::from_fn(|r| self.data[at(r)..at(r) + 2 * BLOCK].try_into().expect("a whole tile"));
        }
        let mut tile = [[0u8; 2 * BLOCK]; BLOCK];
        for (r, o) in (o0..self.rows.min(o0 + BLOCK)).enumerate() {
            let w = &self.row_bytes(o)[2 * c0..];
            let n = w.len().min(2 * BLOCK);
            tile[r][..n].copy_from_slice(&w[..n]);
        }
        tile
    }
}
