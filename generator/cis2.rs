//! The CIS-2 suites (docs/protocol.md, "CIS-2"): `corpus/cis2/ops.json` becomes
//! `cis2/ops.jsonl`; `corpus/cis2/models.json` becomes the model folders `cis2/models/<name>/`
//! and `corpus/cis2/decode.json` the decode records over them, `cis2/decode.jsonl`.

use crate::case;
use crate::cis2_model::{self, Files};
use crate::value::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashSet};
use std::path::Path;
use wai_oracle::cis2::decode::Artifacts;
use wai_oracle::cis2::pinned::rsqrt;
use wai_oracle::cis2::{Arith, F32, Soft, rope};
use wai_oracle::files;
use wai_oracle::softfloat::{BINARY32, BINARY64, Env, Tininess};

/// What a record's `in` member holds, by function (docs/protocol.md's table).
#[derive(Clone, Copy)]
enum Kind {
    F32,
    F64,
    Bf16,
    List,
    Int,
}

fn kind(function: &str, key: &str) -> Kind {
    match (function, key) {
        ("widen_bf16", "b") => Kind::Bf16,
        ("narrow", "a") => Kind::F64,
        ("dot_seq" | "sum_seq", "a" | "b") => Kind::List,
        (_, "x") if function == "rmsnorm" => Kind::List,
        (_, "weight" | "scores" | "logits" | "head" | "inv_freq") => Kind::List,
        (_, "k" | "head_dim" | "pos") => Kind::Int,
        _ => Kind::F32,
    }
}

fn hex_of(s: &str, digits: usize) -> Option<u64> {
    let h = s.strip_prefix("0x")?;
    (h.len() == digits).then(|| u64::from_str_radix(h, 16).ok()).flatten()
}

/// A number's text: a JSON number's shortest form or a string.
fn text(v: &Value) -> Option<String> {
    match v {
        Value::Number(n) => Some(n.to_string()),
        Value::String(s) => Some(s.clone()),
        _ => None,
    }
}

/// A binary32: `"0x3f800000"`, a decimal (`"1e8"`, `"-0.0"`, `"inf"`, `"nan"`, or a JSON
/// number) rounded once by `str::parse`, or a recipe (`rope_angle`, `quadrant`, `rsqrt_route`).
fn f32_of(v: &Value, path: &str) -> Result<F32, Fail> {
    if let Value::Object(o) = v {
        return recipe(o, path);
    }
    let s = text(v).ok_or(format!("{path}: not a binary32"))?;
    if let Some(bits) = hex_of(&s, 8) {
        return Ok(F32(bits as u32));
    }
    s.parse::<f32>()
        .map(|x| F32(x.to_bits()))
        .map_err(|_| format!("{path}: {s:?} is not a binary32"))
}

