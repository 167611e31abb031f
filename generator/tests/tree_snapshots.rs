//! The committed tree as reviewable snapshots (issue 15).
//!
//! The files of `ops-conformance/` are exact but unreadable in a diff. This test renders each
//! of them readably, one insta snapshot per file under `generator/tests/snapshots/tree/`, so that a pull
//! request that moves a vector shows which one and how:
//!
//! - every JSON Lines file: one block per record, ordered by id; the block's first line starts
//!   with the id, and every further line is indented;
//! - every certificate (`<digest>.json` holding `"certificate"`): its header, verdict, first
//!   failures, and one line per node;
//! - every other file (lowered graphs, safetensors, a set's own files, CIS-2 model folders):
//!   one line each in `INDEX.snap`, with its size and the first 16 hex digits of its SHA-256
//!   (as in `MANIFEST.sha256`, which is derived and shown by its number of entries only).
//!
//! A rendering is lossless or digested: a value is shown whole, or cut with `#` and the first
//! 8 hex digits of the SHA-256 of its canonical JSON (`["1","2"]`, `"ab12"`), so that any
//! change to a record changes its lines and no other record's. `(in #…)` and `req #…` digest a
//! record's inputs where they are not shown.
//!
//! Review: `cargo insta review` (or read the `.snap.new` files beside the snapshots and
//! accept with `INSTA_UPDATE=always cargo test -p wai-generate --test tree_snapshots`); see README.md.

mod common;

use common::files;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// How many leading elements a long array shows.
const FIRST: usize = 4;
/// Arrays of at most this many scalars are shown whole.
const WHOLE: usize = 8;
/// The snapshot of every file that has no record rendering.
const INDEX: &str = "INDEX";

/// The workspace root, where `corpus/` and `ops-conformance/` are.
fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

fn tree() -> PathBuf {
    root().join("ops-conformance")
}

fn snapshot_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots/tree")
}

// ---------------------------------------------------------------------------------------------
// Digests and brief values

/// The first `n` hex digits of the SHA-256 of `bytes`.
fn sha(bytes: &[u8], n: usize) -> String {
    let mut h = hex::encode(Sha256::digest(bytes));
    h.truncate(n);
    h
}

/// The short digest of a value: its canonical JSON's SHA-256, 8 hex digits.
fn d8(v: &Value) -> String {
    sha(serde_json::to_string(v).unwrap_or_default().as_bytes(), 8)
}

/// A 64-digit hex digest, cut to 8 digits (`null` stays `null`).
fn cut(v: &Value) -> String {
    match v.as_str() {
        Some(s) if s.len() > 8 && is_hex(s) => s[..8].to_string(),
        _ => brief(v),
    }
}

fn is_hex(s: &str) -> bool {
    !s.is_empty() && s.len().is_multiple_of(2) && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

fn is_scalar(v: &Value) -> bool {
    !matches!(v, Value::Array(_) | Value::Object(_))
}

fn is_token(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | ':' | '+' | '<' | '>' | '|'))
}

/// A value in a few characters, lossless or digested. Long arrays and tensors show their first
/// elements only at the top (an expectation's members, a tensor); deeper, their digest.
fn brief(v: &Value) -> String {
    brief_at(v, 0)
}

fn brief_at(v: &Value, depth: usize) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) if s.len() <= 24 => {
            if is_token(s) {
                s.clone()
            } else {
                format!("{s:?}")
            }
        }
        // A SHA-256 digest: its first 8 digits.
        Value::String(s) if s.len() == 64 && is_hex(s) => format!("{}…", &s[..8]),
        Value::String(s) if is_hex(s) => format!("{}…({}B)#{}", &s[..8], s.len() / 2, d8(v)),
        Value::String(s) => format!(
            "{:?}…({} chars)#{}",
            s.chars().take(12).collect::<String>(),
            s.chars().count(),
            d8(v)
        ),
        Value::Array(a) => array(a, v, depth),
        Value::Object(m) => tensor(m, depth)
            .or_else(|| digest_tensor(m))
            .unwrap_or_else(|| object(m, v, depth)),
    }
}

fn array(a: &[Value], v: &Value, depth: usize) -> String {
    if a.is_empty() {
        return "[]".into();
    }
    if a.len() <= WHOLE {
        let whole = a.iter().map(|x| brief_at(x, depth + 1)).collect::<Vec<_>>().join(" ");
        if whole.len() <= 72 {
            return format!("[{whole}]");
        }
    }
    if depth == 0 && a.iter().all(is_scalar) {
        format!("[{}]#{}: {}", a.len(), d8(v), first(a))
    } else {
        format!("[{}]#{}", a.len(), d8(v))
    }
}

