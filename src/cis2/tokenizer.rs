//! §3.1: the byte-level BPE tokenizer of `tokenizer.json`, without the reference library.
//!
//! Added tokens are split out first (docs/assumptions.md C5); each stretch between them goes
//! through the Digits pre-split, the GPT-2 regex, the byte→unicode remap and the rank-ordered
//! merges. Only the form §3.1 describes is accepted (C6); a byte character missing from the
//! vocabulary is dropped (C6's reading of §3.1.5.b, the reference library's behaviour).

use super::artifact::{Code, Refuse, refuse};
use fancy_regex::Regex;
use serde_json::{Map, Value, json};
use std::collections::HashMap;

/// §3.1.4.b's pattern, verbatim.
const GPT2_PATTERN: &str = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+";

/// Each mergeable pair of ids: its rank and the merged symbol's id.
type Merges = HashMap<(u32, u32), (usize, u32)>;

pub struct Tokenizer {
    vocab: HashMap<String, u32>,
    merges: Merges,
    /// Added tokens' contents and ids.
    added: Vec<(String, u32)>,
    byte_char: [char; 256],
    pattern: Regex,
}

/// §3.1.5.a: the 188 printable bytes map to themselves, the other 68 to `U+0100 + n` in
/// ascending byte order.
pub fn byte_to_unicode() -> [char; 256] {
    let printable = |b: u32| (0x21..=0x7E).contains(&b) || (0xA1..=0xAC).contains(&b) || (0xAE..=0xFF).contains(&b);
    let mut map = ['\0'; 256];
    let mut n = 0;
    for b in 0..256u32 {
        map[b as usize] = if printable(b) {
            char::from_u32(b).expect("Latin-1")
        } else {
            n += 1;
            char::from_u32(256 + n - 1).expect("below U+0144")
        };
    }
    map
}

fn malformed<T>(why: impl Into<String>) -> Result<T, Refuse> {
    refuse(Code::ArtifactMalformed, format!("tokenizer.json: {}", why.into()))
}

/// `key` is absent or `want` (C6: a member that must be `false` may not be `null`).
fn is_default(o: &Map<String, Value>, key: &str, want: &Value) -> bool {
    o.get(key).is_none_or(|v| v == want)
}

impl Tokenizer {
    pub fn parse(bytes: &[u8]) -> Result<Tokenizer, Refuse> {
        let v: Value = match serde_json::from_slice(bytes) {
            Ok(v) => v,
            Err(e) => return malformed(format!("not JSON: {e}")),
        };
        let Some(o) = v.as_object() else {
            return malformed("not a JSON object");
        };
        for key in ["normalizer", "post_processor"] {
            if !o.get(key).is_none_or(Value::is_null) {
                return malformed(format!("{key} is not null (§3.1.3)"));
            }
        }
        if !pre_tokenizer_ok(o.get("pre_tokenizer")) {
            return malformed(
                "pre_tokenizer is not Sequence[Digits(individual), ByteLevel(no prefix space, regex)] (§3.1.4)",
            );
        }
        let Some(model) = o.get("model").and_then(Value::as_object) else {
            return malformed("no model object");
        };
        let flags_ok = model.get("type") == Some(&json!("BPE"))
            && [
                "dropout",
                "unk_token",
                "continuing_subword_prefix",
                "end_of_word_suffix",
            ]
            .iter()
            .all(|k| model.get(*k).is_none_or(Value::is_null))
            && is_default(model, "byte_fallback", &json!(false))
            && is_default(model, "ignore_merges", &json!(false));
        if !flags_ok {
            return malformed("model is not the deterministic byte-level BPE of §3.1.5");
        }
        let vocab = Self::vocab(model)?;
        Ok(Tokenizer {
            merges: Self::merges(model, &vocab)?,
            added: Self::added(o)?,
            vocab,
            byte_char: byte_to_unicode(),
            pattern: Regex::new(GPT2_PATTERN).expect("the §3.1.4 pattern compiles"),
        })
    }

