//! §13.2 `whm1/1`, §13.3 `wam1/1`, §13.4 `wmb1/1` and §13.5 `world/1` — PROVISIONAL.
//!
//! The lowering rules, the range predicates `P_ℓ`, the RGB8 and PCM steps and the driver
//! contract are the seeds'. The WHM1/WAM1/WMB1 byte layouts (integer-payloads §9, §14) are not,
//! so a network is read from a documented JSON rendering (docs/protocol.md, "Lowerings"):
//! `{ "afrac", "gf", "shift", "layers": [ { "tag", … } ] }`. Once the byte layout is known, only
//! a reader is missing. Every refusal is `model_mismatch`.

use super::{Lowered, canonical};
use crate::json::*;
use crate::num::{Round, floor_div, isqrt, pow2};
use crate::refusal::{Code, Refusal};
use crate::whg1::build::{Builder, Geometry};
use crate::whg1::*;
use num_bigint::BigInt;
use num_traits::{Signed, ToPrimitive};
use serde_json::{Map, Value};

fn mismatch(why: impl Into<String>) -> Refusal {
    Refusal::new(Code::ModelMismatch, why)
}

/// Which form a network comes from: `WAM1`'s tensors are `[C, 1, T]` (§13.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    Whm1,
    Wam1,
}

/// A layer, by tag (§13.2's table).
#[derive(Clone, Debug)]
pub enum Layer {
    /// 0: `conv_transpose`; 1: `conv`. Weights as the form stores them.
    Conv {
        transpose: bool,
        c: u32,
        out: u32,
        k: u32,
        stride: u32,
        pad: u32,
        opad: u32,
        weights: Vec<i64>,
        mult: Vec<i64>,
        bias: Vec<i64>,
    },
    /// 2: `igdn`.
    Igdn { c: u32, gamma: Vec<i64>, beta: Vec<i64> },
    /// 3: `relu`.
    Relu,
    /// 4: `leaky`.
    Leaky { slope_q: i64, slope_frac: u32 },
}

/// A network: its header and layers.
#[derive(Clone, Debug)]
pub struct Network {
    pub afrac: u32,
    pub gf: u32,
    pub shift: u32,
    pub layers: Vec<Layer>,
}

fn u32_of(o: &Map<String, Value>, key: &str, path: &str) -> Result<u32, Refusal> {
    let v = member(o, key, path)
        .and_then(|v| u64_number(v, &format!("{path}.{key}")))
        .map_err(mismatch)?;
    u32::try_from(v).map_err(|_| mismatch(format!("{path}.{key}: does not fit 32 bits")))
}

