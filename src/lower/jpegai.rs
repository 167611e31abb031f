//! §13.6.1 `jpegai-int/1`: the scale path of `wai.image.jpegai` and its two entropy decodes.
//!
//! The bundle (`weights/hs_y.json`, `weights/hs_uv.json`, `norm.json`) is read with every load
//! check of §13.6.1 (`model_mismatch`), the two scale graphs `hs_y` and `hs_uv` are lowered
//! (Table 13.6-A, "smallest" widths, §13.0), and a decode runs, for each plane, the hyper-latent
//! `mans_decode` (`fac`), the scale graph, the stage operators and the latent `mans_decode`
//! (`sgm`), giving `z`, `v`, the mask, `likely`, `σ_idx` and `y_q`.

use super::{Lowered, canonical};
use crate::json::*;
use crate::num::Round;
use crate::plan::Shape;
use crate::refusal::{Code, Refusal};
use crate::run::{Sequence, Stop as RunStop};
use crate::stage::block_stat::block_stat;
use crate::stage::mans_decode::{Fac, Sgm, Span, decode_fac, decode_sgm};
use crate::stage::scalar::{band_lookup, coded, scale_index};
use crate::tensor::Tensor;
use crate::whg1::build::{Builder, Geometry};
use crate::whg1::{self, Conv, Graph, Op, PerChannel, Placement, Policy, Rq};
use num_bigint::BigInt;
use serde_json::{Map, Value};

fn mismatch(why: impl Into<String>) -> Refusal {
    Refusal::new(Code::ModelMismatch, why)
}

/// One plane's constants (§13.6.1 *Each plane*).
#[derive(Clone, Copy, Debug)]
pub struct Plane {
    pub name: &'static str,
    /// `Cz`, the plane's latent channels.
    pub channels: usize,
    /// Hyper-latent rows of the other plane decoded first and discarded.
    pub skip: usize,
}

pub const LUMA: Plane = Plane {
    name: "y",
    channels: 160,
    skip: 0,
};
pub const CHROMA: Plane = Plane {
    name: "uv",
    channels: 96,
    skip: 160,
};

/// The members of `norm.json` the scale path reads.
#[derive(Clone, Debug)]
pub struct Norm {
    pub pmf: Vec<Vec<BigInt>>,
    pub bounds: Vec<BigInt>,
    pub cdfs_y: Vec<Vec<BigInt>>,
    pub cdfs_uv: Vec<Vec<BigInt>>,
    pub gain_y: Vec<i64>,
    pub gain_uv: Vec<i64>,
}

/// One convolution block of Table 13.6-A: weights with their dims, biases, per-channel shifts.
#[derive(Clone, Debug)]
struct Block {
    cout: u32,
    weights: Vec<i64>,
    bias: Vec<i64>,
    shifts: Vec<u8>,
}

/// Every integer of a (possibly nested) array, in order.
fn flat(v: &Value, path: &str, out: &mut Vec<i64>) -> Result<(), Refusal> {
    match v {
        Value::Array(items) => items
            .iter()
            .enumerate()
            .try_for_each(|(i, x)| flat(x, &format!("{path}[{i}]"), out)),
        x => {
            out.push(i64_number(x, path).map_err(mismatch)?);
            Ok(())
        }
    }
}

fn ints_of(o: &Map<String, Value>, key: &str, path: &str) -> Result<Vec<i64>, Refusal> {
    let mut out = Vec::new();
    flat(
        member(o, key, path).map_err(mismatch)?,
        &format!("{path}.{key}"),
        &mut out,
    )?;
    Ok(out)
}

fn parse(bytes: &[u8], name: &str) -> Result<Value, Refusal> {
    serde_json::from_slice(bytes).map_err(|e| mismatch(format!("{name}: {e}")))
}

