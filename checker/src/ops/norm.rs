//! Normalisations (§5.7): `igdn`, `layernorm_c`, `l2norm` and `softmax`.

use super::{E, Tensor, ck};
use crate::num::{exp_neg_q16, floor_shr, isqrt_u128, rsqrt_q16};

pub(super) fn narrow(v: i128, what: &str) -> E<i64> {
    ck(i64::try_from(v).ok(), what)
}

/// `igdn`: at each position, `N_i = β_i + Σ_j ⌊γ[i][j]·x_j² / 2^gf⌋` (each term floored),
/// `r_i = isqrt(max(0, N_i))`, `out = ⌊x_i·r_i / 2^frac⌋`.
pub fn igdn(x: &Tensor, gf: u32, frac: u32, gamma: &[i64], beta: &[i64]) -> E<Tensor> {
    let (c, h, w) = x.dims();
    let n = h * w;
    let mut out = vec![0i64; x.data.len()];
    let mut sq = vec![0i128; c];
    for pos in 0..n {
        for (j, s) in sq.iter_mut().enumerate() {
            let v = i128::from(x.data[j * n + pos]);
            *s = v * v; // igdn.x2 ≤ 2^126
        }
        for i in 0..c {
            let gx2 = (0..c).map(|j| {
                let g = fault!("igdn-gamma-transposed", gamma[i * c + j], gamma[j * c + i]);
                ck(i128::from(g).checked_mul(sq[j]), "igdn.gx2")
            });
            let b = i128::from(beta[i]);
            let n_i = fault!("igdn-floor-sum", floor_each(b, gx2, gf), floor_once(b, gx2, gf))?;
            let r = isqrt_u128(fault!("igdn-norm-abs", n_i.max(0), n_i.abs()) as u128) as i128; // igdn.r
            let xr = ck(i128::from(x.data[i * n + pos]).checked_mul(r), "igdn.xr")?;
            out[i * n + pos] = narrow(floor_shr(xr, frac), "igdn out")?;
        }
    }
    Ok(Tensor {
        shape: x.shape,
        data: out,
    })
}

/// `igdn.N = β + Σ_j ⌊γ[i][j]·x_j² / 2^gf⌋`, each term floored (`gx2` the terms in order).
fn floor_each(beta: i128, gx2: impl Iterator<Item = E<i128>>, gf: u32) -> E<i128> {
    let mut n = beta;
    for t in gx2 {
        n = ck(n.checked_add(floor_shr(t?, gf)), "igdn.N")?;
    }
    Ok(n)
}

/// `igdn-floor-sum`: `β + ⌊Σ_j γ[i][j]·x_j² / 2^gf⌋`, the sum floored once.
#[cfg(feature = "mutants")]
fn floor_once(beta: i128, gx2: impl Iterator<Item = E<i128>>, gf: u32) -> E<i128> {
    let mut sum: i128 = 0;
    for t in gx2 {
        sum = ck(sum.checked_add(t?), "igdn.N")?;
    }
    ck(beta.checked_add(floor_shr(sum, gf)), "igdn.N")
}

/// `layernorm_c`, over the `C` channel values at each position.
pub fn layernorm_c(x: &Tensor, eps: u64, gamma: &[i64], beta: &[i64]) -> E<Tensor> {
    let (c, h, w) = x.dims();
    let n = h * w;
    let ci = c as i128;
    let mut out = vec![0i64; x.data.len()];
    for pos in 0..n {
        let vals = (0..c).map(|k| i128::from(x.data[k * n + pos]));
        let s: i128 = vals
            .clone()
            .try_fold(0i128, |a, v| a.checked_add(v))
            .ok_or(super::Bug("ln.S".into()))?;
        let mm = ck(s.checked_add((ci / 2) * s.signum()), "ln.m")?;
        let m = fault!("ln-mean-floor", mm / ci, s.div_euclid(ci)); // `/` truncates toward zero
        let mut t: i128 = 0;
        let mut d = Vec::with_capacity(c);
        for v in vals {
            let dc = narrow(ck(v.checked_sub(m), "ln.d")?, "ln.d")?;
            let dc = i128::from(dc);
            t = ck(t.checked_add(ck(dc.checked_mul(dc), "ln.T")?), "ln.T")?;
            d.push(dc);
        }
        let v = fault!("ln-var-ceil", t / ci, (t + ci - 1) / ci); // T ≥ 0
        let u = ck(v.checked_add(i128::from(eps)), "ln.v")?;
        let k = i128::from(ck(rsqrt_q16(u), "ln.k")?);
        for (ch, &dc) in d.iter().enumerate() {
            let nc = floor_shr(ck(dc.checked_mul(k), "ln.dk")?, 16);
            let nc = narrow(nc, "ln.n")?;
            let ng = ck(i128::from(nc).checked_mul(i128::from(gamma[ch])), "ln.ng")?;
            // Equivalent when β joins inside the floor: ⌊(a + β·2^16) / 2^16⌋ = ⌊a / 2^16⌋ + β.
            let b = i128::from(beta[ch]);
            let o = fault!("ln-beta-inside-floor", floor_shr(ng, 16).checked_add(b), inner(ng, b));
            out[ch * n + pos] = narrow(ck(o, "layernorm out")?, "layernorm out")?;
        }
    }
    Ok(Tensor {
        shape: x.shape,
        data: out,
    })
}

