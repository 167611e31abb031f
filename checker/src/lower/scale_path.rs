//! The scale path and the entropy decodes of `wai.image.jpegai` (integer-operators §13.6.1), as the
//! project's scale-path records (docs/protocol.md, *The jpegai scale path*): a line with a
//! `"bundle"` member.
//!
//! **Filling.** The bundle is read with every load check of §13.6.1 and its two scale graphs are
//! lowered ([`crate::lower::jpegai`]) and loaded against `acc64` (docs/assumptions.md L7); a
//! refusal is `"load": "model_mismatch"` with no planes. Otherwise each plane (luma `y`: `C = 160`,
//! `cdfs_y`, `hs_y`, SORP, `skip = 0`; chroma `uv`: `C = 96`, `cdfs_uv`, `hs_uv`, SORS,
//! `skip = 160`) is decoded on its own, a refused plane not stopping the other (L7):
//!
//! 1. a fresh E8 `fac` decode over `soz`: `skip` rows of 16 symbols with `cdfs_y`'s rows,
//!    discarded, then `C` rows of 16 with the plane's rows; `z[c][y][x] = sym_{c, 4y+x} − 31`;
//! 2. the scale graph on `z [C, 4, 4]` gives `v [C, 16, 16]`;
//! 3. `mask = coded(v, 382)` (written 0/1), `likely = block_stat(v; 8, 6, 0, 4351)`,
//!    `rvs = band_lookup(likely, [1003, 1352, 1937], [[−31, 20, 122, 181], [−80, −31, 71, 130]],
//!    row 0 when the channel's GRFS flag is set, else row 1)`, `σ_idx = scale_index(v + rvs, 7, 32)`;
//! 4. a fresh E8 `sgm` decode over the plane's latent segment with `T_y` from every `pmf` row and
//!    `B_y[σ] = bounds[σ]` for `σ < 32`, one span per channel (its 256 positions in raster order),
//!    giving `y_q`, 0 at every unmasked position.
//!
//! A plane refused by a decode is `{"refuse": code}` (`stream_exhausted` for E8's window).
//! The stage operators are the checker's own ([`crate::stage`]).

use crate::bounds::Profile;
use crate::bounds::certificate;
use crate::canon::{self, J};
use crate::lower::{self, jpegai};
use crate::request::{LineError, members};
use crate::run::{Given, Outcome, Sequence};
use crate::stage::block_stat::{self, DecTensor};
use crate::stage::dec::Dec;
use crate::stage::mans_decode::{self, SpanIn};
use crate::stage::scalar;
use crate::whg1::Graph;
use crate::whg1::load;
use serde_json::Value;

/// One plane's outputs, each `[C, …]` in CHW order.
struct PlaneOut {
    c: u64,
    z: Vec<i64>,
    v: Vec<i64>,
    mask: Vec<bool>,
    likely: Vec<Dec>,
    sigma: Vec<Dec>,
    y_q: Vec<i64>,
}

/// What one plane reads.
struct Plane<'a> {
    c: usize,
    rows: &'a [Vec<i64>],
    skip: usize,
    graph: &'a Graph,
    latent: &'a [u8],
    grfs: &'a [bool],
}

fn dec(v: i64) -> Dec {
    Dec::from_i128(i128::from(v))
}

/// The mask, `likely` and `σ_idx` of every position.
type Positions = (Vec<bool>, Vec<Dec>, Vec<Dec>);