/// The first few elements of an array, with `…` when there are more.
fn first(a: &[Value]) -> String {
    let mut s = a.iter().take(FIRST).map(brief).collect::<Vec<_>>().join(" ");
    if a.len() > FIRST {
        s.push_str(" …");
    }
    s
}

/// A `{ "data", "shape" }` tensor: its shape, a digest when its data is long, its first elements.
fn tensor(m: &Map<String, Value>, depth: usize) -> Option<String> {
    if m.len() != 2 {
        return None;
    }
    let (data, shape) = (m.get("data")?.as_array()?, m.get("shape")?.as_array()?);
    let shape = shape.iter().map(brief).collect::<Vec<_>>().join(",");
    Some(if data.is_empty() {
        format!("[{shape}]: (empty)")
    } else if data.len() <= 6 {
        format!("[{shape}]: {}", data.iter().map(brief).collect::<Vec<_>>().join(" "))
    } else if depth == 0 {
        format!("[{shape}]#{}: {}", d8(&m["data"]), first(data))
    } else {
        format!("[{shape}]#{}", d8(&m["data"]))
    })
}

/// A scale record's output `{ "samples", "sha256", "shape" }` (docs/protocol.md, the scale tier):
/// its shape, its digest's first 8 digits, its first corner samples as `(c,y,x)=v`.
fn digest_tensor(m: &Map<String, Value>) -> Option<String> {
    let (samples, sha, shape) = (
        m.get("samples")?.as_array()?,
        m.get("sha256")?.as_str()?,
        m.get("shape")?,
    );
    let corner = |v: &Value| {
        let n: Vec<String> = v.as_array().into_iter().flatten().map(brief).collect();
        format!(
            "({})={}",
            n[..n.len().saturating_sub(1)].join(","),
            n.last().cloned().unwrap_or_default()
        )
    };
    let mut corners = samples.iter().take(4).map(corner).collect::<Vec<_>>().join(" ");
    if samples.len() > 4 {
        corners.push_str(&format!(" … ({} samples)", samples.len()));
    }
    Some(format!(
        "[{}]#{}: {corners}",
        words(shape).replace(' ', ","),
        sha.get(..8)?
    ))
}

fn object(m: &Map<String, Value>, v: &Value, depth: usize) -> String {
    if m.is_empty() {
        return "{}".into();
    }
    let whole = members_at(m, &[], depth + 1);
    if whole.len() <= 160 {
        format!("{{{whole}}}")
    } else {
        format!("{{{}}}#{}", m.keys().cloned().collect::<Vec<_>>().join(" "), d8(v))
    }
}

/// `key=value` for every member not in `skip`, space-separated, at the top.
fn members(m: &Map<String, Value>, skip: &[&str]) -> String {
    members_at(m, skip, 0)
}

fn members_at(m: &Map<String, Value>, skip: &[&str], depth: usize) -> String {
    m.iter()
        .filter(|(k, _)| !skip.contains(&k.as_str()))
        .map(|(k, v)| format!("{k}={}", brief_at(v, depth)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `"; key=value …"` for the members a renderer did not name, or nothing.
fn rest(m: &Map<String, Value>, known: &[&str]) -> String {
    let r = members(m, known);
    if r.is_empty() { r } else { format!("; {r}") }
}

fn s<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("?")
}

fn ms<'a>(m: &'a Map<String, Value>, key: &str) -> &'a str {
    m.get(key).and_then(Value::as_str).unwrap_or("?")
}

fn words(v: &Value) -> String {
    match v.as_array() {
        Some(a) if a.is_empty() => "-".into(),
        Some(a) => a.iter().map(brief).collect::<Vec<_>>().join(" "),
        None => brief(v),
    }
}

/// A `{ "outputs": […] }` / `{ "refuse": … }` expectation.
fn outcome(e: &Value) -> String {
    let Some(m) = e.as_object() else { return brief(e) };
    if let Some(code) = m.get("refuse") {
        let at = m.get("at").map(|a| format!("at {} ", brief(a))).unwrap_or_default();
        return format!("{at}refuse {}{}", brief(code), rest(m, &["refuse", "at"]));
    }
    if let Some(Value::Array(outs)) = m.get("outputs") {
        let each: Vec<String> = outs.iter().map(brief).collect();
        let joined = each.join(" | ");
        if joined.len() <= 100 {
            return format!("{joined}{}", rest(m, &["outputs"]));
        }
        // Several long outputs: one line each.
        let lines: String = each
            .iter()
            .enumerate()
            .map(|(i, o)| format!("\n    output {i} {o}"))
            .collect();
        return format!("{} outputs{}{lines}", each.len(), rest(m, &["outputs"]));
    }
    members(m, &[])
}

