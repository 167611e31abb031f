//! §5 reductions, §8 RMSNorm, §9.3 softmax and §11.2 argmax.
//!
//! [`matvec`] computes rows in parallel (§5.2 allows any row order) on scoped worker threads, each of
//! which pins its own floating-point environment ([`super::env::pin`]) before computing. Within one
//! worker, rows are taken eight at a time with eight accumulators side by side: each accumulator is
//! still one row's §5.1 sequence (`acc = acc + (w[o][i]·x[i])`, `i` ascending), only interleaved
//! with seven other rows' sequences.

use super::arith::Rule;
use super::env;
use super::pinned::{exp_pinned, rsqrt};

/// §5.1: `dot_seq`.
pub fn dot_seq<R: Rule>(a: &[f32], b: &[f32]) -> f32 {
    debug_assert_eq!(a.len(), b.len());
    let mut acc = 0.0f32;
    for (&x, &y) in a.iter().zip(b) {
        let p = R::mul(x, y);
        acc = acc + p;
    }
    acc
}

/// §5.3: `sum_seq`.
pub fn sum_seq(a: &[f32]) -> f32 {
    let mut acc = 0.0f32;
    for &v in a {
        acc = acc + v;
    }
    acc
}

/// Rows `first..first + out.len()` of `w` (`cols` wide) against `x`, into `out`: eight rows at a
/// time, each with its own accumulator, then the rest one by one.
fn rows_into<R: Rule>(w: &[f32], x: &[f32], cols: usize, first: usize, out: &mut [f32]) {
    const K: usize = 8;
    let mut o = 0;
    while o + K <= out.len() {
        let base = (first + o) * cols;
        let block = &w[base..base + K * cols];
        let mut acc = [0.0f32; K];
        for (i, &xi) in x.iter().enumerate() {
            for (r, a) in acc.iter_mut().enumerate() {
                *a = *a + R::mul(block[r * cols + i], xi);
            }
        }
        out[o..o + K].copy_from_slice(&acc);
        o += K;
    }
    while o < out.len() {
        let base = (first + o) * cols;
        out[o] = dot_seq::<R>(&w[base..base + cols], x);
        o += 1;
    }
}

/// Below this many products a matvec runs on the calling thread alone.
const PARALLEL_MIN: usize = 1 << 16;

/// The number of threads a large matvec uses (the calling thread included).
pub fn threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 16)
}

/// §5.2: `y[o] = dot_seq(w[o, :], x)` for a row-major `[rows, cols]` matrix `w`. The calling thread
/// must be pinned; every worker pins itself.
pub fn matvec<R: Rule>(w: &[f32], x: &[f32], rows: usize, cols: usize) -> Result<Vec<f32>, String> {
    assert_eq!(w.len(), rows * cols, "matvec: weight size");
    assert_eq!(x.len(), cols, "matvec: input size");
    let mut y = vec![0.0f32; rows];
    let n = threads();
    if n == 1 || rows * cols < PARALLEL_MIN || rows < 2 * n {
        rows_into::<R>(w, x, cols, 0, &mut y);
        return Ok(y);
    }
    // Chunks of whole groups of eight rows.
    let per = rows.div_ceil(n).div_ceil(8) * 8;
    let mut chunks: Vec<(usize, &mut [f32])> = Vec::new();
    let mut first = 0;
    for c in y.chunks_mut(per) {
        let len = c.len();
        chunks.push((first, c));
        first += len;
    }
    let (own_first, own) = chunks.remove(0);
    std::thread::scope(|s| {
        let workers: Vec<_> = chunks
            .into_iter()
            .map(|(first, out)| {
                s.spawn(move || -> Result<(), String> {
                    let _pinned = env::pin()?;
                    rows_into::<R>(w, x, cols, first, out);
                    Ok(())
                })
            })
            .collect();
        rows_into::<R>(w, x, cols, own_first, own);
        let mut result = Ok(());
        for h in workers {
            let r = h.join().unwrap_or_else(|_| Err("a matvec worker panicked".into()));
            if result.is_ok() {
                result = r;
            }
        }
        result
    })?;
    Ok(y)
}

/// §8: RMSNorm of `x` with gain `weight` and `eps`.
pub fn rmsnorm<R: Rule>(x: &[f32], weight: &[f32], eps: f32) -> Vec<f32> {
    debug_assert_eq!(x.len(), weight.len());
    let sq: Vec<f32> = x.iter().map(|&v| R::mul(v, v)).collect();
    let ss = sum_seq(&sq);
    let mean = R::div(ss, x.len() as f32);
    let inv = rsqrt::<R>(mean + eps);
    x.iter()
        .zip(weight)
        .map(|(&v, &g)| {
            let scaled = R::mul(v, inv);
            R::mul(scaled, g)
        })
        .collect()
}

/// §9.3: `softmax_seq`, in place; `scores` is not empty.
pub fn softmax<R: Rule>(scores: &mut [f32]) {
    let mut max_v = scores[0];
    for &v in &scores[1..] {
        if v > max_v {
            max_v = v;
        }
    }
    for v in scores.iter_mut() {
        *v = exp_pinned::<R>(*v - max_v);
    }
    let denom = sum_seq(scores);
    for v in scores.iter_mut() {
        *v = R::div(*v, denom);
    }
}

/// §11.2: the first index of the greatest value by strict `>`; `logits` is not empty.
pub fn argmax(logits: &[f32]) -> usize {
    let mut best_idx = 0;
    let mut best_val = logits[0];
    for (idx, &v) in logits.iter().enumerate() {
        if v > best_val {
            best_val = v;
            best_idx = idx;
        }
    }
    best_idx
}
