//! A graph in the corpus's readable form (docs/corpus.md) to the WHG1 model.
//!
//! Tensors are named; they are numbered as §13.0 numbers them: the inputs first, then
//! each operator's outputs in order. Free widths are the smallest that hold the values.

use crate::recipe::ints;
use crate::value::*;
use num_bigint::BigInt;
use num_traits::ToPrimitive;
use serde_json::{Map, Value};
use std::collections::HashMap;
use wai_oracle::num::Round;
use wai_oracle::plan::node_channels;
use wai_oracle::whg1::build::Geometry;
use wai_oracle::whg1::*;

struct Names {
    ids: HashMap<String, u32>,
}

impl Names {
    fn id(&self, name: &Value, path: &str) -> Result<u32, Fail> {
        let name = string(name, path)?;
        self.ids
            .get(name)
            .copied()
            .ok_or_else(|| format!("{path}: no tensor is named {name:?}"))
    }

    fn define(&mut self, name: &str, id: u32, path: &str) -> Result<(), Fail> {
        if self.ids.insert(name.to_string(), id).is_some() {
            return Err(format!("{path}: the name {name:?} is used twice"));
        }
        Ok(())
    }
}

/// Builds the model of a readable graph.
pub fn graph(v: &Value, path: &str) -> Result<Graph, Fail> {
    let o = object(v, path)?;
    only(o, &["max_elems", "scalars", "inputs", "ops", "outputs"], path)?;
    let max_elems = match o.get("max_elems") {
        Some(m) => u32_(m, &format!("{path}.max_elems"))?,
        None => CAP as u32,
    };
    let mut g = Graph {
        max_elems,
        scalars: vec![],
        inputs: vec![],
        outputs: vec![],
        tensors: vec![],
        nodes: vec![],
    };
    let mut names = Names { ids: HashMap::new() };
    if let Some(s) = o.get("scalars") {
        for (k, pair) in array(s, &format!("{path}.scalars"))?.iter().enumerate() {
            let p = format!("{path}.scalars[{k}]");
            let (lo, hi) = crate::recipe::range(pair, &p)?;
            g.scalars.push(Scalar {
                lo: fit_i64(&lo, &p)?,
                hi: fit_i64(&hi, &p)?,
            });
        }
    }
    for (i, inp) in array(member(o, "inputs", path)?, &format!("{path}.inputs"))?
        .iter()
        .enumerate()
    {
        input(&mut g, &mut names, inp, &format!("{path}.inputs[{i}]"))?;
    }
    for (i, op) in array(member(o, "ops", path)?, &format!("{path}.ops"))?
        .iter()
        .enumerate()
    {
        node(&mut g, &mut names, op, &format!("{path}.ops[{i}]"))?;
    }
    for (i, out) in array(member(o, "outputs", path)?, &format!("{path}.outputs"))?
        .iter()
        .enumerate()
    {
        g.outputs.push(names.id(out, &format!("{path}.outputs[{i}]"))?);
    }
    Ok(g)
}

fn fit_i64(v: &BigInt, path: &str) -> Result<i64, Fail> {
    v.to_i64().ok_or_else(|| format!("{path}: does not fit i64"))
}

/// A tensor record's policy and exponent from `check`, `clamp` or `derived`, and `exponent`.
fn record(o: &Map<String, Value>, channels: u32, path: &str) -> Result<TensorRecord, Fail> {
    let range = |key: &str| -> Result<Option<(i64, i64)>, Fail> {
        match o.get(key) {
            None => Ok(None),
            Some(v) => match array(v, &format!("{path}.{key}"))? {
                [lo, hi] => Ok(Some((
                    i64_(lo, &format!("{path}.{key}[0]"))?,
                    i64_(hi, &format!("{path}.{key}[1]"))?,
                ))),
                _ => Err(format!("{path}.{key}: not a pair")),
            },
        }
    };
    let policy = match (range("check")?, range("clamp")?) {
        (Some(_), Some(_)) => return Err(format!("{path}: both check and clamp")),
        (Some((lo, hi)), None) => Policy::Check { lo, hi },
        (None, Some((lo, hi))) => Policy::Clamp { lo, hi },
        (None, None) => Policy::Derived,
    };
    let exponent = match o.get("exponent") {
        None => None,
        Some(e) => Some(i64_(e, &format!("{path}.exponent"))? as i8),
    };
    Ok(TensorRecord {
        channels,
        exponent,
        policy,
    })
}

