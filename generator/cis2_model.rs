//! Small CIS-2 checkpoints from recipes (docs/corpus.md, "CIS-2"): a byte-level BPE tokenizer
//! trained on a text, `config.json` as written, and seeded bf16 weights in `model.safetensors`.
//! Every byte follows from the recipe.

use crate::value::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use wai_oracle::cis2::tokenizer::{byte_to_unicode, pre_tokenize};

/// A model folder's three files.
pub struct Files {
    pub weights: Vec<u8>,
    pub config: Vec<u8>,
    pub tokenizer: Vec<u8>,
}

/// A trained tokenizer: its vocabulary in id order and its merges in rank order.
pub struct Trained {
    added: Vec<String>,
    vocab: Vec<String>,
    merges: Vec<(String, String)>,
}

/// Byte-level BPE training: count adjacent pairs over the text's words (weighted by how often
/// each word occurs), merge the most frequent (ties: the smallest pair), until `merges` merges
/// or no pair occurs twice.
fn train(text: &str, merges: usize, added: Vec<String>, path: &str) -> Result<Trained, Fail> {
    let mut words: BTreeMap<Vec<String>, usize> = BTreeMap::new();
    for w in pre_tokenize(text).map_err(|e| format!("{path}: {e}"))? {
        *words.entry(w.chars().map(String::from).collect()).or_default() += 1;
    }
    let mut vocab: Vec<String> = added.clone();
    vocab.extend(byte_to_unicode().iter().map(char::to_string));
    let mut done = Vec::new();
    while done.len() < merges {
        let mut counts: BTreeMap<(&str, &str), usize> = BTreeMap::new();
        for (w, n) in &words {
            for p in w.windows(2) {
                *counts.entry((&p[0], &p[1])).or_default() += n;
            }
        }
        let best = counts.iter().max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)));
        let Some((&(x, y), &n)) = best else { break };
        if n < 2 {
            break;
        }
        let (x, y) = (x.to_string(), y.to_string());
        let joined = format!("{x}{y}");
        words = words
            .into_iter()
            .map(|(w, n)| {
                let mut out: Vec<String> = Vec::with_capacity(w.len());
                for s in w {
                    if out.last() == Some(&x) && s == y {
                        out.pop();
                        out.push(joined.clone());
                    } else {
                        out.push(s);
                    }
                }
                (out, n)
            })
            .fold(BTreeMap::new(), |mut m, (w, n)| {
                *m.entry(w).or_default() += n;
                m
            });
        if !vocab.contains(&joined) {
            vocab.push(joined);
        }
        done.push((x, y));
    }
    Ok(Trained {
        added,
        vocab,
        merges: done,
    })
}

/// `tokenizer.json` in the form §3.1 describes (docs/assumptions.md C6); merges as `"a b"`
/// strings or as pairs.
fn tokenizer_json(t: &Trained, pairs: bool, set: Option<&Map<String, Value>>) -> Result<Vec<u8>, Fail> {
    let added: Vec<Value> = t
        .added
        .iter()
        .enumerate()
        .map(|(id, c)| {
            json!({"id": id, "content": c, "single_word": false, "lstrip": false, "rstrip": false,
                   "normalized": false, "special": true})
        })
        .collect();
    let vocab: Map<String, Value> = t.vocab.iter().enumerate().map(|(i, s)| (s.clone(), json!(i))).collect();
    let merges: Vec<Value> = t
        .merges
        .iter()
        .map(|(a, b)| {
            if pairs {
                json!([a, b])
            } else {
                json!(format!("{a} {b}"))
            }
        })
        .collect();
    let mut v = json!({
        "version": "1.0", "truncation": null, "padding": null, "added_tokens": added,
        "normalizer": null,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Digits", "individual_digits": true},
            {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true}]},
        "post_processor": null,
        "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
        "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null,
                  "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false,
                  "ignore_merges": false, "vocab": vocab, "merges": merges}
    });
    // `"model.dropout"` sets a member of a member.
    for (k, x) in set.into_iter().flatten() {
        match k.split_once('.') {
            Some((outer, inner)) => v[outer][inner] = x.clone(),
            None => v[k] = x.clone(),
        }
    }
    serde_json::to_vec(&v).map_err(|e| e.to_string())
}

