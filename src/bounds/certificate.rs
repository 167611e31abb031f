//! §8.5 The certificate, as canonical JSON.

use super::interval::Interval;
use super::profile::{Profile, acc32_params, node_failure};
use super::{Certified, FirstFailure, first_failure, npu};
use crate::canon;
use crate::whg1::{Graph, InputKind, Op};
use num_bigint::BigInt;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

/// What the certificate records beside the graphs.
#[derive(Clone, Debug, Default)]
pub struct Header {
    pub capability: Option<String>,
    /// The §13 identifier, or `"whg1"` for bare graphs.
    pub lowering: String,
    pub set_sha256: Option<String>,
}

/// The lowercase hexadecimal SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

/// The certificate of `graphs` (in the lowering's role order, or file order), as a value.
pub fn certificate(graphs: &[Certified], header: &Header) -> Value {
    let mut o = Map::new();
    o.insert(
        "capability".into(),
        header.capability.clone().map_or(Value::Null, Value::String),
    );
    o.insert("certificate".into(), json!("wai-ops/1 bounds"));
    o.insert("graphs".into(), Value::Array(graphs.iter().map(graph).collect()));
    o.insert("lowering".into(), Value::String(header.lowering.clone()));
    o.insert(
        "set_sha256".into(),
        header.set_sha256.clone().map_or(Value::Null, Value::String),
    );
    o.insert("verdict".into(), verdict(graphs));
    Value::Object(o)
}

/// The certificate's canonical bytes (no final newline).
pub fn bytes(graphs: &[Certified], header: &Header) -> Vec<u8> {
    // Every string the certificate holds is checked printable ASCII by the caller.
    canon::to_string(&certificate(graphs, header))
        .unwrap_or_default()
        .into_bytes()
}

fn int(v: impl Into<BigInt>) -> Value {
    canon::int(v)
}

fn interval(i: &Interval) -> Value {
    json!({ "bits": int(i.bits()), "hi": int(i.hi.clone()), "lo": int(i.lo.clone()) })
}

fn graph(c: &Certified) -> Value {
    let g = &c.graph;
    let inputs: Vec<Value> = g
        .inputs
        .iter()
        .map(|inp| {
            let t = &g.tensors[inp.tensor as usize];
            let (lo, hi) = t.policy.range().unwrap_or((0, 0));
            let mut o = Map::new();
            o.insert("hi".into(), int(hi));
            o.insert("lo".into(), int(lo));
            o.insert("max_h".into(), int(inp.max_h));
            o.insert("max_w".into(), int(inp.max_w));
            o.insert("policy".into(), json!(t.policy.name()));
            o.insert("tensor".into(), int(inp.tensor));
            match inp.kind {
                InputKind::Data => {
                    o.insert("kind".into(), json!("data"));
                }
                InputKind::State { src, init } => {
                    o.insert("kind".into(), json!("state"));
                    o.insert("init".into(), int(init));
                    o.insert("src".into(), int(src));
                }
            }
            Value::Object(o)
        })
        .collect();
    let scalars: Vec<Value> = g
        .scalars
        .iter()
        .enumerate()
        .map(|(k, s)| json!({ "hi": int(s.hi), "index": int(k), "lo": int(s.lo) }))
        .collect();
    json!({
        "graph_sha256": sha256_hex(&c.bytes),
        "inputs": inputs,
        "name": c.name,
        "nodes": (0..g.nodes.len()).map(|i| node(c, i)).collect::<Vec<_>>(),
        "scalars": scalars,
    })
}

fn node(c: &Certified, index: usize) -> Value {
    let g = &c.graph;
    let n = &g.nodes[index];
    let rule = &c.pass.nodes[index];
    let fits: Vec<Value> = Profile::ALL
        .into_iter()
        .filter(|&p| node_failure(g, &c.pass, index, p).is_none())
        .map(|p| json!(p.name()))
        .collect();
    let intermediates: Map<String, Value> = rule
        .intermediates
        .iter()
        .map(|(k, i)| (k.to_string(), interval(i)))
        .collect();
    let out: Vec<Value> = n
        .outputs
        .iter()
        .zip(&rule.results)
        .map(|(&t, result)| {
            let after = &c.pass.tensors[t as usize];
            json!({
                "bits": int(after.bits()), "hi": int(after.hi.clone()), "lo": int(after.lo.clone()),
                "policy": g.tensors[t as usize].policy.name(), "result": interval(result), "tensor": int(t),
            })
        })
        .collect();
    let mut o = Map::new();
    o.insert("acc32_params".into(), json!(acc32_params(n)));
    o.insert("fits".into(), Value::Array(fits));
    o.insert("index".into(), int(index));
    o.insert("intermediates".into(), Value::Object(intermediates));
    if let Some(key) = term_key(&n.op) {
        o.insert(
            "k_c".into(),
            k_c(rule.intermediates.iter().find(|(k, _)| *k == key).map(|(_, i)| i)),
        );
    }
    if let Some(mac) = mac(g, c, index) {
        o.insert("mac".into(), mac);
    }
    o.insert("npu_flags".into(), json!(npu::flags(g, n)));
    o.insert("op".into(), json!(n.op.name()));
    o.insert("out".into(), Value::Array(out));
    o.insert("saturated".into(), Value::Bool(rule.saturated));
    Value::Object(o)
}

