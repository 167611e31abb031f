//! The scale tier's record form (docs/protocol.md, "The scale tier: records with recipes and
//! digests"): a graph vector whose input tensors are `splitmix64` recipes and whose output tensors
//! are written as digests (a SHA-256 of the canonical `data` array, and samples).
//!
//! A recipe's elements are computed from their indices alone, in `u64`/`u128` wrapping arithmetic
//! as the doc's formula has it, and only while a decode runs: a record keeps its recipes, never
//! their elements. The grader's side is [`write_expanded`] (a scale request written out as a graph
//! vector, element by element) and [`compact_data`] and [`echoes_data`] (a written-out answer's
//! `data` arrays, read as the line holds them).

use crate::canon::{self, J};
use crate::request::{Bad, array, at, bad, int_str, members, shape, string};
use crate::run::Given;
use crate::stage::dec::Dec;
use ethnum::I256;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::fmt::{Display, Write as _};

/// The most elements a recipe may describe: `C·H·W ≤ 2^26` (docs/protocol.md, the scale tier).
pub const MAX_ELEMS: u64 = 1 << 26;

/// SplitMix64's `z` for element `i` from state `s`: its `(i + 1)`-th output (docs/protocol.md, the
/// scale tier).
pub fn splitmix64(s: u64, i: u64) -> u64 {
    let mut z = s.wrapping_add(i.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `⌊z · n / 2^64⌋` with `n = span + 1`: `z` taken onto `[0, span]` by the high half of the exact
/// product (no division, no rejection). `n ≤ 2^64`, so the product fits `u128`.
pub fn offset(z: u64, span: u64) -> u64 {
    ((u128::from(z) * (u128::from(span) + 1)) >> 64) as u64
}

/// A recipe: `splitmix64` from `seed`, mapped onto `[lo, hi]`.
#[derive(Clone, Debug)]
pub struct Recipe {
    seed: u64,
    lo: Dec,
    hi: Dec,
    /// `hi − lo`, below 2^64.
    span: u64,
    base: Base,
}

/// `lo` in the narrowest width that holds the elements: every element is `lo + offset`, offset
/// below 2^64, so a range inside i128 stays in i128 (the common case, and the fast one).
#[derive(Clone, Copy, Debug)]
enum Base {
    /// `lo` and `hi` fit i128, and so does every element.
    Narrow(i128),
    /// `lo` fits I256; an element may pass it at the top.
    Wide(I256),
    /// `lo` is past I256, and every element on its side of i128.
    Past,
}

impl Recipe {
    /// Element `i`'s offset above `lo`.
    fn offset(&self, i: u64) -> u64 {
        offset(splitmix64(self.seed, i), self.span)
    }

    /// Element `i` clamped into i128, as a run takes request values ([`Given`]).
    pub fn value(&self, i: u64) -> i128 {
        let off = self.offset(i);
        match self.base {
            Base::Narrow(lo) => lo + i128::from(off),
            Base::Wide(lo) => {
                let v = lo.saturating_add(I256::from(off));
                v.clamp(I256::from(i128::MIN), I256::from(i128::MAX)).as_i128()
            }
            Base::Past if self.lo.is_neg() => i128::MIN,
            Base::Past => i128::MAX,
        }
    }

    /// Element `i` exactly, as its canonical string.
    pub fn text(&self, i: u64) -> String {
        let off = self.offset(i);
        let exact = || Dec::sum(&[&self.lo, &Dec::from_i128(i128::from(off))]).to_string();
        match self.base {
            Base::Narrow(lo) => (lo + i128::from(off)).to_string(),
            Base::Wide(lo) => lo.checked_add(I256::from(off)).map_or_else(exact, |v| v.to_string()),
            Base::Past => exact(),
        }
    }

    /// [`Recipe::text`], pushed onto `out` (a narrow element formatted in place, not allocated).
    pub fn push_text(&self, i: u64, out: &mut String) {
        match self.base {
            Base::Narrow(lo) => {
                let v = lo + i128::from(self.offset(i));
                // The same digits: an i64 formats faster than an i128.
                let _ = match i64::try_from(v) {
                    Ok(v) => write!(out, "{v}"),
                    Err(_) => write!(out, "{v}"),
                };
            }
            _ => out.push_str(&self.text(i)),
        }
    }

    /// The recipe as a record writes it.
    fn echo(&self) -> J {
        J::obj(vec![
            ("generator", J::str("splitmix64")),
            ("range", J::Arr(vec![J::int(&self.lo), J::int(&self.hi)])),
            ("seed", J::int(self.seed)),
        ])
    }
}

/// An input tensor given as a recipe.
#[derive(Clone, Debug)]
pub struct RecipeTensor {
    pub shape: [u64; 3],
    pub recipe: Recipe,
}

impl RecipeTensor {
    /// Reads `{"recipe", "shape"}`; a request error names the field at fault.
    pub fn read(v: &Value, field: &str) -> Result<RecipeTensor, Bad> {
        let m = members(v, field, &["recipe", "shape"], &[])?;
        let recipe = read_recipe(&m["recipe"], &at(field, "recipe"))?;
        let shape_field = at(field, "shape");
        let shape = shape(&m["shape"], &shape_field)?;
        // Checked before anything is allocated: three sides below 2^64 can pass u128.
        let n = shape.iter().try_fold(1u128, |n, &d| n.checked_mul(u128::from(d)));
        if n.is_none_or(|n| n > u128::from(MAX_ELEMS)) {
            let [c, h, w] = shape;
            return bad(&shape_field, &format!("C·H·W = {c}·{h}·{w} is past 2^26"));
        }
        Ok(RecipeTensor { shape, recipe })
    }

    /// `C·H·W`, at most 2^26.
    pub fn elements(&self) -> u64 {
        self.shape.iter().product()
    }

    /// The tensor as a run takes it.
    pub fn given(&self) -> Given {
        Given {
            shape: self.shape,
            data: (0..self.elements()).map(|i| self.recipe.value(i)).collect(),
        }
    }

    /// The echo of a filled record: the recipe itself, canonical.
    pub fn echo(&self) -> J {
        J::obj(vec![("recipe", self.recipe.echo()), ("shape", shape_j(self.shape))])
    }
}

fn read_recipe(v: &Value, field: &str) -> Result<Recipe, Bad> {
    let m = members(v, field, &["generator", "range", "seed"], &[])?;
    let generator = at(field, "generator");
    if string(&m["generator"], &generator)? != "splitmix64" {
        return bad(&generator, "not \"splitmix64\"");
    }
    let seed_field = at(field, "seed");
    let Some(seed) = canon::parse_u64(int_str(&m["seed"], &seed_field)?) else {
        return bad(&seed_field, "not an integer in [0, 2^64)");
    };
    let range = at(field, "range");
    let bounds = array(&m["range"], &range)?;
    if bounds.len() != 2 {
        return bad(&range, "not two integers [lo, hi]");
    }
    let lo = Dec::parse(int_str(&bounds[0], &format!("{range}[0]"))?).expect("canonical");
    let hi = Dec::parse(int_str(&bounds[1], &format!("{range}[1]"))?).expect("canonical");
    if lo > hi {
        return bad(&range, "lo is above hi");
    }
    let Some(span) = Dec::sum(&[&hi, &lo.negated()])
        .to_i128()
        .and_then(|s| u64::try_from(s).ok())
    else {
        return bad(&range, "hi − lo is not below 2^64");
    };
    let base = match (lo.to_i128(), hi.to_i128(), lo.to_i256()) {
        (Some(lo), Some(_), _) => Base::Narrow(lo),
        (_, _, Some(lo)) => Base::Wide(lo),
        _ => Base::Past,
    };
    Ok(Recipe {
        seed,
        lo,
        hi,
        span,
        base,
    })
}

/// Whether a record is a scale record: any input tensor of any decode is a recipe.
pub fn is_scale(record: &Value) -> bool {
    let decodes = record.get("decodes").and_then(Value::as_array);
    decodes
        .into_iter()
        .flatten()
        .filter_map(|d| d.get("inputs").and_then(Value::as_array))
        .flatten()
        .any(|t| t.get("recipe").is_some())
}

/// An input tensor of a scale record: a recipe, since a record mixing recipes and written-out
/// tensors is a request error (docs/protocol.md, the scale tier).
pub fn read_input(v: &Value, field: &str) -> Result<RecipeTensor, Bad> {
    if v.is_object() && v.get("recipe").is_none() {
        return bad(
            field,
            "written out in a scale record, whose every input tensor is a recipe",
        );
    }
    RecipeTensor::read(v, field)
}

/// The SHA-256, lowercase hex, of a tensor's canonical `data` array: `[`, the elements as JSON
/// strings of canonical integers joined by `,`, then `]`, the bytes of the `data` member a
/// written-out tensor holds (docs/protocol.md, the scale tier, "Digests"). `T`'s `Display` must be
/// canonical.
pub fn data_sha256<T: Display>(data: &[T]) -> String {
    // Hashed in blocks: a written-out array of 2^26 elements is never formed.
    const BLOCK: usize = 1 << 16;
    let mut h = Sha256::new();
    let mut buf = String::with_capacity(BLOCK + 64);
    buf.push('[');
    for (i, v) in data.iter().enumerate() {
        if i > 0 {
            buf.push(',');
        }
        write!(buf, "\"{v}\"").expect("a String takes every write");
        if buf.len() >= BLOCK {
            h.update(buf.as_bytes());
            buf.clear();
        }
    }
    buf.push(']');
    h.update(buf.as_bytes());
    hex::encode(h.finalize())
}

/// One channel's sample positions `(y, x)`: `(0, 0)`, `(0, W−1)`, `(H−1, 0)`, `(H−1, W−1)`, each
/// once, none when `H·W = 0`.
fn sample_positions(h: u64, w: u64) -> Vec<(u64, u64)> {
    if h == 0 || w == 0 {
        return Vec::new();
    }
    let mut ps = Vec::with_capacity(4);
    for p in [(0, 0), (0, w - 1), (h - 1, 0), (h - 1, w - 1)] {
        if !ps.contains(&p) {
            ps.push(p);
        }
    }
    ps
}

/// Every sample of a `[C, H, W]` tensor as `(c, y, x, index)`, in ascending order of index.
fn samples_of(shape: [u64; 3]) -> Vec<(u64, u64, u64, u64)> {
    let [c, h, w] = shape;
    let ps = sample_positions(h, w);
    (0..c)
        .flat_map(|ch| ps.iter().map(move |&(y, x)| (ch, y, x, (ch * h + y) * w + x)))
        .collect()
}

/// The digest form from its parts: the data's SHA-256 and each sample's value.
fn digest_parts(shape: [u64; 3], sha256: String, samples: Vec<((u64, u64, u64, u64), J)>) -> J {
    let samples = samples
        .into_iter()
        .map(|((ch, y, x, _), v)| J::Arr(vec![J::int(ch), J::int(y), J::int(x), v]))
        .collect();
    J::obj(vec![
        ("samples", J::Arr(samples)),
        ("sha256", J::Str(sha256)),
        ("shape", shape_j(shape)),
    ])
}

/// The digest form `{"samples", "sha256", "shape"}` of an output tensor whose `data` holds `C·H·W`
/// elements in CHW order, as the canonical writer takes it.
pub fn digest_j<T: Display>(shape: [u64; 3], data: &[T]) -> J {
    let [c, h, w] = shape;
    assert_eq!(
        u128::from(c) * u128::from(h) * u128::from(w),
        data.len() as u128,
        "C·H·W elements"
    );
    let samples = samples_of(shape)
        .into_iter()
        .map(|s| (s, J::int(&data[s.3 as usize])))
        .collect();
    digest_parts(shape, data_sha256(data), samples)
}

/// The elements of a `data` array as a written-out line holds it, `["1","-2",…]`, each checked to
/// be a canonical integer string with nothing between them: exactly the bytes its digest is of.
pub fn data_elements(data: &[u8]) -> impl Iterator<Item = Result<&str, String>> {
    let body = data
        .strip_prefix(b"[")
        .and_then(|d| d.strip_suffix(b"]"))
        .ok_or_else(|| "not an array".to_string());
    let (body, bad_array) = match body {
        Ok(b) => (b, None),
        Err(e) => (&b""[..], Some(Err(e))),
    };
    let items = (!body.is_empty())
        .then(|| body.split(|&b| b == b','))
        .into_iter()
        .flatten();
    bad_array.into_iter().chain(items.enumerate().map(|(i, item)| {
        let text = item
            .strip_prefix(b"\"")
            .and_then(|t| t.strip_suffix(b"\""))
            .and_then(|t| std::str::from_utf8(t).ok())
            .filter(|t| canon::parse_int(t).is_some());
        text.ok_or_else(|| format!("data[{i}]: not a canonical integer string"))
    }))
}

/// The digest form of an output whose `data` array is given as written (`data_elements`), for
/// comparing an answer without parsing its elements into JSON values.
pub fn compact_data(shape: [u64; 3], data: &[u8]) -> Result<Value, String> {
    let samples = samples_of(shape);
    let mut wanted = samples.iter().peekable();
    let mut values = Vec::with_capacity(samples.len());
    let mut n = 0u64;
    for e in data_elements(data) {
        let e = e?;
        if wanted.peek().is_some_and(|s| s.3 == n) {
            values.push((*wanted.next().expect("peeked"), J::str(e)));
        }
        n += 1;
    }
    if u128::from(n) != shape.iter().map(|&d| u128::from(d)).product::<u128>() {
        let [c, h, w] = shape;
        return Err(format!("data: holds {n} elements, not C·H·W = {c}·{h}·{w}"));
    }
    Ok(value(digest_parts(shape, hex::encode(Sha256::digest(data)), values)))
}

/// Whether a written-out `data` array is the recipe's elements, one by one (none is formed).
pub fn echoes_data(recipe: &RecipeTensor, data: &[u8]) -> bool {
    let mut n = 0u64;
    for e in data_elements(data) {
        match e {
            Ok(e) if n < recipe.elements() && e == recipe.recipe.text(n) => n += 1,
            _ => return false,
        }
    }
    n == recipe.elements()
}

/// Writes a scale request's expansion (the graph-vector request it stands for: recipes written
/// out, computed fields dropped, but `profiles` kept when `with_profiles`, as an operator
/// implementation is given them) as one line, each recipe's elements written as they are
/// computed: the written-out request is never held. A record that does not expand is an
/// `InvalidData` error; any other error is the writer's.
pub fn write_expanded(request: &Value, with_profiles: bool, w: &mut dyn std::io::Write) -> std::io::Result<()> {
    write_expanded_digests(request, with_profiles, w).map(|_| ())
}

/// [`write_expanded`], returning the SHA-256 (lowercase hex) of each written-out input's `data`
/// array as written, per decode and input: what an answer that echoes its inputs holds, byte for
/// byte, in their places (so the grader tells an echo by its digest, [`echoes_data`] being the
/// same test element by element).
pub fn write_expanded_digests(
    request: &Value,
    with_profiles: bool,
    w: &mut dyn std::io::Write,
) -> std::io::Result<Vec<Vec<String>>> {
    let mut digests = Vec::new();
    let invalid = |e: String| std::io::Error::new(std::io::ErrorKind::InvalidData, e);
    let m = members(request, "", &["decodes", "graph", "id"], &["load", "profiles"]).map_err(invalid)?;
    let scale = is_scale(request);
    let decodes = array(&m["decodes"], "decodes").map_err(invalid)?;
    w.write_all(b"{\"decodes\":[")?;
    for (i, d) in decodes.iter().enumerate() {
        let field = format!("decodes[{i}]");
        let dm = members(d, &field, &["inputs", "scalars"], &["expect"]).map_err(invalid)?;
        let inputs_field = at(&field, "inputs");
        let inputs = array(&dm["inputs"], &inputs_field).map_err(invalid)?;
        w.write_all(if i > 0 { b",{\"inputs\":[" } else { b"{\"inputs\":[" })?;
        let mut these = Vec::new();
        for (k, t) in inputs.iter().enumerate() {
            if k > 0 {
                w.write_all(b",")?;
            }
            if !scale {
                serde_json::to_writer(&mut *w, t)?;
                continue;
            }
            let r = read_input(t, &format!("{inputs_field}[{k}]")).map_err(invalid)?;
            w.write_all(b"{\"data\":")?;
            // Written and hashed in blocks: the written-out array is never held.
            const BLOCK: usize = 1 << 16;
            let (mut h, mut buf) = (Sha256::new(), String::with_capacity(BLOCK + 64));
            buf.push('[');
            for n in 0..r.elements() {
                if n > 0 {
                    buf.push(',');
                }
                buf.push('"');
                r.recipe.push_text(n, &mut buf);
                buf.push('"');
                if buf.len() >= BLOCK {
                    w.write_all(buf.as_bytes())?;
                    h.update(buf.as_bytes());
                    buf.clear();
                }
            }
            buf.push(']');
            w.write_all(buf.as_bytes())?;
            h.update(buf.as_bytes());
            these.push(hex::encode(h.finalize()));
            write!(w, ",\"shape\":{}}}", serde_json::to_string(&shape_value(r.shape))?)?;
        }
        digests.push(these);
        write!(w, "],\"scalars\":{}}}", serde_json::to_string(&dm["scalars"])?)?;
    }
    let (graph, id) = (serde_json::to_string(&m["graph"])?, serde_json::to_string(&m["id"])?);
    write!(w, "],\"graph\":{graph},\"id\":{id}")?;
    match m.get("profiles") {
        Some(p) if with_profiles => writeln!(w, ",\"profiles\":{}}}", serde_json::to_string(p)?)?,
        _ => writeln!(w, "}}")?,
    }
    Ok(digests)
}

fn shape_j(shape: [u64; 3]) -> J {
    J::Arr(shape.iter().map(J::int).collect())
}

fn shape_value(shape: [u64; 3]) -> Value {
    Value::Array(shape.iter().map(|d| Value::String(d.to_string())).collect())
}

/// A canonical value as JSON.
fn value(j: J) -> Value {
    match j {
        J::Null => Value::Null,
        J::Bool(b) => Value::Bool(b),
        J::Str(s) => Value::String(s),
        J::Arr(a) => Value::Array(a.into_iter().map(value).collect()),
        J::Obj(m) => Value::Object(m.into_iter().map(|(k, v)| (k, value(v))).collect()),
    }
}
