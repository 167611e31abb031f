//! CIS-2 (cis2-spec-v0.3b): the spec's own goldens, the tininess emulation on hand-worked cases,
//! the suites' `fill` forms, and a small decode written here and run end to end.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use wai_checker::cis2::arith::{After, Before, Rule};
use wai_checker::cis2::decode::{self, Files};
use wai_checker::cis2::{bf16, env, pinned, reduce, rope, tokenizer, vector};
use wai_checker::fill;
use wai_checker::request::LineError;
use wai_checker_testgen::cis2_synth::{self, Spec, tokenizer_json};

fn f(bits: u32) -> f32 {
    f32::from_bits(bits)
}

fn filled(line: &str) -> String {
    match fill::fill_line(line) {
        Ok(s) => s,
        Err(LineError::Bad(m) | LineError::Bug(m)) => panic!("{line}: {m}"),
    }
}

fn bad(line: &str) -> String {
    match fill::fill_line(line) {
        Err(LineError::Bad(m)) => m,
        Err(LineError::Bug(m)) => panic!("{line}: a bug, not a request error: {m}"),
        Ok(s) => panic!("{line}: filled as {s}"),
    }
}

#[test]
fn table_digest_is_pinned() {
    // §6.6
    assert_eq!(
        hex::encode(pinned::table_digest()),
        "23c7bfaf5cef0095fd021af2eb1808abb4928bae4219756d86bdac670a06b35d"
    );
}

#[test]
fn inv_freq_digest_for_head_dim_64_theta_1e5() {
    // §7.2, under both tininess rules.
    let _p = env::pin().unwrap();
    for d in [
        rope::inv_freq_digest(&rope::inv_freq::<After>(64, 100_000.0)),
        rope::inv_freq_digest(&rope::inv_freq::<Before>(64, 100_000.0)),
    ] {
        assert_eq!(
            hex::encode(d),
            "da9f6dcfde0425588815509e874515cdcd3d6b8818b6d0136590052e7bbf6f12"
        );
    }
    // §7.1: ln_pinned(1e5) within 2e-6 of v0.1's literal 0x413834F1.
    let ln = pinned::ln_pinned::<After>(100_000.0);
    assert!(((ln - f(0x413834F1)) / f(0x413834F1)).abs() <= 2e-6, "{ln}");
}

#[test]
fn spec_checks_rsqrt_dot_seq_eps() {
    let _p = env::pin().unwrap();
    // §6.1
    assert_eq!(pinned::rsqrt::<After>(64.0).to_bits(), 0x3E00_0000);
    assert_eq!(pinned::rsqrt::<Before>(64.0).to_bits(), 0x3E00_0000);
    // §5.1: the 1.0 is lost against 1e8.
    let d = reduce::dot_seq::<After>(&[1e8, 1.0, -1e8], &[1.0, 1.0, 1.0]);
    assert_eq!(d.to_bits(), 0.0f32.to_bits());
    // §2.3
    assert_eq!(After::narrow(1.0e-5).to_bits(), 0x3727_C5AC);
    assert_eq!(Before::narrow(1.0e-5).to_bits(), 0x3727_C5AC);
    // §6.2's remark: EXP_P[5] is 0.5; §6.5's: LOG_Q1 == EXP_C2, LOG_Q2 == EXP_C1.
    assert_eq!(pinned::EXP_P[5], 0.5);
    assert_eq!(pinned::LOG_Q1.to_bits(), pinned::EXP_C2.to_bits());
    assert_eq!(pinned::LOG_Q2.to_bits(), pinned::EXP_C1.to_bits());
}

#[test]
fn self_test_values() {
    // §1.3: with the pin in effect, 2^-126 * 1e-10 and 0x00000001 + 0.0 are both exactly +0.0.
    let _p = env::pin().unwrap();
    let a = std::hint::black_box(f32::MIN_POSITIVE) * std::hint::black_box(1.0e-10f32);
    let b = std::hint::black_box(f(1)) + std::hint::black_box(0.0f32);
    assert_eq!((a.to_bits(), b.to_bits()), (0, 0));
    env::self_test().unwrap();
}

#[test]
fn the_pin_is_restored() {
    let unpinned = || std::hint::black_box(f(1)) * std::hint::black_box(16_777_216.0f32);
    let before = unpinned().to_bits();
    {
        let _p = env::pin().unwrap();
        assert_eq!(unpinned().to_bits(), 0);
    }
    assert_eq!(unpinned().to_bits(), before);
}

#[test]
fn tininess_rules_on_hand_worked_cases() {
    let _p = env::pin().unwrap();
    // SPEC-NOTES 15: 0x20000001 = 2^-63·(1 + 2^-23); 0x1FFFFFFE = 2^-64·(2 − 2^-22) = 2^-63·(1 − 2^-23).
    // Exact product: 2^-126·(1 − 2^-46), below 2^-126 by 2^-172 and above T = 2^-126·(1 − 2^-25).
    // Rounded to 24 bits, 1 − 2^-46 is 1: after rounding the result is 2^-126, not tiny (x86-64
    // keeps 0x00800000); before rounding it is tiny (aarch64 flushes to +0).
    let (a, b) = (f(0x2000_0001), f(0x1FFF_FFFE));
    assert_eq!(After::mul(a, b).to_bits(), 0x0080_0000);
    assert_eq!(Before::mul(a, b).to_bits(), 0x0000_0000);
    assert_eq!(After::mul(-a, b).to_bits(), 0x8080_0000);
    assert_eq!(Before::mul(-a, b).to_bits(), 0x8000_0000);
    // The window's lower edge T = 2^-126·(1 − 2^-25) is the midpoint between 2^-126 − 2^-150 and
    // 2^-126; ties to even go up. 0x3F7FFFFF·2^-126... as a product: (1 − 2^-24)·(2^-126·(1 + 2^-24))
    // is 2^-126·(1 − 2^-48): in the window.
    let (c, d) = (f(0x3F7F_FFFF), f(0x0080_0000));
    // 0x3F7FFFFF × 2^-126 = 2^-126·(1 − 2^-24) exactly representable only as a subnormal: tiny under
    // both rules (it rounds to 2^-126 − 2^-150 with an unbounded exponent).
    assert_eq!(After::mul(c, d).to_bits(), 0);
    assert_eq!(Before::mul(c, d).to_bits(), 0);
    // A quotient: 2^-126 / (1 + 2^-23) = 2^-126·(1 − 2^-23 + 2^-46 − …), rounded to 24 bits
    // 2^-126·(1 − 2^-23) < 2^-126 − … : below T, tiny under both.
    assert_eq!(After::div(f(0x0080_0000), f(0x3F80_0001)).to_bits(), 0);
    // No quotient of binary32 values lands in the window: with 24-bit integer significands p < q,
    // 1 − p/q = (q − p)/q ≥ 1/q > 2^-24 > 2^-25 (and scaling q by 2^m only drops p/q below 1/2).
    // The closest, 0x00FFFFFF / 2 = 2^-126·(1 − 2^-24), is representable with 24 bits, below T:
    // tiny under both rules.
    assert_eq!(After::div(f(0x00FF_FFFF), 2.0).to_bits(), 0);
    assert_eq!(Before::div(f(0x00FF_FFFF), 2.0).to_bits(), 0);
    // A narrowing: 2^-126·(1 − 2^-30) as f64.
    let n = 2f64.powi(-126) * (1.0 - 2f64.powi(-30));
    assert_eq!(After::narrow(n).to_bits(), 0x0080_0000);
    assert_eq!(Before::narrow(n).to_bits(), 0);
    assert_eq!(After::narrow(-n).to_bits(), 0x8080_0000);
    // Just below T: tiny under both.
    let below = 2f64.powi(-126) * (1.0 - 2f64.powi(-24));
    assert_eq!(After::narrow(below).to_bits(), 0);
    assert_eq!(Before::narrow(below).to_bits(), 0);
    // Exactly T: the tie goes to even, 2^-126, under x86-64's rule.
    let t = 2f64.powi(-126) * (1.0 - 2f64.powi(-25));
    assert_eq!(After::narrow(t).to_bits(), 0x0080_0000);
    assert_eq!(Before::narrow(t).to_bits(), 0);
}