fn input(g: &mut Graph, names: &mut Names, v: &Value, path: &str) -> Result<(), Fail> {
    let o = object(v, path)?;
    only(
        o,
        &["name", "channels", "check", "clamp", "exponent", "max", "state"],
        path,
    )?;
    let channels = u32_(member(o, "channels", path)?, &format!("{path}.channels"))?;
    let tensor = g.tensors.len() as u32;
    g.tensors.push(record(o, channels, path)?);
    names.define(string(member(o, "name", path)?, &format!("{path}.name"))?, tensor, path)?;
    let (max_h, max_w) = pair(o.get("max"), (0, 0), &format!("{path}.max"))?;
    let kind = match o.get("state") {
        None => InputKind::Data,
        Some(s) => {
            let p = format!("{path}.state");
            let s = object(s, &p)?;
            only(s, &["src", "init"], &p)?;
            InputKind::State {
                src: u32_(member(s, "src", &p)?, &format!("{p}.src"))?,
                init: i64_(member(s, "init", &p)?, &format!("{p}.init"))?,
            }
        }
    };
    g.inputs.push(Input {
        tensor,
        max_h,
        max_w,
        kind,
    });
    Ok(())
}

fn node(g: &mut Graph, names: &mut Names, v: &Value, path: &str) -> Result<(), Fail> {
    let o = object(v, path)?;
    let name = string(member(o, "op", path)?, &format!("{path}.op"))?;
    let inputs: Vec<u32> = array(member(o, "in", path)?, &format!("{path}.in"))?
        .iter()
        .enumerate()
        .map(|(i, n)| names.id(n, &format!("{path}.in[{i}]")))
        .collect::<Result<_, _>>()?;
    let cin: Vec<u64> = inputs
        .iter()
        .map(|&t| u64::from(g.tensors[t as usize].channels))
        .collect();
    let c = *cin.first().ok_or_else(|| format!("{path}.in: no inputs"))? as u32;
    let op = params(name, o, c, path)?;
    let outs = array(member(o, "out", path)?, &format!("{path}.out"))?;
    // Output channels: as written, or as §5 derives them from the inputs'.
    let explicit: Vec<Option<u32>> = outs
        .iter()
        .enumerate()
        .map(|(k, out)| match out.get("channels") {
            Some(ch) => u32_(ch, &format!("{path}.out[{k}].channels")).map(Some),
            None => Ok(None),
        })
        .collect::<Result<_, _>>()?;
    let derived = if explicit.iter().all(Option::is_some) {
        explicit.iter().map(|c| u64::from(c.unwrap_or(0))).collect()
    } else {
        node_channels(&op, &cin, &[]).map_err(|e| format!("{path}: the output channels do not derive: {e}"))?
    };
    let mut outputs = Vec::new();
    for (k, out) in outs.iter().enumerate() {
        let p = format!("{path}.out[{k}]");
        let channels = explicit[k]
            .or_else(|| derived.get(k).map(|&c| c as u32))
            .ok_or_else(|| format!("{p}: no channels"))?;
        let (out_name, rec) = match out {
            Value::String(n) => (
                n.as_str(),
                TensorRecord {
                    channels,
                    exponent: None,
                    policy: Policy::Derived,
                },
            ),
            Value::Object(oo) => {
                only(oo, &["name", "channels", "check", "clamp", "exponent"], &p)?;
                (
                    string(member(oo, "name", &p)?, &format!("{p}.name"))?,
                    record(oo, channels, &p)?,
                )
            }
            _ => return Err(format!("{p}: neither a name nor an object")),
        };
        let id = g.tensors.len() as u32;
        g.tensors.push(rec);
        names.define(out_name, id, &p)?;
        outputs.push(id);
    }
    g.nodes.push(Node { inputs, outputs, op });
    Ok(())
}

