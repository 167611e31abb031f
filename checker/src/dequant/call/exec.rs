//! A checked call's execution: read each logical element's INT8 value where the input layout puts it,
//! compute its output (D1) and write it little-endian where the output layout puts it (D6). Holes
//! and spare capacity keep what they held. An empty call does no arithmetic and needs no
//! particular floating-point mode; a nonempty one checks the environment first.

use super::check::{OutType, Plan};
use super::request::InBuf;
use crate::dequant::env;
use crate::dequant::numeric;

/// Why an execution did not complete.
#[derive(Debug)]
pub enum Stop {
    /// The thread's floating-point environment is not the one the contract needs: not a vector.
    Environment(String),
    /// The checker found a bug in itself.
    Bug(String),
}

/// Executes `plan` reading `input` (its bytes, then zeros up to its capacity) into `out`, the output
/// buffer's bytes as they are before the call.
pub fn execute(plan: &Plan, input: &InBuf, out: &mut [u8]) -> Result<(), Stop> {
    if plan.is_empty() {
        return Ok(());
    }
    let checked = env::check().map_err(Stop::Environment)?;
    let prepared = numeric::prepare(&checked, plan.scale, plan.zero_point);
    let width = plan.out.width();
    let end = plan.input.walk(&plan.shape, |offset, coords| {
        if offset >= plan.need {
            return Err(format!("input offset {offset} past the needed {} bytes", plan.need));
        }
        // Past the given bytes the buffer holds zeros up to its capacity (at least `need`).
        let q = input.bytes.get(offset as usize).copied().unwrap_or(0) as i8;
        let value = numeric::output(&checked, &prepared, q);
        let mut at: u64 = 0;
        for (&i, &s) in coords.iter().zip(&plan.strides) {
            at = i
                .checked_mul(s)
                .and_then(|d| at.checked_add(d))
                .ok_or("an output offset past 2^64 in an admitted call")?;
        }
        let slot = at
            .checked_add(width)
            .filter(|&e| e <= plan.span && e <= out.len() as u64)
            .map(|e| &mut out[at as usize..e as usize])
            .ok_or_else(|| format!("output offset {at} outside the span {}", plan.span))?;
        match plan.out {
            OutType::F32 => slot.copy_from_slice(&value.to_bits().to_le_bytes()),
            OutType::Bf16 => slot.copy_from_slice(&numeric::bf16_bits(value).to_le_bytes()),
        }
        Ok(())
    });
    match end {
        Ok(end) if end == plan.need => Ok(()),
        Ok(end) => Err(Stop::Bug(format!(
            "the input walk ended at {end}, the closed form says {}",
            plan.need
        ))),
        Err(e) => Err(Stop::Bug(e)),
    }
}
