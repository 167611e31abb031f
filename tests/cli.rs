//! The `certify` and `admissible` commands.

mod common;
use common::*;
use std::process::Command;
use wai_oracle::bounds::Certified;
use wai_oracle::bounds::certificate::{Header, bytes};
use wai_oracle::num::Round;
use wai_oracle::whg1::build::Builder;
use wai_oracle::whg1::{Graph, Op, PerChannel, Rq, write};

fn oracle(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_wai-oracle"))
        .args(args)
        .output()
        .unwrap()
}

/// x `check [−100, 100]` → rescale by 3 (half_up, shift 1) → output.
fn graph() -> Graph {
    let mut b = Builder::new();
    let x = b.input(1, check(-100, 100));
    let y = b.op(
        Op::Rescale(Rq::new(Round::HalfUp, PerChannel::One(1)).mult(PerChannel::One(3))),
        &[x],
        1,
    );
    b.output(y);
    b.build()
}

#[test]
fn certify_writes_the_certificate_bytes_with_the_role_from_the_file_name() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("synth.whg1");
    std::fs::write(&path, write(&graph())).unwrap();
    let digest = "0".repeat(64);
    let out = oracle(&[
        "certify",
        "--capability",
        "wai.test",
        "--set-sha256",
        &digest,
        path.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let c = Certified::new("synth", write(&graph()), load(&graph()).unwrap().graph).unwrap();
    let header = Header {
        capability: Some("wai.test".into()),
        lowering: "whg1".into(),
        set_sha256: Some(digest),
    };
    assert_eq!(out.stdout, bytes(&[c], &header));
    assert!(String::from_utf8(out.stdout).unwrap().contains(r#""name":"synth""#));
}

#[test]
fn certify_refuses_bad_arguments_and_bad_graphs_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("g.whg1");
    std::fs::write(&good, write(&graph())).unwrap();
    let bad = dir.path().join("bad.whg1");
    std::fs::write(&bad, b"WHG2").unwrap();
    let out = oracle(&["certify", "--set-sha256", "ABC", good.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("not 64 lowercase hexadecimal digits"));
    let out = oracle(&["certify", bad.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("refused at load: model_mismatch"));
    let out = oracle(&["certify", dir.path().join("missing.whg1").to_str().unwrap()]);
    assert!(!out.status.success());
}

#[test]
fn admissible_prints_the_range_or_none() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.whg1");
    std::fs::write(&path, write(&graph())).unwrap();
    // Under acc32, rescale by 3 with half_up, shift 1: rq.p = [−3X, 3X + 1] must fit i64 (a
    // product), and rq.q = [R(−3X, 1), R(3X, 1)] and the result must fit i32:
    // ⌊(3X + 1)/2⌋ ≤ 2^31 − 1 ⟺ 3X + 1 ≤ 2^32 − 1 ⟺ X ≤ 1431655764.
    // The lower end ⌊(−3X + 1)/2⌋ ≥ −2^31 holds for those X too.
    let out = oracle(&[
        "admissible",
        "--profile",
        "acc32",
        "--tensor",
        "0",
        path.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "[-1431655764, 1431655764]\n");
    let out = oracle(&[
        "admissible",
        "--profile",
        "acc16",
        "--tensor",
        "0",
        path.to_str().unwrap(),
    ]);
    assert!(!out.status.success());
}
