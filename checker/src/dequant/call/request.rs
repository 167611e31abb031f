//! The two DetessDequant record forms (docs/protocol.md "DetessDequant"), read into typed values.
//!
//! A record that breaks its form is a request error `<field>: <what is wrong>`, never a refusal:
//! a member the form does not have or a missing one, an integer that is not a canonical string,
//! a DType or layout name the project does not define (docs/assumptions.md D2), a value its C++
//! field cannot hold (a shape dimension, tile extent, address or capacity outside `0..2^64`, a zero
//! point outside int32), a `q` outside −128..127, `bytes` longer than their capacity, a `poison`
//! that is not one byte. Values the contract refuses (a scale, a rank, an axis, a stride of any
//! size …) are read as they are and left
//! to [`super::check`]. Nothing here allocates by a capacity.

use crate::canon::{self, J};
use crate::dequant::nat::Nat;
use crate::request::{Bad, array, at, bad, int_str, members, string};
use serde_json::{Map, Value};

/// A non-negative integer below 2^64.
fn uint64(v: &Value, field: &str) -> Result<u64, Bad> {
    match canon::parse_u64(int_str(v, field)?) {
        Some(n) => Ok(n),
        None => bad(field, "not an integer in 0..2^64"),
    }
}

/// Any canonical integer, clamped into i128 (every comparison with a bound that fits i64 is kept).
fn int_clamped(v: &Value, field: &str) -> Result<i128, Bad> {
    let s = int_str(v, field)?;
    Ok(canon::parse_int(s).expect("canonical").clamped())
}

fn int32(v: &Value, field: &str) -> Result<i32, Bad> {
    let n = int_clamped(v, field)?;
    i32::try_from(n).or_else(|_| bad(field, "not an int32 (the zero point's domain is -2^31..2^31-1)"))
}

fn lower_hex(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// A binary32 given as 8 lowercase hexadecimal digits of its bits.
fn bits32(v: &Value, field: &str) -> Result<u32, Bad> {
    let s = string(v, field)?;
    if s.len() != 8 || !lower_hex(s) {
        return bad(field, "not 8 lowercase hexadecimal digits (binary32 bits)");
    }
    Ok(u32::from_str_radix(s, 16).expect("hex digits"))
}

fn hex_bytes(v: &Value, field: &str) -> Result<Vec<u8>, Bad> {
    let s = string(v, field)?;
    if s.len() % 2 != 0 || !lower_hex(s) {
        return bad(field, "not lowercase hexadecimal bytes");
    }
    hex::decode(s).map_err(|e| format!("{field}: {e}"))
}

/// The DTypes of docs/assumptions.md D2, by their C++ enumerators' names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DType {
    Int8,
    UInt8,
    Int16,
    Int32,
    Float16,
    BFloat16,
    Float32,
}

impl DType {
    fn parse(s: &str) -> Option<DType> {
        Some(match s {
            "Int8" => DType::Int8,
            "UInt8" => DType::UInt8,
            "Int16" => DType::Int16,
            "Int32" => DType::Int32,
            "Float16" => DType::Float16,
            "BFloat16" => DType::BFloat16,
            "Float32" => DType::Float32,
            _ => return None,
        })
    }
}

/// `MlaTiled`'s channel storage per pixel (docs/assumptions.md D2, D4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Channels {
    Compact,
    Pad16,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Layout {
    /// `axes`: the logical axes of D, H, W, C (−1 unmapped), clamped into i128; `tile_shape` as
    /// given. Their counts are [`super::check`]'s (`axis_mapping`, `tile_shape`).
    MlaTiled {
        axes: Vec<i128>,
        tile_shape: Vec<u64>,
        channels: Channels,
    },
    /// `tile`: `{tile_h, tile_w, tile_c}` as given.
    MlaCBlocked {
        tile: Vec<u64>,
    },
    Contiguous,
    /// Byte strides, exact whatever their size.
    Strided {
        strides: Vec<Stride>,
    },
}

/// An output stride in bytes: any integer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stride {
    pub negative: bool,
    pub magnitude: Nat,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    pub shape: Vec<u64>,
    pub dtype: DType,
    pub layout: Layout,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InBuf {
    pub address: u64,
    pub capacity: u64,
    /// The first bytes of the buffer; the rest, up to `capacity`, are zero (never materialized).
    pub bytes: Vec<u8>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutBuf {
    pub address: u64,
    pub capacity: u64,
    pub poison: u8,
}

/// A whole call (`calls.jsonl`, `layout.jsonl`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    pub inputs: Vec<Spec>,
    pub outputs: Vec<Spec>,
    pub scale_bits: u32,
    /// `params.zero_point`, 0 when absent.
    pub zero_point: i32,
    pub in_bufs: Vec<InBuf>,
    pub out_bufs: Vec<OutBuf>,
}

