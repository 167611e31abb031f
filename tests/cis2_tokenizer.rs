//! The oracle's §3.1 tokenizer against the reference library (`tokenizers` 0.23.1, §3.1.2's
//! normative fallback) on the suite's tokenizers: every prompt of `cis2/decode.jsonl` and
//! 10,000 seeded random strings each.

use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::Path;
use wai_oracle::cis2::tokenizer::Tokenizer;

const TREE: &str = "ops-conformance/cis2";

/// The suite's tokenizer files that the oracle accepts.
fn tokenizers() -> Vec<(String, Tokenizer, tokenizers::Tokenizer)> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let mut dirs: Vec<_> = std::fs::read_dir(Path::new(TREE).join("models"))
        .expect("the committed models")
        .collect();
    dirs.sort_by_key(|e| e.as_ref().map(|e| e.path()).ok());
    for e in dirs {
        let path = e.unwrap().path().join("tokenizer.json");
        let bytes = std::fs::read(&path).unwrap();
        if !seen.insert(bytes.clone()) {
            continue; // the same file under another model
        }
        if let Ok(ours) = Tokenizer::parse(&bytes) {
            out.push((path.display().to_string(), ours, library(&bytes)));
        }
    }
    assert!(out.len() >= 2, "the suite has tokenizers of both merge forms");
    out
}

/// The reference library's tokenizer for `bytes`. The library refuses a ByteLevel `decoder`
/// without `add_prefix_space` and `trim_offsets` (cis2-verify's fixture writes one), a member the
/// encoding never reads (docs/assumptions.md C6), so such a decoder is completed first.
fn library(bytes: &[u8]) -> tokenizers::Tokenizer {
    let mut v: serde_json::Value = serde_json::from_slice(bytes).unwrap();
    if v["decoder"] == serde_json::json!({"type": "ByteLevel"}) {
        v["decoder"] =
            serde_json::json!({"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true});
    }
    tokenizers::Tokenizer::from_bytes(serde_json::to_vec(&v).unwrap()).expect("the reference library loads it")
}

fn agree(name: &str, ours: &Tokenizer, theirs: &tokenizers::Tokenizer, text: &str) {
    let want = theirs
        .encode(text, false)
        .expect("the reference library encodes")
        .get_ids()
        .to_vec();
    assert_eq!(ours.encode(text).unwrap(), want, "{name}: {text:?}");
}

#[test]
fn every_prompt_of_the_suite() {
    let prompts: Vec<String> = std::fs::read_to_string(Path::new(TREE).join("decode.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            String::from_utf8(hex::decode(v["prompt"].as_str().unwrap()).unwrap()).unwrap()
        })
        .collect();
    assert!(prompts.len() >= 10);
    for (name, ours, theirs) in tokenizers() {
        for p in &prompts {
            agree(&name, &ours, &theirs, p);
        }
    }
}

/// A random string: runs of ASCII words, digits, punctuation, whitespace of several kinds,
/// multi-byte characters, contractions and added tokens.
fn random_text(rng: &mut ChaCha8Rng) -> String {
    const PIECES: &[&str] = &[
        " ",
        "  ",
        "\t",
        "\n",
        "\r\n",
        "\u{a0}",
        "\u{3000}",
        "\u{2028}",
        "'s",
        "'t",
        "'re",
        "'ve",
        "'m",
        "'ll",
        "'d",
        "'S",
        "é",
        "ñ",
        "日本",
        "語",
        "😀",
        "🎉",
        "\u{301}",
        "ß",
        "Ω",
        "٣",
        "½",
        "Ⅻ",
        "—",
        "…",
        ".",
        ",",
        "!",
        "?",
        "\"",
        "(",
        ")",
        "<|endoftext|>",
        "<|im_start|>",
        "<|",
        "|>",
        "$",
        "%",
        "_",
        "-",
        "\u{0}",
        "\u{7f}",
        "\u{ad}",
    ];
    const WORDS: &[&str] = &[
        "the", "fox", "Once", "upon", "time", "red", "Hood", "village", "a", "I", "x",
    ];
    let n = rng.random_range(0..12);
    (0..n)
        .map(|_| match rng.random_range(0..4) {
            0 => PIECES[rng.random_range(0..PIECES.len())].to_string(),
            1 => WORDS[rng.random_range(0..WORDS.len())].to_string(),
            2 => rng.random_range(0..100_000).to_string(),
            _ => (0..rng.random_range(1..4))
                .map(|_| char::from_u32(rng.random_range(0x20..0x3000)).unwrap_or('?'))
                .collect(),
        })
        .collect()
}

#[test]
fn ten_thousand_random_strings() {
    let mut rng = ChaCha8Rng::seed_from_u64(0xC152);
    let texts: Vec<String> = (0..10_000).map(|_| random_text(&mut rng)).collect();
    for (name, ours, theirs) in tokenizers() {
        for t in &texts {
            agree(&name, &ours, &theirs, t);
        }
    }
}

/// C6: a `vocab` without the byte characters (cis2-verify's fixture: `a`–`m`, `ab`, `bc`, `abc`).
/// A missing character is dropped and its neighbours merge, as the library does; a prompt of
/// missing characters only has no id.
#[test]
fn characters_missing_from_the_vocabulary() {
    let bytes = std::fs::read(Path::new(TREE).join("models/peer-tiny/tokenizer.json")).unwrap();
    assert!(
        tokenizers::Tokenizer::from_bytes(&bytes).is_err(),
        "the library refuses the decoder as written"
    );
    let (ours, theirs) = (Tokenizer::parse(&bytes).unwrap(), library(&bytes));
    // `aXbc`: X dropped, then a·b (rank 0) and ab·c (rank 2) merge to abc, id 15; the space
    // (Ġ) before a and b is dropped; the digit 9 is a word of its own, dropped.
    assert_eq!(ours.encode("aXbc a b9c").unwrap(), [15, 0, 1, 2]);
    assert_eq!(ours.encode("XYZ 42!").unwrap(), Vec::<u32>::new());
    for text in [
        "aXbc a b9c",
        "XYZ 42!",
        "",
        "abcd",
        "a\u{e9}b",
        "b c a b c",
        "mama",
        "\u{1f600}abc\u{1f600}",
    ] {
        agree("peer-tiny", &ours, &theirs, text);
    }
}
