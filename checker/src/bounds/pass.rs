//! §8.1's bounds pass: every tensor's interval and every node's named intermediates, visiting the
//! operators in graph order, each by its rule ([`super::rules`]) with §8.1's saturation; the
//! policies turn producer results into tensor intervals, and an empty `check` refuses the graph.

use super::interval::{Iv, Rec};
use super::rules::{Refuse, range_iv, rule, si};
use super::sat::{Ctx, S};
use crate::plan::Shape;
use crate::whg1::{Graph, Policy};

/// One node's share of the pass.
#[derive(Debug)]
pub struct Node {
    pub saturated: bool,
    pub rec: Rec,
    /// The producer result of each output.
    pub results: Vec<Iv>,
    /// Each output tensor's interval, after its policy.
    pub outs: Vec<Iv>,
    /// `K_c` (§6): `Some(None)` is unbounded; `None` when the operator records none.
    pub k_c: Option<Option<S>>,
    pub a_bits: Option<Vec<u32>>,
    pub w_bits: Option<u32>,
}

#[derive(Debug)]
pub struct Pass {
    pub tensors: Vec<Option<Iv>>,
    pub nodes: Vec<Node>,
}

/// The bounds pass over one graph. `shapes` are the load-time shapes when the inputs declare sizes.
pub fn pass(g: &Graph, shapes: Option<&[Option<Shape>]>) -> Result<Pass, Refuse> {
    let mut tensors: Vec<Option<Iv>> = vec![None; g.tensors.len()];
    for inp in &g.inputs {
        let (lo, hi) = g.tensors[inp.tensor]
            .policy
            .range()
            .expect("an input is check or clamp");
        tensors[inp.tensor] = Some(range_iv(lo, hi));
    }
    // The producer results before their policies, for `mac-a-bits-before-policy` only.
    #[cfg(feature = "mutants")]
    let mut results: Vec<Option<Iv>> = tensors.clone();
    let mut nodes = Vec::with_capacity(g.ops.len());
    for (k, op) in g.ops.iter().enumerate() {
        let ins: Vec<Iv> = op.ins.iter().map(|&t| tensors[t].expect("graph order")).collect();
        let mut c = Ctx::default();
        let mut rec = Rec::default();
        let out = rule(g, k, op, &ins, shapes, &mut c, &mut rec)?;
        let mut outs = Vec::with_capacity(op.outs.len());
        for (&t, &r) in op.outs.iter().zip(&out.results) {
            fault!("mac-a-bits-before-policy", (), results[t] = Some(r));
            let iv = policy_applied(g.tensors[t].policy, r).ok_or(Refuse::EmptyCheck(k))?;
            tensors[t] = Some(iv);
            outs.push(iv);
        }
        let operands = fault!("mac-a-bits-of-outputs", &ins, &outs);
        let a_bits = out.mac.then(|| {
            fault!(
                "mac-a-bits-before-policy",
                operands.iter().map(|iv| iv.bits()).collect(),
                op.ins
                    .iter()
                    .map(|&t| results[t].expect("graph order").bits())
                    .collect()
            )
        });
        nodes.push(Node {
            saturated: c.saturated,
            rec,
            results: out.results,
            outs,
            k_c: out.k_c,
            a_bits,
            w_bits: out.w_bits,
        });
    }
    Ok(Pass { tensors, nodes })
}

/// A tensor's interval from its producer result `r` and its policy (§8.1); `None` when a `check`
/// leaves it empty.
fn policy_applied(policy: Policy, r: Iv) -> Option<Iv> {
    Some(match policy {
        Policy::Derived => r,
        Policy::Clamp(lo, hi) => {
            let (lo, hi) = (si(lo), si(hi));
            let clamped = Iv::new(r.lo.max(lo).min(hi), r.hi.max(lo).min(hi));
            fault!("iv-clamp-policy-ignored", clamped, r)
        }
        Policy::Check(lo, hi) => {
            let (lo, hi) = (si(lo), si(hi));
            let iv = fault!("iv-check-policy-derived", Iv::new(r.lo.max(lo), r.hi.min(hi)), r);
            if fault!("iv-check-empty-accepted", iv.lo > iv.hi, false) {
                return None;
            }
            iv
        }
    })
}
