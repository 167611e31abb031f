//! Stage-operator vectors (§5E): each is computed again with the oracle, and the items it covers
//! are derived from its operands, its modes and its outcome (a result at an edge, a refusal by its
//! rule).

use super::int;
use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{ToPrimitive, Zero};
use std::collections::BTreeSet;
use wai_oracle::fill::stage::compute;

/// The items one stage vector covers.
pub fn derive(op: &str, request: &serde_json::Value) -> Result<BTreeSet<String>, String> {
    let empty = serde_json::Map::new();
    let i = request["in"].as_object().unwrap_or(&empty);
    let m = request["modes"].as_object().unwrap_or(&empty);
    let mut escapes = Vec::new();
    let outcome = compute(op, i, m, &mut escapes)?;
    let mut items = BTreeSet::new();
    let get = |k: &str| i.get(k).map(int).unwrap_or_default();
    let mode = |k: &str| m.get(k).and_then(|v| v.as_str()).unwrap_or_default().to_string();
    match &outcome {
        Ok(expect) => {
            items.insert("decode".to_string());
            match op {
                "bucket" => {
                    let rule = mode("bucket");
                    items.insert(format!("{rule}:decode"));
                    let edges: Vec<BigInt> = i["edges"].as_array().into_iter().flatten().map(int).collect();
                    if edges.contains(&get("sigma")) {
                        items.insert(format!("{rule}:at-edge"));
                    }
                }
                "coded" => {
                    items.insert(expect["coded"].to_string());
                }
                "block_stat" => {
                    let b = get("b");
                    let shape: Vec<BigInt> = i["x"]["shape"].as_array().into_iter().flatten().map(int).collect();
                    if shape.len() == 3 && (!(&shape[1] % &b).is_zero() || !(&shape[2] % &b).is_zero()) {
                        items.insert("partial".into());
                    }
                }
                "residual_step" => {
                    let (r, q, lo, hi) = (get("r"), get("q"), get("lo"), get("hi"));
                    let big_r: BigInt = (&hi - &lo).div_floor(&q) + 1;
                    for (value, item) in [
                        (big_r.clone(), "r=R"),
                        (-&big_r, "r=-R"),
                        (&big_r + 1, "r=R+1"),
                        (-&big_r - 1, "r=-R-1"),
                    ] {
                        if r == value {
                            items.insert(item.into());
                        }
                    }
                    if lo == BigInt::from(i32::MIN) || hi == BigInt::from(i32::MAX) {
                        items.insert("i32-limits".into());
                    }
                }
                "coding_order" => {
                    let order = i["order"].as_str().unwrap_or_default();
                    items.insert(if order == "raster" {
                        "raster".into()
                    } else {
                        format!("checkerboard-{}", i["anchor"])
                    });
                }
                "mans_decode" => {
                    let mode = i["mode"].as_str().unwrap_or_default().to_string();
                    items.insert(mode.clone());
                    if mode == "sgm" {
                        let bounds: Vec<BigInt> = i["bounds"].as_array().into_iter().flatten().map(int).collect();
                        for span in i["spans"].as_array().into_iter().flatten() {
                            let masks = span["mask"].as_array().cloned().unwrap_or_default();
                            for (k, s) in span["sigma"].as_array().into_iter().flatten().enumerate() {
                                let masked = masks.get(k).and_then(|b| b.as_bool()).unwrap_or(false);
                                if !masked {
                                    items.insert("unmasked".into());
                                    continue;
                                }
                                let b = int(s)
                                    .to_usize()
                                    .and_then(|s| bounds.get(s).cloned())
                                    .unwrap_or_default();
                                for edge in [128, 255] {
                                    if b == BigInt::from(edge) {
                                        items.insert(format!("bound-{edge}"));
                                    }
                                }
                            }
                        }
                    }
                    for e in &escapes {
                        match &e.bound {
                            Some(b) if *b == BigInt::from(128) => items.insert("escape-128".into()),
                            Some(b) if *b == BigInt::from(255) => items.insert("escape-255".into()),
                            Some(_) => false,
                            None => items.insert("fac-escape".into()),
                        };
                    }
                }
                "rans64_decode" => {
                    items.insert(format!("modes:{}:{}:{}", mode("table"), mode("escape"), mode("end")));
                }
                _ => {}
            }
        }
        Err(stop) => {
            items.insert(format!("code:{}", stop.code));
            let condition = stop.at == -1 || (op == "dequantize" && stop.at == 0);
            if condition {
                items.insert(format!("refuse:{}", stop.rule));
            }
            match op {
                "mans_decode" if stop.rule == "init" => {
                    let memory = hex::decode(i["memory"].as_str().unwrap_or_default()).unwrap_or_default();
                    if memory.len() >= 8 && memory[memory.len() - 8..].iter().all(|&b| b == 0) {
                        items.insert("zero-tail".into());
                    }
                }
                "mans_decode" if stop.rule == "exhausted" => {
                    items.insert("short".into());
                }
                "rans64_decode" if !condition => {
                    let reads = i["reads"].as_array().map_or(0, Vec::len) as i64;
                    let end = mode("end");
                    if stop.at == reads {
                        items.insert(format!("end:{end}"));
                    } else if mode("escape") == "strict" {
                        let all: Vec<&str> = std::iter::once(stop.rule).chain(stop.also.iter().copied()).collect();
                        items.insert(format!("strict:{end}:{}", all.join("+")));
                    } else if stop.rule == "exhausted" {
                        items.insert(format!("lenient:{end}:exhausted"));
                    }
                }
                _ => {}
            }
        }
    }
    Ok(items
        .into_iter()
        .map(|item| {
            if item.starts_with("code:") {
                item
            } else {
                format!("{op}:{item}")
            }
        })
        .collect())
}