/// One tensor to write: its name, shape and bf16 patterns.
struct Tensor {
    name: String,
    shape: Vec<usize>,
    data: Vec<u16>,
}

/// §2.5's tensors for `config`, with biases and an untied head when asked.
fn tensor_list(c: &Map<String, Value>, bias: bool, path: &str) -> Result<Vec<(String, Vec<usize>)>, Fail> {
    let n = |k: &str| -> Result<usize, Fail> { Ok(u64_(member(c, k, path)?, &format!("{path}.{k}"))? as usize) };
    let (h, i, layers, heads, kv, vocab) = (
        n("hidden_size")?,
        n("intermediate_size")?,
        n("num_hidden_layers")?,
        n("num_attention_heads")?,
        n("num_key_value_heads")?,
        n("vocab_size")?,
    );
    let kvd = kv * (h / heads);
    let mut out = vec![("model.embed_tokens.weight".to_string(), vec![vocab, h])];
    for l in 0..layers {
        let p = format!("model.layers.{l}");
        out.push((format!("{p}.input_layernorm.weight"), vec![h]));
        out.push((format!("{p}.post_attention_layernorm.weight"), vec![h]));
        for (proj, rows) in [("q_proj", h), ("k_proj", kvd), ("v_proj", kvd), ("o_proj", h)] {
            out.push((format!("{p}.self_attn.{proj}.weight"), vec![rows, h]));
        }
        if bias {
            for (proj, rows) in [("q_proj", h), ("k_proj", kvd), ("v_proj", kvd)] {
                out.push((format!("{p}.self_attn.{proj}.bias"), vec![rows]));
            }
        }
        out.push((format!("{p}.mlp.gate_proj.weight"), vec![i, h]));
        out.push((format!("{p}.mlp.up_proj.weight"), vec![i, h]));
        out.push((format!("{p}.mlp.down_proj.weight"), vec![h, i]));
    }
    out.push(("model.norm.weight".to_string(), vec![h]));
    if c.get("tie_word_embeddings") == Some(&Value::Bool(false)) {
        out.push(("lm_head.weight".to_string(), vec![vocab, h]));
    }
    Ok(out)
}

/// The bf16 patterns of `recipe`: a `table` recipe when it has one, else seeded.
fn weights(recipe: &Map<String, Value>, list: Vec<(String, Vec<usize>)>, path: &str) -> Result<Vec<Tensor>, Fail> {
    only(
        recipe,
        &[
            "seed",
            "exponents",
            "norms",
            "bias",
            "subnormal_every",
            "drop",
            "header_length",
            "table",
            "header",
        ],
        path,
    )?;
    match recipe.get("table") {
        Some(t) => table_weights(object(t, &format!("{path}.table"))?, list, &format!("{path}.table")),
        None => seeded_weights(recipe, list, path),
    }
}

/// A norm gain (`*layernorm.weight`, `model.norm.weight`) rather than a matrix or a bias.
fn is_norm(name: &str) -> bool {
    name.ends_with("layernorm.weight") || name == "model.norm.weight"
}

