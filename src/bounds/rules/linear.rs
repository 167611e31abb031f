//! §8.3 `conv` and `conv_transpose`: term intervals folded term by term into
//! partial-sum intervals (§8.2), then the `rq` rules.

use super::{Recorder, rq};
use crate::bounds::interval::{Interval, hull};
use crate::whg1::{Conv, ConvTranspose, Placement};
use num_bigint::BigInt;

/// For output channel `o`: `conv.term` is the hull of its `cg·kh·kw` term intervals,
/// `conv.acc = A(K_o, b_pre[o])`, `rq.t = conv.acc`.
pub fn conv(r: &mut Recorder, p: &Conv, x: &Interval) -> Interval {
    let taps = p.weights.len() / p.cout as usize;
    let mut results = Vec::new();
    for o in 0..p.cout as usize {
        let terms: Vec<Interval> = p.weights[o * taps..(o + 1) * taps]
            .iter()
            .map(|&w| r.sat.term(&w.into(), x))
            .collect();
        r.record("conv.term", &hull(&terms).unwrap_or_else(|| Interval::point(0)));
        let acc = r
            .sat
            .partial_sums(&terms, &BigInt::from(p.rq.bias_at(Placement::Pre, o)));
        r.record("conv.acc", &acc);
        results.push(rq::channel(r, &p.rq, o, &acc));
    }
    hull(&results).unwrap_or_else(|| Interval::point(0))
}

/// For output channel `o`: `convT.term` is the hull of the term intervals of all its
/// `cin·kh·kw` taps; `convT.acc` is the hull over residues `ρ ∈ [0, sh) × [0, sw)` of
/// `A(K_ρ, b_pre[o])`, `K_ρ` the taps with `i mod sh = ρy` and `j mod sw = ρx`.
pub fn conv_transpose(r: &mut Recorder, p: &ConvTranspose, x: &Interval) -> Interval {
    let (cout, kh, kw) = (p.cout as usize, p.kh as usize, p.kw as usize);
    let cin = p.weights.len() / (cout * kh * kw);
    let (sh, sw) = (p.sh as usize, p.sw as usize);
    let mut results = Vec::new();
    for o in 0..cout {
        // terms[ci][i][j] for this output channel.
        let mut terms = Vec::with_capacity(cin * kh * kw);
        for ci in 0..cin {
            for k in 0..kh * kw {
                terms.push(r.sat.term(&p.weights[(ci * cout + o) * kh * kw + k].into(), x));
            }
        }
        r.record("convT.term", &hull(&terms).unwrap_or_else(|| Interval::point(0)));
        let b = BigInt::from(p.rq.bias_at(Placement::Pre, o));
        // Residues with a row (column) past the kernel hold no taps; they all give A(∅, b),
        // so those past min(sh, kh) (min(sw, kw)) are represented by one empty residue.
        let rows = sh.min(kh);
        let cols = sw.min(kw);
        let mut sums = Vec::new();
        for ry in 0..rows {
            for rx in 0..cols {
                let k_rho = (0..cin).flat_map(|ci| {
                    let terms = &terms;
                    (ry..kh)
                        .step_by(sh)
                        .flat_map(move |i| (rx..kw).step_by(sw).map(move |j| &terms[(ci * kh + i) * kw + j]))
                });
                sums.push(r.sat.partial_sums(k_rho, &b));
            }
        }
        if sh > kh || sw > kw {
            sums.push(r.sat.partial_sums([], &b));
        }
        let acc = hull(&sums).unwrap_or_else(|| Interval::point(0));
        r.record("convT.acc", &acc);
        results.push(rq::channel(r, &p.rq, o, &acc));
    }
    hull(&results).unwrap_or_else(|| Interval::point(0))
}
