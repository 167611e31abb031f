//! DetessDequant requests from the corpus (docs/corpus.md, "DetessDequant"): numeric cases
//! (`scale`, `zero_point`, all 256 `q` unless listed) and call cases (specs, parameters, buffers),
//! with capacities that may name the plan's sizes (`"$required"`, `"$span+4"`) and input bytes
//! from a seeded recipe, so padding and gaps hold nonzero bytes.

use crate::value::*;
use num_bigint::BigInt;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Value, json};
use wai_oracle::dequant::call;

/// A binary32's bits: `"0x3e800000"` or a decimal rounded once by `str::parse`.
fn scale_bits(v: &Value, path: &str) -> Result<String, Fail> {
    let s = match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => return Err(format!("{path}: not a binary32")),
    };
    let bits = match s.strip_prefix("0x") {
        Some(h) if h.len() == 8 => u32::from_str_radix(h, 16).map_err(|e| format!("{path}: {e}"))?,
        _ => s
            .parse::<f32>()
            .map_err(|_| format!("{path}: {s:?} is not a binary32"))?
            .to_bits(),
    };
    Ok(format!("{bits:08x}"))
}

fn text(v: &BigInt) -> Value {
    Value::String(v.to_string())
}

/// A numeric case's request.
pub fn numeric(c: &Map<String, Value>, path: &str) -> Result<Value, Fail> {
    only(c, &["id", "about", "scale", "zero_point", "q"], path)?;
    let q: Vec<Value> = match c.get("q") {
        Some(list) => array(list, &format!("{path}.q"))?
            .iter()
            .map(|x| int(x, &format!("{path}.q")).map(|v| text(&v)))
            .collect::<Result<_, _>>()?,
        None => (-128..=127).map(|v| text(&BigInt::from(v))).collect(),
    };
    Ok(json!({
        "id": member(c, "id", path)?,
        "in": {
            "q": q,
            "scale": scale_bits(member(c, "scale", path)?, &format!("{path}.scale"))?,
            "zero_point": text(&int(member(c, "zero_point", path)?, &format!("{path}.zero_point"))?),
        },
    }))
}

/// Every integer of a spec written as a canonical string.
fn spec(v: &Value, path: &str) -> Result<Value, Fail> {
    fn strings(v: &Value, path: &str) -> Result<Value, Fail> {
        Ok(match v {
            Value::Number(_) => text(&int(v, path)?),
            Value::String(s) if s.starts_with(|c: char| c == '-' || c.is_ascii_digit()) => text(&int(v, path)?),
            Value::Array(a) => Value::Array(a.iter().map(|x| strings(x, path)).collect::<Result<_, _>>()?),
            Value::Object(o) => Value::Object(
                o.iter()
                    .map(|(k, x)| strings(x, &format!("{path}.{k}")).map(|x| (k.clone(), x)))
                    .collect::<Result<_, _>>()?,
            ),
            other => other.clone(),
        })
    }
    object(v, path)?;
    strings(v, path)
}

/// A capacity: an integer, or `"$required"`/`"$span"` with an optional `+n`/`-n`, the plan's input
/// bytes or output span (0 when the specs do not admit a plan).
fn capacity(v: &Value, sizes: &(BigInt, BigInt), path: &str) -> Result<BigInt, Fail> {
    let Some(s) = v.as_str().and_then(|s| s.strip_prefix('$')) else {
        return int(v, path);
    };
    let (name, delta) = match s.find(['+', '-']) {
        Some(i) => (
            &s[..i],
            int(&Value::String(s[i..].trim_start_matches('+').to_string()), path)?,
        ),
        None => (s, BigInt::ZERO),
    };
    let base = match name {
        "required" => &sizes.0,
        "span" => &sizes.1,
        other => return Err(format!("{path}: no size {other:?}")),
    };
    Ok(base + delta)
}