fn round(v: Option<&Value>, path: &str) -> Result<Round, Fail> {
    match v.map(|v| string(v, path)).transpose()? {
        None | Some("floor") => Ok(Round::Floor),
        Some("half_up") => Ok(Round::HalfUp),
        Some("half_even") => Ok(Round::HalfEven),
        Some(other) => Err(format!("{path}: {other:?} is not a rounding")),
    }
}

fn i64s(v: &Value, count: usize, path: &str) -> Result<Vec<i64>, Fail> {
    ints(v, count, path)?.iter().map(|x| fit_i64(x, path)).collect()
}

/// One value for every channel (a number) or one per channel (a list of `c`).
fn per_channel<T>(
    v: &Value,
    c: u32,
    path: &str,
    f: impl Fn(&Value, &str) -> Result<T, Fail>,
) -> Result<PerChannel<T>, Fail> {
    match v {
        Value::Array(items) => {
            if items.len() != c as usize {
                return Err(format!("{path}: {} values for {c} channels", items.len()));
            }
            Ok(PerChannel::Each(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, x)| f(x, &format!("{path}[{i}]")))
                    .collect::<Result<_, _>>()?,
            ))
        }
        one => Ok(PerChannel::One(f(one, path)?)),
    }
}

/// The readable `RQ`: `round`, `shift`, optional `mult`, optional `pre` or `post` bias, and
/// optional widths `m_bytes`, `b_bytes`.
fn rq(v: &Value, c: u32, path: &str) -> Result<Rq, Fail> {
    let o = object(v, path)?;
    only(
        o,
        &["round", "shift", "mult", "pre", "post", "m_bytes", "b_bytes"],
        path,
    )?;
    let shift = per_channel(member(o, "shift", path)?, c, &format!("{path}.shift"), u8_)?;
    let mut rq = Rq::new(round(o.get("round"), &format!("{path}.round"))?, shift);
    if let Some(m) = o.get("mult") {
        rq = rq.mult(per_channel(m, c, &format!("{path}.mult"), i64_)?);
        if let (Some(mult), Some(b)) = (&mut rq.mult, o.get("m_bytes")) {
            mult.bytes = u8_(b, &format!("{path}.m_bytes"))?;
        }
    }
    for (key, placement) in [("pre", Placement::Pre), ("post", Placement::Post)] {
        if let Some(b) = o.get(key) {
            let p = format!("{path}.{key}");
            let values = match b {
                Value::Array(_) => i64s(b, c as usize, &p)?,
                one => vec![i64_(one, &p)?; c as usize],
            };
            rq = rq.bias(placement, values);
            if let (Some(bias), Some(w)) = (&mut rq.bias, o.get("b_bytes")) {
                bias.bytes = u8_(w, &format!("{path}.b_bytes"))?;
            }
        }
    }
    Ok(rq)
}

fn operand(v: &Value, path: &str) -> Result<Operand, Fail> {
    match v {
        Value::Object(o) => Ok(Operand::Scalar(u32_(
            member(o, "scalar", path)?,
            &format!("{path}.scalar"),
        )?)),
        c => Ok(Operand::Const(u32_(c, path)?)),
    }
}

/// A width given as `key`, or the smallest that holds `values`.
fn width(o: &Map<String, Value>, key: &str, chosen: Width, path: &str) -> Result<Width, Fail> {
    o.get(key).map_or(Ok(chosen), |w| u8_(w, &format!("{path}.{key}")))
}