/// Reads a network's rendering, checking its layers' lengths against the running channel count
/// and each field's width.
pub fn network(v: &Value, form: Form, path: &str) -> Result<Network, Refusal> {
    let o = object(v, path).map_err(mismatch)?;
    let (afrac, gf, shift) = (
        u32_of(o, "afrac", path)?,
        u32_of(o, "gf", path)?,
        u32_of(o, "shift", path)?,
    );
    let mut running: Option<u32> = None;
    let mut layers = Vec::new();
    for (i, l) in array(member(o, "layers", path).map_err(mismatch)?, &format!("{path}.layers"))
        .map_err(mismatch)?
        .iter()
        .enumerate()
    {
        let p = format!("{path}.layers[{i}]");
        let lo = object(l, &p).map_err(mismatch)?;
        let tag = u32_of(lo, "tag", &p)?;
        let mut channels = |c: u32| -> Result<(), Refusal> {
            match running {
                Some(r) if r != c => Err(mismatch(format!(
                    "{p}: c = {c} but the layer before gives {r} channels"
                ))),
                _ => {
                    running = Some(c);
                    Ok(())
                }
            }
        };
        let layer = match tag {
            0 | 1 => {
                if tag == 1 && form == Form::Wam1 {
                    return Err(mismatch(format!("{p}: WAM1 has no tag 1 (docs/assumptions.md)")));
                }
                let (c, out, k) = (u32_of(lo, "c", &p)?, u32_of(lo, "out", &p)?, u32_of(lo, "k", &p)?);
                let (stride, pad) = (u32_of(lo, "stride", &p)?, u32_of(lo, "pad", &p)?);
                let opad = if tag == 0 { u32_of(lo, "opad", &p)? } else { 0 };
                channels(c)?;
                let (c64, out64, k64) = (u64::from(c), u64::from(out), u64::from(k));
                let dims: Vec<u64> = match (tag, form) {
                    (0, Form::Wam1) => vec![c64, out64, k64],
                    (0, _) => vec![c64, out64, k64, k64],
                    _ => vec![out64, c64, k64, k64],
                };
                let weights = number_tensor(
                    member(lo, "weights", &p).map_err(mismatch)?,
                    &dims,
                    &format!("{p}.weights"),
                )
                .map_err(mismatch)?;
                if weights.iter().any(|w| i16::try_from(*w).is_err()) {
                    return Err(mismatch(format!("{p}.weights: a weight is not an i16")));
                }
                let mult = number_tensor(
                    member(lo, "mult", &p).map_err(mismatch)?,
                    &[out64],
                    &format!("{p}.mult"),
                )
                .map_err(mismatch)?;
                let bias = number_tensor(
                    member(lo, "bias", &p).map_err(mismatch)?,
                    &[out64],
                    &format!("{p}.bias"),
                )
                .map_err(mismatch)?;
                running = Some(out);
                Layer::Conv {
                    transpose: tag == 0,
                    c,
                    out,
                    k,
                    stride,
                    pad,
                    opad,
                    weights,
                    mult,
                    bias,
                }
            }
            2 => {
                let c = u32_of(lo, "c", &p)?;
                channels(c)?;
                let gamma = number_tensor(
                    member(lo, "gamma", &p).map_err(mismatch)?,
                    &[c.into(), c.into()],
                    &format!("{p}.gamma"),
                )
                .map_err(mismatch)?;
                if gamma.iter().any(|g| i32::try_from(*g).is_err()) {
                    return Err(mismatch(format!("{p}.gamma: a γ is not an i32")));
                }
                let beta = number_tensor(
                    member(lo, "beta", &p).map_err(mismatch)?,
                    &[c.into()],
                    &format!("{p}.beta"),
                )
                .map_err(mismatch)?;
                Layer::Igdn { c, gamma, beta }
            }
            3 => Layer::Relu,
            4 => Layer::Leaky {
                slope_q: member(lo, "slope_q", &p)
                    .and_then(|v| i64_number(v, &format!("{p}.slope_q")))
                    .map_err(mismatch)?,
                slope_frac: u32_of(lo, "slope_frac", &p)?,
            },
            t => return Err(mismatch(format!("{p}: tag {t} is not 0 to 4"))),
        };
        layers.push(layer);
    }
    // §13.2 *Load checks* (integer-payloads §7, *Planning the networks*).
    if shift >= 128 || gf >= 128 {
        return Err(mismatch(format!("{path}: shift {shift} and gf {gf} must be below 128")));
    }
    if !(1..=30).contains(&afrac) {
        return Err(mismatch(format!("{path}: afrac {afrac} is outside 1..=30")));
    }
    if layers
        .iter()
        .any(|l| matches!(l, Layer::Leaky { slope_frac, .. } if *slope_frac >= 64))
    {
        return Err(mismatch(format!("{path}: a slope_frac is 64 or more")));
    }
    Ok(Network {
        afrac,
        gf,
        shift,
        layers,
    })
}

/// `I64 = 2^63 − 1`.
fn i64_max() -> BigInt {
    pow2(63) - 1u32
}

/// `I128 = 2^127 − 1`.
fn i128_max() -> BigInt {
    pow2(127) - 1u32
}

fn magnitude(values: &[i64]) -> BigInt {
    values.iter().map(|v| BigInt::from(*v).abs()).max().unwrap_or_default()
}

/// `P_ℓ(X)` of §13.2's table, evaluated exactly. `None` for a layer that has no predicate (tag 3).
pub fn predicate(net: &Network, layer: &Layer, form: Form, x: &BigInt) -> Option<bool> {
    let i64m = i64_max();
    match layer {
        Layer::Conv {
            transpose,
            c,
            k,
            weights,
            mult,
            bias,
            ..
        } => {
            // The term count: c·k·k, or c·k for a WAM1 tag 0 (§13.3).
            let taps = if *transpose && form == Form::Wam1 {
                BigInt::from(*c) * k
            } else {
                BigInt::from(*c) * k * k
            };
            let wm = magnitude(weights);
            let first = &taps * &wm * x;
            let second = floor_div(&(&first * magnitude(mult)), &pow2(net.shift)) + 1u32 + magnitude(bias);
            Some(first <= i64m && second <= i64m)
        }
        Layer::Igdn { c, gamma, beta } => {
            let gx2 = magnitude(gamma) * x * x;
            let n = magnitude(beta) + BigInt::from(*c) * (floor_div(&gx2, &pow2(net.gf)) + 1u32);
            let root = isqrt(&n.clone().max(BigInt::ZERO));
            let last = floor_div(&(x * &root), &pow2(net.afrac)) + 1u32;
            Some(gx2 <= i128_max() && n <= i128_max() && root <= i64m && last <= i64m)
        }
        Layer::Leaky { slope_q, .. } => Some(x * BigInt::from(*slope_q).abs() <= i64m),
        Layer::Relu => None,
    }
}

