//! The pinned vector of cis2-spec-v0.3b §13.1, and the refusal of files that are not §2.1's.

use std::process::Command;
use wai_oracle::cis2::vector::{self, ARGMAX_DIGEST, CIS2_REF, GEN_TOKS, GENERATED_IDS, PROMPT, PROMPT_IDS};

/// §13.1 on the fast path, when `CIS2_MODEL_DIR` names a folder with SmolLM2-135M's files (they
/// cannot be downloaded here); otherwise the test says it was not run.
#[test]
fn pinned_vector_when_the_weights_are_present() {
    let Some(dir) = std::env::var_os("CIS2_MODEL_DIR") else {
        eprintln!("NOT RUN: CIS2_MODEL_DIR is not set, so §13.1's decode of SmolLM2-135M was not run");
        return;
    };
    let files = vector::read_verified(std::path::Path::new(&dir)).expect("§2.1's files");
    let (r, _) = vector::run(&files, PROMPT, GEN_TOKS, false).expect("the decode");
    assert_eq!(r.prompt_ids, PROMPT_IDS);
    assert_eq!(r.generated_ids, GENERATED_IDS);
    assert_eq!(hex::encode(r.argmax_digest), ARGMAX_DIGEST);
    assert_eq!(hex::encode(r.witness_digest), CIS2_REF);
}

#[test]
fn a_wrong_file_is_refused_with_its_name_and_both_hashes() {
    let dir = tempfile::tempdir().unwrap();
    for (name, _) in vector::ARTIFACTS {
        std::fs::write(dir.path().join(name), b"not the pinned file").unwrap();
    }
    let out = Command::new(env!("CARGO_BIN_EXE_wai-oracle"))
        .args(["cis2", "--model-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    // SHA-256 of the 19 bytes written, and §2.1's pinned value for the first file checked.
    let got = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(b"not the pinned file"));
    assert!(err.contains("model.safetensors"), "{err}");
    assert!(err.contains(&got), "{err}");
    assert!(err.contains(vector::ARTIFACTS[0].1), "{err}");
}

/// cis2-verify's fixture, rebuilt by the corpus's recipe (`cis2/models/peer-tiny`), decoded by the
/// command on both paths: the receipt holds the peer's published goldens, read from the
/// `peer` member of `corpus/cis2/decode.json`'s case `peer-tiny-abcd`.
#[test]
fn the_peers_fixture_gives_the_peers_goldens_on_both_paths() {
    let corpus: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string("corpus/cis2/decode.json").unwrap()).unwrap();
    let case = corpus["cases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "peer-tiny-abcd")
        .expect("the peer's case");
    let peer = &case["peer"];
    let ids = |k: &str| {
        let v: Vec<String> = peer[k].as_array().unwrap().iter().map(|x| x.to_string()).collect();
        format!("[{}]", v.join(", "))
    };
    for exact in [false, true] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_wai-oracle"));
        cmd.args([
            "cis2",
            "--unpinned",
            "--model-dir",
            "ops-conformance/cis2/models/peer-tiny",
        ])
        .args(["--prompt", case["prompt"].as_str().unwrap()])
        .args(["--gen-toks", &case["gen_toks"].to_string()]);
        if exact {
            cmd.arg("--exact");
        }
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let receipt = String::from_utf8(out.stdout).unwrap();
        let lines: Vec<&str> = receipt.lines().collect();
        assert_eq!(
            lines[0],
            format!(
                "CIS2_REF digest={} prompt_idx=custom prompt_toks=2 gen_toks=6 dtype=fp32",
                peer["witness_digest"].as_str().unwrap()
            ),
            "exact: {exact}"
        );
        assert_eq!(lines[1], "prompt_hex=61626364");
        assert_eq!(
            lines[2],
            format!("argmax_digest={}", peer["argmax_digest"].as_str().unwrap())
        );
        assert!(
            lines.contains(&format!("prompt_token_ids={}", ids("prompt_ids")).as_str()),
            "{receipt}"
        );
        assert!(
            lines.contains(&format!("generated_token_ids={}", ids("generated_ids")).as_str()),
            "{receipt}"
        );
    }
}

/// Every accepted decode record of `cis2/decode.jsonl`, recomputed on both paths (the pinned
/// hardware and the software binary32 under the x86-64 rule the records hold, C1): the same
/// ids and digests as committed.
#[test]
fn both_paths_reproduce_every_committed_decode_record() {
    use wai_oracle::cis2::arith::Soft;
    use wai_oracle::cis2::decode::{Artifacts, run};
    use wai_oracle::cis2::hard::Pinned;
    let pinned = Pinned::new(2).expect("this host pins FTZ/DAZ");
    let text = std::fs::read_to_string("ops-conformance/cis2/decode.jsonl").unwrap();
    let mut checked = 0;
    for line in text.lines() {
        let record: serde_json::Value = serde_json::from_str(line).unwrap();
        let e = &record["expect"];
        if e.get("refuse").is_some() {
            continue;
        }
        let dir = std::path::Path::new("ops-conformance").join(record["model"].as_str().unwrap());
        let read = |n: &str| std::fs::read(dir.join(n)).unwrap();
        let files = Artifacts {
            weights: read("model.safetensors"),
            config: read("config.json"),
            tokenizer: read("tokenizer.json"),
        };
        let prompt = String::from_utf8(hex::decode(record["prompt"].as_str().unwrap()).unwrap()).unwrap();
        let gen_toks: usize = record["gen_toks"].as_str().unwrap().parse().unwrap();
        let ids = |v: &[u32]| v.iter().map(|t| serde_json::json!(t.to_string())).collect::<Vec<_>>();
        let fast = pinned.run(|hard| run(hard, &files, &prompt, gen_toks)).unwrap();
        let exact = run(&Soft::X86_64, &files, &prompt, gen_toks).unwrap();
        for (path, r) in [("fast", fast), ("exact", exact)] {
            let id = record["id"].as_str().unwrap();
            assert_eq!(hex::encode(r.witness_digest), e["witness_digest"], "{id}, {path} path");
            assert_eq!(hex::encode(r.argmax_digest), e["argmax_digest"], "{id}, {path} path");
            assert_eq!(ids(&r.prompt_ids), e["prompt_ids"].as_array().unwrap().clone(), "{id}");
            assert_eq!(
                ids(&r.generated_ids),
                e["generated_ids"].as_array().unwrap().clone(),
                "{id}"
            );
        }
        checked += 1;
    }
    assert!(checked >= 15, "{checked} records");
}
