//! §7's profiles: the width classes (§7.1) with Table 8.5-A's keys in theirs, what a node, an input
//! and a scalar meet, the `acc32` parameter conditions (§7.2), and each profile's first failure
//! (§8.5).

use super::pass::{Node, Pass};
use crate::whg1::{Graph, Op, OpKind, Placement, Policy, Rq, Weights};

/// A width class of §7.1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Tensor,
    Acc,
    Wide,
    Product,
}

/// A profile of §7.2.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    Acc32,
    Acc64,
}

impl Profile {
    pub fn name(self) -> &'static str {
        match self {
            Profile::Acc32 => "acc32",
            Profile::Acc64 => "acc64",
        }
    }
}

impl Class {
    /// The width a value of this class must fit under a profile (§7.1). Under `acc32` a `product`
    /// fits i64; its operands' own conditions are checked where they are classed or as parameters.
    pub fn width(self, p: Profile) -> u32 {
        match (self, p) {
            (Class::Tensor | Class::Acc, Profile::Acc64) => 64,
            (Class::Wide | Class::Product, Profile::Acc64) => 128,
            (Class::Product, Profile::Acc32) => 64,
            (_, Profile::Acc32) => 32,
        }
    }
}

/// The operators whose `rq` rules record `rq.t`, `rq.p`, `rq.q` and `rq.y`.
const RQ: &[&str] = &["conv", "conv_transpose", "rescale", "chscale", "mul", "gram", "apply"];
/// The operators that record the `exp_neg_q16` rule's keys.
const EXP: &[&str] = &["softmax", "sigmoid", "elu"];

/// Table 8.5-A with §7.1's classes: every named intermediate, its class (as §5 defines the value),
/// and the operators that record it, in the table's order. A node records exactly its operator's
/// keys (checker/tests/intermediates.rs holds the rules to this table).
pub const INTERMEDIATES: &[(&str, Class, &[&str])] = &[
    ("conv.term", Class::Acc, &["conv"]),
    ("conv.acc", Class::Acc, &["conv"]),
    ("rq.t", Class::Acc, RQ),
    ("rq.p", Class::Product, RQ),
    ("rq.q", Class::Acc, RQ),
    ("rq.y", Class::Acc, RQ),
    ("convT.term", Class::Acc, &["conv_transpose"]),
    ("convT.acc", Class::Acc, &["conv_transpose"]),
    ("mul.p", Class::Acc, &["mul"]),
    ("gram.term", Class::Acc, &["gram"]),
    ("gram.acc", Class::Acc, &["gram"]),
    ("apply.term", Class::Acc, &["apply"]),
    ("apply.acc", Class::Acc, &["apply"]),
    ("leaky.p", Class::Acc, &["leaky"]),
    ("igdn.x2", Class::Wide, &["igdn"]),
    ("igdn.gx2", Class::Product, &["igdn"]),
    ("igdn.term", Class::Wide, &["igdn"]),
    ("igdn.N", Class::Wide, &["igdn"]),
    ("igdn.r", Class::Acc, &["igdn"]),
    ("igdn.xr", Class::Wide, &["igdn"]),
    ("ln.S", Class::Wide, &["layernorm_c"]),
    ("ln.m", Class::Wide, &["layernorm_c"]),
    ("ln.d", Class::Acc, &["layernorm_c"]),
    ("ln.T", Class::Wide, &["layernorm_c"]),
    ("ln.v", Class::Wide, &["layernorm_c"]),
    ("rsq.num", Class::Acc, &["layernorm_c", "l2norm"]),
    ("ln.k", Class::Acc, &["layernorm_c"]),
    ("ln.dk", Class::Wide, &["layernorm_c"]),
    ("ln.n", Class::Acc, &["layernorm_c"]),
    ("ln.ng", Class::Wide, &["layernorm_c"]),
    ("l2.T", Class::Wide, &["l2norm"]),
    ("l2.k", Class::Acc, &["l2norm"]),
    ("l2.vk", Class::Wide, &["l2norm"]),
    ("sm.diff", Class::Acc, &["softmax"]),
    ("exp.negx", Class::Acc, EXP),
    ("exp.nl", Class::Acc, EXP),
    ("exp.t2", Class::Acc, EXP),
    ("exp.c", Class::Acc, EXP),
    ("sm.sum", Class::Acc, &["softmax"]),
    ("sm.num", Class::Acc, &["softmax"]),
    ("sig.num", Class::Acc, &["sigmoid"]),
    ("elu.p", Class::Wide, &["elu"]),
];

