//! Filling the CIS-2 suites (docs/protocol.md, CIS-2): `cis2/ops.jsonl` records (they name an
//! `fn`) and `cis2/decode.jsonl` records (they name a `model`). Each is computed under both
//! tininess rules; `expect` is x86-64's, with `aarch64` added where that rule differs (C1).

use crate::canon;
use crate::cis2::artifact::widen_bf16;
use crate::cis2::decode::{self, Artifacts, argmax, rmsnorm, softmax};
use crate::cis2::pinned::{
    cos_pinned, exp_pinned, frexp_exact, ldexp_exact, ln_pinned, rsqrt, silu, sin_pinned, table_digest,
};
use crate::cis2::reduce::{dot_seq, sum_seq};
use crate::cis2::{Arith, F32, F64, Soft, rope};
use crate::json::*;
use serde_json::{Map, Value, json};
use std::path::Path;

/// The longest array an ops record may hold.
const MAX_LEN: usize = 1 << 20;

/// Fills an ops record.
pub fn fill_op(v: &Value) -> Result<Value, Fail> {
    let o = object(v, "")?;
    only(o, &["expect", "fn", "id", "in"], "")?;
    let id = string(member(o, "id", "")?, "id")?;
    let name = string(member(o, "fn", "")?, "fn")?;
    let input = object(member(o, "in", "")?, "in")?;
    let expect = both_rules(|a| op(a, name, input))?;
    Ok(json!({ "expect": expect, "fn": name, "id": id, "in": input }))
}

/// Fills a decode record; `tree` is the directory its `model` path is relative to (by default
/// the working directory, as the grader runs an implementation in the tree).
pub fn fill_decode(v: &Value, tree: Option<&Path>) -> Result<Value, Fail> {
    fill_decode_with(v, |model| {
        let dir = tree.unwrap_or(Path::new(".")).join(model);
        let read =
            |name: &str| std::fs::read(dir.join(name)).map_err(|e| format!("model: {}: {e}", dir.join(name).display()));
        Ok(Artifacts {
            weights: read("model.safetensors")?,
            config: read("config.json")?,
            tokenizer: read("tokenizer.json")?,
        })
    })
}

/// Fills a decode record with the files `model` names, as `files` gives them.
pub fn fill_decode_with(v: &Value, files: impl FnOnce(&str) -> Result<Artifacts, Fail>) -> Result<Value, Fail> {
    let o = object(v, "")?;
    only(o, &["expect", "gen_toks", "id", "model", "prompt"], "")?;
    let id = string(member(o, "id", "")?, "id")?;
    let model = string(member(o, "model", "")?, "model")?;
    let prompt_hex = string(member(o, "prompt", "")?, "prompt")?;
    let prompt = String::from_utf8(hex_bytes(member(o, "prompt", "")?, "prompt")?)
        .map_err(|_| "prompt: the bytes are not UTF-8".to_string())?;
    let gen_toks = integer(member(o, "gen_toks", "")?, "gen_toks")?;
    if gen_toks.sign() == num_bigint::Sign::Minus {
        return Err("gen_toks: negative".into());
    }
    // A count past the machine's is past every max_position_embeddings: the decode refuses it
    // (config_unsupported) before a step is taken.
    let steps = usize::try_from(&gen_toks).unwrap_or(usize::MAX);
    let files = files(model)?;
    let expect = both_rules(|a| receipt(a, &files, &prompt, steps))?;
    Ok(
        json!({ "expect": expect, "gen_toks": canon::int(gen_toks.clone()), "id": id, "model": model, "prompt": prompt_hex }),
    )
}

/// `f` under x86-64's rule, with `aarch64` added when aarch64's rule gives another result.
fn both_rules(f: impl Fn(&Soft) -> Result<Map<String, Value>, Fail>) -> Result<Value, Fail> {
    let mut x86 = f(&Soft::X86_64)?;
    let arm = f(&Soft::AARCH64)?;
    if arm != x86 {
        x86.insert("aarch64".into(), Value::Object(arm));
    }
    Ok(Value::Object(x86))
}