/// The values of a computed input.
fn recipe(o: &Map<String, Value>, path: &str) -> Result<F32, Fail> {
    let a = Soft::X86_64;
    let (name, r) = o
        .iter()
        .next()
        .filter(|_| o.len() == 1)
        .ok_or(format!("{path}: one recipe"))?;
    let p = format!("{path}.{name}");
    let r = object(r, &p)?;
    let n = |k: &str| -> Result<u64, Fail> { u64_(member(r, k, &p)?, &format!("{p}.{k}")) };
    match name.as_str() {
        // `pos · inv_freq[i]`, §7.3's angle.
        "rope_angle" => {
            only(r, &["head_dim", "theta", "pos", "i"], &p)?;
            let table = rope::inv_freq(&a, n("head_dim")? as usize, f32_of(member(r, "theta", &p)?, &p)?);
            let f = *table.get(n("i")? as usize).ok_or(format!("{p}.i: past the table"))?;
            Ok(a.mul(a.of_int(n("pos")? as i64), f))
        }
        // The binary32 nearest `(k + ½·half)·π/2`, moved `ulps` steps toward +∞.
        "quadrant" => {
            only(r, &["k", "half", "ulps"], &p)?;
            let k = i64_(member(r, "k", &p)?, &format!("{p}.k"))? as f64;
            let half = if r.get("half") == Some(&Value::Bool(true)) {
                0.5
            } else {
                0.0
            };
            let base = ((k + half) * std::f64::consts::FRAC_PI_2) as f32;
            let ulps = i64_(r.get("ulps").unwrap_or(&json!(0)), &format!("{p}.ulps"))?;
            let step = if base.is_sign_negative() { -ulps } else { ulps };
            Ok(F32((i64::from(base.to_bits()) + step) as u32))
        }
        // The `nth` integer of `[from, to]` whose rsqrt by §6.1's route differs from one
        // rounding of the binary64 `1/sqrt(x)`.
        "rsqrt_route" => {
            only(r, &["from", "to", "nth"], &p)?;
            let env = Env::Flush(Tininess::AfterRounding);
            let f64_route = |x: F32| {
                let xd = env.convert(BINARY32, BINARY64, u64::from(x.0));
                let one = 1.0f64.to_bits();
                F32(env.convert(BINARY64, BINARY32, env.div(BINARY64, one, env.sqrt(BINARY64, xd))) as u32)
            };
            (n("from")?..=n("to")?)
                .map(|i| a.of_int(i as i64))
                .filter(|&x| rsqrt(&a, x) != f64_route(x))
                .nth(n("nth")? as usize)
                .ok_or(format!("{p}: fewer routes differ than nth"))
        }
        other => Err(format!("{path}: no recipe {other:?}")),
    }
}

/// A list of binary32: an array, or `{"random": {seed, count, exponents}}` (a random sign and
/// mantissa, the biased exponent uniform in `exponents`), or `{"inv_freq": {head_dim, theta}}`.
fn list_of(v: &Value, path: &str) -> Result<Vec<F32>, Fail> {
    if let Value::Array(items) = v {
        return items
            .iter()
            .enumerate()
            .map(|(i, x)| f32_of(x, &format!("{path}[{i}]")))
            .collect();
    }
    let o = object(v, path)?;
    if let Some(r) = o.get("inv_freq") {
        let p = format!("{path}.inv_freq");
        let r = object(r, &p)?;
        let hd = u64_(member(r, "head_dim", &p)?, &format!("{p}.head_dim"))? as usize;
        return Ok(rope::inv_freq(&Soft::X86_64, hd, f32_of(member(r, "theta", &p)?, &p)?));
    }
    let p = format!("{path}.random");
    let r = object(member(o, "random", path)?, &p)?;
    only(r, &["seed", "count", "exponents"], &p)?;
    let mut rng = ChaCha8Rng::seed_from_u64(u64_(member(r, "seed", &p)?, &format!("{p}.seed"))?);
    let (lo, hi) = pair(r.get("exponents"), (120, 130), &format!("{p}.exponents"))?;
    let count = u64_(member(r, "count", &p)?, &format!("{p}.count"))?;
    Ok((0..count)
        .map(|_| {
            let bits = rng.next_u32();
            let exp = lo + (bits >> 24) % (hi - lo + 1);
            F32((bits & 0x807F_FFFF) | (exp << 23))
        })
        .collect())
}

fn hex32(x: F32) -> Value {
    Value::String(format!("{:08x}", x.0))
}

