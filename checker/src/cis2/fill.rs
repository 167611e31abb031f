//! `fill` for the two CIS-2 suites (docs/protocol.md "CIS-2"): a line with an `"fn"` member is an
//! `ops.jsonl` record, a line with a `"model"` member a `decode.jsonl` record (its `"prompt"` the
//! prompt's UTF-8 bytes in lowercase hex, its model folder relative to `fill --tree DIR`). Each is
//! computed under both tininess rules (docs/assumptions.md C1); `expect` is the x86-64 result and
//! gains an `"aarch64"` member, the whole `expect` under aarch64's rule, when that differs.

use super::arith::{After, Before, Rule, hex32};
use super::artifact::widen_bf16;
use super::decode::{self, Files};
use super::env;
use super::pinned;
use super::reduce;
use super::rope;
use crate::canon::{self, J, ReqInt};
use crate::request::{Bad, LineError, bad, members};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::sync::RwLock;

static TREE: RwLock<Option<PathBuf>> = RwLock::new(None);

/// Sets the directory decode records' `"model"` paths are relative to (`fill --tree DIR`).
pub fn set_tree(dir: Option<PathBuf>) {
    *TREE.write().unwrap_or_else(|e| e.into_inner()) = dir;
}

fn tree() -> Option<PathBuf> {
    TREE.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Whether a request line belongs to the CIS-2 suites.
pub fn is_cis2(v: &Value) -> bool {
    v.as_object()
        .is_some_and(|m| m.contains_key("fn") || m.contains_key("model"))
}

fn hex_bits(v: &Value, field: &str, digits: usize) -> Result<u64, Bad> {
    match v.as_str() {
        Some(s) if s.len() == digits && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) => {
            Ok(u64::from_str_radix(s, 16).expect("hex digits"))
        }
        Some(_) => bad(field, &format!("not {digits} lowercase hexadecimal digits")),
        None => bad(field, "not a string"),
    }
}

fn f32_of(v: &Value, field: &str) -> Result<f32, Bad> {
    Ok(f32::from_bits(hex_bits(v, field, 8)? as u32))
}

fn f32s(v: &Value, field: &str) -> Result<Vec<f32>, Bad> {
    let Some(a) = v.as_array() else {
        return bad(field, "not an array");
    };
    a.iter()
        .enumerate()
        .map(|(i, x)| f32_of(x, &format!("{field}[{i}]")))
        .collect()
}

fn int_of(v: &Value, field: &str) -> Result<ReqInt, Bad> {
    match v.as_str() {
        Some(s) => canon::parse_int(s).map_or_else(|| bad(field, "not a canonical integer string"), Ok),
        None => bad(field, "not an integer string"),
    }
}

/// A non-negative integer; `None` past 2^64.
fn count_of(v: &Value, field: &str) -> Result<Option<u64>, Bad> {
    match int_of(v, field)? {
        ReqInt::Val(n) if n < 0 => bad(field, "negative"),
        ReqInt::Below => bad(field, "negative"),
        ReqInt::Val(n) => Ok(u64::try_from(n).ok()),
        ReqInt::Above => Ok(None),
    }
}

/// A decode's `gen_toks`: a non-negative integer of any size, one of 2^127 or more read as
/// `u128::MAX` (C7: the position check refuses every count that large alike).
fn steps_of(v: &Value, field: &str) -> Result<u128, Bad> {
    match int_of(v, field)? {
        ReqInt::Val(n) => u128::try_from(n).map_or_else(|_| bad(field, "negative"), Ok),
        ReqInt::Below => bad(field, "negative"),
        ReqInt::Above => Ok(u128::MAX),
    }
}

fn arr(vs: &[f32]) -> J {
    J::Arr(vs.iter().map(|&v| J::str(&hex32(v))).collect())
}

fn r(v: f32) -> J {
    J::obj(vec![("r", J::str(&hex32(v)))])
}