fn receipt(a: &Soft, files: &Artifacts, prompt: &str, steps: usize) -> Result<Map<String, Value>, Fail> {
    let r = match decode::run(a, files, prompt, steps) {
        Ok(r) => r,
        Err(refusal) => return Ok(object_of(json!({ "refuse": refusal.code.as_str() }))),
    };
    if r.nan_logit {
        return Err(
            "model: the decode's logits hold a NaN, whose bits CIS-2 does not pin (docs/assumptions.md C3)".into(),
        );
    }
    let ids = |v: &[u32]| v.iter().map(|&t| canon::int(t)).collect::<Vec<_>>();
    Ok(object_of(json!({
        "argmax_digest": hex::encode(r.argmax_digest),
        "config_sha256": hex::encode(r.config_sha256),
        "generated_ids": ids(&r.generated_ids),
        "inv_freq_table_digest": hex::encode(r.inv_freq_table_digest),
        "prompt_ids": ids(&r.prompt_ids),
        "table_digest": hex::encode(r.table_digest),
        "tokenizer_sha256": hex::encode(r.tokenizer_sha256),
        "weights_sha256": hex::encode(r.weights_sha256),
        "witness_digest": hex::encode(r.witness_digest),
    })))
}

fn object_of(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(o) => o,
        _ => unreachable!("built as an object"),
    }
}

/// A binary32 written as 8 lowercase hex digits (NaN as `7fc00000`, C3).
pub fn bits(x: F32) -> Value {
    Value::String(format!("{:08x}", x.canonical().0))
}

fn bits_list(xs: &[F32]) -> Value {
    Value::Array(xs.iter().map(|&x| bits(x)).collect())
}

fn hex_word(v: &Value, path: &str, digits: usize) -> Result<u64, Fail> {
    let s = string(v, path)?;
    if s.len() != digits || !s.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return Err(format!("{path}: not {digits} lowercase hex digits"));
    }
    u64::from_str_radix(s, 16).map_err(|e| format!("{path}: {e}"))
}

fn f32_in(i: &Map<String, Value>, key: &str) -> Result<F32, Fail> {
    Ok(F32(hex_word(member(i, key, "in")?, &join("in", key), 8)? as u32))
}

fn f32s_in(i: &Map<String, Value>, key: &str) -> Result<Vec<F32>, Fail> {
    let path = join("in", key);
    let items = array(member(i, key, "in")?, &path)?;
    if items.len() > MAX_LEN {
        return Err(format!("{path}: more than {MAX_LEN} values"));
    }
    items
        .iter()
        .enumerate()
        .map(|(k, v)| Ok(F32(hex_word(v, &format!("{path}[{k}]"), 8)? as u32)))
        .collect()
}

fn count_in(i: &Map<String, Value>, key: &str, max: u64) -> Result<u64, Fail> {
    let path = join("in", key);
    u64::try_from(&integer(member(i, key, "in")?, &path)?)
        .ok()
        .filter(|&n| n <= max)
        .ok_or(format!("{path}: not in 0..={max}"))
}

fn r(x: F32) -> Result<Map<String, Value>, Fail> {
    Ok(object_of(json!({ "r": bits(x) })))
}