/// An ops case's request.
fn op_request(c: &Map<String, Value>, path: &str) -> Result<Value, Fail> {
    only(c, &["id", "about", "covers", "fn", "in"], path)?;
    let function = string(member(c, "fn", path)?, &format!("{path}.fn"))?;
    let mut input = Map::new();
    if let Some(i) = c.get("in") {
        for (key, v) in object(i, &format!("{path}.in"))? {
            let p = format!("{path}.in.{key}");
            let value = match kind(function, key) {
                Kind::F32 => hex32(f32_of(v, &p)?),
                Kind::List => Value::Array(list_of(v, &p)?.into_iter().map(hex32).collect()),
                Kind::Int => Value::String(int(v, &p)?.to_string()),
                Kind::F64 => {
                    let s = text(v).ok_or(format!("{p}: not a binary64"))?;
                    let bits = hex_of(&s, 16)
                        .or_else(|| s.parse::<f64>().ok().map(f64::to_bits))
                        .ok_or(format!("{p}: {s:?} is not a binary64"))?;
                    Value::String(format!("{bits:016x}"))
                }
                Kind::Bf16 => {
                    let s = text(v).ok_or(format!("{p}: not a bf16"))?;
                    let bits = hex_of(&s, 4).ok_or(format!("{p}: {s:?} is not 0x and 4 hex digits"))?;
                    Value::String(format!("{bits:04x}"))
                }
            };
            input.insert(key.clone(), value);
        }
    }
    Ok(json!({ "fn": function, "id": member(c, "id", path)?, "in": input }))
}

/// The expanded cases of a corpus file of this suite.
fn read(corpus: &Path, name: &str) -> Result<Option<(String, Vec<case::Case>)>, Fail> {
    let file = corpus.join("cis2").join(name);
    let Ok(text) = std::fs::read_to_string(&file) else {
        return Ok(None);
    };
    let path = file.display().to_string();
    let v: Value = serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))?;
    Ok(Some((path.clone(), case::cases(&v, &path, corpus)?)))
}

/// Fills cases into one JSON Lines file, ids unique; the cases run in parallel.
fn lines(
    path: &str,
    cases: &[case::Case],
    fill: impl Fn(&Map<String, Value>, &str) -> Result<Value, Fail> + Sync,
) -> Result<Vec<u8>, Fail> {
    let mut ids = HashSet::new();
    if let Some(c) = cases.iter().find(|c| !ids.insert(c.id.clone())) {
        return Err(format!("{path}: case {}: the id is not unique in its file", c.id));
    }
    let filled: Vec<String> = cases
        .par_iter()
        .map(|c| {
            let p = format!("{path}: case {}", c.id);
            let filled = fill(object(&c.body, &p)?, &p).map_err(|e| format!("{p}: {e}"))?;
            wai_oracle::canon::to_line(&filled).map_err(|e| format!("{p}: {e}"))
        })
        .collect::<Result<_, Fail>>()?;
    Ok(filled.concat().into_bytes())
}

/// The model folders of `models.json`, by name.
fn models(corpus: &Path) -> Result<BTreeMap<String, Files>, Fail> {
    let file = corpus.join("cis2/models.json");
    if !file.exists() {
        return Ok(BTreeMap::new());
    }
    models_of(&file)
}

/// Writes the models of a recipe file into `out/<name>/` (the benchmark's checkpoint).
pub fn write_models(recipe: &Path, out: &Path) -> Result<(), Fail> {
    for (name, f) in models_of(recipe)? {
        let dir = out.join(&name);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        for (file, bytes) in [
            ("model.safetensors", &f.weights),
            ("config.json", &f.config),
            ("tokenizer.json", &f.tokenizer),
        ] {
            files::write(&dir.join(file), bytes).map_err(|e| format!("{}: {e}", dir.join(file).display()))?;
        }
        eprintln!("{}: {} bytes of weights", dir.display(), f.weights.len());
    }
    Ok(())
}