// ---------------------------------------------------------------------------------------------
// Records

/// A JSON Lines file as blocks `(id, text)`, ordered by id.
fn render_jsonl(rel: &str, text: &str) -> Vec<(String, String)> {
    let stem = Path::new(rel).file_stem().and_then(|s| s.to_str()).unwrap_or_default();
    let mut blocks: Vec<(String, String)> = text
        .lines()
        .enumerate()
        .map(|(n, line)| match serde_json::from_str::<Value>(line) {
            Ok(Value::Object(m)) => {
                let id = m.get("id").and_then(Value::as_str).map(str::to_string);
                let id = id.unwrap_or_else(|| format!("(line {})", n + 1));
                let body = record(stem, &m);
                (id.clone(), format!("{id}: {body}"))
            }
            _ => (
                format!("(line {})", n + 1),
                format!(
                    "(line {}): not a JSON object, {}B #{}",
                    n + 1,
                    line.len(),
                    sha(line.as_bytes(), 8)
                ),
            ),
        })
        .collect();
    blocks.sort_by(|a, b| a.0.cmp(&b.0));
    blocks
}

fn record(stem: &str, m: &Map<String, Value>) -> String {
    let has = |k: &str| m.contains_key(k);
    if has("decodes") && has("graph") {
        graph_vector(m)
    } else if has("op") && has("in") {
        stage(stem, m)
    } else if has("lowering") {
        lowering(m)
    } else if has("bundle") {
        scale_path(m)
    } else if has("fn") {
        cis2_op(m)
    } else if has("model") && has("prompt") {
        cis2_decode(m)
    } else if has("buffers") {
        dequant_call(m)
    } else if m.get("in").is_some_and(|i| i.get("q").is_some()) {
        dequant_numeric(m)
    } else {
        members(m, &["id"])
    }
}

/// A graph or per-operator vector: load, profiles, the graph's size and digest, then per decode
/// the digest of its inputs and scalars and its outputs or refusal.
fn graph_vector(m: &Map<String, Value>) -> String {
    let graph = m["graph"].as_str().unwrap_or_default();
    let mut out = format!(
        "load {}; profiles {}; graph {}B #{}{}",
        brief(m.get("load").unwrap_or(&Value::Null)),
        words(m.get("profiles").unwrap_or(&Value::Null)),
        graph.len() / 2,
        d8(&m["graph"]),
        rest(m, &["decodes", "graph", "id", "load", "profiles"])
    );
    for (i, d) in m["decodes"].as_array().into_iter().flatten().enumerate() {
        let mut request = d.clone();
        let expect = request.as_object_mut().and_then(|o| o.remove("expect"));
        let expect = expect.as_ref().map(outcome).unwrap_or_else(|| "(no expect)".into());
        out.push_str(&format!("\n  decode {i} ({}): {expect}", inputs(&request)));
    }
    if m["decodes"].as_array().is_some_and(Vec::is_empty) {
        out.push_str("; no decodes");
    }
    out
}

/// A decode's inputs: each scale recipe as `seed s [lo,hi] C×H×W`, else `in #…` (their digest).
fn inputs(request: &Value) -> String {
    let recipes: Option<Vec<String>> = request["inputs"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            let r = t.get("recipe")?;
            Some(format!(
                "seed {} [{}] {}",
                brief(&r["seed"]),
                words(&r["range"]).replace(' ', ","),
                words(&t["shape"]).replace(' ', "×")
            ))
        })
        .collect();
    match recipes {
        Some(r) if !r.is_empty() && request["scalars"].as_array().is_none_or(Vec::is_empty) => r.join("; "),
        _ => format!("in #{}", d8(request)),
    }
}

/// A line longer than 140 characters breaks before its `→`.
fn wrap(line: String) -> String {
    match line.find(" → ") {
        Some(at) if line.len() > 140 && !line.contains('\n') => format!("{}\n  {}", &line[..at], &line[at + 1..]),
        _ => line,
    }
}

/// Integers, 20 to a line.
fn ids(v: &Value) -> String {
    match v.as_array() {
        Some(a) if a.len() > 20 => a
            .chunks(20)
            .map(|c| c.iter().map(brief).collect::<Vec<_>>().join(" "))
            .collect::<Vec<_>>()
            .join("\n    "),
        _ => words(v),
    }
}

/// A stage-operator vector: its operands and modes, then its result or `at`/`refuse`.
fn stage(stem: &str, m: &Map<String, Value>) -> String {
    let op = m.get("op").and_then(Value::as_str).filter(|op| *op != stem);
    let modes = m.get("modes").filter(|x| x.as_object().is_some_and(|o| !o.is_empty()));
    wrap(format!(
        "{}{}in {} → {}{}",
        op.map(|op| format!("op {op}; ")).unwrap_or_default(),
        modes.map(|x| format!("modes {}; ", brief(x))).unwrap_or_default(),
        brief(&m["in"]),
        m.get("expect").map(outcome).unwrap_or_else(|| "(no expect)".into()),
        rest(m, &["expect", "id", "in", "modes", "op"])
    ))
}

