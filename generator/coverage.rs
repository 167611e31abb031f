//! `wai-generate coverage`: every coverage item of §14.1 and §14.2, with the vectors that
//! cover it.
//!
//! Items are not taken on trust: each vector is loaded and decoded again with the oracle,
//! observing every named intermediate, and the items it covers are derived from what
//! happened (an interval's end reached, a rounding tie, a refusal at its step). A case's
//! `covers` labels are claims, and a claim the derivation does not confirm is an error.
//! docs/corpus.md lists the items and how each is checked.

use crate::case::{self, Case};
use crate::tree::{self, Source};
use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{Signed, ToPrimitive, Zero};
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use wai_oracle::bounds::{self, Certified, first_failure, interval::Interval, profile::Profile};
use wai_oracle::num::Round;
use wai_oracle::run::{NodeObserver, Sequence, Stop};
use wai_oracle::tensor::Tensor;
use wai_oracle::whg1::{self, Graph, InputKind, OPERATORS, Op, Policy};

/// What one decode showed.
#[derive(Default)]
struct Seen {
    /// (node, key) → every value, in order, with its channel.
    values: BTreeMap<(usize, &'static str), Vec<(usize, BigInt)>>,
    inputs: Vec<Tensor>,
    /// (node, output) → producer result.
    results: BTreeMap<(usize, usize), Tensor>,
}

impl NodeObserver for Seen {
    fn see(&mut self, node: usize, key: &'static str, channel: usize, value: &BigInt) {
        self.values
            .entry((node, key))
            .or_default()
            .push((channel, value.clone()));
    }
    fn input(&mut self, _: usize, t: &Tensor) {
        self.inputs.push(t.clone());
    }
    fn result(&mut self, node: usize, k: usize, t: &Tensor) {
        self.results.insert((node, k), t.clone());
    }
}

impl Seen {
    fn of(&self, key: &'static str) -> impl Iterator<Item = &(usize, BigInt)> {
        self.values.get(&(0, key)).into_iter().flatten()
    }
}

/// One decode's outcome with what it showed.
struct Decoded {
    seen: Seen,
    /// `None` when the decode completed, else the refusal's code and point.
    refused: Option<(String, String)>,
    outputs: Vec<Tensor>,
    scalars: Vec<BigInt>,
}

fn int(v: &serde_json::Value) -> BigInt {
    v.as_str().and_then(wai_oracle::canon::parse_int).unwrap_or_default()
}

/// A graph, its load (certified, or refused with a code and a point), and its decodes.
type Replayed = (Graph, Result<Certified, (String, String)>, Vec<Decoded>);

/// Loads and decodes a request again, observing everything.
fn replay(request: &serde_json::Value) -> Result<Replayed, String> {
    let bytes = hex::decode(request["graph"].as_str().unwrap_or_default()).map_err(|e| e.to_string())?;
    let loaded = whg1::load(&bytes).and_then(|l| bounds::step8("g", &bytes, &l.graph, Profile::Acc64).map(|c| (l, c)));
    let (loaded, certified) = match loaded {
        Err(r) => {
            let g = whg1::read(&bytes).ok().unwrap_or_else(empty_graph);
            return Ok((g, Err((r.code.to_string(), r.at)), vec![]));
        }
        Ok(x) => x,
    };
    let mut sequence = Sequence::new(&loaded);
    let mut decoded = Vec::new();
    for d in request["decodes"].as_array().into_iter().flatten() {
        let inputs: Vec<Tensor> = d["inputs"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| wai_oracle::fill::json::tensor(t, "input"))
            .collect::<Result<_, _>>()?;
        let scalars: Vec<BigInt> = d["scalars"].as_array().into_iter().flatten().map(int).collect();
        let mut seen = Seen::default();
        let (refused, outputs) = match sequence.decode_observed(inputs, &scalars, &mut seen) {
            Ok(outs) => (None, outs),
            Err(Stop::Refused(r)) => (Some((r.code.to_string(), r.at)), vec![]),
            Err(Stop::Error(e)) => return Err(e),
        };
        decoded.push(Decoded {
            seen,
            refused,
            outputs,
            scalars,
        });
    }
    Ok((loaded.graph.clone(), Ok(certified), decoded))
}

fn empty_graph() -> Graph {
    Graph {
        max_elems: 1,
        scalars: vec![],
        inputs: vec![],
        outputs: vec![],
        tensors: vec![],
        nodes: vec![],
    }
}

/// The operators whose every graph fails `acc32` (§7.3).
const NEVER_ACC32: [&str; 5] = ["layernorm_c", "l2norm", "softmax", "sigmoid", "elu"];

/// The rq operators and whether their `rq` has a multiplier.
fn rq_op(op: &str) -> Option<bool> {
    match op {
        "conv" | "conv_transpose" | "rescale" | "chscale" | "mul" => Some(true),
        "gram" | "apply" => Some(false),
        _ => None,
    }
}

/// The accumulator keys whose partial-sum interval's ends an input must attain (§14.1 item 1),
/// with the ends that can be attained (docs/corpus.md).
fn accumulators(op: &str) -> &'static [(&'static str, &'static [&'static str])] {
    match op {
        "conv" => &[("conv.acc", &["lo", "hi"])],
        "conv_transpose" => &[("convT.acc", &["lo", "hi"])],
        "gram" => &[("gram.acc", &["lo", "hi"])],
        "apply" => &[("apply.acc", &["lo", "hi"])],
        "igdn" => &[("igdn.N", &["lo", "hi"])],
        "layernorm_c" => &[("ln.S", &["lo", "hi"])],
        "l2norm" => &[("l2.T", &["lo", "hi"])],
        "softmax" => &[("sm.sum", &["hi"])],
        _ => &[],
    }
}

const TIE_SHIFTS: [u32; 6] = [1, 31, 32, 62, 63, 64];
const SHIFTS: [u32; 8] = [0, 1, 31, 32, 62, 63, 64, 127];

