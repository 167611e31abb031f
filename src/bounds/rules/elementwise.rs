//! §8.3 `add`, `chunk_add`, `clamp`, `relu`, `abs`, `leaky` and `lut16`.

use super::Recorder;
use crate::bounds::interval::{Interval, Sat, hull};
use crate::refusal::{Refusal, model_mismatch};
use crate::whg1::Lut16;
use num_bigint::BigInt;
use num_traits::Signed;

/// `[la + lb, ha + hb]`.
pub fn add(r: &mut Recorder, a: &Interval, b: &Interval) -> Interval {
    Interval {
        lo: r.sat.add(&a.lo, &b.lo),
        hi: r.sat.add(&a.hi, &b.hi),
    }
}

/// `[2l, 2h]`.
pub fn chunk_add(r: &mut Recorder, x: &Interval) -> Interval {
    let two = BigInt::from(2);
    r.sat.monotone(x, |sat, v| sat.mul(&two, v))
}

/// `[clamp(l, lo, hi), clamp(h, lo, hi)]`, `clamp(v) = min(max(v, lo), hi)`.
pub fn clamp(r: &mut Recorder, x: &Interval, lo: i64, hi: i64) -> Interval {
    let (lo, hi) = (BigInt::from(lo), BigInt::from(hi));
    r.sat.monotone(x, |sat, v| {
        let m = sat.max(v, &lo);
        sat.min(&m, &hi)
    })
}

/// `[max(l, 0), max(h, 0)]`.
pub fn relu(r: &mut Recorder, x: &Interval) -> Interval {
    r.sat.monotone(x, |sat, v| sat.max(v, &BigInt::ZERO))
}

/// The image under `|·|`: `[l, h]` if `l ≥ 0`, `[−h, −l]` if `h ≤ 0`, else `[0, max(−l, h)]`.
pub fn abs(sat: &mut Sat, x: &Interval) -> Interval {
    if !x.lo.is_negative() {
        x.clone()
    } else if !x.hi.is_positive() {
        Interval {
            lo: sat.neg(&x.hi),
            hi: sat.neg(&x.lo),
        }
    } else {
        let neg_l = sat.neg(&x.lo);
        Interval {
            lo: BigInt::ZERO,
            hi: sat.max(&neg_l, &x.hi),
        }
    }
}

/// If `l < 0`, `leaky.p` is the corner hull of `[l, min(h, −1)]` and `[a, a]`, and the negative
/// part is `[⌊p_lo / 2^f⌋, ⌊p_hi / 2^f⌋]`; otherwise `leaky.p = [0, 0]`. The non-negative part
/// is `[max(l, 0), h]` when `h ≥ 0`. The result is the hull of the parts present.
pub fn leaky(r: &mut Recorder, x: &Interval, a: i64, f: u32) -> Interval {
    let mut parts = Vec::new();
    if x.lo.is_negative() {
        let top = r.sat.min(&x.hi, &BigInt::from(-1));
        let p = r.sat.corner_hull(
            &Interval {
                lo: x.lo.clone(),
                hi: top,
            },
            &Interval::point(a),
        );
        r.record("leaky.p", &p);
        parts.push(r.sat.monotone(&p, |sat, v| sat.shr(v, f)));
    } else {
        r.record("leaky.p", &Interval::point(0));
    }
    if !x.hi.is_negative() {
        parts.push(Interval {
            lo: r.sat.max(&x.lo, &BigInt::ZERO),
            hi: x.hi.clone(),
        });
    }
    hull(&parts).unwrap_or_else(|| Interval::point(0))
}

/// `[min, max]` of `T[u + 32768]` over `u ∈ [l, h]`, after §5.6's load check that
/// `[l, h]` lies within `[−32767, 32767]`.
pub fn lut16(p: &Lut16, x: &Interval) -> Result<Interval, Refusal> {
    let (lo, hi) = match (i32::try_from(&x.lo), i32::try_from(&x.hi)) {
        (Ok(lo), Ok(hi)) if -32767 <= lo && hi <= 32767 => (lo, hi),
        _ => return model_mismatch(format!("lut16's input range [{}, {}] passes ±32767", x.lo, x.hi)),
    };
    let entries = (lo..=hi).map(|u| p.table[(u + 32768) as usize]);
    let min = entries.clone().min().unwrap_or(0);
    let max = entries.max().unwrap_or(0);
    Ok(Interval::new(min, max))
}
