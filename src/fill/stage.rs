//! Filling stage-operator vectors (§14.1 *Stage-operator vectors*): `expect`, from `op`,
//! `modes` and `in`.

use crate::canon;
use crate::json::*;
use crate::plan::Shape;
use crate::stage::Stop;
use crate::stage::block_stat::block_stat;
use crate::stage::coding_order::{Order, coding_order};
use crate::stage::mans_decode::{Escaped, Fac, Sgm, Span, decode_fac_traced, decode_sgm_traced};
use crate::stage::rans64_decode::{self, EndRule, Escape, Modes, Table, TableRule};
use crate::stage::scalar::{self, BucketRule};
use num_bigint::BigInt;
use serde_json::{Map, Value, json};

/// The stage operators this oracle fills, by §5E's names.
pub const OPERATORS: [&str; 10] = [
    "rans64_decode",
    "dequantize",
    "bucket",
    "coded",
    "scale_index",
    "block_stat",
    "band_lookup",
    "mans_decode",
    "residual_step",
    "coding_order",
];

/// Fills one stage vector.
pub fn fill(v: &Value) -> Result<Value, Fail> {
    let o = object(v, "")?;
    only(o, &["expect", "id", "in", "modes", "op"], "")?;
    let id = string(member(o, "id", "")?, "id")?;
    let op = string(member(o, "op", "")?, "op")?;
    let input = object(member(o, "in", "")?, "in")?;
    let modes = object(member(o, "modes", "")?, "modes")?;
    let expect = match compute(op, input, modes, &mut Vec::new())? {
        Ok(e) => e,
        Err(stop) => json!({ "at": canon::int(stop.at), "refuse": stop.code.as_str() }),
    };
    let mut out = Map::new();
    out.insert("expect".into(), expect);
    out.insert("id".into(), Value::String(id.to_string()));
    out.insert("in".into(), Value::Object(input.clone()));
    out.insert("modes".into(), Value::Object(modes.clone()));
    out.insert("op".into(), Value::String(op.to_string()));
    Ok(Value::Object(out))
}

/// A request's `expect`, or the refusal; `Err` for a request that is not well formed.
pub type Computed = Result<Result<Value, Stop>, Fail>;

fn int_field(o: &Map<String, Value>, key: &str) -> Result<BigInt, Fail> {
    integer(member(o, key, "in")?, &join("in", key))
}

fn ints_field(o: &Map<String, Value>, key: &str) -> Result<Vec<BigInt>, Fail> {
    integers(member(o, key, "in")?, &join("in", key))
}

fn mode<'a>(m: &'a Map<String, Value>, key: &str) -> Result<&'a str, Fail> {
    string(member(m, key, "modes")?, &join("modes", key))
}

fn value(v: BigInt) -> Value {
    canon::int(v)
}

