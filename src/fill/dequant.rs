//! Filling the DetessDequant records (docs/protocol.md, DetessDequant): numeric records (their
//! `in` holds `q`) and whole calls (they hold `buffers`).

use crate::dequant::call::{self, Buffer, Call, DType, Layout, Spec};
use crate::dequant::layout::Channels;
use crate::dequant::numeric::{bf16, dequantize, scale_admitted};
use crate::json::*;
use num_bigint::BigInt;
use serde_json::{Map, Value, json};

/// The largest output buffer a successful call is filled into, and the longest input `bytes`.
const MAX_BUFFER: u64 = 1 << 20;

fn hex_u32(v: &Value, path: &str) -> Result<u32, Fail> {
    let s = string(v, path)?;
    if s.len() != 8 || !s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return Err(format!("{path}: not 8 lowercase hex digits"));
    }
    u32::from_str_radix(s, 16).map_err(|e| format!("{path}: {e}"))
}

fn fits<T: TryFrom<BigInt>>(v: &Value, path: &str, what: &str) -> Result<T, Fail> {
    T::try_from(integer(v, path)?).map_err(|_| format!("{path}: not {what}"))
}

/// Fills a numeric record.
pub fn fill_numeric(v: &Value) -> Result<Value, Fail> {
    let o = object(v, "")?;
    only(o, &["expect", "id", "in"], "")?;
    let id = string(member(o, "id", "")?, "id")?;
    let i = object(member(o, "in", "")?, "in")?;
    only(i, &["q", "scale", "zero_point"], "in")?;
    let scale = hex_u32(member(i, "scale", "in")?, "in.scale")?;
    if !scale_admitted(scale) {
        return Err("in.scale: a scale the contract refuses; a call record shows its refusal".into());
    }
    let zero_point: i32 = fits(member(i, "zero_point", "in")?, "in.zero_point", "an int32")?;
    let qs = array(member(i, "q", "in")?, "in.q")?
        .iter()
        .enumerate()
        .map(|(k, q)| fits::<i8>(q, &format!("in.q[{k}]"), "in -128..127"))
        .collect::<Result<Vec<i8>, Fail>>()?;
    let f32s: Vec<u32> = qs.iter().map(|&q| dequantize(q, scale, zero_point)).collect();
    Ok(json!({
        "expect": {
            "bf16": f32s.iter().map(|&b| format!("{:04x}", bf16(b))).collect::<Vec<_>>(),
            "f32": f32s.iter().map(|b| format!("{b:08x}")).collect::<Vec<_>>(),
        },
        "id": id,
        "in": i,
    }))
}

fn dtype(v: &Value, path: &str) -> Result<DType, Fail> {
    Ok(match string(v, path)? {
        "Int8" => DType::Int8,
        "UInt8" => DType::UInt8,
        "Int16" => DType::Int16,
        "Int32" => DType::Int32,
        "Float16" => DType::Float16,
        "BFloat16" => DType::BFloat16,
        "Float32" => DType::Float32,
        other => return Err(format!("{path}: {other:?} is not a DType")),
    })
}

fn counts(v: &Value, path: &str) -> Result<Vec<u64>, Fail> {
    array(v, path)?
        .iter()
        .enumerate()
        .map(|(k, x)| fits::<u64>(x, &format!("{path}[{k}]"), "a count in 0..2^64"))
        .collect()
}

fn layout(v: &Value, path: &str) -> Result<Layout, Fail> {
    let o = object(v, path)?;
    let (kind, body) = o
        .iter()
        .next()
        .filter(|_| o.len() == 1)
        .ok_or(format!("{path}: not one layout"))?;
    let p = join(path, kind);
    let b = object(body, &p)?;
    Ok(match kind.as_str() {
        "MlaTiled" => {
            only(b, &["axes", "channels", "tile_shape"], &p)?;
            Layout::MlaTiled {
                axes: array(member(b, "axes", &p)?, &join(&p, "axes"))?
                    .iter()
                    .enumerate()
                    .map(|(k, a)| {
                        // Any integer: one outside i64 is no axis either (`axis_mapping`).
                        integer(a, &format!("{p}.axes[{k}]")).map(|a| i64::try_from(a).unwrap_or(i64::MIN))
                    })
                    .collect::<Result<_, _>>()?,
                tile_shape: counts(member(b, "tile_shape", &p)?, &join(&p, "tile_shape"))?,
                channels: match string(member(b, "channels", &p)?, &join(&p, "channels"))? {
                    "Compact" => Channels::Compact,
                    "Pad16" => Channels::Pad16,
                    other => return Err(format!("{p}.channels: {other:?} is neither Compact nor Pad16")),
                },
            }
        }
        "MlaCBlocked" => {
            only(b, &["tile"], &p)?;
            Layout::MlaCBlocked {
                tile: counts(member(b, "tile", &p)?, &join(&p, "tile"))?,
            }
        }
        "Contiguous" => {
            only(b, &[], &p)?;
            Layout::Contiguous
        }
        "Strided" => {
            only(b, &["strides"], &p)?;
            Layout::Strided {
                strides: integers(member(b, "strides", &p)?, &join(&p, "strides"))?,
            }
        }
        other => return Err(format!("{path}: {other:?} is not a layout")),
    })
}

