//! The scale tier's size classes (docs/scale.md): which each scale record covers, derived by
//! replaying it with an observer that keeps only shapes and each accumulator's extremes (a
//! record's tensors are millions of elements; nothing of that size is kept).

use num_bigint::BigInt;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use wai_oracle::bounds::{self, profile::Profile};
use wai_oracle::fill::recipe;
use wai_oracle::plan::Shape;
use wai_oracle::run::{NodeObserver, Sequence, Stop};
use wai_oracle::tensor::Tensor;
use wai_oracle::whg1::{self, InputKind, Op};

/// The vector widths whose neighbours the `w:` and `c:` classes name.
const WIDTHS: [u64; 5] = [8, 16, 32, 64, 128];

/// The operators whose arithmetic or layout runs across channels: they need every `c:` class.
const ACROSS_CHANNELS: [&str; 14] = [
    "conv",
    "conv_transpose",
    "rescale",
    "chscale",
    "mul",
    "chunk_add",
    "igdn",
    "layernorm_c",
    "gram",
    "apply",
    "concat",
    "split",
    "pixel_shuffle",
    "pixel_unshuffle",
];

const MOVEMENT: [&str; 10] = [
    "concat",
    "split",
    "pixel_shuffle",
    "pixel_unshuffle",
    "pad_rep",
    "crop_to",
    "crop",
    "subpos_split",
    "subpos_merge",
    "fill",
];

/// The multiply-accumulate operators, with the key of their partial sums (§5.2, §5.3, §5.9).
fn mac_key(op: &str) -> Option<&'static str> {
    match op {
        "conv" => Some("conv.acc"),
        "conv_transpose" => Some("convT.acc"),
        "gram" => Some("gram.acc"),
        "apply" => Some("apply.acc"),
        _ => None,
    }
}

/// The accumulating operators and whether they can pass `2^17` terms within the caps.
fn accumulates(op: &str) -> Option<bool> {
    match op {
        "conv" | "conv_transpose" | "gram" | "layernorm_c" | "l2norm" | "softmax" => Some(true),
        "apply" => Some(false),
        _ => None,
    }
}

/// `w±` class names: `8-1`, `8`, `8+1`, …
fn straddles() -> Vec<String> {
    WIDTHS
        .iter()
        .flat_map(|w| [format!("{w}-1"), format!("{w}"), format!("{w}+1")])
        .collect()
}

/// The size classes `scale/<op>.jsonl` must cover, without the `scale:<op>:` prefix.
pub fn required(op: &str) -> Vec<String> {
    let mut items: Vec<String> = ["w:1", "w:prime", "c:1", "c:prime"].map(String::from).to_vec();
    items.extend(straddles().iter().map(|s| format!("w:{s}")));
    if ACROSS_CHANNELS.contains(&op) {
        items.extend(straddles().iter().map(|s| format!("c:{s}")));
    }
    items.extend(["elems:2^10", "elems:2^16", "elems:2^20"].map(String::from));
    if MOVEMENT.contains(&op) {
        items.push("elems:2^24".into());
    }
    if let Some(long) = accumulates(op) {
        items.push("acc:2^10".into());
        if long {
            items.push("acc:2^17".into());
        }
    }
    if mac_key(op).is_some() {
        for bound in ["2^24", "2^31"] {
            items.extend(["hi", "lo"].map(|e| format!("past-{bound}:{e}")));
        }
        items.extend(["attain:hi", "attain:lo"].map(String::from));
    }
    match op {
        "conv" => items.extend(
            [
                "kernel:1",
                "kernel:3",
                "kernel:5",
                "kernel:7",
                "stride:2",
                "groups",
                "depthwise",
            ]
            .map(String::from),
        ),
        "conv_transpose" => {
            items.extend(["kernel:1", "kernel:3", "kernel:5", "kernel:7", "up:2", "up:4"].map(String::from))
        }
        _ => {}
    }
    items
}

/// The graph classes `scale/graphs/` must cover, without the `scale:graph:` prefix.
pub fn required_graphs() -> Vec<String> {
    ["64x64", "state", "lowered:int_synth/1", "lowered:jpegai-int/1"]
        .map(String::from)
        .to_vec()
}