/// A call case's request: `input`/`output` (one spec each) or `inputs`/`outputs` (lists), the
/// parameters, and `input_buffer`/`output_buffer` or their lists.
pub fn call(c: &Map<String, Value>, path: &str) -> Result<Value, Fail> {
    only(
        c,
        &[
            "id",
            "about",
            "input",
            "output",
            "inputs",
            "outputs",
            "scale",
            "zero_point",
            "input_buffer",
            "output_buffer",
            "input_buffers",
            "output_buffers",
        ],
        path,
    )?;
    let specs = |one: &str, many: &str| -> Result<Vec<Value>, Fail> {
        match (c.get(one), c.get(many)) {
            (Some(s), None) => Ok(vec![spec(s, &format!("{path}.{one}"))?]),
            (None, Some(l)) => array(l, &format!("{path}.{many}"))?
                .iter()
                .map(|s| spec(s, &format!("{path}.{many}")))
                .collect(),
            _ => Err(format!("{path}: one of {one} and {many}")),
        }
    };
    let (inputs, outputs) = (specs("input", "inputs")?, specs("output", "outputs")?);
    let mut params = Map::new();
    params.insert(
        "scale".into(),
        Value::String(scale_bits(member(c, "scale", path)?, &format!("{path}.scale"))?),
    );
    if let Some(z) = c.get("zero_point") {
        params.insert("zero_point".into(), text(&int(z, &format!("{path}.zero_point"))?));
    }
    let mut request = json!({ "id": member(c, "id", path)?, "inputs": inputs, "outputs": outputs, "params": params });
    // The plan's sizes, for `$required` and `$span`: the specs filled with placeholder buffers.
    request["buffers"] = json!({ "inputs": [{ "address": "16", "bytes": "", "capacity": "0" }],
                                 "outputs": [{ "address": "16", "capacity": "0", "poison": "00" }] });
    let sizes = sizes(&request);
    let buffers = |one: &str, many: &str, input: bool| -> Result<Vec<Value>, Fail> {
        let list: Vec<&Value> = match (c.get(one), c.get(many)) {
            (Some(b), None) => vec![b],
            (None, Some(l)) => array(l, &format!("{path}.{many}"))?.iter().collect(),
            _ => return Err(format!("{path}: one of {one} and {many}")),
        };
        list.into_iter()
            .map(|b| buffer(b, input, &sizes, &format!("{path}.{one}")))
            .collect()
    };
    request["buffers"] = json!({
        "inputs": buffers("input_buffer", "input_buffers", true)?,
        "outputs": buffers("output_buffer", "output_buffers", false)?,
    });
    Ok(request)
}

/// The input bytes and output span of the request's specs, or zeros.
fn sizes(request: &Value) -> (BigInt, BigInt) {
    let filled = wai_oracle::fill::dequant::parse_call(request);
    let Ok(call) = filled else {
        return (BigInt::ZERO, BigInt::ZERO);
    };
    match call::check_inference(&call) {
        Ok(plan) => (plan.input_bytes().clone(), plan.output_span().clone()),
        Err(_) => (BigInt::ZERO, BigInt::ZERO),
    }
}

/// A buffer: `address`, `capacity`, and for an input `bytes` (hex, or `{"random": seed}`: the
/// capacity's worth of seeded bytes, at most 2^20), for an output `poison`.
fn buffer(v: &Value, input: bool, sizes: &(BigInt, BigInt), path: &str) -> Result<Value, Fail> {
    let b = object(v, path)?;
    only(b, &["address", "capacity", "bytes", "poison"], path)?;
    let cap = capacity(member(b, "capacity", path)?, sizes, &format!("{path}.capacity"))?;
    let mut out = json!({
        "address": text(&int(member(b, "address", path)?, &format!("{path}.address"))?),
        "capacity": text(&cap),
    });
    if input {
        let bytes = match member(b, "bytes", path)? {
            Value::String(h) => h.clone(),
            Value::Object(r) => {
                let seed = u64_(member(r, "random", path)?, &format!("{path}.bytes.random"))?;
                let n = u64::try_from(&cap).unwrap_or(0).min(1 << 20) as usize;
                let mut rng = ChaCha8Rng::seed_from_u64(seed);
                hex::encode((0..n).map(|_| rng.next_u32() as u8).collect::<Vec<u8>>())
            }
            _ => return Err(format!("{path}.bytes: hex or a random recipe")),
        };
        out["bytes"] = Value::String(bytes);
    } else {
        out["poison"] = member(b, "poison", path)?.clone();
    }
    Ok(out)
}

/// A case of a DetessDequant file, filled: a call when it names specs, else a numeric record.
pub fn fill(body: &Value, path: &str) -> Result<Value, Fail> {
    let c = object(body, path)?;
    if ["input", "inputs"].iter().any(|k| c.contains_key(*k)) {
        wai_oracle::fill::dequant::fill_call(&call(c, path)?)
    } else {
        wai_oracle::fill::dequant::fill_numeric(&numeric(c, path)?)
    }
}