/// Every item a per-operator file must cover.
fn required(op: &str) -> Vec<String> {
    let mut items = vec!["decode".to_string(), "1x1".into(), "odd".into()];
    for (key, ends) in accumulators(op) {
        items.extend(ends.iter().map(|e| format!("acc-ends:{key}:{e}")));
    }
    if let Some(mult) = rq_op(op) {
        for round in ["floor", "half_up", "half_even"] {
            for s in TIE_SHIFTS {
                for sign in ["pos", "neg"] {
                    // Without a multiplier the product is an i64: no tie at 2^63 (docs/corpus.md).
                    if mult || s < 64 || sign == "neg" {
                        items.push(format!("tie:{round}:{sign}:s{s}"));
                    }
                }
            }
            // At 127 only p = 2^126 ties, and for half_up and half_even its interval reaches
            // 2^126 + 2^126 = 2^127, past i128: only floor's loads (docs/corpus.md).
            if mult && round == "floor" {
                items.push(format!("tie:{round}:pos:s127"));
            }
        }
        items.extend(SHIFTS.iter().map(|s| format!("shift:s{s}")));
    }
    if matches!(op, "conv" | "conv_transpose") {
        items.extend(["kernel>input".into(), "stride>kernel".into()]);
    }
    if op == "conv_transpose" {
        items.push("outpad>=stride".into());
    }
    if NEVER_ACC32.contains(&op) {
        items.push("profiles:acc64".into());
    } else {
        items.extend(["profiles:both", "profiles:acc64"].map(String::from));
        // Ends no interval of the operator can have in an acc32 vector (docs/corpus.md).
        let unreachable: &[&str] = match op {
            "chunk_add" => &["acc32:max"],
            "abs" => &["acc32:min"],
            "lut16" => &["acc32:max", "acc32:min", "acc32:past"],
            _ => &[],
        };
        for item in ["acc32:max", "acc32:min", "acc32:past"] {
            if !unreachable.contains(&item) {
                items.push(item.into());
            }
        }
    }
    for side in ["in", "out"] {
        items.extend(["lo", "hi", "below", "above"].map(|e| format!("check-{side}:{e}")));
    }
    if matches!(op, "chscale" | "crop" | "fill") {
        items.extend(["lo", "hi", "below", "above"].map(|e| format!("scalar:{e}")));
    }
    let shape_rule = [
        "conv",
        "conv_transpose",
        "add",
        "mul",
        "concat",
        "pixel_unshuffle",
        "crop_to",
        "crop",
        "subpos_split",
        "subpos_merge",
        "gram",
        "apply",
    ];
    if shape_rule.contains(&op) {
        items.push("plan:shape".into());
    }
    // subpos_merge's 2H passes 2^26 only on an input of more than 2^25 rows, which no
    // one-operator vector can carry; a graph vector covers it (docs/corpus.md).
    if matches!(op, "conv" | "conv_transpose" | "pad_rep") {
        items.push("plan:size".into());
    }
    // gram's output [C, 1, C/groups] does not depend on the sizes, and gram must declare
    // them, so load planning already refuses an output past max_elems (docs/corpus.md).
    if matches!(
        op,
        "conv" | "conv_transpose" | "pad_rep" | "concat" | "subpos_merge" | "fill"
    ) {
        items.push("plan:max_elems".into());
    }
    let distinguishing: &[&str] = match op {
        "igdn" => &["floor-each-term"],
        "leaky" => &["floor-away"],
        "softmax" => &["row-sum", "exp-n62", "exp-n63"],
        "sigmoid" => &["exp-n62", "exp-n63", "range-min-refused", "range-near-min"],
        "elu" => &["zero", "exp-n62", "exp-n63", "range-min-refused", "range-near-min"],
        "layernorm_c" => &["odd-c", "half-mean", "eps-max"],
        "rescale" => &["q-past-64"],
        _ => &[],
    };
    items.extend(distinguishing.iter().map(|s| s.to_string()));
    items
}

/// The items every tree must cover somewhere (§14.2, and every refusal code).
fn required_global() -> Vec<String> {
    let mut items: Vec<String> = [
        "load.1",
        "load.2",
        "load.3",
        "load.4",
        "load.5",
        "load.6",
        "load.7",
        "load.8.pass",
        "load.8.profile",
    ]
    .map(|s| format!("graph:{s}"))
    .into();
    for s in [
        "run.1.channels",
        "run.1.sides",
        "run.1.declared",
        "run.1.max_elems",
        "run.2",
        "run.3.size",
        "run.3.shape",
        "run.3.max_elems",
        "run.4.input",
        "run.4.check",
    ] {
        items.push(format!("graph:{s}"));
    }
    items.extend(
        [
            "graph:state-three",
            "graph:state-refused",
            "graph:phase-form",
            "graph:mixed",
        ]
        .map(String::from),
    );
    items.extend(["model_mismatch", "too_large", "field_range", "geometry_mismatch"].map(|c| format!("code:{c}")));
    items
}