/// A lowering record: the lowering, capability, claim and files, then the load and digests.
fn lowering(m: &Map<String, Value>) -> String {
    let files = match m.get("files").and_then(Value::as_object) {
        Some(f) => f
            .iter()
            .map(|(k, v)| format!("{k}#{}", d8(v)))
            .collect::<Vec<_>>()
            .join(" "),
        None => "-".into(),
    };
    let e = m.get("expect").cloned().unwrap_or(Value::Null);
    let graphs = match e.get("graphs").and_then(Value::as_object) {
        Some(g) if g.is_empty() => "-".into(),
        Some(g) => g
            .iter()
            .map(|(k, v)| format!("{k}={}", cut(v)))
            .collect::<Vec<_>>()
            .join(" "),
        None => "?".into(),
    };
    let extra = e
        .as_object()
        .map(|o| rest(o, &["certificate_sha256", "graphs", "load"]))
        .unwrap_or_default();
    format!(
        "{} for {}, claim {}, files {files}{}\n  → load {}; certificate {}; graphs {graphs}{extra}",
        ms(m, "lowering"),
        ms(m, "capability"),
        brief(m.get("claim").unwrap_or(&Value::Null)),
        rest(m, &["capability", "claim", "expect", "files", "id", "lowering"]),
        brief(e.get("load").unwrap_or(&Value::Null)),
        cut(e.get("certificate_sha256").unwrap_or(&Value::Null)),
    )
}

/// A jpegai scale-path record: the bundle's and payload's digests, the load, then each plane's
/// tensors or refusal, one line each.
fn scale_path(m: &Map<String, Value>) -> String {
    let e = m.get("expect").cloned().unwrap_or(Value::Null);
    let mut out = format!(
        "bundle #{}, payload #{} → load {}{}",
        d8(&m["bundle"]),
        m.get("payload").map(d8).unwrap_or_else(|| "-".into()),
        brief(e.get("load").unwrap_or(&Value::Null)),
        rest(m, &["bundle", "expect", "id", "payload"])
    );
    for (plane, p) in e
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| k.as_str() != "load")
    {
        match p.as_object() {
            Some(t) if !t.contains_key("refuse") => {
                for (name, v) in t {
                    out.push_str(&format!("\n  {plane}.{name} {}", brief(v)));
                }
            }
            _ => out.push_str(&format!("\n  {plane}: {}", outcome(p))),
        }
    }
    out
}

/// A CIS-2 function record: `fn {in} → expect`.
fn cis2_op(m: &Map<String, Value>) -> String {
    wrap(format!(
        "{} {} → {}{}",
        ms(m, "fn"),
        brief(m.get("in").unwrap_or(&Value::Null)),
        m.get("expect").map(outcome).unwrap_or_else(|| "(no expect)".into()),
        rest(m, &["expect", "fn", "id", "in"])
    ))
}

/// The prompt's bytes as a quoted string (cut, with a digest, when long), or hex when they are
/// not UTF-8.
fn prompt(v: &Value) -> String {
    let bytes = v.as_str().and_then(|h| hex::decode(h).ok());
    match bytes.map(String::from_utf8) {
        Some(Ok(text)) if text.chars().count() <= 48 => format!("{text:?}"),
        Some(Ok(text)) => format!("{:?}…#{}", text.chars().take(40).collect::<String>(), d8(v)),
        _ => brief(v),
    }
}