/// The request's `in`, echoed: strings, arrays and objects only.
fn echo(v: &Value, field: &str) -> Result<J, Bad> {
    Ok(match v {
        Value::String(s) => J::Str(s.clone()),
        Value::Array(a) => J::Arr(
            a.iter()
                .enumerate()
                .map(|(i, x)| echo(x, &format!("{field}[{i}]")))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(m) => J::Obj(
            m.iter()
                .map(|(k, x)| Ok((k.clone(), echo(x, &format!("{field}.{k}"))?)))
                .collect::<Result<_, Bad>>()?,
        ),
        _ => return bad(field, "not a string"),
    })
}

/// The largest `head_dim` an `inv_freq` request may ask for.
const MAX_HEAD_DIM: u64 = 1 << 24;

/// One `ops.jsonl` function under rule `R`: its `expect`.
fn op<R: Rule>(name: &str, input: &Value) -> Result<J, Bad> {
    let f = "in";
    let scalar = |keys: &[&str]| members(input, f, keys, &[]);
    Ok(match name {
        "widen_bf16" => {
            let m = scalar(&["b"])?;
            r(widen_bf16(hex_bits(&m["b"], "in.b", 4)? as u16))
        }
        "add" | "sub" | "mul" | "div" => {
            let m = scalar(&["a", "b"])?;
            let (a, b) = (f32_of(&m["a"], "in.a")?, f32_of(&m["b"], "in.b")?);
            r(match name {
                "add" => a + b,
                "sub" => a - b,
                "mul" => R::mul(a, b),
                _ => R::div(a, b),
            })
        }
        "sqrt" => r(f32_of(&scalar(&["a"])?["a"], "in.a")?.sqrt()),
        "narrow" => r(R::narrow(f64::from_bits(hex_bits(&scalar(&["a"])?["a"], "in.a", 16)?))),
        "rsqrt" => r(pinned::rsqrt::<R>(f32_of(&scalar(&["x"])?["x"], "in.x")?)),
        "ldexp_exact" => {
            let m = scalar(&["k", "x"])?;
            let x = f32_of(&m["x"], "in.x")?;
            r(pinned::ldexp_exact(x, int_of(&m["k"], "in.k")?.clamped()))
        }
        "exp_pinned" | "ln_pinned" | "sin_pinned" | "cos_pinned" | "silu" | "frexp_exact" => {
            let x = f32_of(&scalar(&["x"])?["x"], "in.x")?;
            match name {
                "exp_pinned" => r(pinned::exp_pinned::<R>(x)),
                "ln_pinned" => r(pinned::ln_pinned::<R>(x)),
                "sin_pinned" => r(pinned::sin_pinned::<R>(x)),
                "cos_pinned" => r(pinned::cos_pinned::<R>(x)),
                "silu" => r(pinned::silu::<R>(x)),
                _ => {
                    // §6.5.1's precondition, by the bits: positive, not zero, finite.
                    let bits = x.to_bits();
                    if bits >> 31 != 0 || bits == 0 || bits >= 0x7F80_0000 {
                        return bad("in.x", "frexp_exact needs a positive finite x (§6.5.1)");
                    }
                    let (m, e) = pinned::frexp_exact(x);
                    J::obj(vec![("e", J::int(e)), ("m", J::str(&hex32(m)))])
                }
            }
        }
        "dot_seq" => {
            let m = scalar(&["a", "b"])?;
            let (a, b) = (f32s(&m["a"], "in.a")?, f32s(&m["b"], "in.b")?);
            if a.len() != b.len() {
                return bad("in.b", &format!("{} values, not in.a's {}", b.len(), a.len()));
            }
            r(reduce::dot_seq::<R>(&a, &b))
        }
        "sum_seq" => r(reduce::sum_seq(&f32s(&scalar(&["a"])?["a"], "in.a")?)),
        "rmsnorm" => {
            let m = scalar(&["eps", "weight", "x"])?;
            let (x, w) = (f32s(&m["x"], "in.x")?, f32s(&m["weight"], "in.weight")?);
            if x.is_empty() {
                // §8's n is the hidden size, at least 1: n = 0 would divide by zero (C10).
                return bad("in.x", "empty");
            }
            if x.len() != w.len() {
                return bad("in.weight", &format!("{} values, not in.x's {}", w.len(), x.len()));
            }
            let eps = f32_of(&m["eps"], "in.eps")?;
            J::obj(vec![("out", arr(&reduce::rmsnorm::<R>(&x, &w, eps)))])
        }
        "softmax" => {
            let mut s = f32s(&scalar(&["scores"])?["scores"], "in.scores")?;
            if s.is_empty() {
                return bad("in.scores", "empty");
            }
            reduce::softmax::<R>(&mut s);
            J::obj(vec![("out", arr(&s))])
        }
        "argmax" => {
            let l = f32s(&scalar(&["logits"])?["logits"], "in.logits")?;
            if l.is_empty() {
                return bad("in.logits", "empty");
            }
            J::obj(vec![("index", J::int(reduce::argmax(&l)))])
        }
        "inv_freq" => {
            let m = scalar(&["head_dim", "theta"])?;
            let hd = match count_of(&m["head_dim"], "in.head_dim")? {
                Some(n) if n % 2 != 0 => return bad("in.head_dim", "odd"),
                Some(n) if n <= MAX_HEAD_DIM => n as usize,
                _ => {
                    return bad(
                        "in.head_dim",
                        &format!("above {MAX_HEAD_DIM}, more than this checker computes"),
                    );
                }
            };
            let theta = f32_of(&m["theta"], "in.theta")?;
            let inv = rope::inv_freq::<R>(hd, theta);
            J::obj(vec![
                ("digest", J::str(&hex::encode(rope::inv_freq_digest(&inv)))),
                ("inv_freq", arr(&inv)),
            ])
        }
        "rope" => {
            let m = scalar(&["head", "inv_freq", "pos"])?;
            let mut head = f32s(&m["head"], "in.head")?;
            let inv = f32s(&m["inv_freq"], "in.inv_freq")?;
            if head.is_empty() {
                // A head has head_dim ≥ 2 values (§7): an empty one is no head (C10).
                return bad("in.head", "empty");
            }
            if head.len() % 2 != 0 {
                return bad("in.head", &format!("{} values, not an even number", head.len()));
            }
            if inv.len() * 2 != head.len() {
                return bad(
                    "in.inv_freq",
                    &format!("{} values, not half of in.head's {}", inv.len(), head.len()),
                );
            }
            let pos = match int_of(&m["pos"], "in.pos")? {
                ReqInt::Val(n) if n >= 0 => n as f32, // RNE, exact below 2^24
                ReqInt::Above => return bad("in.pos", "above 2^127"),
                _ => return bad("in.pos", "negative"),
            };
            let (cos_v, sin_v) = rope::tables::<R>(&inv, pos);
            rope::rotate::<R>(&mut head, &cos_v, &sin_v);
            J::obj(vec![("out", arr(&head))])
        }
        "table_digest" => {
            scalar(&[])?;
            J::obj(vec![("digest", J::str(&hex::encode(pinned::table_digest())))])
        }
        _ => return bad("fn", &format!("{name:?} is not a CIS-2 function")),
    })
}

/// `expect` under both rules: the x86-64 one, with `"aarch64"` when aarch64's differs.
fn both(x86: J, arm: J) -> J {
    if x86 == arm {
        return x86;
    }
    match x86 {
        J::Obj(mut m) => {
            m.push(("aarch64".to_string(), arm));
            J::Obj(m)
        }
        other => other,
    }
}

fn id_of(m: &Map<String, Value>) -> Result<String, Bad> {
    match m["id"].as_str() {
        Some(s) if canon::printable(s) => Ok(s.to_string()),
        Some(_) => bad("id", "not printable ASCII"),
        None => bad("id", "not a string"),
    }
}

fn fill_op(v: &Value) -> Result<String, LineError> {
    let m = members(v, "", &["fn", "id", "in"], &["expect"]).map_err(LineError::Bad)?;
    let id = id_of(m).map_err(LineError::Bad)?;
    let Some(name) = m["fn"].as_str() else {
        return Err(LineError::Bad("fn: not a string".into()));
    };
    let _pinned = env::pin().map_err(LineError::Bug)?;
    let x86 = op::<After>(name, &m["in"]).map_err(LineError::Bad)?;
    let arm = op::<Before>(name, &m["in"]).map_err(LineError::Bad)?;
    let filled = J::obj(vec![
        ("expect", both(x86, arm)),
        ("fn", J::str(name)),
        ("id", J::Str(id)),
        ("in", echo(&m["in"], "in").map_err(LineError::Bad)?),
    ]);
    canon::write(&filled).map_err(|e| LineError::Bad(format!("a string that cannot be written canonically: {e}")))
}

/// A decode's `expect` under rule `R`.
pub fn decode_expect<R: Rule>(art: &decode::Artifact, ids: &[u32], gen_toks: usize) -> Result<J, String> {
    let rc = decode::decode::<R>(art, ids, gen_toks)?;
    let ints = |v: &[u32]| J::Arr(v.iter().map(J::int).collect());
    Ok(J::obj(vec![
        ("argmax_digest", J::str(&hex::encode(rc.argmax_digest))),
        ("config_sha256", J::str(&hex::encode(art.hashes.config))),
        ("generated_ids", ints(&rc.generated)),
        ("inv_freq_table_digest", J::str(&hex::encode(rc.inv_freq_digest))),
        ("prompt_ids", ints(&rc.prompt_ids)),
        ("table_digest", J::str(&hex::encode(rc.table_digest))),
        ("tokenizer_sha256", J::str(&hex::encode(art.hashes.tokenizer))),
        ("weights_sha256", J::str(&hex::encode(art.hashes.weights))),
        ("witness_digest", J::str(&hex::encode(rc.witness))),
    ]))
}

/// A decode record's `expect` for the model folder `dir`: a refusal or both rules' results.
/// `gen_toks` is the request's count, any size ([`steps_of`]); a count whose positions pass C7's
/// bounds is a refusal, never a line error.
pub fn decode_record(dir: &Path, prompt: &str, gen_toks: u128) -> Result<J, LineError> {
    let files = Files::read(dir).map_err(|e| LineError::Bad(format!("model: {e}")))?;
    let refuse = |r: super::artifact::Refusal| J::obj(vec![("refuse", J::str(r.code()))]);
    let art = match decode::open(files) {
        Ok(a) => a,
        Err(r) => return Ok(refuse(r)),
    };
    let ids = match decode::prompt_ids(&art, prompt, gen_toks) {
        Ok(ids) => ids,
        Err(r) => return Ok(refuse(r)),
    };
    // The positions passed C7's check, so gen_toks is at most 2^24 here.
    let gen_toks = usize::try_from(gen_toks)
        .map_err(|_| LineError::Bug(format!("gen_toks {gen_toks} passed the position check")))?;
    let _pinned = env::pin().map_err(LineError::Bug)?;
    let x86 = decode_expect::<After>(&art, &ids, gen_toks).map_err(LineError::Bug)?;
    let arm = decode_expect::<Before>(&art, &ids, gen_toks).map_err(LineError::Bug)?;
    Ok(both(x86, arm))
}

fn fill_decode(v: &Value, tree: Option<&Path>) -> Result<String, LineError> {
    let m = members(v, "", &["gen_toks", "id", "model", "prompt"], &["expect"]).map_err(LineError::Bad)?;
    let id = id_of(m).map_err(LineError::Bad)?;
    let gen_toks = steps_of(&m["gen_toks"], "gen_toks").map_err(LineError::Bad)?;
    let Some(model) = m["model"].as_str().filter(|s| canon::printable(s)) else {
        return Err(LineError::Bad("model: not a printable ASCII string".into()));
    };
    // The prompt's UTF-8 bytes, lowercase hex (docs/protocol.md).
    let prompt_hex = match m["prompt"].as_str() {
        Some(s) if s.len() % 2 == 0 && s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) => s,
        Some(_) => return Err(LineError::Bad("prompt: not lowercase hexadecimal bytes".into())),
        None => return Err(LineError::Bad("prompt: not a string".into())),
    };
    let bytes = hex::decode(prompt_hex).map_err(|e| LineError::Bad(format!("prompt: {e}")))?;
    let Ok(prompt) = String::from_utf8(bytes) else {
        return Err(LineError::Bad("prompt: its bytes are not UTF-8".into()));
    };
    // Without --tree, the working directory (the grader runs an implementation in the tree).
    let tree = tree.unwrap_or(Path::new("."));
    let expect = decode_record(&tree.join(model), &prompt, gen_toks)?;
    let filled = J::obj(vec![
        ("expect", expect),
        ("gen_toks", J::Str(m["gen_toks"].as_str().expect("checked").to_string())),
        ("id", J::Str(id)),
        ("model", J::str(model)),
        ("prompt", J::str(prompt_hex)),
    ]);
    canon::write(&filled).map_err(|e| LineError::Bad(format!("a string that cannot be written canonically: {e}")))
}

/// Fills one CIS-2 request line (an object with `"fn"` or `"model"`), decode records' models
/// relative to the tree [`set_tree`] gave.
pub fn fill_line(v: &Value) -> Result<String, LineError> {
    fill_line_in(v, tree().as_deref())
}

/// Fills one CIS-2 request line, decode records' models relative to `tree`.
pub fn fill_line_in(v: &Value, tree: Option<&Path>) -> Result<String, LineError> {
    let m = v.as_object().ok_or_else(|| LineError::Bad("not an object".into()))?;
    if m.contains_key("fn") {
        fill_op(v)
    } else {
        fill_decode(v, tree)
    }
}
