//! `jpegai-int/1` (§13.6.1): the `wai.image.jpegai` bundle's members that the scale path reads,
//! their load checks (`model_mismatch`), and the two scale graphs `hs_y` and `hs_uv`.
//!
//! **The bundle.** Its files are found by name (docs/assumptions.md L7): `norm.json`,
//! `weights/hs_y.json` and `weights/hs_uv.json`, or the same names without the folder. From
//! `norm.json`: `pmf` (`R ≥ 32` rows of one width `w ≥ 1`, non-negative, each summing to 256),
//! `bounds` (at least 32 integers in `[0, 255]`), `per_channel` (16), `cdfs_y` (`160·63`) and
//! `cdfs_uv` (`96·63`) integers in `[0, 255]`, each run of 63 non-decreasing, flat or nested (L7),
//! `gain_y` (160) and `gain_uv` (96) integers fitting i64. Its other members are not read. From each
//! weights file, the nine members of Table 13.6-A, `{ "dims", "v" }` with `v` row-major over `dims`
//! and the shapes the table gives (`C3 = 16·Cz`, `Cz` 160 or 96); weights and biases fit i64, shifts
//! lie in `0..=127`. Other members are ignored.
//!
//! **The scale graph** (input `z [Cz, 4, 4]`, `check [−31, 32]`, sizes 4 × 4): `clamp(−128, 127)`;
//! block 1 (`conv` 1×1, `RQ`: `floor`, a `pre` bias, no multiplier, one shift per channel); `relu`;
//! `clamp(−128, 127)`; block 2 (3×3, padding 1); `relu`; `clamp(−128, 127)`; block 3 (1×1);
//! `pixel_shuffle(4)`; `abs`; `clamp(0, 3967)`; `rescale` (no multiplier, shift 0, `floor`, a `pre`
//! bias per channel: the plane's gains). Weights and biases take the smallest widths (§13.0).

use super::form::{Form, clamp_params, opcode, weight_width, wide_width};
use super::source::{self, I64, R, U32, refuse};
use crate::whg1::write::{P, RqW};
use serde_json::{Map, Value};

/// The members the scale path reads, checked.
#[derive(Clone, Debug)]
pub struct Bundle {
    /// `P[σ]`, `R ≥ 32` rows of one width.
    pub pmf: Vec<Vec<i64>>,
    /// `B_y`, at least 32.
    pub bounds: Vec<i64>,
    /// The hyper-latent rows of each plane: 160 (luma) and 96 (chroma) rows of 63 counts.
    pub cdfs_y: Vec<Vec<i64>>,
    pub cdfs_uv: Vec<Vec<i64>>,
    pub gain_y: Vec<i64>,
    pub gain_uv: Vec<i64>,
    /// The lowered graphs `hs_y` and `hs_uv`.
    pub hs_y: Vec<u8>,
    pub hs_uv: Vec<u8>,
}

/// The luma plane's channel count.
pub const CY: u64 = 160;
/// The chroma plane's.
pub const CUV: u64 = 96;

/// The file whose name (without any folder) is `name`; refused when absent or given twice.
fn file<'a>(files: &'a [(String, Vec<u8>)], name: &str) -> R<&'a [u8]> {
    let base = |n: &str| n.rsplit('/').next().unwrap_or(n).to_string();
    let mut found = files.iter().filter(|(n, _)| base(n) == name);
    match (found.next(), found.next()) {
        (Some((_, b)), None) => Ok(b),
        (None, _) => refuse(format!("the bundle has no {name}")),
        (Some(_), Some(_)) => refuse(format!("the bundle has {name} twice")),
    }
}