/// Computes one stage request's result; `escapes` receives every escape `mans_decode` takes
/// (for the coverage tool).
pub fn compute(op: &str, i: &Map<String, Value>, m: &Map<String, Value>, escapes: &mut Vec<Escaped>) -> Computed {
    let no_modes = || only(m, &[], "modes");
    Ok(match op {
        "dequantize" => {
            no_modes()?;
            only(i, &["sym", "f", "base"], "in")?;
            scalar::dequantize(&int_field(i, "sym")?, &int_field(i, "f")?, &int_field(i, "base")?)
                .map(|v| json!({ "value": value(v) }))
        }
        "bucket" => {
            only(m, &["bucket"], "modes")?;
            only(i, &["sigma", "edges"], "in")?;
            let rule = match mode(m, "bucket")? {
                "ceil" => BucketRule::Ceil,
                "floor" => BucketRule::Floor,
                other => return Err(format!("modes.bucket: {other:?} is neither ceil nor floor")),
            };
            scalar::bucket(&int_field(i, "sigma")?, &ints_field(i, "edges")?, rule)
                .map(|v| json!({ "index": value(v) }))
        }
        "coded" => {
            no_modes()?;
            only(i, &["v", "thr"], "in")?;
            Ok(json!({ "coded": scalar::coded(&int_field(i, "v")?, &int_field(i, "thr")?) }))
        }
        "scale_index" => {
            no_modes()?;
            only(i, &["v", "s", "n"], "in")?;
            scalar::scale_index(&int_field(i, "v")?, &int_field(i, "s")?, &int_field(i, "n")?)
                .map(|v| json!({ "index": value(v) }))
        }
        "block_stat" => {
            no_modes()?;
            only(i, &["x", "b", "s", "lo", "hi"], "in")?;
            let x = tensor(member(i, "x", "in")?, "in.x")?;
            let (b, s, lo, hi) = (
                int_field(i, "b")?,
                int_field(i, "s")?,
                int_field(i, "lo")?,
                int_field(i, "hi")?,
            );
            block_stat(&x, &b, &s, &lo, &hi).map(|t| json!({ "out": tensor_value(&t) }))
        }
        "band_lookup" => {
            no_modes()?;
            only(i, &["v", "edges", "table", "row"], "in")?;
            let table: Vec<Vec<BigInt>> = array(member(i, "table", "in")?, "in.table")?
                .iter()
                .enumerate()
                .map(|(r, row)| integers(row, &format!("in.table[{r}]")))
                .collect::<Result<_, _>>()?;
            scalar::band_lookup(
                &int_field(i, "v")?,
                &ints_field(i, "edges")?,
                &table,
                &int_field(i, "row")?,
            )
            .map(|v| json!({ "value": value(v) }))
        }
        "residual_step" => {
            no_modes()?;
            only(i, &["pred", "r", "q", "lo", "hi"], "in")?;
            let f = |k| int_field(i, k);
            scalar::residual_step(&f("pred")?, &f("r")?, &f("q")?, &f("lo")?, &f("hi")?)
                .map(|v| json!({ "value": value(v) }))
        }
        "coding_order" => {
            no_modes()?;
            only(i, &["shape", "order", "anchor"], "in")?;
            let dims = ints_field(i, "shape")?;
            let dim = |k: usize| u64::try_from(&dims[k]).map_err(|_| format!("in.shape[{k}]: not in 0..2^64"));
            if dims.len() != 3 {
                return Err("in.shape: not [C, H, W]".into());
            }
            let shape = Shape::new(dim(0)?, dim(1)?, dim(2)?);
            // `anchor` is read by checkerboard only, but is a boolean wherever it is given.
            let anchor = match i.get("anchor") {
                None => None,
                Some(a) => Some(a.as_bool().ok_or("in.anchor: not true or false")?),
            };
            let order = match string(member(i, "order", "in")?, "in.order")? {
                "raster" => Order::Raster,
                "checkerboard" => Order::Checkerboard {
                    anchor: anchor.ok_or("in.anchor: missing (checkerboard reads it)")?,
                },
                other => return Err(format!("in.order: {other:?} is neither raster nor checkerboard")),
            };
            coding_order(shape, order)
                .map(|ix| json!({ "indices": ix.into_iter().map(canon::int).collect::<Vec<_>>() }))
        }
        "mans_decode" => {
            no_modes()?;
            mans(i, escapes)?
        }
        "rans64_decode" => rans(i, m)?,
        "mc_predict" | "up2_predict" | "rate_predict" => {
            return Err(format!(
                "op: {op} rests on a text the seeds do not contain and is not implemented (docs/assumptions.md)"
            ));
        }
        other => return Err(format!("op: {other:?} is not a stage operator")),
    })
}

fn symbols(rows: Vec<Vec<BigInt>>) -> Value {
    json!({ "symbols": rows.into_iter().map(|r| r.into_iter().map(canon::int).collect::<Vec<_>>()).collect::<Vec<_>>() })
}