/// `X_ℓ`: the largest `X ∈ [0, 2^63]` for which `P_ℓ(X)` holds, by binary search; `None` when
/// `P_ℓ(0)` fails (the set is refused).
pub fn bound(net: &Network, layer: &Layer, form: Form) -> Option<BigInt> {
    let holds = |x: &BigInt| predicate(net, layer, form, x).unwrap_or(true);
    if !holds(&BigInt::ZERO) {
        return None;
    }
    let (mut lo, mut hi) = (BigInt::ZERO, pow2(63));
    while lo < hi {
        let mid: BigInt = (&lo + &hi + 1u32) / 2u32;
        if holds(&mid) {
            lo = mid;
        } else {
            hi = mid - 1u32;
        }
    }
    Some(lo)
}

/// The output step after a network's last layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    None,
    /// `clamp(0, 2^afrac)`, then `rescale` by 255 with shift `afrac`, `half_up` (§13.0).
    Rgb8,
    /// `crop` to `t_out` (scalar 0) with its check, `rescale` by 32767, `clamp(−32768, 32767)` (§13.3).
    Pcm,
}

/// The tensor a layer's range check goes on, and the graph built so far.
struct Lowering {
    b: Builder,
    x: u32,
    channels: u32,
}

/// Adds a network's layers to `low`, reading tensor `low.x`: each `x_ℓ` read by a layer of tag
/// 0, 1, 2 or 4 gets `check [−X_ℓ, min(X_ℓ, I64)]` (a graph input no such layer reads keeps
/// `check [−2^63, I64]`, since a graph input is never derived, §10.3).
fn layers(low: &mut Lowering, net: &Network, form: Form) -> Result<(), Refusal> {
    for (i, layer) in net.layers.iter().enumerate() {
        if predicate(net, layer, form, &BigInt::ZERO).is_some() {
            let x = bound(net, layer, form).ok_or_else(|| mismatch(format!("layer {i}: P_ℓ(0) fails")))?;
            let lo = (-&x).to_i64().unwrap_or(i64::MIN);
            let hi = x.min(i64_max()).to_i64().unwrap_or(i64::MAX);
            low.b.policy(low.x, Policy::Check { lo, hi });
        }
        let (op, channels) = lower_layer(net, layer, form, low.channels);
        low.x = low.b.op(op, &[low.x], channels);
        low.channels = channels;
    }
    Ok(())
}

fn lower_layer(net: &Network, layer: &Layer, form: Form, channels: u32) -> (Op, u32) {
    // §13.0's widths for WHM1 and WAM1: w_bytes 2, m_bytes 8, b_bytes 8, g_bytes 4.
    let rq = |mult: &[i64], bias: &[i64]| Rq {
        round: Round::Floor,
        mult: Some(Mult {
            bytes: 8,
            values: PerChannel::Each(mult.to_vec()),
        }),
        shift: PerChannel::One(net.shift as u8),
        bias: Some(Bias {
            placement: Placement::Post,
            bytes: 8,
            values: bias.to_vec(),
        }),
    };
    match layer {
        Layer::Conv {
            transpose: true,
            out,
            k,
            stride,
            pad,
            opad,
            weights,
            mult,
            bias,
            ..
        } => {
            let (geom, op) = match form {
                Form::Whm1 => (
                    Geometry {
                        k: (*k, *k),
                        s: (*stride, *stride),
                        p: (*pad, *pad),
                    },
                    (*opad, *opad),
                ),
                Form::Wam1 => (
                    Geometry {
                        k: (1, *k),
                        s: (1, *stride),
                        p: (0, *pad),
                    },
                    (0, *opad),
                ),
            };
            let mut c = ConvTranspose::new(*out, geom, op, weights.clone(), rq(mult, bias));
            c.w_bytes = 2;
            (Op::ConvTranspose(c), *out)
        }
        Layer::Conv {
            out,
            k,
            stride,
            pad,
            weights,
            mult,
            bias,
            ..
        } => {
            let geom = Geometry {
                k: (*k, *k),
                s: (*stride, *stride),
                p: (*pad, *pad),
            };
            let mut c = Conv::new(*out, geom, 1, weights.clone(), rq(mult, bias));
            c.w_bytes = 2;
            (Op::Conv(c), *out)
        }
        Layer::Igdn { gamma, beta, .. } => {
            let mut g = Igdn::new(net.gf, net.afrac, gamma.clone(), beta.clone());
            g.g_bytes = 4;
            (Op::Igdn(g), channels)
        }
        Layer::Relu => (Op::Relu, channels),
        Layer::Leaky { slope_q, slope_frac } => (
            Op::Leaky {
                a: *slope_q,
                f: *slope_frac,
            },
            channels,
        ),
    }
}

