//! §13 Lowerings: a parameter set in an existing form mapped to `WHG1` graphs, canonically
//! (§13.0), then certified.
//!
//! - `int_synth` (§13.1) and `jpegai` (§13.6.1, with the scale path's decode) read forms the
//!   seeds define completely.
//! - `whm` (§13.2–§13.5: `whm1/1`, `wam1/1`, `wmb1/1`, `world/1`) lowers a documented JSON
//!   rendering of a network, since the WHM1/WAM1/WMB1 byte layouts (integer-payloads §9, §14) are
//!   not in the seeds: PROVISIONAL (docs/assumptions.md).

pub mod int_synth;
pub mod jpegai;
pub mod whm;

use crate::bounds::certificate::{self, Header};
use crate::bounds::{Certified, first_failure, profile::Profile};
use crate::plan::{self, Shape, Stage};
use crate::refusal::{Code, Refusal};
use crate::whg1::{self, Graph};
use num_bigint::BigInt;

/// A lowered set: its graphs by role, in the lowering's order, as canonical bytes.
#[derive(Clone, Debug)]
pub struct Lowered {
    pub graphs: Vec<(String, Vec<u8>)>,
}

/// Writes each graph canonically, once its counts fit their fields, and loads it again (steps 1–7),
/// so that a lowering never hands out bytes a sink would refuse as malformed; then the caps (§3): a
/// graph that forms a
/// size past them even on its smallest inputs (every input `[C, 1, 1]`, every scalar at the bottom
/// of its range) is refused, since every decode would be (docs/assumptions.md L1).
pub fn canonical(graphs: Vec<(String, Graph)>) -> Result<Lowered, Refusal> {
    let mut out = Vec::new();
    for (role, g) in graphs {
        whg1::write::counts_fit(&g).map_err(|why| Refusal::new(Code::ModelMismatch, format!("{role}: {why}")))?;
        let bytes = whg1::write(&g);
        whg1::load(&bytes).map_err(|r| Refusal::new(r.code, format!("{role}: {}", r.why)))?;
        let smallest: Vec<Shape> = g
            .inputs
            .iter()
            .map(|i| Shape::new(u64::from(g.tensors[i.tensor as usize].channels), 1, 1))
            .collect();
        let scalars: Vec<BigInt> = g.scalars.iter().map(|s| BigInt::from(s.lo)).collect();
        if let Err(r) = plan::shapes(&g, &smallest, Stage::Run { scalars: &scalars })
            && r.code == Code::TooLarge
        {
            return Err(Refusal::new(
                Code::ModelMismatch,
                format!("{role}: past the caps on its smallest inputs: {}", r.why),
            ));
        }
        out.push((role, bytes));
    }
    Ok(Lowered { graphs: out })
}

/// The lowerings, by their §13 identifiers.
pub const LOWERINGS: [&str; 6] = ["int_synth/1", "whm1/1", "wam1/1", "wmb1/1", "world/1", "jpegai-int/1"];

/// The capabilities each lowering decodes (§13.0's table), the first the one a record naming none
/// means.
pub fn capabilities(lowering: &str) -> &'static [&'static str] {
    match lowering {
        "int_synth/1" => &["wai.neural.int_synth"],
        "whm1/1" => &["wai.neural.int_hyper", "wai.video.int_hyper", "wai.splat.int_codec"],
        "wam1/1" => &["wai.audio.int_codec"],
        "wmb1/1" => &["wai.neural.int_mlicpp"],
        "world/1" => &["wai.world.model"],
        "jpegai-int/1" => &["wai.image.jpegai"],
        _ => &[],
    }
}

/// The lowering §13.0's table registers for a capability: the one that decodes it.
pub fn lowering_of(capability: &str) -> Option<&'static str> {
    LOWERINGS.into_iter().find(|l| capabilities(l).contains(&capability))
}

/// Whether a lowering reads one file (all but `jpegai-int/1`'s bundle).
pub fn one_file(lowering: &str) -> bool {
    lowering != "jpegai-int/1"
}

/// Lowers a set given as its files (name, bytes), by lowering identifier.
pub fn lower(lowering: &str, capability: &str, files: &[(String, Vec<u8>)]) -> Result<Lowered, Refusal> {
    let one = || match files {
        [(_, bytes)] => Ok(bytes.as_slice()),
        _ => Err(Refusal::new(
            Code::ModelMismatch,
            format!("{lowering} takes one file, not {}", files.len()),
        )),
    };
    match lowering {
        "int_synth/1" => int_synth::lower(one()?),
        "whm1/1" => whm::lower_whm1(one()?, capability),
        "wam1/1" => whm::lower_wam1(one()?),
        "wmb1/1" => whm::lower_wmb1(one()?),
        "world/1" => whm::lower_world(one()?),
        "jpegai-int/1" => jpegai::bundle(files).map(|b| b.lowered),
        other => Err(Refusal::new(
            Code::ModelMismatch,
            format!("{other:?} is not a lowering"),
        )),
    }
}

/// The profile a set of `lowering` must meet, and the code a capability reports for a refusal.
pub fn required(lowering: &str) -> (Profile, Code) {
    match lowering {
        "int_synth/1" => (Profile::Acc64, Code::PayloadMalformed),
        _ => (Profile::Acc64, Code::ModelMismatch),
    }
}

/// Certifies a lowered set: the bounds pass over every graph, then the certificate. A graph the
/// pass refuses gets no certificate (docs/assumptions.md B9).
pub fn certify(lowered: &Lowered, header: &Header) -> Result<(Vec<Certified>, Vec<u8>), Refusal> {
    let mut certified = Vec::new();
    for (role, bytes) in &lowered.graphs {
        let loaded = whg1::load(bytes)?;
        certified.push(Certified::new(role, bytes.clone(), loaded.graph)?);
    }
    let bytes = certificate::bytes(&certified, header);
    Ok((certified, bytes))
}

/// Load step 8 for a lowered set (§8.6): the certificate must meet the capability's profile,
/// and a profile the pin claims. Refused with the lowering's code.
pub fn check_profile(lowering: &str, certified: &[Certified], claimed: Option<Profile>) -> Result<(), Refusal> {
    let (profile, code) = required(lowering);
    for p in std::iter::once(profile).chain(claimed) {
        if let Some(f) = first_failure(certified, p) {
            let why = format!(
                "the verdict does not meet {}: {} {} of {} fails {}",
                p.name(),
                f.place,
                f.index,
                f.graph,
                f.failure.key
            );
            // §8.6 refuses with model_mismatch, which a capability with fewer codes reports as its
            // own (§4): int_synth's every refusal is payload_malformed.
            return Err(Refusal::new(code, why));
        }
    }
    Ok(())
}
