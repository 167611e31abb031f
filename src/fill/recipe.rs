//! The scale tier's compact tensors (docs/protocol.md, the scale tier): an input given as a
//! `splitmix64` recipe, an output written as the SHA-256 of its canonical data array with the
//! corners of every channel.

use crate::canon;
use crate::json::*;
use crate::plan::Shape;
use crate::tensor::Tensor;
use num_bigint::BigInt;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// The most elements a recipe may make: the spec's absolute cap, 2^26 (§3).
pub const MAX_ELEMS: u64 = 1 << 26;

/// An input tensor made by the `splitmix64` generator over `[lo, hi]`.
#[derive(Clone, Debug)]
pub struct Recipe {
    pub shape: Shape,
    pub seed: u64,
    pub lo: BigInt,
    /// `hi − lo + 1`, in `[1, 2^64]`.
    pub n: u128,
    /// The request's own JSON, echoed in canonical form.
    pub echo: Value,
}

/// Whether a request's tensor is a recipe (rather than written out).
pub fn is_recipe(v: &Value) -> bool {
    v.get("recipe").is_some()
}

/// The `(i + 1)`-th output of SplitMix64 from state `seed`: a counter-based generator, so
/// element `i` needs no other.
pub fn splitmix64(seed: u64, i: u64) -> u64 {
    let mut z = seed.wrapping_add((i + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

impl Recipe {
    /// Element `i`: `lo + ⌊z·n / 2^64⌋`, the high half of an exact product.
    pub fn element(&self, i: u64) -> BigInt {
        let z = u128::from(splitmix64(self.seed, i));
        // z < 2^64 and n ≤ 2^64, so z·n < 2^128.
        &self.lo + BigInt::from((z * self.n) >> 64)
    }

    /// The tensor, element by element in CHW order.
    pub fn tensor(&self) -> Tensor {
        let count = self.shape.elems().expect("capped when read");
        Tensor {
            shape: self.shape,
            data: (0..count).map(|i| self.element(i)).collect(),
        }
    }
}

/// `{ "recipe": { "generator", "range", "seed" }, "shape" }`, every condition of the form checked
/// before anything the size of the tensor exists.
pub fn read(v: &Value, path: &str) -> Result<Recipe, Fail> {
    let o = object(v, path)?;
    only(o, &["recipe", "shape"], path)?;
    let shape = shape(member(o, "shape", path)?, &join(path, "shape"))?;
    if shape.elems().is_none_or(|n| n > MAX_ELEMS) {
        return Err(format!("{}: more than 2^26 elements", join(path, "shape")));
    }
    let rp = join(path, "recipe");
    let r = object(member(o, "recipe", path)?, &rp)?;
    only(r, &["generator", "range", "seed"], &rp)?;
    let generator = string(member(r, "generator", &rp)?, &join(&rp, "generator"))?;
    if generator != "splitmix64" {
        return Err(format!(
            "{}: {generator:?} is not a generator (splitmix64)",
            join(&rp, "generator")
        ));
    }
    let seed_path = join(&rp, "seed");
    let seed = u64::try_from(&integer(member(r, "seed", &rp)?, &seed_path)?)
        .map_err(|_| format!("{seed_path}: not in [0, 2^64)"))?;
    let range_path = join(&rp, "range");
    let [lo, hi]: [BigInt; 2] = integers(member(r, "range", &rp)?, &range_path)?
        .try_into()
        .map_err(|_| format!("{range_path}: not [lo, hi]"))?;
    let n = u128::try_from(&hi - &lo + 1u32)
        .ok()
        .filter(|n| (1..=1 << 64).contains(n))
        .ok_or_else(|| format!("{range_path}: not lo ≤ hi with hi − lo < 2^64"))?;
    let echo = json!({
        "recipe": { "generator": generator, "range": [canon::int(lo.clone()), canon::int(hi)], "seed": canon::int(seed) },
        "shape": shape_value(shape),
    });
    Ok(Recipe {
        shape,
        seed,
        lo,
        n,
        echo,
    })
}

/// An output as the scale tier writes it: its shape, the SHA-256 of its canonical data array,
/// and each channel's corners `(0, 0)`, `(0, W−1)`, `(H−1, 0)`, `(H−1, W−1)`, each position once.
pub fn digest(t: &Tensor) -> Value {
    let mut sha = Sha256::new();
    sha.update(b"[");
    for (i, v) in t.data.iter().enumerate() {
        if i > 0 {
            sha.update(b",");
        }
        // Each element a JSON string, as in a written-out `data`.
        sha.update(format!("\"{v}\"").as_bytes());
    }
    sha.update(b"]");
    let (h, w) = (t.h(), t.w());
    let mut samples = Vec::new();
    if h > 0 && w > 0 {
        for c in 0..t.c() {
            // Already in row-major order; a side of 1 makes equal neighbours.
            let mut corners = vec![(0, 0), (0, w - 1), (h - 1, 0), (h - 1, w - 1)];
            corners.sort();
            corners.dedup();
            for (y, x) in corners {
                samples.push(json!([
                    canon::int(c),
                    canon::int(y),
                    canon::int(x),
                    canon::int(t.at(c, y, x).clone())
                ]));
            }
        }
    }
    json!({ "samples": samples, "sha256": hex::encode(sha.finalize()), "shape": shape_value(t.shape) })
}
