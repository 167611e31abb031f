//! The byte-identity gate catches a changed computed value and names it; the checker stays
//! independent of the oracle.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use wai_oracle::suite::Tier;
use xtask::{GENERATOR, build, check, compare::files};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let target = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_dir(&p, &target)
        } else {
            std::fs::copy(&p, &target).map(|_| ()).unwrap()
        }
    }
}

/// Changes one computed value of the record on line `line` (0-based) and returns the field it
/// changed: an output integer, a refusal code, a `load` code or a `profiles` list.
fn mutate(record: &mut Value, kind: usize) -> Option<String> {
    let decodes = record["decodes"].as_array().cloned().unwrap_or_default();
    match kind % 4 {
        0 => {
            let (d, _) = decodes
                .iter()
                .enumerate()
                .find(|(_, d)| d["expect"].get("outputs").is_some())?;
            let v = &mut record["decodes"][d]["expect"]["outputs"][0]["data"][0];
            let n: i128 = v.as_str()?.parse().ok()?;
            *v = Value::String((n + 1).to_string());
            Some(format!("decodes[{d}].expect.outputs[0].data[0]"))
        }
        1 => {
            let (d, _) = decodes
                .iter()
                .enumerate()
                .find(|(_, d)| d["expect"].get("refuse").is_some())?;
            let r = &mut record["decodes"][d]["expect"]["refuse"];
            *r = Value::String(if r == "field_range" { "too_large" } else { "field_range" }.into());
            Some(format!("decodes[{d}].expect.refuse"))
        }
        2 => {
            let load = &mut record["load"];
            *load = Value::String(if load == "ok" { "model_mismatch" } else { "ok" }.into());
            Some("load".into())
        }
        _ => {
            record["profiles"] = if record["profiles"].as_array()?.len() == 2 {
                serde_json::json!(["acc64"])
            } else {
                serde_json::json!(["acc32", "acc64"])
            };
            Some("profiles".into())
        }
    }
}

#[test]
fn a_changed_value_in_each_of_20_records_is_named_by_file_line_id_and_field() {
    let root = root();
    let bin = build(&root, &[GENERATOR, ("wai-checker", "wai-checker")]).unwrap();
    let dir = tempfile_dir();
    copy_dir(&root.join("ops-conformance"), &dir);
    let mut changed = Vec::new();
    let small = files(&dir)
        .into_iter()
        .filter(|f| f.ends_with(".jsonl") && Tier::Small.holds(f));
    for (i, name) in small.enumerate() {
        if changed.len() == 20 {
            break;
        }
        let path = dir.join(&name);
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines: Vec<String> = text.lines().map(String::from).collect();
        // The first record of the file that can take this kind of change, trying each kind.
        let found = (0..4).find_map(|k| {
            lines.iter().enumerate().find_map(|(n, l)| {
                let mut v: Value = serde_json::from_str(l).unwrap();
                mutate(&mut v, i + k).map(|field| (n, v, field))
            })
        });
        let Some((n, v, field)) = found else { continue };
        lines[n] = wai_oracle::canon::to_string(&v).unwrap();
        std::fs::write(&path, lines.join("\n") + "\n").unwrap();
        changed.push((name, n + 1, v["id"].as_str().unwrap().to_string(), field));
    }
    assert_eq!(
        changed.len(),
        20,
        "the tree has 20 files with a computed value to change"
    );
    let report = check::differences(&root, &dir, &bin, Tier::Small).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    for (file, line, id, field) in &changed {
        for who in ["regenerated", "checker"] {
            let prefix = format!("{who} {file}:{line} {id} {field}: committed ");
            assert!(
                report.iter().any(|r| r.starts_with(&prefix)),
                "no `{prefix}…` in {report:#?}"
            );
        }
    }
}

fn tempfile_dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("wai-gate-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

#[test]
fn the_checker_never_depends_on_the_oracle_or_num_bigint() {
    let root = root();
    let manifest = std::fs::read_to_string(root.join("checker/Cargo.toml")).unwrap();
    for name in ["wai-oracle", "wai_oracle", "num-bigint"] {
        assert!(!manifest.contains(name), "checker/Cargo.toml names {name}");
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .current_dir(&root)
        .args(["tree", "-p", "wai-checker", "-e", "all"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let tree = String::from_utf8(out.stdout).unwrap();
    assert!(tree.starts_with("wai-checker"), "{tree}");
    for name in ["wai-oracle", "num-bigint"] {
        assert!(
            !tree.contains(name),
            "cargo tree -p wai-checker contains {name}:\n{tree}"
        );
    }
}

#[test]
fn a_changed_lowered_graph_certificate_or_set_is_named() {
    let root = root();
    let bin = build(&root, &[GENERATOR, ("wai-checker", "wai-checker")]).unwrap();
    let dir = std::env::temp_dir().join(format!("wai-gate-lower-test-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&root.join("ops-conformance"), &dir);
    let synth = "certificates/wai.neural.int_synth/1885422de396b485104e5c0c0f1f4a925826a6fa75f4f9bbcb2eb020a3f538e0";
    let hyper = "provisional/certificates/wai.neural.int_hyper/02f679b42e2522a6cb1966978240ff046c2e0cf2844f639bb5946a5d4a189738";
    let jpegai = "certificates/wai.image.jpegai/4c01fb04d4ee8ae8ff02c635526a3dad6be9e5b6571d521609b5166a678717f9";
    // One byte of a lowered graph; the certificate's capability; a lowered graph removed; one byte
    // of a set's own file, which changes its digest and what it lowers to.
    let g = dir.join(format!("{synth}/synth.whg1"));
    let mut bytes = std::fs::read(&g).unwrap();
    bytes[40] ^= 1;
    std::fs::write(&g, bytes).unwrap();
    let c = dir.join(format!("{hyper}.json"));
    let text = std::fs::read_to_string(&c).unwrap();
    std::fs::write(&c, text.replace("wai.neural.int_hyper", "wai.video.int_hyper")).unwrap();
    std::fs::remove_file(dir.join(format!("{jpegai}/hs_uv.whg1"))).unwrap();
    let w = dir.join(format!("{jpegai}/weights/hs_y.json"));
    let text = std::fs::read_to_string(&w).unwrap();
    std::fs::write(&w, text.replacen("\"v\":[8]", "\"v\":[9]", 1)).unwrap();
    let report = check::differences(&root, &dir, &bin, Tier::Small).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let expected = [
        format!("checker {synth}/synth.whg1: committed 810 bytes (byte 40: "),
        format!(
            "checker {hyper}.json:1 ? capability: committed \"wai.video.int_hyper\" vs recomputed \"wai.neural.int_hyper\""
        ),
        format!("checker {jpegai}/hs_uv.whg1: committed (none) vs recomputed"),
        format!("checker {jpegai}: committed digest 4c01fb04"),
        format!("checker {jpegai}/hs_y.whg1: committed "),
        format!("checker {jpegai}.json:1 ? graphs[0].graph_sha256: committed "),
    ];
    for e in expected {
        assert!(report.iter().any(|r| r.starts_with(&e)), "no `{e}…` in {report:#?}");
    }
}
