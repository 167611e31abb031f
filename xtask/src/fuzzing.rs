//! The bodies of the fuzz targets (`fuzz/`, docs/fuzzing.md), shared with the regression test
//! that replays `fuzz/regressions/` (`xtask/tests/fuzz_regressions.rs`).
//!
//! Every target feeds untrusted bytes to a reader of the oracle **and** of the checker and returns
//! `Err` with a description when they disagree: one fills a line the other calls an error, the
//! filled lines differ, a reader accepts what the other refuses, or the checker reports a bug in
//! itself. A panic, an allocation past libFuzzer's `-malloc_limit_mb` and a run past `-timeout`
//! are findings too; [`fuzz`] turns an `Err` into a panic, so that libFuzzer records the input.
//!
//! Inputs are kept small where the spec lets a tiny request ask for a large legal result (a graph
//! whose `max_elems` is `2^26`, a `fac` decode of `2^26` symbols): [`budget`] lowers or skips them,
//! so that one execution stays within the memory bound of docs/fuzzing.md. The caps at full size
//! are tested by `tests/caps.rs` and `xtask/tests/resources.rs`.

use crate::grade::{self, Ending};
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use wai_checker::request::LineError;
use wai_checker_testgen::random::Rng;
use wai_oracle::bounds::{Certified, certificate};
use wai_oracle::lower::{self, LOWERINGS};

/// The fuzz targets, by name: `fuzz/fuzz_targets/<name>.rs` and `fuzz/regressions/<name>/`.
pub const TARGETS: [&str; 8] = [
    "whg1",
    "jsonl",
    "lowering",
    "streams",
    "safetensors",
    "tokenizer",
    "config",
    "grade",
];

/// The largest `max_elems` a fuzzed graph keeps (larger values are lowered to it; values past
/// `2^26` are kept, since load step 1 refuses them).
pub const FUZZ_MAX_ELEMS: u32 = 1 << 10;
/// The most symbols a fuzzed `fac` decode may ask for, and the most elements of a fuzzed
/// `coding_order` shape or scale recipe.
pub const FUZZ_MAX_SYMBOLS: u128 = 1 << 12;
/// The largest `head_dim` a fuzzed CIS-2 `inv_freq` record may ask for.
pub const FUZZ_MAX_HEAD_DIM: u128 = 1 << 12;
/// The most steps a fuzzed CIS-2 decode record runs: a `gen_toks` above it and at most
/// [`FUZZ_KEEP_GEN`] is lowered to it.
pub const FUZZ_MAX_GEN: u128 = 1;
/// A `gen_toks` above this is kept: C7 refuses a decode whose positions pass `2^24` before any
/// step runs (docs/assumptions.md C7).
pub const FUZZ_KEEP_GEN: u128 = 1 << 24;
/// The most prompt bytes a fuzzed CIS-2 decode record keeps (a longer prompt's hex is cut).
pub const FUZZ_MAX_PROMPT: usize = 32;

/// Runs target `name` on `data`; `Err` is a finding.
pub fn check(name: &str, data: &[u8]) -> Result<(), String> {
    match name {
        "whg1" => whg1(data),
        "jsonl" => jsonl(data),
        "lowering" => lowering(data),
        "streams" => streams(data),
        "safetensors" => safetensors(data),
        "tokenizer" => tokenizer(data),
        "config" => config(data),
        "grade" => grade_response(data),
        other => Err(format!("no fuzz target {other:?}")),
    }
}

/// Runs target `name` on `data` and panics on a finding: the body of `fuzz/fuzz_targets/<name>.rs`.
pub fn fuzz(name: &str, data: &[u8]) {
    if let Err(finding) = check(name, data) {
        panic!("fuzz target {name}: {finding}");
    }
}

/// The workspace root (the fuzz crate links this library, so the path is fixed at build time).
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// The committed tree, which CIS-2 decode records' `model` paths are relative to.
pub fn tree() -> PathBuf {
    root().join("ops-conformance")
}

fn show(s: &str) -> String {
    const MAX: usize = 600;
    if s.len() <= MAX {
        s.trim_end().to_string()
    } else {
        let cut = (0..=MAX).rev().find(|&i| s.is_char_boundary(i)).unwrap_or(0);
        format!("{}… ({} bytes)", &s[..cut], s.len())
    }
}

/// Fills one request line with both implementations: `Ok` when both fill it to the same line or
/// both call it a line error.
pub fn agree(line: &str) -> Result<(), String> {
    let tree = tree();
    let oracle = wai_oracle::fill::fill_line_in(line, Some(&tree));
    wai_checker::cis2::fill::set_tree(Some(tree));
    let checker = wai_checker::fill::fill_line(line);
    match (oracle, checker) {
        (_, Err(LineError::Bug(m))) => Err(format!(
            "the checker reports a bug in itself: {m}\n  request {}",
            show(line)
        )),
        (Ok(a), Ok(b)) if a.strip_suffix('\n') == Some(b.as_str()) => Ok(()),
        (Err(_), Err(LineError::Bad(_))) => Ok(()),
        (Ok(a), Ok(b)) => Err(format!(
            "the filled lines differ\n  request {}\n  oracle  {}\n  checker {}",
            show(line),
            show(&a),
            show(&b)
        )),
        (Ok(a), Err(LineError::Bad(e))) => Err(format!(
            "the oracle fills the line and the checker calls it an error\n  request {}\n  oracle  {}\n  checker {e}",
            show(line),
            show(&a)
        )),
        (Err(e), Ok(b)) => Err(format!(
            "the checker fills the line and the oracle calls it an error\n  request {}\n  oracle  {e}\n  checker {}",
            show(line),
            show(&b)
        )),
    }
}