/// The items one vector covers: per-operator ones (prefixed with the operator) when it
/// comes from a per-operator file, and global ones.
fn derive(src: &Source, request: &serde_json::Value) -> Result<Derived, String> {
    let (g, load, decodes) = replay(request)?;
    let outcome = Outcome {
        operators: g.nodes.iter().map(|n| n.op.name()).collect(),
        outputs: decodes
            .iter()
            .map(|d| d.refused.as_ref().map(|_| vec![]).unwrap_or_else(|| d.outputs.clone()))
            .collect(),
    };
    let mut items = BTreeSet::new();
    let mut per = BTreeSet::new();
    match &load {
        Err((code, at)) => {
            items.insert(format!("code:{code}"));
            // Steps 1–7 by number; step 8 by its half (the pass, or the profile).
            let step = if at.starts_with("load.8.") {
                at.as_str()
            } else {
                at.get(..6).unwrap_or(at)
            };
            items.insert(format!("graph:{step}"));
        }
        Ok(c) => {
            let met = bounds::profiles_met(std::slice::from_ref(c));
            per.insert(
                if met.contains(&Profile::Acc32) {
                    "profiles:both"
                } else {
                    "profiles:acc64"
                }
                .to_string(),
            );
        }
    }
    for d in &decodes {
        match &d.refused {
            Some((code, at)) => {
                items.insert(format!("code:{code}"));
                items.insert(format!("graph:{at}"));
                if let Some(sub) = at.strip_prefix("run.3.") {
                    per.insert(format!("plan:{sub}"));
                }
            }
            None => {
                per.insert("decode".into());
            }
        }
    }
    graph_items(&g, &decodes, &mut items);
    if let (Some(op), Ok(c)) = (&src.operator, &load) {
        operator_items(op, &g, c, &decodes, &mut per);
    }
    if let (Some(_), Err((_, at))) = (&src.operator, &load) {
        load_refused_items(&g, at, &mut per);
    }
    if let Some(op) = &src.operator {
        items.extend(per.into_iter().map(|i| format!("{op}:{i}")));
    }
    Ok(Derived { items, outcome })
}

/// What a vector did, for items that compare two vectors.
struct Outcome {
    operators: Vec<&'static str>,
    /// Each decode's outputs (empty for a refused decode).
    outputs: Vec<Vec<Tensor>>,
}

struct Derived {
    items: BTreeSet<String>,
    outcome: Outcome,
}

/// A vector's id, the items its case claims, and what was derived.
type Claimed = (String, Vec<String>, Derived);

/// `graph:phase-form`: `<id>-convT` through `conv_transpose` and `<id>-phase` through
/// convolutions only, with the same decodes' outputs, every decode completing.
fn phase_form(vectors: &[Claimed]) -> Vec<String> {
    let mut ids = Vec::new();
    for (id, _, d) in vectors {
        let Some(base) = id.strip_suffix("-phase") else {
            continue;
        };
        let Some((_, _, t)) = vectors.iter().find(|(other, _, _)| *other == format!("{base}-convT")) else {
            continue;
        };
        let (p, t) = (&d.outcome, &t.outcome);
        if t.operators.contains(&"conv_transpose")
            && !p.operators.contains(&"conv_transpose")
            && p.operators.contains(&"conv")
            && !p.outputs.is_empty()
            && p.outputs.iter().all(|o| !o.is_empty())
            && p.outputs == t.outputs
        {
            ids.push(id.clone());
        }
    }
    ids
}

/// Items a per-operator vector refused at load can cover.
fn load_refused_items(g: &Graph, at: &str, per: &mut BTreeSet<String>) {
    let first = g
        .inputs
        .first()
        .and_then(|i| g.tensors.get(i.tensor as usize))
        .and_then(|t| t.policy.range());
    if at == "load.8.profile" && first.is_some_and(|(lo, _)| lo == i64::MIN) {
        per.insert("range-min-refused".into());
    }
    if at == "load.8.profile"
        && let Ok(c) = Certified::new("g", whg1::write(g), g.clone())
        && let Some(f) = first_failure(std::slice::from_ref(&c), Profile::Acc64)
        && f.failure.key == "rq.q"
        && c.pass.nodes[f.index].results.iter().all(|y| y.fits(64))
    {
        per.insert("q-past-64".into());
    }
}

fn graph_items(g: &Graph, decodes: &[Decoded], items: &mut BTreeSet<String>) {
    let state = g.inputs.iter().any(|i| matches!(i.kind, InputKind::State { .. }));
    let done: Vec<bool> = decodes.iter().map(|d| d.refused.is_none()).collect();
    if state && done.len() >= 3 && done[..3].iter().all(|&d| d) {
        items.insert("graph:state-three".into());
    }
    // A refused decode after one that completed and before another that completes.
    let refused_between =
        (0..done.len()).any(|j| !done[j] && done[..j].contains(&true) && done[j + 1..].contains(&true));
    if state && refused_between {
        items.insert("graph:state-refused".into());
    }
    let policies: BTreeSet<&str> = g.tensors.iter().map(|t| t.policy.name()).collect();
    if g.nodes.len() >= 3
        && policies.contains("clamp")
        && policies.contains("check")
        && g.tensors.iter().any(|t| t.exponent.is_some())
        && !g.scalars.is_empty()
        && done.iter().any(|&d| d)
    {
        items.insert("graph:mixed".into());
    }
}

fn tie(p: &BigInt, s: u32) -> bool {
    s >= 1 && p.mod_floor(&(BigInt::from(1) << s)) == BigInt::from(1) << (s - 1)
}

fn round_name(r: Round) -> &'static str {
    r.name()
}