    fn vocab(model: &Map<String, Value>) -> Result<HashMap<String, u32>, Refuse> {
        let Some(v) = model.get("vocab").and_then(Value::as_object) else {
            return malformed("no model.vocab object");
        };
        v.iter()
            .map(|(k, id)| match id.as_u64().and_then(|n| u32::try_from(n).ok()) {
                Some(id) => Ok((k.clone(), id)),
                None => malformed(format!("model.vocab[{k:?}] is not an id")),
            })
            .collect()
    }

    fn merges(model: &Map<String, Value>, vocab: &HashMap<String, u32>) -> Result<Merges, Refuse> {
        let Some(list) = model.get("merges").and_then(Value::as_array) else {
            return malformed("no model.merges array");
        };
        let mut merges = HashMap::new();
        for (rank, m) in list.iter().enumerate() {
            let parts: Option<(String, String)> = match m {
                Value::String(s) => s.split_once(' ').map(|(a, b)| (a.to_string(), b.to_string())),
                Value::Array(p) if p.len() == 2 => p[0].as_str().zip(p[1].as_str()).map(|(a, b)| (a.into(), b.into())),
                _ => None,
            };
            let Some((x, y)) = parts else {
                return malformed(format!("model.merges[{rank}] is not a pair"));
            };
            let id = |s: &str| vocab.get(s).copied();
            let (Some(a), Some(b), Some(c)) = (id(&x), id(&y), id(&format!("{x}{y}"))) else {
                return malformed(format!(
                    "model.merges[{rank}] {x:?} {y:?}: a part or the result is not in model.vocab"
                ));
            };
            // A pair listed twice takes its last rank, as the reference library's map does.
            merges.insert((a, b), (rank, c));
        }
        Ok(merges)
    }

    fn added(o: &Map<String, Value>) -> Result<Vec<(String, u32)>, Refuse> {
        // Absent or null is none; anything but an array is refused (C6).
        let list = match o.get("added_tokens") {
            None | Some(Value::Null) => return Ok(vec![]),
            Some(Value::Array(list)) => list,
            Some(_) => return malformed("added_tokens is not an array"),
        };
        list.iter()
            .enumerate()
            .map(|(i, t)| {
                let t = t.as_object();
                let content = t
                    .and_then(|t| t.get("content"))
                    .and_then(Value::as_str)
                    .filter(|c| !c.is_empty());
                let id = t
                    .and_then(|t| t.get("id"))
                    .and_then(Value::as_u64)
                    .and_then(|n| u32::try_from(n).ok());
                let plain = t.is_some_and(|t| {
                    ["single_word", "lstrip", "rstrip", "normalized"]
                        .iter()
                        .all(|k| is_default(t, k, &json!(false)))
                });
                match (content, id, plain) {
                    (Some(c), Some(id), true) => Ok((c.to_string(), id)),
                    _ => malformed(format!(
                        "added_tokens[{i}] is not a plain token (content, id; no strip, no normalization)"
                    )),
                }
            })
            .collect()
    }

