//! The bounds certificate (§8.5) as canonical JSON, and the verdict it carries.

use super::interval::Iv;
use super::npu;
use super::pass::Pass;
use super::profile::{Failure, Profile, acc32_params, first_failure, node_failure};
use crate::canon::J;
use crate::whg1::{Graph, Kind};

/// One certified graph: its role, its bytes' digest, the graph and its pass.
pub struct Certified<'a> {
    pub name: String,
    pub sha256_hex: String,
    pub graph: &'a Graph,
    pub pass: &'a Pass,
}

/// The verdict of §8.5 over a set of graphs.
pub struct Verdict {
    pub acc32: Option<Failure>,
    pub acc64: Option<Failure>,
    pub npu_flags: Vec<String>,
    pub npu_reasons: Vec<String>,
}

impl Verdict {
    pub fn meets(&self, p: Profile) -> bool {
        match p {
            Profile::Acc32 => self.acc32.is_none(),
            Profile::Acc64 => self.acc64.is_none(),
        }
    }
}

pub fn verdict(graphs: &[(&str, &Graph, &Pass)]) -> Verdict {
    let acc32 = first_failure(graphs, Profile::Acc32);
    let acc64 = first_failure(graphs, Profile::Acc64);
    let mut flags: Vec<String> = Vec::new();
    let mut reasons: Vec<String> = Vec::new();
    if fault!("npu-reasons-acc32-missing", acc32.is_some(), false) {
        reasons.push("acc32".into());
    }
    for &(_, g, _) in graphs {
        for op in &g.ops {
            flags.extend(npu::npu_flags(g, op).into_iter().map(String::from));
            reasons.extend(npu::npu_reasons(g, op));
        }
    }
    flags.sort_unstable_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    flags.dedup();
    reasons.sort_unstable_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    reasons.dedup();
    Verdict {
        acc32,
        acc64,
        npu_flags: flags,
        npu_reasons: reasons,
    }
}

fn iv_json(iv: Iv) -> Vec<(&'static str, J)> {
    vec![
        ("bits", J::int(iv.bits())),
        ("hi", J::Str(iv.hi.to_decimal())),
        ("lo", J::Str(iv.lo.to_decimal())),
    ]
}

fn failure_json(f: &Failure) -> J {
    let mut m = vec![
        ("graph", J::str(&f.graph)),
        ("index", J::int(f.index)),
        ("key", J::str(&f.why.key)),
        ("where", J::str(f.place)),
    ];
    if let Some(b) = f.why.bits {
        m.push(("bits", J::int(b)));
    }
    J::obj(m)
}

fn strings(v: &[String]) -> J {
    J::Arr(v.iter().map(|s| J::str(s)).collect())
}

fn graph_json(c: &Certified) -> J {
    let g = c.graph;
    let inputs = g
        .inputs
        .iter()
        .map(|i| {
            let rec = &g.tensors[i.tensor];
            let (lo, hi) = rec.policy.range().expect("an input is check or clamp");
            let mut m = vec![
                ("hi", J::int(hi)),
                ("kind", J::str(if i.kind == Kind::State { "state" } else { "data" })),
                ("lo", J::int(lo)),
                ("max_h", J::int(i.max_h)),
                ("max_w", J::int(i.max_w)),
                ("policy", J::str(rec.policy.name())),
                ("tensor", J::int(i.tensor)),
            ];
            if i.kind == Kind::State {
                m.push(("init", J::int(i.init)));
                m.push(("src", J::int(i.src)));
            }
            J::obj(m)
        })
        .collect();
    let nodes = g
        .ops
        .iter()
        .zip(&c.pass.nodes)
        .enumerate()
        .map(|(k, (op, node))| {
            let fits: Vec<J> = [Profile::Acc32, Profile::Acc64]
                .into_iter()
                .filter(|&p| node_failure(op, g, node, p).is_none())
                .map(|p| J::str(p.name()))
                .collect();
            let inter = J::obj(
                node.rec
                    .items
                    .iter()
                    .map(|(key, iv)| (*key, J::obj(iv_json(*iv))))
                    .collect(),
            );
            let outs = op
                .outs
                .iter()
                .enumerate()
                .map(|(i, &t)| {
                    let mut m = iv_json(node.outs[i]);
                    m.push(("policy", J::str(g.tensors[t].policy.name())));
                    m.push(("result", J::obj(iv_json(node.results[i]))));
                    m.push(("tensor", J::int(t)));
                    J::obj(m)
                })
                .collect();
            let mut m = vec![
                (
                    "acc32_params",
                    J::Arr(acc32_params(op).into_iter().map(J::str).collect()),
                ),
                ("fits", J::Arr(fits)),
                ("index", J::int(k)),
                ("intermediates", inter),
                (
                    "npu_flags",
                    J::Arr(npu::npu_flags(g, op).into_iter().map(J::str).collect()),
                ),
                ("op", J::str(op.name())),
                ("out", J::Arr(outs)),
                ("saturated", J::Bool(node.saturated)),
            ];
            if let Some(kc) = node.k_c {
                m.push(("k_c", kc.map_or(J::str("unbounded"), |v| J::Str(v.to_decimal()))));
            }
            if let Some(a) = &node.a_bits {
                let mut mac = vec![("a_bits", J::Arr(a.iter().map(|b| J::int(*b)).collect()))];
                if let Some(w) = node.w_bits {
                    mac.push(("w_bits", J::int(w)));
                }
                m.push(("mac", J::obj(mac)));
            }
            J::obj(m)
        })
        .collect();
    let scalars = g
        .scalars
        .iter()
        .enumerate()
        .map(|(i, s)| J::obj(vec![("hi", J::int(s.hi)), ("index", J::int(i)), ("lo", J::int(s.lo))]))
        .collect();
    J::obj(vec![
        ("graph_sha256", J::str(&c.sha256_hex)),
        ("inputs", J::Arr(inputs)),
        ("name", J::str(&c.name)),
        ("nodes", J::Arr(nodes)),
        ("scalars", J::Arr(scalars)),
    ])
}

/// The certificate's JSON (§8.5).
pub fn certificate(graphs: &[Certified], capability: Option<&str>, lowering: &str, set_sha256: Option<&str>) -> J {
    let views: Vec<(&str, &Graph, &Pass)> = graphs.iter().map(|c| (c.name.as_str(), c.graph, c.pass)).collect();
    let v = verdict(&views);
    let mut vm = vec![
        ("acc32", J::Bool(v.acc32.is_none())),
        ("acc64", J::Bool(v.acc64.is_none())),
        ("npu", J::Bool(v.npu_reasons.is_empty())),
        ("npu_flags", strings(&v.npu_flags)),
        ("npu_reasons", strings(&v.npu_reasons)),
    ];
    if let Some(f) = &v.acc32 {
        vm.push(("acc32_first_failure", failure_json(f)));
    }
    if let Some(f) = &v.acc64 {
        vm.push(("acc64_first_failure", failure_json(f)));
    }
    J::obj(vec![
        ("capability", capability.map_or(J::Null, J::str)),
        ("certificate", J::str("wai-ops/1 bounds")),
        ("graphs", J::Arr(graphs.iter().map(graph_json).collect())),
        ("lowering", J::str(lowering)),
        ("set_sha256", set_sha256.map_or(J::Null, J::str)),
        ("verdict", J::obj(vm)),
    ])
}
