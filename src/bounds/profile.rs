//! §7 Profiles: width classes, the `acc32` parameter conditions, what a node fits,
//! and each profile's first failure (§8.5).

use super::interval::Interval;
use super::pass::Pass;
use crate::whg1::{Graph, Node, Op, Placement, Policy, Rq};

/// `acc32` or `acc64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Profile {
    Acc32,
    Acc64,
}

impl Profile {
    pub const ALL: [Profile; 2] = [Profile::Acc32, Profile::Acc64];

    pub fn name(self) -> &'static str {
        match self {
            Profile::Acc32 => "acc32",
            Profile::Acc64 => "acc64",
        }
    }

    pub fn parse(s: &str) -> Option<Profile> {
        Profile::ALL.into_iter().find(|p| p.name() == s)
    }

    /// §7.1: the width each class must fit under this profile.
    pub fn width(self, class: Class) -> u32 {
        match (self, class) {
            (Profile::Acc64, Class::Tensor | Class::Acc) => 64,
            (Profile::Acc64, Class::Wide | Class::Product) => 128,
            (Profile::Acc32, Class::Tensor | Class::Acc | Class::Wide) => 32,
            // Under acc32 a product fits i64, formed from operands that each fit i32: the
            // operands are checked by their own classes and by §7.2's parameter conditions.
            (Profile::Acc32, Class::Product) => 64,
        }
    }
}

/// §7.1 width classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Tensor,
    Acc,
    Wide,
    Product,
}

use Class::{Acc, Product, Wide};

/// `rq`'s intermediates (§5.1), which every operator ending in `rq` records last.
const RQ: [(&str, Class); 4] = [("rq.t", Acc), ("rq.p", Product), ("rq.q", Acc), ("rq.y", Acc)];

/// `exp_neg_q16`'s intermediates (§2), which `softmax`, `sigmoid` and `elu` record.
const EXP: [(&str, Class); 4] = [("exp.negx", Acc), ("exp.nl", Acc), ("exp.t2", Acc), ("exp.c", Acc)];

/// Table 8.5-A: the intermediates each operator records, in definition order, each with the class §5
/// gives it (§7.1). Every other operator records none.
pub const TABLE_8_5_A: [(&str, &[(&str, Class)]); 14] = [
    (
        "conv",
        &[("conv.term", Acc), ("conv.acc", Acc), RQ[0], RQ[1], RQ[2], RQ[3]],
    ),
    (
        "conv_transpose",
        &[("convT.term", Acc), ("convT.acc", Acc), RQ[0], RQ[1], RQ[2], RQ[3]],
    ),
    ("rescale", &RQ),
    ("chscale", &RQ),
    ("mul", &[("mul.p", Acc), RQ[0], RQ[1], RQ[2], RQ[3]]),
    (
        "gram",
        &[("gram.term", Acc), ("gram.acc", Acc), RQ[0], RQ[1], RQ[2], RQ[3]],
    ),
    (
        "apply",
        &[("apply.term", Acc), ("apply.acc", Acc), RQ[0], RQ[1], RQ[2], RQ[3]],
    ),
    ("leaky", &[("leaky.p", Acc)]),
    (
        "igdn",
        &[
            ("igdn.x2", Wide),
            ("igdn.gx2", Product),
            ("igdn.term", Wide),
            ("igdn.N", Wide),
            ("igdn.r", Acc),
            ("igdn.xr", Wide),
        ],
    ),
    (
        "layernorm_c",
        &[
            ("ln.S", Wide),
            ("ln.m", Wide),
            ("ln.d", Acc),
            ("ln.T", Wide),
            ("ln.v", Wide),
            ("rsq.num", Acc),
            ("ln.k", Acc),
            ("ln.dk", Wide),
            ("ln.n", Acc),
            ("ln.ng", Wide),
        ],
    ),
    (
        "l2norm",
        &[("l2.T", Wide), ("rsq.num", Acc), ("l2.k", Acc), ("l2.vk", Wide)],
    ),
    (
        "softmax",
        &[
            ("sm.diff", Acc),
            EXP[0],
            EXP[1],
            EXP[2],
            EXP[3],
            ("sm.sum", Acc),
            ("sm.num", Acc),
        ],
    ),
    ("sigmoid", &[EXP[0], EXP[1], EXP[2], EXP[3], ("sig.num", Acc)]),
    ("elu", &[EXP[0], EXP[1], EXP[2], EXP[3], ("elu.p", Wide)]),
];