/// The operator's parameters, from the members of its readable form. `c` is the channel
/// count of its first input.
fn params(name: &str, o: &Map<String, Value>, c: u32, path: &str) -> Result<Op, Fail> {
    let param = |key: &str| member(o, key, path);
    let at = |key: &str| format!("{path}.{key}");
    let allow = |extra: &[&str]| -> Result<(), Fail> {
        let mut allowed = vec!["op", "in", "out"];
        allowed.extend_from_slice(extra);
        only(o, &allowed, path)
    };
    Ok(match name {
        "conv" => {
            allow(&["cout", "k", "stride", "pad", "groups", "weights", "w_bytes", "rq"])?;
            let cout = u32_(param("cout")?, &at("cout"))?;
            let groups = o.get("groups").map_or(Ok(1), |g| u32_(g, &at("groups")))?;
            let geom = geometry(o, path)?;
            let count = cout as usize * (c / groups.max(1)) as usize * (geom.k.0 * geom.k.1) as usize;
            let weights = match param("weights")?.get("phase_of") {
                Some(of) => phase_weights(of, c, cout, geom, &at("weights.phase_of"))?,
                None => i64s(param("weights")?, count, &at("weights"))?,
            };
            let mut p = Conv::new(cout, geom, groups, weights, rq(param("rq")?, cout, &at("rq"))?);
            p.w_bytes = width(o, "w_bytes", p.w_bytes, path)?;
            Op::Conv(p)
        }
        "conv_transpose" => {
            allow(&["cout", "k", "stride", "pad", "out_pad", "weights", "w_bytes", "rq"])?;
            let cout = u32_(param("cout")?, &at("cout"))?;
            let geom = geometry(o, path)?;
            let out_pad = pair(o.get("out_pad"), (0, 0), &at("out_pad"))?;
            let count = c as usize * cout as usize * (geom.k.0 * geom.k.1) as usize;
            let weights = i64s(param("weights")?, count, &at("weights"))?;
            let mut p = ConvTranspose::new(cout, geom, out_pad, weights, rq(param("rq")?, cout, &at("rq"))?);
            p.w_bytes = width(o, "w_bytes", p.w_bytes, path)?;
            Op::ConvTranspose(p)
        }
        "rescale" => {
            allow(&["rq"])?;
            Op::Rescale(rq(param("rq")?, c, &at("rq"))?)
        }
        "mul" => {
            allow(&["rq"])?;
            Op::Mul(rq(param("rq")?, c, &at("rq"))?)
        }
        "chscale" => {
            allow(&["scalar", "rows", "round", "shift", "m_bytes"])?;
            let rows = array(param("rows")?, &at("rows"))?;
            let mut m = Vec::new();
            for (r, row) in rows.iter().enumerate() {
                m.extend(i64s(row, c as usize, &format!("{path}.rows[{r}]"))?);
            }
            let mut p = Chscale::new(
                u32_(param("scalar")?, &at("scalar"))?,
                rows.len() as u32,
                round(o.get("round"), &at("round"))?,
                u8_(param("shift")?, &at("shift"))?,
                m,
            );
            p.m_bytes = width(o, "m_bytes", p.m_bytes, path)?;
            Op::Chscale(p)
        }
        "lut16" => {
            allow(&["table", "t0", "e_in", "e_out"])?;
            let mut table: Vec<i16> = ints(param("table")?, 65536, &at("table"))?
                .iter()
                .map(|v| v.to_i16().ok_or_else(|| format!("{path}.table: {v} does not fit i16")))
                .collect::<Result<_, _>>()?;
            table[0] = o.get("t0").map_or(Ok(0), |t| i64_(t, &at("t0")).map(|t| t as i16))?;
            let exp = |key: &str| o.get(key).map(|e| i64_(e, &at(key)).map(|e| e as i8)).transpose();
            Op::Lut16(Lut16 {
                e_in: exp("e_in")?,
                e_out: exp("e_out")?,
                table,
            })
        }
        "add" | "concat" | "chunk_add" | "relu" | "abs" | "crop_to" | "softmax" | "sigmoid" => {
            allow(&[])?;
            match name {
                "add" => Op::Add,
                "concat" => Op::Concat,
                "chunk_add" => Op::ChunkAdd,
                "relu" => Op::Relu,
                "abs" => Op::Abs,
                "crop_to" => Op::CropTo,
                "softmax" => Op::Softmax,
                _ => Op::Sigmoid,
            }
        }
        "split" => {
            allow(&["start", "count"])?;
            Op::Split {
                start: u32_(param("start")?, &at("start"))?,
                count: u32_(param("count")?, &at("count"))?,
            }
        }
        "pixel_shuffle" | "pixel_unshuffle" => {
            allow(&["r"])?;
            let r = u32_(param("r")?, &at("r"))?;
            if name == "pixel_shuffle" {
                Op::PixelShuffle { r }
            } else {
                Op::PixelUnshuffle { r }
            }
        }
        "clamp" => {
            allow(&["lo", "hi"])?;
            Op::Clamp {
                lo: i64_(param("lo")?, &at("lo"))?,
                hi: i64_(param("hi")?, &at("hi"))?,
            }
        }
        "leaky" => {
            allow(&["a", "f"])?;
            Op::Leaky {
                a: i64_(param("a")?, &at("a"))?,
                f: u32_(param("f")?, &at("f"))?,
            }
        }
        "pad_rep" => {
            allow(&["m"])?;
            Op::PadRep {
                m: u32_(param("m")?, &at("m"))?,
            }
        }
        "crop" => {
            allow(&["y0", "x0", "h", "w"])?;
            Op::Crop(Crop {
                y0: operand(param("y0")?, &at("y0"))?,
                x0: operand(param("x0")?, &at("x0"))?,
                h: operand(param("h")?, &at("h"))?,
                w: operand(param("w")?, &at("w"))?,
            })
        }
        "subpos_split" | "subpos_merge" => {
            allow(&["order"])?;
            let order = array(param("order")?, &at("order"))?;
            let order: Vec<u8> = order
                .iter()
                .enumerate()
                .map(|(i, v)| u8_(v, &format!("{path}.order[{i}]")))
                .collect::<Result<_, _>>()?;
            let order: [u8; 4] = order
                .try_into()
                .map_err(|_| format!("{path}.order: not four entries"))?;
            if name == "subpos_split" {
                Op::SubposSplit { order }
            } else {
                Op::SubposMerge { order }
            }
        }
        "fill" => {
            allow(&["value"])?;
            Op::Fill(match param("value")? {
                Value::Object(v) => FillValue::Scalar(u32_(member(v, "scalar", path)?, &at("value.scalar"))?),
                v => FillValue::Const(i64_(v, &at("value"))?),
            })
        }
        "igdn" => {
            allow(&["gf", "frac", "gamma", "beta", "g_bytes"])?;
            let gamma = i64s(&flatten(param("gamma")?), (c * c) as usize, &at("gamma"))?;
            let beta = i64s(param("beta")?, c as usize, &at("beta"))?;
            let mut p = Igdn::new(
                u32_(param("gf")?, &at("gf"))?,
                u32_(param("frac")?, &at("frac"))?,
                gamma,
                beta,
            );
            p.g_bytes = width(o, "g_bytes", p.g_bytes, path)?;
            Op::Igdn(p)
        }
        "layernorm_c" => {
            allow(&["eps", "gamma", "beta", "g_bytes"])?;
            let gamma = i64s(param("gamma")?, c as usize, &at("gamma"))?;
            let beta = i64s(param("beta")?, c as usize, &at("beta"))?;
            let mut p = LayernormC::new(u64_(param("eps")?, &at("eps"))?, gamma, beta);
            p.g_bytes = width(o, "g_bytes", p.g_bytes, path)?;
            Op::LayernormC(p)
        }
        "l2norm" => {
            allow(&["eps"])?;
            Op::L2norm {
                eps: u64_(param("eps")?, &at("eps"))?,
            }
        }
        "elu" => {
            allow(&["alpha"])?;
            Op::Elu {
                alpha: i64_(param("alpha")?, &at("alpha"))?,
            }
        }
        "gram" | "apply" => {
            allow(&["groups", "round", "shift"])?;
            let p = Contraction::new(
                u32_(param("groups")?, &at("groups"))?,
                round(o.get("round"), &at("round"))?,
                u8_(param("shift")?, &at("shift"))?,
            );
            if name == "gram" { Op::Gram(p) } else { Op::Apply(p) }
        }
        other => return Err(format!("{path}.op: {other:?} is not an operator")),
    })
}

