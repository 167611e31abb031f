//! Lowerings of the registered forms (integer-operators §13, §14.3) and lowering records
//! (docs/protocol.md, *Lowerings*).
//!
//! | lowering | module | capabilities | roles |
//! |---|---|---|---|
//! | `int_synth/1` | [`int_synth`] | `wai.neural.int_synth` | `synth` |
//! | `whm1/1` | [`whm`] | `wai.neural.int_hyper`, `wai.video.int_hyper` | `h_s`, `g_s` |
//! | `whm1/1` | [`whm`] | `wai.splat.int_codec` | `g_s` |
//! | `wam1/1` | [`whm::wam1`] | `wai.audio.int_codec` | `g_s` |
//! | `wmb1/1` | [`whm::wmb1`] | `wai.neural.int_mlicpp` | `h_s`, `entropy`, `g_s` |
//! | `world/1` | [`whm::world`] | `wai.world.model` | `T`, `g_s` |
//! | `jpegai-int/1` | [`jpegai`] | `wai.image.jpegai` | `hs_y`, `hs_uv` |
//!
//! [`scale_path`] decodes through the `jpegai-int/1` bundle's scale graphs: the scale path and the
//! entropy decodes of §13.6.1, as scale-path records.
//!
//! **A set's outcome**, in order (each refusal with the capability's code: `payload_malformed` for
//! `int_synth/1`, `model_mismatch` for the others):
//!
//! 1. the lowering's own load checks, then the caps on the lowered bytes (docs/assumptions.md L1:
//!    every input `[C, 1, 1]`, every scalar at the bottom of its range, planned by [`crate::plan`]);
//!    a set refused here has no graphs;
//! 2. each lowered graph's load steps 1–7 and the bounds pass ([`crate::whg1::load::check`]); a set refused
//!    here has its graphs and no certificate;
//! 3. the certificate (§8.5), with `set_sha256` the SHA-256 of the one file for `int_synth/1` and
//!    `null` for the provisional forms and the `jpegai-int/1` bundle (L3, L6);
//! 4. the verdict against the capability's profile, `acc64`, and against the pin's claim (§8.6, L5).

pub mod form;
pub mod int_synth;
pub mod jpegai;
pub mod scale_path;
pub mod source;
pub mod whm;

use crate::bounds::Profile;
use crate::bounds::certificate::{self, Certified};
use crate::canon::{self, J};
use crate::plan::{self, PlanErr, Shape, When};
use crate::request::{Bad, LineError, bad, members};
use crate::whg1::load;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// A §13 lowering.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lowering {
    IntSynth,
    Whm1,
    Wam1,
    Wmb1,
    World,
    JpegaiInt,
}

impl Lowering {
    pub const ALL: [Lowering; 6] = [
        Lowering::IntSynth,
        Lowering::Whm1,
        Lowering::Wam1,
        Lowering::Wmb1,
        Lowering::World,
        Lowering::JpegaiInt,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Lowering::IntSynth => "int_synth/1",
            Lowering::Whm1 => "whm1/1",
            Lowering::Wam1 => "wam1/1",
            Lowering::Wmb1 => "wmb1/1",
            Lowering::World => "world/1",
            Lowering::JpegaiInt => "jpegai-int/1",
        }
    }

    pub fn parse(id: &str) -> Option<Lowering> {
        Lowering::ALL.into_iter().find(|l| l.id() == id)
    }

    /// The capabilities §13.0's table lowers by this lowering.
    pub fn capabilities(self) -> &'static [&'static str] {
        match self {
            Lowering::IntSynth => &["wai.neural.int_synth"],
            Lowering::Whm1 => &["wai.neural.int_hyper", "wai.video.int_hyper", "wai.splat.int_codec"],
            Lowering::Wam1 => &["wai.audio.int_codec"],
            Lowering::Wmb1 => &["wai.neural.int_mlicpp"],
            Lowering::World => &["wai.world.model"],
            Lowering::JpegaiInt => &["wai.image.jpegai"],
        }
    }

    /// The code every refusal of the capability's set carries (§4; docs/protocol.md).
    pub fn code(self) -> &'static str {
        match self {
            Lowering::IntSynth => "payload_malformed",
            _ => "model_mismatch",
        }
    }

    /// Whether the set is one file (every form but the `jpegai` bundle).
    pub fn one_file(self) -> bool {
        self != Lowering::JpegaiInt
    }
}