/// `x_0`'s channel count: the input channels the first layer of tag 0, 1 or 2 declares.
fn input_channels(net: &Network) -> Result<u32, Refusal> {
    net.layers
        .iter()
        .find_map(|l| match l {
            Layer::Conv { c, .. } | Layer::Igdn { c, .. } => Some(*c),
            _ => None,
        })
        .ok_or_else(|| mismatch("no layer of tag 0, 1 or 2 declares the input's channels"))
}

fn output_step(low: &mut Lowering, afrac: u32, step: Step) {
    let c = low.channels;
    let rescale = |mult: i64| {
        let rq = Rq::new(Round::HalfUp, PerChannel::One(afrac as u8)).mult(PerChannel::One(mult));
        Op::Rescale(Rq {
            mult: rq.mult.map(|m| Mult { bytes: 4, ..m }),
            ..rq
        })
    };
    match step {
        Step::None => {}
        Step::Rgb8 => {
            low.x = low.b.op(Op::Clamp { lo: 0, hi: 1 << afrac }, &[low.x], c);
            low.x = low.b.op(rescale(255), &[low.x], c);
        }
        Step::Pcm => {
            let crop = Crop {
                y0: Operand::Const(0),
                x0: Operand::Const(0),
                h: Operand::Const(1),
                w: Operand::Scalar(0),
            };
            low.x = low.b.op(Op::Crop(crop), &[low.x], c);
            // The range in which v·32767 + 2^(afrac−1) fits i64.
            let lo = crate::num::ceil_div(&-pow2(63), &BigInt::from(32767))
                .to_i64()
                .unwrap_or(i64::MIN);
            let hi = floor_div(&(i64_max() - pow2(afrac - 1)), &BigInt::from(32767))
                .to_i64()
                .unwrap_or(i64::MAX);
            low.b.policy(low.x, Policy::Check { lo, hi });
            low.x = low.b.op(rescale(32767), &[low.x], c);
            low.x = low.b.op(Op::Clamp { lo: -32768, hi: 32767 }, &[low.x], c);
        }
    }
}

/// One network lowered to its graph (§13.2–§13.3): input 0 is `x_0`; the driver contract gives
/// `max_h = max_w = 0`, and `wam1/1` scalar 0, `t_out`, in `[1, 2^26]`.
pub fn graph(net: &Network, form: Form, step: Step) -> Result<Graph, Refusal> {
    let channels = input_channels(net)?;
    let mut b = Builder::new();
    if step == Step::Pcm {
        b.scalar(1, 1 << 26);
    }
    let x = b.input(
        channels,
        Policy::Check {
            lo: i64::MIN,
            hi: i64::MAX,
        },
    );
    let mut low = Lowering { b, x, channels };
    layers(&mut low, net, form)?;
    output_step(&mut low, net.afrac, step);
    low.b.output(low.x);
    Ok(low.b.build())
}

fn parse(file: &[u8]) -> Result<Value, Refusal> {
    serde_json::from_slice(file).map_err(|e| mismatch(format!("the set's JSON: {e}")))
}

/// `whm1/1`: `{ "h_s": network, "g_s": network }` for `wai.neural.int_hyper` (and the keyframe of
/// `wai.video.int_hyper`), `{ "g_s": network }` for `wai.splat.int_codec` (§13.0's roles; a member
/// the capability has no role for is not read); `g_s` with the RGB8 step.
pub fn lower_whm1(file: &[u8], capability: &str) -> Result<Lowered, Refusal> {
    let hyper = match capability {
        "wai.neural.int_hyper" | "wai.video.int_hyper" => true,
        "wai.splat.int_codec" => false,
        other => return Err(mismatch(format!("whm1/1 has no roles for the capability {other}"))),
    };
    let v = parse(file)?;
    let o = object(&v, "set").map_err(mismatch)?;
    let mut graphs = Vec::new();
    if hyper {
        let h = member(o, "h_s", "set").map_err(mismatch)?;
        graphs.push((
            "h_s".to_string(),
            graph(&network(h, Form::Whm1, "h_s")?, Form::Whm1, Step::None)?,
        ));
    }
    let g = network(member(o, "g_s", "set").map_err(mismatch)?, Form::Whm1, "g_s")?;
    graphs.push(("g_s".to_string(), graph(&g, Form::Whm1, Step::Rgb8)?));
    canonical(graphs)
}