/// The coverage items a filled DetessDequant record covers.
pub fn items(filled: &Value) -> std::collections::BTreeSet<String> {
    let mut items = std::collections::BTreeSet::new();
    let mut add = |s: &str| {
        items.insert(format!("dequant:{s}"));
    };
    if let Some(f32s) = filled["expect"]["f32"].as_array() {
        let bf16s = filled["expect"]["bf16"].as_array().cloned().unwrap_or_default();
        for (f, b) in f32s.iter().zip(&bf16s) {
            let f = u32::from_str_radix(f.as_str().unwrap_or_default(), 16).unwrap_or(0);
            let b = u16::from_str_radix(b.as_str().unwrap_or_default(), 16).unwrap_or(0);
            let (exponent, fraction) = ((f >> 23) & 0xFF, f & 0x7F_FFFF);
            if exponent == 0 && fraction != 0 {
                add("f32-subnormal");
            }
            if exponent == 0xFF {
                add("f32-infinity");
            }
            if exponent != 0xFF && b & 0x7FFF == 0x7F80 {
                add("bf16-infinity-from-finite");
            }
            if f & 0x7FFF_FFFF != 0 && b & 0x7FFF == 0 {
                add(if b == 0x8000 { "bf16-negative-zero" } else { "bf16-zero" });
            }
            if f & 0xFFFF == 0x8000 {
                add("bf16-tie");
            }
        }
        let zp: i64 = filled["in"]["zero_point"]
            .as_str()
            .and_then(|z| z.parse().ok())
            .unwrap_or(0);
        if zp.unsigned_abs() > 1 << 24 && (zp as f32) as i64 != zp {
            add("zero-point-rounds");
        }
        if zp == i64::from(i32::MIN) {
            add("zero-point-int32-min");
        }
        return items;
    }
    let spec = |side: &str| filled[side][0].clone();
    let (input, output) = (spec("inputs"), spec("outputs"));
    let id = filled["id"].as_str().unwrap_or_default();
    if let Some(order) = id.strip_prefix("refuse-order-") {
        add(&format!(
            "order:{}",
            order.split("-reading-").next().unwrap_or_default()
        ));
    }
    let empty = output["shape"].as_array().is_some_and(|s| s.iter().any(|d| d == "0"));
    if let Some(code) = filled["expect"]["refuse"].as_str() {
        add(&format!("refuse:{code}"));
        for detail in refusal_details(filled, code, &input, &output) {
            add(&format!("refuse:{code}:{detail}"));
        }
        if empty {
            add(&format!("empty:refuse:{code}"));
        }
        return items;
    }
    for detail in call_details(filled, &input, &output) {
        add(&detail);
    }
    if empty {
        for (what, holds) in [
            ("strided", output["layout"].get("Strided").is_some()),
            ("bf16", output["dtype"] == "BFloat16"),
        ] {
            if holds {
                add(&format!("empty:{what}"));
            }
        }
    }
    if input["layout"].get("MlaTiled").is_some() {
        add("layout:mla-tiled");
        if input["layout"]["MlaTiled"]["channels"] == "Pad16" {
            add("layout:pad16");
        }
    }
    if input["layout"].get("MlaCBlocked").is_some() {
        add("layout:mla-cblocked");
    }
    if output["dtype"] == "BFloat16" {
        add("output:bfloat16");
    }
    let out = filled["expect"]["outputs"][0].as_str().unwrap_or_default();
    let poison = filled["buffers"]["outputs"][0]["poison"].as_str().unwrap_or_default();
    if out.len() >= 2 && out.as_bytes().chunks(2).any(|b| b == poison.as_bytes()) {
        add("output:untouched-bytes");
    }
    if output["shape"].as_array().is_some_and(|s| s.iter().any(|d| d == "0")) {
        add("empty");
    }
    items
}

/// A spec's shape, strides (when `Strided`) and a buffer's address and capacity, as integers.
fn filled_ints(v: &Value) -> Vec<i128> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|x| x.as_str()?.parse().ok())
        .collect()
}

fn filled_int(v: &Value) -> i128 {
    v.as_str().and_then(|x| x.parse().ok()).unwrap_or(0)
}

