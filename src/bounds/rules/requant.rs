//! §8.3 `rescale`, `chscale` and `mul`.

use super::{Recorder, rq};
use crate::bounds::interval::{Interval, hull};
use crate::whg1::{Chscale, Placement, Rq};
use num_bigint::BigInt;

/// `rq.t = [l + b_pre[c], h + b_pre[c]]`, then the `rq` rules, for each of `c` channels.
pub fn rescale(r: &mut Recorder, p: &Rq, x: &Interval, channels: u32) -> Interval {
    let results: Vec<Interval> = (0..channels as usize)
        .map(|c| {
            let b = BigInt::from(p.bias_at(Placement::Pre, c));
            let t = r.sat.monotone(x, |sat, v| sat.add(v, &b));
            rq::channel(r, p, c, &t)
        })
        .collect();
    hull(&results).unwrap_or_else(|| Interval::point(0))
}

/// For channel `c`: `rq.t = [l, h]`; `rq.p` and `rq.q` the hulls over the rows `r` the
/// scalar's range `[lo, hi]` allows, with `m = M[r][c]`; `rq.y = rq.q`.
pub fn chscale(r: &mut Recorder, p: &Chscale, x: &Interval, channels: u32, lo: i64, hi: i64) -> Interval {
    let c_n = channels as usize;
    let mut results = Vec::new();
    for c in 0..c_n {
        r.record("rq.t", x);
        let mut ps = Vec::new();
        let mut qs = Vec::new();
        for row in lo..=hi {
            let m = p.m[row as usize * c_n + c];
            let (rq_p, rq_q) = rq::p_and_q(r, x, m, p.shift.into(), p.round);
            ps.push(rq_p);
            qs.push(rq_q);
        }
        let q = hull(&qs).unwrap_or_else(|| Interval::point(0));
        r.record("rq.p", &hull(&ps).unwrap_or_else(|| Interval::point(0)));
        r.record("rq.q", &q);
        r.record("rq.y", &q);
        results.push(q);
    }
    hull(&results).unwrap_or_else(|| Interval::point(0))
}

/// `mul.p` is the corner hull of `a`'s and `b`'s intervals; `rq.t = mul.p`; then the `rq`
/// rules for each of `c` channels.
pub fn mul(r: &mut Recorder, p: &Rq, a: &Interval, b: &Interval, channels: u32) -> Interval {
    let product = r.sat.corner_hull(a, b);
    r.record("mul.p", &product);
    let results: Vec<Interval> = (0..channels as usize).map(|c| rq::channel(r, p, c, &product)).collect();
    hull(&results).unwrap_or_else(|| Interval::point(0))
}
