//! §8.3's `rq` rules (`rq.t`, `rq.p`, `rq.q`, `rq.y`), shared by every requantising operator, with
//! `R_round` evaluated as §2 writes it (docs/assumptions.md B3).

use super::si;
use crate::bounds::interval::{Iv, Rec};
use crate::bounds::sat::{Ctx, S};
use crate::num::Round;
use crate::whg1::Rq;

/// `R_round(p, s)`, evaluated as §2 writes it (docs/assumptions.md B3).
pub(super) fn r_round(c: &mut Ctx, p: S, s: u32, round: Round) -> S {
    if s == 0 {
        return p;
    }
    match round {
        Round::Floor => c.shr(p, s),
        Round::HalfUp => {
            let t = c.add(p, S::pow2(s - 1));
            c.shr(t, s)
        }
        Round::HalfEven => {
            let q = c.shr(p, s);
            let qs = c.mul(q, S::pow2(s));
            let r = c.sub(p, qs);
            let h = S::pow2(s - 1);
            let odd = matches!(q, S::V(v) if v & ethnum::I256::ONE == ethnum::I256::ONE);
            if r > h || (r == h && odd) {
                c.add(q, S::from_i128(1))
            } else {
                q
            }
        }
    }
}

/// The `rq.p` and `rq.q` rules (§8.3) for one multiplier: returns `(rq.p, rq.q)`.
pub(super) fn rq_pq(c: &mut Ctx, t: Iv, m: S, s: u32, round: Round) -> (Iv, Iv) {
    let a1 = c.mul(t.lo, m);
    let a2 = c.mul(t.hi, m);
    let (lo, hi) = fault!("iv-rq-p-unordered", (a1.min(a2), a1.max(a2)), (a1, a2));
    let p = Iv::new(lo, hi);
    let addend = if round != Round::Floor && s >= 1 {
        fault!("iv-rq-p-no-addend", S::pow2(s - 1), S::ZERO)
    } else {
        S::ZERO
    };
    let p_rec = Iv::new(p.lo, c.add(p.hi, addend));
    let q_from = fault!("iv-rq-q-with-addend", p, p_rec);
    let q = Iv::new(r_round(c, q_from.lo, s, round), r_round(c, q_from.hi, s, round));
    (p_rec, q)
}

/// The `rq` rules for channel `o` on `rq.t = t`; records `rq.t`, `rq.p`, `rq.q`, `rq.y` and returns `rq.y`.
pub(super) fn rq_rule(c: &mut Ctx, rec: &mut Rec, rq: &Rq, o: usize, t: Iv) -> Iv {
    rec.put("rq.t", t);
    let m = rq.mult(o).map_or(S::from_i128(1), si);
    let (p, q) = rq_pq(c, t, m, rq.shift(o), rq.round);
    rec.put("rq.p", p);
    rec.put("rq.q", q);
    let y = c.add_iv(q, si(fault!("iv-rq-post-bias-ignored", rq.post(o), 0)));
    rec.put("rq.y", y);
    y
}

/// How many channels an `rq` must be evaluated for: 1 when no field is given per channel (every
/// channel then has the same rule), else `C`.
pub(super) fn rq_channels(rq: &Rq) -> usize {
    rq.mult.len().max(rq.shift.len()).max(rq.bias.len()).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seeded::Rng;

    #[test]
    fn r_round_in_the_pass_matches_fixed_width() {
        let mut r = Rng::new(11);
        for _ in 0..3000 {
            let p = i128::from(r.range(i64::MIN, i64::MAX)) * i128::from(r.range(-4, 4));
            let s = r.range(0, 127) as u32;
            for round in [Round::Floor, Round::HalfUp, Round::HalfEven] {
                let mut c = Ctx::default();
                let got = r_round(&mut c, S::from_i128(p), s, round);
                assert_eq!(got.to_i128(), crate::num::r_round(p, s, round), "{p} {s} {round:?}");
                assert!(!c.saturated);
            }
        }
    }
}
