//! Elementwise operators (§5.5) and `lut16` (§5.6).

use super::{E, Tensor, ck};
use crate::num::floor_shr64;

pub fn map(x: &Tensor, f: impl Fn(i64) -> E<i64>) -> E<Tensor> {
    Ok(Tensor {
        shape: x.shape,
        data: x.data.iter().map(|&v| f(v)).collect::<E<_>>()?,
    })
}

pub fn lut16(x: &Tensor, table: &[i16]) -> E<Tensor> {
    map(x, |v| {
        let i = ck(v.checked_add(fault!("lut16-offset-32767", 32768, 32767)), "lut16 index")?;
        let e = ck(usize::try_from(i).ok().and_then(|i| table.get(i)), "lut16 index")?;
        Ok(i64::from(*e))
    })
}

pub fn add(a: &Tensor, b: &Tensor) -> E<Tensor> {
    let data = a
        .data
        .iter()
        .zip(&b.data)
        .map(|(&x, &y)| ck(x.checked_add(y), "add"))
        .collect::<E<_>>()?;
    Ok(Tensor { shape: a.shape, data })
}

/// `chunk_add`: `out[c] = in[c] + in[c + C/2]`.
pub fn chunk_add(x: &Tensor) -> E<Tensor> {
    let (c, h, w) = x.dims();
    let half = c / 2;
    let mut data = Vec::with_capacity(half * h * w);
    for ch in 0..half {
        let (a, b) = fault!("chunk-add-interleaved", (ch, ch + half), (2 * ch, 2 * ch + 1));
        for (&u, &v) in x.plane(a).iter().zip(x.plane(b)) {
            data.push(ck(u.checked_add(v), "chunk_add")?);
        }
    }
    let mut shape = x.shape;
    shape.c /= 2;
    Ok(Tensor { shape, data })
}

/// `leaky(a, f)`: `v` for `v ≥ 0`, else `⌊v·a / 2^f⌋`.
pub fn leaky(x: &Tensor, a: i64, f: u32) -> E<Tensor> {
    map(x, |v| {
        // Equivalent when 0 takes the negative branch: ⌊0·a / 2^f⌋ = 0.
        if fault!("leaky-zero-negative", v >= 0, v > 0) {
            return Ok(v);
        }
        let p = ck(v.checked_mul(a), "leaky.p")?;
        Ok(fault!("leaky-truncates", floor_shr64(p, f), truncating_shr(p, f)))
    })
}

/// `leaky-truncates`: `p / 2^f` rounded toward zero.
#[cfg(feature = "mutants")]
fn truncating_shr(p: i64, f: u32) -> i64 {
    (i128::from(p) / (1i128 << f)) as i64
}