/// A numerical-core record (`numeric.jsonl`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Numeric {
    pub q: Vec<i8>,
    pub scale_bits: u32,
    pub zero_point: i32,
}

fn dims(v: &Value, field: &str) -> Result<Vec<u64>, Bad> {
    array(v, field)?
        .iter()
        .enumerate()
        .map(|(i, d)| uint64(d, &format!("{field}[{i}]")))
        .collect()
}

fn layout(v: &Value, field: &str) -> Result<Layout, Bad> {
    let Some(m) = v.as_object() else {
        return bad(field, "not an object");
    };
    if m.len() != 1 {
        return bad(
            field,
            "not one member naming MlaTiled, MlaCBlocked, Contiguous or Strided",
        );
    }
    let (name, body) = m.iter().next().expect("one member");
    let f = at(field, name);
    match name.as_str() {
        "MlaTiled" => {
            let b = members(body, &f, &["axes", "channels", "tile_shape"], &[])?;
            let axes = array(&b["axes"], &at(&f, "axes"))?
                .iter()
                .enumerate()
                .map(|(i, a)| int_clamped(a, &format!("{f}.axes[{i}]")))
                .collect::<Result<Vec<_>, _>>()?;
            let tile_shape = dims(&b["tile_shape"], &at(&f, "tile_shape"))?;
            let channels = match string(&b["channels"], &at(&f, "channels"))? {
                "Compact" => Channels::Compact,
                "Pad16" => Channels::Pad16,
                _ => return bad(&at(&f, "channels"), "not Compact or Pad16"),
            };
            Ok(Layout::MlaTiled {
                axes,
                tile_shape,
                channels,
            })
        }
        "MlaCBlocked" => {
            let b = members(body, &f, &["tile"], &[])?;
            Ok(Layout::MlaCBlocked {
                tile: dims(&b["tile"], &at(&f, "tile"))?,
            })
        }
        "Contiguous" => {
            members(body, &f, &[], &[])?;
            Ok(Layout::Contiguous)
        }
        "Strided" => {
            let b = members(body, &f, &["strides"], &[])?;
            let field = at(&f, "strides");
            let mut strides = Vec::new();
            for (i, s) in array(&b["strides"], &field)?.iter().enumerate() {
                let n = int_str(s, &format!("{field}[{i}]"))?;
                let (negative, digits) = match n.strip_prefix('-') {
                    Some(d) => (true, d),
                    None => (false, n),
                };
                strides.push(Stride {
                    negative,
                    magnitude: Nat::parse_digits(digits).expect("canonical digits"),
                });
            }
            Ok(Layout::Strided { strides })
        }
        _ => bad(&f, "not a layout (MlaTiled, MlaCBlocked, Contiguous or Strided)"),
    }
}

fn spec(v: &Value, field: &str) -> Result<Spec, Bad> {
    let m = members(v, field, &["dtype", "layout", "shape"], &[])?;
    let shape = dims(&m["shape"], &at(field, "shape"))?;
    let dtype = match DType::parse(string(&m["dtype"], &at(field, "dtype"))?) {
        Some(d) => d,
        None => {
            return bad(
                &at(field, "dtype"),
                "not a DType (Int8, UInt8, Int16, Int32, Float16, BFloat16, Float32)",
            );
        }
    };
    let layout = layout(&m["layout"], &at(field, "layout"))?;
    Ok(Spec { shape, dtype, layout })
}

fn specs(v: &Value, field: &str) -> Result<Vec<Spec>, Bad> {
    array(v, field)?
        .iter()
        .enumerate()
        .map(|(i, s)| spec(s, &format!("{field}[{i}]")))
        .collect()
}

/// The record's `id`: a printable ASCII string.
pub fn id(m: &Map<String, Value>) -> Result<String, Bad> {
    match m["id"].as_str() {
        Some(s) if canon::printable(s) => Ok(s.to_string()),
        Some(_) => bad("id", "not printable ASCII"),
        None => bad("id", "not a string"),
    }
}