/// One ops record's result under arithmetic `a`.
fn op(a: &Soft, name: &str, i: &Map<String, Value>) -> Result<Map<String, Value>, Fail> {
    let members = |keys: &[&str]| only(i, keys, "in");
    let unary = |f: fn(&Soft, F32) -> F32| -> Result<Map<String, Value>, Fail> {
        members(&["x"])?;
        r(f(a, f32_in(i, "x")?))
    };
    let binary = |f: fn(&Soft, F32, F32) -> F32| -> Result<Map<String, Value>, Fail> {
        members(&["a", "b"])?;
        r(f(a, f32_in(i, "a")?, f32_in(i, "b")?))
    };
    match name {
        "widen_bf16" => {
            members(&["b"])?;
            r(widen_bf16(hex_word(member(i, "b", "in")?, "in.b", 4)? as u16))
        }
        "add" => binary(|a, x, y| a.add(x, y)),
        "sub" => binary(|a, x, y| a.sub(x, y)),
        "mul" => binary(|a, x, y| a.mul(x, y)),
        "div" => binary(|a, x, y| a.div(x, y)),
        "sqrt" => {
            members(&["a"])?;
            r(a.sqrt(f32_in(i, "a")?))
        }
        "narrow" => {
            members(&["a"])?;
            r(a.narrow(F64(hex_word(member(i, "a", "in")?, "in.a", 16)?)))
        }
        "rsqrt" => unary(rsqrt),
        "exp_pinned" => unary(exp_pinned),
        "ln_pinned" => unary(ln_pinned),
        "sin_pinned" => unary(sin_pinned),
        "cos_pinned" => unary(cos_pinned),
        "silu" => unary(silu),
        "ldexp_exact" => {
            members(&["k", "x"])?;
            let k = integer(member(i, "k", "in")?, "in.k")?;
            let k = i32::try_from(&k).map_err(|_| "in.k: not an i32".to_string())?;
            r(ldexp_exact(a, f32_in(i, "x")?, k))
        }
        "frexp_exact" => {
            members(&["x"])?;
            let x = f32_in(i, "x")?;
            if x.0 >> 31 != 0 || x.0 == 0 || x.0 >= 0x7F80_0000 {
                return Err("in.x: frexp_exact needs a positive finite x (§6.5.1)".into());
            }
            let (m, e) = frexp_exact(x);
            Ok(object_of(json!({ "e": canon::int(e), "m": bits(m) })))
        }
        "dot_seq" => {
            members(&["a", "b"])?;
            let (x, y) = (f32s_in(i, "a")?, f32s_in(i, "b")?);
            if x.len() != y.len() {
                return Err("in.b: not the length of in.a".into());
            }
            r(dot_seq(a, &x, &y))
        }
        "sum_seq" => {
            members(&["a"])?;
            r(sum_seq(a, &f32s_in(i, "a")?))
        }
        "rmsnorm" => {
            members(&["eps", "weight", "x"])?;
            let (x, w) = (f32s_in(i, "x")?, f32s_in(i, "weight")?);
            if x.is_empty() || x.len() != w.len() {
                return Err("in.weight: not the (nonzero) length of in.x".into());
            }
            Ok(object_of(
                json!({ "out": bits_list(&rmsnorm(a, &x, &w, f32_in(i, "eps")?)) }),
            ))
        }
        "softmax" => {
            members(&["scores"])?;
            let mut s = f32s_in(i, "scores")?;
            if s.is_empty() {
                return Err("in.scores: empty".into());
            }
            softmax(a, &mut s);
            Ok(object_of(json!({ "out": bits_list(&s) })))
        }
        "argmax" => {
            members(&["logits"])?;
            let l = f32s_in(i, "logits")?;
            if l.is_empty() {
                return Err("in.logits: empty".into());
            }
            Ok(object_of(json!({ "index": canon::int(argmax(a, &l)) })))
        }
        "inv_freq" => {
            members(&["head_dim", "theta"])?;
            let hd = count_in(i, "head_dim", MAX_LEN as u64)? as usize;
            if hd < 2 || !hd.is_multiple_of(2) {
                return Err("in.head_dim: not an even number of at least 2".into());
            }
            let table = rope::inv_freq(a, hd, f32_in(i, "theta")?);
            Ok(object_of(json!({
                "digest": hex::encode(rope::inv_freq_digest(&table)),
                "inv_freq": bits_list(&table),
            })))
        }
        "rope" => {
            members(&["head", "inv_freq", "pos"])?;
            let mut head = f32s_in(i, "head")?;
            let inv = f32s_in(i, "inv_freq")?;
            if head.is_empty() || head.len() != 2 * inv.len() {
                return Err("in.head: not twice the (nonzero) length of in.inv_freq".into());
            }
            let pos = count_in(i, "pos", 1 << 31)? as usize;
            let (cos, sin) = rope::tables(a, &inv, pos);
            rope::rotate(a, &mut head, &cos, &sin);
            Ok(object_of(json!({ "out": bits_list(&head) })))
        }
        "table_digest" => {
            members(&[])?;
            Ok(object_of(json!({ "digest": hex::encode(table_digest()) })))
        }
        other => Err(format!("fn: {other:?} is not a CIS-2 function of docs/protocol.md")),
    }
}
