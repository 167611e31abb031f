//! Deterministic recipes for lists of integers (weights, tables, tensor data):
//! written out, or expanded from a seed, a constant or a ramp (docs/corpus.md).

use crate::value::{Fail, array, int, member, object, only, u64_};
use num_bigint::BigInt;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::Value;

/// `count` integers from `v`: a list of exactly `count` integers, or one of
/// `{"random": {"seed", "range": [lo, hi]}}`, `{"fill": v}`, `{"ramp": {"start", "step"}}`.
pub fn ints(v: &Value, count: usize, path: &str) -> Result<Vec<BigInt>, Fail> {
    if let Value::Array(items) = v {
        if items.len() != count {
            return Err(format!("{path}: {} values where {count} are needed", items.len()));
        }
        return items
            .iter()
            .enumerate()
            .map(|(i, x)| int(x, &format!("{path}[{i}]")))
            .collect();
    }
    let o = object(v, path)?;
    only(o, &["random", "fill", "ramp"], path)?;
    if let Some(r) = o.get("random") {
        let p = format!("{path}.random");
        let r = object(r, &p)?;
        only(r, &["seed", "range"], &p)?;
        let seed = u64_(member(r, "seed", &p)?, &format!("{p}.seed"))?;
        let (lo, hi) = range(member(r, "range", &p)?, &format!("{p}.range"))?;
        return Ok(random(seed, &lo, &hi, count));
    }
    if let Some(f) = o.get("fill") {
        return Ok(vec![int(f, &format!("{path}.fill"))?; count]);
    }
    if let Some(r) = o.get("ramp") {
        let p = format!("{path}.ramp");
        let r = object(r, &p)?;
        only(r, &["start", "step"], &p)?;
        let start = int(member(r, "start", &p)?, &format!("{p}.start"))?;
        let step = int(member(r, "step", &p)?, &format!("{p}.step"))?;
        return Ok((0..count).map(|i| &start + &step * i).collect());
    }
    Err(format!("{path}: neither a list nor a recipe"))
}

/// `[lo, hi]` with `lo ≤ hi`.
pub fn range(v: &Value, path: &str) -> Result<(BigInt, BigInt), Fail> {
    match array(v, path)? {
        [lo, hi] => {
            let (lo, hi) = (int(lo, &format!("{path}[0]"))?, int(hi, &format!("{path}[1]"))?);
            if lo > hi {
                return Err(format!("{path}: lo > hi"));
            }
            Ok((lo, hi))
        }
        _ => Err(format!("{path}: not a pair")),
    }
}

/// `count` values in `[lo, hi]` from ChaCha8 seeded with `seed`: each is
/// `lo + (a·2^64 + b) mod (hi − lo + 1)`, with `a` then `b` the generator's next two `u64`s.
pub fn random(seed: u64, lo: &BigInt, hi: &BigInt, count: usize) -> Vec<BigInt> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let width: BigInt = hi - lo + 1u32;
    (0..count)
        .map(|_| {
            let a = BigInt::from(rng.next_u64());
            let b = BigInt::from(rng.next_u64());
            lo + ((a << 64u32) + b) % &width
        })
        .collect()
}