// ---------------------------------------------------------------------------------------------
// The fuzz budget

/// Lowers a WHG1 header's `max_elems` to [`FUZZ_MAX_ELEMS`] (a value past `2^26` is kept: load
/// step 1 refuses it).
pub fn small_max_elems(graph: &mut [u8]) {
    if let Some(field) = graph.get_mut(24..28) {
        let v = u32::from_le_bytes(field.try_into().expect("4 bytes"));
        if v > FUZZ_MAX_ELEMS && v <= 1 << 26 {
            field.copy_from_slice(&FUZZ_MAX_ELEMS.to_le_bytes());
        }
    }
}

fn int_of(v: &Value) -> Option<u128> {
    v.as_str().and_then(|s| s.parse().ok())
}

/// The fuzz budget for one request line (docs/fuzzing.md): `None` when the line asks for more
/// work than one execution may do, else the line to fill (a graph vector's `max_elems` lowered).
pub fn budget(line: &str) -> Option<String> {
    let Ok(mut v) = serde_json::from_str::<Value>(line) else {
        return Some(line.to_string());
    };
    let Some(o) = v.as_object_mut() else {
        return Some(line.to_string());
    };
    let get = |o: &Map<String, Value>, path: &[&str]| -> Option<Value> {
        let mut at = o.get(path[0])?;
        for k in &path[1..] {
            at = at.get(k)?;
        }
        Some(at.clone())
    };
    let too_much = |x: Option<u128>, max: u128| x.is_some_and(|x| x > max);
    // A fac decode's lengths and a coding_order's shape: outputs no request's bytes bound.
    if let Some(Value::Array(lengths)) = get(o, &["in", "lengths"]) {
        let total = lengths.iter().filter_map(int_of).fold(0u128, u128::saturating_add);
        // Past 2^26 both sides refuse `too_large` before decoding a symbol (S7): kept.
        if total > FUZZ_MAX_SYMBOLS && total <= 1 << 26 {
            return None;
        }
    }
    if o.get("op").and_then(Value::as_str) == Some("coding_order")
        && let Some(Value::Array(shape)) = get(o, &["in", "shape"])
    {
        let n = shape
            .iter()
            .map(|d| int_of(d).unwrap_or(1))
            .fold(1u128, u128::saturating_mul);
        if n > FUZZ_MAX_SYMBOLS {
            return None;
        }
    }
    // CIS-2: a table as long as head_dim asks.
    if too_much(get(o, &["in", "head_dim"]).as_ref().and_then(int_of), FUZZ_MAX_HEAD_DIM) {
        return None;
    }
    // A decode: as many steps as gen_toks asks, each a forward pass over the prompt so far. The
    // steps are lowered to FUZZ_MAX_GEN and the prompt cut to FUZZ_MAX_PROMPT bytes, so that a
    // decode record costs about one model load (the tokenizer's regexes compiled, the weights
    // widened) and two forward passes.
    let mut lowered = false;
    if let Some(g) = o.get("gen_toks").and_then(int_of)
        && g > FUZZ_MAX_GEN
        && g <= FUZZ_KEEP_GEN
    {
        o.insert("gen_toks".into(), Value::String(FUZZ_MAX_GEN.to_string()));
        lowered = true;
    }
    if o.contains_key("gen_toks")
        && let Some(Value::String(p)) = o.get_mut("prompt")
        && p.len() > 2 * FUZZ_MAX_PROMPT
    {
        let cut = (0..=2 * FUZZ_MAX_PROMPT)
            .rev()
            .find(|&i| p.is_char_boundary(i))
            .unwrap_or(0);
        p.truncate(cut);
        lowered = true;
    }
    if lowered {
        return Some(v.to_string());
    }
    // A scale record's recipe: made before run step 1 can refuse it, so its size is the request's.
    let recipes = o.get("decodes").and_then(Value::as_array).into_iter().flatten();
    let shapes = recipes
        .filter_map(|d| d.get("inputs").and_then(Value::as_array))
        .flatten()
        .filter(|t| t.get("recipe").is_some())
        .filter_map(|t| t.get("shape").and_then(Value::as_array));
    if shapes
        .map(|s| {
            s.iter()
                .map(|d| int_of(d).unwrap_or(1))
                .fold(1u128, u128::saturating_mul)
        })
        .any(|n| n > FUZZ_MAX_SYMBOLS)
    {
        return None;
    }
    // A graph vector: its tensors at most FUZZ_MAX_ELEMS elements.
    if let Some(Value::String(g)) = o.get_mut("graph")
        && g.len() >= 56
        && g.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
        && let Ok(mut bytes) = hex::decode(&g[..56])
    {
        small_max_elems(&mut bytes);
        g.replace_range(..56, &hex::encode(bytes));
        return Some(v.to_string());
    }
    Some(line.to_string())
}

// ---------------------------------------------------------------------------------------------
// whg1: read + load + plan + decode of small inputs, and the certificate