/// What a scale decode shows: the shapes it reads and writes, each key's extremes.
#[derive(Default)]
struct Extremes {
    shapes: Vec<Shape>,
    keys: BTreeMap<&'static str, (BigInt, BigInt)>,
}

impl NodeObserver for Extremes {
    fn see(&mut self, _: usize, key: &'static str, _: usize, value: &BigInt) {
        let e = self.keys.entry(key).or_insert_with(|| (value.clone(), value.clone()));
        if *value < e.0 {
            e.0 = value.clone();
        }
        if *value > e.1 {
            e.1 = value.clone();
        }
    }
    fn input(&mut self, _: usize, t: &Tensor) {
        self.shapes.push(t.shape);
    }
    fn result(&mut self, _: usize, _: usize, t: &Tensor) {
        self.shapes.push(t.shape);
    }
}

fn is_odd_prime(n: u64) -> bool {
    n >= 3
        && !n.is_multiple_of(2)
        && (3..)
            .step_by(2)
            .take_while(|d| d * d <= n)
            .all(|d| !n.is_multiple_of(d))
}

/// The `c:`/`w:` classes of one side.
fn side_items(prefix: &str, n: u64, items: &mut BTreeSet<String>) {
    if n == 1 {
        items.insert(format!("{prefix}:1"));
    }
    if is_odd_prime(n) {
        items.insert(format!("{prefix}:prime"));
    }
    for w in WIDTHS {
        for (d, name) in [(-1i64, format!("{w}-1")), (0, format!("{w}")), (1, format!("{w}+1"))] {
            if n as i64 == w as i64 + d {
                items.insert(format!("{prefix}:{name}"));
            }
        }
    }
}

/// The most terms one output of the node sums (docs/scale.md), for its input shapes.
fn accumulation(op: &Op, inputs: &[Shape]) -> u64 {
    let x = inputs[0];
    match op {
        Op::Conv(p) => x.c / u64::from(p.groups) * u64::from(p.kh * p.kw),
        Op::ConvTranspose(p) => x.c * u64::from(p.kh.div_ceil(p.sh) * p.kw.div_ceil(p.sw)),
        Op::Gram(_) | Op::L2norm { .. } => x.h * x.w,
        Op::Apply(_) => x.w,
        Op::Igdn(_) | Op::LayernormC(_) => x.c,
        Op::Softmax => x.w,
        _ => 0,
    }
}

/// Whether every input's recipe range lies in `[lo, hi]`.
fn ranges_within(decode: &Value, lo: i64, hi: i64) -> Vec<bool> {
    decode["inputs"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            let r = &t["recipe"]["range"];
            let end = |i: usize| r[i].as_str().and_then(|s| s.parse::<i64>().ok());
            matches!((end(0), end(1)), (Some(a), Some(b)) if lo <= a && b <= hi)
        })
        .collect()
}

/// Operands fit int16 × int8 (docs/scale.md): every input's range in int16, and the weights
/// (`conv`, `conv_transpose`) or one of the two inputs (`gram`, `apply`) in int8.
fn fits_int16_by_int8(op: &Op, decode: &Value) -> bool {
    let int16 = ranges_within(decode, -(1 << 15), (1 << 15) - 1);
    let int8 = ranges_within(decode, -(1 << 7), (1 << 7) - 1);
    let weights_int8 = |w: &[i64]| w.iter().all(|v| (-(1 << 7)..1 << 7).contains(v));
    int16.iter().all(|&b| b)
        && match op {
            Op::Conv(p) => weights_int8(&p.weights),
            Op::ConvTranspose(p) => weights_int8(&p.weights),
            _ => int8.iter().any(|&b| b),
        }
}