/// Step 3 at every channel and position of `v [C, 16, 16]`: the mask, `likely` and `σ_idx`.
fn positions(v: &[i64], c: usize, grfs: &[bool]) -> Result<Positions, &'static str> {
    let vd: Vec<Dec> = v.iter().map(|&x| dec(x)).collect();
    let thr = dec(fault!("scale-path-coded-383", 382, 383));
    let mask: Vec<bool> = vd.iter().map(|x| scalar::coded(x, &thr)).collect();
    let x = DecTensor {
        shape: [c as u64, 16, 16],
        data: vd,
    };
    let likely = block_stat::block_stat(&x, &dec(8), &dec(6), &dec(0), &dec(4351)).map_err(|r| r.code.name())?;
    let edges = [dec(1003), dec(1352), dec(1937)];
    let table = [
        [-31, 20, 122, 181].map(dec).to_vec(),
        [-80, -31, 71, 130].map(dec).to_vec(),
    ];
    let (row0, row1, s, n) = (dec(0), dec(1), dec(7), dec(32));
    let mut sigma = Vec::with_capacity(x.data.len());
    for (i, (vi, li)) in x.data.iter().zip(&likely).enumerate() {
        let set = fault!("scale-path-grfs-rows-swapped", grfs[i / 256], !grfs[i / 256]);
        let row = if set { &row0 } else { &row1 };
        let rvs = scalar::band_lookup(li, &edges, &table, row).map_err(|r| r.code.name())?;
        sigma.push(scalar::scale_index(&Dec::sum(&[vi, rvs]), &s, &n).map_err(|r| r.code.name())?);
    }
    Ok((mask, likely, sigma))
}

/// Decodes one plane: its outputs, or the code that refuses it.
fn plane(b: &jpegai::Bundle, p: &Plane, soz: &[u8]) -> Result<Result<PlaneOut, &'static str>, LineError> {
    // 1. The hyper-latent: skip rows with cdfs_y's rows, then C rows with the plane's.
    let rows: Vec<Vec<Dec>> = b.cdfs_y[..p.skip]
        .iter()
        .chain(&p.rows[..p.c])
        .map(|r| r.iter().map(|&x| dec(x)).collect())
        .collect();
    let lengths = vec![dec(16); rows.len()];
    let syms = match mans_decode::decode_fac(soz, &rows, &lengths) {
        Ok(s) => s,
        Err(r) => return Ok(Err(r.code.name())),
    };
    let offset = fault!("scale-path-z-offset-32", 31, 32);
    let z: Vec<i64> = syms[p.skip..].iter().flatten().map(|&s| s - offset).collect();
    // 2. The scale graph.
    let c = p.c as u64;
    let given = Given {
        shape: [c, 4, 4],
        data: z.iter().map(|&x| i128::from(x)).collect(),
    };
    let v = match Sequence::new(p.graph).decode(&[given], &[])? {
        Outcome::Outputs(mut ts) => ts.swap_remove(0),
        Outcome::Refused(code) => return Ok(Err(code.name())),
    };
    if v.data.len() != p.c * 256 {
        return Err(LineError::Bug("the scale graph's output is not [C, 16, 16]".into()));
    }
    // 3. The stage operators at every channel and position.
    let (mask, likely, sigma) = match positions(&v.data, p.c, p.grfs) {
        Ok(t) => t,
        Err(code) => return Ok(Err(code)),
    };
    // 4. The latent.
    let pmf: Vec<Vec<Dec>> = b.pmf.iter().map(|r| r.iter().map(|&x| dec(x)).collect()).collect();
    let bounds: Vec<Dec> = b.bounds[..32].iter().map(|&x| dec(x)).collect();
    let spans: Vec<SpanIn> = (0..p.c)
        .map(|ch| SpanIn {
            mask: mask[ch * 256..(ch + 1) * 256].to_vec(),
            sigma: sigma[ch * 256..(ch + 1) * 256].to_vec(),
        })
        .collect();
    let y_q = match mans_decode::decode_sgm(p.latent, &pmf, &bounds, &spans) {
        Ok(s) => s.into_iter().flatten().collect(),
        Err(r) => return Ok(Err(r.code.name())),
    };
    Ok(Ok(PlaneOut {
        c,
        z,
        v: v.data,
        mask,
        likely,
        sigma,
        y_q,
    }))
}

