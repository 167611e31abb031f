//! Small CIS-2 checkpoints from recipes (docs/corpus.md, "CIS-2"): a byte-level BPE tokenizer
//! trained on a text, `config.json` as written, and seeded bf16 weights in `model.safetensors`.
//! Every byte follows from the recipe.

use crate::value::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Map, Value, json};
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

/// Seeded bf16 patterns: a random sign and 7-bit mantissa, the biased exponent uniform in
/// `exponents` (`norms` for norm gains); every `subnormal_every`-th element a subnormal.
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
        ],
        path,
    )?;
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
            let (lo, hi) = if name.ends_with("layernorm.weight") || name == "model.norm.weight" {
                (nlo, nhi)
            } else {
                (lo, hi)
            };
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

/// A safetensors file: the header (keys sorted, padded with spaces to 8 bytes), then the
/// tensors' data in the header's order. `header_length` overrides the length field.
fn safetensors(tensors: &[Tensor], header_length: Option<u64>) -> Vec<u8> {
    let mut sorted: Vec<&Tensor> = tensors.iter().collect();
    sorted.sort_by(|a, b| a.name.cmp(&b.name));
    let mut header = Map::new();
    header.insert("__metadata__".into(), json!({"format": "pt"}));
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
    while !text.len().is_multiple_of(8) {
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

/// One model recipe's three files.
pub fn build(
    m: &Map<String, Value>,
    tokenizers: &BTreeMap<String, (Trained, bool)>,
    path: &str,
) -> Result<Files, Fail> {
    only(
        m,
        &["name", "about", "tokenizer", "tokenizer_set", "config", "weights"],
        path,
    )?;
    let tname = string(member(m, "tokenizer", path)?, &format!("{path}.tokenizer"))?;
    let (trained, pairs) = tokenizers
        .get(tname)
        .ok_or(format!("{path}.tokenizer: no tokenizer {tname:?}"))?;
    let set = m
        .get("tokenizer_set")
        .map(|v| object(v, &format!("{path}.tokenizer_set")))
        .transpose()?;
    let mut config = object(member(m, "config", path)?, &format!("{path}.config"))?.clone();
    // `"vocab_size": "$tokenizer"` is the tokenizer's vocabulary size.
    if config.get("vocab_size") == Some(&json!("$tokenizer")) {
        config.insert("vocab_size".into(), json!(trained.vocab.len()));
    }
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
    Ok(Files {
        weights: safetensors(&tensors, header_length),
        config: serde_json::to_vec_pretty(&Value::Object(config)).map_err(|e| e.to_string())?,
        tokenizer: tokenizer_json(trained, *pairs, set)?,
    })
}