/// One file of a set: its name and bytes.
#[derive(Clone, Debug)]
pub struct File {
    pub name: String,
    pub bytes: Vec<u8>,
}

/// What a lowering gives for a set.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The lowered graphs by role, in the lowering's order; empty when refused before lowering.
    pub graphs: Vec<(String, Vec<u8>)>,
    /// The certificate's bytes, when the graphs loaded.
    pub certificate: Option<String>,
    /// `None` when the set is accepted, else the capability's code.
    pub refused: Option<&'static str>,
    /// Why it is refused, for people.
    pub why: String,
}

/// Load step 7's caps on the smallest inputs (docs/assumptions.md L1): every input `[C, 1, 1]`,
/// every scalar at the bottom of its range. `Err` when a size passes a cap; a shape rule that
/// fails on such inputs is not a cap (the decode that meets it refuses).
fn within_caps(bytes: &[u8]) -> Result<(), String> {
    // A graph the reader refuses is refused by its load (step 2 of the outcome).
    let Ok(g) = crate::whg1::read(bytes) else {
        return Ok(());
    };
    let mut shapes = Vec::with_capacity(g.inputs.len());
    for rec in &g.inputs {
        let s = Shape {
            c: g.channels(rec.tensor),
            h: 1,
            w: 1,
        };
        if s.elems() > u128::from(g.max_elems) {
            return Err(format!("input tensor {} is past the caps", rec.tensor));
        }
        shapes.push(s);
    }
    let lows: Vec<i64> = g.scalars.iter().map(|s| s.lo).collect();
    match plan::plan(&g, &shapes, When::Run(&lows)) {
        Err(PlanErr::TooLarge) => Err("a size past the caps on the smallest inputs".into()),
        _ => Ok(()),
    }
}

/// The roles `whm1/1` lowers for a capability.
fn whm1_roles(capability: &str) -> &'static [&'static str] {
    if capability == "wai.splat.int_codec" {
        &["g_s"]
    } else {
        &["h_s", "g_s"]
    }
}