fn tensor<T: ToString>(data: &[T], shape: [u64; 3]) -> J {
    J::obj(vec![
        ("data", J::Arr(data.iter().map(|x| J::Str(x.to_string())).collect())),
        ("shape", J::Arr(shape.iter().map(J::int).collect())),
    ])
}

fn plane_json(p: Result<PlaneOut, &'static str>) -> J {
    match p {
        Err(code) => J::obj(vec![("refuse", J::str(code))]),
        Ok(p) => {
            let s = [p.c, 16, 16];
            let mask: Vec<u8> = p.mask.iter().map(|&m| u8::from(m)).collect();
            J::obj(vec![
                ("likely", tensor(&p.likely, s)),
                ("mask", tensor(&mask, s)),
                ("sigma_idx", tensor(&p.sigma, s)),
                ("v", tensor(&p.v, s)),
                ("y_q", tensor(&p.y_q, s)),
                ("z", tensor(&p.z, [p.c, 4, 4])),
            ])
        }
    }
}

fn bools(v: &Value, n: usize, field: &str) -> Result<Vec<bool>, String> {
    let a = v.as_array().ok_or_else(|| format!("{field}: not an array"))?;
    if a.len() != n {
        return Err(format!("{field}: {} flags, not {n}", a.len()));
    }
    a.iter()
        .enumerate()
        .map(|(i, b)| b.as_bool().ok_or_else(|| format!("{field}[{i}]: not true or false")))
        .collect()
}

/// The echo of a checked JSON value (strings, booleans, arrays and objects only).
fn echo(v: &Value) -> J {
    match v {
        Value::String(s) => J::Str(s.clone()),
        Value::Bool(b) => J::Bool(*b),
        Value::Array(a) => J::Arr(a.iter().map(echo).collect()),
        Value::Object(m) => J::Obj(m.iter().map(|(k, x)| (k.clone(), echo(x))).collect()),
        Value::Null => J::Null,
        Value::Number(n) => J::Str(n.to_string()),
    }
}