/// What a refusal shows beyond its code (issue #27's list): which dtype, which scale, which buffer.
fn refusal_details(filled: &Value, code: &str, input: &Value, output: &Value) -> Vec<String> {
    let buffer = |side: &str| {
        let b = &filled["buffers"][side][0];
        (filled_int(&b["address"]), filled_int(&b["capacity"]))
    };
    let (inb, outb) = (buffer("inputs"), buffer("outputs"));
    let mut out = Vec::new();
    match code {
        "input_dtype" => out.push(input["dtype"].as_str().unwrap_or_default().to_string()),
        "output_dtype" => out.push(output["dtype"].as_str().unwrap_or_default().to_string()),
        "scale" => {
            let bits = u32::from_str_radix(filled["params"]["scale"].as_str().unwrap_or_default(), 16).unwrap_or(0);
            out.push(
                match bits {
                    0xFF80_0000 => "negative-infinity",
                    0x7F80_0000 => "infinity",
                    b if b & 0x7F80_0000 == 0x7F80_0000 && b & 0x0040_0000 == 0 => "signalling-nan",
                    b if b & 0x7F80_0000 == 0x7F80_0000 => "quiet-nan",
                    _ => "finite",
                }
                .into(),
            );
        }
        "alignment" if output["dtype"] == "BFloat16" && outb.0 % 2 == 1 => out.push("bf16-odd".into()),
        "address_overflow" if inb.0 + inb.1 > 1 << 64 => out.push("input".into()),
        "address_overflow" => {
            let strides = filled_ints(&output["layout"]["Strided"]["strides"]);
            if !strides.is_empty() && strides.iter().all(|&s| (0..1 << 63).contains(&s)) {
                out.push("span-strides-a-caller-passes".into());
            }
        }
        "aliasing" if outb.0 < inb.0 => {
            out.push("output-first".into());
            if !touches_an_element(output, outb.0, inb) {
                out.push("input-in-stride-hole".into());
            }
        }
        "overlap" if !elements_overlap(output) => out.push("proof-refuses-disjoint-elements".into()),
        _ => {}
    }
    out
}

/// The byte offsets of each element of a small `Strided` output, with its width; `None` otherwise.
fn element_offsets(output: &Value) -> Option<(Vec<i128>, i128)> {
    let (shape, strides) = (
        filled_ints(&output["shape"]),
        filled_ints(&output["layout"]["Strided"]["strides"]),
    );
    let width = if output["dtype"] == "BFloat16" { 2 } else { 4 };
    if strides.len() != shape.len() || shape.iter().product::<i128>() > 4096 {
        return None;
    }
    let mut offsets = vec![0i128];
    for (&e, &s) in shape.iter().zip(&strides) {
        offsets = offsets.iter().flat_map(|o| (0..e).map(move |i| o + i * s)).collect();
    }
    Some((offsets, width))
}

/// Whether two elements of a `Strided` output share a byte.
fn elements_overlap(output: &Value) -> bool {
    let Some((mut offsets, width)) = element_offsets(output) else {
        return true;
    };
    offsets.sort();
    offsets.windows(2).any(|w| w[1] - w[0] < width)
}

/// Whether the input buffer's bytes `[address, address + capacity)` touch an output element's.
fn touches_an_element(output: &Value, base: i128, (address, capacity): (i128, i128)) -> bool {
    let Some((offsets, width)) = element_offsets(output) else {
        return true;
    };
    offsets
        .iter()
        .any(|o| base + o < address + capacity && address < base + o + width)
}