/// `count·63` counts in `[0, 255]`, as rows of 63, each non-decreasing.
fn cdf_rows(v: &Value, count: u64, what: &str) -> R<Vec<Vec<i64>>> {
    let all = source::flat(v, 0, 255, what)?;
    if all.len() as u64 != count * 63 {
        return refuse(format!("{what}: {} integers, not {count}·63", all.len()));
    }
    let rows: Vec<Vec<i64>> = all.chunks(63).map(<[i64]>::to_vec).collect();
    if let Some(i) = rows.iter().position(|r| r.windows(2).any(|w| w[0] > w[1])) {
        return refuse(format!("{what}: row {i} decreases"));
    }
    Ok(rows)
}

/// `norm.json`'s members that the scale path reads.
struct Norm {
    pmf: Vec<Vec<i64>>,
    bounds: Vec<i64>,
    cdfs_y: Vec<Vec<i64>>,
    cdfs_uv: Vec<Vec<i64>>,
    gain_y: Vec<i64>,
    gain_uv: Vec<i64>,
}

fn norm(bytes: &[u8]) -> R<Norm> {
    let doc = source::parse(bytes, "norm.json")?;
    let m = source::object(&doc, "norm.json")?;
    let get = |k: &str| source::member(m, k, "norm.json");
    // pmf: R ≥ 32 rows, each w ≥ 1 non-negative integers summing to 256, all of one width.
    let rows = source::array(get("pmf")?, "pmf")?;
    if rows.len() < 32 {
        return refuse(format!("pmf: {} rows, fewer than 32", rows.len()));
    }
    let mut pmf = Vec::with_capacity(rows.len());
    for (i, r) in rows.iter().enumerate() {
        let what = format!("pmf[{i}]");
        let p = source::flat_row(r, 0, I64.1, &what)?;
        if p.is_empty() || pmf.first().is_some_and(|p0: &Vec<i64>| p0.len() != p.len()) {
            return refuse(format!("{what}: empty, or not the width of row 0"));
        }
        if p.iter().map(|&x| i128::from(x)).sum::<i128>() != 256 {
            return refuse(format!("{what}: does not sum to 256"));
        }
        pmf.push(p);
    }
    let bounds = source::flat_row(get("bounds")?, 0, 255, "bounds")?;
    if bounds.len() < 32 {
        return refuse(format!("bounds: {} integers, fewer than 32", bounds.len()));
    }
    source::int_in(get("per_channel")?, 16, 16, "per_channel")?;
    let cdfs_y = cdf_rows(get("cdfs_y")?, CY, "cdfs_y")?;
    let cdfs_uv = cdf_rows(get("cdfs_uv")?, CUV, "cdfs_uv")?;
    let gain_y = source::nested(get("gain_y")?, &[CY], I64.0, I64.1, "gain_y")?;
    let gain_uv = source::nested(get("gain_uv")?, &[CUV], I64.0, I64.1, "gain_uv")?;
    Ok(Norm {
        pmf,
        bounds,
        cdfs_y,
        cdfs_uv,
        gain_y,
        gain_uv,
    })
}

/// A `{ "dims", "v" }` member: its dims (each a `u32` value) and its values, `v` holding exactly
/// the product of `dims` integers in `[lo, hi]`.
fn tensor(m: &Map<String, Value>, key: &str, lo: i128, hi: i128, what: &str) -> R<(Vec<u64>, Vec<i64>)> {
    let at = format!("{what}.{key}");
    let t = source::object(source::member(m, key, what)?, &at)?;
    let dims: Vec<u64> = source::flat_row(source::member(t, "dims", &at)?, U32.0, U32.1, &format!("{at}.dims"))?
        .into_iter()
        .map(|d| d as u64)
        .collect();
    let n = dims.iter().try_fold(1u128, |n, &d| n.checked_mul(u128::from(d)));
    let v = source::flat_row(source::member(t, "v", &at)?, lo, hi, &format!("{at}.v"))?;
    if n != Some(v.len() as u128) {
        return refuse(format!(
            "{at}: {} values, not the product of its dims {dims:?}",
            v.len()
        ));
    }
    Ok((dims, v))
}