/// Fills one scale-path record (a parsed line with a `"bundle"` member).
pub fn fill_line(v: &Value) -> Result<String, LineError> {
    let m = members(v, "", &["bundle", "id", "payload"], &["expect"]).map_err(LineError::Bad)?;
    let id = match m["id"].as_str() {
        Some(s) if canon::printable(s) => s,
        Some(_) => return Err(LineError::Bad("id: not printable ASCII".into())),
        None => return Err(LineError::Bad("id: not a string".into())),
    };
    let files: Vec<(String, Vec<u8>)> = lower::files_field(&m["bundle"], "bundle")
        .map_err(LineError::Bad)?
        .into_iter()
        .map(|f| (f.name, f.bytes))
        .collect();
    let pm = members(
        &m["payload"],
        "payload",
        &["grfs_uv", "grfs_y", "sorp", "sors", "soz"],
        &[],
    )
    .map_err(LineError::Bad)?;
    let bad = |e: String| LineError::Bad(format!("payload.{e}"));
    let soz = lower::hex_field(&pm["soz"], "soz").map_err(bad)?;
    let sorp = lower::hex_field(&pm["sorp"], "sorp").map_err(bad)?;
    let sors = lower::hex_field(&pm["sors"], "sors").map_err(bad)?;
    let grfs_y = bools(&pm["grfs_y"], jpegai::CY as usize, "grfs_y").map_err(bad)?;
    let grfs_uv = bools(&pm["grfs_uv"], jpegai::CUV as usize, "grfs_uv").map_err(bad)?;

    let mut expect = vec![];
    // The bundle's load checks, the lowering, and the load of both graphs against acc64.
    let loaded = jpegai::read(&files).ok().and_then(|b| {
        let gy = load::check(&b.hs_y).ok()?;
        let guv = load::check(&b.hs_uv).ok()?;
        for g in [&gy, &guv] {
            if !certificate::verdict(&[("", &g.graph, &g.pass)]).meets(Profile::Acc64) {
                return None;
            }
        }
        Some((b, gy, guv))
    });
    match loaded {
        None => expect.push(("load", J::str("model_mismatch"))),
        Some((b, gy, guv)) => {
            expect.push(("load", J::str("ok")));
            let y = Plane {
                c: jpegai::CY as usize,
                rows: &b.cdfs_y,
                skip: 0,
                graph: &gy.graph,
                latent: &sorp,
                grfs: &grfs_y,
            };
            let uv = Plane {
                c: jpegai::CUV as usize,
                rows: &b.cdfs_uv,
                skip: fault!("scale-path-chroma-no-skip", jpegai::CY as usize, 0),
                graph: &guv.graph,
                latent: &sors,
                grfs: &grfs_uv,
            };
            expect.push(("y", plane_json(plane(&b, &y, &soz)?)));
            expect.push(("uv", plane_json(plane(&b, &uv, &soz)?)));
        }
    }
    let filled = J::obj(vec![
        ("bundle", echo(&m["bundle"])),
        ("expect", J::obj(expect)),
        ("id", J::str(id)),
        ("payload", echo(&m["payload"])),
    ]);
    canon::write(&filled).map_err(LineError::Bug)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lower::jpegai::tests::bundle;

    fn record(files: &[(String, Vec<u8>)], soz: &str, grfs_y: usize) -> String {
        let b: Vec<String> = files
            .iter()
            .map(|(n, x)| format!("\"{n}\":\"{}\"", hex::encode(x)))
            .collect();
        format!(
            r#"{{"bundle":{{{}}},"id":"t","payload":{{"grfs_uv":[{}],"grfs_y":[{}],"sorp":"","sors":"","soz":"{soz}"}}}}"#,
            b.join(","),
            vec!["true"; 96].join(","),
            vec!["false"; grfs_y].join(","),
        )
    }

    fn expect(line: &str) -> Value {
        match fill_line(&serde_json::from_str(line).unwrap()) {
            Ok(s) => serde_json::from_str::<Value>(&s).unwrap()["expect"].clone(),
            Err(LineError::Bad(m) | LineError::Bug(m)) => panic!("{m}"),
        }
    }

    #[test]
    fn step_3_by_hand() {
        // One channel, every v = 400: coded (400 > 382); each 8×8 block sums 64·400 = 25600 and
        // R_half_up(25600, 6) = 400, within [0, 4351]; band = #{e ≤ 400} = 0.
        // GRFS set: rvs = −31, σ = clamp(⌊(369 + 64)/128⌋, 0, 31) = ⌊433/128⌋ = 3.
        // GRFS clear: rvs = −80, σ = ⌊(320 + 64)/128⌋ = 3 (a tie, rounded up).
        let (mask, likely, sigma) = positions(&[400; 256], 1, &[true]).unwrap();
        assert!(mask.iter().all(|&m| m));
        assert!(likely.iter().all(|l| *l == dec(400)));
        assert!(sigma.iter().all(|s| *s == dec(3)));
        let (_, _, sigma) = positions(&[400; 256], 1, &[false]).unwrap();
        assert!(sigma.iter().all(|s| *s == dec(3)));
        // v = 2000: band 3 (2000 ≥ 1003, 1352, 1937), rvs = 181 (row 0): ⌊(2181 + 64)/128⌋ = 17.
        // v = 382 is not coded; v = −9000: likely clamps to 0, band 0, σ clamps to 0.
        let (_, _, sigma) = positions(&[2000; 256], 1, &[true]).unwrap();
        assert_eq!(sigma[0], dec(17));
        let (mask, likely, sigma) = positions(&[382; 256], 1, &[true]).unwrap();
        assert!(!mask[0] && likely[0] == dec(382));
        let (_, likely, sigma2) = positions(&[-9000; 256], 1, &[true]).unwrap();
        assert_eq!((likely[0].clone(), sigma2[0].clone()), (dec(0), dec(0)));
        // ⌊(382 − 31 + 64)/128⌋ = 3.
        assert_eq!(sigma[0], dec(3));
        // A plane whose first row is 6400 and the rest 0: each top block sums 8·6400 = 51200 and
        // R_half_up(51200, 6) = 800 over the whole block; the bottom blocks are 0.
        let mut v = vec![0i64; 256];
        v[..16].fill(6400);
        let (_, likely, _) = positions(&v, 1, &[true]).unwrap();
        assert_eq!(likely[7 * 16 + 7], dec(800));
        assert_eq!(likely[7 * 16 + 8], dec(800));
        assert_eq!(likely[8 * 16], dec(0));
    }

    #[test]
    fn a_refused_bundle_has_no_planes_and_an_empty_stream_refuses_both() {
        let ok = bundle(&|_, s| s);
        let e = expect(&record(&ok, "", 160));
        assert_eq!(e["load"], "ok");
        // E8's init reads LE64(L) of the 8 zero bytes: h = 0, no sentinel.
        assert_eq!(e["y"], serde_json::json!({"refuse": "stream_exhausted"}));
        assert_eq!(e["uv"], serde_json::json!({"refuse": "stream_exhausted"}));
        let refused = bundle(&|n, s| {
            if n == "norm.json" {
                s.replace("\"per_channel\":16", "\"per_channel\":17")
            } else {
                s
            }
        });
        assert_eq!(
            expect(&record(&refused, "", 160)),
            serde_json::json!({"load": "model_mismatch"})
        );
    }

    #[test]
    fn record_errors() {
        let ok = bundle(&|_, s| s);
        for (line, field) in [
            (record(&ok, "", 159), "payload.grfs_y"),
            (record(&ok, "0", 160), "payload.soz"),
            (record(&ok, "", 160).replace("\"id\":\"t\",", ""), "id"),
            (record(&ok, "", 160).replace("\"sorp\":\"\",", ""), "payload.sorp"),
            (
                record(&ok, "", 160).replace("\"norm.json\":\"7b", "\"norm.json\":\"7B"),
                "bundle.norm.json",
            ),
        ] {
            match fill_line(&serde_json::from_str(&line).unwrap()) {
                Err(LineError::Bad(m)) => assert!(m.starts_with(field), "{m}"),
                _ => panic!("{field}: not a line error"),
            }
        }
    }

    /// Random streams and random edits of the weights' numbers: every record fills (a plane's
    /// outputs or its refusal), never a panic or a checker bug.
    #[test]
    fn hostile_records_fill() {
        use crate::seeded::Rng;
        let mut r = Rng::new(7);
        let mut decoded = 0;
        for i in 0..7 {
            let digits = ["9", "127", "128", "300", "-7", "4000000000", "9223372036854775807"];
            let d = digits[i % digits.len()];
            let files = bundle(&|n, s| {
                if n == "hs_y.json" && i % 3 == 1 {
                    s.replacen("\"v\":[3", &format!("\"v\":[{d}"), 1)
                } else if n == "norm.json" && i % 3 == 2 {
                    s.replacen("\"gain_y\":[-1", &format!("\"gain_y\":[{d}"), 1)
                } else {
                    s
                }
            });
            let stream = |r: &mut Rng, n: u64| -> String {
                (0..r.range(0, n as i64))
                    .map(|_| format!("{:02x}", r.below(256)))
                    .collect()
            };
            let soz = stream(&mut r, 4000);
            let line = record(&files, &soz, 160)
                .replace("\"sorp\":\"\"", &format!("\"sorp\":\"{}\"", stream(&mut r, 3000)))
                .replace("\"sors\":\"\"", &format!("\"sors\":\"{}\"", stream(&mut r, 3000)));
            let e = expect(&line);
            if e["y"].get("v").is_some() {
                decoded += 1;
            }
        }
        // Some planes decode: the small bundle's rows give every hyper-latent symbol 31 or an
        // escape, so most streams carry a whole hyper-latent.
        assert!(decoded > 0);
    }
}