/// Derives a graph vector from `control` for the graph `bytes`: one or two decodes of `[C, H, W]`
/// inputs (H and W at most 5) whose values lie mostly in each input's declared range, and scalars
/// mostly in theirs.
pub fn graph_request(bytes: &[u8], control: &[u8; 4]) -> String {
    let h = u64::from(control[0] % 6);
    let w = u64::from(control[1] % 6);
    let n_dec = 1 + usize::from(control[2] % 2);
    let mut r = Rng::new(u64::from_le_bytes([
        control[0], control[1], control[2], control[3], 0, 0, 0, 0,
    ]));
    let graph = wai_oracle::whg1::read::read(bytes).ok();
    let mut decodes = Vec::new();
    for _ in 0..n_dec {
        let mut inputs = Vec::new();
        let mut scalars = Vec::new();
        if let Some(g) = &graph {
            for input in g.inputs.iter().filter(|i| i.kind == wai_oracle::whg1::InputKind::Data) {
                let t = g.tensors.get(input.tensor as usize);
                let c = t.map_or(1, |t| u64::from(t.channels));
                let (lo, hi) = t.and_then(|t| t.policy.range()).unwrap_or((-8, 8));
                let (c, h, w) = if c * h * w <= 4096 { (c, h, w) } else { (1, 1, 1) };
                let data: Vec<String> = (0..c * h * w)
                    .map(|_| {
                        let v: i128 = match r.below(40) {
                            0 => i128::from(lo) - 1,
                            1 => i128::from(hi) + 1,
                            2 | 3 => i128::from(lo),
                            4 | 5 => i128::from(hi),
                            6..=15 => i128::from(r.range(-3, 3)).clamp(i128::from(lo), i128::from(hi)),
                            _ => i128::from(r.range(lo, hi)),
                        };
                        v.to_string()
                    })
                    .collect();
                inputs.push(json!({ "data": data, "shape": [c.to_string(), h.to_string(), w.to_string()] }));
            }
            for s in &g.scalars {
                let v: i128 = match r.below(20) {
                    0 => i128::from(s.lo) - 1,
                    1 => i128::from(s.hi) + 1,
                    2..=5 => i128::from(s.lo),
                    _ => i128::from(r.range(s.lo, s.hi)),
                };
                scalars.push(Value::String(v.to_string()));
            }
        }
        decodes.push(json!({ "inputs": inputs, "scalars": scalars }));
    }
    json!({ "decodes": decodes, "graph": hex::encode(bytes), "id": "fuzz" }).to_string()
}

/// The certificates of a graph on both sides, equal or both refused.
pub fn certificates_agree(bytes: &[u8]) -> Result<(), String> {
    let header = certificate::Header {
        lowering: "whg1".into(),
        ..certificate::Header::default()
    };
    let ours = wai_oracle::whg1::load(bytes)
        .ok()
        .and_then(|l| Certified::new("g", bytes.to_vec(), l.graph).ok())
        .map(|c| certificate::bytes(&[c], &header));
    let theirs = wai_checker::certify::certify(
        &[wai_checker::certify::Input {
            name: "g".into(),
            bytes: bytes.to_vec(),
        }],
        None,
        "whg1",
        None,
    )
    .ok()
    .map(String::into_bytes);
    if ours == theirs {
        Ok(())
    } else {
        let s = |c: &Option<Vec<u8>>| {
            c.as_ref()
                .map_or("refused".into(), |c| show(&String::from_utf8_lossy(c)))
        };
        Err(format!(
            "the certificates differ for graph {}\n  oracle  {}\n  checker {}",
            show(&hex::encode(bytes)),
            s(&ours),
            s(&theirs)
        ))
    }
}

/// `whg1`: four control bytes, then WHG1 bytes (their `max_elems` lowered to [`FUZZ_MAX_ELEMS`]).
pub fn whg1(data: &[u8]) -> Result<(), String> {
    let Some((control, graph)) = data.split_first_chunk::<4>() else {
        return Ok(());
    };
    let mut bytes = graph.to_vec();
    small_max_elems(&mut bytes);
    agree(&graph_request(&bytes, control))?;
    certificates_agree(&bytes)
}

// ---------------------------------------------------------------------------------------------
// jsonl: request lines of every suite through both `fill` streams

/// The bad line numbers of a `fill` run, from its `line N: …` messages.
fn bad_lines(messages: &[String]) -> Vec<usize> {
    messages
        .iter()
        .filter_map(|m| m.strip_prefix("line ")?.split(':').next()?.parse().ok())
        .collect()
}