/// The per-operator items of an accepted vector (its graph holds one node, node 0).
fn operator_items(op: &str, g: &Graph, c: &Certified, decodes: &[Decoded], per: &mut BTreeSet<String>) {
    let node = &g.nodes[0];
    let rule = &c.pass.nodes[0];
    let completed: Vec<&Decoded> = decodes.iter().filter(|d| d.refused.is_none()).collect();
    // Item 1: accumulator ends.
    for (key, ends) in accumulators(op) {
        let Some((_, interval)) = rule.intermediates.iter().find(|(k, _)| k == key) else {
            continue;
        };
        for d in &completed {
            for (_, v) in d.seen.of(key) {
                for &end in ends.iter() {
                    let target = if end == "lo" { &interval.lo } else { &interval.hi };
                    if v == target {
                        per.insert(format!("acc-ends:{key}:{end}"));
                    }
                }
            }
        }
    }
    // Item 2: ties and shifts.
    let channel_rq = |o: usize| -> Option<(Round, u32)> {
        match &node.op {
            Op::Conv(p) => Some((p.rq.round, p.rq.shift_at(o))),
            Op::ConvTranspose(p) => Some((p.rq.round, p.rq.shift_at(o))),
            Op::Rescale(p) | Op::Mul(p) => Some((p.round, p.shift_at(o))),
            Op::Gram(p) | Op::Apply(p) => Some((p.rq.round, p.rq.shift_at(o))),
            Op::Chscale(p) => Some((p.round, u32::from(p.shift))),
            _ => None,
        }
    };
    for d in &completed {
        for (o, p) in d.seen.of("rq.p") {
            if let Some((round, s)) = channel_rq(*o) {
                per.insert(format!("shift:s{s}"));
                if tie(p, s) {
                    let sign = if p.is_negative() { "neg" } else { "pos" };
                    per.insert(format!("tie:{}:{sign}:s{s}", round_name(round)));
                }
            }
        }
    }
    // Item 3: geometry, on the planes a completed decode reads or writes.
    for d in &completed {
        for t in d.seen.inputs.iter().chain(&d.outputs) {
            if t.shape.h == 1 && t.shape.w == 1 {
                per.insert("1x1".into());
            }
            if t.shape.h % 2 == 1 && t.shape.w % 2 == 1 && t.shape.h * t.shape.w > 1 {
                per.insert("odd".into());
            }
        }
        let x = &d.seen.inputs[0].shape;
        let (k, s, outpad) = match &node.op {
            Op::Conv(p) => ((p.kh, p.kw), (p.sh, p.sw), None),
            Op::ConvTranspose(p) => ((p.kh, p.kw), (p.sh, p.sw), Some((p.oph, p.opw))),
            _ => continue,
        };
        if u64::from(k.0) > x.h || u64::from(k.1) > x.w {
            per.insert("kernel>input".into());
        }
        if s.0 > k.0 || s.1 > k.1 {
            per.insert("stride>kernel".into());
        }
        if outpad.is_some_and(|(oh, ow)| oh >= s.0 || ow >= s.1) {
            per.insert("outpad>=stride".into());
        }
    }
    acc32_items(g, c, &completed, per);
    check_items(g, decodes, per);
    distinguishing(op, g, &completed, per);
}

/// Item 4: intervals at exactly 2^31 − 1 and −2^31 in an `acc32` vector, reached by a
/// decode; and one past them in an `acc64`-only vector.
fn acc32_items(g: &Graph, c: &Certified, completed: &[&Decoded], per: &mut BTreeSet<String>) {
    let (max, min) = (BigInt::from(i32::MAX), BigInt::from(i32::MIN));
    let rule = &c.pass.nodes[0];
    let met = bounds::profiles_met(std::slice::from_ref(c));
    if met.contains(&Profile::Acc32) {
        let mut named: Vec<(&str, &Interval)> = rule.intermediates.iter().map(|(k, i)| (*k, i)).collect();
        named.extend(rule.results.iter().map(|i| ("out", i)));
        for (key, i) in named {
            let values: Vec<&BigInt> = completed
                .iter()
                .flat_map(|d| {
                    let observed = d.seen.values.get(&(0, key)).into_iter().flatten().map(|(_, v)| v);
                    let results = d
                        .seen
                        .results
                        .values()
                        .filter(move |_| key == "out")
                        .flat_map(|t| t.data.iter());
                    observed.chain(results)
                })
                .collect();
            if i.hi == max && values.contains(&&max) {
                per.insert("acc32:max".into());
            }
            if i.lo == min && values.contains(&&min) {
                per.insert("acc32:min".into());
            }
        }
        // Graph inputs are class `tensor` too: their declared ranges at the edge.
        let data = g.inputs.iter().enumerate().filter(|(_, i)| i.kind == InputKind::Data);
        for (k, inp) in data {
            let Some((lo, hi)) = g.tensors[inp.tensor as usize].policy.range() else {
                continue;
            };
            let values: Vec<&BigInt> = completed.iter().flat_map(|d| d.seen.inputs[k].data.iter()).collect();
            if hi == i64::from(i32::MAX) && values.contains(&&max) {
                per.insert("acc32:max".into());
            }
            if lo == i64::from(i32::MIN) && values.contains(&&min) {
                per.insert("acc32:min".into());
            }
        }
    } else if let Some(f) = first_failure(std::slice::from_ref(c), Profile::Acc32) {
        let one_past = |i: &Interval| i.hi == BigInt::from(1u64 << 31) || i.lo == BigInt::from(-(1i64 << 31) - 1);
        let interval = match f.place {
            "input" => g.tensors[g.inputs[f.index].tensor as usize]
                .policy
                .range()
                .map(|(l, h)| Interval::new(l, h)),
            "scalar" => Some(Interval::new(g.scalars[f.index].lo, g.scalars[f.index].hi)),
            _ => rule
                .intermediates
                .iter()
                .find(|(k, _)| *k == f.failure.key)
                .map(|(_, i)| i.clone())
                .or_else(|| {
                    f.failure
                        .key
                        .strip_prefix("out.")
                        .and_then(|k| k.parse::<usize>().ok())
                        .map(|k| rule.results[k].clone())
                }),
        };
        if interval.as_ref().is_some_and(one_past) {
            per.insert("acc32:past".into());
        }
    }
}

