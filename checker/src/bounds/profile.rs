//! §7's profiles: what a node, an input and a scalar meet, the `acc32` parameter conditions (§7.2),
//! and each profile's first failure (§8.5).

use super::interval::{Class, Profile};
use super::pass::{Node, Pass};
use crate::whg1::{Graph, Op, OpKind, Placement, Policy, Rq, Weights};

fn fits_i32(v: i64) -> bool {
    i32::try_from(v).is_ok()
}

/// Whether every weight fits `i32`: its extremes do.
fn all_fit_i32(w: &Weights) -> bool {
    let (lo, hi) = w.range();
    fits_i32(lo) && fits_i32(hi)
}

/// §7.2's parameter conditions the node fails, in that table's order (docs/assumptions.md B6 for
/// `chscale`'s `M`: every row).
pub fn acc32_params(op: &Op) -> Vec<&'static str> {
    let mut out = Vec::new();
    let rq_keys = |rq: &Rq, out: &mut Vec<&'static str>| {
        if !rq.mult.iter().all(|&m| fits_i32(m)) {
            out.push("rq.mult");
        }
        let max_shift = if crate::mutants::active("acc32-shift-64") {
            64
        } else {
            63
        };
        if !rq.shift.iter().all(|&s| s <= max_shift) {
            out.push("rq.shift");
        }
        let placed = rq.placement == Placement::Post
            || (rq.placement == Placement::Pre && crate::mutants::active("acc32-pre-bias-checked"));
        if placed && !rq.bias.iter().all(|&b| fits_i32(b)) {
            out.push("rq.post_bias");
        }
    };
    match &op.kind {
        OpKind::Conv(p) => {
            rq_keys(&p.rq, &mut out);
            if !all_fit_i32(&p.w) {
                out.push("weights");
            }
        }
        OpKind::ConvT(p) => {
            rq_keys(&p.rq, &mut out);
            if !all_fit_i32(&p.w) {
                out.push("weights");
            }
        }
        OpKind::Rescale(rq) | OpKind::Mul(rq) | OpKind::Gram { rq, .. } | OpKind::Apply { rq, .. } => {
            rq_keys(rq, &mut out)
        }
        OpKind::Chscale { m, shift, .. } => {
            if !m.iter().all(|&v| fits_i32(v)) {
                out.push("chscale.m");
            }
            if *shift > 63 {
                out.push("chscale.s");
            }
        }
        OpKind::Igdn { gf, frac, gamma, .. } => {
            if !gamma.iter().all(|&v| fits_i32(v)) {
                out.push("igdn.gamma");
            }
            if *gf > 63 || (*frac > 63 && !crate::mutants::active("acc32-igdn-frac-unchecked")) {
                out.push("igdn.shift");
            }
        }
        OpKind::Leaky { a, .. } if !fits_i32(*a) && !crate::mutants::active("acc32-leaky-a-unchecked") => {
            out.push("leaky.a");
        }
        _ => {}
    }
    out
}

/// Why something fails a profile: §8.5's `key`, with `bits` for an interval key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Why {
    pub key: String,
    pub bits: Option<u32>,
}

/// The first reason a node fails `p` (§8.5, *What a node fits* and *First failure*), or `None`.
pub fn node_failure(op: &Op, g: &Graph, node: &Node, p: Profile) -> Option<Why> {
    if node.saturated && !crate::mutants::active("profile-saturated-fits") {
        return Some(Why {
            key: "saturated".into(),
            bits: None,
        });
    }
    let mut worst: Option<(u32, String)> = None;
    let mut consider = |key: String, bits: u32, width: u32| {
        if bits > width {
            let better = match &worst {
                None => true,
                Some((b, k)) if crate::mutants::active("first-failure-tie-reversed") => {
                    bits > *b || (bits == *b && key.as_bytes() > k.as_bytes())
                }
                Some((b, k)) => bits > *b || (bits == *b && key.as_bytes() < k.as_bytes()),
            };
            if better {
                worst = Some((bits, key));
            }
        }
    };
    for (key, class, iv) in &node.rec.items {
        consider((*key).to_string(), iv.bits(), class.width(p));
    }
    if !crate::mutants::active("profile-results-unchecked") {
        for (k, r) in node.results.iter().enumerate() {
            consider(format!("out.{k}"), r.bits(), Class::Tensor.width(p));
        }
    }
    if let Some((bits, key)) = worst {
        return Some(Why { key, bits: Some(bits) });
    }
    if p == Profile::Acc32 {
        if let Some(first) = acc32_params(op).first() {
            return Some(Why {
                key: (*first).to_string(),
                bits: None,
            });
        }
        if op
            .outs
            .iter()
            .any(|&t| matches!(g.tensors[t].policy, Policy::Check(..)))
            && !crate::mutants::active("profile-check-policy-allowed")
        {
            return Some(Why {
                key: "policy.check".into(),
                bits: None,
            });
        }
    }
    None
}

/// Where a failure lies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub graph: String,
    pub place: &'static str,
    pub index: usize,
    pub why: Why,
}

/// The first failure of `p` over the graphs in order (§8.5), or `None` when every graph meets it.
pub fn first_failure(graphs: &[(&str, &Graph, &Pass)], p: Profile) -> Option<Failure> {
    let width = Class::Tensor.width(p);
    for &(name, g, pass) in graphs {
        let fail = |place, index, why| {
            Some(Failure {
                graph: name.to_string(),
                place,
                index,
                why,
            })
        };
        let ranges_checked = !(p == Profile::Acc32 && crate::mutants::active("acc32-input-ranges-unchecked"));
        for (i, inp) in g.inputs.iter().enumerate().filter(|_| ranges_checked) {
            let (lo, hi) = g.tensors[inp.tensor]
                .policy
                .range()
                .expect("an input is check or clamp");
            let bits = super::rules::range_iv(lo, hi).bits();
            if bits > width {
                return fail(
                    "input",
                    i,
                    Why {
                        key: "range".into(),
                        bits: Some(bits),
                    },
                );
            }
        }
        for (i, s) in g.scalars.iter().enumerate() {
            let bits = super::rules::range_iv(s.lo, s.hi).bits();
            if bits > width {
                return fail(
                    "scalar",
                    i,
                    Why {
                        key: "range".into(),
                        bits: Some(bits),
                    },
                );
            }
        }
        for (k, (op, node)) in g.ops.iter().zip(&pass.nodes).enumerate() {
            if let Some(why) = node_failure(op, g, node, p) {
                return fail("node", k, why);
            }
        }
    }
    None
}