/// The term interval `k_c` reads, for the operators that record `k_c`.
fn term_key(op: &Op) -> Option<&'static str> {
    match op {
        Op::Conv(_) => Some("conv.term"),
        Op::ConvTranspose(_) => Some("convT.term"),
        Op::Igdn(_) => Some("igdn.term"),
        Op::Gram(_) => Some("gram.term"),
        Op::Apply(_) => Some("apply.term"),
        _ => None,
    }
}

/// §6: `K_c = ⌊(2^31 − 1) / P⌋`, `P` the largest magnitude of the term interval, or
/// `"unbounded"` when `P = 0`.
fn k_c(term: Option<&Interval>) -> Value {
    let p = term.map(Interval::magnitude).unwrap_or_default();
    if p == BigInt::ZERO {
        json!("unbounded")
    } else {
        int(crate::num::floor_div(&BigInt::from(i32::MAX), &p))
    }
}

/// `mac`: the bits of each input tensor's interval, and of the weights' or `M`'s `[min, max]`.
fn mac(g: &Graph, c: &Certified, index: usize) -> Option<Value> {
    let n = &g.nodes[index];
    let weights: Option<&[i64]> = match &n.op {
        Op::Conv(p) => Some(&p.weights),
        Op::ConvTranspose(p) => Some(&p.weights),
        Op::Chscale(p) => Some(&p.m),
        Op::Mul(_) | Op::Gram(_) | Op::Apply(_) => None,
        _ => return None,
    };
    let a_bits: Vec<Value> = n
        .inputs
        .iter()
        .map(|&t| int(c.pass.tensors[t as usize].bits()))
        .collect();
    let mut o = Map::new();
    o.insert("a_bits".into(), Value::Array(a_bits));
    if let Some(w) = weights {
        let lo = w.iter().copied().min().unwrap_or(0);
        let hi = w.iter().copied().max().unwrap_or(0);
        o.insert("w_bits".into(), int(Interval::new(lo, hi).bits()));
    }
    Some(Value::Object(o))
}

fn failure(f: &FirstFailure) -> Value {
    let mut o = Map::new();
    if let Some(bits) = f.failure.bits {
        o.insert("bits".into(), int(bits));
    }
    o.insert("graph".into(), Value::String(f.graph.clone()));
    o.insert("index".into(), int(f.index));
    o.insert("key".into(), Value::String(f.failure.key.clone()));
    o.insert("where".into(), json!(f.place));
    Value::Object(o)
}

fn verdict(graphs: &[Certified]) -> Value {
    let mut o = Map::new();
    for p in Profile::ALL {
        let first = first_failure(graphs, p);
        o.insert(p.name().into(), Value::Bool(first.is_none()));
        if let Some(f) = first {
            o.insert(format!("{}_first_failure", p.name()), failure(&f));
        }
    }
    let mut reasons: Vec<String> = graphs.iter().flat_map(|c| npu::reasons(&c.graph)).collect();
    if o.get("acc32") == Some(&Value::Bool(false)) {
        reasons.push("acc32".into());
    }
    reasons.sort();
    reasons.dedup();
    let mut flags: Vec<&str> = graphs
        .iter()
        .flat_map(|c| c.graph.nodes.iter().flat_map(|n| npu::flags(&c.graph, n)))
        .collect();
    flags.sort_unstable();
    flags.dedup();
    o.insert("npu".into(), Value::Bool(reasons.is_empty()));
    o.insert("npu_flags".into(), json!(flags));
    o.insert("npu_reasons".into(), json!(reasons));
    Value::Object(o)
}
