//! §7: RoPE's `inv_freq` (§7.1) and its digest (§7.2), the per-position cos/sin tables (§7.3) and
//! the rotate-half rotation (§7.4).

use super::arith::{Rule, canonical_nan};
use super::pinned::{cos_pinned, exp_pinned, ln_pinned, sin_pinned};
use sha2::{Digest, Sha256};

/// §7.1: `inv_freq[i] = exp_pinned(-((2i / head_dim) · ln_pinned(theta)))`, `i < head_dim / 2`.
pub fn inv_freq<R: Rule>(head_dim: usize, theta: f32) -> Vec<f32> {
    let ln_theta = ln_pinned::<R>(theta);
    let hd = head_dim as f32;
    (0..head_dim / 2)
        .map(|i| {
            let frac = R::div((2 * i) as f32, hd);
            let neg_arg = -R::mul(frac, ln_theta);
            exp_pinned::<R>(neg_arg)
        })
        .collect()
}

/// §7.2: SHA-256 over the values' little-endian bytes in index order (a NaN hashed as `7fc00000`,
/// the bits the suites write for it, docs/assumptions.md C3).
pub fn inv_freq_digest(inv_freq: &[f32]) -> [u8; 32] {
    let mut h = Sha256::new();
    for &v in inv_freq {
        h.update(canonical_nan(v).to_bits().to_le_bytes());
    }
    h.finalize().into()
}

/// §7.3: `(cos_v, sin_v)` at `pos` (already cast to binary32).
pub fn tables<R: Rule>(inv_freq: &[f32], pos: f32) -> (Vec<f32>, Vec<f32>) {
    let mut cos_v = Vec::with_capacity(inv_freq.len());
    let mut sin_v = Vec::with_capacity(inv_freq.len());
    for &f in inv_freq {
        let angle = R::mul(pos, f);
        cos_v.push(cos_pinned::<R>(angle));
        sin_v.push(sin_pinned::<R>(angle));
    }
    (cos_v, sin_v)
}

/// §7.4: rotates one head (`2·half` values) in place.
pub fn rotate<R: Rule>(head: &mut [f32], cos_v: &[f32], sin_v: &[f32]) {
    let half = cos_v.len();
    debug_assert_eq!(head.len(), 2 * half);
    let mut out = vec![0.0f32; 2 * half];
    for i in 0..half {
        let x1 = head[i];
        let x2 = head[i + half];
        let t1 = R::mul(x1, cos_v[i]);
        let t2 = R::mul(-x2, sin_v[i]);
        out[i] = t1 + t2;
        let t3 = R::mul(x2, cos_v[i]);
        let t4 = R::mul(x1, sin_v[i]);
        out[i + half] = t3 + t4;
    }
    head.copy_from_slice(&out);
}