fn spec(v: &Value, path: &str) -> Result<Spec, Fail> {
    let o = object(v, path)?;
    only(o, &["dtype", "layout", "shape"], path)?;
    Ok(Spec {
        shape: counts(member(o, "shape", path)?, &join(path, "shape"))?,
        dtype: dtype(member(o, "dtype", path)?, &join(path, "dtype"))?,
        layout: layout(member(o, "layout", path)?, &join(path, "layout"))?,
    })
}

fn list<T>(
    o: &Map<String, Value>,
    key: &str,
    path: &str,
    f: impl Fn(&Value, &str) -> Result<T, Fail>,
) -> Result<Vec<T>, Fail> {
    let p = join(path, key);
    array(member(o, key, path)?, &p)?
        .iter()
        .enumerate()
        .map(|(k, x)| f(x, &format!("{p}[{k}]")))
        .collect()
}

fn buffer(b: &Map<String, Value>, path: &str) -> Result<Buffer, Fail> {
    Ok(Buffer {
        address: fits(
            member(b, "address", path)?,
            &join(path, "address"),
            "an address in 0..2^64",
        )?,
        capacity: fits(
            member(b, "capacity", path)?,
            &join(path, "capacity"),
            "a capacity in 0..2^64",
        )?,
    })
}

/// A call record's request: the call, and its buffers' contents.
pub struct Request {
    pub call: Call,
    /// The input buffers' given bytes.
    pub bytes: Vec<Vec<u8>>,
    /// The output buffers' poison bytes.
    pub poison: Vec<u8>,
}

/// Reads a call record's request members.
pub fn parse_request(v: &Value) -> Result<Request, Fail> {
    let o = object(v, "")?;
    only(o, &["buffers", "expect", "id", "inputs", "outputs", "params"], "")?;
    string(member(o, "id", "")?, "id")?;
    let params = object(member(o, "params", "")?, "params")?;
    only(params, &["scale", "zero_point"], "params")?;
    let buffers = object(member(o, "buffers", "")?, "buffers")?;
    only(buffers, &["inputs", "outputs"], "buffers")?;
    let inputs = list(buffers, "inputs", "buffers", |x, p| {
        let b = object(x, p)?;
        only(b, &["address", "bytes", "capacity"], p)?;
        let bytes = hex_bytes(member(b, "bytes", p)?, &join(p, "bytes"))?;
        let buf = buffer(b, p)?;
        if bytes.len() as u64 > buf.capacity.min(MAX_BUFFER) {
            return Err(format!("{p}.bytes: longer than the capacity (or than 2^20)"));
        }
        Ok((buf, bytes))
    })?;
    let outputs = list(buffers, "outputs", "buffers", |x, p| {
        let b = object(x, p)?;
        only(b, &["address", "capacity", "poison"], p)?;
        let poison = hex_bytes(member(b, "poison", p)?, &join(p, "poison"))?;
        let [poison] = poison[..] else {
            return Err(format!("{p}.poison: not one byte"));
        };
        Ok((buffer(b, p)?, poison))
    })?;
    Ok(Request {
        call: Call {
            inputs: list(o, "inputs", "", spec)?,
            outputs: list(o, "outputs", "", spec)?,
            scale: hex_u32(member(params, "scale", "params")?, "params.scale")?,
            zero_point: match params.get("zero_point") {
                Some(z) => fits(z, "params.zero_point", "an int32")?,
                None => 0,
            },
            input_buffers: inputs.iter().map(|b| b.0).collect(),
            output_buffers: outputs.iter().map(|b| b.0).collect(),
        },
        bytes: inputs.into_iter().map(|b| b.1).collect(),
        poison: outputs.into_iter().map(|b| b.1).collect(),
    })
}

/// The call of a call record (for the generator's `$required` and `$span`).
pub fn parse_call(v: &Value) -> Result<Call, Fail> {
    parse_request(v).map(|r| r.call)
}

/// Fills a call record.
pub fn fill_call(v: &Value) -> Result<Value, Fail> {
    let Request { call, bytes, poison } = parse_request(v)?;
    let checked = call::check_inference(&call).and_then(|plan| call::check_buffers(&call, &plan).map(|()| plan));
    let expect = match checked {
        Err(code) => json!({ "refuse": code.as_str() }),
        Ok(plan) => {
            let out = call.output_buffers[0];
            if out.capacity > MAX_BUFFER {
                return Err("buffers.outputs[0].capacity: above 2^20 for a call that runs".into());
            }
            // The input buffer: the given bytes, then zeros up to what the layout reads.
            let mut input = bytes[0].clone();
            let needed = usize::try_from(plan.input_bytes()).expect("within the checked capacity");
            input.resize(input.len().max(needed), 0);
            let mut output = vec![poison[0]; out.capacity as usize];
            call::execute(&call, &plan, &input, &mut output);
            json!({ "outputs": [hex::encode(output)] })
        }
    };
    let mut filled = object(v, "")?.clone();
    filled.insert("expect".into(), expect);
    Ok(Value::Object(filled))
}
