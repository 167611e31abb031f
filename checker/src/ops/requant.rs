//! `rescale`, `chscale` and `mul` (§5.4).

use super::{E, Tensor, ck, rq};
use crate::num::{Round, r_round};
use crate::whg1::Rq;

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