/// Seeded bf16 patterns: a random sign and 7-bit mantissa, the biased exponent uniform in
/// `exponents` (`norms` for norm gains); every `subnormal_every`-th element a subnormal.
fn seeded_weights(
    recipe: &Map<String, Value>,
    list: Vec<(String, Vec<usize>)>,
    path: &str,
) -> Result<Vec<Tensor>, Fail> {
    let mut rng = ChaCha8Rng::seed_from_u64(u64_(member(recipe, "seed", path)?, &format!("{path}.seed"))?);
    let (lo, hi) = pair(recipe.get("exponents"), (118, 125), &format!("{path}.exponents"))?;
    let (nlo, nhi) = pair(recipe.get("norms"), (126, 127), &format!("{path}.norms"))?;
    let every = match recipe.get("subnormal_every") {
        Some(v) => u64_(v, &format!("{path}.subnormal_every"))?,
        None => 0,
    };
    let mut count = 0u64;
    Ok(list
        .into_iter()
        .map(|(name, shape)| {
            let (lo, hi) = if is_norm(&name) { (nlo, nhi) } else { (lo, hi) };
            let data = (0..shape.iter().product::<usize>())
                .map(|_| {
                    let r = rng.next_u32();
                    count += 1;
                    let sign = ((r & 1) as u16) << 15;
                    let mantissa = ((r >> 9) & 0x7F) as u16;
                    let exp = if every > 0 && count.is_multiple_of(every) {
                        0
                    } else {
                        (lo + (r >> 1) % (hi - lo + 1)) as u16
                    };
                    sign | (exp << 7) | if exp == 0 { mantissa | 1 } else { mantissa }
                })
                .collect();
            Tensor { name, shape, data }
        })
        .collect())
}

/// Patterns drawn from a table: element `i` of tensor `name`, whose rows are `row` long (its
/// last dimension), is `patterns[(i·step + salt(name) + row_step·⌊i / row⌋) mod len]`, where
/// `salt` folds the name's bytes `s ← (s·salt + b) mod 2^16` from 0; norm gains draw from
/// `norms`. (`cis2-verify`'s tiny fixture is made so; docs/corpus.md.)
fn table_weights(t: &Map<String, Value>, list: Vec<(String, Vec<usize>)>, path: &str) -> Result<Vec<Tensor>, Fail> {
    only(t, &["weights", "norms", "step", "row_step", "salt"], path)?;
    let patterns = |k: &str| -> Result<Vec<u16>, Fail> {
        let p = format!("{path}.{k}");
        let v: Vec<u16> = array(member(t, k, path)?, &p)?
            .iter()
            .map(|x| {
                let s = string(x, &p)?;
                s.strip_prefix("0x")
                    .and_then(|h| u16::from_str_radix(h, 16).ok())
                    .ok_or(format!("{p}: {s:?} is not a 0x bf16 pattern"))
            })
            .collect::<Result<_, _>>()?;
        if v.is_empty() {
            return Err(format!("{p}: empty"));
        }
        Ok(v)
    };
    let (weights, norms) = (patterns("weights")?, patterns("norms")?);
    let n = |k: &str| -> Result<usize, Fail> { Ok(u32_(member(t, k, path)?, &format!("{path}.{k}"))? as usize) };
    let (step, row_step, salt_by) = (n("step")?, n("row_step")?, n("salt")?);
    Ok(list
        .into_iter()
        .map(|(name, shape)| {
            let salt = name.bytes().fold(0usize, |s, b| (s * salt_by + b as usize) % 65536);
            let table = if is_norm(&name) { &norms } else { &weights };
            let row = *shape.last().expect("a tensor has a dimension");
            let data = (0..shape.iter().product::<usize>())
                .map(|i| table[(i * step + salt + row_step * (i / row)) % table.len()])
                .collect();
            Tensor { name, shape, data }
        })
        .collect())
}

/// A safetensors file: the header (keys sorted, padded with spaces to 8 bytes), then the
/// tensors' data in the header's order. `header_length` overrides the length field; a `bare`
/// header has no `__metadata__` and no padding.
fn safetensors(tensors: &[Tensor], header_length: Option<u64>, bare: bool) -> Vec<u8> {
    let mut sorted: Vec<&Tensor> = tensors.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    let mut header = Map::new();
    if !bare {
        header.insert("__metadata__".into(), json!({"format": "pt"}));
    }
    let mut at = 0;
    for t in &sorted {
        let len = 2 * t.data.len();
        header.insert(
            t.name.clone(),
            json!({"dtype": "BF16", "shape": t.shape, "data_offsets": [at, at + len]}),
        );
        at += len;
    }
    let mut text = serde_json::to_vec(&Value::Object(header)).expect("a JSON object");
    while !bare && !text.len().is_multiple_of(8) {
        text.push(b' ');
    }
    let mut out = header_length.unwrap_or(text.len() as u64).to_le_bytes().to_vec();
    out.extend(text);
    for t in sorted {
        out.extend(t.data.iter().flat_map(|v| v.to_le_bytes()));
    }
    out
}