/// Reads `norm.json` with §13.6.1's load checks.
pub fn norm(bytes: &[u8]) -> Result<Norm, Refusal> {
    let v = parse(bytes, "norm.json")?;
    let o = object(&v, "norm.json").map_err(mismatch)?;
    let rows = array(member(o, "pmf", "norm.json").map_err(mismatch)?, "norm.json.pmf").map_err(mismatch)?;
    let mut pmf = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        let mut row = Vec::new();
        flat(r, &format!("pmf[{i}]"), &mut row)?;
        pmf.push(row);
    }
    let width = pmf.first().map_or(0, Vec::len);
    let pmf_ok = pmf.len() >= 32
        && width >= 1
        && pmf.iter().all(|r| {
            r.len() == width && r.iter().all(|&x| x >= 0) && r.iter().map(|&x| i128::from(x)).sum::<i128>() == 256
        });
    if !pmf_ok {
        return Err(mismatch(
            "pmf: not at least 32 rows of one width w ≥ 1, non-negative, each summing to 256",
        ));
    }
    let bounds = ints_of(o, "bounds", "norm.json")?;
    if bounds.len() < 32 || bounds.iter().any(|b| !(0..=255).contains(b)) {
        return Err(mismatch("bounds: not at least 32 integers in [0, 255]"));
    }
    if member(o, "per_channel", "norm.json").map_err(mismatch)?.as_i64() != Some(16) {
        return Err(mismatch("per_channel: not 16"));
    }
    let cdfs = |key: &str, c: usize| -> Result<Vec<Vec<BigInt>>, Refusal> {
        let all = ints_of(o, key, "norm.json")?;
        let ok = all.len() == c * 63
            && all.iter().all(|x| (0..=255).contains(x))
            && all.chunks(63).all(|row| row.windows(2).all(|w| w[0] <= w[1]));
        if !ok {
            return Err(mismatch(format!(
                "{key}: not {c}·63 integers in [0, 255], each run of 63 non-decreasing"
            )));
        }
        Ok(all
            .chunks(63)
            .map(|row| row.iter().map(|&x| BigInt::from(x)).collect())
            .collect())
    };
    let gains = |key: &str, c: usize| -> Result<Vec<i64>, Refusal> {
        let g = ints_of(o, key, "norm.json")?;
        if g.len() != c {
            return Err(mismatch(format!("{key}: {} integers, not {c}", g.len())));
        }
        Ok(g)
    };
    Ok(Norm {
        pmf: pmf
            .into_iter()
            .map(|r| r.into_iter().map(BigInt::from).collect())
            .collect(),
        bounds: bounds.into_iter().map(BigInt::from).collect(),
        cdfs_y: cdfs("cdfs_y", 160)?,
        cdfs_uv: cdfs("cdfs_uv", 96)?,
        gain_y: gains("gain_y", 160)?,
        gain_uv: gains("gain_uv", 96)?,
    })
}

/// A member `{ "dims", "v" }` whose dims are `want` (a `None` is free and returned).
fn member_tensor(
    o: &Map<String, Value>,
    key: &str,
    want: &[Option<u64>],
    file: &str,
) -> Result<(Vec<u64>, Vec<i64>), Refusal> {
    let path = format!("{file}.{key}");
    let m = object(member(o, key, file).map_err(mismatch)?, &path).map_err(mismatch)?;
    let dims: Vec<u64> = array(member(m, "dims", &path).map_err(mismatch)?, &path)
        .map_err(mismatch)?
        .iter()
        .map(|d| u64_number(d, &path).map_err(mismatch))
        .collect::<Result<_, _>>()?;
    if dims.len() != want.len() || dims.iter().zip(want).any(|(d, w)| w.is_some_and(|w| *d != w)) {
        return Err(mismatch(format!("{path}: dims {dims:?} are not {want:?}")));
    }
    let mut v = Vec::new();
    flat(member(m, "v", &path).map_err(mismatch)?, &format!("{path}.v"), &mut v)?;
    let count = dims
        .iter()
        .try_fold(1u64, |a, &d| a.checked_mul(d))
        .ok_or_else(|| mismatch(format!("{path}: too many values")))?;
    if v.len() as u64 != count {
        return Err(mismatch(format!("{path}: {} values for dims {dims:?}", v.len())));
    }
    Ok((dims, v))
}

fn shifts(v: &[i64], path: &str) -> Result<Vec<u8>, Refusal> {
    v.iter()
        .map(|&s| {
            u8::try_from(s)
                .ok()
                .filter(|&s| s <= 127)
                .ok_or_else(|| mismatch(format!("{path}: a shift is outside 0..=127")))
        })
        .collect()
}