/// A CIS-2 decode: the model, prompt and steps; then the files' and tables' digests, the token
/// ids, and the decode's digests; or the refusal.
fn cis2_decode(m: &Map<String, Value>) -> String {
    let model = ms(m, "model");
    let mut out = format!(
        "{} {} gen_toks {}{}",
        model.strip_prefix("cis2/models/").unwrap_or(model),
        prompt(&m["prompt"]),
        brief(m.get("gen_toks").unwrap_or(&Value::Null)),
        rest(m, &["expect", "gen_toks", "id", "model", "prompt"])
    );
    let e = m.get("expect").cloned().unwrap_or(Value::Null);
    let Some(o) = e.as_object().filter(|o| !o.contains_key("refuse")) else {
        out.push_str(&format!(" → {}", outcome(&e)));
        return out;
    };
    let g = |k: &str| cut(o.get(k).unwrap_or(&Value::Null));
    out.push_str(&format!(
        "\n  files weights {} tokenizer {} config {}; tables {} inv_freq {}",
        g("weights_sha256"),
        g("tokenizer_sha256"),
        g("config_sha256"),
        g("table_digest"),
        g("inv_freq_table_digest")
    ));
    out.push_str(&format!(
        "\n  prompt_ids {}",
        ids(o.get("prompt_ids").unwrap_or(&Value::Null))
    ));
    out.push_str(&format!(
        "\n  generated_ids {}",
        ids(o.get("generated_ids").unwrap_or(&Value::Null))
    ));
    out.push_str(&format!(
        "\n  argmax {} witness {}{}",
        g("argmax_digest"),
        g("witness_digest"),
        rest(
            o,
            &[
                "argmax_digest",
                "config_sha256",
                "generated_ids",
                "inv_freq_table_digest",
                "prompt_ids",
                "table_digest",
                "tokenizer_sha256",
                "weights_sha256",
                "witness_digest"
            ]
        )
    ));
    out
}

/// A DetessDequant numeric record: scale, zero point and `q`, then the two outputs.
fn dequant_numeric(m: &Map<String, Value>) -> String {
    let i = &m["in"];
    let mut out = format!(
        "scale {} zero_point {} q {}{}",
        brief(i.get("scale").unwrap_or(&Value::Null)),
        brief(i.get("zero_point").unwrap_or(&Value::Null)),
        brief(&i["q"]),
        i.as_object()
            .map(|o| rest(o, &["q", "scale", "zero_point"]))
            .unwrap_or_default()
    );
    out.push_str(&rest(m, &["expect", "id", "in"]));
    match m.get("expect").and_then(Value::as_object) {
        Some(e) if !e.contains_key("refuse") => {
            for (k, v) in e {
                out.push_str(&format!("\n  {k} {}", brief(v)));
            }
        }
        _ => out.push_str(&format!(" → {}", m.get("expect").map(outcome).unwrap_or_default())),
    }
    out
}

/// A port spec as `Int8[2,3] MlaTiled`.
fn spec(v: &Value) -> String {
    let shape = v
        .get("shape")
        .and_then(Value::as_array)
        .map(|a| a.iter().map(brief).collect::<Vec<_>>().join(","))
        .unwrap_or_default();
    let layout = v
        .get("layout")
        .and_then(Value::as_object)
        .and_then(|l| l.keys().next().cloned())
        .unwrap_or_else(|| "?".into());
    format!("{}[{shape}] {layout}", s(v, "dtype"))
}

fn specs(v: Option<&Value>) -> String {
    match v.and_then(Value::as_array) {
        Some(a) if a.is_empty() => "(none)".into(),
        Some(a) => a.iter().map(spec).collect::<Vec<_>>().join(" + "),
        None => "?".into(),
    }
}

/// A DetessDequant call: its ports, parameters and the digest of the whole request, then each
/// output buffer (size, digest, first bytes) or the refusal.
fn dequant_call(m: &Map<String, Value>) -> String {
    let mut request = m.clone();
    request.remove("expect");
    let params = m
        .get("params")
        .and_then(Value::as_object)
        .map(|p| members(p, &[]))
        .unwrap_or_default();
    let expect = match m.get("expect").and_then(|e| e.get("outputs")).and_then(Value::as_array) {
        Some(outs) => outs
            .iter()
            .map(|o| {
                let h = o.as_str().unwrap_or_default();
                let head: String = h.chars().take(16).collect();
                let more = if h.len() > 16 { "…" } else { "" };
                format!("{}B #{}: {head}{more}", h.len() / 2, d8(o))
            })
            .collect::<Vec<_>>()
            .join(" | "),
        None => m.get("expect").map(outcome).unwrap_or_else(|| "(no expect)".into()),
    };
    format!(
        "{} → {}; {params}; req #{}\n  → {expect}",
        specs(m.get("inputs")),
        specs(m.get("outputs")),
        d8(&Value::Object(request))
    )
}

// ---------------------------------------------------------------------------------------------
// Certificates

/// `acc32 fails first at synth node 0 convT.acc (33 bits)`.
fn failure(profile: &str, f: &Value) -> String {
    let known = ["bits", "graph", "index", "key", "where"];
    format!(
        "{profile} first failure: {} {} {} {} ({} bits){}",
        s(f, "graph"),
        s(f, "where"),
        s(f, "index"),
        s(f, "key"),
        s(f, "bits"),
        f.as_object().map(|o| rest(o, &known)).unwrap_or_default()
    )
}

