//! §5E Stage operators: they run in a capability's driver, outside any graph, on
//! streams, symbols and samples.
//!
//! Every operand, mode and table is checked against its operator's conditions before
//! any symbol or element is decoded (*Conditions and their refusals*); a refusal carries
//! the index `at` of §14.1 (−1 for a condition).
//!
//! `rans64_decode` (E1) rests on integer-payloads §2, which the seeds do not contain:
//! its core is a reconstruction (docs/assumptions.md) and its vectors are provisional.
//! E10 `mc_predict`, E11 `up2_predict` and E12 `rate_predict` rest on texts the seeds do
//! not contain and are not implemented; E12's `rdiv` is (`scalar::rdiv`).

pub mod block_stat;
pub mod coding_order;
pub mod mans_decode;
pub mod rans64_decode;
pub mod scalar;

use crate::plan::Shape;
use crate::refusal::Code;
use crate::whg1::CAP;

/// A stage operator's refusal: its code, where it arose (§14.1 *The refusal index*), the
/// rule that gave it (a short name the coverage tool reads, never committed), and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stop {
    pub at: i64,
    pub code: Code,
    pub rule: &'static str,
    /// Other rules that applied at the same point and came later in the check order.
    pub also: Vec<&'static str>,
    pub why: String,
}

impl Stop {
    pub fn new(at: i64, code: Code, rule: &'static str, why: impl Into<String>) -> Stop {
        Stop {
            at,
            code,
            rule,
            also: vec![],
            why: why.into(),
        }
    }

    /// A condition an operand, mode or table breaks: `at = −1`, `model_mismatch`.
    pub fn condition(rule: &'static str, why: impl Into<String>) -> Stop {
        Stop::new(-1, Code::ModelMismatch, rule, why)
    }
}

/// `Err(Stop::condition(rule, why))` unless `ok`.
pub fn require(ok: bool, rule: &'static str, why: impl FnOnce() -> String) -> Result<(), Stop> {
    if ok { Ok(()) } else { Err(Stop::condition(rule, why())) }
}

/// A stage operand's shape, which like every tensor's has each side at least 1 (a condition)
/// and at most `2^26` elements (`too_large`, `at = −1`), both before any element is formed
/// (§3; docs/assumptions.md S5).
pub fn extent(shape: Shape) -> Result<u64, Stop> {
    require(shape.c >= 1 && shape.h >= 1 && shape.w >= 1, "side", || {
        format!("the shape {shape:?} has a side of 0")
    })?;
    shape
        .elems()
        .filter(|&n| n <= CAP)
        .ok_or_else(|| Stop::new(-1, Code::TooLarge, "size", "the shape passes 2^26 elements"))
}