/// Reads `weights/hs_*.json`: the three blocks of Table 13.6-A for a plane of `cz` channels.
fn blocks(bytes: &[u8], cz: u64, file: &str) -> Result<[Block; 3], Refusal> {
    let v = parse(bytes, file)?;
    let o = object(&v, file).map_err(mismatch)?;
    let (d1, w1) = member_tensor(o, "conv1.weight", &[None, Some(cz), Some(1), Some(1)], file)?;
    let c1 = d1[0];
    let (_, b1) = member_tensor(o, "conv1.bias", &[Some(c1)], file)?;
    let (_, s1) = member_tensor(o, "onnx::Pow_85", &[Some(1), Some(c1), Some(1), Some(1)], file)?;
    let (d2, w2) = member_tensor(o, "depthwise.weight", &[None, Some(c1), Some(3), Some(3)], file)?;
    let c2 = d2[0];
    let (_, b2) = member_tensor(o, "depthwise.bias", &[Some(c2)], file)?;
    let (_, s2) = member_tensor(o, "onnx::Pow_91", &[Some(1), Some(c2), Some(1), Some(1)], file)?;
    let c3 = 16 * cz;
    let (_, w3) = member_tensor(o, "pointwise.weight", &[Some(c3), Some(c2), Some(1), Some(1)], file)?;
    let (_, b3) = member_tensor(o, "pointwise.bias", &[Some(c3)], file)?;
    let (_, s3) = member_tensor(o, "onnx::Pow_97", &[Some(1), Some(c3), Some(1), Some(1)], file)?;
    let block = |cout: u64, weights, bias, s: Vec<i64>, name: &str| -> Result<Block, Refusal> {
        let cout = u32::try_from(cout).map_err(|_| mismatch(format!("{file}: {name} has too many channels")))?;
        Ok(Block {
            cout,
            weights,
            bias,
            shifts: shifts(&s, name)?,
        })
    };
    Ok([
        block(c1, w1, b1, s1, "onnx::Pow_85")?,
        block(c2, w2, b2, s2, "onnx::Pow_91")?,
        block(c3, w3, b3, s3, "onnx::Pow_97")?,
    ])
}

/// The scale graph (§13.6.1): clamp, conv 1×1, relu, clamp, conv 3×3, relu, clamp, conv 1×1,
/// `pixel_shuffle(4)`, `abs`, `clamp(0, 3967)`, and the per-channel gain as a `pre` bias.
fn scale_graph(blocks: &[Block; 3], gains: &[i64], cz: u32) -> Graph {
    let mut b = Builder::new();
    let mut x = b.input_sized(cz, Policy::Check { lo: -31, hi: 32 }, 4, 4);
    let mut channels = cz;
    for (i, block) in blocks.iter().enumerate() {
        x = b.op(Op::Clamp { lo: -128, hi: 127 }, &[x], channels);
        let k = if i == 1 { 3 } else { 1 };
        let geometry = Geometry {
            k: (k, k),
            s: (1, 1),
            p: ((k - 1) / 2, (k - 1) / 2),
        };
        let rq = Rq::new(Round::Floor, PerChannel::Each(block.shifts.clone())).bias(Placement::Pre, block.bias.clone());
        x = b.op(
            Op::Conv(Conv::new(block.cout, geometry, 1, block.weights.clone(), rq)),
            &[x],
            block.cout,
        );
        channels = block.cout;
        if i < 2 {
            x = b.op(Op::Relu, &[x], channels);
        }
    }
    x = b.op(Op::PixelShuffle { r: 4 }, &[x], cz);
    x = b.op(Op::Abs, &[x], cz);
    x = b.op(Op::Clamp { lo: 0, hi: 3967 }, &[x], cz);
    // The per-channel gain: no multiplier, shift 0, a pre bias per channel (smallest width, §13.0).
    let gain = Rq::new(Round::Floor, PerChannel::One(0)).bias(Placement::Pre, gains.to_vec());
    x = b.op(Op::Rescale(gain), &[x], cz);
    b.output(x);
    b.build()
}

/// A bundle: the norm tables and the two lowered scale graphs.
pub struct Bundle {
    pub norm: Norm,
    pub lowered: Lowered,
}

/// The bundle's files by name: `weights/hs_y.json`, `weights/hs_uv.json`, `norm.json` (a file's
/// directory is not read: `hs_y.json` names the same member).
pub fn bundle(files: &[(String, Vec<u8>)]) -> Result<Bundle, Refusal> {
    let find = |name: &str| {
        files
            .iter()
            .find(|(n, _)| n == name || n.rsplit('/').next() == Some(name))
            .map(|(_, b)| b.as_slice())
            .ok_or_else(|| mismatch(format!("the bundle has no {name}")))
    };
    let norm = norm(find("norm.json")?)?;
    let hs_y = blocks(find("hs_y.json")?, 160, "hs_y.json")?;
    let hs_uv = blocks(find("hs_uv.json")?, 96, "hs_uv.json")?;
    let lowered = canonical(vec![
        ("hs_y".to_string(), scale_graph(&hs_y, &norm.gain_y, 160)),
        ("hs_uv".to_string(), scale_graph(&hs_uv, &norm.gain_uv, 96)),
    ])?;
    Ok(Bundle { norm, lowered })
}

