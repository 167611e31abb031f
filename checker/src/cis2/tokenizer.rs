//! §3.1: the tokenizer. `tokenizer.json` is checked against the form §3.1 describes, as far as
//! §3.1's encoding reads it (docs/assumptions.md C6), on its JSON; the BPE itself is the `tokenizers`
//! crate v0.23.1 (§3.1.2's normative fallback), given a tokenizer built from the file's
//! `model.vocab` and `model.merges` with §3.1.3–§3.1.4's pipeline spelled out (normalizer and
//! post-processor none, the Digits + ByteLevel sequence, no truncation or padding, no added tokens,
//! no decoder), and called as `encode(text, false)`. The file itself is never handed to the library:
//! the members the encoding never reads (`decoder`, `version`, `truncation`, `padding`, any other)
//! are not validated beyond the file being JSON (C6), though the library refuses some of them.
//!
//! `vocab` need not hold every byte character of §3.1.5.a: one with no entry is dropped at
//! §3.1.5.b, its neighbours becoming adjacent for the merges (C6; the library does so with
//! `unk_token` null and `byte_fallback` false). Added tokens are split off first by C5's reading
//! (leftmost occurrence, longest there), each emitted with its own `id`; every stretch between them
//! is encoded alone. `added_tokens` absent is none; each must have a nonempty `content` and
//! `single_word`, `lstrip`, `rstrip` and `normalized` false or absent (C6).

use serde_json::{Map, Value, json};

/// §3.1.5.a: the byte → character map, `bs` first (the three printable ranges, each byte to
/// itself), then every other byte in ascending order to `256 + n`.
pub fn byte_to_char() -> [char; 256] {
    let mut map = ['\0'; 256];
    let mut assigned = [false; 256];
    for b in (0x21u32..=0x7e).chain(0xa1..=0xac).chain(0xae..=0xff) {
        map[b as usize] = char::from_u32(b).expect("Latin-1");
        assigned[b as usize] = true;
    }
    let mut n = 0u32;
    for b in 0..256usize {
        if !assigned[b] {
            map[b] = char::from_u32(256 + n).expect("below U+0144");
            n += 1;
        }
    }
    map
}

/// A checked tokenizer.
pub struct Tokenizer {
    lib: tokenizers::Tokenizer,
    /// `(content, id)` of each added token, the first of a repeated content kept.
    added: Vec<(String, u32)>,
}

fn is_null_or_absent(m: &Map<String, Value>, k: &str) -> bool {
    m.get(k).is_none_or(Value::is_null)
}

fn is_false_or_absent(m: &Map<String, Value>, k: &str) -> bool {
    m.get(k).is_none_or(|v| v == &Value::Bool(false))
}

/// C6's pre-tokenizer: `Sequence[Digits(individual_digits = true), ByteLevel(add_prefix_space =
/// false, use_regex = true)]` (`use_regex` absent is the library's default, true).
fn check_pre_tokenizer(v: Option<&Value>) -> Result<(), String> {
    let bad = || {
        "tokenizer.json: pre_tokenizer is not Sequence[Digits(individual_digits), ByteLevel(add_prefix_space = false, use_regex)]".to_string()
    };
    let m = v.and_then(Value::as_object).ok_or_else(bad)?;
    if m.get("type").and_then(Value::as_str) != Some("Sequence") {
        return Err(bad());
    }
    let list = m.get("pretokenizers").and_then(Value::as_array).ok_or_else(bad)?;
    if list.len() != 2 {
        return Err(bad());
    }
    let d = list[0].as_object().ok_or_else(bad)?;
    if d.get("type").and_then(Value::as_str) != Some("Digits") || d.get("individual_digits") != Some(&Value::Bool(true))
    {
        return Err(bad());
    }
    let b = list[1].as_object().ok_or_else(bad)?;
    if b.get("type").and_then(Value::as_str) != Some("ByteLevel")
        || b.get("add_prefix_space") != Some(&Value::Bool(false))
        || !b.get("use_regex").is_none_or(|v| v == &Value::Bool(true))
    {
        return Err(bad());
    }
    Ok(())
}

