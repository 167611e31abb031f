//! `wai-checker admissible` (§8.4) on committed vectors' graphs: its output format
//! (docs/protocol.md) and the edges of docs/assumptions.md B8.

use std::process::Command;

/// The graph of the first vector of `ops-conformance/vectors/<op>.jsonl`, written to a file.
fn graph(dir: &std::path::Path, op: &str) -> std::path::PathBuf {
    let file = format!("{}/../ops-conformance/vectors/{op}.jsonl", env!("CARGO_MANIFEST_DIR"));
    let line = std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string();
    let v: serde_json::Value = serde_json::from_str(&line).unwrap();
    let path = dir.join(format!("{op}.whg1"));
    std::fs::write(&path, hex::decode(v["graph"].as_str().unwrap()).unwrap()).unwrap();
    path
}

/// The command's stdout and exit code.
fn admissible(profile: &str, tensor: &str, path: &std::path::Path) -> (String, Option<i32>) {
    let out = Command::new(env!("CARGO_BIN_EXE_wai-checker"))
        .args(["admissible", "--profile", profile, "--tensor", tensor])
        .arg(path)
        .output()
        .unwrap();
    (String::from_utf8(out.stdout).unwrap(), out.status.code())
}

#[test]
fn admissible_prints_the_range_or_none() {
    let dir = std::env::temp_dir().join(format!("wai-checker-admissible-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (lut16, softmax) = (graph(&dir, "lut16"), graph(&dir, "softmax"));
    let full = "[-9223372036854775808, 9223372036854775807]\n";
    // B8: a lut16 consumer refuses past ±32767; a tensor nothing reads is limited by nothing.
    assert_eq!(admissible("acc32", "0", &lut16), ("[-32767, 32767]\n".into(), Some(0)));
    assert_eq!(admissible("acc64", "1", &lut16), (full.into(), Some(0)));
    // softmax's exp.t2 never fits i32 (§7.3), so C(0) fails under acc32.
    let none = "none: no value of tensor 0 lets its consumers meet acc32\n";
    assert_eq!(admissible("acc32", "0", &softmax), (none.into(), Some(0)));
    // Under acc64, `u = exp.negx = [0, 2X]` fits i64 up to X = 2^62 − 1; the rest is fixed.
    assert_eq!(
        admissible("acc64", "0", &softmax),
        ("[-4611686018427387903, 4611686018427387903]\n".into(), Some(0))
    );
    assert_eq!(admissible("acc64", "9", &softmax), (String::new(), Some(1)));
    assert_eq!(admissible("acc16", "0", &softmax), (String::new(), Some(2)));
    std::fs::remove_dir_all(&dir).unwrap();
}