/// One block of Table 13.6-A: `cout`, the kernel side, its weights, biases and shifts.
struct Block {
    cout: u64,
    k: u32,
    weights: Vec<i64>,
    bias: Vec<i64>,
    shifts: Vec<i64>,
}

/// Reads and checks one weights file's nine members against Table 13.6-A's shapes.
fn blocks(bytes: &[u8], cz: u64, what: &str) -> R<[Block; 3]> {
    let doc = source::parse(bytes, what)?;
    let m = source::object(&doc, what)?;
    let names = [
        ("conv1.weight", "conv1.bias", "onnx::Pow_85", 1u32),
        ("depthwise.weight", "depthwise.bias", "onnx::Pow_91", 3),
        ("pointwise.weight", "pointwise.bias", "onnx::Pow_97", 1),
    ];
    let mut cin = cz;
    let mut out = Vec::with_capacity(3);
    for (i, (w, b, s, k)) in names.into_iter().enumerate() {
        let (wd, weights) = tensor(m, w, I64.0, I64.1, what)?;
        let k64 = u64::from(k);
        // [cout, cin, k, k]; block 3's cout is 16·Cz.
        let cout = match wd.as_slice() {
            [c, ci, kh, kw] if *ci == cin && *kh == k64 && *kw == k64 && *c >= 1 => *c,
            _ => return refuse(format!("{what}.{w}: dims {wd:?}, not [C, {cin}, {k}, {k}]")),
        };
        if i == 2 && cout != 16 * cz {
            return refuse(format!("{what}.{w}: C3 = {cout}, not 16·{cz}"));
        }
        let (bd, bias) = tensor(m, b, I64.0, I64.1, what)?;
        if bd != [cout] {
            return refuse(format!("{what}.{b}: dims {bd:?}, not [{cout}]"));
        }
        let (sd, shifts) = tensor(m, s, 0, 127, what)?;
        if sd != [1, cout, 1, 1] {
            return refuse(format!("{what}.{s}: dims {sd:?}, not [1, {cout}, 1, 1]"));
        }
        out.push(Block {
            cout,
            k,
            weights,
            bias,
            shifts,
        });
        cin = cout;
    }
    let [a, b, c]: [Block; 3] = out.try_into().map_err(|_| "three blocks".to_string())?;
    Ok([a, b, c])
}

/// The scale graph of one plane (§13.6.1).
fn scale_graph(cz: u64, blocks: &[Block; 3], gains: &[i64]) -> R<Vec<u8>> {
    let mut f = Form::new();
    let z = f.input(cz, -31, 32, 4, 4);
    let mut x = f.op1(opcode::CLAMP, &[z], cz, clamp_params(-128, 127));
    for (i, b) in blocks.iter().enumerate() {
        if i > 0 {
            let c = f.channels(x);
            x = f.op1(opcode::RELU, &[x], c, vec![]);
            x = f.op1(opcode::CLAMP, &[x], c, clamp_params(-128, 127));
        }
        let w_bytes = weight_width(&b.weights);
        let rq = RqW {
            round: 0,
            bias: 1,
            m_kind: 0,
            s_kind: 2,
            m_bytes: 0,
            b_bytes: wide_width(&b.bias),
            mult: vec![],
            shift: b.shifts.iter().map(|&s| s as u8).collect(),
            bias_v: b.bias.clone(),
        };
        let pad = fault!("jpegai-conv-unpadded", (b.k - 1) / 2, 0);
        let params = P::new()
            .u32(b.cout as u32)
            .u32(b.k)
            .u32(b.k)
            .u32(1)
            .u32(1)
            .u32(pad)
            .u32(pad)
            .u32(1)
            .u8(w_bytes)
            .zeros(3);
        let params = rq.write(params).ints(&b.weights, w_bytes).bytes();
        x = f.op1(opcode::CONV, &[x], b.cout, params);
    }
    x = f.op1(opcode::PIXEL_SHUFFLE, &[x], cz, P::new().u32(4).bytes());
    x = f.op1(opcode::ABS, &[x], cz, vec![]);
    x = f.op1(opcode::CLAMP, &[x], cz, clamp_params(0, 3967));
    let rq = RqW {
        round: 0,
        bias: fault!("jpegai-gain-post", 1, 2), // pre
        m_kind: 0,
        s_kind: 1,
        m_bytes: 0,
        b_bytes: wide_width(gains),
        mult: vec![],
        shift: vec![0],
        bias_v: gains.to_vec(),
    };
    let v = f.op1(opcode::RESCALE, &[x], cz, rq.write(P::new()).bytes());
    f.bytes(&[v])
}