/// Item 5: each `check` range at its ends and one past, and each scalar range likewise.
fn check_items(g: &Graph, decodes: &[Decoded], per: &mut BTreeSet<String>) {
    for d in decodes {
        let at = d.refused.as_ref().map(|(_, at)| at.as_str());
        let data_inputs = g.inputs.iter().filter(|i| i.kind == InputKind::Data);
        for (inp, t) in data_inputs.zip(&d.seen.inputs) {
            if let Policy::Check { lo, hi } = g.tensors[inp.tensor as usize].policy {
                ends("check-in", t, lo, hi, at.is_none(), at == Some("run.4.input"), per);
            }
        }
        for ((node, k), t) in &d.seen.results {
            if let Policy::Check { lo, hi } = g.tensors[g.nodes[*node].outputs[*k] as usize].policy {
                ends("check-out", t, lo, hi, at.is_none(), at == Some("run.4.check"), per);
            }
        }
        for (s, v) in g.scalars.iter().zip(&d.scalars) {
            let (lo, hi) = (BigInt::from(s.lo), BigInt::from(s.hi));
            if at.is_none() && *v == lo {
                per.insert("scalar:lo".into());
            }
            if at.is_none() && *v == hi {
                per.insert("scalar:hi".into());
            }
            if at == Some("run.2") && *v == &lo - 1 {
                per.insert("scalar:below".into());
            }
            if at == Some("run.2") && *v == hi + 1 {
                per.insert("scalar:above".into());
            }
        }
    }
}

fn ends(what: &str, t: &Tensor, lo: i64, hi: i64, passed: bool, refused: bool, per: &mut BTreeSet<String>) {
    let (lo, hi) = (BigInt::from(lo), BigInt::from(hi));
    if passed && t.data.contains(&lo) {
        per.insert(format!("{what}:lo"));
    }
    if passed && t.data.contains(&hi) {
        per.insert(format!("{what}:hi"));
    }
    // The check refuses at the first element outside, in CHW order.
    let first_out = t.data.iter().find(|v| **v < lo || **v > hi);
    if refused && first_out == Some(&(&lo - 1)) {
        per.insert(format!("{what}:below"));
    }
    if refused && first_out == Some(&(&hi + 1)) {
        per.insert(format!("{what}:above"));
    }
}

/// Item 6: the cases that tell this set's definitions from their near neighbours.
fn distinguishing(op: &str, g: &Graph, completed: &[&Decoded], per: &mut BTreeSet<String>) {
    let node = &g.nodes[0];
    for d in completed {
        match &node.op {
            Op::Igdn(p) => {
                // Each N_i against β_i + ⌊Σ_j γ·x_j² / 2^gf⌋ from the same products.
                let gx2: Vec<&BigInt> = d.seen.of("igdn.gx2").map(|(_, v)| v).collect();
                let c = p.beta.len();
                for (n_index, (i, n)) in d.seen.of("igdn.N").enumerate() {
                    let sum: BigInt = gx2[n_index * c..(n_index + 1) * c].iter().copied().sum();
                    let once = BigInt::from(p.beta[*i]) + sum.div_floor(&(BigInt::from(1) << p.gf));
                    if *n != once {
                        per.insert("floor-each-term".into());
                    }
                }
            }
            Op::Leaky { f, .. }
                if d.seen
                    .of("leaky.p")
                    .any(|(_, p)| !p.is_multiple_of(&(BigInt::from(1) << *f))) =>
            {
                per.insert("floor-away".into());
            }
            Op::Softmax => {
                let out = &d.outputs[0];
                let w = out.shape.w as usize;
                if out
                    .data
                    .chunks(w)
                    .any(|row| row.iter().sum::<BigInt>() != BigInt::from(65536))
                {
                    per.insert("row-sum".into());
                }
            }
            Op::Elu { .. } if d.seen.inputs[0].data.contains(&BigInt::ZERO) => {
                per.insert("zero".into());
            }
            Op::LayernormC(p) => {
                let c = p.beta.len();
                if c % 2 == 1 {
                    per.insert("odd-c".into());
                }
                let cc = BigInt::from(c);
                let twice_c: BigInt = &cc * 2u32;
                if c.is_multiple_of(2) && d.seen.of("ln.S").any(|(_, s)| (s * 2u32).mod_floor(&twice_c) == cc) {
                    per.insert("half-mean".into());
                }
                if p.eps == u64::MAX {
                    per.insert("eps-max".into());
                }
            }
            _ => {}
        }
        for (n, key) in [(62, "exp-n62"), (63, "exp-n63")] {
            if d.seen.of("exp.nl").any(|(_, g)| *g == BigInt::from(45426 * n)) {
                per.insert(key.into());
            }
        }
        if matches!(op, "sigmoid" | "elu")
            && g.tensors[g.inputs[0].tensor as usize]
                .policy
                .range()
                .is_some_and(|(lo, _)| lo == i64::MIN + 1)
        {
            per.insert("range-near-min".into());
        }
    }
}

/// The items a stage-operator file must cover (docs/corpus.md).
fn required_stage(op: &str) -> Vec<String> {
    let refuse = |rules: &[&str]| rules.iter().map(|r| format!("refuse:{r}")).collect::<Vec<_>>();
    let mut items: Vec<String> = match op {
        "dequantize" => [vec!["decode".into()], refuse(&["f", "value"])].concat(),
        "bucket" => [
            vec![
                "ceil:decode".into(),
                "floor:decode".into(),
                "ceil:at-edge".into(),
                "floor:at-edge".into(),
            ],
            refuse(&["edges", "order"]),
        ]
        .concat(),
        "coded" => vec!["true".into(), "false".into()],
        "scale_index" => [vec!["decode".into()], refuse(&["s", "n"])].concat(),
        "block_stat" => [
            vec!["decode".into(), "partial".into()],
            refuse(&["side", "b", "s", "range"]),
        ]
        .concat(),
        "band_lookup" => [vec!["decode".into()], refuse(&["row", "entries"])].concat(),
        "residual_step" => [
            ["r=R", "r=-R", "r=R+1", "r=-R-1", "i32-limits"]
                .map(String::from)
                .to_vec(),
            refuse(&["range", "pred", "q", "r"]),
        ]
        .concat(),
        "coding_order" => [
            ["raster", "checkerboard-true", "checkerboard-false"]
                .map(String::from)
                .to_vec(),
            refuse(&["side", "size"]),
        ]
        .concat(),
        "mans_decode" => [
            [
                "sgm",
                "fac",
                "zero-tail",
                "short",
                "bound-128",
                "bound-255",
                "escape-128",
                "escape-255",
                "fac-escape",
                "unmasked",
            ]
            .map(String::from)
            .to_vec(),
            refuse(&[
                "pmf_width",
                "pmf_negative",
                "pmf_sum",
                "bound",
                "span_lengths",
                "sigma",
                "row_counts",
                "row_order",
                "lengths",
                "length",
                "size",
            ]),
        ]
        .concat(),
        "rans64_decode" => {
            let mut v = Vec::new();
            for t in ["t4097", "t2"] {
                for e in ["lenient", "strict"] {
                    for end in ["canonical", "final_only"] {
                        v.push(format!("modes:{t}:{e}:{end}"));
                    }
                }
            }
            v.extend(["end:canonical", "end:final_only", "lenient:canonical:exhausted"].map(String::from));
            for c in [
                "exhausted",
                "count",
                "minimal",
                "range",
                "exhausted+count",
                "exhausted+minimal",
                "exhausted+range",
                "count+range",
                "minimal+range",
            ] {
                v.push(format!("strict:canonical:{c}"));
            }
            for c in ["count", "minimal", "range", "count+range", "minimal+range"] {
                v.push(format!("strict:final_only:{c}"));
            }
            [
                v,
                refuse(&[
                    "stream_length",
                    "table_n",
                    "table_ends",
                    "table_order",
                    "offset",
                    "strict_range",
                    "read",
                ]),
            ]
            .concat()
        }
        _ => vec![],
    };
    items.sort();
    items
}

