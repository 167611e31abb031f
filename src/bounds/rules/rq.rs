//! The `rq` rules of §8.3 (`rq.p`, `rq.q`, `rq.y`), shared by every requantising operator.

use super::Recorder;
use crate::bounds::interval::Interval;
use crate::num::{Round, pow2};
use crate::whg1::{Placement, Rq};
use num_bigint::BigInt;

/// `rq.p` and `rq.q` for one channel with multiplier `m`, shift `s` and rounding `round`, from
/// `rq.t = t`: `P = [min(t_lo·m, t_hi·m), max(t_lo·m, t_hi·m)]`, `rq.p = [P_lo, P_hi + a]`
/// (`a = 2^(s−1)` for `half_up` and `half_even` with `s ≥ 1`, else 0), and
/// `rq.q = [R(P_lo, s), R(P_hi, s)]`, without the addend `a`.
pub fn p_and_q(r: &mut Recorder, t: &Interval, m: i64, s: u32, round: Round) -> (Interval, Interval) {
    let p = r.sat.term(&BigInt::from(m), t);
    let a = if round != Round::Floor && s >= 1 {
        pow2(s - 1)
    } else {
        BigInt::ZERO
    };
    let p_hi_a = r.sat.add(&p.hi, &a);
    let rq_p = Interval {
        lo: p.lo.clone(),
        hi: p_hi_a,
    };
    let rq_q = r.sat.monotone(&p, |sat, v| sat.round(round, v, s));
    (rq_p, rq_q)
}

/// `rq.y = [q_lo + b, q_hi + b]`, with `b` the `post` bias or 0.
pub fn y(r: &mut Recorder, q: &Interval, post: i64) -> Interval {
    let b = BigInt::from(post);
    r.sat.monotone(q, |sat, v| sat.add(v, &b))
}

/// The `rq` rules for channel `o` from `rq.t = t`; records `rq.t`, `rq.p`, `rq.q` and `rq.y`
/// and returns the channel's producer result `rq.y`.
pub fn channel(r: &mut Recorder, rq: &Rq, o: usize, t: &Interval) -> Interval {
    r.record("rq.t", t);
    let (p, q) = p_and_q(r, t, rq.mult_at(o), rq.shift_at(o), rq.round);
    r.record("rq.p", &p);
    r.record("rq.q", &q);
    let y = y(r, &q, rq.bias_at(Placement::Post, o));
    r.record("rq.y", &y);
    y
}