/// The class of a key of Table 8.5-A. A rule that records any other key is wrong, and no class is
/// made up for it.
pub fn class_of(key: &str) -> Class {
    match INTERMEDIATES.iter().find(|e| e.0 == key) {
        Some(e) => e.1,
        None => panic!("{key}: not a key of Table 8.5-A"),
    }
}

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
        let max_shift = fault!("acc32-shift-64", 63, 64);
        if !rq.shift.iter().all(|&s| s <= max_shift) {
            out.push("rq.shift");
        }
        let placed = fault!("acc32-pre-bias-checked", rq.placement == Placement::Post, has_bias(rq));
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
            if fault!("acc32-chscale-shift-63", *shift > 63, *shift >= 63) {
                out.push("chscale.s");
            }
        }
        OpKind::Igdn { gf, frac, gamma, .. } => {
            if !gamma.iter().all(|&v| fits_i32(v)) {
                out.push("igdn.gamma");
            }
            let past = |s: u32| fault!("acc32-igdn-shift-63", s > 63, s >= 63);
            if past(*gf) || fault!("acc32-igdn-frac-unchecked", past(*frac), false) {
                out.push("igdn.shift");
            }
        }
        OpKind::Leaky { a, .. } if fault!("acc32-leaky-a-unchecked", !fits_i32(*a), false) => {
            out.push("leaky.a");
        }
        _ => {}
    }
    out
}

/// `acc32-pre-bias-checked`: whether `rq` has a bias, pre or post.
#[cfg(feature = "mutants")]
fn has_bias(rq: &Rq) -> bool {
    rq.placement != Placement::None
}

/// Why something fails a profile: §8.5's `key`, with `bits` for an interval key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Why {
    pub key: String,
    pub bits: Option<u32>,
}

/// The first reason a node fails `p` (§8.5, *What a node fits* and *First failure*), or `None`.
pub fn node_failure(op: &Op, g: &Graph, node: &Node, p: Profile) -> Option<Why> {
    if fault!("profile-saturated-fits", node.saturated, false) {
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
                Some((b, k)) => {
                    let (x, y) = (key.as_bytes(), k.as_bytes());
                    bits > *b || (bits == *b && fault!("first-failure-tie-reversed", x < y, x > y))
                }
            };
            if better {
                worst = Some((bits, key));
            }
        }
    };
    for (key, iv) in &node.rec.items {
        consider((*key).to_string(), iv.bits(), class_of(key).width(p));
    }
    let results: &[_] = fault!("profile-results-unchecked", &node.results, &[]);
    for (k, r) in results.iter().enumerate() {
        consider(format!("out.{k}"), r.bits(), Class::Tensor.width(p));
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
        let check = op
            .outs
            .iter()
            .any(|&t| matches!(g.tensors[t].policy, Policy::Check(..)));
        if fault!("profile-check-policy-allowed", check, false) {
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
        let ranges_checked = fault!("acc32-input-ranges-unchecked", true, p != Profile::Acc32);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::whg1::OPS;

    #[test]
    fn table_8_5_a_names_each_key_once_and_only_operators_of_section_5() {
        for (k, (key, _, ops)) in INTERMEDIATES.iter().enumerate() {
            assert!(INTERMEDIATES[..k].iter().all(|e| e.0 != *key), "{key} twice");
            for op in *ops {
                assert!(OPS.iter().any(|o| o.1 == *op), "{key}: {op} is not an operator of §5");
            }
        }
    }

    #[test]
    #[should_panic(expected = "conv.sum: not a key of Table 8.5-A")]
    fn a_key_outside_the_table_has_no_class() {
        class_of("conv.sum");
    }
}