/// Reads the bundle with every load check of §13.6.1 and lowers its two scale graphs.
pub fn read(files: &[(String, Vec<u8>)]) -> R<Bundle> {
    let Norm {
        pmf,
        bounds,
        cdfs_y,
        cdfs_uv,
        gain_y,
        gain_uv,
    } = norm(file(files, "norm.json")?)?;
    let by = blocks(file(files, "hs_y.json")?, CY, "hs_y.json")?;
    let buv = blocks(file(files, "hs_uv.json")?, CUV, "hs_uv.json")?;
    let hs_y = scale_graph(CY, &by, &gain_y)?;
    let hs_uv = scale_graph(CUV, &buv, &gain_uv)?;
    Ok(Bundle {
        pmf,
        bounds,
        cdfs_y,
        cdfs_uv,
        gain_y,
        gain_uv,
        hs_y,
        hs_uv,
    })
}

/// `jpegai-int/1` as a lowering: the graphs `hs_y`, `hs_uv`.
pub fn lower(files: &[(String, Vec<u8>)]) -> R<Vec<(String, Vec<u8>)>> {
    let b = read(files)?;
    Ok(vec![("hs_y".to_string(), b.hs_y), ("hs_uv".to_string(), b.hs_uv)])
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A small bundle that meets every load check, as `(name, bytes)` files; `edit` changes
    /// `norm.json`'s and the weights' JSON text before they are written.
    pub fn bundle(edit: &dyn Fn(&str, String) -> String) -> Vec<(String, Vec<u8>)> {
        let row: Vec<String> = (0..63).map(|i| if i < 31 { "0" } else { "200" }.to_string()).collect();
        let rows = |n: usize| vec![row.join(","); n].join(",");
        let pmf = vec!["[128,64,64]"; 32].join(",");
        let bounds = vec!["4"; 32].join(",");
        let norm = format!(
            r#"{{"bounds":[{bounds}],"cdfs_uv":[{}],"cdfs_y":[{}],"gain_uv":[{}],"gain_y":[{}],"mean_scale":"x","per_channel":16,"pmf":[{pmf}]}}"#,
            rows(96),
            rows(160),
            vec!["1"; 96].join(","),
            vec!["-1"; 160].join(","),
        );
        let weights = |cz: usize| {
            let t = |dims: &str, n: usize, v: &str| format!(r#"{{"dims":[{dims}],"v":[{}]}}"#, vec![v; n].join(","));
            format!(
                r#"{{"conv1.bias":{},"conv1.weight":{},"depthwise.bias":{},"depthwise.weight":{},"onnx::Pow_85":{},"onnx::Pow_91":{},"onnx::Pow_97":{},"pointwise.bias":{},"pointwise.weight":{}}}"#,
                t("1", 1, "8"),
                t(&format!("1,{cz},1,1"), cz, "1"),
                t("1", 1, "0"),
                t("1,1,3,3", 9, "1"),
                t("1,1,1,1", 1, "3"),
                t("1,1,1,1", 1, "2"),
                t(&format!("1,{},1,1", 16 * cz), 16 * cz, "1"),
                t(&(16 * cz).to_string(), 16 * cz, "-5"),
                t(&format!("{},1,1,1", 16 * cz), 16 * cz, "3"),
            )
        };
        vec![
            ("norm.json".into(), edit("norm.json", norm).into_bytes()),
            (
                "weights/hs_uv.json".into(),
                edit("hs_uv.json", weights(96)).into_bytes(),
            ),
            ("weights/hs_y.json".into(), edit("hs_y.json", weights(160)).into_bytes()),
        ]
    }

    fn same(_: &str, s: String) -> String {
        s
    }

    #[test]
    fn the_small_bundle_loads_and_its_tables_have_their_sizes() {
        let b = read(&bundle(&same)).unwrap();
        // §13.6.1: cdfs_y is 160·63 counts, cdfs_uv 96·63; gains 160 and 96.
        assert_eq!((b.cdfs_y.len(), b.cdfs_y[0].len()), (160, 63));
        assert_eq!((b.cdfs_uv.len(), b.cdfs_uv[0].len()), (96, 63));
        assert_eq!((b.gain_y.len(), b.gain_uv.len()), (160, 96));
        // The scale graph: z [160, 4, 4] → … → C3 = 16·160 = 2560 channels → pixel_shuffle(4)
        // → [160, 16, 16]; twelve operators, thirteen tensors.
        let g = crate::whg1::read(&b.hs_y).unwrap();
        assert_eq!((g.ops.len(), g.tensors.len()), (12, 13));
        assert_eq!(g.tensors[8].channels, 2560);
        assert_eq!(g.tensors[12].channels, 160);
        assert_eq!((g.inputs[0].max_h, g.inputs[0].max_w), (4, 4));
        assert_eq!(g.tensors[0].policy, crate::whg1::Policy::Check(-31, 32));
        let names: Vec<&str> = g.ops.iter().map(|o| o.name()).collect();
        assert_eq!(
            names,
            [
                "clamp",
                "conv",
                "relu",
                "clamp",
                "conv",
                "relu",
                "clamp",
                "conv",
                "pixel_shuffle",
                "abs",
                "clamp",
                "rescale"
            ]
        );
    }

    #[test]
    fn each_load_check_refuses() {
        let cases: [(&str, &str, &str); 8] = [
            // a bound of 256
            ("norm.json", r#""bounds":[4,"#, r#""bounds":[256,"#),
            // 31 pmf rows
            ("norm.json", r#""pmf":[[128,64,64],"#, r#""pmf":["#),
            // a pmf row summing to 255
            ("norm.json", r#""pmf":[[128,64,64]"#, r#""pmf":[[128,64,63]"#),
            // per_channel 15
            ("norm.json", r#""per_channel":16"#, r#""per_channel":15"#),
            // a decreasing cdf row
            ("norm.json", r#""cdfs_y":[0,"#, r#""cdfs_y":[1,"#),
            // a shift of 128
            (
                "hs_y.json",
                r#""onnx::Pow_85":{"dims":[1,1,1,1],"v":[3]}"#,
                r#""onnx::Pow_85":{"dims":[1,1,1,1],"v":[128]}"#,
            ),
            // a bias past i64
            (
                "hs_uv.json",
                r#""conv1.bias":{"dims":[1],"v":[8]}"#,
                r#""conv1.bias":{"dims":[1],"v":[9223372036854775808]}"#,
            ),
            // pointwise's C3 not 16·Cz
            ("hs_uv.json", r#""dims":[1536,1,1,1]"#, r#""dims":[1535,1,1,1]"#),
        ];
        for (file, from, to) in cases {
            let edited = bundle(&|name, s| {
                if name == file {
                    assert!(s.contains(from), "{from}");
                    s.replacen(from, to, 1)
                } else {
                    s
                }
            });
            assert!(read(&edited).is_err(), "{file}: {to}");
        }
        // A missing member, and a missing file.
        let no_depthwise = bundle(&|name, s| {
            if name == "hs_y.json" {
                s.replace("depthwise.weight", "depthwise.w")
            } else {
                s
            }
        });
        assert!(read(&no_depthwise).is_err());
        let mut files = bundle(&same);
        files.remove(0);
        assert!(read(&files).is_err());
    }
}