/// The keys operator `op` records (Table 8.5-A), in definition order.
pub fn keys_of(op: &str) -> impl Iterator<Item = &'static str> {
    let row = TABLE_8_5_A.iter().find(|(name, _)| *name == op);
    row.into_iter().flat_map(|(_, keys)| keys.iter().map(|(k, _)| *k))
}

/// The class §5 gives a named intermediate. A key outside Table 8.5-A is a bug of a rule.
pub fn class_of(key: &str) -> Class {
    TABLE_8_5_A
        .iter()
        .flat_map(|(_, keys)| keys.iter())
        .find(|(k, _)| *k == key)
        .map(|(_, class)| *class)
        .unwrap_or_else(|| panic!("{key:?} is not in Table 8.5-A"))
}

/// §7.2's parameter conditions the node fails, in that table's order.
pub fn acc32_params(node: &Node) -> Vec<&'static str> {
    let fits32 = |v: &i64| i32::try_from(*v).is_ok();
    let mut keys = Vec::new();
    let rq = |rq: &Rq, keys: &mut Vec<&'static str>| {
        if rq.mult.as_ref().is_some_and(|m| !m.values.values().iter().all(fits32)) {
            keys.push("rq.mult");
        }
        if !rq.shift.values().iter().all(|&s| s <= 63) {
            keys.push("rq.shift");
        }
        if rq
            .bias
            .as_ref()
            .is_some_and(|b| b.placement == Placement::Post && !b.values.iter().all(fits32))
        {
            keys.push("rq.post_bias");
        }
    };
    match &node.op {
        Op::Conv(p) => {
            rq(&p.rq, &mut keys);
            if !p.weights.iter().all(fits32) {
                keys.push("weights");
            }
        }
        Op::ConvTranspose(p) => {
            rq(&p.rq, &mut keys);
            if !p.weights.iter().all(fits32) {
                keys.push("weights");
            }
        }
        Op::Rescale(p) | Op::Mul(p) => rq(p, &mut keys),
        Op::Gram(p) | Op::Apply(p) => rq(&p.rq, &mut keys),
        Op::Chscale(p) => {
            if !p.m.iter().all(fits32) {
                keys.push("chscale.m");
            }
            if p.shift > 63 {
                keys.push("chscale.s");
            }
        }
        Op::Igdn(p) => {
            if !p.gamma.iter().all(fits32) {
                keys.push("igdn.gamma");
            }
            if p.gf > 63 || p.frac > 63 {
                keys.push("igdn.shift");
            }
        }
        Op::Leaky { a, .. } if !fits32(a) => keys.push("leaky.a"),
        _ => {}
    }
    keys
}

/// Why a node, input or scalar does not meet a profile: a key, with the `bits` of the
/// interval when the key names one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    pub key: String,
    pub bits: Option<u32>,
}

/// The failure of node `index` under `profile`, or `None` when the node fits (§8.5).
pub fn node_failure(graph: &Graph, pass: &Pass, index: usize, profile: Profile) -> Option<Failure> {
    let rule = &pass.nodes[index];
    let node = &graph.nodes[index];
    if rule.saturated {
        return Some(Failure {
            key: "saturated".into(),
            bits: None,
        });
    }
    let mut failing: Vec<(String, u32)> = Vec::new();
    let mut consider = |key: String, class: Class, i: &Interval| {
        if !i.fits(profile.width(class)) {
            failing.push((key, i.bits()));
        }
    };
    for (key, i) in &rule.intermediates {
        consider(key.to_string(), class_of(key), i);
    }
    for (k, i) in rule.results.iter().enumerate() {
        consider(format!("out.{k}"), Class::Tensor, i);
    }
    // The most bits; a tie goes to the smallest key in byte order.
    if let Some((key, bits)) = failing
        .into_iter()
        .min_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.as_bytes().cmp(b.0.as_bytes())))
    {
        return Some(Failure { key, bits: Some(bits) });
    }
    if profile == Profile::Acc32 {
        if let Some(key) = acc32_params(node).first() {
            return Some(Failure {
                key: key.to_string(),
                bits: None,
            });
        }
        if node
            .outputs
            .iter()
            .any(|&t| matches!(graph.tensors[t as usize].policy, Policy::Check { .. }))
        {
            return Some(Failure {
                key: "policy.check".into(),
                bits: None,
            });
        }
    }
    None
}

/// Whether a declared range `[lo, hi]` (an input's or a scalar's) meets the profile's
/// `tensor` width.
pub fn range_fits(lo: i64, hi: i64, profile: Profile) -> bool {
    Interval::new(lo, hi).fits(profile.width(Class::Tensor))
}
