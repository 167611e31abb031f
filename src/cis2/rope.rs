//! §7: rotary position embedding, theta-general.

use super::arith::{Arith, F32};
use super::pinned::{cos_pinned, exp_pinned, ln_pinned, sin_pinned};
use sha2::{Digest, Sha256};

/// §7.1: `inv_freq[i] = exp_pinned(−((2i / head_dim) · ln_pinned(theta)))`, `i < head_dim / 2`.
pub fn inv_freq(a: &impl Arith, head_dim: usize, theta: F32) -> Vec<F32> {
    let ln_theta = ln_pinned(a, theta);
    let d = a.of_int(head_dim as i64);
    (0..head_dim / 2)
        .map(|i| {
            let frac = a.div(a.of_int(2 * i as i64), d);
            let neg_arg = -a.mul(frac, ln_theta);
            exp_pinned(a, neg_arg)
        })
        .collect()
}

/// §7.2: the SHA-256 of the table's little-endian bytes, in index order.
pub fn inv_freq_digest(inv_freq: &[F32]) -> [u8; 32] {
    let mut h = Sha256::new();
    inv_freq.iter().for_each(|v| h.update(v.le_bytes()));
    h.finalize().into()
}

/// §7.3: the cos and sin tables at `pos`.
pub fn tables(a: &impl Arith, inv_freq: &[F32], pos: usize) -> (Vec<F32>, Vec<F32>) {
    let p = a.of_int(pos as i64);
    inv_freq
        .iter()
        .map(|&f| {
            let angle = a.mul(p, f);
            (cos_pinned(a, angle), sin_pinned(a, angle))
        })
        .unzip()
}

/// §7.4: rotate-half, one head of `2 · cos.len()` values, in place.
pub fn rotate(a: &impl Arith, head: &mut [F32], cos: &[F32], sin: &[F32]) {
    let half = cos.len();
    let mut out = vec![F32::ZERO; 2 * half];
    for i in 0..half {
        let (x1, x2) = (head[i], head[i + half]);
        let t1 = a.mul(x1, cos[i]);
        let t2 = a.mul(-x2, sin[i]);
        out[i] = a.add(t1, t2);
        let t3 = a.mul(x2, cos[i]);
        let t4 = a.mul(x1, sin[i]);
        out[i + half] = a.add(t3, t4);
    }
    head.copy_from_slice(&out);
}