/// The models of a recipe file (models.json's form), by name.
fn models_of(file: &Path) -> Result<BTreeMap<String, Files>, Fail> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let path = file.display().to_string();
    let v: Value = serde_json::from_str(&text).map_err(|e| format!("{path}: {e}"))?;
    let o = object(&v, &path)?;
    only(o, &["about", "tokenizers", "models"], &path)?;
    let tokenizers = cis2_model::tokenizers(member(o, "tokenizers", &path)?, &format!("{path}.tokenizers"))?;
    let mut out = BTreeMap::new();
    for (i, m) in array(member(o, "models", &path)?, &format!("{path}.models"))?
        .iter()
        .enumerate()
    {
        let p = format!("{path}.models[{i}]");
        let m = object(m, &p)?;
        let name = string(member(m, "name", &p)?, &format!("{p}.name"))?;
        if out
            .insert(name.to_string(), cis2_model::build(m, &tokenizers, &p)?)
            .is_some()
        {
            return Err(format!("{p}.name: {name:?} is not unique"));
        }
    }
    Ok(out)
}

/// The files of `cis2/` in the tree.
pub fn tree_files(corpus: &Path) -> Result<Vec<(String, Vec<u8>)>, Fail> {
    let mut out = Vec::new();
    if let Some((path, cases)) = read(corpus, "ops.json")? {
        let ops = lines(&path, &cases, |c, p| {
            wai_oracle::fill::cis2::fill_op(&op_request(c, p)?)
        })?;
        out.push(("cis2/ops.jsonl".to_string(), ops));
    }
    let models = models(corpus)?;
    for (name, f) in &models {
        for (file, bytes) in [
            ("model.safetensors", &f.weights),
            ("config.json", &f.config),
            ("tokenizer.json", &f.tokenizer),
        ] {
            out.push((format!("cis2/models/{name}/{file}"), bytes.clone()));
        }
    }
    if let Some((path, cases)) = read(corpus, "decode.json")? {
        let decodes = lines(&path, &cases, |c, p| {
            only(c, &["id", "about", "covers", "model", "prompt", "gen_toks", "peer"], p)?;
            let name = string(member(c, "model", p)?, &format!("{p}.model"))?;
            let request = json!({
                "gen_toks": int(member(c, "gen_toks", p)?, &format!("{p}.gen_toks"))?.to_string(),
                "id": member(c, "id", p)?,
                "model": format!("cis2/models/{name}"),
                "prompt": hex::encode(string(member(c, "prompt", p)?, &format!("{p}.prompt"))?),
            });
            let artifacts = || -> Result<Artifacts, Fail> {
                let f = models
                    .get(name)
                    .ok_or(format!("model: no model {name:?} in models.json"))?;
                Ok(Artifacts {
                    weights: f.weights.clone(),
                    config: f.config.clone(),
                    tokenizer: f.tokenizer.clone(),
                })
            };
            let record = wai_oracle::fill::cis2::fill_decode_with(&request, |_| artifacts())?;
            if let Some(peer) = c.get("peer") {
                agrees_with_peer(&record["expect"], peer, "peer (the exact path)")?;
                let fast = fast_path(&artifacts()?, string(member(c, "prompt", p)?, "prompt")?, &record)?;
                agrees_with_peer(&fast, peer, "peer (the fast path)")?;
            }
            Ok(record)
        })?;
        out.push(("cis2/decode.jsonl".to_string(), decodes));
    }
    Ok(out)
}

/// The fast path's (§1.3's pinned hardware) digests and ids for a decode record's run, in the
/// record's form.
fn fast_path(files: &Artifacts, prompt: &str, record: &Value) -> Result<Value, Fail> {
    use wai_oracle::cis2::{decode, hard::Pinned};
    let gen_toks = string(member(object(record, "record")?, "gen_toks", "record")?, "gen_toks")?
        .parse::<usize>()
        .map_err(|e| format!("gen_toks: {e}"))?;
    let r = Pinned::new(1)?
        .run(|hard| decode::run(hard, files, prompt, gen_toks))
        .map_err(|e| format!("the fast path refuses: {}: {}", e.code.as_str(), e.why))?;
    let ids = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>();
    Ok(json!({
        "prompt_ids": ids(&r.prompt_ids),
        "generated_ids": ids(&r.generated_ids),
        "witness_digest": hex::encode(r.witness_digest),
        "argmax_digest": hex::encode(r.argmax_digest),
    }))
}