#[test]
fn daz_reads_subnormals_as_zero() {
    // docs/assumptions.md C2
    let _p = env::pin().unwrap();
    assert_eq!(pinned::ln_pinned::<After>(f(1)), f32::NEG_INFINITY);
    assert_eq!(reduce::dot_seq::<After>(&[f(5)], &[1.0]).to_bits(), 0);
    // ldexp_exact's `x == 0.0` test is a comparison: a subnormal is returned as it is.
    assert_eq!(pinned::ldexp_exact(f(5), 3).to_bits(), 5);
    // C10: exp_pinned(−88.0) is 0, exp_pinned(±∞) as step 2/3 say.
    assert_eq!(pinned::exp_pinned::<After>(-88.0).to_bits(), 0);
    assert_eq!(pinned::exp_pinned::<After>(f32::INFINITY), f32::INFINITY);
    assert_eq!(pinned::exp_pinned::<After>(f32::NEG_INFINITY).to_bits(), 0);
}

#[test]
fn pinned_functions_are_close_to_the_truth() {
    let _p = env::pin().unwrap();
    for i in -40..=40 {
        let x = i as f32 * 0.7;
        let s = pinned::sin_pinned::<After>(x) as f64;
        let c = pinned::cos_pinned::<After>(x) as f64;
        assert!((s - (x as f64).sin()).abs() < 3e-7, "sin {x}");
        assert!((c - (x as f64).cos()).abs() < 3e-7, "cos {x}");
        let e = pinned::exp_pinned::<After>(x) as f64;
        assert!((e / (x as f64).exp() - 1.0).abs() < 3e-7, "exp {x}");
    }
    for x in [
        0.001f32,
        0.1,
        0.5,
        0.999,
        1.0,
        1.5,
        2.0,
        10.0,
        100.0,
        100_000.0,
        1_000_000.0,
    ] {
        let l = pinned::ln_pinned::<After>(x) as f64;
        let want = (x as f64).ln();
        assert!((l - want).abs() <= 2e-6 * want.abs().max(1e-30), "ln {x}");
    }
    let (m, e) = pinned::frexp_exact(12.0);
    assert_eq!((m, e), (0.75, 4));
    assert_eq!(pinned::ldexp_exact(0.75, 4), 12.0);
    assert_eq!(pinned::ldexp_exact(-1.0, 300), f32::NEG_INFINITY);
    assert_eq!(pinned::ldexp_exact(-1.0, -300).to_bits(), 0);
}

#[test]
fn byte_to_unicode_map() {
    // §3.1.5.a's examples: space → U+0120 'Ġ', newline → U+010A 'Ċ'; printable ranges to themselves.
    let m = tokenizer::byte_to_char();
    assert_eq!(m[0x20], '\u{120}');
    assert_eq!(m[0x0A], '\u{10A}');
    assert_eq!(m[b'O' as usize], 'O');
    assert_eq!(m[0xA1], '\u{A1}');
    assert_eq!(m[0x00], '\u{100}');
    assert_eq!(m[0x7F], '\u{121}');
    assert_eq!(m[0xAD], '\u{143}');
    let same = (0..256).filter(|&b| m[b] as u32 == b as u32).count();
    assert_eq!(same, 188);
    let mut all: Vec<u32> = m.iter().map(|&c| c as u32).collect();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), 256);
    assert!(m.iter().all(|&c| (c as u32) < 324));
}