fn mans(i: &Map<String, Value>, escapes: &mut Vec<Escaped>) -> Computed {
    let memory = hex_bytes(member(i, "memory", "in")?, "in.memory")?;
    let rows_of = |key: &str| -> Result<Vec<Vec<BigInt>>, Fail> {
        array(member(i, key, "in")?, &join("in", key))?
            .iter()
            .enumerate()
            .map(|(r, row)| integers(row, &format!("in.{key}[{r}]")))
            .collect()
    };
    Ok(match string(member(i, "mode", "in")?, "in.mode")? {
        "sgm" => {
            only(i, &["memory", "mode", "pmf", "bounds", "spans"], "in")?;
            let spans = array(member(i, "spans", "in")?, "in.spans")?
                .iter()
                .enumerate()
                .map(|(k, s)| {
                    let p = format!("in.spans[{k}]");
                    let so = object(s, &p)?;
                    only(so, &["mask", "sigma"], &p)?;
                    let mask = array(member(so, "mask", &p)?, &join(&p, "mask"))?
                        .iter()
                        .map(|b| b.as_bool().ok_or_else(|| format!("{p}.mask: not true or false")))
                        .collect::<Result<_, _>>()?;
                    Ok(Span {
                        mask,
                        sigma: integers(member(so, "sigma", &p)?, &join(&p, "sigma"))?,
                    })
                })
                .collect::<Result<_, Fail>>()?;
            let d = Sgm {
                pmf: rows_of("pmf")?,
                bounds: ints_field(i, "bounds")?,
                spans,
            };
            decode_sgm_traced(&memory, &d, escapes).map(symbols)
        }
        "fac" => {
            only(i, &["memory", "mode", "rows", "lengths"], "in")?;
            let d = Fac {
                rows: rows_of("rows")?,
                lengths: ints_field(i, "lengths")?,
            };
            decode_fac_traced(&memory, &d, escapes).map(symbols)
        }
        other => return Err(format!("in.mode: {other:?} is neither sgm nor fac")),
    })
}

fn rans(i: &Map<String, Value>, m: &Map<String, Value>) -> Computed {
    only(i, &["stream", "tables", "reads"], "in")?;
    let escape = match mode(m, "escape")? {
        "lenient" => Escape::Lenient,
        "strict" => Escape::Strict,
        other => return Err(format!("modes.escape: {other:?} is neither lenient nor strict")),
    };
    only(
        m,
        if escape == Escape::Strict {
            &["table", "escape", "end", "lo", "hi"]
        } else {
            &["table", "escape", "end"]
        },
        "modes",
    )?;
    let table = match mode(m, "table")? {
        "t4097" => TableRule::T4097,
        "t2" => TableRule::T2,
        other => return Err(format!("modes.table: {other:?} is neither t4097 nor t2")),
    };
    let end = match mode(m, "end")? {
        "canonical" => EndRule::Canonical,
        "final_only" => EndRule::FinalOnly,
        other => return Err(format!("modes.end: {other:?} is neither canonical nor final_only")),
    };
    let range = match escape {
        Escape::Strict => Some((
            integer(member(m, "lo", "modes")?, "modes.lo")?,
            integer(member(m, "hi", "modes")?, "modes.hi")?,
        )),
        Escape::Lenient => None,
    };
    let tables = array(member(i, "tables", "in")?, "in.tables")?
        .iter()
        .enumerate()
        .map(|(k, t)| {
            let p = format!("in.tables[{k}]");
            let to = object(t, &p)?;
            only(to, &["cdf", "offset"], &p)?;
            Ok(Table {
                cdf: integers(member(to, "cdf", &p)?, &join(&p, "cdf"))?,
                offset: integer(member(to, "offset", &p)?, &join(&p, "offset"))?,
            })
        })
        .collect::<Result<Vec<_>, Fail>>()?;
    let stream = hex_bytes(member(i, "stream", "in")?, "in.stream")?;
    let modes = Modes {
        table,
        escape,
        end,
        range,
    };
    Ok(
        rans64_decode::decode(&stream, &tables, &ints_field(i, "reads")?, &modes)
            .map(|s| json!({ "symbols": s.into_iter().map(canon::int).collect::<Vec<_>>() })),
    )
}