/// The items one stage vector covers.
fn derive_stage(op: &str, request: &serde_json::Value) -> Result<BTreeSet<String>, String> {
    use wai_oracle::fill::stage::compute;
    let empty = serde_json::Map::new();
    let i = request["in"].as_object().unwrap_or(&empty);
    let m = request["modes"].as_object().unwrap_or(&empty);
    let mut escapes = Vec::new();
    let outcome = compute(op, i, m, &mut escapes)?;
    let mut items = BTreeSet::new();
    let get = |k: &str| i.get(k).map(int).unwrap_or_default();
    let mode = |k: &str| m.get(k).and_then(|v| v.as_str()).unwrap_or_default().to_string();
    match &outcome {
        Ok(expect) => {
            items.insert("decode".to_string());
            match op {
                "bucket" => {
                    let rule = mode("bucket");
                    items.insert(format!("{rule}:decode"));
                    let edges: Vec<BigInt> = i["edges"].as_array().into_iter().flatten().map(int).collect();
                    if edges.contains(&get("sigma")) {
                        items.insert(format!("{rule}:at-edge"));
                    }
                }
                "coded" => {
                    items.insert(expect["coded"].to_string());
                }
                "block_stat" => {
                    let b = get("b");
                    let shape: Vec<BigInt> = i["x"]["shape"].as_array().into_iter().flatten().map(int).collect();
                    if shape.len() == 3 && (!(&shape[1] % &b).is_zero() || !(&shape[2] % &b).is_zero()) {
                        items.insert("partial".into());
                    }
                }
                "residual_step" => {
                    let (r, q, lo, hi) = (get("r"), get("q"), get("lo"), get("hi"));
                    let big_r: BigInt = (&hi - &lo).div_floor(&q) + 1;
                    for (value, item) in [
                        (big_r.clone(), "r=R"),
                        (-&big_r, "r=-R"),
                        (&big_r + 1, "r=R+1"),
                        (-&big_r - 1, "r=-R-1"),
                    ] {
                        if r == value {
                            items.insert(item.into());
                        }
                    }
                    if lo == BigInt::from(i32::MIN) || hi == BigInt::from(i32::MAX) {
                        items.insert("i32-limits".into());
                    }
                }
                "coding_order" => {
                    let order = i["order"].as_str().unwrap_or_default();
                    items.insert(if order == "raster" {
                        "raster".into()
                    } else {
                        format!("checkerboard-{}", i["anchor"])
                    });
                }
                "mans_decode" => {
                    let mode = i["mode"].as_str().unwrap_or_default().to_string();
                    items.insert(mode.clone());
                    if mode == "sgm" {
                        let bounds: Vec<BigInt> = i["bounds"].as_array().into_iter().flatten().map(int).collect();
                        for span in i["spans"].as_array().into_iter().flatten() {
                            let masks = span["mask"].as_array().cloned().unwrap_or_default();
                            for (k, s) in span["sigma"].as_array().into_iter().flatten().enumerate() {
                                let masked = masks.get(k).and_then(|b| b.as_bool()).unwrap_or(false);
                                if !masked {
                                    items.insert("unmasked".into());
                                    continue;
                                }
                                let b = int(s)
                                    .to_usize()
                                    .and_then(|s| bounds.get(s).cloned())
                                    .unwrap_or_default();
                                for edge in [128, 255] {
                                    if b == BigInt::from(edge) {
                                        items.insert(format!("bound-{edge}"));
                                    }
                                }
                            }
                        }
                    }
                    for e in &escapes {
                        match &e.bound {
                            Some(b) if *b == BigInt::from(128) => items.insert("escape-128".into()),
                            Some(b) if *b == BigInt::from(255) => items.insert("escape-255".into()),
                            Some(_) => false,
                            None => items.insert("fac-escape".into()),
                        };
                    }
                }
                "rans64_decode" => {
                    items.insert(format!("modes:{}:{}:{}", mode("table"), mode("escape"), mode("end")));
                }
                _ => {}
            }
        }
        Err(stop) => {
            items.insert(format!("code:{}", stop.code));
            let condition = stop.at == -1 || (op == "dequantize" && stop.at == 0);
            if condition {
                items.insert(format!("refuse:{}", stop.rule));
            }
            match op {
                "mans_decode" if stop.rule == "init" => {
                    let memory = hex::decode(i["memory"].as_str().unwrap_or_default()).unwrap_or_default();
                    if memory.len() >= 8 && memory[memory.len() - 8..].iter().all(|&b| b == 0) {
                        items.insert("zero-tail".into());
                    }
                }
                "mans_decode" if stop.rule == "exhausted" => {
                    items.insert("short".into());
                }
                "rans64_decode" if !condition => {
                    let reads = i["reads"].as_array().map_or(0, Vec::len) as i64;
                    let end = mode("end");
                    if stop.at == reads {
                        items.insert(format!("end:{end}"));
                    } else if mode("escape") == "strict" {
                        let all: Vec<&str> = std::iter::once(stop.rule).chain(stop.also.iter().copied()).collect();
                        items.insert(format!("strict:{end}:{}", all.join("+")));
                    } else if stop.rule == "exhausted" {
                        items.insert(format!("lenient:{end}:exhausted"));
                    }
                }
                _ => {}
            }
        }
    }
    Ok(items
        .into_iter()
        .map(|item| {
            if item.starts_with("code:") {
                item
            } else {
                format!("{op}:{item}")
            }
        })
        .collect())
}