/// The tokenizers of `corpus/cis2/models.json`, by name.
pub fn tokenizers(v: &Value, path: &str) -> Result<BTreeMap<String, (Trained, bool)>, Fail> {
    let mut out = BTreeMap::new();
    for (name, t) in object(v, path)? {
        let p = format!("{path}.{name}");
        let o = object(t, &p)?;
        only(o, &["about", "text", "merges", "added", "pairs"], &p)?;
        let text = string(member(o, "text", &p)?, &format!("{p}.text"))?;
        let merges = u64_(member(o, "merges", &p)?, &format!("{p}.merges"))? as usize;
        let added = match o.get("added") {
            Some(a) => array(a, &format!("{p}.added"))?
                .iter()
                .map(|x| string(x, &format!("{p}.added")).map(str::to_string))
                .collect::<Result<_, _>>()?,
            None => vec![],
        };
        let pairs = o.get("pairs") == Some(&Value::Bool(true));
        out.insert(name.clone(), (train(text, merges, added, &p)?, pairs));
    }
    Ok(out)
}

/// One model recipe's three files. The tokenizer is trained (`tokenizer`, with `tokenizer_set`)
/// or given whole (`tokenizer_json`); `"json": "python"` writes `config.json` and a given
/// `tokenizer.json` as Python's `json.dumps(v, indent=2, sort_keys=True)` and a newline;
/// `sha256` names the files' published hashes, which the built files must have.
pub fn build(
    m: &Map<String, Value>,
    tokenizers: &BTreeMap<String, (Trained, bool)>,
    path: &str,
) -> Result<Files, Fail> {
    only(
        m,
        &[
            "name",
            "about",
            "tokenizer",
            "tokenizer_set",
            "tokenizer_json",
            "json",
            "config",
            "weights",
            "sha256",
        ],
        path,
    )?;
    let python = match m.get("json") {
        None => false,
        Some(v) if v == "python" => true,
        Some(v) => return Err(format!("{path}.json: {v} is not \"python\"")),
    };
    let write = |v: &Value| -> Result<Vec<u8>, Fail> {
        if python {
            Ok(format!("{}\n", python_json(v, 0, path)?).into_bytes())
        } else {
            serde_json::to_vec_pretty(v).map_err(|e| e.to_string())
        }
    };
    let mut config = object(member(m, "config", path)?, &format!("{path}.config"))?.clone();
    let tokenizer = match m.get("tokenizer_json") {
        Some(t) => write(t)?,
        None => {
            let tname = string(member(m, "tokenizer", path)?, &format!("{path}.tokenizer"))?;
            let (trained, pairs) = tokenizers
                .get(tname)
                .ok_or(format!("{path}.tokenizer: no tokenizer {tname:?}"))?;
            let set = m
                .get("tokenizer_set")
                .map(|v| object(v, &format!("{path}.tokenizer_set")))
                .transpose()?;
            // `"vocab_size": "$tokenizer"` is the tokenizer's vocabulary size.
            if config.get("vocab_size") == Some(&json!("$tokenizer")) {
                config.insert("vocab_size".into(), json!(trained.vocab.len()));
            }
            tokenizer_json(trained, *pairs, set)?
        }
    };
    let recipe = object(member(m, "weights", path)?, &format!("{path}.weights"))?;
    let wp = format!("{path}.weights");
    let bias = recipe.get("bias") == Some(&Value::Bool(true));
    let mut tensors = weights(recipe, tensor_list(&config, bias, &format!("{path}.config"))?, &wp)?;
    if let Some(drop) = recipe.get("drop") {
        let drop: Vec<&str> = array(drop, &format!("{wp}.drop"))?
            .iter()
            .filter_map(Value::as_str)
            .collect();
        tensors.retain(|t| !drop.contains(&t.name.as_str()));
    }
    let header_length = recipe
        .get("header_length")
        .map(|v| u64_(v, &format!("{wp}.header_length")))
        .transpose()?;
    let bare = match recipe.get("header") {
        None => false,
        Some(v) if v == "bare" => true,
        Some(v) => return Err(format!("{wp}.header: {v} is not \"bare\"")),
    };
    let files = Files {
        weights: safetensors(&tensors, header_length, bare),
        config: write(&Value::Object(config))?,
        tokenizer,
    };
    if let Some(published) = m.get("sha256") {
        let p = format!("{path}.sha256");
        let published = object(published, &p)?;
        only(published, &["model.safetensors", "config.json", "tokenizer.json"], &p)?;
        for (file, bytes) in [
            ("model.safetensors", &files.weights),
            ("config.json", &files.config),
            ("tokenizer.json", &files.tokenizer),
        ] {
            let want = string(member(published, file, &p)?, &format!("{p}.{file}"))?;
            let got = hex::encode(Sha256::digest(bytes));
            if got != want {
                return Err(format!(
                    "{p}.{file}: the recipe gives sha256 {got}, not the published {want}"
                ));
            }
        }
    }
    Ok(files)
}

