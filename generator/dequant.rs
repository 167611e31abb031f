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
    if let Some(code) = filled["expect"]["refuse"].as_str() {
        add(&format!("refuse:{code}"));
        return items;
    }
    let spec = |side: &str| filled[side][0].clone();
    let (input, output) = (spec("inputs"), spec("outputs"));
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
        ]
        .map(|s| format!("dequant:{s}")),
    );
    out
}