/// The widest of a node's intermediates, `key N bits` (the first of the widest, in key order).
fn widest(n: &Value) -> Option<String> {
    let mut best: Option<(u64, &String)> = None;
    for (k, v) in n.get("intermediates")?.as_object()? {
        let bits = v
            .get("bits")
            .and_then(Value::as_str)
            .and_then(|b| b.parse().ok())
            .unwrap_or(0);
        if best.is_none_or(|(b, _)| bits > b) {
            best = Some((bits, k));
        }
    }
    best.map(|(b, k)| format!("widest {k} {b}b"))
}

fn node(n: &Value) -> String {
    let mut parts = vec![format!("fits {}", words(n.get("fits").unwrap_or(&Value::Null)))];
    parts.extend(widest(n));
    if let Some(outs) = n.get("out").and_then(Value::as_array) {
        let bits: Vec<&str> = outs.iter().map(|o| s(o, "bits")).collect();
        parts.push(format!("out {}b", bits.join(",")));
    }
    if n.get("saturated").and_then(Value::as_bool) == Some(true) {
        parts.push("SATURATED".into());
    }
    for k in ["npu_flags", "acc32_params"] {
        if let Some(a) = n.get(k).and_then(Value::as_array).filter(|a| !a.is_empty()) {
            parts.push(format!("{k} {}", a.iter().map(brief).collect::<Vec<_>>().join(",")));
        }
    }
    format!("node {} {}: {} #{}", s(n, "index"), s(n, "op"), parts.join("; "), d8(n))
}

/// An input (`tensor kind policy [lo,hi]`) or a scalar (`index [lo,hi]`) of a certificate's graph.
fn port(p: &Value) -> String {
    let mut words: Vec<&str> = ["tensor", "index", "kind", "policy"]
        .iter()
        .filter_map(|k| p.get(*k).and_then(Value::as_str))
        .collect();
    let range = format!("[{},{}]", s(p, "lo"), s(p, "hi"));
    words.push(&range);
    words.join(" ")
}

