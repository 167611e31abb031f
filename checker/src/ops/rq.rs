//! The requantisation epilogue `rq` (§5.1).

use super::{E, ck};
use crate::num::{Round, r_round};
use crate::whg1::Rq;

/// `rq_o(v)`: `t = v + pre`, `p = t·mult`, `q = R_round(p, shift)`, `y = q + post`.
pub fn apply(rq: &Rq, o: usize, v: i64) -> E<i64> {
    let (pre, post, mult) = (rq.pre(o), rq.post(o), rq.mult(o).unwrap_or(1));
    let shift = fault!("rq-shift-channel-0", rq.shift(o), rq.shift(0));
    let t = ck(v.checked_add(fault!("rq-bias-placement-swapped", pre, post)), "rq.t")?;
    let p = product(t, mult);
    let q = fault!("rq-mult-after-round", round(p, shift, rq.round), round_first(rq, o, t))?;
    let y = ck(q.checked_add(fault!("rq-bias-placement-swapped", post, pre)), "rq.y")?;
    note(|| Steps {
        v,
        t,
        p,
        shift,
        round: rq.round,
        y,
    });
    Ok(y)
}

/// `q = R_round(p, shift)`, which fits i64 in a graph that meets `acc64`.
fn round(p: i128, shift: u32, r: Round) -> E<i64> {
    ck(r_round(p, shift, r).and_then(|q| i64::try_from(q).ok()), "rq.q")
}

/// `rq-mult-after-round`: `q = R_round(t, shift)·mult`.
#[cfg(feature = "mutants")]
fn round_first(rq: &Rq, o: usize, t: i64) -> E<i64> {
    let q = ck(r_round(i128::from(t), rq.shift(o), rq.round), "rq.q")?;
    let q = q.checked_mul(i128::from(rq.mult(o).unwrap_or(1)));
    ck(q.and_then(|q| i64::try_from(q).ok()), "rq.q")
}

/// One `rq_o(v)`'s values, kept while [`traced`] runs (the grader's report of a differing element).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Steps {
    pub v: i64,
    pub t: i64,
    pub p: i128,
    pub shift: u32,
    pub round: Round,
    pub y: i64,
}

thread_local! {
    static TRACE: std::cell::RefCell<Option<Vec<Steps>>> = const { std::cell::RefCell::new(None) };
}

fn note(steps: impl FnOnce() -> Steps) {
    TRACE.with(|t| {
        if let Some(trace) = t.borrow_mut().as_mut() {
            trace.push(steps());
        }
    });
}

/// Runs `f`, keeping every `rq` it applies on this thread, in the order applied.
pub fn traced<R>(f: impl FnOnce() -> R) -> (R, Vec<Steps>) {
    TRACE.with(|t| *t.borrow_mut() = Some(Vec::new()));
    let r = f();
    let steps = TRACE.with(|t| t.borrow_mut().take()).unwrap_or_default();
    (r, steps)
}

/// `rq.p = t·mult` (`mult` 1 when absent), exact: `|t·mult| ≤ 2^126`. Under `f32-rq`, as a
/// `float32` kernel forms it.
pub fn product(t: i64, mult: i64) -> i128 {
    fault!("f32-rq", i128::from(t) * i128::from(mult), f32_product(t, mult))
}

/// `f32-rq`: each operand rounded to binary32 and the product rounded to binary32 (Rust's `as f32`
/// and `*` round to nearest, ties to even). A binary32 product of two integers is an integer of
/// magnitude below 2^127, so reading it back as i128 is exact.
#[cfg(any(test, feature = "mutants"))]
fn f32_product(t: i64, mult: i64) -> i128 {
    ((t as f32) * (mult as f32)) as i128
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_float32_product_rounds_each_operand_and_the_product_to_nearest_even() {
        assert_eq!(f32_product(1 << 24, 1), 1 << 24);
        assert_eq!(f32_product((1 << 24) + 1, 1), 1 << 24); // a tie, to the even significand
        assert_eq!(f32_product((1 << 24) + 3, 1), (1 << 24) + 4);
        assert_eq!(f32_product(4097, 4097), 16_785_408); // 16785409 rounds to even
        assert_eq!(f32_product(-(1 << 62) - 1, -(1 << 62)), 1 << 124);
        assert_eq!(product(4097, 4097), 16_785_409);
    }
}
