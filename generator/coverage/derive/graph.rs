//! Graph vectors: each is loaded and decoded again with the oracle, observing every named
//! intermediate, and the items it covers are derived from what happened (an interval's end
//! reached, a rounding tie, a refusal at its step).

use super::{Derived, Outcome, int};
use crate::coverage::requirements::accumulators;
use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::Signed;
use std::collections::{BTreeMap, BTreeSet};
use wai_oracle::bounds::{self, Certified, first_failure, interval::Interval, profile::Profile};
use wai_oracle::num::Round;
use wai_oracle::run::{NodeObserver, Sequence, Stop};
use wai_oracle::tensor::Tensor;
use wai_oracle::whg1::{self, Graph, InputKind, Op, Policy};

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
            .map(|t| wai_oracle::json::tensor(t, "input"))
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
/// The items one graph vector covers: per-operator ones (prefixed with the operator) when it
/// comes from a per-operator file, of `operator`, and global ones.
pub fn derive(operator: Option<&str>, request: &serde_json::Value) -> Result<Derived, String> {
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
    if let (Some(op), Ok(c)) = (operator, &load) {
        operator_items(op, &g, c, &decodes, &mut per);
    }
    if let (Some(_), Err((_, at))) = (operator, &load) {
        load_refused_items(&g, at, &mut per);
    }
    if let Some(op) = operator {
        items.extend(per.into_iter().map(|i| format!("{op}:{i}")));
    }
    Ok(Derived { items, outcome })
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
