//! §13.1 `int_synth/1`: the `int_synth` model specification, one file `int_synth.json`, lowered to
//! the graph `synth`. Every refusal is `payload_malformed`.

use super::{Lowered, canonical};
use crate::json::*;
use crate::num::Round;
use crate::refusal::{Code, Refusal};
use crate::whg1::build::{Builder, Geometry};
use crate::whg1::{ConvTranspose, Op, PerChannel, Placement, Policy, Rq};
use serde_json::Value;

fn malformed(why: impl Into<String>) -> Refusal {
    Refusal::new(Code::PayloadMalformed, why)
}

/// One layer as the file gives it.
struct Layer {
    in_ch: u64,
    out_ch: u64,
    k: u64,
    stride: u64,
    pad: u64,
    out_pad: u64,
    weight: Vec<i64>,
    bias: Vec<i64>,
    shift: u64,
    relu: bool,
}

/// A field below 2^32, the width of its WHG1 field (§10.4).
fn field(o: &serde_json::Map<String, Value>, key: &str, default: Option<u64>, path: &str) -> Result<u64, Refusal> {
    let v = match default {
        Some(d) => u64_number_or(o, key, d, path),
        None => member(o, key, path).and_then(|v| u64_number(v, &format!("{path}.{key}"))),
    }
    .map_err(malformed)?;
    if v >= 1 << 32 {
        return Err(malformed(format!("{path}.{key}: {v} does not fit its 32-bit field")));
    }
    Ok(v)
}

fn layer(v: &Value, path: &str) -> Result<Layer, Refusal> {
    let o = object(v, path).map_err(malformed)?;
    let (in_ch, out_ch) = (field(o, "in_ch", None, path)?, field(o, "out_ch", None, path)?);
    let (k, stride, pad) = (
        field(o, "k", None, path)?,
        field(o, "stride", None, path)?,
        field(o, "pad", None, path)?,
    );
    let out_pad = field(o, "out_pad", Some(0), path)?;
    let shift = u64_number_or(o, "shift", 0, path).map_err(malformed)?;
    let relu = match o.get("relu") {
        None => false,
        Some(b) => b
            .as_bool()
            .ok_or_else(|| malformed(format!("{path}.relu: not true or false")))?,
    };
    if out_ch < 1 || k < 1 || stride < 1 || shift > 127 {
        return Err(malformed(format!(
            "{path}: out_ch, k and stride must be at least 1 and shift at most 127"
        )));
    }
    // The parameter lengths are exact; weights and biases are 32-bit integers.
    let count = |n: u128| -> Result<u64, Refusal> {
        u64::try_from(n)
            .ok()
            .filter(|&n| n < 1 << 32)
            .ok_or_else(|| malformed(format!("{path}: too many parameters")))
    };
    count(u128::from(in_ch) * u128::from(out_ch) * u128::from(k) * u128::from(k))?;
    let weight = number_tensor(
        member(o, "weight", path).map_err(malformed)?,
        &[in_ch, out_ch, k, k],
        &format!("{path}.weight"),
    )
    .map_err(malformed)?;
    let bias = number_tensor(
        member(o, "bias", path).map_err(malformed)?,
        &[out_ch],
        &format!("{path}.bias"),
    )
    .map_err(malformed)?;
    if weight.iter().chain(&bias).any(|v| i32::try_from(*v).is_err()) {
        return Err(malformed(format!("{path}: a weight or bias is not a 32-bit integer")));
    }
    Ok(Layer {
        in_ch,
        out_ch,
        k,
        stride,
        pad,
        out_pad,
        weight,
        bias,
        shift,
        relu,
    })
}

/// Reads `int_synth.json` and lowers it (§13.1): the latents `[C, S, S]`, `check [−128, 127]`;
/// per layer a `conv_transpose` (`floor`, a `pre` bias, no multiplier, one shift) and a `relu` if
/// set; then `clamp(0, 255)`. `C` is the first layer's `in_ch`.
pub fn lower(file: &[u8]) -> Result<Lowered, Refusal> {
    let v: Value = serde_json::from_slice(file).map_err(|e| malformed(format!("int_synth.json: {e}")))?;
    let o = object(&v, "int_synth.json").map_err(malformed)?;
    let layers = array(
        member(o, "layers", "int_synth.json").map_err(malformed)?,
        "int_synth.json.layers",
    )
    .map_err(malformed)?;
    let layers: Vec<Layer> = layers
        .iter()
        .enumerate()
        .map(|(i, l)| layer(l, &format!("layers[{i}]")))
        .collect::<Result<_, _>>()?;
    let first = layers.first().ok_or_else(|| malformed("there is no layer"))?;
    for (i, pair) in layers.windows(2).enumerate() {
        if pair[1].in_ch != pair[0].out_ch {
            return Err(malformed(format!("layers[{}].in_ch is not layers[{i}].out_ch", i + 1)));
        }
    }
    let mut b = Builder::new();
    let mut x = b.input(first.in_ch as u32, Policy::Check { lo: -128, hi: 127 });
    for l in &layers {
        // §10.4's widths for int_synth.json: w_bytes 4, b_bytes 4 (§13.0).
        let rq = Rq::new(Round::Floor, PerChannel::One(l.shift as u8)).bias(Placement::Pre, l.bias.clone());
        let rq = Rq {
            bias: rq.bias.map(|bias| crate::whg1::Bias { bytes: 4, ..bias }),
            ..rq
        };
        let geometry = Geometry {
            k: (l.k as u32, l.k as u32),
            s: (l.stride as u32, l.stride as u32),
            p: (l.pad as u32, l.pad as u32),
        };
        let mut op = ConvTranspose::new(
            l.out_ch as u32,
            geometry,
            (l.out_pad as u32, l.out_pad as u32),
            l.weight.clone(),
            rq,
        );
        op.w_bytes = 4;
        x = b.op(Op::ConvTranspose(op), &[x], l.out_ch as u32);
        if l.relu {
            x = b.op(Op::Relu, &[x], l.out_ch as u32);
        }
    }
    let y = b.op(
        Op::Clamp { lo: 0, hi: 255 },
        &[x],
        layers.last().map_or(0, |l| l.out_ch) as u32,
    );
    b.output(y);
    canonical(vec![("synth".into(), b.build())]).map_err(|r| Refusal::new(Code::PayloadMalformed, r.why))
}
