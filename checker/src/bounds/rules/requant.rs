//! §8.3 `rescale`, `chscale` and `mul`.

use super::rq::{rq_channels, rq_pq, rq_rule};
use super::{Out, min_max, plain, si, w_bits};
use crate::bounds::interval::{Iv, Rec, hull_into};
use crate::bounds::sat::Ctx;
use crate::num::Round;
use crate::whg1::{Rq, ScalarRec};

/// `rescale`: per channel, `rq.t` is the input's interval plus the `pre` bias, then the `rq` rules.
pub(super) fn rescale(c: &mut Ctx, rec: &mut Rec, rq: &Rq, x: Iv) -> Out {
    let mut y: Option<Iv> = None;
    for o in 0..rq_channels(rq) {
        let t = c.add_iv(x, si(rq.pre(o)));
        hull_into(&mut y, rq_rule(c, rec, rq, o, t));
    }
    plain(vec![y.expect("a channel")])
}

/// `chscale` over `cin` channels with the table `m`, its rounding and shift: per channel, the hulls
/// of `rq.p` and `rq.q` over the rows the scalar's range `sc` allows; `rq.y = rq.q`.
pub(super) fn chscale(
    c: &mut Ctx,
    rec: &mut Rec,
    x: Iv,
    cin: u64,
    sc: ScalarRec,
    m: &[i64],
    (round, shift): (Round, u8),
) -> Out {
    let n_c = cin as usize;
    let s = u32::from(shift);
    let mut q: Option<Iv> = None;
    for ch in 0..n_c {
        rec.put("rq.t", x);
        let rows = fault!("iv-chscale-all-rows", sc.lo..=sc.hi, 0..=(m.len() / n_c) as i64 - 1);
        for r in rows {
            let mv = m[r as usize * n_c + ch];
            let (p_iv, q_iv) = rq_pq(c, x, si(mv), s, round);
            rec.put("rq.p", p_iv);
            rec.put("rq.q", q_iv);
            hull_into(&mut q, q_iv);
        }
    }
    let q = q.expect("a row");
    rec.put("rq.y", q);
    Out {
        results: vec![q],
        k_c: None,
        w_bits: Some(w_bits(min_max(m))),
        mac: true,
    }
}

/// `mul`: `mul.p` is the corner hull of the two inputs' intervals; `rq.t = mul.p`, then the `rq`
/// rules.
pub(super) fn mul(c: &mut Ctx, rec: &mut Rec, rq: &Rq, a: Iv, b: Iv) -> Out {
    let p = c.corner(a, b);
    rec.put("mul.p", p);
    let mut y: Option<Iv> = None;
    for o in 0..rq_channels(rq) {
        hull_into(&mut y, rq_rule(c, rec, rq, o, p));
    }
    Out {
        results: vec![y.expect("a channel")],
        k_c: None,
        w_bits: None,
        mac: true,
    }
}