/// Reads a whole-call record (a line with `"buffers"`).
pub fn call(v: &Value) -> Result<Call, Bad> {
    let m = members(v, "", &["buffers", "id", "inputs", "outputs", "params"], &["expect"])?;
    id(m)?;
    let inputs = specs(&m["inputs"], "inputs")?;
    let outputs = specs(&m["outputs"], "outputs")?;
    let p = members(&m["params"], "params", &["scale"], &["zero_point"])?;
    let scale_bits = bits32(&p["scale"], "params.scale")?;
    let zero_point = match p.get("zero_point") {
        Some(z) => int32(z, "params.zero_point")?,
        None => 0,
    };
    let b = members(&m["buffers"], "buffers", &["inputs", "outputs"], &[])?;
    let mut in_bufs = Vec::new();
    for (i, x) in array(&b["inputs"], "buffers.inputs")?.iter().enumerate() {
        let f = format!("buffers.inputs[{i}]");
        let bm = members(x, &f, &["address", "bytes", "capacity"], &[])?;
        let address = uint64(&bm["address"], &at(&f, "address"))?;
        let capacity = uint64(&bm["capacity"], &at(&f, "capacity"))?;
        let bytes = hex_bytes(&bm["bytes"], &at(&f, "bytes"))?;
        if bytes.len() as u128 > u128::from(capacity) || bytes.len() > 1 << 20 {
            return bad(
                &at(&f, "bytes"),
                &format!("{} bytes, more than the capacity {capacity} or than 2^20", bytes.len()),
            );
        }
        in_bufs.push(InBuf {
            address,
            capacity,
            bytes,
        });
    }
    let mut out_bufs = Vec::new();
    for (i, x) in array(&b["outputs"], "buffers.outputs")?.iter().enumerate() {
        let f = format!("buffers.outputs[{i}]");
        let bm = members(x, &f, &["address", "capacity", "poison"], &[])?;
        let address = uint64(&bm["address"], &at(&f, "address"))?;
        let capacity = uint64(&bm["capacity"], &at(&f, "capacity"))?;
        let poison = hex_bytes(&bm["poison"], &at(&f, "poison"))?;
        let [poison] = poison[..] else {
            return bad(&at(&f, "poison"), "not one byte (two lowercase hexadecimal digits)");
        };
        out_bufs.push(OutBuf {
            address,
            capacity,
            poison,
        });
    }
    Ok(Call {
        inputs,
        outputs,
        scale_bits,
        zero_point,
        in_bufs,
        out_bufs,
    })
}

/// Reads a numerical-core record (a line whose `"in"` holds `"q"`).
pub fn numeric(v: &Value) -> Result<Numeric, Bad> {
    let m = members(v, "", &["id", "in"], &["expect"])?;
    id(m)?;
    let i = members(&m["in"], "in", &["q", "scale", "zero_point"], &[])?;
    let mut q = Vec::new();
    for (k, x) in array(&i["q"], "in.q")?.iter().enumerate() {
        let f = format!("in.q[{k}]");
        match i8::try_from(int_clamped(x, &f)?) {
            Ok(n) => q.push(n),
            Err(_) => return bad(&f, "not an INT8 value (-128..127)"),
        }
    }
    let scale_bits = bits32(&i["scale"], "in.scale")?;
    let zero_point = int32(&i["zero_point"], "in.zero_point")?;
    Ok(Numeric {
        q,
        scale_bits,
        zero_point,
    })
}

/// The request's members other than `expect`, as the canonical writer's value: the echo of a
/// filled line. Called only on a record its reader accepted, whose leaves are all strings.
pub fn echo(v: &Value) -> Result<Vec<(String, J)>, Bad> {
    fn conv(v: &Value, field: &str) -> Result<J, Bad> {
        match v {
            Value::String(s) => Ok(J::Str(s.clone())),
            Value::Array(a) => a
                .iter()
                .enumerate()
                .map(|(i, x)| conv(x, &format!("{field}[{i}]")))
                .collect::<Result<_, _>>()
                .map(J::Arr),
            Value::Object(m) => m
                .iter()
                .map(|(k, x)| Ok((k.clone(), conv(x, &at(field, k))?)))
                .collect::<Result<_, Bad>>()
                .map(J::Obj),
            _ => bad(field, "not a string, array or object"),
        }
    }
    let Some(m) = v.as_object() else {
        return bad("line", "not an object");
    };
    m.iter()
        .filter(|(k, _)| k.as_str() != "expect")
        .map(|(k, x)| Ok((k.clone(), conv(x, k)?)))
        .collect()
}
