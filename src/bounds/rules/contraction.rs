//! §8.3 `gram` and `apply`.

use super::{Recorder, rq};
use crate::bounds::interval::{Interval, hull};
use crate::whg1::Contraction;
use num_bigint::BigInt;

/// `[n·min(0, term_lo), n·max(0, term_hi)]`: every partial sum of `n` terms.
fn sums_of(r: &mut Recorder, n: u64, term: &Interval) -> Interval {
    let (zero, n) = (BigInt::ZERO, BigInt::from(n));
    let lo = r.sat.min(&zero, &term.lo);
    let hi = r.sat.max(&zero, &term.hi);
    Interval {
        lo: r.sat.mul(&n, &lo),
        hi: r.sat.mul(&n, &hi),
    }
}

fn epilogue(r: &mut Recorder, p: &Contraction, acc: &Interval, channels: u32) -> Interval {
    let results: Vec<Interval> = (0..channels as usize).map(|o| rq::channel(r, &p.rq, o, acc)).collect();
    hull(&results).unwrap_or_else(|| Interval::point(0))
}

/// `gram.term` is the corner hull of `A`'s and `B`'s intervals; `gram.acc =
/// [L·min(0, term_lo), L·max(0, term_hi)]` with `L` the largest `H·W` of its inputs;
/// `rq.t = gram.acc`; then the `rq` rules with `m = 1`.
pub fn gram(r: &mut Recorder, p: &Contraction, a: &Interval, b: &Interval, channels: u32, l: u64) -> Interval {
    let term = r.sat.corner_hull(a, b);
    r.record("gram.term", &term);
    let acc = sums_of(r, l, &term);
    r.record("gram.acc", &acc);
    epilogue(r, p, &acc, channels)
}

/// `apply.term` is the corner hull of `A`'s and `V`'s intervals; `apply.acc =
/// [d·min(0, term_lo), d·max(0, term_hi)]` with `d = C/groups`; then the `rq` rules.
pub fn apply(r: &mut Recorder, p: &Contraction, a: &Interval, v: &Interval, channels: u32) -> Interval {
    let term = r.sat.corner_hull(a, v);
    r.record("apply.term", &term);
    let acc = sums_of(r, u64::from(channels / p.groups), &term);
    r.record("apply.acc", &acc);
    epilogue(r, p, &acc, channels)
}
