//! §5.5 Elementwise operators and §5.6 `lut16`.

use super::observe::Observer;
use crate::num::{clamp as clamp_v, floor_div, pow2};
use crate::tensor::Tensor;
use crate::whg1::Lut16;
use num_bigint::BigInt;
use num_traits::Signed;

/// `a + b`.
pub fn add(a: &Tensor, b: &Tensor) -> Tensor {
    Tensor::from_fn(a.shape, |c, y, x| a.at(c, y, x) + b.at(c, y, x))
}

/// `out[c] = in[c] + in[c + C/2]`.
pub fn chunk_add(x: &Tensor) -> Tensor {
    let half = x.c() / 2;
    let mut shape = x.shape;
    shape.c = half as u64;
    Tensor::from_fn(shape, |c, y, xo| x.at(c, y, xo) + x.at(c + half, y, xo))
}

/// `clamp(v, lo, hi)`.
pub fn clamp(x: &Tensor, lo: i64, hi: i64) -> Tensor {
    let (lo, hi) = (BigInt::from(lo), BigInt::from(hi));
    x.map(|v| clamp_v(v, &lo, &hi))
}

/// `max(v, 0)`.
pub fn relu(x: &Tensor) -> Tensor {
    x.map(|v| v.max(&BigInt::ZERO).clone())
}

/// `v` if `v ≥ 0`, else `⌊v·a / 2^f⌋` (`leaky.p` is `v·a`).
pub fn leaky(x: &Tensor, a: i64, f: u32, obs: &mut dyn Observer) -> Tensor {
    Tensor::from_fn(x.shape, |c, y, xo| {
        let v = x.at(c, y, xo);
        if !v.is_negative() {
            return v.clone();
        }
        let p = v * a;
        obs.see("leaky.p", c, &p);
        floor_div(&p, &pow2(f))
    })
}

/// `|v|`.
pub fn abs(x: &Tensor) -> Tensor {
    x.map(|v| v.abs())
}

/// §5.6: `out = T[v + 32768]`. The load check (§5.6, load step 8) keeps every
/// input within `[−32767, 32767]`; a value outside the table is an error of the
/// caller, reported, never indexed.
pub fn lut16(p: &Lut16, x: &Tensor) -> Result<Tensor, String> {
    let entry = |v: &BigInt| -> Result<BigInt, String> {
        let index = usize::try_from(v + 32768).ok().filter(|&i| i < p.table.len());
        index
            .map(|i| BigInt::from(p.table[i]))
            .ok_or_else(|| format!("lut16 input {v} lies outside the table"))
    };
    Ok(Tensor {
        shape: x.shape,
        data: x.data.iter().map(entry).collect::<Result<_, _>>()?,
    })
}