/// `wam1/1`: `{ "g_s": network }` with the PCM step.
pub fn lower_wam1(file: &[u8]) -> Result<Lowered, Refusal> {
    let v = parse(file)?;
    let o = object(&v, "set").map_err(mismatch)?;
    let g = network(member(o, "g_s", "set").map_err(mismatch)?, Form::Wam1, "g_s")?;
    canonical(vec![("g_s".to_string(), graph(&g, Form::Wam1, Step::Pcm)?)])
}

/// `wmb1/1`: `{ "afrac", "h_s", "entropy", "g_s" }`, three networks sharing one `afrac`; `g_s` with
/// the RGB8 step. The bundle's tables are the stage operators' data and are not lowered.
pub fn lower_wmb1(file: &[u8]) -> Result<Lowered, Refusal> {
    let v = parse(file)?;
    let o = object(&v, "bundle").map_err(mismatch)?;
    let afrac = u32_of(o, "afrac", "bundle")?;
    let mut graphs = Vec::new();
    for (role, step) in [("h_s", Step::None), ("entropy", Step::None), ("g_s", Step::Rgb8)] {
        let net = network(member(o, role, "bundle").map_err(mismatch)?, Form::Whm1, role)?;
        if net.afrac != afrac {
            return Err(mismatch(format!(
                "{role}: afrac {} is not the bundle's {afrac}",
                net.afrac
            )));
        }
        graphs.push((role.to_string(), graph(&net, Form::Whm1, step)?));
    }
    canonical(graphs)
}

/// `world/1` (informative): `{ "T", "g_s", "latent_channels": C, "rows": [[…]…] }`.
pub fn lower_world(file: &[u8]) -> Result<Lowered, Refusal> {
    let v = parse(file)?;
    let o = object(&v, "set").map_err(mismatch)?;
    let t = network(member(o, "T", "set").map_err(mismatch)?, Form::Whm1, "T")?;
    let g = network(member(o, "g_s", "set").map_err(mismatch)?, Form::Whm1, "g_s")?;
    let c = u32_of(o, "latent_channels", "set")?;
    if t.afrac != g.afrac {
        return Err(mismatch("the two networks' afrac differ"));
    }
    let t_in = input_channels(&t)?;
    let a = t_in
        .checked_sub(c)
        .filter(|&a| a >= 1)
        .ok_or_else(|| mismatch("T's input has no action planes (A ≥ 1)"))?;
    for (i, row) in array(member(o, "rows", "set").map_err(mismatch)?, "set.rows")
        .map_err(mismatch)?
        .iter()
        .enumerate()
    {
        if array(row, "row").map_err(mismatch)?.len() != a as usize {
            return Err(mismatch(format!("rows[{i}] does not have A = {a} entries")));
        }
    }
    // T: fill from each scalar, concat(z, fill_0 … fill_{A−1}) as x_0, T's layers, clamp.
    let mut b = Builder::new();
    for _ in 0..a {
        b.scalar(i64::MIN, i64::MAX);
    }
    let z = b.input(
        c,
        Policy::Check {
            lo: i64::MIN,
            hi: i64::MAX,
        },
    );
    let planes: Vec<u32> = (0..a).map(|k| b.op(Op::Fill(FillValue::Scalar(k)), &[z], 1)).collect();
    let ins: Vec<u32> = std::iter::once(z).chain(planes).collect();
    let x0 = b.op(Op::Concat, &ins, t_in);
    let mut low = Lowering {
        b,
        x: x0,
        channels: t_in,
    };
    layers(&mut low, &t, Form::Whm1)?;
    let bound = 1i64 << t.afrac;
    low.x = low.b.op(Op::Clamp { lo: -bound, hi: bound }, &[low.x], low.channels);
    low.b.output(low.x);
    let t_graph = low.b.build();
    canonical(vec![
        ("T".to_string(), t_graph),
        ("g_s".to_string(), graph(&g, Form::Whm1, Step::Rgb8)?),
    ])
}
