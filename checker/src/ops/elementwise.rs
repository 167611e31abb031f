//! Elementwise operators (§5.4, §5.5, §5.6).

use super::{E, Tensor, ck, rq};
use crate::num::{Round, floor_shr64, r_round};
use crate::whg1::Rq;

pub fn map(x: &Tensor, f: impl Fn(i64) -> E<i64>) -> E<Tensor> {
    Ok(Tensor {
        shape: x.shape,
        data: x.data.iter().map(|&v| f(v)).collect::<E<_>>()?,
    })
}

/// `rescale`: `rq_c` on each element of channel `c`.
pub fn rescale(q: &Rq, x: &Tensor) -> E<Tensor> {
    let (c, h, w) = x.dims();
    let mut data = Vec::with_capacity(x.data.len());
    for ch in 0..c {
        for &v in &x.data[ch * h * w..(ch + 1) * h * w] {
            data.push(rq::apply(q, ch, v)?);
        }
    }
    Ok(Tensor { shape: x.shape, data })
}

/// `chscale`: `R_round(v · M[r][c], s)` with `r` the scalar's value.
pub fn chscale(x: &Tensor, r: i64, round: Round, s: u32, m: &[i64]) -> E<Tensor> {
    let (c, h, w) = x.dims();
    let r = fault!("chscale-row-0", r as usize, 0);
    let row = fault!("chscale-table-transposed", m[r * c..][..c].to_vec(), column(m, c, r));
    let mut data = Vec::with_capacity(x.data.len());
    for (ch, &mult) in row.iter().enumerate() {
        for &v in &x.data[ch * h * w..(ch + 1) * h * w] {
            let q = ck(r_round(rq::product(v, mult), s, round), "rq.q")?;
            data.push(ck(i64::try_from(q).ok(), "rq.q")?);
        }
    }
    Ok(Tensor { shape: x.shape, data })
}

/// `chscale-table-transposed`: `M[·][r]` of `M` read as `M[c][r]`.
#[cfg(feature = "mutants")]
fn column(m: &[i64], c: usize, r: usize) -> Vec<i64> {
    let rows = m.len() / c;
    (0..c).map(|ch| m[ch * rows + r]).collect()
}

/// `mul`: `rq_c(a · b)`, with `b` broadcast when it has one channel.
pub fn mul(q: &Rq, a: &Tensor, b: &Tensor) -> E<Tensor> {
    let (c, h, w) = a.dims();
    let n = h * w;
    let mut data = Vec::with_capacity(a.data.len());
    for ch in 0..c {
        let bp = if b.shape.c == 1 {
            b.plane(0)
        } else {
            b.plane(fault!("mul-b-plane-0", ch, 0))
        };
        for (k, &av) in a.plane(ch).iter().enumerate() {
            let p = ck(av.checked_mul(bp[k]), "mul.p")?;
            data.push(rq::apply(q, ch, p)?);
        }
        debug_assert_eq!(bp.len(), n);
    }
    Ok(Tensor { shape: a.shape, data })
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