/// A decode case's `peer`: the goldens another implementation publishes for the same run (its
/// `source`, and any of `prompt_ids`, `generated_ids`, `witness_digest`, `argmax_digest`, ids as
/// JSON numbers). The record's `expect` must hold each; the tree is not written otherwise.
fn agrees_with_peer(expect: &Value, peer: &Value, path: &str) -> Result<(), Fail> {
    let peer = object(peer, path)?;
    only(
        peer,
        &[
            "source",
            "prompt_ids",
            "generated_ids",
            "witness_digest",
            "argmax_digest",
        ],
        path,
    )?;
    string(member(peer, "source", path)?, &format!("{path}.source"))?;
    for (k, published) in peer.iter().filter(|(k, _)| *k != "source") {
        // The record writes ids as decimal strings.
        let published = match published {
            Value::Array(ids) => Value::Array(ids.iter().map(|id| Value::String(id.to_string())).collect()),
            other => other.clone(),
        };
        if expect.get(k) != Some(&published) {
            return Err(format!(
                "{path}.{k}: the oracle computes {}, not the published {published}",
                expect
                    .get(k)
                    .map_or("nothing (a refusal)".to_string(), Value::to_string)
            ));
        }
    }
    Ok(())
}

/// The coverage items of the CIS-2 suites, each with the record (or model) that covers it.
pub fn items(corpus: &Path) -> Result<Vec<(String, String)>, Fail> {
    let files: BTreeMap<String, Vec<u8>> = tree_files(corpus)?.into_iter().collect();
    let mut out = Vec::new();
    let records = |name: &str| -> Vec<Value> {
        files
            .get(name)
            .map(|b| {
                String::from_utf8_lossy(b)
                    .lines()
                    .filter_map(|l| serde_json::from_str(l).ok())
                    .collect()
            })
            .unwrap_or_default()
    };
    for r in records("cis2/ops.jsonl") {
        let id = format!("cis2/ops.jsonl#{}", r["id"].as_str().unwrap_or_default());
        let f = r["fn"].as_str().unwrap_or_default();
        out.push((format!("cis2:fn:{f}"), id.clone()));
        if r["expect"].get("aarch64").is_some() {
            out.push((format!("cis2:tininess-split:{f}"), id));
        }
    }
    for r in records("cis2/decode.jsonl") {
        let id = format!("cis2/decode.jsonl#{}", r["id"].as_str().unwrap_or_default());
        let Some(refused) = r["expect"].get("refuse") else {
            out.push(("cis2:decode:ok".into(), id.clone()));
            let model = r["model"].as_str().unwrap_or_default();
            for item in model_items(&files, model) {
                out.push((format!("cis2:model:{item}"), id.clone()));
            }
            let prompt = String::from_utf8(hex::decode(r["prompt"].as_str().unwrap_or_default()).unwrap_or_default())
                .unwrap_or_default();
            for item in prompt_items(&prompt, &files, model) {
                out.push((format!("cis2:prompt:{item}"), id.clone()));
            }
            if r["gen_toks"]
                .as_str()
                .and_then(|n| n.parse::<u32>().ok())
                .is_some_and(|n| n >= 32)
            {
                out.push(("cis2:decode:long".into(), id.clone()));
            }
            continue;
        };
        out.push((format!("cis2:decode:{}", refused.as_str().unwrap_or_default()), id));
    }
    Ok(out)
}