/// The items the corpus's parameter sets cover (§14.3): a set that fails `acc64` by one unit, and
/// one whose pin claims `acc32` and that fails it by one unit (an interval one past i32).
fn set_items(sets: &[crate::sets::Set]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for set in sets {
        let outcome = set.run();
        let Some(cert) = &outcome.certificate else { continue };
        let Ok(cert) = serde_json::from_slice::<serde_json::Value>(cert) else {
            continue;
        };
        let verdict = &cert["verdict"];
        let one_past = |profile: &str, top: BigInt| {
            let f = &verdict[format!("{profile}_first_failure")];
            interval_of(&cert, f).is_some_and(|(lo, hi)| hi == top || lo == -&top - 1)
        };
        if verdict["acc64"] == false && one_past("acc64", BigInt::from(1u64 << 63)) {
            out.push(("sets:acc64-by-one".into(), set.name.clone()));
        }
        if set.claim.as_deref() == Some("acc32")
            && outcome.load.is_err()
            && verdict["acc64"] == true
            && one_past("acc32", BigInt::from(1u64 << 31))
        {
            out.push(("sets:claim-acc32-by-one".into(), set.name.clone()));
        }
    }
    out
}

/// The interval a certificate's first failure names.
fn interval_of(cert: &serde_json::Value, f: &serde_json::Value) -> Option<(BigInt, BigInt)> {
    let graph = cert["graphs"].as_array()?.iter().find(|g| g["name"] == f["graph"])?;
    let index: usize = f["index"].as_str()?.parse().ok()?;
    let key = f["key"].as_str()?;
    let i = match f["where"].as_str()? {
        "input" => &graph["inputs"][index],
        "scalar" => &graph["scalars"][index],
        _ => {
            let node = &graph["nodes"][index];
            match key.strip_prefix("out.") {
                Some(k) => &node["out"][k.parse::<usize>().ok()?]["result"],
                None => &node["intermediates"][key],
            }
        }
    };
    Some((int(&i["lo"]), int(&i["hi"])))
}

/// The items a `jpegai-int/1` scale-path record covers.
fn derive_jpegai(request: &serde_json::Value) -> Result<BTreeSet<String>, String> {
    let filled = wai_oracle::fill::jpegai::fill(request)?;
    let e = &filled["expect"];
    let mut items = BTreeSet::new();
    if e["load"] != "ok" {
        items.insert("jpegai:load-refused".to_string());
        items.insert(format!("code:{}", e["load"].as_str().unwrap_or_default()));
        return Ok(items);
    }
    let decoded: Vec<bool> = ["y", "uv"].iter().map(|p| e[p].get("refuse").is_none()).collect();
    for p in ["y", "uv"] {
        if let Some(code) = e[p]["refuse"].as_str() {
            items.insert(format!("code:{code}"));
            if code == "stream_exhausted" {
                items.insert("jpegai:stream-exhausted".into());
            }
        }
    }
    if decoded.iter().all(|&d| d) {
        items.insert("jpegai:decode".into());
        items.insert("lowering:jpegai-int/1".into());
    } else if decoded.iter().any(|&d| d) {
        items.insert("jpegai:decode-one-plane".into());
    }
    Ok(items)
}