/// Reads `tokenizer.json`: every failure is `artifact_malformed`.
pub fn load(bytes: &[u8]) -> Result<Tokenizer, String> {
    let v: Value = serde_json::from_slice(bytes).map_err(|e| format!("tokenizer.json: not JSON: {e}"))?;
    let top = v.as_object().ok_or("tokenizer.json: not a JSON object")?;
    if !is_null_or_absent(top, "normalizer") {
        return Err("tokenizer.json: normalizer is not null".into());
    }
    if !is_null_or_absent(top, "post_processor") {
        return Err("tokenizer.json: post_processor is not null".into());
    }
    check_pre_tokenizer(top.get("pre_tokenizer"))?;
    let model = top
        .get("model")
        .and_then(Value::as_object)
        .ok_or("tokenizer.json: model missing or not an object")?;
    if model.get("type").and_then(Value::as_str) != Some("BPE") {
        return Err("tokenizer.json: model.type is not \"BPE\"".into());
    }
    for k in [
        "dropout",
        "unk_token",
        "continuing_subword_prefix",
        "end_of_word_suffix",
    ] {
        if fault!("cis2-model-flags-unchecked", !is_null_or_absent(model, k), false) {
            return Err(format!("tokenizer.json: model.{k} is not null"));
        }
    }
    for k in ["byte_fallback", "ignore_merges"] {
        if !is_false_or_absent(model, k) {
            return Err(format!("tokenizer.json: model.{k} is not false"));
        }
    }
    let vocab = model
        .get("vocab")
        .and_then(Value::as_object)
        .ok_or("tokenizer.json: model.vocab missing or not an object")?;
    for (tok, id) in vocab {
        if id.as_u64().is_none_or(|n| n > u64::from(u32::MAX)) {
            return Err(format!("tokenizer.json: model.vocab[{tok:?}] is not an id below 2^32"));
        }
    }
    // No byte character of §3.1.5.a is required here: one missing from `vocab` is dropped at
    // §3.1.5.b by the library (C6).
    let merges_v = model
        .get("merges")
        .and_then(Value::as_array)
        .ok_or("tokenizer.json: model.merges missing or not an array")?;
    let mut merges = Vec::with_capacity(merges_v.len());
    for (r, m) in merges_v.iter().enumerate() {
        let pair = match m {
            Value::String(s) => {
                let parts: Vec<&str> = s.split(' ').collect();
                if parts.len() != 2 {
                    return Err(format!("tokenizer.json: model.merges[{r}] is not \"a b\""));
                }
                (parts[0].to_string(), parts[1].to_string())
            }
            Value::Array(a) if a.len() == 2 && a.iter().all(Value::is_string) => (
                a[0].as_str().expect("string").to_string(),
                a[1].as_str().expect("string").to_string(),
            ),
            _ => {
                return Err(format!(
                    "tokenizer.json: model.merges[{r}] is not \"a b\" nor [\"a\", \"b\"]"
                ));
            }
        };
        for part in [&pair.0, &pair.1, &format!("{}{}", pair.0, pair.1)] {
            if !vocab.contains_key(part.as_str()) {
                return Err(format!(
                    "tokenizer.json: model.merges[{r}]: {part:?} is not in model.vocab"
                ));
            }
        }
        merges.push(json!([pair.0, pair.1]));
    }
    let mut added: Vec<(String, u32)> = Vec::new();
    match top.get("added_tokens") {
        // Absent is no added token (C6); null, as this checker has always read it, likewise.
        None | Some(Value::Null) => {}
        Some(Value::Array(list)) => {
            for (n, t) in list.iter().enumerate() {
                let content = t.get("content").and_then(Value::as_str);
                let id = t
                    .get("id")
                    .and_then(Value::as_u64)
                    .filter(|&i| i <= u64::from(u32::MAX));
                let (Some(content), Some(id)) = (content, id) else {
                    return Err(format!(
                        "tokenizer.json: added_tokens[{n}] lacks a string content or an id below 2^32"
                    ));
                };
                if content.is_empty() {
                    return Err(format!("tokenizer.json: added_tokens[{n}].content is empty"));
                }
                let t = t.as_object().expect("has a content");
                for flag in ["single_word", "lstrip", "rstrip", "normalized"] {
                    if !is_false_or_absent(t, flag) {
                        return Err(format!("tokenizer.json: added_tokens[{n}].{flag} is not false"));
                    }
                }
                // A content listed twice keeps its first id.
                if !added.iter().any(|(c, _)| c == content) {
                    added.push((content.to_string(), id as u32));
                }
            }
        }
        Some(_) => return Err("tokenizer.json: added_tokens is not an array".into()),
    }
    let spelled = json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": [],
        "normalizer": null,
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                {"type": "Digits", "individual_digits": true},
                {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true}
            ]
        },
        "post_processor": null,
        "decoder": null,
        "model": {
            "type": "BPE",
            "dropout": null,
            "unk_token": null,
            "continuing_subword_prefix": null,
            "end_of_word_suffix": null,
            "fuse_unk": false,
            "byte_fallback": false,
            "ignore_merges": false,
            "vocab": Value::Object(vocab.clone()),
            "merges": merges,
        }
    });
    let text = serde_json::to_string(&spelled).map_err(|e| format!("tokenizer.json: {e}"))?;
    let mut lib: tokenizers::Tokenizer = text
        .parse()
        .map_err(|e| format!("tokenizer.json: the tokenizers crate refuses it: {e}"))?;
    // The same model without the library's word cache: tokenizers 0.23.1 keeps it in a map per
    // thread that outlives a dropped model, so a process reading many tokenizers grew by each
    // (found by fuzzing, docs/fuzzing.md). The file's model deserializes through this builder too.
    let ids: tokenizers::models::bpe::Vocab = vocab
        .iter()
        .map(|(t, id)| (t.clone(), id.as_u64().expect("checked") as u32))
        .collect();
    let pairs = merges.iter().map(|m| {
        (
            m[0].as_str().expect("a pair").to_string(),
            m[1].as_str().expect("a pair").to_string(),
        )
    });
    let uncached = tokenizers::models::bpe::BPE::builder()
        .vocab_and_merges(ids, pairs.collect())
        .cache_capacity(0)
        .build()
        .map_err(|e| format!("tokenizer.json: the tokenizers crate refuses it: {e}"))?;
    lib.with_model(uncached);
    Ok(Tokenizer { lib, added })
}