    /// The ids of `text` (§3.1.3–§3.1.5, with added tokens split out first).
    pub fn encode(&self, text: &str) -> Result<Vec<u32>, String> {
        let mut ids = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            let (before, token) = self.next_added(rest);
            self.encode_plain(&rest[..before], &mut ids)?;
            match token {
                Some((len, id)) => {
                    ids.push(id);
                    rest = &rest[before + len..];
                }
                None => rest = "",
            }
        }
        Ok(ids)
    }

    /// The leftmost occurrence of an added token's content (the longest there): its offset,
    /// length and id; or the text's length and none.
    fn next_added(&self, text: &str) -> (usize, Option<(usize, u32)>) {
        for (at, _) in text.char_indices() {
            // The longest content here; of a content listed twice, its first id.
            let mut best: Option<&(String, u32)> = None;
            for t in self.added.iter().filter(|(c, _)| text[at..].starts_with(c.as_str())) {
                if best.is_none_or(|b| t.0.len() > b.0.len()) {
                    best = Some(t);
                }
            }
            if let Some((c, id)) = best {
                return (at, Some((c.len(), *id)));
            }
        }
        (text.len(), None)
    }

    fn encode_plain(&self, text: &str, ids: &mut Vec<u32>) -> Result<(), String> {
        for word in words(&self.pattern, text)? {
            self.bpe(word, ids);
        }
        Ok(())
    }

    /// §3.1.5.b–c: one word's bytes as base symbols (a byte whose character has no `vocab`
    /// entry dropped, its neighbours made adjacent: C6), then the lowest-ranked adjacent pair
    /// merged, leftmost first, until no pair is in the merge list.
    fn bpe(&self, word: &str, ids: &mut Vec<u32>) {
        let mut symbols: Vec<u32> = word
            .bytes()
            .filter_map(|b| self.vocab.get(&self.byte_char[b as usize].to_string()).copied())
            .collect();
        loop {
            let best = symbols
                .windows(2)
                .enumerate()
                .filter_map(|(i, w)| self.merges.get(&(w[0], w[1])).map(|&(rank, id)| (rank, i, id)))
                .min();
            let Some((_, i, id)) = best else { break };
            symbols.splice(i..i + 2, [id]);
        }
        ids.extend(symbols);
    }
}

/// §3.1.4: the Digits pre-split, then each piece split by the pattern, every match and every
/// stretch between matches its own word.
fn words<'t>(pattern: &Regex, text: &'t str) -> Result<Vec<&'t str>, String> {
    let mut out = Vec::new();
    for piece in digits_split(text) {
        let mut at = 0;
        for m in pattern.find_iter(piece) {
            let m = m.map_err(|e| format!("the §3.1.4 pattern failed: {e}"))?;
            if m.start() > at {
                out.push(&piece[at..m.start()]);
            }
            out.push(m.as_str());
            at = m.end();
        }
        if at < piece.len() {
            out.push(&piece[at..]);
        }
    }
    Ok(out)
}

/// §3.1.4 and §3.1.5.a: `text`'s words, each byte remapped to its character (what a BPE
/// trainer counts pairs over).
pub fn pre_tokenize(text: &str) -> Result<Vec<String>, String> {
    let pattern = Regex::new(GPT2_PATTERN).expect("the §3.1.4 pattern compiles");
    let map = byte_to_unicode();
    Ok(words(&pattern, text)?
        .into_iter()
        .map(|w| w.bytes().map(|b| map[b as usize]).collect())
        .collect())
}

/// §3.1.4.a: every numeric character isolated; the runs between kept whole.
fn digits_split(text: &str) -> Vec<&str> {
    let mut pieces = Vec::new();
    let mut start = 0;
    for (i, c) in text.char_indices() {
        if c.is_numeric() {
            if start < i {
                pieces.push(&text[start..i]);
            }
            pieces.push(&text[i..i + c.len_utf8()]);
            start = i + c.len_utf8();
        }
    }
    if start < text.len() {
        pieces.push(&text[start..]);
    }
    pieces
}

/// The pre-tokenizer is `Sequence[Digits(individual_digits = true), ByteLevel(add_prefix_space =
/// false, use_regex = true)]`; `use_regex` absent is the library's default, true; other members
/// (`trim_offsets`, which moves offsets, not ids) are not read.
fn pre_tokenizer_ok(v: Option<&Value>) -> bool {
    let field = |o: &Value, k: &str| o.get(k).cloned();
    let Some(v) = v else { return false };
    let Some([digits, bytes]) = v.get("pretokenizers").and_then(Value::as_array).map(Vec::as_slice) else {
        return false;
    };
    field(v, "type") == Some(json!("Sequence"))
        && field(digits, "type") == Some(json!("Digits"))
        && field(digits, "individual_digits") == Some(json!(true))
        && field(bytes, "type") == Some(json!("ByteLevel"))
        && field(bytes, "add_prefix_space") == Some(json!(false))
        && field(bytes, "use_regex").is_none_or(|u| u == json!(true))
}
