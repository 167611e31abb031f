//! §8.4's admissible range of a tensor `τ` for a profile `P`.
//!
//! - **Scope.** `τ`'s consumers are the operators that read it directly ([`consumers`]).
//! - **The condition.** `C(X)` ([`condition`]) holds when, with `τ`'s interval replaced by
//!   `[−X, X]` wherever a consumer reads it and every other tensor's interval as the pass computed
//!   it, every value a consumer classes (its named intermediates and producer results, §7.1) meets
//!   `P`'s width for its class, and none of its computations is saturated (§8.1). Parameter
//!   conditions (§7.2) and policies are not part of it.
//! - **Search.** `X*` is the largest `X ∈ [0, 2^63]` for which `C(X)` holds, by binary search on
//!   that interval ([`x_star`]); the range is `[−X*, min(X*, 2^63 − 1)]` ([`admissible`]).
//! - **No admissible range.** When `C(0)` fails, there is none.
//!
//! Each consumer's rule is the pass's own ([`super::rules`]), evaluated afresh on the replaced
//! intervals. A `lut16` consumer whose interval passes `[−32767, 32767]` is refused by §5.6's load
//! check, so `C(X)` fails there (docs/assumptions.md B8); a tensor nothing reads is limited by
//! nothing, and its range is `[−2^63, 2^63 − 1]`.

use super::interval::{Iv, Rec};
use super::pass::Pass;
use super::profile::{Class, Profile, class_of};
use super::rules::rule;
use super::sat::Ctx;
use crate::plan::Shape;
use crate::whg1::Graph;

/// The top of the search interval, `2^63`.
const TOP: u64 = 1 << 63;

/// The operators that read `tensor` directly, by index, in graph order.
pub fn consumers(g: &Graph, tensor: usize) -> impl Iterator<Item = usize> + '_ {
    g.ops
        .iter()
        .enumerate()
        .filter(move |(_, op)| op.ins.contains(&tensor))
        .map(|(k, _)| k)
}

/// `[−X, X]`.
fn symmetric(x: u64) -> Iv {
    let x = i128::from(x);
    Iv::i(-x, x)
}

/// Whether operator `k`, reading `tensor` as `[−X, X]` and every other input as the pass computed
/// it, classes only values that meet `p`'s widths, with nothing saturated.
fn consumer_meets(
    g: &Graph,
    shapes: Option<&[Option<Shape>]>,
    pass: &Pass,
    k: usize,
    tensor: usize,
    p: Profile,
    x: u64,
) -> bool {
    let op = &g.ops[k];
    let ins: Vec<Iv> = op
        .ins
        .iter()
        .map(|&t| match t == tensor {
            true => symmetric(x),
            false => pass.tensors[t].expect("an operator's inputs precede it"),
        })
        .collect();
    let mut c = Ctx::default();
    let mut rec = Rec::default();
    // A rule that refuses (a `lut16` input past ±32767) classes no value that could meet `p`.
    let Ok(out) = rule(g, k, op, &ins, shapes, &mut c, &mut rec) else {
        return false;
    };
    let intermediates = rec.items.iter().all(|(key, iv)| iv.fits(class_of(key).width(p)));
    let results = out.results.iter().all(|r| r.fits(Class::Tensor.width(p)));
    !c.saturated && intermediates && results
}

/// `C(X)`: every consumer of `tensor` meets `p` when it reads `tensor` as `[−X, X]`.
pub fn condition(g: &Graph, shapes: Option<&[Option<Shape>]>, pass: &Pass, tensor: usize, p: Profile, x: u64) -> bool {
    consumers(g, tensor).all(|k| consumer_meets(g, shapes, pass, k, tensor, p, x))
}

/// `X*`, the largest `X ∈ [0, 2^63]` for which `C(X)` holds, by binary search; `None` when `C(0)`
/// fails. `C` is monotone (§8.4), so the search keeps `C(lo)` true and `C(hi)` false.
pub fn x_star(g: &Graph, shapes: Option<&[Option<Shape>]>, pass: &Pass, tensor: usize, p: Profile) -> Option<u64> {
    let c = |x| condition(g, shapes, pass, tensor, p, x);
    if !c(0) {
        return None;
    }
    if c(TOP) {
        return Some(TOP);
    }
    let (mut lo, mut hi) = (0u64, TOP);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if c(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(lo)
}

/// The admissible range `[−X*, min(X*, 2^63 − 1)]` of `tensor` for `p`, which always fits i64, or
/// `None` when `tensor` has none.
pub fn admissible(
    g: &Graph,
    shapes: Option<&[Option<Shape>]>,
    pass: &Pass,
    tensor: usize,
    p: Profile,
) -> Option<(i64, i64)> {
    let x = x_star(g, shapes, pass, tensor, p)?;
    let lo = i64::try_from(-i128::from(x)).expect("−X* ≥ −2^63");
    let hi = i64::try_from(x.min(TOP - 1)).expect("at most 2^63 − 1");
    Some((lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_replaced_interval_is_symmetric() {
        assert_eq!(symmetric(0), Iv::i(0, 0));
        assert_eq!(symmetric(TOP), Iv::i(-(1 << 63), 1 << 63));
    }
}