#[test]
fn ops_records() {
    // docs/protocol.md's example, byte for byte.
    let ex = r#"{"expect":{"r":"3e000000"},"fn":"rsqrt","id":"rsqrt-64","in":{"x":"42800000"}}"#;
    assert_eq!(filled(ex), ex);
    let req = |fname: &str, inp: &str| format!(r#"{{"fn":"{fname}","id":"t","in":{inp}}}"#);
    let expect = |line: String| -> Value { serde_json::from_str::<Value>(&filled(&line)).unwrap()["expect"].clone() };
    assert_eq!(
        expect(req("mul", r#"{"a":"20000001","b":"1ffffffe"}"#)),
        json!({"r": "00800000", "aarch64": {"r": "00000000"}})
    );
    assert_eq!(
        expect(req("div", r#"{"a":"00000000","b":"00000000"}"#)),
        json!({"r": "7fc00000"})
    );
    assert_eq!(expect(req("widen_bf16", r#"{"b":"3f80"}"#)), json!({"r": "3f800000"}));
    assert_eq!(
        expect(req("narrow", r#"{"a":"3ee4f8b588e368f1"}"#)),
        json!({"r": "3727c5ac"})
    );
    assert_eq!(
        expect(req("frexp_exact", r#"{"x":"41400000"}"#)),
        json!({"e": "4", "m": "3f400000"})
    );
    assert_eq!(
        expect(req("ldexp_exact", r#"{"k":"-4","x":"41400000"}"#)),
        json!({"r": "3f400000"})
    );
    assert_eq!(
        expect(req(
            "dot_seq",
            r#"{"a":["4cbebc20","3f800000","ccbebc20"],"b":["3f800000","3f800000","3f800000"]}"#
        )),
        json!({"r": "00000000"})
    );
    assert_eq!(
        expect(req("argmax", r#"{"logits":["3f800000","40000000","40000000"]}"#)),
        json!({"index": "1"})
    );
    assert_eq!(
        expect(req("table_digest", "{}")),
        json!({"digest": "23c7bfaf5cef0095fd021af2eb1808abb4928bae4219756d86bdac670a06b35d"})
    );
    let inv = expect(req("inv_freq", r#"{"head_dim":"64","theta":"47c35000"}"#));
    assert_eq!(
        inv["digest"],
        "da9f6dcfde0425588815509e874515cdcd3d6b8818b6d0136590052e7bbf6f12"
    );
    assert_eq!(inv["inv_freq"][0], "3f800000");
    // pos 0: cos 1, sin 0: the head is unchanged.
    assert_eq!(
        expect(req(
            "rope",
            r#"{"head":["3f800000","40000000"],"inv_freq":["3f800000"],"pos":"0"}"#
        )),
        json!({"out": ["3f800000", "40000000"]})
    );
    let sm = expect(req("softmax", r#"{"scores":["3f800000","3f800000"]}"#));
    assert_eq!(sm, json!({"out": ["3f000000", "3f000000"]}));
}

#[test]
fn bad_ops_records_name_the_field() {
    let req = |fname: &str, inp: &str| format!(r#"{{"fn":"{fname}","id":"t","in":{inp}}}"#);
    assert!(bad(&req("dot_seq", r#"{"a":["3f800000"],"b":[]}"#)).starts_with("in.b:"));
    assert!(bad(&req("mul", r#"{"a":"3F800000","b":"3f800000"}"#)).starts_with("in.a:"));
    assert!(bad(&req("mul", r#"{"a":"3f80000","b":"3f800000"}"#)).starts_with("in.a:"));
    assert!(bad(&req("mul", r#"{"a":"3f800000"}"#)).starts_with("in.b: missing"));
    assert!(bad(&req("rope", r#"{"head":["3f800000"],"inv_freq":[],"pos":"0"}"#)).starts_with("in.head:"));
    assert!(
        bad(&req(
            "rope",
            r#"{"head":["3f800000","3f800000"],"inv_freq":[],"pos":"0"}"#
        ))
        .starts_with("in.inv_freq:")
    );
    assert!(bad(&req("softmax", r#"{"scores":[]}"#)).starts_with("in.scores:"));
    assert!(bad(&req("inv_freq", r#"{"head_dim":"3","theta":"47c35000"}"#)).starts_with("in.head_dim:"));
    assert!(bad(&req("ldexp_exact", r#"{"k":"01","x":"3f800000"}"#)).starts_with("in.k:"));
    assert!(bad(&req("nope", "{}")).starts_with("fn:"));
    assert!(bad(r#"{"fn":"rsqrt","in":{"x":"42800000"}}"#).starts_with("id: missing"));
    assert!(bad(r#"{"fn":"rsqrt","id":"x","in":{"x":"42800000"},"extra":"1"}"#).starts_with("extra:"));
    assert!(bad(r#"{"fn":"rsqrt","id":"x","in":{"x":42}}"#).starts_with("in.x:"));
}

// ---------------------------------------------------------------------------------------------
// A small model, written here.

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("wai-checker-cis2-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn write_model(dir: &Path, s: &Spec, seed: u64) {
    cis2_synth::write_model(dir, s, seed).unwrap();
}

fn config(s: &Spec) -> Value {
    s.config()
}

#[test]
fn tokenizer_worked_example_and_added_tokens() {
    let t = tokenizer::load(&serde_json::to_vec(&tokenizer_json()).unwrap()).unwrap();
    // §3.1.7's segmentation: "Once", "Ġupon", "Ġa", "Ġtime", one token each.
    let ids = t.encode("Once upon a time").unwrap();
    let v = &tokenizer_json()["model"]["vocab"];
    let want: Vec<u32> = ["Once", "Ġupon", "Ġa", "Ġtime"]
        .iter()
        .map(|w| v[*w].as_u64().unwrap() as u32)
        .collect();
    assert_eq!(ids, want);
    // Digits are isolated; bytes map through §3.1.5.a (byte b is id b + 1 here).
    assert_eq!(t.encode("12").unwrap(), vec![u32::from(b'1') + 1, u32::from(b'2') + 1]);
    // C5: an added token's content in the prompt is that token.
    let ids = t.encode("Once<|endoftext|> a").unwrap();
    assert_eq!(ids, vec![want[0], 0, want[2]]);
    assert_eq!(t.encode("").unwrap(), Vec::<u32>::new());
}

#[test]
fn tokenizers_read_one_after_another_leave_nothing_behind() {
    // The library's BPE cached each word per thread and model and kept a dropped model's words
    // (found by fuzzing, docs/fuzzing.md): 5,000 tokenizers read and used on this thread grew it
    // by about 12 MB. Read without the cache, the resident set stays put.
    let rss = || {
        let status = std::fs::read_to_string("/proc/self/status").unwrap();
        let kb: u64 = status
            .lines()
            .find(|l| l.starts_with("VmRSS:"))
            .unwrap()
            .split_whitespace()
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        kb << 10
    };
    let file = serde_json::to_vec(&tokenizer_json()).unwrap();
    let encode = || {
        tokenizer::load(&file)
            .unwrap()
            .encode("Once upon a time, 12 words")
            .unwrap()
    };
    let want = encode();
    let before = rss();
    for _ in 0..5_000 {
        assert_eq!(encode(), want);
    }
    let grew = rss().saturating_sub(before);
    assert!(grew < 4 << 20, "grew by {grew} bytes");
}

#[test]
fn tokenizer_outside_c6_is_refused() {
    let mutate = |f: &dyn Fn(&mut Value)| {
        let mut j = tokenizer_json();
        f(&mut j);
        tokenizer::load(&serde_json::to_vec(&j).unwrap()).err()
    };
    assert!(mutate(&|_| {}).is_none());
    assert!(mutate(&|j| j["normalizer"] = json!({"type": "NFC"})).is_some());
    assert!(mutate(&|j| j["pre_tokenizer"]["pretokenizers"][1]["add_prefix_space"] = json!(true)).is_some());
    assert!(mutate(&|j| j["model"]["byte_fallback"] = json!(true)).is_some());
    assert!(mutate(&|j| j["model"]["unk_token"] = json!("<unk>")).is_some());
    // C6: a byte character missing from vocab is no longer refused (§3.1.5.b drops it)...
    assert!(
        mutate(&|j| {
            let v = j["model"]["vocab"].as_object_mut().unwrap();
            v.remove("~");
            v.remove("Ā");
        })
        .is_none()
    );
    // ...but one a merge names is (Ġ is the first part of "Ġ u").
    assert!(
        mutate(&|j| {
            j["model"]["vocab"].as_object_mut().unwrap().remove("Ġ");
        })
        .is_some()
    );
    assert!(mutate(&|j| j["model"]["merges"].as_array_mut().unwrap().push(json!("x y"))).is_some());
    // A merge's concatenation must be in vocab too.
    assert!(
        mutate(&|j| {
            j["model"]["vocab"].as_object_mut().unwrap().remove("On");
        })
        .is_some()
    );
    assert!(mutate(&|j| j["model"]["ignore_merges"] = json!(true)).is_some());
    assert!(mutate(&|j| j["pre_tokenizer"]["pretokenizers"][0]["individual_digits"] = json!(false)).is_some());
    assert!(mutate(&|j| j["post_processor"] = json!({"type": "ByteLevel"})).is_some());
    // Pairs are accepted as well as "a b" strings.
    assert!(mutate(&|j| j["model"]["merges"][0] = json!(["O", "n"])).is_none());
    // C6: members the encoding never reads are not validated beyond the file being JSON.
    assert!(mutate(&|j| j["decoder"] = json!({"type": "ByteLevel"})).is_none());
    assert!(mutate(&|j| j["decoder"] = json!({"type": "NoSuchDecoder", "x": [1]})).is_none());
    assert!(mutate(&|j| j["version"] = json!("9.9")).is_none());
    assert!(mutate(&|j| j["truncation"] = json!("anything")).is_none());
    assert!(mutate(&|j| j["padding"] = json!(17)).is_none());
    assert!(mutate(&|j| j["something_else"] = json!({"a": null})).is_none());
    for k in [
        "version",
        "truncation",
        "padding",
        "decoder",
        "normalizer",
        "post_processor",
    ] {
        assert!(
            mutate(&|j| {
                j.as_object_mut().unwrap().remove(k);
            })
            .is_none(),
            "{k} absent"
        );
    }
    // C6: added_tokens absent is none.
    assert!(
        mutate(&|j| {
            j.as_object_mut().unwrap().remove("added_tokens");
        })
        .is_none()
    );
    assert!(mutate(&|j| j["added_tokens"] = json!({})).is_some());
    // C6's added tokens: a nonempty content, the four flags false or absent.
    assert!(mutate(&|j| j["added_tokens"][0]["lstrip"] = json!(true)).is_some());
    assert!(mutate(&|j| j["added_tokens"][0]["normalized"] = json!(true)).is_some());
    assert!(mutate(&|j| j["added_tokens"][0]["content"] = json!("")).is_some());
    assert!(
        mutate(&|j| {
            j["added_tokens"][0].as_object_mut().unwrap().remove("single_word");
        })
        .is_none()
    );
}

/// C6's example of a tokenizer whose `vocab` lacks most byte characters: `a`…`m`, `ab`, `bc` and
/// `abc`, with the merges `a b`, `b c`, `ab c`. Its `decoder` is written as `cis2-verify`'s fixture
/// writes it, `{"type": "ByteLevel"}` alone, and it has no `added_tokens`, `version`, `truncation`
/// or `padding` member.
fn sparse_tokenizer_json() -> Value {
    let mut vocab = serde_json::Map::new();
    for (i, c) in ('a'..='m').enumerate() {
        vocab.insert(c.to_string(), json!(i));
    }
    for (i, t) in ["ab", "bc", "abc"].iter().enumerate() {
        vocab.insert((*t).to_string(), json!(13 + i));
    }
    json!({
        "normalizer": null,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Digits", "individual_digits": true},
            {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true}]},
        "post_processor": null,
        "decoder": {"type": "ByteLevel"},
        "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null,
                  "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false,
                  "ignore_merges": false, "vocab": vocab, "merges": ["a b", "b c", "ab c"]}
    })
}

/// The prompts both encodings are compared on: missing characters between mergeable ones, prompts
/// of missing characters alone, digits, whitespace, non-ASCII.
const SPARSE_PROMPTS: &[&str] = &[
    "abcd",
    "aXbc",
    "abXc",
    "aXXb",
    "a b c",
    "xyz",
    "",
    "0123456789",
    "a1b2c3",
    "é",
    "aébc",
    "日本語 abc",
    "cab\nbca\t\tabc  ",
    "ab's abc's",
    "mmm lkj ABC",
    "a\u{0}b",
];

#[test]
fn a_byte_character_missing_from_vocab_is_dropped_as_the_library_drops_it() {
    // C6: the file is accepted; a character with no vocab entry is dropped at §3.1.5.b.
    let file = sparse_tokenizer_json();
    let ours = tokenizer::load(&serde_json::to_vec(&file).unwrap()).unwrap();
    // The library (tokenizers 0.23.1) refuses the file as written: its decoder `{"type":
    // "ByteLevel"}` lacks add_prefix_space and trim_offsets, a member the encoding never reads (C6).
    // So the decoder is completed here, with add_prefix_space, trim_offsets and use_regex set, for
    // the library to load the file at all; nothing else is changed.
    assert!(
        serde_json::to_string(&file)
            .unwrap()
            .parse::<tokenizers::Tokenizer>()
            .is_err()
    );
    let mut completed = file.clone();
    completed["decoder"] =
        json!({"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true});
    let lib: tokenizers::Tokenizer = serde_json::to_string(&completed).unwrap().parse().unwrap();
    for p in SPARSE_PROMPTS {
        let want = lib.encode(*p, false).unwrap().get_ids().to_vec();
        assert_eq!(ours.encode(p).unwrap(), want, "{p:?}");
    }
    // By hand: `a`, `b`, `c`, `d` are 0–3, `ab` 13, `bc` 14, `abc` 15.
    let enc = |p: &str| ours.encode(p).unwrap();
    assert_eq!(enc("abcd"), vec![15, 3]);
    // X is dropped and its neighbours merge: `a b` → `ab`, then `ab c` → `abc`.
    assert_eq!(enc("aXbc"), vec![15]);
    assert_eq!(enc("abXc"), vec![15]);
    assert_eq!(enc("aXXb"), vec![13]);
    // The spaces' character Ġ is missing: each word keeps its letter alone.
    assert_eq!(enc("a b c"), vec![0, 1, 2]);
    for none in ["xyz", "", "0123456789", "é", "日本語"] {
        assert_eq!(enc(none), Vec::<u32>::new(), "{none:?}");
    }
}

#[test]
fn a_prompt_whose_characters_are_all_dropped_is_refused() {
    use wai_checker::cis2::artifact::Refusal;
    let tree = scratch("sparse");
    let m = tree.join("m");
    std::fs::create_dir_all(&m).unwrap();
    write_model(&m, &Spec::small(), 13);
    std::fs::write(
        m.join("tokenizer.json"),
        serde_json::to_vec(&sparse_tokenizer_json()).unwrap(),
    )
    .unwrap();
    // The tokenizer is accepted; a prompt with dropped characters between mergeable ones decodes.
    let e = &fill_decode(&tree, &decode_line("mixed", "m", "aXbc d", 2))["expect"];
    assert_eq!(e["prompt_ids"], json!(["15", "3"]));
    assert_eq!(e["generated_ids"].as_array().unwrap().len(), 2);
    // A prompt all of whose characters are dropped has no token: config_unsupported (C6, C7).
    for (id, prompt) in [("none", "xyz"), ("none-utf8", "é 9"), ("empty", "")] {
        let v = fill_decode(&tree, &decode_line(id, "m", prompt, 2));
        assert_eq!(v["expect"], json!({"refuse": "config_unsupported"}), "{prompt:?}");
    }
    // The same on the decode path directly, with the refusal's code.
    let art = decode::open(Files::read(&m).unwrap()).unwrap();
    let r = decode::prompt_ids(&art, "xyz", 2).unwrap_err();
    assert!(matches!(r, Refusal::ConfigUnsupported(_)), "{r:?}");
    assert_eq!(r.code(), "config_unsupported");
    assert_eq!(decode::prompt_ids(&art, "abXc", 2).unwrap(), vec![15]);
    std::fs::remove_dir_all(&tree).unwrap();
}

#[test]
fn the_position_check_alone() {
    use decode::{MAX_EXACT_POSITION, check_positions};
    let ok = |p: usize, g: u128, max: Option<u64>| check_positions(p, g, max).is_ok();
    let refused = |p: usize, g: u128, max: Option<u64>| {
        check_positions(p, g, max).is_err_and(|r| r.code() == "config_unsupported")
    };
    // §7.3: every integer up to 2^24 is exact in f32, 2^24 + 1 is not.
    let e = 1u128 << 24;
    assert_eq!(MAX_EXACT_POSITION, e);
    assert_eq!(e as f32 as u128, e);
    assert_ne!((e + 1) as f32 as u128, e + 1);
    // No max_position_embeddings: the last position P + gen_toks − 1 may be 2^24 exactly.
    assert!(ok(4, e - 3, None));
    assert!(refused(4, e - 2, None));
    assert!(ok(1, e, None));
    assert!(refused(1, e + 1, None));
    assert!(ok(e as usize + 1, 0, None));
    assert!(refused(e as usize + 2, 0, None));
    // max_position_embeddings bounds the last position at max − 1; 2^24 bounds it still.
    assert!(ok(4, 60, Some(64)));
    assert!(refused(4, 61, Some(64)));
    assert!(ok(1, 0, Some(1)));
    assert!(refused(1, 1, Some(1)));
    assert!(ok(4, e - 3, Some(u64::MAX)));
    assert!(refused(4, e - 2, Some(u64::MAX)));
    // No token; counts past every machine word, without overflow.
    assert!(refused(0, 0, None));
    assert!(refused(0, 0, Some(64)));
    assert!(refused(4, 1 << 64, None));
    assert!(refused(4, u128::MAX, None));
    assert!(refused(usize::MAX, u128::MAX, Some(u64::MAX)));
}

#[test]
fn max_position_embeddings_is_optional() {
    let tree = scratch("maxpos");
    let p = "Once upon a time"; // 4 tokens
    let model = |name: &str, f: &dyn Fn(&mut Value)| {
        let m = tree.join(name);
        std::fs::create_dir_all(&m).unwrap();
        write_model(&m, &Spec::small(), 17);
        let mut c = config(&Spec::small());
        f(&mut c);
        std::fs::write(m.join("config.json"), serde_json::to_vec(&c).unwrap()).unwrap();
    };
    let expect = |name: &str, steps: &str| -> Value {
        let line = format!(
            r#"{{"gen_toks":"{steps}","id":"{name}","model":"{name}","prompt":"{}"}}"#,
            hex::encode(p)
        );
        fill_decode(&tree, &line)["expect"].clone()
    };
    let refused = json!({"refuse": "config_unsupported"});
    model("none", &|c| {
        c.as_object_mut().unwrap().remove("max_position_embeddings");
    });
    model("with", &|_| {}); // 64
    model("huge", &|c| c["max_position_embeddings"] = json!(1u64 << 40));
    // Accepted without the field, and no default bound: 4 + 70 positions, past the 64 of "with".
    let e = expect("none", "70");
    assert_eq!(e["generated_ids"].as_array().unwrap().len(), 70, "{e}");
    assert_eq!(expect("with", "70"), refused);
    // The last position past 2^24 (3 + 2^24 here), with or without the field.
    let past = (1u64 << 24).to_string();
    assert_eq!(expect("none", &past), refused);
    assert_eq!(expect("huge", &past), refused);
    // gen_toks of 2^64, 2^127 − 1, 2^127 and far more: refused, not a line error.
    for steps in [
        "18446744073709551616",
        "170141183460469231731687303715884105727",
        "170141183460469231731687303715884105728",
        "1000000000000000000000000000000000000000000000000000",
    ] {
        for name in ["none", "with", "huge"] {
            assert_eq!(expect(name, steps), refused, "{name} {steps}");
        }
    }
    // When present, still an integer of at least 1.
    for (name, bad) in [
        ("zero", json!(0)),
        ("frac", json!(64.5)),
        ("text", json!("64")),
        ("null", json!(null)),
    ] {
        model(name, &|c| c["max_position_embeddings"] = bad.clone());
        assert_eq!(expect(name, "1"), refused, "{name}");
    }
    // A negative count is a line error, as before.
    let line = format!(
        r#"{{"gen_toks":"-1","id":"n","model":"none","prompt":"{}"}}"#,
        hex::encode(p)
    );
    assert!(bad_in(Some(&tree), &line).starts_with("gen_toks:"));
    std::fs::remove_dir_all(&tree).unwrap();
}

fn decode_line(id: &str, model: &str, prompt: &str, steps: u64) -> String {
    let prompt = hex::encode(prompt);
    format!(r#"{{"gen_toks":"{steps}","id":"{id}","model":"{model}","prompt":"{prompt}"}}"#)
}

fn fill_in(tree: Option<&Path>, line: &str) -> Result<String, LineError> {
    wai_checker::cis2::fill::fill_line_in(&serde_json::from_str(line).unwrap(), tree)
}

fn fill_decode(tree: &Path, line: &str) -> Value {
    match fill_in(Some(tree), line) {
        Ok(out) => serde_json::from_str(&out).unwrap(),
        Err(LineError::Bad(m) | LineError::Bug(m)) => panic!("{line}: {m}"),
    }
}

fn bad_in(tree: Option<&Path>, line: &str) -> String {
    match fill_in(tree, line) {
        Err(LineError::Bad(m)) => m,
        Err(LineError::Bug(m)) => panic!("{line}: a bug, not a request error: {m}"),
        Ok(s) => panic!("{line}: filled as {s}"),
    }
}

#[test]
fn a_small_decode_end_to_end() {
    let tree = scratch("e2e");
    let m = tree.join("models/small");
    std::fs::create_dir_all(&m).unwrap();
    write_model(&m, &Spec::small(), 7);
    let line = decode_line("small-1", "models/small", "Once upon a time", 6);
    let a = fill_decode(&tree, &line);
    let b = fill_decode(&tree, &line);
    assert_eq!(a, b);
    let e = &a["expect"];
    assert_eq!(e["generated_ids"].as_array().unwrap().len(), 6);
    assert_eq!(e["prompt_ids"].as_array().unwrap().len(), 4);
    assert_eq!(
        e["table_digest"],
        "23c7bfaf5cef0095fd021af2eb1808abb4928bae4219756d86bdac670a06b35d"
    );
    let files = Files::read(&m).unwrap();
    assert_eq!(e["weights_sha256"], hex::encode(files.hashes().weights));
    // The echo is canonical and the line round-trips.
    let out = fill_in(Some(&tree), &line).ok().unwrap();
    assert_eq!(fill_in(Some(&tree), &out).ok().unwrap(), out);
    // The receipt: two runs agree (§12.4) and give the fill's digests.
    let r = vector::receipt(&m, "Once upon a time", 6, vector::Tininess::After, false).unwrap();
    assert!(
        r.starts_with(&format!(
            "CIS2_REF digest={} prompt_idx=0 prompt_toks=4 gen_toks=6 dtype=fp32\n",
            e["witness_digest"].as_str().unwrap()
        )),
        "{r}"
    );
    assert!(r.contains(&format!("argmax_digest={}\n", e["argmax_digest"].as_str().unwrap())));
    // The pinned hashes are checked: this model is not the pinned one.
    let err = vector::receipt(&m, "Once upon a time", 6, vector::Tininess::After, true).unwrap_err();
    assert!(
        err.contains("model.safetensors: sha256 ") && err.contains("80521b40281d6ce7"),
        "{err}"
    );
    // A multi-threaded matvec gives the single-threaded bits: decode directly too.
    let art = decode::open(files).unwrap();
    let ids = decode::prompt_ids(&art, "Once upon a time", 6).unwrap();
    let _p = env::pin().unwrap();
    let rc = decode::decode::<After>(&art, &ids, 6).unwrap();
    assert_eq!(hex::encode(rc.witness), e["witness_digest"].as_str().unwrap());
    std::fs::remove_dir_all(&tree).unwrap();
}

#[test]
fn untied_head_and_biases_and_gen_zero() {
    let tree = scratch("untied");
    let m = tree.join("m");
    std::fs::create_dir_all(&m).unwrap();
    let spec = Spec {
        tie: false,
        bias: true,
        kv_heads: 2,
        ..Spec::small()
    };
    write_model(&m, &spec, 11);
    let e = &fill_decode(&tree, &decode_line("u", "m", "Once<|endoftext|> upon", 3))["expect"];
    assert_eq!(e["prompt_ids"][1], "0");
    assert_eq!(e["generated_ids"].as_array().unwrap().len(), 3);
    let z = &fill_decode(&tree, &decode_line("z", "m", "a", 0))["expect"];
    assert_eq!(z["generated_ids"], json!([]));
    std::fs::remove_dir_all(&tree).unwrap();
}

#[test]
fn refusals_in_order() {
    let tree = scratch("refuse");
    let code = |name: &str, prompt: &str, steps: u64, f: &dyn Fn(&Path)| -> String {
        let m = tree.join(name);
        std::fs::create_dir_all(&m).unwrap();
        write_model(&m, &Spec::small(), 3);
        f(&m);
        let v = fill_decode(&tree, &decode_line(name, name, prompt, steps));
        v["expect"]["refuse"].as_str().unwrap_or("none").to_string()
    };
    let p = "Once upon a time";
    assert_eq!(code("ok", p, 2, &|_| {}), "none");
    let write_cfg = |m: &Path, f: &dyn Fn(&mut Value)| {
        let mut c = config(&Spec::small());
        f(&mut c);
        std::fs::write(m.join("config.json"), serde_json::to_vec(&c).unwrap()).unwrap();
    };
    // Formats first: a truncated header wins over a bad config value.
    assert_eq!(
        code("hdr", p, 2, &|m| {
            let mut b = std::fs::read(m.join("model.safetensors")).unwrap();
            b[0..8].copy_from_slice(&(1u64 << 40).to_le_bytes());
            std::fs::write(m.join("model.safetensors"), b).unwrap();
            write_cfg(m, &|c| c["hidden_act"] = json!("gelu"));
        }),
        "artifact_malformed"
    );
    assert_eq!(
        code("json", p, 2, &|m| std::fs::write(m.join("config.json"), b"{\"a\":")
            .unwrap()),
        "artifact_malformed"
    );
    assert_eq!(
        code("tok", p, 2, &|m| {
            let mut t = tokenizer_json();
            t["post_processor"] = json!({"type": "ByteLevel"});
            std::fs::write(m.join("tokenizer.json"), serde_json::to_vec(&t).unwrap()).unwrap();
            write_cfg(m, &|c| c["hidden_act"] = json!("gelu"));
        }),
        "artifact_malformed"
    );
    // Then the config's values, before the tensors.
    assert_eq!(
        code("act", p, 2, &|m| write_cfg(m, &|c| {
            c["hidden_act"] = json!("gelu");
            c["hidden_size"] = json!(16);
        })),
        "config_unsupported"
    );
    assert_eq!(
        code("tie", p, 2, &|m| write_cfg(m, &|c| {
            c.as_object_mut().unwrap().remove("tie_word_embeddings");
        })),
        "config_unsupported"
    );
    assert_eq!(
        code("inter", p, 2, &|m| write_cfg(m, &|c| c["rope_interleaved"] =
            json!(true))),
        "config_unsupported"
    );
    assert_eq!(
        code("odd", p, 2, &|m| write_cfg(m, &|c| {
            c["num_attention_heads"] = json!(8);
            c["num_key_value_heads"] = json!(8);
        })),
        "config_unsupported"
    );
    // Then the tensors.
    assert_eq!(
        code("shape", p, 2, &|m| write_cfg(m, &|c| c["intermediate_size"] =
            json!(13))),
        "tensor_mismatch"
    );
    assert_eq!(
        code("untied", p, 2, &|m| write_cfg(m, &|c| c["tie_word_embeddings"] =
            json!(false))),
        "tensor_mismatch"
    );
    // Then the prompt: no token, or positions past max_position_embeddings (C7: the last position,
    // 4 + 60 − 1, is below 64).
    assert_eq!(code("empty", "", 2, &|_| {}), "config_unsupported");
    assert_eq!(code("fits", p, 60, &|_| {}), "none");
    assert_eq!(code("long", p, 61, &|_| {}), "config_unsupported");
    // A missing file is a line error; without --tree the model path is relative to the working
    // directory (the crate's, here, which has no folder "ok").
    assert!(bad_in(Some(&tree), &decode_line("x", "nowhere", p, 1)).starts_with("model: cannot read"));
    assert!(bad_in(None, &decode_line("x", "ok", p, 1)).starts_with("model: cannot read"));
    // Through the shared fill, with no tree set.
    assert!(bad(&decode_line("x", "ok", p, 1)).starts_with("model: cannot read"));
    std::fs::remove_dir_all(&tree).unwrap();
}

#[test]
fn config_numbers_are_read_from_their_text() {
    use wai_checker::cis2::artifact;
    let text = br#"{"a": {"rms_norm_eps": 3}, "rms_norm_eps": 1e-05, "rope_theta": 100000, "x": [1, 2.5]}"#;
    let t = artifact::top_level_number_texts(std::str::from_utf8(text).unwrap());
    assert_eq!(t["rms_norm_eps"], "1e-05");
    assert_eq!(t["rope_theta"], "100000");
    assert!(!t.contains_key("x"));
}

/// A `[rows, cols]` bf16 matrix of seeded values (a few subnormal and zero ones among them), row
/// major, and its rows widened.
fn bf16_matrix(rng: &mut cis2_synth::Lcg, rows: usize, cols: usize) -> (Vec<u8>, Vec<Vec<f32>>) {
    let bits: Vec<u16> = (0..rows * cols)
        .map(|k| match k % 97 {
            3 => 0x0001 | (rng.next_u32() as u16 & 0x807f), // subnormal
            5 => 0x8000,
            _ => rng.bf16(2.0),
        })
        .collect();
    let bytes = bits.iter().flat_map(|b| b.to_le_bytes()).collect();
    let rows_f = bits
        .chunks(cols)
        .map(|r| r.iter().map(|&b| f32::from_bits(u32::from(b) << 16)).collect())
        .collect();
    (bytes, rows_f)
}

#[test]
fn threaded_matvec_keeps_each_rows_order() {
    let _p = env::pin().unwrap();
    let mut rng = cis2_synth::Lcg(5);
    // Above the parallel threshold, 37 blocks of eight rows and 5 rows after them.
    let (rows, cols) = (301, 257);
    let (mut bytes, w) = bf16_matrix(&mut rng, rows, cols);
    bf16::regroup(&mut bytes, rows, cols);
    let m = bf16::Mat::new(&bytes, rows, cols);
    // One position, and several (tiles of four and the rest) sharing each weight row's stream.
    for p in [1, 2, 3, 4, 5, 14] {
        let xs: Vec<Vec<f32>> = (0..p)
            .map(|_| {
                (0..cols)
                    .map(|_| f32::from_bits(u32::from(rng.bf16(3.0)) << 16))
                    .collect()
            })
            .collect();
        let y = reduce::matmul::<After>(m, &xs).unwrap();
        let yb = reduce::matmul::<Before>(m, &xs).unwrap();
        for (q, x) in xs.iter().enumerate() {
            for (o, row) in w.iter().enumerate() {
                assert_eq!(
                    y[q][o].to_bits(),
                    reduce::dot_seq::<After>(row, x).to_bits(),
                    "{p}: ({q}, {o})"
                );
                assert_eq!(
                    yb[q][o].to_bits(),
                    reduce::dot_seq::<Before>(row, x).to_bits(),
                    "{p}: ({q}, {o})"
                );
            }
        }
        if p == 1 {
            assert_eq!(reduce::matvec::<After>(m, &xs[0]).unwrap(), y[0]);
        }
    }
}

/// The prompt's positions run together or one at a time: the same receipt, under both rules, on
/// models whose matrices have rows after their last block of eight (and none).
#[test]
fn prefill_batches_give_one_receipt() {
    let tree = scratch("batches");
    let specs = [
        Spec::small(),
        Spec {
            tie: false,
            bias: true,
            kv_heads: 2,
            ..Spec::small()
        },
        Spec {
            hidden: 16,
            inter: 24,
            heads: 4,
            kv_heads: 2,
            ..Spec::small()
        },
    ];
    let _p = env::pin().unwrap();
    for (n, spec) in specs.iter().enumerate() {
        let m = tree.join(format!("m{n}"));
        std::fs::create_dir_all(&m).unwrap();
        write_model(&m, spec, 40 + n as u64);
        let art = decode::open(Files::read(&m).unwrap()).unwrap();
        let ids = decode::prompt_ids(&art, "Once upon a time, once upon a time", 5).unwrap();
        assert!(ids.len() > 9, "{ids:?}");
        for steps in [0, 1, 5] {
            let one = decode::decode_batched::<After>(&art, &ids, steps, 1).unwrap();
            let one_b = decode::decode_batched::<Before>(&art, &ids, steps, 1).unwrap();
            for batch in [2, 3, 4, 5, 64] {
                assert_eq!(decode::decode_batched::<After>(&art, &ids, steps, batch).unwrap(), one);
                assert_eq!(
                    decode::decode_batched::<Before>(&art, &ids, steps, batch).unwrap(),
                    one_b
                );
            }
            assert_eq!(decode::decode::<After>(&art, &ids, steps).unwrap(), one);
            assert_eq!(one.generated.len(), steps);
        }
    }
    std::fs::remove_dir_all(&tree).unwrap();
}

/// C9 does not forbid two tensors' bytes to overlap: every tensor here starts at the data's first
/// byte. Each matrix is regrouped once, from its own bytes: the decode is the one of a model whose
/// tensors hold the same bytes apart.
#[test]
fn tensors_sharing_bytes() {
    let tree = scratch("shared-bytes");
    let spec = Spec::small();
    let list = spec.tensors();
    let blob = cis2_synth::safetensors(&list, 3);
    let size = |shape: &[u64]| 2 * shape.iter().product::<u64>() as usize;
    let longest = list.iter().map(|(_, s)| size(s)).max().unwrap();
    let n = u64::from_le_bytes(blob[..8].try_into().unwrap()) as usize;
    let data = &blob[8 + n..8 + n + longest];
    let write = |dir: &Path, shared: bool| {
        let mut header = serde_json::Map::new();
        let mut body = Vec::new();
        for (name, shape) in &list {
            let (b, e) = if shared {
                (0, size(shape))
            } else {
                body.extend_from_slice(&data[..size(shape)]);
                (body.len() - size(shape), body.len())
            };
            header.insert(
                name.clone(),
                json!({"dtype": "BF16", "shape": shape, "data_offsets": [b, e]}),
            );
        }
        if shared {
            body = data.to_vec();
        }
        let h = serde_json::to_vec(&Value::Object(header)).unwrap();
        let mut file = (h.len() as u64).to_le_bytes().to_vec();
        file.extend_from_slice(&h);
        file.extend_from_slice(&body);
        std::fs::create_dir_all(dir).unwrap();
        write_model(dir, &spec, 3);
        std::fs::write(dir.join("model.safetensors"), file).unwrap();
    };
    let (shared, apart) = (tree.join("shared"), tree.join("apart"));
    write(&shared, true);
    write(&apart, false);
    let _p = env::pin().unwrap();
    let run = |dir: &Path| {
        let art = decode::open(Files::read(dir).unwrap()).unwrap();
        let ids = decode::prompt_ids(&art, "Once upon a time", 6).unwrap();
        let mut r = decode::decode::<After>(&art, &ids, 6).unwrap();
        r.witness = [0; 32]; // binds the weights file's hash
        r
    };
    assert_eq!(run(&shared), run(&apart));
    std::fs::remove_dir_all(&tree).unwrap();
}

/// Both rules against a model of them computed apart from the hardware's flush: the exact product
/// (binary64), rounded to 24 bits with an unbounded exponent by scaling into the normal range.
#[test]
fn tininess_rules_against_an_exact_model() {
    let _p = env::pin().unwrap();
    let mut rng = cis2_synth::Lcg(99);
    let two = |e: i32| 2f64.powi(e);
    let mut parted = 0;
    for n in 0..200_000u32 {
        // Significands at random; exponents so that the product is near 2^-126.
        let ea = (rng.next_u32() % 60) as i32 - 90; // -90..-31
        let eb = -126 - ea + (rng.next_u32() % 3) as i32 - 1;
        let ma = 1.0 + f64::from(rng.next_u32() % (1 << 23)) / two(23);
        let mut mb = 1.0 + f64::from(rng.next_u32() % (1 << 23)) / two(23);
        if n % 4 == 0 {
            // Aim at the window: mb ≈ 1/ma, then nudged by a few ulps.
            mb = (2.0 / ma * two(23)).round() / two(23) - f64::from(rng.next_u32() % 4) / two(23);
            mb = mb.clamp(1.0, 2.0 - two(-23));
        }
        let sa = if rng.next_u32().is_multiple_of(2) { 1.0 } else { -1.0 };
        let a = (sa * ma * two(ea)) as f32;
        let b = (mb * two(eb)) as f32;
        let p = f64::from(a) * f64::from(b); // exact
        let rounded = ((p * two(200)) as f32 as f64) * two(-200); // 24 bits, unbounded exponent
        let flush = |tiny: bool, v: f64| if tiny { 0.0f32.copysign(p as f32) } else { v as f32 };
        let after = flush(rounded.abs() < two(-126), rounded);
        let before = flush(p.abs() < two(-126), rounded);
        assert_eq!(After::mul(a, b).to_bits(), after.to_bits(), "{a:e} × {b:e}");
        assert_eq!(Before::mul(a, b).to_bits(), before.to_bits(), "{a:e} × {b:e}");
        if after.to_bits() != before.to_bits() {
            parted += 1;
        }
        // Narrowing the exact product: the same two rules.
        assert_eq!(After::narrow(p).to_bits(), after.to_bits());
        assert_eq!(Before::narrow(p).to_bits(), before.to_bits());
    }
    assert!(parted > 100, "the window was hit {parted} times");
}

/// §1.4: no fused multiply-add in this test binary (which holds every CIS-2 function), checked
/// with objdump where it is installed.
#[test]
fn no_fused_multiply_add_instructions() {
    let exe = std::env::current_exe().unwrap();
    let Ok(out) = std::process::Command::new("objdump").arg("-d").arg(&exe).output() else {
        eprintln!("objdump not found: the §1.4 disassembly check is skipped");
        return;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let fused: &[&str] = if cfg!(target_arch = "aarch64") {
        &["\tfmadd", "\tfmsub", "\tfnmadd", "\tfnmsub", "\tfmla", "\tfmls"]
    } else {
        &["\tvfmadd", "\tvfmsub", "\tvfnmadd", "\tvfnmsub"]
    };
    let hits: Vec<&str> = text
        .lines()
        .filter(|l| fused.iter().any(|f| l.contains(f)))
        .take(5)
        .collect();
    assert!(hits.is_empty(), "fused multiply-add instructions: {hits:?}");
}

/// The receipt's lines (docs/protocol.md, docs/assumptions.md C11) on cis2-verify's fixture in the
/// tree, against the committed record of the same run (whose values the generator holds equal to
/// the peer's published goldens).
#[test]
fn the_receipt_of_the_peers_fixture_names_its_prompt() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ops-conformance/cis2");
    let record: Value = std::fs::read_to_string(root.join("decode.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|r| r["id"] == "peer-tiny-abcd")
        .expect("the peer's record");
    let e = &record["expect"];
    let r = vector::receipt(
        &root.join("models/peer-tiny"),
        "abcd",
        6,
        vector::Tininess::After,
        false,
    )
    .unwrap();
    let lines: Vec<&str> = r.lines().collect();
    let ids = |k: &str| {
        let v: Vec<&str> = e[k].as_array().unwrap().iter().map(|x| x.as_str().unwrap()).collect();
        format!("[{}]", v.join(", "))
    };
    assert_eq!(
        lines,
        [
            format!(
                "CIS2_REF digest={} prompt_idx=custom prompt_toks=2 gen_toks=6 dtype=fp32",
                e["witness_digest"].as_str().unwrap()
            ),
            "prompt_hex=61626364".to_string(),
            format!("argmax_digest={}", e["argmax_digest"].as_str().unwrap()),
            format!("table_digest={}", e["table_digest"].as_str().unwrap()),
            format!("inv_freq_table_digest={}", e["inv_freq_table_digest"].as_str().unwrap()),
            format!("weights_sha256={}", e["weights_sha256"].as_str().unwrap()),
            format!("config_sha256={}", e["config_sha256"].as_str().unwrap()),
            format!("tokenizer_sha256={}", e["tokenizer_sha256"].as_str().unwrap()),
            format!("prompt_token_ids={}", ids("prompt_ids")),
            format!("generated_token_ids={}", ids("generated_ids")),
        ]
    );
}