/// What one plane's decode gives (§13.6.1 *What this subsection fixes*).
#[derive(Clone, Debug)]
pub struct PlaneOut {
    pub z: Tensor,
    pub v: Tensor,
    pub mask: Tensor,
    pub likely: Tensor,
    pub sigma_idx: Tensor,
    pub y_q: Tensor,
}

fn exhausted(s: crate::stage::Stop) -> Refusal {
    Refusal::new(s.code, s.why)
}

/// One plane's decode: the hyper-latent, the scale graph, the stage operators and the latent.
pub fn decode_plane(b: &Bundle, plane: Plane, soz: &[u8], latent: &[u8], grfs: &[bool]) -> Result<PlaneOut, Refusal> {
    let c = plane.channels;
    if grfs.len() != c {
        return Err(Refusal::new(
            Code::ModelMismatch,
            format!("{} GRFS flags for {c} channels", grfs.len()),
        ));
    }
    // 1. Hyper-latent: `skip` rows with luma's cdfs (discarded), then this plane's C rows, 16
    // symbols each, in one fac decode.
    let own = if plane.skip == 0 {
        &b.norm.cdfs_y
    } else {
        &b.norm.cdfs_uv
    };
    let rows: Vec<Vec<BigInt>> = b.norm.cdfs_y[..plane.skip].iter().chain(own).cloned().collect();
    let fac = Fac {
        lengths: vec![BigInt::from(16); rows.len()],
        rows,
    };
    let symbols = decode_fac(soz, &fac).map_err(exhausted)?;
    let z_data: Vec<BigInt> = symbols[plane.skip..].iter().flatten().map(|s| s - 31).collect();
    let z = Tensor {
        shape: Shape::new(c as u64, 4, 4),
        data: z_data,
    };
    // 2. Scale: the plane's graph on z.
    let role = if plane.skip == 0 { "hs_y" } else { "hs_uv" };
    let bytes = &b
        .lowered
        .graphs
        .iter()
        .find(|(r, _)| r == role)
        .ok_or_else(|| mismatch("no scale graph"))?
        .1;
    let loaded = whg1::load(bytes)?;
    let v = match Sequence::new(&loaded).decode(vec![z.clone()], &[]) {
        Ok(mut outs) => outs.remove(0),
        Err(RunStop::Refused(r)) => return Err(r),
        Err(RunStop::Error(e)) => return Err(mismatch(e)),
    };
    // 3. Stage operators at every channel and position.
    let thr = BigInt::from(382);
    let mask = v.map(|x| BigInt::from(u8::from(coded(x, &thr))));
    let likely = block_stat(
        &v,
        &BigInt::from(8),
        &BigInt::from(6),
        &BigInt::ZERO,
        &BigInt::from(4351),
    )
    .map_err(exhausted)?;
    let edges: Vec<BigInt> = [1003, 1352, 1937].map(BigInt::from).to_vec();
    let table: Vec<Vec<BigInt>> = [[-31, 20, 122, 181], [-80, -31, 71, 130]]
        .iter()
        .map(|r| r.map(BigInt::from).to_vec())
        .collect();
    let mut sigma_data = Vec::with_capacity(v.data.len());
    for (i, (vi, li)) in v.data.iter().zip(&likely.data).enumerate() {
        let row = BigInt::from(if grfs[i / 256] { 0 } else { 1 });
        let rvs = band_lookup(li, &edges, &table, &row).map_err(exhausted)?;
        sigma_data.push(scale_index(&(vi + rvs), &BigInt::from(7), &BigInt::from(32)).map_err(exhausted)?);
    }
    let sigma_idx = Tensor {
        shape: v.shape,
        data: sigma_data,
    };
    // 4. Latent: T_y[σ] from pmf row σ and B_y[σ] = bounds[σ], σ < 32; one span per channel.
    let spans = (0..c)
        .map(|ch| Span {
            mask: mask.data[ch * 256..(ch + 1) * 256]
                .iter()
                .map(|m| *m == BigInt::from(1))
                .collect(),
            sigma: sigma_idx.data[ch * 256..(ch + 1) * 256].to_vec(),
        })
        .collect();
    let sgm = Sgm {
        pmf: b.norm.pmf[..32].to_vec(),
        bounds: b.norm.bounds[..32].to_vec(),
        spans,
    };
    let y = decode_sgm(latent, &sgm).map_err(exhausted)?;
    let y_q = Tensor {
        shape: v.shape,
        data: y.into_iter().flatten().collect(),
    };
    Ok(PlaneOut {
        z,
        v,
        mask,
        likely,
        sigma_idx,
        y_q,
    })
}