/// What a valid model's files show: its head layout, head, biases, subnormal weights, head_dim.
fn model_items(files: &BTreeMap<String, Vec<u8>>, model: &str) -> Vec<&'static str> {
    let file = |f: &str| files.get(&format!("{model}/{f}")).cloned().unwrap_or_default();
    let config: Value = serde_json::from_slice(&file("config.json")).unwrap_or_default();
    let n = |k: &str| config[k].as_u64().unwrap_or(0);
    let (heads, kv) = (n("num_attention_heads"), n("num_key_value_heads"));
    let weights = file("model.safetensors");
    let header_len = weights
        .get(..8)
        .map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap()) as usize);
    let header = String::from_utf8_lossy(weights.get(8..8 + header_len).unwrap_or_default()).to_string();
    let data = weights.get(8 + header_len..).unwrap_or_default();
    let mut items = vec![match (kv == heads, kv == 1) {
        (true, _) => "mha",
        (false, true) => "mqa",
        (false, false) => "gqa",
    }];
    if config["tie_word_embeddings"] == Value::Bool(false) {
        items.push("untied");
    }
    if header.contains("_proj.bias") {
        items.push("bias");
    }
    let subnormal = |v: u16| (v >> 7) & 0xFF == 0 && v & 0x7F != 0;
    if data
        .chunks_exact(2)
        .any(|b| subnormal(u16::from_le_bytes([b[0], b[1]])))
    {
        items.push("subnormal-weights");
    }
    if heads > 0 && n("hidden_size") / heads == 64 {
        items.push("head-dim-64");
    }
    items
}

/// What a prompt holds that the tokenizer treats specially (§3.1.4, C5).
fn prompt_items(prompt: &str, files: &BTreeMap<String, Vec<u8>>, model: &str) -> Vec<&'static str> {
    let tokenizer: Value = serde_json::from_slice(files.get(&format!("{model}/tokenizer.json")).map_or(&[][..], |b| b))
        .unwrap_or_default();
    let added = tokenizer["added_tokens"].as_array().cloned().unwrap_or_default();
    let chars: Vec<char> = prompt.chars().collect();
    let mut items = Vec::new();
    if prompt.chars().any(|c| c.is_ascii_digit()) {
        items.push("digits");
    }
    if !prompt.is_ascii() {
        items.push("non-ascii");
    }
    if chars.windows(2).any(|w| w[0].is_whitespace() && w[1].is_whitespace()) {
        items.push("whitespace-run");
    }
    if ["'s", "'t", "'re", "'ve", "'m", "'ll", "'d"]
        .iter()
        .any(|c| prompt.contains(c))
    {
        items.push("contraction");
    }
    if added
        .iter()
        .filter_map(|t| t["content"].as_str())
        .any(|c| prompt.contains(c))
    {
        items.push("added-token");
    }
    items
}

/// The items every corpus must cover.
pub fn required() -> Vec<String> {
    let fns = [
        "widen_bf16",
        "add",
        "sub",
        "mul",
        "div",
        "sqrt",
        "narrow",
        "rsqrt",
        "ldexp_exact",
        "exp_pinned",
        "frexp_exact",
        "ln_pinned",
        "sin_pinned",
        "cos_pinned",
        "silu",
        "dot_seq",
        "sum_seq",
        "rmsnorm",
        "softmax",
        "argmax",
        "inv_freq",
        "rope",
        "table_digest",
    ];
    let mut out: Vec<String> = fns.iter().map(|f| format!("cis2:fn:{f}")).collect();
    out.extend(["mul", "narrow"].map(|f| format!("cis2:tininess-split:{f}")));
    out.extend(
        [
            "ok",
            "long",
            "artifact_malformed",
            "config_unsupported",
            "tensor_mismatch",
        ]
        .map(|d| format!("cis2:decode:{d}")),
    );
    out.extend(
        [
            "gqa",
            "mha",
            "mqa",
            "untied",
            "bias",
            "subnormal-weights",
            "head-dim-64",
        ]
        .map(|m| format!("cis2:model:{m}")),
    );
    out.extend(
        ["digits", "non-ascii", "whitespace-run", "contraction", "added-token"].map(|p| format!("cis2:prompt:{p}")),
    );
    out
}
