//! §8.4 Admissible ranges, by the literal binary search.

use super::interval::Interval;
use super::pass::Pass;
use super::profile::{Class, Profile, class_of};
use super::rules::{self, Sizes};
use crate::num::pow2;
use crate::whg1::Graph;
use num_bigint::BigInt;

/// `C(X)`: with `τ`'s interval replaced by `[−X, X]` wherever a consumer reads it, every
/// value each consumer classes (its intermediates and producer results) meets the profile's
/// width, and none is saturated. A consumer whose rule refuses the interval (a `lut16` read
/// past ±32767) does not meet it.
fn holds(graph: &Graph, pass: &Pass, tensor: u32, x: &BigInt, profile: Profile) -> bool {
    let sizes = Sizes {
        shapes: pass.shapes.as_deref(),
    };
    let wide = Interval { lo: -x, hi: x.clone() };
    graph.nodes.iter().filter(|n| n.inputs.contains(&tensor)).all(|node| {
        let ins: Vec<Interval> = node
            .inputs
            .iter()
            .map(|&t| {
                if t == tensor {
                    wide.clone()
                } else {
                    pass.tensors[t as usize].clone()
                }
            })
            .collect();
        match rules::apply(graph, node, &ins, &sizes) {
            Err(_) => false,
            Ok(rule) => {
                !rule.saturated
                    && rule
                        .intermediates
                        .iter()
                        .all(|(k, i)| i.fits(profile.width(class_of(k))))
                    && rule.results.iter().all(|i| i.fits(profile.width(Class::Tensor)))
            }
        }
    })
}

/// The admissible range of tensor `tensor` for `profile`: `[−X*, min(X*, 2^63 − 1)]` with
/// `X*` the largest `X ∈ [0, 2^63]` for which `C(X)` holds, or `None` when `C(0)` fails.
pub fn admissible(graph: &Graph, pass: &Pass, tensor: u32, profile: Profile) -> Option<(BigInt, BigInt)> {
    if !holds(graph, pass, tensor, &BigInt::ZERO, profile) {
        return None;
    }
    // Invariant: C(lo) holds; C(hi + 1) fails or hi = 2^63.
    let (mut lo, mut hi) = (BigInt::ZERO, pow2(63));
    while lo < hi {
        let mid: BigInt = (&lo + &hi + 1u32) / 2u32;
        if holds(graph, pass, tensor, &mid, profile) {
            lo = mid;
        } else {
            hi = mid - 1u32;
        }
    }
    let top = lo.clone().min(pow2(63) - 1u32);
    Some((-lo, top))
}