impl Tokenizer {
    /// The ids of `text`: added tokens split off (C5), each stretch between them encoded by the
    /// library with `add_special_tokens = false`. A byte character (§3.1.5.a) with no `vocab` entry
    /// yields no symbol and no id (§3.1.5.b, C6), so a text of such characters alone gives no id
    /// at all; the decode refuses that prompt (C7, [`super::decode::prompt_ids`]).
    pub fn encode(&self, text: &str) -> Result<Vec<u32>, String> {
        let mut ids = Vec::new();
        let mut stretch_start = 0;
        let mut i = 0;
        while i < text.len() {
            let best = self
                .added
                .iter()
                .filter(|(c, _)| text[i..].starts_with(c.as_str()))
                .max_by_key(|(c, _)| c.len()); // distinct contents: no two of one length match here
            if let Some((content, id)) = best {
                self.encode_plain(&text[stretch_start..i], &mut ids)?;
                ids.push(*id);
                i += content.len();
                stretch_start = i;
            } else {
                i += text[i..].chars().next().map_or(1, char::len_utf8);
            }
        }
        self.encode_plain(&text[stretch_start..], &mut ids)?;
        Ok(ids)
    }

    fn encode_plain(&self, text: &str, ids: &mut Vec<u32>) -> Result<(), String> {
        if text.is_empty() {
            return Ok(());
        }
        let enc = self
            .lib
            .encode(text, false)
            .map_err(|e| format!("the tokenizers crate failed to encode {text:?}: {e}"))?;
        ids.extend_from_slice(enc.get_ids());
        Ok(())
    }
}