/// `jsonl`: the bytes as a request stream (one request per line), each line under the fuzz
/// budget, through the oracle's `fill_stream` and the checker's `fill`.
pub fn jsonl(data: &[u8]) -> Result<(), String> {
    let mut input = Vec::new();
    for line in data.split(|&b| b == b'\n') {
        match std::str::from_utf8(line) {
            Ok(l) => {
                if let Some(l) = budget(l) {
                    input.extend_from_slice(l.as_bytes());
                }
            }
            Err(_) => input.extend_from_slice(line),
        }
        input.push(b'\n');
    }
    input.pop();
    let tree = tree();
    let (mut out_o, mut err_o) = (Vec::new(), Vec::new());
    let oracle = wai_oracle::fill::fill_stream(&input[..], &mut out_o, &mut err_o, Some(&tree));
    let bad_o = oracle.map_err(|e| {
        format!(
            "the oracle's fill stops on the stream: {e}\n  input {}",
            show(&String::from_utf8_lossy(&input))
        )
    })?;
    wai_checker::cis2::fill::set_tree(Some(tree));
    let (mut out_c, mut err_c) = (String::new(), Vec::new());
    let bad_c = wai_checker::fill::fill(&input, &mut out_c, &mut |m| err_c.push(m));
    let err_o: Vec<String> = String::from_utf8_lossy(&err_o).lines().map(String::from).collect();
    // `line N: checker bug: …` (a request may itself hold the words, echoed in a message).
    let is_bug = |m: &&String| {
        m.split_once(": ")
            .is_some_and(|(_, rest)| rest.starts_with("checker bug: "))
    };
    if let Some(bug) = err_c.iter().find(is_bug) {
        return Err(format!("{bug}\n  input {}", show(&String::from_utf8_lossy(&input))));
    }
    if bad_lines(&err_o) != bad_lines(&err_c) || bad_o != bad_c || out_o != out_c.as_bytes() {
        // Name the first line on which they differ.
        for line in input.split(|&b| b == b'\n') {
            if let Ok(l) = std::str::from_utf8(line) {
                agree(l.strip_suffix('\r').unwrap_or(l))?;
            }
        }
        return Err(format!(
            "the fill streams differ\n  input {}\n  oracle  {} bad lines {:?}: {}\n  checker {} bad lines {:?}: {}",
            show(&String::from_utf8_lossy(&input)),
            bad_o,
            err_o,
            show(&String::from_utf8_lossy(&out_o)),
            bad_c,
            err_c,
            show(&out_c)
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// lowering: int_synth.json, the WHM1-family renderings, the jpegai bundle's files

/// The file a one-file lowering's record names: `int_synth.json`, `whm1.json`, … (the jpegai
/// bundle's are [`JPEGAI_FILES`]).
fn file_name(lowering: &str) -> String {
    format!("{}.json", lowering.split('/').next().unwrap_or_default())
}

/// The jpegai bundle's three files, in the order the lowering target's selector names them.
pub const JPEGAI_FILES: [&str; 3] = ["norm.json", "weights/hs_uv.json", "weights/hs_y.json"];

/// The committed jpegai bundle (the files the lowering target does not replace), read and
/// hex-decoded once per process: the bundle is 0.6 MiB, and re-encoding it into a request line on
/// every execution made the target run ~20 executions a second.
fn jpegai_bundle() -> &'static [(String, Vec<u8>)] {
    static BUNDLE: OnceLock<Vec<(String, Vec<u8>)>> = OnceLock::new();
    BUNDLE.get_or_init(|| {
        let text = std::fs::read_to_string(tree().join("lowerings/jpegai-int.jsonl")).unwrap_or_default();
        let files = text
            .lines()
            .next()
            .and_then(|l| serde_json::from_str::<Value>(l).ok())
            .and_then(|v| v["files"].as_object().cloned())
            .unwrap_or_default();
        files
            .iter()
            .map(|(name, h)| {
                (
                    name.clone(),
                    hex::decode(h.as_str().unwrap_or_default()).unwrap_or_default(),
                )
            })
            .collect()
    })
}

/// The lowering target's selector byte for lowering `l`, capability `c`, claim `k` (0 none, 1
/// `acc32`, 2 `acc64`) and, for the jpegai bundle, the file replaced.
pub fn lowering_selector(l: usize, c: usize, k: usize) -> u8 {
    (l + 6 * k + 18 * c) as u8
}

/// `lowering`: a selector byte (lowering, claim, capability or bundle file), then one file's bytes.
///
/// The set goes straight to both implementations' lowering runs (the oracle's
/// `fill::lowering::run`, the checker's `lower::run`), not through a request line: the jsonl target
/// covers the line's reader, and the committed jpegai bundle is kept decoded. They must give the
/// same lowered graphs (byte for byte), the same certificate bytes and the same load outcome.
pub fn lowering(data: &[u8]) -> Result<(), String> {
    let Some((&sel, file)) = data.split_first() else {
        return Ok(());
    };
    let sel = usize::from(sel);
    let lowering = LOWERINGS[sel % 6];
    let capabilities = lower::capabilities(lowering);
    let claim = [None, Some("acc32"), Some("acc64")][(sel / 6) % 3];
    let which = sel / 18;
    let capability = capabilities[which % capabilities.len()];
    let files: Vec<(String, Vec<u8>)> = if lower::one_file(lowering) {
        vec![(file_name(lowering), file.to_vec())]
    } else {
        let mut files = jpegai_bundle().to_vec();
        let name = JPEGAI_FILES[which % 3];
        match files.iter_mut().find(|(n, _)| n == name) {
            Some(f) => f.1 = file.to_vec(),
            None => files.push((name.into(), file.to_vec())),
        }
        // The order a request's files object gives them (names sorted).
        files.sort_by(|a, b| a.0.cmp(&b.0));
        files
    };
    let ours = wai_oracle::fill::lowering::run(
        lowering,
        capability,
        &files,
        claim.and_then(wai_oracle::bounds::profile::Profile::parse),
    );
    let checker_lowering = wai_checker::lower::Lowering::parse(lowering)
        .ok_or_else(|| format!("the checker has no lowering {lowering}"))?;
    let checker_files: Vec<wai_checker::lower::File> = files
        .iter()
        .map(|(name, bytes)| wai_checker::lower::File {
            name: name.clone(),
            bytes: bytes.clone(),
        })
        .collect();
    let checker_claim = match claim {
        Some("acc32") => Some(wai_checker::bounds::Profile::Acc32),
        Some(_) => Some(wai_checker::bounds::Profile::Acc64),
        None => None,
    };
    let theirs = wai_checker::lower::run(checker_lowering, capability, checker_claim, &checker_files)
        .map_err(|e| format!("the checker calls a set with selector {sel} a request error: {e}"))?;
    let our_load = ours.load.as_ref().map_or_else(|r| r.code.to_string(), |_| "ok".into());
    let their_load = theirs.refused.unwrap_or("ok");
    let digests = |g: &[(String, Vec<u8>)]| -> Vec<(String, String)> {
        g.iter()
            .map(|(role, b)| (role.clone(), certificate::sha256_hex(b)))
            .collect()
    };
    if ours.graphs != theirs.graphs
        || ours.certificate.as_deref() != theirs.certificate.as_ref().map(String::as_bytes)
        || our_load != their_load
    {
        let cert = |c: Option<&[u8]>| c.map_or("none".into(), |c| show(&String::from_utf8_lossy(c)));
        return Err(format!(
            "the lowerings differ: {lowering}, capability {capability}, claim {claim:?}\n  oracle  load {our_load} ({}) graphs {:?} certificate {}\n  checker load {their_load} ({}) graphs {:?} certificate {}",
            ours.load.as_ref().err().map_or("", |r| r.why.as_str()),
            digests(&ours.graphs),
            cert(ours.certificate.as_deref()),
            theirs.why,
            digests(&theirs.graphs),
            cert(theirs.certificate.as_ref().map(String::as_bytes)),
        ));
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// streams: mans_decode and rans64_decode on arbitrary streams

/// The committed stage records of `mans_decode` (fac, then sgm) and `rans64_decode` whose
/// operands the streams target reuses.
fn stream_records() -> &'static [Vec<Map<String, Value>>; 3] {
    static RECORDS: OnceLock<[Vec<Map<String, Value>>; 3]> = OnceLock::new();
    RECORDS.get_or_init(|| {
        let read = |path: &str| -> Vec<Map<String, Value>> {
            std::fs::read_to_string(tree().join(path))
                .unwrap_or_default()
                .lines()
                .filter_map(|l| serde_json::from_str::<Value>(l).ok())
                .filter_map(|v| v.as_object().cloned())
                .filter(|o| budget(&Value::Object(o.clone()).to_string()).is_some())
                .collect()
        };
        let mans = read("stage/mans_decode.jsonl");
        let mode =
            |m: &str| -> Vec<Map<String, Value>> { mans.iter().filter(|o| o["in"]["mode"] == m).cloned().collect() };
        [mode("fac"), mode("sgm"), read("provisional/stage/rans64_decode.jsonl")]
    })
}

/// The number of committed records the streams target's selector chooses among, per kind.
pub fn stream_record_counts() -> [usize; 3] {
    let r = stream_records();
    [r[0].len(), r[1].len(), r[2].len()]
}

/// `streams`: a selector (`fac`, `sgm` or rANS, and which committed record's operands), a byte
/// that perturbs the operands, then the stream (`memory` or `stream`).
pub fn streams(data: &[u8]) -> Result<(), String> {
    let Some((&[sel, kind_sel, tweak], stream)) = data.split_first_chunk::<3>() else {
        return Ok(());
    };
    let kind = usize::from(kind_sel % 3);
    let records = &stream_records()[kind];
    if records.is_empty() {
        return Err("no committed records to take the operands from".into());
    }
    let mut o = records[usize::from(sel) % records.len()].clone();
    o.remove("expect");
    let i = o
        .get_mut("in")
        .and_then(Value::as_object_mut)
        .expect("a stage record's in");
    let hex = Value::String(hex::encode(stream));
    if kind == 2 {
        i.insert("stream".into(), hex);
        // The reads: as committed, or each flipped, or one more or one fewer.
        if let Some(Value::Array(reads)) = i.get_mut("reads") {
            match tweak % 4 {
                1 => reads.iter_mut().for_each(|r| {
                    *r = json!(if r == "0" { "1" } else { "0" });
                }),
                2 => reads.push(json!((tweak / 4 % 2).to_string())),
                3 => {
                    reads.pop();
                }
                _ => {}
            }
        }
        let m = o.get_mut("modes").and_then(Value::as_object_mut).expect("modes");
        if tweak & 0x10 != 0 {
            let end = if m.get("end") == Some(&json!("canonical")) {
                "final_only"
            } else {
                "canonical"
            };
            m.insert("end".into(), json!(end));
        }
    } else {
        i.insert("memory".into(), hex);
        if kind == 1
            && let Some(Value::Array(spans)) = i.get_mut("spans")
        {
            // The mask flipped where the tweak says.
            for s in spans.iter_mut() {
                if let Some(Value::Array(mask)) = s.get_mut("mask") {
                    for (k, b) in mask.iter_mut().enumerate() {
                        if (tweak >> (k % 8)) & 1 == 1 && k % 3 == 0 {
                            *b = Value::Bool(!b.as_bool().unwrap_or(false));
                        }
                    }
                }
            }
        }
    }
    agree(&Value::Object(o).to_string())
}

// ---------------------------------------------------------------------------------------------
// CIS-2's files

/// `safetensors`: the bytes as `model.safetensors`; both readers accept or both refuse, and every
/// tensor reads the same.
pub fn safetensors(data: &[u8]) -> Result<(), String> {
    use wai_oracle::cis2::artifact::SafeTensors;
    let ours = SafeTensors::parse(data);
    let theirs = wai_checker::cis2::artifact::safetensors(data);
    match (&ours, &theirs) {
        (Err(_), Err(_)) => Ok(()),
        (Ok(_), Err(e)) => Err(format!("the checker refuses ({e}) what the oracle accepts")),
        (Err(e), Ok(_)) => Err(format!("the oracle refuses ({}) what the checker accepts", e.why)),
        (Ok(o), Ok(c)) => {
            for (name, e) in &c.entries {
                if !o.contains(name) {
                    return Err(format!("tensor {name:?}: the checker reads it and the oracle does not"));
                }
                let shape: Vec<usize> = e.shape.iter().map(|&d| d as usize).collect();
                let mine = o.tensor(name, &shape);
                match (e.dtype == "BF16", mine) {
                    (true, Ok(values)) => {
                        let widened = c.bytes[e.begin..e.end].chunks_exact(2).map(|b| {
                            wai_checker::cis2::artifact::widen_bf16(u16::from_le_bytes([b[0], b[1]])).to_bits()
                        });
                        if !values.iter().map(|v| v.0).eq(widened) {
                            return Err(format!("tensor {name:?}: the widened values differ"));
                        }
                    }
                    (false, Err(_)) => {}
                    (true, Err(r)) => return Err(format!("tensor {name:?}: the oracle refuses it ({})", r.why)),
                    (false, Ok(_)) => return Err(format!("tensor {name:?}: the oracle reads a {} tensor", e.dtype)),
                }
            }
            // C8: the tensors §2.5 names, against each committed configuration both readers accept
            // (the oracle's `Model::load`, the checker's `weights`): both take the file's weights
            // or both refuse them `tensor_mismatch`.
            for (n, (oc, cc)) in model_configs().iter().enumerate() {
                let ours = wai_oracle::cis2::decode::Model::load(oc.clone(), o)
                    .map(|_| ())
                    .map_err(|r| (r.code.as_str(), r.why));
                let theirs = wai_checker::cis2::artifact::weights(c, cc)
                    .map(|_| ())
                    .map_err(|why| ("tensor_mismatch", why));
                match (&ours, &theirs) {
                    (Ok(()), Ok(())) => {}
                    (Err((a, _)), Err((b, _))) if a == b => {}
                    _ => {
                        return Err(format!(
                            "the weights read differently under committed configuration {n}\n  oracle  {ours:?}\n  checker {theirs:?}"
                        ));
                    }
                }
            }
            Ok(())
        }
    }
}

/// The committed models' configurations that both readers accept, each once, read once per
/// process: the `safetensors` target checks a file's tensors against each (C8).
fn model_configs() -> &'static [(wai_oracle::cis2::artifact::Config, wai_checker::cis2::artifact::Config)] {
    use wai_oracle::cis2::Soft;
    use wai_oracle::cis2::artifact::Config;
    static CONFIGS: OnceLock<Vec<(Config, wai_checker::cis2::artifact::Config)>> = OnceLock::new();
    CONFIGS.get_or_init(|| {
        let mut out: Vec<(Config, wai_checker::cis2::artifact::Config)> = Vec::new();
        for dir in model_dirs(&tree()) {
            let Ok(bytes) = std::fs::read(dir.join("config.json")) else {
                continue;
            };
            let ours = Config::json(&bytes).and_then(|o| Config::read(&Soft::X86_64, &o));
            let theirs = wai_checker::cis2::artifact::config_json(&bytes)
                .and_then(|v| wai_checker::cis2::artifact::config(&v, &bytes));
            if let (Ok(a), Ok(b)) = (ours, theirs)
                && !out.iter().any(|(x, _)| *x == a)
            {
                out.push((a, b));
            }
        }
        out
    })
}

/// The prompt the tokenizer target uses when its input gives none.
pub const DEFAULT_PROMPT: &str = "Once upon a time, 1234 <|endoftext|> naïve café\n\t 12";

/// `tokenizer`: `tokenizer.json`'s bytes, then optionally a NUL and the prompt's UTF-8 bytes; both
/// readers accept or both refuse, and both encode the prompt to the same ids.
pub fn tokenizer(data: &[u8]) -> Result<(), String> {
    let (file, prompt) = match data.iter().position(|&b| b == 0) {
        Some(n) => (&data[..n], String::from_utf8_lossy(&data[n + 1..]).into_owned()),
        None => (data, DEFAULT_PROMPT.to_string()),
    };
    let ours = wai_oracle::cis2::tokenizer::Tokenizer::parse(file);
    let theirs = wai_checker::cis2::tokenizer::load(file);
    match (ours, theirs) {
        (Err(_), Err(_)) => Ok(()),
        (Ok(_), Err(e)) => Err(format!("the checker refuses ({e}) what the oracle accepts")),
        (Err(e), Ok(_)) => Err(format!("the oracle refuses ({}) what the checker accepts", e.why)),
        (Ok(o), Ok(c)) => {
            let (a, b) = (o.encode(&prompt), c.encode(&prompt));
            match (&a, &b) {
                (Ok(x), Ok(y)) if x == y => Ok(()),
                (Err(_), Err(_)) => Ok(()),
                _ => Err(format!(
                    "the prompt {prompt:?} encodes differently\n  oracle  {a:?}\n  checker {b:?}"
                )),
            }
        }
    }
}

/// `config`: the bytes as `config.json`; both readers give the same code or the same values.
pub fn config(data: &[u8]) -> Result<(), String> {
    use wai_oracle::cis2::artifact::Config;
    use wai_oracle::cis2::{Arith, F64, Soft};
    let ours = Config::json(data).and_then(|o| Config::read(&Soft::X86_64, &o));
    let theirs = wai_checker::cis2::artifact::config_json(data)
        .map_err(|e| ("artifact_malformed", e))
        .and_then(|v| wai_checker::cis2::artifact::config(&v, data).map_err(|e| ("config_unsupported", e)));
    match (&ours, &theirs) {
        (Err(a), Err((b, _))) if a.code.as_str() == *b => Ok(()),
        (Ok(o), Ok(c)) => {
            let narrow = |x: f64| Soft::X86_64.narrow(F64(x.to_bits()));
            let same = o.hidden == c.hidden
                && o.intermediate == c.inter
                && o.layers == c.layers
                && o.heads == c.heads
                && o.kv_heads == c.kv_heads
                && o.head_dim() == c.head_dim
                && o.vocab == c.vocab
                && o.max_positions.map(|m| m as u64) == c.max_pos
                && o.tied == c.tie
                && o.eps == narrow(c.eps)
                && o.theta == narrow(c.theta);
            if same {
                Ok(())
            } else {
                Err(format!("the configurations differ\n  oracle  {o:?}\n  checker {c:?}"))
            }
        }
        _ => Err(format!(
            "the readers disagree on {}\n  oracle  {:?}\n  checker {:?}",
            show(&String::from_utf8_lossy(data)),
            ours.as_ref().map(|_| "ok").map_err(|e| (e.code.as_str(), &e.why)),
            theirs.as_ref().map(|_| "ok")
        )),
    }
}

// ---------------------------------------------------------------------------------------------
// grade: the grader's response parser

/// The committed files the grade target grades responses against (the smaller ones).
pub const GRADED_FILES: [&str; 8] = [
    "stage/coded.jsonl",
    "stage/dequantize.jsonl",
    "stage/scale_index.jsonl",
    "graphs/state.jsonl",
    "graphs/run_steps.jsonl",
    "vectors/relu.jsonl",
    "vectors/pad_rep.jsonl",
    "lowerings/int_synth.jsonl",
];

fn graded_files() -> &'static [Vec<Value>] {
    static FILES: OnceLock<Vec<Vec<Value>>> = OnceLock::new();
    FILES.get_or_init(|| {
        GRADED_FILES
            .iter()
            .map(|f| {
                std::fs::read_to_string(tree().join(f))
                    .unwrap_or_default()
                    .lines()
                    .filter_map(|l| serde_json::from_str(l).ok())
                    .collect()
            })
            .collect()
    })
}

/// `grade`: a selector byte, then the response. Selector values below 128 grade the response
/// against committed file `sel % 8`; the others read the response's first line as the committed
/// records (any JSON) and the rest as the response.
pub fn grade_response(data: &[u8]) -> Result<(), String> {
    let Some((&sel, response)) = data.split_first() else {
        return Ok(());
    };
    let endings = [Ending::Exited(0), Ending::Exited(3), Ending::Killed, Ending::TimedOut];
    let ending = &endings[usize::from(sel / 8) % 4];
    let (committed, response): (Vec<Value>, &[u8]) = if sel < 128 {
        (graded_files()[usize::from(sel) % GRADED_FILES.len()].clone(), response)
    } else {
        let n = response.iter().position(|&b| b == b'\n').unwrap_or(response.len());
        let first = String::from_utf8_lossy(&response[..n]);
        let committed = serde_json::Deserializer::from_str(&first)
            .into_iter::<Value>()
            .map_while(Result::ok)
            .collect();
        (committed, response.get(n + 1..).unwrap_or_default())
    };
    let committed: Vec<grade::Sent> = committed
        .into_iter()
        .map(|c| grade::Sent::new(c, grade::Role::All))
        .collect();
    let graded = grade::grade_lines(&committed, response, ending);
    if graded.len() != committed.len() {
        return Err(format!(
            "{} records graded for {} committed",
            graded.len(),
            committed.len()
        ));
    }
    // The committed lines themselves, as a response, pass; but a "committed" record that is itself
    // a decline (`{"id": …, "not_supported": …}`, which the input's own records may be) is graded
    // as the decline it is.
    let exact: String = committed.iter().map(|c| format!("{}\n", c.record)).collect();
    let all = grade::grade_lines(&committed, exact.as_bytes(), ending);
    for (c, g) in committed.iter().zip(&all) {
        let declined = grade::not_supported(&c.record, &g.id).is_some();
        if g.outcome != grade::Outcome::Passed && !declined {
            return Err(format!("record {} fails against itself: {:?}", g.id, g.outcome));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Seed corpora from the committed tree

/// The longest seed each target is given (its libFuzzer `-max_len`, docs/fuzzing.md).
pub fn max_len(target: &str) -> usize {
    match target {
        "lowering" | "safetensors" => 1 << 16,
        "streams" | "config" => 1 << 12,
        _ => 1 << 14,
    }
}

/// The committed `.jsonl` files under `dir` (recursively), sorted.
fn jsonl_files(dir: &Path) -> Vec<PathBuf> {
    crate::compare::files(dir)
        .into_iter()
        .filter(|f| f.ends_with(".jsonl"))
        .map(|f| dir.join(f))
        .collect()
}

/// The model folders of the CIS-2 suite, sorted.
fn model_dirs(tree: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(tree.join("cis2/models"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    out.sort();
    out
}

/// A seed: its target, its file name and its bytes.
pub type Seed = (&'static str, String, Vec<u8>);

/// Every seed of every target, from the committed tree.
pub fn seeds(tree: &Path) -> Result<Vec<Seed>, String> {
    let mut out: Vec<Seed> = Vec::new();
    let rel = |p: &Path| {
        p.strip_prefix(tree)
            .unwrap_or(p)
            .to_string_lossy()
            .trim_end_matches(".jsonl")
            .replace('/', "-")
    };
    let read_lines = |p: &Path| -> Result<Vec<Value>, String> {
        std::fs::read_to_string(p)
            .map_err(|e| format!("{}: {e}", p.display()))?
            .lines()
            .map(|l| serde_json::from_str(l).map_err(|e| format!("{}: {e}", p.display())))
            .collect()
    };
    for file in jsonl_files(tree) {
        let name = rel(&file);
        let records = read_lines(&file)?;
        for (n, v) in records.iter().enumerate() {
            // jsonl: the request (computed fields stripped).
            let request = crate::check::strip(format!("{v}\n").as_bytes())?;
            out.push(("jsonl", format!("{name}-{n}"), request));
            // whg1: the graph, with the first decode's first input's H and W as control bytes.
            if let Some(g) = v["graph"].as_str().and_then(|h| hex::decode(h).ok()) {
                let shape = &v["decodes"][0]["inputs"][0]["shape"];
                let dim = |k: usize| shape[k].as_str().and_then(|s| s.parse::<u8>().ok()).unwrap_or(1);
                let decodes = v["decodes"].as_array().map_or(1, Vec::len) as u8;
                let mut seed = vec![dim(1), dim(2), decodes.saturating_sub(1), n as u8];
                seed.extend_from_slice(&g);
                out.push(("whg1", format!("{name}-{n}"), seed));
            }
            // lowering: the record's file(s), with its selector.
            if let (Some(l), Some(files)) = (v["lowering"].as_str(), v["files"].as_object()) {
                let li = LOWERINGS.iter().position(|x| *x == l).unwrap_or(0);
                let ci = lower::capabilities(LOWERINGS[li])
                    .iter()
                    .position(|c| v["capability"] == *c)
                    .unwrap_or(0);
                let ki = match v["claim"].as_str() {
                    Some("acc32") => 1,
                    Some("acc64") => 2,
                    _ => 0,
                };
                for (fname, h) in files {
                    let which = JPEGAI_FILES.iter().position(|f| f == fname).unwrap_or(ci);
                    let mut seed = vec![lowering_selector(li, which, ki)];
                    seed.extend(hex::decode(h.as_str().unwrap_or_default()).map_err(|e| e.to_string())?);
                    out.push(("lowering", format!("{name}-{n}-{}", fname.replace('/', "-")), seed));
                }
            }
        }
    }
    // streams: each committed record's operands over its own stream.
    let records = stream_records();
    for (kind, list) in records.iter().enumerate() {
        for (n, o) in list.iter().enumerate() {
            let key = if kind == 2 { "stream" } else { "memory" };
            let mut seed = vec![n as u8, kind as u8, 0];
            seed.extend(hex::decode(o["in"][key].as_str().unwrap_or_default()).map_err(|e| e.to_string())?);
            out.push(("streams", format!("{}-{n}", ["fac", "sgm", "rans64"][kind]), seed));
        }
    }
    // CIS-2: each model folder's files; the tokenizers with each committed prompt.
    let prompts: Vec<Vec<u8>> = read_lines(&tree.join("cis2/decode.jsonl"))?
        .iter()
        .filter_map(|v| hex::decode(v["prompt"].as_str()?).ok())
        .collect();
    for dir in model_dirs(tree) {
        let m = dir.file_name().unwrap_or_default().to_string_lossy().into_owned();
        let read = |f: &str| std::fs::read(dir.join(f)).map_err(|e| format!("{}: {e}", dir.join(f).display()));
        out.push(("safetensors", m.clone(), read("model.safetensors")?));
        out.push(("config", m.clone(), read("config.json")?));
        let tok = read("tokenizer.json")?;
        for (n, p) in prompts.iter().enumerate().step_by(3) {
            let mut seed = tok.clone();
            seed.push(0);
            seed.extend_from_slice(p);
            out.push(("tokenizer", format!("{m}-{n}"), seed));
        }
        out.push(("tokenizer", m, tok));
    }
    // grade: each graded file's committed records as the response (all pass), its requests (all
    // fail), and half of it (the rest unanswered).
    for (i, f) in GRADED_FILES.iter().enumerate() {
        let text = std::fs::read(tree.join(f)).map_err(|e| format!("{f}: {e}"))?;
        let stripped = crate::check::strip(&text)?;
        let half = &text[..text.len() / 2];
        for (what, body) in [("committed", &text[..]), ("requests", &stripped[..]), ("half", half)] {
            let mut seed = vec![i as u8];
            seed.extend_from_slice(body);
            out.push(("grade", format!("{}-{what}", f.replace('/', "-")), seed));
        }
        let first = text.split(|&b| b == b'\n').next().unwrap_or_default();
        let mut seed = vec![128 + i as u8];
        seed.extend_from_slice(first);
        seed.push(b'\n');
        seed.extend_from_slice(first);
        out.push(("grade", format!("{}-own", f.replace('/', "-")), seed));
    }
    out.retain(|(t, _, bytes)| bytes.len() <= max_len(t));
    Ok(out)
}

/// `cargo xtask fuzz-seeds`: writes `fuzz/corpus/<target>/` from the committed tree (each
/// directory emptied first); the number of seeds written per target.
pub fn write_seeds(root: &Path) -> Result<Vec<(&'static str, usize)>, String> {
    let all = seeds(&root.join("ops-conformance"))?;
    let mut counts = Vec::new();
    for t in TARGETS {
        let dir = root.join("fuzz/corpus").join(t);
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        }
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let mut n = 0;
        for (_, name, bytes) in all.iter().filter(|s| s.0 == t) {
            wai_oracle::files::write(&dir.join(name), bytes).map_err(|e| format!("{name}: {e}"))?;
            n += 1;
        }
        counts.push((t, n));
    }
    Ok(counts)
}