/// What a successful call shows (issue #27's list): its rank, its layout's shape, its strides.
fn call_details(filled: &Value, input: &Value, output: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let rank = filled_ints(&input["shape"]).len();
    out.push(format!("rank-{rank}"));
    if filled["params"].get("zero_point").is_none() {
        out.push("zero-point-omitted".into());
    }
    for side in ["inputs", "outputs"] {
        let b = &filled["buffers"][side][0];
        if filled_int(&b["address"]) + filled_int(&b["capacity"]) == 1 << 64 {
            out.push("buffer-ends-at-2^64".into());
        }
    }
    let (shape, strides) = (
        filled_ints(&output["shape"]),
        filled_ints(&output["layout"]["Strided"]["strides"]),
    );
    if shape.iter().zip(&strides).any(|(&e, &s)| e == 1 && s == 0) {
        out.push("stride-zero-unit-axis".into());
    }
    if input["layout"].get("MlaCBlocked").is_some() {
        out.push(format!("layout:mla-cblocked-rank-{rank}"));
        let (tile_c, c) = (
            filled_ints(&input["layout"]["MlaCBlocked"]["tile"]),
            filled_ints(&input["shape"]),
        );
        if let (Some(&t), Some(&c)) = (tile_c.last(), c.last())
            && t % 16 != 0
            && c > t
        {
            out.push("layout:mla-cblocked-tile-c-not-16s-several-tiles".into());
        }
    }
    let axes = filled_ints(&input["layout"]["MlaTiled"]["axes"]);
    if axes.len() == 4 {
        let mapped: Vec<i128> = axes.iter().copied().filter(|&a| a >= 0).collect();
        let outer: Vec<i128> = (0..rank as i128).filter(|a| !mapped.contains(a)).collect();
        let (lo, hi) = (
            mapped.iter().min().copied().unwrap_or(0),
            mapped.iter().max().copied().unwrap_or(0),
        );
        if outer.len() >= 2 {
            out.push("layout:mla-tiled-two-outer-axes".into());
        }
        if outer.iter().any(|&a| lo < a && a < hi) {
            out.push("layout:mla-tiled-outer-between-mapped".into());
        }
        if axes[1] >= 0 && axes[2] >= 0 && axes[1] > axes[2] {
            out.push("layout:mla-tiled-h-after-w".into());
        }
        if axes[0] >= 0 && !axes[1..].iter().any(|&a| a > axes[0]) {
            out.push("layout:mla-tiled-d-last".into());
        }
    }
    out
}

/// The items the corpus must cover.
pub fn required() -> Vec<String> {
    let codes = [
        "ports",
        "scale",
        "rank",
        "shape_mismatch",
        "input_dtype",
        "input_layout",
        "axis_mapping",
        "tile_shape",
        "output_dtype",
        "output_layout",
        "stride",
        "overlap",
        "address_overflow",
        "capacity",
        "null_pointer",
        "alignment",
        "aliasing",
    ];
    let mut out: Vec<String> = codes.iter().map(|c| format!("dequant:refuse:{c}")).collect();
    out.extend(
        [
            "f32-subnormal",
            "f32-infinity",
            "bf16-infinity-from-finite",
            "bf16-negative-zero",
            "bf16-zero",
            "bf16-tie",
            "zero-point-rounds",
            "zero-point-int32-min",
            "layout:mla-tiled",
            "layout:pad16",
            "layout:mla-cblocked",
            "output:bfloat16",
            "output:untouched-bytes",
            "empty",
            // Issue #27: what the seed's API allows and no record showed.
            "refuse:overlap:proof-refuses-disjoint-elements",
            "rank-1",
            "rank-6",
            "layout:mla-cblocked-rank-5",
            "layout:mla-cblocked-rank-6",
            "layout:mla-tiled-two-outer-axes",
            "layout:mla-tiled-outer-between-mapped",
            "layout:mla-tiled-h-after-w",
            "layout:mla-tiled-d-last",
            "layout:mla-cblocked-tile-c-not-16s-several-tiles",
            "stride-zero-unit-axis",
            "empty:strided",
            "empty:bf16",
            "empty:refuse:null_pointer",
            "empty:refuse:stride",
            "zero-point-omitted",
            "refuse:alignment:bf16-odd",
            "refuse:address_overflow:input",
            "refuse:address_overflow:span-strides-a-caller-passes",
            "buffer-ends-at-2^64",
            "refuse:aliasing:output-first",
            "refuse:aliasing:input-in-stride-hole",
            "refuse:input_dtype:Int16",
            "refuse:input_dtype:Int32",
            "refuse:input_dtype:Float16",
            "refuse:input_dtype:Float32",
            "refuse:output_dtype:Int32",
            "refuse:output_dtype:UInt8",
            "refuse:scale:negative-infinity",
            "refuse:scale:signalling-nan",
            "order:ports-before-scale",
            "order:shape-before-dtype",
            "order:shape-before-cblocked-rank",
            "order:dtype-before-cblocked-rank",
        ]
        .map(|s| format!("dequant:{s}")),
    );
    out
}