/// Lowers a set and computes its outcome. `Err` is a request error (a capability the lowering does
/// not lower; a one-file form given another number of files).
pub fn run(lowering: Lowering, capability: &str, claim: Option<Profile>, files: &[File]) -> Result<Outcome, String> {
    if !lowering.capabilities().contains(&capability) {
        return Err(format!("capability: {capability} is not lowered by {}", lowering.id()));
    }
    if lowering.one_file() && files.len() != 1 {
        return Err(format!("files: {} files, but {} reads one", files.len(), lowering.id()));
    }
    let code = lowering.code();
    let refused = |graphs: Vec<(String, Vec<u8>)>, certificate: Option<String>, why: String| Outcome {
        graphs,
        certificate,
        refused: Some(code),
        why,
    };
    let lowered = match lowering {
        Lowering::IntSynth => int_synth::lower(&files[0].bytes).map(|b| vec![("synth".to_string(), b)]),
        Lowering::Whm1 => whm::lower(&files[0].bytes, whm1_roles(capability)),
        Lowering::Wam1 => whm::wam1::lower(&files[0].bytes),
        Lowering::Wmb1 => whm::wmb1::lower(&files[0].bytes),
        Lowering::World => whm::world::lower(&files[0].bytes),
        Lowering::JpegaiInt => {
            let fs: Vec<(String, Vec<u8>)> = files.iter().map(|f| (f.name.clone(), f.bytes.clone())).collect();
            jpegai::lower(&fs)
        }
    };
    let graphs = match lowered {
        Ok(g) => g,
        Err(why) => return Ok(refused(Vec::new(), None, why)),
    };
    for (role, bytes) in &graphs {
        if let Err(why) = within_caps(bytes) {
            return Ok(refused(Vec::new(), None, format!("{role}: {why}")));
        }
    }
    let mut checked = Vec::with_capacity(graphs.len());
    for (role, bytes) in &graphs {
        match load::check(bytes) {
            Ok(c) => checked.push(c),
            Err(c) => {
                let why = format!("{role}: refused at load: {}", c.name());
                return Ok(refused(graphs.clone(), None, why));
            }
        }
    }
    let set_sha256 = (lowering == Lowering::IntSynth).then(|| hex::encode(Sha256::digest(&files[0].bytes)));
    let certified: Vec<Certified> = graphs
        .iter()
        .zip(&checked)
        .map(|((role, bytes), c)| Certified {
            name: role.clone(),
            sha256_hex: hex::encode(Sha256::digest(bytes)),
            graph: &c.graph,
            pass: &c.pass,
        })
        .collect();
    let cert = certificate::certificate(&certified, Some(capability), lowering.id(), set_sha256.as_deref());
    let cert = canon::write(&cert)?;
    let views: Vec<_> = certified.iter().map(|c| (c.name.as_str(), c.graph, c.pass)).collect();
    let v = certificate::verdict(&views);
    let why = if !v.meets(Profile::Acc64) {
        "the verdict does not meet acc64".to_string()
    } else if let Some(p) = claim.filter(|&p| !v.meets(p)) {
        format!("the pin claims {}, which the verdict does not meet", p.name())
    } else {
        String::new()
    };
    let refused_code = (!why.is_empty()).then_some(code);
    Ok(Outcome {
        graphs,
        certificate: Some(cert),
        refused: refused_code,
        why,
    })
}

// ---------------------------------------------------------------------------------------------
// Lowering records.

fn printable_str<'a>(v: &'a Value, field: &str) -> Result<&'a str, Bad> {
    match v.as_str() {
        Some(s) if canon::printable(s) => Ok(s),
        Some(_) => bad(field, "not printable ASCII"),
        None => bad(field, "not a string"),
    }
}

/// Lowercase hexadecimal bytes.
pub fn hex_field(v: &Value, field: &str) -> Result<Vec<u8>, Bad> {
    match v.as_str() {
        Some(s) if s.len() % 2 == 0 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) => {
            hex::decode(s).map_err(|e| format!("{field}: {e}"))
        }
        Some(_) => bad(field, "not lowercase hexadecimal bytes"),
        None => bad(field, "not a string"),
    }
}

/// A `{ name: hex }` object of files, in the object's order (names sorted by the JSON reader).
pub fn files_field(v: &Value, field: &str) -> Result<Vec<File>, Bad> {
    let Some(m) = v.as_object() else {
        return bad(field, "not an object");
    };
    let mut out = Vec::with_capacity(m.len());
    for (name, h) in m {
        if !canon::printable(name) {
            return bad(field, "a file name that is not printable ASCII");
        }
        out.push(File {
            name: name.clone(),
            bytes: hex_field(h, &format!("{field}.{name}"))?,
        });
    }
    Ok(out)
}

/// The name of a set's folder in the certificate tree (docs/assumptions.md L3, L4, L6): for one
/// file, the SHA-256 of its bytes (which is the certificate's `set_sha256` for `int_synth/1`); for
/// several, the SHA-256 of their `sha256sum` listing, `<sha256>  <name>` lines in the byte order of
/// the names.
pub fn tree_digest(files: &[File]) -> String {
    if let [one] = files {
        return sha_hex(&one.bytes);
    }
    let mut sorted: Vec<&File> = files.iter().collect();
    sorted.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    let listing: String = sorted
        .iter()
        .map(|f| format!("{}  {}\n", sha_hex(&f.bytes), f.name))
        .collect();
    sha_hex(listing.as_bytes())
}