fn geometry(o: &Map<String, Value>, path: &str) -> Result<Geometry, Fail> {
    Ok(Geometry {
        k: pair(Some(member(o, "k", path)?), (1, 1), &format!("{path}.k"))?,
        s: pair(o.get("stride"), (1, 1), &format!("{path}.stride"))?,
        p: pair(o.get("pad"), (0, 0), &format!("{path}.pad"))?,
    })
}

/// A matrix written as a list of rows, flattened; anything else as it is.
fn flatten(v: &Value) -> Value {
    match v {
        Value::Array(rows) if rows.iter().all(Value::is_array) => Value::Array(
            rows.iter()
                .flat_map(|r| r.as_array().cloned().unwrap_or_default())
                .collect(),
        ),
        other => other.clone(),
    }
}

/// §9.3's phase form: the weights of one stride-1 `conv` that computes every phase `Z_ρ` of
/// a `conv_transpose` at once, output channel `o·sh·sw + ρy·sw + ρx` (the order
/// `pixel_shuffle` reads), each phase's sub-kernel `Wt[ci][o][ρy + sh·t][ρx + sw·t′]` flipped
/// into a `Th × Tw = ⌈kh/sh⌉ × ⌈kw/sw⌉` kernel, missing taps 0. `of` holds the transposed
/// convolution's `weights` (`[cin][cout][kh][kw]`), `cout`, `k` and `stride`.
fn phase_weights(of: &Value, cin: u32, cout: u32, geom: Geometry, path: &str) -> Result<Vec<i64>, Fail> {
    let o = object(of, path)?;
    only(o, &["weights", "cout", "k", "stride"], path)?;
    let cout_t = u32_(member(o, "cout", path)?, &format!("{path}.cout"))? as usize;
    let (kh, kw) = pair(Some(member(o, "k", path)?), (1, 1), &format!("{path}.k"))?;
    let (sh, sw) = pair(o.get("stride"), (1, 1), &format!("{path}.stride"))?;
    let (kh, kw, sh, sw) = (kh as usize, kw as usize, sh as usize, sw as usize);
    let (th, tw) = (kh.div_ceil(sh), kw.div_ceil(sw));
    if (geom.k.0 as usize, geom.k.1 as usize) != (th, tw) || cout as usize != cout_t * sh * sw {
        return Err(format!(
            "{path}: the conv must have k [{th}, {tw}] and cout {}",
            cout_t * sh * sw
        ));
    }
    let cin = cin as usize;
    let wt = i64s(
        member(o, "weights", path)?,
        cin * cout_t * kh * kw,
        &format!("{path}.weights"),
    )?;
    let mut out = Vec::with_capacity(cout as usize * cin * th * tw);
    for oc in 0..cout as usize {
        let (o_t, ry, rx) = (oc / (sh * sw), (oc % (sh * sw)) / sw, oc % sw);
        for ci in 0..cin {
            for i in 0..th {
                for j in 0..tw {
                    let (iy, ix) = (ry + sh * (th - 1 - i), rx + sw * (tw - 1 - j));
                    out.push(if iy < kh && ix < kw {
                        wt[((ci * cout_t + o_t) * kh + iy) * kw + ix]
                    } else {
                        0
                    });
                }
            }
        }
    }
    Ok(out)
}