/// Runs the coverage over the corpus: prints every item with its vectors, and fails on an
/// item with none or a claim that does not hold.
pub fn run(corpus: &Path, quiet: bool, only: &[String], tier: tree::Tier) -> Result<(), String> {
    let mut sources = tree::sources(corpus)?;
    sources.retain(|s| tier.holds(&s.target));
    if !only.is_empty() {
        sources.retain(|s| only.iter().any(|o| s.target.ends_with(&format!("/{o}.jsonl"))));
    }
    let analysed: Vec<(String, Vec<Claimed>)> = sources
        .par_iter()
        .map(|src| {
            let cases: Vec<Case> = tree::read_cases(src)?;
            let vectors = cases
                .iter()
                .map(|c| {
                    let path = format!("{}: case {}", src.corpus.display(), c.id);
                    let derived = match &src.stage {
                        None if src.dequant => Derived {
                            items: crate::dequant::items(&crate::dequant::fill(&c.body, &path)?),
                            outcome: Outcome {
                                operators: vec![],
                                outputs: vec![],
                            },
                        },
                        None if src.jpegai => {
                            let request = crate::jpegai::request(&c.body, &c.root, &path)?;
                            let items = derive_jpegai(&request).map_err(|e| format!("{path}: {e}"))?;
                            Derived {
                                items,
                                outcome: Outcome {
                                    operators: vec![],
                                    outputs: vec![],
                                },
                            }
                        }
                        Some(op) => {
                            let request = crate::stage::request(op, &c.body, &path)?;
                            let items = derive_stage(op, &request).map_err(|e| format!("{path}: {e}"))?;
                            Derived {
                                items,
                                outcome: Outcome {
                                    operators: vec![],
                                    outputs: vec![],
                                },
                            }
                        }
                        None if src.target.starts_with(tree::SCALE) => {
                            let lowering = match c.body["graph"]["lowered"]["set"].as_str() {
                                Some(name) => crate::sets::read_all(&c.root)?
                                    .into_iter()
                                    .find(|s| s.name == name)
                                    .map(|s| s.lowering),
                                None => None,
                            };
                            let prefix = match &src.operator {
                                Some(op) => format!("scale:{op}:"),
                                None => "scale:graph:".into(),
                            };
                            let items = crate::coverage_scale::derive(
                                src.operator.as_deref(),
                                &case::request(c, &path)?,
                                lowering.as_deref(),
                            )
                            .map_err(|e| format!("{path}: {e}"))?;
                            Derived {
                                items: items.into_iter().map(|i| format!("{prefix}{i}")).collect(),
                                outcome: Outcome {
                                    operators: vec![],
                                    outputs: vec![],
                                },
                            }
                        }
                        None => derive(src, &case::request(c, &path)?).map_err(|e| format!("{path}: {e}"))?,
                    };
                    let mut derived = derived;
                    // A graph lowered from a set, decoded: its lowering is covered (§14.2).
                    let lowered = c.body["graph"]["lowered"]["set"].as_str();
                    if let (Some(name), true) = (lowered, derived.outcome.outputs.iter().any(|o| !o.is_empty())) {
                        let sets = crate::sets::read_all(&c.root)?;
                        if let Some(set) = sets.iter().find(|s| s.name == name) {
                            derived.items.insert(format!("lowering:{}", set.lowering));
                        }
                    }
                    Ok((c.id.clone(), c.covers.clone(), derived))
                })
                .collect::<Result<Vec<_>, String>>()?;
            Ok((src.target.clone(), vectors))
        })
        .collect::<Result<_, String>>()?;
    let mut covered: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut broken = Vec::new();
    for (target, vectors) in &analysed {
        let op = ["vectors/", "stage/", "provisional/stage/"]
            .iter()
            .find_map(|d| target.strip_prefix(d))
            .and_then(|t| t.strip_suffix(".jsonl"));
        let phase = phase_form(vectors);
        for (id, claims, derived) in vectors {
            let mut items = derived.items.clone();
            if phase.contains(id) {
                items.insert("graph:phase-form".into());
            }
            for item in &items {
                covered.entry(item.clone()).or_default().push(format!("{target}#{id}"));
            }
            for claim in claims {
                let full = match op {
                    Some(op) if !claim.starts_with("graph:") && !claim.starts_with("code:") => {
                        format!("{op}:{claim}")
                    }
                    _ => claim.clone(),
                };
                if !items.contains(&full) {
                    broken.push(format!("{target}#{id}: claims {claim}, which it does not cover"));
                }
            }
        }
    }
    let mut required_items: Vec<String> = Vec::new();
    for (_, op) in OPERATORS {
        if only.is_empty() || only.iter().any(|o| o == op) {
            required_items.extend(required(op).into_iter().map(|i| format!("{op}:{i}")));
        }
    }
    for (_, op) in OPERATORS {
        if only.is_empty() || only.iter().any(|o| o == op) {
            required_items.extend(
                crate::coverage_scale::required(op)
                    .into_iter()
                    .map(|i| format!("scale:{op}:{i}")),
            );
        }
    }
    for op in wai_oracle::fill::stage::OPERATORS {
        if only.is_empty() || only.iter().any(|o| o == op) {
            required_items.extend(required_stage(op).into_iter().map(|i| format!("{op}:{i}")));
        }
    }
    if only.is_empty() {
        for (item, name) in set_items(&crate::sets::read_all(corpus)?) {
            covered
                .entry(item)
                .or_default()
                .push(format!("corpus/sets/{name}.json"));
        }
        required_items.extend(["sets:acc64-by-one", "sets:claim-acc32-by-one"].map(String::from));
        required_items.extend(wai_oracle::lower::LOWERINGS.iter().map(|l| format!("lowering:{l}")));
        required_items.extend(["jpegai:decode", "jpegai:load-refused", "jpegai:stream-exhausted"].map(String::from));
        required_items.extend(required_global());
        required_items.extend(
            crate::coverage_scale::required_graphs()
                .into_iter()
                .map(|i| format!("scale:graph:{i}")),
        );
        for (item, id) in crate::cis2::items(corpus)? {
            covered.entry(item).or_default().push(id);
        }
        required_items.extend(crate::cis2::required());
        required_items.extend(crate::dequant::required());
        required_items.extend(["stream_exhausted", "stream_noncanonical"].map(|c| format!("code:{c}")));
    }
    // The scale tier's items are its size classes (docs/scale.md), `scale:…`.
    required_items.retain(|i| {
        if i.starts_with("scale:") {
            tier.has_scale()
        } else {
            tier.has_small()
        }
    });
    let mut missing = 0;
    for item in &required_items {
        match covered.get(item) {
            Some(ids) => {
                if !quiet {
                    let more = if ids.len() > 3 {
                        format!(" and {} more", ids.len() - 3)
                    } else {
                        String::new()
                    };
                    println!(
                        "{item}: {}{more}",
                        ids.iter().take(3).cloned().collect::<Vec<_>>().join(", ")
                    );
                }
            }
            None => {
                missing += 1;
                println!("{item}: NONE");
            }
        }
    }
    for b in &broken {
        println!("{b}");
    }
    println!(
        "{} items, {} covered, {missing} with no vector; {} claims that do not hold",
        required_items.len(),
        required_items.len() - missing,
        broken.len()
    );
    if missing > 0 || !broken.is_empty() {
        Err("coverage is incomplete".into())
    } else {
        Ok(())
    }
}
