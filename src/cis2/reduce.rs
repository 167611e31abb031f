//! §5: the reductions, strictly left to right, each product and each sum rounded on its own.

use super::arith::{Arith, F32};
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

/// A row-major `[rows, cols]` matrix (§2.5's `[out_features, in_features]`).
pub struct Matrix {
    pub rows: usize,
    pub cols: usize,
    pub data: Vec<F32>,
}

impl Matrix {
    pub fn row(&self, o: usize) -> &[F32] {
        &self.data[o * self.cols..(o + 1) * self.cols]
    }

    /// §5.2: `y[o] = dot_seq(w[o, :], x)`. Rows are independent, so they run in parallel;
    /// each row keeps §5.1's order.
    pub fn matvec(&self, a: &impl Arith, x: &[F32]) -> Vec<F32> {
        (0..self.rows)
            .into_par_iter()
            .map(|o| dot_seq(a, self.row(o), x))
            .collect()
    }
}