/// The classes one record of `scale/<op>.jsonl` covers (without the prefix), or of
/// `scale/graphs/` when `op` is `None`.
pub fn derive(op: Option<&str>, request: &Value, lowering: Option<&str>) -> Result<BTreeSet<String>, String> {
    let mut items = BTreeSet::new();
    let bytes = hex::decode(request["graph"].as_str().unwrap_or_default()).map_err(|e| e.to_string())?;
    let Ok(loaded) = whg1::load(&bytes) else {
        return Ok(items);
    };
    let Ok(certified) = bounds::step8("g", &bytes, &loaded.graph, Profile::Acc64) else {
        return Ok(items);
    };
    let g = &loaded.graph;
    let mut sequence = Sequence::new(&loaded);
    let mut completed = 0;
    for d in request["decodes"].as_array().into_iter().flatten() {
        let inputs: Vec<Tensor> = d["inputs"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| recipe::read(t, "input").map(|r| r.tensor()))
            .collect::<Result<_, _>>()?;
        let scalars: Vec<BigInt> = d["scalars"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s.as_str().and_then(wai_oracle::canon::parse_int))
            .collect();
        let input_shapes: Vec<Shape> = inputs.iter().map(|t| t.shape).collect();
        let mut seen = Extremes::default();
        match sequence.decode_observed(inputs, &scalars, &mut seen) {
            Ok(_) => completed += 1,
            Err(Stop::Refused(_)) => continue,
            Err(Stop::Error(e)) => return Err(e),
        }
        let largest = seen.shapes.iter().filter_map(Shape::elems).max().unwrap_or(0);
        let Some(op) = op else {
            let planes = input_shapes.iter().any(|s| s.h >= 64 && s.w >= 64);
            if planes && g.nodes.len() >= 3 {
                items.insert("64x64".into());
                let state = g.inputs.iter().any(|i| matches!(i.kind, InputKind::State { .. }));
                if state && completed >= 2 {
                    items.insert("state".into());
                }
            }
            if let Some(l) = lowering
                && (planes || l == "jpegai-int/1")
            {
                items.insert(format!("lowered:{l}"));
            }
            continue;
        };
        let node = &g.nodes[0];
        for s in &seen.shapes {
            side_items("c", s.c, &mut items);
            side_items("w", s.w, &mut items);
        }
        for (bound, name) in [(10, "2^10"), (16, "2^16"), (20, "2^20"), (24, "2^24")] {
            if largest >= 1 << bound {
                items.insert(format!("elems:{name}"));
            }
        }
        let terms = accumulation(&node.op, &input_shapes);
        if terms >= 1 << 10 {
            items.insert("acc:2^10".into());
        }
        if terms > 1 << 17 {
            items.insert("acc:2^17".into());
        }
        if let Some(key) = mac_key(op)
            && let Some((lo, hi)) = seen.keys.get(key)
        {
            if fits_int16_by_int8(&node.op, d) {
                for (bound, name) in [(24, "2^24"), (31, "2^31")] {
                    if *hi > BigInt::from(1i64 << bound) - u8::from(bound == 31) {
                        items.insert(format!("past-{name}:hi"));
                    }
                    if *lo < -BigInt::from(1i64 << bound) {
                        items.insert(format!("past-{name}:lo"));
                    }
                }
            }
            let interval = certified.pass.nodes[0].intermediates.iter().find(|(k, _)| *k == key);
            if let Some((_, i)) = interval
                && terms >= 1 << 10
            {
                if *hi == i.hi {
                    items.insert("attain:hi".into());
                }
                if *lo == i.lo {
                    items.insert("attain:lo".into());
                }
            }
        }
        let k = |kh: u32, kw: u32, items: &mut BTreeSet<String>| {
            for side in [1, 3, 5, 7] {
                if kh == side || kw == side {
                    items.insert(format!("kernel:{side}"));
                }
            }
        };
        match &node.op {
            Op::Conv(p) => {
                k(p.kh, p.kw, &mut items);
                if p.sh >= 2 || p.sw >= 2 {
                    items.insert("stride:2".into());
                }
                let cin = input_shapes[0].c;
                let groups = u64::from(p.groups);
                if groups > 1 && groups < cin {
                    items.insert("groups".into());
                }
                if groups > 1 && groups == cin && u64::from(p.cout) == cin {
                    items.insert("depthwise".into());
                }
            }
            Op::ConvTranspose(p) => {
                k(p.kh, p.kw, &mut items);
                for up in [2, 4] {
                    if (p.sh == up && p.kh % 2 == 1) || (p.sw == up && p.kw % 2 == 1) {
                        items.insert(format!("up:{up}"));
                    }
                }
            }
            _ => {}
        }
    }
    Ok(items)
}
