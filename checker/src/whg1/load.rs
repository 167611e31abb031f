//! Loading a graph: §10.5 steps 1–8 in order, each failure with its refusal code (§4). Steps 1–6
//! are the reader's ([`read`](mod@super::read)); step 7 is the plan ([`crate::plan`]); step 8 is the bounds
//! pass ([`crate::bounds`]) and the verdict against `acc64`.

use super::model::Graph;
use super::read::read;
use crate::bounds::{self, Pass, Profile, certificate};
use crate::plan::{self, PlanErr, Shape};
use crate::refusal::Code;

/// A graph that passed steps 1–7 and the bounds pass.
pub struct Checked {
    pub graph: Graph,
    /// Every tensor's shape planned on the declared sizes, when the inputs declare them.
    pub shapes: Option<Vec<Option<Shape>>>,
    pub pass: Pass,
}

/// A graph that passed steps 1–7: read, and planned on its declared sizes when it declares them.
pub struct Planned {
    pub graph: Graph,
    pub shapes: Option<Vec<Option<Shape>>>,
}

/// Steps 1–7: everything up to the bounds pass. What an operator implementation owes of a load
/// when a certifier supplies step 8 (docs/assumptions.md G1).
pub fn planned(bytes: &[u8]) -> Result<Planned, Code> {
    // Steps 1–6.
    let graph = read(bytes).map_err(|_| Code::ModelMismatch)?;
    // Step 7 (docs/assumptions.md A1): channel counts for all operators, then the operators that
    // need declared sizes, then the shapes on the declared sizes.
    if fault!("load-channels-after-sizes", !plan::channels_plan(&graph), false) {
        return Err(Code::ModelMismatch);
    }
    if !graph.declares_sizes() && graph.ops.iter().any(plan::needs_sizes) {
        return Err(Code::ModelMismatch);
    }
    let shapes = if graph.declares_sizes() {
        Some(plan::load_plan(&graph).map_err(|e| match e {
            PlanErr::TooLarge => Code::TooLarge,
            PlanErr::Shape => Code::ModelMismatch,
        })?)
    } else {
        None
    };
    if fault!("load-channels-after-sizes", false, !plan::channels_plan(&graph)) {
        return Err(Code::ModelMismatch);
    }
    Ok(Planned { graph, shapes })
}

/// Steps 1–7, then the bounds pass of step 8 (its own refusals: an empty `check` range, a `lut16`
/// range). The profile is not checked here.
pub fn check(bytes: &[u8]) -> Result<Checked, Code> {
    let Planned { graph, shapes } = planned(bytes)?;
    // Step 8: the bounds pass.
    let pass = bounds::pass(&graph, shapes.as_deref()).map_err(|_| Code::ModelMismatch)?;
    Ok(Checked { graph, shapes, pass })
}

/// A graph loaded as a bare graph vector: step 8 checks the verdict against `acc64`
/// (docs/assumptions.md B1).
pub struct Loaded {
    pub checked: Checked,
    /// The profiles the verdict meets, ascending.
    pub profiles: Vec<Profile>,
}

pub fn load(bytes: &[u8]) -> Result<Loaded, Code> {
    let checked = check(bytes)?;
    let v = certificate::verdict(&[("", &checked.graph, &checked.pass)]);
    if fault!("load-acc64-not-required", !v.meets(Profile::Acc64), false) {
        return Err(Code::ModelMismatch);
    }
    let profiles = [Profile::Acc32, Profile::Acc64]
        .into_iter()
        .filter(|&p| v.meets(p))
        .collect();
    Ok(Loaded { checked, profiles })
}
