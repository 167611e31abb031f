//! `wai-generate coverage`: every coverage item of §14.1 and §14.2, with the vectors that
//! cover it.
//!
//! Items are not taken on trust: each vector is loaded and decoded again with the oracle,
//! observing every named intermediate, and the items it covers are derived from what
//! happened (an interval's end reached, a rounding tie, a refusal at its step). A case's
//! `covers` labels are claims, and a claim the derivation does not confirm is an error.
//! docs/corpus.md lists the items and how each is checked.
//!
//! - `requirements`: what each operator, each stage operator and the tree must cover;
//! - `derive`: what each vector covers, per suite; `scale`: the scale tier's size classes;
//! - `report`: the items with their vectors, and what is missing.

mod derive;
mod report;
mod requirements;
mod scale;

use crate::tree;
use rayon::prelude::*;
use report::Report;
use std::path::Path;
use wai_oracle::suite::Tier;

/// Runs the coverage over the corpus: prints every item with its vectors, and fails on an
/// item with none or a claim that does not hold.
pub fn run(corpus: &Path, quiet: bool, only: &[String], tier: Tier) -> Result<(), String> {
    let mut sources = tree::sources(corpus)?;
    sources.retain(|s| tier.holds(&s.target));
    if !only.is_empty() {
        sources.retain(|s| only.iter().any(|o| s.target.ends_with(&format!("/{o}.jsonl"))));
    }
    let files: Vec<Vec<derive::Vector>> = sources.par_iter().map(derive::file).collect::<Result<_, String>>()?;
    let mut report = Report::default();
    for (src, vectors) in sources.iter().zip(&files) {
        report.file(&src.target, src.claimed_operator(), vectors);
    }
    if only.is_empty() {
        for (item, name) in derive::sets(&crate::sets::read_all(corpus)?) {
            report.cover(item, format!("corpus/sets/{name}.json"));
        }
        for (item, id) in crate::cis2::items(corpus)? {
            report.cover(item, id);
        }
    }
    report.print(&requirements::all(only, tier), quiet)
}