/// `v` as Python's `json.dumps(v, indent=2, sort_keys=True)` writes it at `depth`: `", "`
/// becomes a newline and indent, `": "` between key and value, every character outside
/// printable ASCII escaped, floats as `repr` writes them.
fn python_json(v: &Value, depth: usize, path: &str) -> Result<String, Fail> {
    let indent = |d: usize| "  ".repeat(d);
    Ok(match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) if n.is_f64() => python_float(n.as_f64().expect("an f64"), path)?,
        Value::Number(n) => n.to_string(),
        Value::String(s) => python_string(s),
        Value::Array(a) if a.is_empty() => "[]".into(),
        Value::Object(o) if o.is_empty() => "{}".into(),
        Value::Array(a) => {
            let items: Vec<String> = a
                .iter()
                .map(|x| Ok(format!("{}{}", indent(depth + 1), python_json(x, depth + 1, path)?)))
                .collect::<Result<_, Fail>>()?;
            format!("[\n{}\n{}]", items.join(",\n"), indent(depth))
        }
        Value::Object(o) => {
            // serde_json's map is ordered by key, as `sort_keys` orders it (by code point).
            let items: Vec<String> = o
                .iter()
                .map(|(k, x)| {
                    Ok(format!(
                        "{}{}: {}",
                        indent(depth + 1),
                        python_string(k),
                        python_json(x, depth + 1, path)?
                    ))
                })
                .collect::<Result<_, Fail>>()?;
            format!("{{\n{}\n{}}}", items.join(",\n"), indent(depth))
        }
    })
}

/// Python's `repr` of a float: the shortest digits that read back, positional when the
/// decimal exponent is in `-5 < e < 16` (with `.0` on an integer), else `d.ddde±XX`.
fn python_float(x: f64, path: &str) -> Result<String, Fail> {
    if !x.is_finite() {
        return Err(format!("{path}: {x} is not a JSON number"));
    }
    let sci = format!("{x:e}"); // the shortest digits, as `1.5e-5`
    let (mantissa, e) = sci.split_once('e').expect("`e` formatting");
    let e: i32 = e.parse().expect("an exponent");
    Ok(if (-5 < e) && (e < 16) {
        let s = format!("{x}");
        if s.contains('.') { s } else { format!("{s}.0") }
    } else {
        format!("{mantissa}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
    })
}

/// A JSON string as Python's `json.dumps` (with `ensure_ascii`) writes it.
fn python_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            ' '..='~' => out.push(c),
            _ => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{u:04x}"));
                }
            }
        }
    }
    out.push('"');
    out
}