/// A certificate: header, verdict, first failures, then per graph its digest, inputs and one line
/// per node (op, fits, widest intermediate, output widths, the node's digest).
fn render_certificate(c: &Map<String, Value>) -> String {
    let mut out = format!(
        "{}; capability {}; lowering {}; set {}{}\n",
        ms(c, "certificate"),
        brief(c.get("capability").unwrap_or(&Value::Null)),
        brief(c.get("lowering").unwrap_or(&Value::Null)),
        cut(c.get("set_sha256").unwrap_or(&Value::Null)),
        rest(
            c,
            &[
                "capability",
                "certificate",
                "graphs",
                "lowering",
                "set_sha256",
                "verdict"
            ]
        )
    );
    let v = c.get("verdict").cloned().unwrap_or(Value::Null);
    let yes = |k: &str| match v.get(k).and_then(Value::as_bool) {
        Some(true) => "yes",
        Some(false) => "no",
        None => "?",
    };
    out.push_str(&format!(
        "verdict: acc32 {}, acc64 {}, npu {}; npu_reasons {}; npu_flags {}{}\n",
        yes("acc32"),
        yes("acc64"),
        yes("npu"),
        words(v.get("npu_reasons").unwrap_or(&Value::Null)),
        words(v.get("npu_flags").unwrap_or(&Value::Null)),
        v.as_object()
            .map(|o| rest(
                o,
                &[
                    "acc32",
                    "acc32_first_failure",
                    "acc64",
                    "acc64_first_failure",
                    "npu",
                    "npu_flags",
                    "npu_reasons"
                ]
            ))
            .unwrap_or_default()
    ));
    for p in ["acc32", "acc64"] {
        if let Some(f) = v.get(format!("{p}_first_failure")) {
            out.push_str(&failure(p, f));
            out.push('\n');
        }
    }
    for g in c.get("graphs").and_then(Value::as_array).into_iter().flatten() {
        let inputs = g
            .get("inputs")
            .and_then(Value::as_array)
            .map(|a| a.iter().map(port).collect::<Vec<_>>());
        let scalars = g
            .get("scalars")
            .and_then(Value::as_array)
            .map(|a| a.iter().map(port).collect::<Vec<_>>());
        out.push_str(&format!(
            "graph {} {}: inputs {} (#{}); scalars {}{}\n",
            s(g, "name"),
            cut(g.get("graph_sha256").unwrap_or(&Value::Null)),
            inputs.map(|i| i.join(", ")).unwrap_or_else(|| "?".into()),
            d8(g.get("inputs").unwrap_or(&Value::Null)),
            match scalars {
                Some(sc) if sc.is_empty() => "-".into(),
                Some(sc) => format!("{} (#{})", sc.join(", "), d8(&g["scalars"])),
                None => "?".into(),
            },
            g.as_object()
                .map(|o| rest(o, &["graph_sha256", "inputs", "name", "nodes", "scalars"]))
                .unwrap_or_default()
        ));
        for n in g.get("nodes").and_then(Value::as_array).into_iter().flatten() {
            out.push_str(&format!("  {}\n", node(n)));
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// The tree

/// A file's own snapshot, when it has one: a JSON Lines file or a certificate.
fn render_file(rel: &str, bytes: &[u8]) -> Option<String> {
    if rel.ends_with(".jsonl") {
        let text = String::from_utf8_lossy(bytes);
        let blocks = render_jsonl(rel, &text);
        let mut out = blocks.into_iter().map(|(_, b)| b).collect::<Vec<_>>().join("\n");
        out.push('\n');
        return Some(out);
    }
    if rel.ends_with(".json")
        && !rel.starts_with("cis2/")
        && let Ok(Value::Object(c)) = serde_json::from_slice::<Value>(bytes)
        && c.contains_key("certificate")
        && c.contains_key("verdict")
    {
        return Some(render_certificate(&c));
    }
    None
}

/// The snapshot name of a file of the tree.
fn snapshot_name(rel: &str) -> String {
    rel.replace('/', "__")
}

/// Every snapshot of the tree at `dir`: `(name, description, text)`, the index last.
fn render_tree(dir: &Path) -> Vec<(String, String, String)> {
    use rayon::prelude::*;
    let all = files(dir);
    let rendered: Vec<(String, Vec<u8>, Option<String>)> = all
        .par_iter()
        .map(|rel| {
            let bytes = std::fs::read(dir.join(rel)).unwrap();
            let r = render_file(rel, &bytes);
            (rel.clone(), bytes, r)
        })
        .collect();
    let mut out = Vec::new();
    let mut index = String::new();
    for (rel, bytes, r) in rendered {
        match r {
            Some(text) => out.push((snapshot_name(&rel), format!("ops-conformance/{rel}"), text)),
            None if rel == "MANIFEST.sha256" => index.push_str(&format!(
                "MANIFEST.sha256: {} entries (derived)\n",
                String::from_utf8_lossy(&bytes).lines().count()
            )),
            None => index.push_str(&format!("{rel} {}B {}\n", bytes.len(), sha(&bytes, 16))),
        }
    }
    out.push((
        INDEX.to_string(),
        "ops-conformance/: every file without its own snapshot (size, SHA-256)".to_string(),
        index,
    ));
    out
}

// ---------------------------------------------------------------------------------------------
// Tests

#[test]
fn the_committed_tree_matches_its_snapshots() {
    let mut failed = Vec::new();
    for (name, description, text) in render_tree(&tree()) {
        let mut settings = insta::Settings::clone_current();
        settings.set_snapshot_path("snapshots/tree");
        settings.set_prepend_module_to_snapshot(false);
        settings.set_omit_expression(true);
        settings.set_description(description);
        let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            settings.bind(|| insta::assert_snapshot!(name.clone(), text))
        }));
        if result.is_err() {
            failed.push(name);
        }
    }
    assert!(
        failed.is_empty(),
        "{} snapshots of ops-conformance/ changed: {}\nreview with `cargo insta review`, or read the \
         .snap.new files in generator/tests/snapshots/tree/ and accept with `INSTA_UPDATE=always cargo test \
         -p wai-generate --test tree_snapshots` (README.md, Contributing)",
        failed.len(),
        failed.join(", ")
    );
}

#[test]
fn every_snapshot_has_its_file() {
    let expected: std::collections::BTreeSet<String> = files(&tree())
        .iter()
        .filter(|rel| {
            let bytes = std::fs::read(tree().join(rel)).unwrap();
            rel.ends_with(".jsonl") || render_file(rel, &bytes).is_some()
        })
        .map(|rel| snapshot_name(rel))
        .chain([INDEX.to_string()])
        .collect();
    let orphans: Vec<String> = std::fs::read_dir(snapshot_dir())
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.strip_suffix(".snap").map(str::to_string))
        .filter(|name| !expected.contains(name))
        .collect();
    assert!(
        orphans.is_empty(),
        "snapshots of files no longer in ops-conformance/ (delete them): {orphans:?}"
    );
}

#[test]
fn the_snapshots_stay_under_a_tenth_of_the_tree() {
    let size = |dir: &Path, suffix: &str| -> u64 {
        files(dir)
            .iter()
            .filter(|f| f.ends_with(suffix))
            .map(|f| std::fs::metadata(dir.join(f)).unwrap().len())
            .sum()
    };
    let (tree, snaps) = (size(&tree(), ""), size(&snapshot_dir(), ".snap"));
    eprintln!(
        "snapshots {snaps} B, tree {tree} B: {:.2}%",
        100.0 * snaps as f64 / tree as f64
    );
    assert!(snaps > 0 && snaps * 10 < tree, "snapshots {snaps} B, tree {tree} B");
}