/// `ln-beta-inside-floor`: `⌊(ng + β·2^16) / 2^16⌋`.
#[cfg(feature = "mutants")]
fn inner(ng: i128, beta: i128) -> Option<i128> {
    Some(floor_shr(ng.checked_add(beta.checked_mul(1 << 16)?)?, 16))
}

/// `l2norm`: per channel, `k = rsqrt_q16(Σ v² + ε)`, `out = ⌊v·k / 2^16⌋`.
pub fn l2norm(x: &Tensor, eps: u64) -> E<Tensor> {
    let (c, _, _) = x.dims();
    let mut data = Vec::with_capacity(x.data.len());
    for ch in 0..c {
        let plane = x.plane(ch);
        let mut t: i128 = 0;
        for &v in plane {
            t = ck(t.checked_add(i128::from(v) * i128::from(v)), "l2.T")?;
        }
        let u = ck(t.checked_add(i128::from(fault!("l2norm-eps-ignored", eps, 0))), "l2.T")?;
        let k = i128::from(ck(rsqrt_q16(u), "l2.k")?);
        for &v in plane {
            let vk = ck(i128::from(v).checked_mul(k), "l2.vk")?;
            data.push(narrow(floor_shr(vk, 16), "l2norm out")?);
        }
    }
    Ok(Tensor { shape: x.shape, data })
}

/// `softmax` along `W` for each `(c, y)`.
pub fn softmax(x: &Tensor) -> E<Tensor> {
    let (_, _, w) = x.dims();
    let mut data = Vec::with_capacity(x.data.len());
    for row in x.data.chunks(w) {
        let m = row.iter().copied().max().unwrap_or(0);
        let mut e = Vec::with_capacity(w);
        let mut sum: i64 = 0;
        for &v in row {
            let diff = ck(v.checked_sub(m), "sm.diff")?;
            let ev = ck(exp_neg_q16(diff), "exp")?;
            sum = ck(sum.checked_add(ev), "sm.sum")?;
            e.push(ev);
        }
        for ev in e {
            let num = ck((ev << 16).checked_add(fault!("softmax-no-half", sum / 2, 0)), "sm.num")?;
            data.push(num / sum);
        }
    }
    Ok(Tensor { shape: x.shape, data })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Shape;

    #[test]
    fn softmax_rows_need_not_sum_to_2_16() {
        let x = Tensor {
            shape: Shape { c: 1, h: 1, w: 3 },
            data: vec![0, 0, 0],
        };
        let o = softmax(&x).unwrap();
        // Each is ⌊(65553·2^16 + ⌊3·65553/2⌋) / (3·65553)⌋ = 21845; three of them sum to 65535.
        assert_eq!(o.data, vec![21845; 3]);
        assert_ne!(o.data.iter().sum::<i64>(), 1 << 16);
    }

    #[test]
    fn igdn_floors_each_term() {
        // γ = [[1, 1]], gf = 1, x = (1, 1): Σ⌊1/2⌋ = 0, while ⌊Σ/2⌋ would be 1.
        let x = Tensor {
            shape: Shape { c: 2, h: 1, w: 1 },
            data: vec![1, 1],
        };
        let o = igdn(&x, 1, 0, &[1, 1, 1, 1], &[1, 1]).unwrap();
        assert_eq!(o.data, vec![1, 1]); // N = 1, r = 1
        let o = igdn(&x, 1, 0, &[1, 1, 1, 1], &[3, 3]).unwrap();
        assert_eq!(o.data, vec![1, 1]); // N = 3, r = 1 (flooring the sum once would give N = 4, r = 2)
    }

    #[test]
    fn layernorm_rounds_the_mean_to_nearest() {
        // Odd C: M = S + ⌊C/2⌋·sgn(S), m = trunc(M / C) is the nearest integer.
        let x = Tensor {
            shape: Shape { c: 3, h: 1, w: 1 },
            data: vec![0, 0, 2],
        };
        let o = layernorm_c(&x, 1, &[1 << 16; 3], &[0; 3]).unwrap();
        // m = trunc((2 + 1) / 3) = 1, d = (−1, −1, 1), T = 3, V = 1, U = 2, k = 2^32, n = ±2^16.
        assert_eq!(o.data, vec![-(1 << 16), -(1 << 16), 1 << 16]);
        // Even C with a mean of −½ rounds away from zero: m = trunc((−1 − 1) / 2) = −1.
        let x = Tensor {
            shape: Shape { c: 2, h: 1, w: 1 },
            data: vec![0, -1],
        };
        let o = layernorm_c(&x, u64::MAX, &[1 << 16; 2], &[0; 2]).unwrap();
        // d = (1, 0); V + ε passes 64 bits; k = ⌊2^32 / isqrt(2^64 − 1)⌋ = 1.
        assert_eq!(o.data, vec![0, 0]);
    }
}
