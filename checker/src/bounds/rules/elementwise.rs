//! §8.3 `add`, `chunk_add`, `clamp`, `relu`, `abs`, `leaky` and `lut16`: each the image of its
//! input's interval under the map.

use super::{Out, plain, si};
use crate::bounds::interval::{Iv, Rec, hull_into};
use crate::bounds::sat::{Ctx, S};

/// `add`: `[la + lb, ha + hb]`.
pub(super) fn add(c: &mut Ctx, a: Iv, b: Iv) -> Out {
    plain(vec![Iv::new(c.add(a.lo, b.lo), c.add(a.hi, b.hi))])
}

/// `chunk_add`: `[2l, 2h]`.
pub(super) fn chunk_add(c: &mut Ctx, x: Iv) -> Out {
    let two = S::from_i128(fault!("iv-chunk-add-one-term", 2, 1));
    plain(vec![Iv::new(c.mul(two, x.lo), c.mul(two, x.hi))])
}

/// `clamp(lo, hi)`: `[clamp(l, lo, hi), clamp(h, lo, hi)]`.
pub(super) fn clamp(x: Iv, lo: i64, hi: i64) -> Out {
    let (lo, hi) = (si(lo), si(hi));
    plain(vec![Iv::new(x.lo.max(lo).min(hi), x.hi.max(lo).min(hi))])
}

/// `relu`: `[max(l, 0), max(h, 0)]`.
pub(super) fn relu(x: Iv) -> Out {
    let lo = fault!("iv-relu-lo-kept", x.lo.max(S::ZERO), x.lo);
    plain(vec![Iv::new(lo, x.hi.max(S::ZERO))])
}

/// `abs`: the image of the input's interval under `|·|`.
pub(super) fn abs(c: &mut Ctx, x: Iv) -> Out {
    plain(vec![abs_image(c, x)])
}

/// The image of an interval under `|·|`, also `sigmoid`'s `u`.
pub(super) fn abs_image(c: &mut Ctx, x: Iv) -> Iv {
    if !x.lo.is_neg() {
        x
    } else if x.hi <= S::ZERO {
        Iv::new(c.neg(x.hi), c.neg(x.lo))
    } else {
        let nl = c.neg(x.lo);
        let lo = fault!("iv-abs-straddle-lo", S::ZERO, nl.min(x.hi));
        Iv::new(lo, nl.max(x.hi))
    }
}

/// `leaky(a, f)`: the hull of the negative part (from `leaky.p`) and the non-negative part.
pub(super) fn leaky(c: &mut Ctx, rec: &mut Rec, x: Iv, a: i64, f: u32) -> Out {
    let mut out: Option<Iv> = None;
    if x.lo.is_neg() {
        let top = fault!("iv-leaky-neg-part-full", x.hi.min(S::from_i128(-1)), x.hi);
        let neg_part = Iv::new(x.lo, top);
        let p = c.corner(neg_part, Iv::point(si(a)));
        rec.put("leaky.p", p);
        hull_into(&mut out, c.shr_iv(p, f));
    } else {
        rec.put("leaky.p", Iv::point(S::ZERO));
    }
    if !x.hi.is_neg() {
        hull_into(&mut out, Iv::new(x.lo.max(S::ZERO), x.hi));
    }
    plain(vec![out.expect("a part")])
}

/// `lut16`: `[min, max]` of the table over the input's interval; `None` when the interval passes
/// `[−32767, 32767]` (§5.6, refused at load).
pub(super) fn lut16(x: Iv, table: &[i16]) -> Option<Out> {
    let (lo, hi) = match (x.lo.to_i128(), x.hi.to_i128()) {
        (Some(lo), Some(hi)) if lo >= -32767 && hi <= 32767 => (lo, hi),
        _ => return None,
    };
    let (i, j) = ((lo + 32768) as usize, (hi + 32768) as usize);
    let vals = fault!("iv-lut16-ends-only", &table[i..=j], &[table[i], table[j]][..]);
    let (a, b) = (
        vals.iter().min().copied().unwrap_or(0),
        vals.iter().max().copied().unwrap_or(0),
    );
    Some(plain(vec![Iv::i(i128::from(a), i128::from(b))]))
}