/// Regenerates `vectors/relu.jsonl` from a one-file corpus with the generator binary.
fn regen_relu(corpus_file: &Value, dir: &Path) -> String {
    let corpus = dir.join("corpus");
    std::fs::create_dir_all(corpus.join("vectors")).unwrap();
    std::fs::write(corpus.join("vectors/relu.json"), corpus_file.to_string()).unwrap();
    let out = dir.join("out");
    let status = std::process::Command::new(env!("CARGO_BIN_EXE_wai-generate"))
        .args(["regen", "--corpus"])
        .arg(&corpus)
        .arg("--out")
        .arg(&out)
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::read_to_string(out.join("vectors/relu.jsonl")).unwrap()
}

#[test]
fn one_changed_case_changes_exactly_its_records_lines() {
    let root = root();
    let original: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("corpus/vectors/relu.json")).unwrap()).unwrap();
    // relu-planes' first decode: [-3, 4] becomes [-3, 5].
    let mut changed = original.clone();
    let case = changed["cases"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|c| c["id"] == "relu-planes")
        .unwrap();
    case["decodes"][0]["inputs"][0]["data"] = serde_json::json!([-3, 5]);

    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let before = regen_relu(&original, a.path());
    let after = regen_relu(&changed, b.path());
    let committed = std::fs::read_to_string(tree().join("vectors/relu.jsonl")).unwrap();
    assert_eq!(before, committed, "the one-file corpus regenerates the committed file");
    assert_ne!(before, after);

    let (old, new) = (
        render_jsonl("vectors/relu.jsonl", &before),
        render_jsonl("vectors/relu.jsonl", &after),
    );
    let ids = |b: &[(String, String)]| b.iter().map(|(id, _)| id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&old), ids(&new));
    let moved: Vec<&str> = old
        .iter()
        .zip(&new)
        .filter(|(x, y)| x.1 != y.1)
        .map(|(x, _)| x.0.as_str())
        .collect();
    assert_eq!(moved, ["relu-planes"]);

    // Line by line over the whole rendering: the lines that differ are the block's decode 0.
    let (old_text, new_text) = (render_file("vectors/relu.jsonl", before.as_bytes()).unwrap(), {
        render_file("vectors/relu.jsonl", after.as_bytes()).unwrap()
    });
    let (ol, nl): (Vec<&str>, Vec<&str>) = (old_text.lines().collect(), new_text.lines().collect());
    assert_eq!(ol.len(), nl.len());
    let block = old
        .iter()
        .find(|(id, _)| id == "relu-planes")
        .unwrap()
        .1
        .lines()
        .collect::<Vec<_>>();
    let differing: Vec<(usize, &str, &str)> = ol
        .iter()
        .zip(&nl)
        .enumerate()
        .filter(|(_, (x, y))| x != y)
        .map(|(i, (x, y))| (i, *x, *y))
        .collect();
    assert_eq!(differing.len(), 1, "{differing:?}");
    let (line, was, is) = differing[0];
    let start = ol.iter().position(|l| l.starts_with("relu-planes: ")).unwrap();
    assert!(
        (start..start + block.len()).contains(&line),
        "line {line} outside relu-planes' block"
    );
    assert!(
        was.starts_with("  decode 0 (in #") && was.ends_with("): [2,1,1]: 0 4"),
        "{was}"
    );
    assert!(
        is.starts_with("  decode 0 (in #") && is.ends_with("): [2,1,1]: 0 5"),
        "{is}"
    );
}

#[test]
fn brief_values_are_lossless_or_digested() {
    use serde_json::json;
    assert_eq!(brief(&json!(["1", "2"])), "[1 2]");
    let long: Vec<String> = (0..20).map(|i| i.to_string()).collect();
    let v = json!(long);
    assert_eq!(brief(&v), format!("[20]#{}: 0 1 2 3 …", d8(&v)));
    assert_eq!(
        brief(&json!({"data": ["0", "3"], "shape": ["1", "1", "2"]})),
        "[1,1,2]: 0 3"
    );
    assert_eq!(brief(&json!("a b")), "\"a b\"");
    let hex = "ab".repeat(20);
    assert_eq!(brief(&json!(hex)), format!("abababab…(20B)#{}", d8(&json!(hex))));
    assert_eq!(
        brief(&json!({"at": "0", "refuse": "field_range"})),
        "{at=0 refuse=field_range}"
    );
    assert_eq!(
        outcome(&json!({"at": "0", "refuse": "field_range"})),
        "at 0 refuse field_range"
    );
}