fn sha_hex(b: &[u8]) -> String {
    hex::encode(Sha256::digest(b))
}

/// Fills one lowering record (a parsed line with a `"lowering"` member).
pub fn fill_line(v: &Value) -> Result<String, LineError> {
    let m = members(v, "", &["capability", "claim", "files", "id", "lowering"], &["expect"]).map_err(LineError::Bad)?;
    let id = printable_str(&m["id"], "id").map_err(LineError::Bad)?;
    let lowering_id = printable_str(&m["lowering"], "lowering").map_err(LineError::Bad)?;
    let Some(lowering) = Lowering::parse(lowering_id) else {
        return Err(LineError::Bad(format!(
            "lowering: {lowering_id:?} is not a lowering of §13"
        )));
    };
    let capability = printable_str(&m["capability"], "capability").map_err(LineError::Bad)?;
    let claim = match &m["claim"] {
        Value::Null => None,
        Value::String(s) if s == "acc32" => Some(Profile::Acc32),
        Value::String(s) if s == "acc64" => Some(Profile::Acc64),
        _ => return Err(LineError::Bad("claim: not null, \"acc32\" or \"acc64\"".into())),
    };
    let files = files_field(&m["files"], "files").map_err(LineError::Bad)?;
    let out = run(lowering, capability, claim, &files).map_err(LineError::Bad)?;
    let expect = J::obj(vec![
        (
            "certificate_sha256",
            out.certificate
                .as_ref()
                .map_or(J::Null, |c| J::str(&sha_hex(c.as_bytes()))),
        ),
        (
            "graphs",
            J::Obj(
                out.graphs
                    .iter()
                    .map(|(role, b)| (role.clone(), J::str(&sha_hex(b))))
                    .collect(),
            ),
        ),
        ("load", J::str(out.refused.unwrap_or("ok"))),
    ]);
    let filled = J::obj(vec![
        ("capability", J::str(capability)),
        ("claim", claim.map_or(J::Null, |p| J::str(p.name()))),
        ("expect", expect),
        (
            "files",
            J::Obj(
                files
                    .iter()
                    .map(|f| (f.name.clone(), J::str(&hex::encode(&f.bytes))))
                    .collect(),
            ),
        ),
        ("id", J::str(id)),
        ("lowering", J::str(lowering.id())),
    ]);
    canon::write(&filled).map_err(LineError::Bug)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(capability: &str, claim: &str, lowering: &str, file: &str) -> String {
        format!(
            r#"{{"capability":"{capability}","claim":{claim},"files":{{"set.json":"{}"}},"id":"t","lowering":"{lowering}"}}"#,
            hex::encode(file)
        )
    }

    fn expect(l: &str) -> Value {
        let filled = match fill_line(&serde_json::from_str(l).unwrap()) {
            Ok(s) => s,
            Err(LineError::Bad(m) | LineError::Bug(m)) => panic!("{m}"),
        };
        serde_json::from_str::<Value>(&filled).unwrap()["expect"].clone()
    }

    const SYNTH: &str = r#"{"layers":[{"bias":[0],"in_ch":1,"k":1,"out_ch":1,"pad":0,"stride":1,"weight":[[[[3]]]]}]}"#;

    #[test]
    fn a_set_that_loads_and_one_whose_claim_fails() {
        let e = expect(&line("wai.neural.int_synth", "null", "int_synth/1", SYNTH));
        assert_eq!(e["load"], "ok");
        assert!(e["certificate_sha256"].is_string());
        assert!(e["graphs"]["synth"].is_string());
        // One layer of weight 3 on [−128, 127]: every interval fits i32, so an acc32 claim holds.
        let e = expect(&line("wai.neural.int_synth", "\"acc32\"", "int_synth/1", SYNTH));
        assert_eq!(e["load"], "ok");
        // Weight −2^24: the accumulator reaches 2^24·128 = 2^31, past i32 (L5: payload_malformed).
        let big = SYNTH.replace("[[[[3]]]]", "[[[[-16777216]]]]");
        let e = expect(&line("wai.neural.int_synth", "\"acc32\"", "int_synth/1", &big));
        assert_eq!(e["load"], "payload_malformed");
        assert!(e["certificate_sha256"].is_string());
    }

    #[test]
    fn refused_before_lowering_has_no_graphs() {
        let e = expect(&line("wai.neural.int_synth", "null", "int_synth/1", r#"{"layers":[]}"#));
        assert_eq!(e["load"], "payload_malformed");
        assert_eq!(e["graphs"], serde_json::json!({}));
        assert_eq!(e["certificate_sha256"], Value::Null);
        // L1: out_pad 2^26 makes a side of 1 + 2^26 on the smallest input: past the caps.
        let caps = SYNTH.replace(r#""pad":0"#, r#""out_pad":67108864,"pad":0"#);
        let e = expect(&line("wai.neural.int_synth", "null", "int_synth/1", &caps));
        assert_eq!(e["load"], "payload_malformed");
        assert_eq!(e["graphs"], serde_json::json!({}));
        // whm1/1: a bias of 2^63 − 1 fails P_ℓ(0) (model_mismatch).
        let whm1 = r#"{"g_s":{"afrac":8,"gf":0,"layers":[{"bias":[9223372036854775807],"c":1,"k":1,"mult":[1],"out":1,"pad":0,"stride":1,"tag":1,"weights":[[[[1]]]]}],"shift":0}}"#;
        let e = expect(&line("wai.splat.int_codec", "null", "whm1/1", whm1));
        assert_eq!(e["load"], "model_mismatch");
        assert_eq!(e["graphs"], serde_json::json!({}));
    }

    /// Random edits of valid sets' JSON text (a character replaced, digits inserted): every outcome
    /// is a value, never a panic, whatever the edit makes of the set.
    #[test]
    fn hostile_sets_never_panic() {
        use crate::seeded::Rng;
        let whm1 = r#"{"h_s":{"afrac":12,"gf":10,"layers":[{"bias":[10,-10],"c":2,"k":3,"mult":[300,-200],"out":2,"pad":1,"stride":1,"tag":1,"weights":[[[[1,2,3],[4,5,6],[7,8,9]],[[1,2,3],[4,5,6],[7,8,9]]],[[[1,2,3],[4,5,6],[7,8,9]],[[1,2,3],[4,5,6],[7,8,9]]]]},{"tag":3},{"beta":[4096,4096],"c":2,"gamma":[[1024,10],[0,1024]],"tag":2},{"slope_frac":4,"slope_q":3,"tag":4}],"shift":8},"g_s":{"afrac":12,"gf":10,"layers":[{"bias":[0],"c":2,"k":2,"mult":[256],"opad":1,"out":1,"pad":0,"stride":2,"tag":0,"weights":[[[[1,2],[3,4]]],[[[5,6],[7,8]]]]}],"shift":8}}"#;
        let wam1 = r#"{"g_s":{"afrac":10,"gf":12,"layers":[{"bias":[100],"c":2,"k":4,"mult":[64],"opad":0,"out":1,"pad":1,"stride":2,"tag":0,"weights":[[[-1493,786,-1751,979]],[[747,-354,-1864,-1081]]]},{"beta":[1048576],"c":1,"gamma":[[4096]],"tag":2}],"shift":6}}"#;
        let net = r#"{"afrac":9,"gf":0,"layers":[{"bias":[0,0],"c":3,"k":1,"mult":[1,1],"out":2,"pad":0,"stride":1,"tag":1,"weights":[[[[1]],[[2]],[[3]]],[[[4]],[[5]],[[6]]]]}],"shift":2}"#;
        let world = format!(
            r#"{{"T":{net},"g_s":{},"latent_channels":2,"rows":[[1],[0]]}}"#,
            net.replace("\"c\":3", "\"c\":2").replace(
                "[[[[1]],[[2]],[[3]]],[[[4]],[[5]],[[6]]]]",
                "[[[[1]],[[2]]],[[[4]],[[5]]]]"
            )
        );
        let wmb1 = format!(r#"{{"afrac":9,"entropy":{net},"g_s":{net},"h_s":{net}}}"#);
        let sets: Vec<(Lowering, &str, String)> = vec![
            (Lowering::IntSynth, "wai.neural.int_synth", SYNTH.into()),
            (Lowering::Whm1, "wai.neural.int_hyper", whm1.into()),
            (Lowering::Wam1, "wai.audio.int_codec", wam1.into()),
            (Lowering::Wmb1, "wai.neural.int_mlicpp", wmb1),
            (Lowering::World, "wai.world.model", world),
        ];
        for (l, cap, text) in &sets {
            let f = File {
                name: "set.json".into(),
                bytes: text.clone().into_bytes(),
            };
            assert!(run(*l, cap, None, &[f]).unwrap().refused.is_none(), "{}", l.id());
        }
        let mut r = Rng::new(13);
        let alphabet = b"0123456789-[]{},:\". e9";
        for i in 0..3000 {
            let (l, cap, text) = &sets[i % sets.len()];
            let mut b = text.clone().into_bytes();
            for _ in 0..r.range(1, 3) {
                let at = r.below(b.len() as u64) as usize;
                if r.pct(50) {
                    b[at] = alphabet[r.below(alphabet.len() as u64) as usize];
                } else {
                    let digits = [
                        "9",
                        "4294967296",
                        "67108864",
                        "9223372036854775807",
                        "-9223372036854775808",
                        "18446744073709551616",
                        "127",
                        "128",
                        "0",
                        "-1",
                    ];
                    let d = digits[r.below(digits.len() as u64) as usize];
                    b.splice(at..at, d.bytes());
                }
            }
            let f = File {
                name: "set.json".into(),
                bytes: b,
            };
            let _ = run(*l, cap, Some(Profile::Acc32), &[f]);
        }
    }

    #[test]
    fn tree_digests() {
        let f = |name: &str, b: &[u8]| File {
            name: name.into(),
            bytes: b.to_vec(),
        };
        // One file: its SHA-256. SHA-256("abc") is FIPS 180-2's example.
        assert_eq!(
            tree_digest(&[f("x.json", b"abc")]),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        // Several: the listing in name order, whatever order they are given in.
        let a = tree_digest(&[f("b", b"2"), f("a", b"1")]);
        let b = tree_digest(&[f("a", b"1"), f("b", b"2")]);
        assert_eq!(a, b);
        let listing = format!("{}  a\n{}  b\n", sha_hex(b"1"), sha_hex(b"2"));
        assert_eq!(a, sha_hex(listing.as_bytes()));
    }

    #[test]
    fn record_errors_name_the_field() {
        let bad = |l: &str| match fill_line(&serde_json::from_str(l).unwrap()) {
            Err(LineError::Bad(m)) => m,
            _ => panic!("{l}: not a line error"),
        };
        assert!(bad(&line("wai.audio.int_codec", "null", "int_synth/1", SYNTH)).starts_with("capability:"));
        assert!(bad(&line("wai.neural.int_synth", "\"acc16\"", "int_synth/1", SYNTH)).starts_with("claim:"));
        assert!(bad(&line("wai.neural.int_synth", "null", "int_synth/2", SYNTH)).starts_with("lowering:"));
        let l = line("wai.neural.int_synth", "null", "int_synth/1", SYNTH)
            .replace("\"set.json\":\"7b", "\"set.json\":\"7B");
        assert!(bad(&l).starts_with("files.set.json:"));
        let l = line("wai.neural.int_synth", "null", "int_synth/1", SYNTH).replace("\"id\":\"t\",", "");
        assert!(bad(&l).starts_with("id:"));
        let l =
            line("wai.neural.int_synth", "null", "int_synth/1", SYNTH).replace("\"id\":\"t\"", "\"id\":\"t\",\"x\":1");
        assert!(bad(&l).starts_with("x:"));
    }
}
