//! `whm1/1` (§13.2): `WHM1` networks, over the project's JSON rendering of the form
//! (docs/protocol.md, *Lowerings*; docs/assumptions.md L3, PROVISIONAL). The network reader, the
//! range predicates `P_ℓ` with their binary search, the layers as operators and the RGB8 step are
//! shared by `wam1/1` (§13.3, [`Family::Wam1`], [`wam1`]), `wmb1/1` (§13.4, [`wmb1`]) and `world/1`
//! (§13.5, [`world`]).
//!
//! A network is `{ "afrac", "gf", "shift", "layers": [ … ] }`, each layer `{ "tag", … }`:
//!
//! | tag | members | lowered to |
//! |---|---|---|
//! | 0 | `c`, `out`, `k`, `stride`, `pad`, `opad`, `weights` `i16 [c][out][k][k]` (`[c][out][k]` in WAM1), `mult` `i64 [out]`, `bias` `i64 [out]` | `conv_transpose` |
//! | 1 | `c`, `out`, `k`, `stride`, `pad`, `weights` `i16 [out][c][k][k]`, `mult`, `bias` (WHM1 only) | `conv`, `groups = 1` |
//! | 2 | `c`, `gamma` `i32 [c][c]`, `beta` `i64 [c]` | `igdn(gf, afrac)` |
//! | 3 | none | `relu` |
//! | 4 | `slope_q` `i64`, `slope_frac` | `leaky(slope_q, slope_frac)` |
//!
//! The `RQ` of tags 0 and 1: one multiplier per channel (`m_bytes` 8), the header's one shift, a
//! `post` bias per channel (`b_bytes` 8), `floor`; weights `w_bytes` 2, `γ` `g_bytes` 4 (§13.0).
//!
//! **Load checks** (`model_mismatch`, integer-payloads §7 as §13.2 lists them): `shift < 128`,
//! `gf < 128`, `afrac ∈ 1..=30`, `slope_frac < 64`; the lengths against the running channel count;
//! values within the form's widths (L3); every `WHG1` field within its width (L1); `P_ℓ(0)`; the
//! caps and the certificate (the caller's, on the lowered bytes).
//!
//! **Method.** `P_ℓ` is evaluated exactly in `U256` (every value it forms is below `2^240`: the
//! term count `c·k·k < 2^96`, `Wm ≤ 2^15`, `X ≤ 2^63`, `Mm ≤ 2^63`), and `isqrt` of `N ≤ 2^127 − 1`
//! in `u128` bit by bit; `X_ℓ` is the literal binary search on `[0, 2^63]` of §13.2.

pub mod wam1;
pub mod wmb1;
pub mod world;

use super::form::{Form, clamp_params, opcode};
use super::source::{self, I16, I32, I64, R, U32, refuse};
use crate::whg1::write::{P, RqW};
use ethnum::U256;
use serde_json::{Map, Value};

/// The form a network is read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// `WHM1`: tensors `[C, H, W]`.
    Whm1,
    /// `WAM1` (§13.3): tensors `[C, 1, T]`; tag 0 is one-dimensional and its term count `c·k`.
    Wam1,
}

#[derive(Clone, Copy, Debug)]
pub struct Header {
    pub afrac: u32,
    pub gf: u32,
    pub shift: u32,
}

/// A convolution layer's fields (tags 0 and 1).
#[derive(Clone, Debug)]
pub struct ConvLayer {
    pub c: u64,
    pub out: u64,
    pub k: u64,
    pub stride: u64,
    pub pad: u64,
    /// Tag 0 only (0 for tag 1).
    pub opad: u64,
    pub weights: Vec<i64>,
    pub mult: Vec<i64>,
    pub bias: Vec<i64>,
}

#[derive(Clone, Debug)]
pub enum Layer {
    /// Tag 0.
    ConvT(ConvLayer),
    /// Tag 1.
    Conv(ConvLayer),
    /// Tag 2.
    Igdn { c: u64, gamma: Vec<i64>, beta: Vec<i64> },
    /// Tag 3.
    Relu,
    /// Tag 4.
    Leaky { slope_q: i64, slope_frac: u32 },
}

/// A network, read and checked.
#[derive(Clone, Debug)]
pub struct Net {
    pub header: Header,
    pub layers: Vec<Layer>,
    /// `x_0`'s channel count: the input channel count of the first layer of tag 0, 1 or 2.
    pub in_channels: u64,
    /// The channel count of the last layer's output.
    pub out_channels: u64,
}

/// A dimension of a `WHG1` `u32` field that must be at least 1 (`c`, `out`, `k`, `stride`).
fn dim(m: &Map<String, Value>, key: &str, what: &str) -> R<u64> {
    let v = source::int_member(m, key, 1, U32.1, what)?;
    Ok(v as u64)
}

/// A padding: a `u32` field.
fn pad(m: &Map<String, Value>, key: &str, what: &str) -> R<u64> {
    Ok(source::int_member(m, key, U32.0, U32.1, what)? as u64)
}

fn conv_layer(m: &Map<String, Value>, tag: i128, family: Family, what: &str) -> R<ConvLayer> {
    let (c, out, k, stride) = (
        dim(m, "c", what)?,
        dim(m, "out", what)?,
        dim(m, "k", what)?,
        dim(m, "stride", what)?,
    );
    let p = pad(m, "pad", what)?;
    let opad = if tag == 0 { pad(m, "opad", what)? } else { 0 };
    let dims: Vec<u64> = match (tag, family) {
        (0, Family::Whm1) => vec![c, out, k, k],
        (0, Family::Wam1) => vec![c, out, k],
        _ => vec![out, c, k, k],
    };
    let at = |key: &str| format!("{what}.{key}");
    let weights = source::nested(source::member(m, "weights", what)?, &dims, I16.0, I16.1, &at("weights"))?;
    let mult = source::nested(source::member(m, "mult", what)?, &[out], I64.0, I64.1, &at("mult"))?;
    let bias = source::nested(source::member(m, "bias", what)?, &[out], I64.0, I64.1, &at("bias"))?;
    Ok(ConvLayer {
        c,
        out,
        k,
        stride,
        pad: p,
        opad,
        weights,
        mult,
        bias,
    })
}

fn layer(v: &Value, family: Family, what: &str) -> R<Layer> {
    let m = source::object(v, what)?;
    let tag = source::int_member(m, "tag", I64.0, I64.1, what)?;
    Ok(match tag {
        0 => Layer::ConvT(conv_layer(m, 0, family, what)?),
        // L3: WAM1's tags are 0, 2, 3 and 4 (§13.3 names no tag 1).
        1 if family == Family::Whm1 => Layer::Conv(conv_layer(m, 1, family, what)?),
        2 => {
            let c = dim(m, "c", what)?;
            let gamma = source::nested(
                source::member(m, "gamma", what)?,
                &[c, c],
                I32.0,
                I32.1,
                &format!("{what}.gamma"),
            )?;
            let beta = source::nested(
                source::member(m, "beta", what)?,
                &[c],
                I64.0,
                I64.1,
                &format!("{what}.beta"),
            )?;
            Layer::Igdn { c, gamma, beta }
        }
        3 => Layer::Relu,
        4 => Layer::Leaky {
            slope_q: source::int_member(m, "slope_q", I64.0, I64.1, what)? as i64,
            slope_frac: source::int_member(m, "slope_frac", 0, 63, what)? as u32,
        },
        _ => return refuse(format!("{what}.tag: {tag} is not a tag of the form")),
    })
}

/// Reads one network and makes its load checks, except the caps and the certificate.
pub fn read(v: &Value, family: Family, what: &str) -> R<Net> {
    let m = source::object(v, what)?;
    let header = Header {
        afrac: source::int_member(m, "afrac", 1, 30, what)? as u32,
        gf: source::int_member(m, "gf", 0, 127, what)? as u32,
        shift: source::int_member(m, "shift", 0, 127, what)? as u32,
    };
    let layers = source::array(source::member(m, "layers", what)?, &format!("{what}.layers"))?
        .iter()
        .enumerate()
        .map(|(i, l)| layer(l, family, &format!("{what}.layers[{i}]")))
        .collect::<R<Vec<_>>>()?;
    // x_0's channels: the first layer of tag 0, 1 or 2 declares them (§13.2).
    let Some(in_channels) = layers.iter().find_map(|l| match l {
        Layer::ConvT(p) | Layer::Conv(p) => Some(p.c),
        Layer::Igdn { c, .. } => Some(*c),
        _ => None,
    }) else {
        return refuse(format!("{what}: no layer of tag 0, 1 or 2 declares the input channels"));
    };
    // The lengths against the running channel count.
    let mut running = in_channels;
    for (i, l) in layers.iter().enumerate() {
        let (c, next) = match l {
            Layer::ConvT(p) | Layer::Conv(p) => (p.c, p.out),
            Layer::Igdn { c, .. } => (*c, *c),
            Layer::Relu | Layer::Leaky { .. } => (running, running),
        };
        if c != running {
            return refuse(format!(
                "{what}.layers[{i}].c: {c}, not the running channel count {running}"
            ));
        }
        running = next;
    }
    Ok(Net {
        header,
        layers,
        in_channels,
        out_channels: running,
    })
}

/// `2^63 − 1`.
fn i64_max() -> U256 {
    U256::from(i64::MAX as u64)
}

/// `2^127 − 1`.
fn i128_max() -> U256 {
    U256::from(i128::MAX as u128)
}

/// The largest magnitude of a field (0 for an empty one), exactly: `|i64::MIN| = 2^63`.
fn max_mag(v: &[i64]) -> U256 {
    U256::from(v.iter().map(|x| x.unsigned_abs()).max().unwrap_or(0))
}

/// `isqrt(n)` (§2): the largest `r` with `r² ≤ n`, bit by bit.
pub fn isqrt(n: u128) -> u128 {
    let mut r: u128 = 0;
    for b in (0..64).rev() {
        let t = r | (1u128 << b);
        // t ≤ 2^64 − 1, so t² fits u128.
        if t.checked_mul(t).is_some_and(|sq| sq <= n) {
            r = t;
        }
    }
    r
}

/// `P_ℓ` of one layer (§13.2's table; §13.3's term count for WAM1's tag 0), as a closure over `X`,
/// or `None` for a layer that has no range check (tag 3). The conditions keep §13.2's form
/// (`… + 1 ≤ I64`).
#[allow(clippy::int_plus_one)]
pub fn predicate(l: &Layer, h: Header, family: Family) -> Option<Box<dyn Fn(U256) -> bool>> {
    let i64m = i64_max();
    let i128m = i128_max();
    match l {
        Layer::ConvT(p) | Layer::Conv(p) => {
            let (pc, pk) = (U256::from(p.c), U256::from(p.k));
            let terms = match (l, family) {
                (Layer::ConvT(_), Family::Wam1) => fault!("wam1-terms-k-squared", pc * pk, pc * pk * pk),
                _ => pc * pk * pk,
            };
            let (wm, mm, bm) = (max_mag(&p.weights), max_mag(&p.mult), max_mag(&p.bias));
            let shift = h.shift;
            Some(Box::new(move |x: U256| {
                let a = terms * wm * x;
                let one = fault!("whm1-range-no-plus-one", 1, 0);
                a <= i64m && ((a * mm) >> shift) + one + bm <= i64m
            }))
        }
        Layer::Igdn { c, gamma, beta } => {
            let (g, bb, c) = (max_mag(gamma), max_mag(beta), U256::from(*c));
            let (gf, afrac) = (h.gf, h.afrac);
            Some(Box::new(move |x: U256| {
                let gx2 = g * x * x;
                if gx2 > i128m {
                    return false;
                }
                let n = fault!("whm1-igdn-n-minus-one", bb + c * ((gx2 >> gf) + 1), {
                    // N = Bb + c·(⌊G·X²/2^gf⌋ − 1), and isqrt(max(0, N)).
                    let plus = bb + c * (gx2 >> gf);
                    if plus >= c { plus - c } else { U256::from(0u8) }
                });
                if n > i128m {
                    return false;
                }
                let r = U256::from(isqrt(n.as_u128()));
                r <= i64m && ((x * r) >> afrac) + 1 <= i64m
            }))
        }
        Layer::Leaky { slope_q, .. } => {
            let q = U256::from(slope_q.unsigned_abs());
            Some(Box::new(move |x: U256| x * q <= i64m))
        }
        Layer::Relu => None,
    }
}

/// `X_ℓ`: the largest `X ∈ [0, 2^63]` with `P(X)`, by binary search (`P` holds at every `X` below
/// one where it holds); `None` when `P(0)` fails.
pub fn largest(p: &dyn Fn(U256) -> bool) -> Option<u128> {
    if !p(U256::ZERO) {
        return None;
    }
    let top: u128 = 1 << 63;
    if p(U256::from(top)) {
        return Some(top);
    }
    // P(lo) holds and P(hi) fails.
    let (mut lo, mut hi) = (0u128, top);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if p(U256::from(mid)) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some(fault!("whm1-range-one-past", lo, hi))
}

/// The `check` range `[−X, min(X, I64)]` of an `X ∈ [0, 2^63]`.
pub fn check_range(x: u128) -> (i64, i64) {
    let lo = if x == 1 << 63 { i64::MIN } else { -(x as i64) };
    (lo, x.min(i64::MAX as u128) as i64)
}

/// The `RQ` of tags 0 and 1.
fn rq(p: &ConvLayer, h: Header) -> RqW {
    RqW {
        round: 0,
        bias: 2,
        m_kind: 2,
        s_kind: 1,
        m_bytes: 8,
        b_bytes: 8,
        mult: p.mult.clone(),
        shift: vec![h.shift as u8],
        bias_v: p.bias.clone(),
    }
}

/// Appends the network's layers to `f`, reading `x0` (the tensor that holds `x_0`), with §13.2's
/// range checks: each `x_ℓ` read by a layer of tag 0, 1, 2 or 4 gets `check [−X_ℓ, min(X_ℓ, I64)]`,
/// and `x_0` read by a layer of tag 3 gets `check [−2^63, I64]`. Returns the last layer's output
/// (`x0` itself for a network of no layers, which [`read`] refuses). Fails when a `P_ℓ(0)` fails.
pub fn append(f: &mut Form, net: &Net, x0: usize, family: Family) -> R<usize> {
    let h = net.header;
    let mut x = x0;
    for (i, l) in net.layers.iter().enumerate() {
        match predicate(l, h, family) {
            Some(p) => {
                let Some(xl) = largest(&*p) else {
                    return refuse(format!("layer {i}: P_ℓ(0) fails"));
                };
                let (lo, hi) = check_range(xl);
                f.check(x, lo, hi);
            }
            // A network input that no layer of tag 0, 1, 2 or 4 reads: check [−2^63, I64].
            None if i == 0 => f.check(x, i64::MIN, i64::MAX),
            None => {}
        }
        let c = f.channels(x);
        x = match l {
            Layer::ConvT(p) => {
                let u = |v: u64| v as u32;
                let (kh, kw, sh, sw, ph, pw, oph, opw) = match family {
                    Family::Whm1 => (p.k, p.k, p.stride, p.stride, p.pad, p.pad, p.opad, p.opad),
                    Family::Wam1 => (1, p.k, 1, p.stride, 0, p.pad, 0, p.opad),
                };
                let params = P::new()
                    .u32(u(p.out))
                    .u32(u(kh))
                    .u32(u(kw))
                    .u32(u(sh))
                    .u32(u(sw))
                    .u32(u(ph))
                    .u32(u(pw))
                    .u32(u(oph))
                    .u32(u(opw))
                    .u8(2)
                    .zeros(3);
                let params = rq(p, h).write(params).ints(&p.weights, 2).bytes();
                f.op1(opcode::CONV_TRANSPOSE, &[x], p.out, params)
            }
            Layer::Conv(p) => {
                let (k, s, pd) = (p.k as u32, p.stride as u32, p.pad as u32);
                let params = P::new()
                    .u32(p.out as u32)
                    .u32(k)
                    .u32(k)
                    .u32(s)
                    .u32(s)
                    .u32(pd)
                    .u32(pd)
                    .u32(1)
                    .u8(2)
                    .zeros(3);
                let params = rq(p, h).write(params).ints(&p.weights, 2).bytes();
                f.op1(opcode::CONV, &[x], p.out, params)
            }
            Layer::Igdn { gamma, beta, .. } => {
                let params = P::new()
                    .u32(h.gf)
                    .u32(h.afrac)
                    .u8(4)
                    .zeros(7)
                    .ints(gamma, 4)
                    .ints(beta, 8)
                    .bytes();
                f.op1(opcode::IGDN, &[x], c, params)
            }
            Layer::Relu => f.op1(opcode::RELU, &[x], c, vec![]),
            Layer::Leaky { slope_q, slope_frac } => {
                let params = P::new().i64(*slope_q).u32(*slope_frac).bytes();
                f.op1(opcode::LEAKY, &[x], c, params)
            }
        };
    }
    Ok(x)
}

/// A whole `whm1/1` or `wam1/1` graph's start: input 0 is `x_0`, sizes per decode; its range is
/// set by [`append`].
pub fn graph(f: &mut Form, net: &Net, family: Family) -> R<usize> {
    let x0 = f.input(net.in_channels, i64::MIN, i64::MAX, 0, 0);
    append(f, net, x0, family)
}

/// The RGB8 step (§13.0): `clamp(0, 2^afrac)`, then `rescale` with one multiplier 255 (`m_bytes`
/// 4), one shift `afrac`, no bias and `half_up`.
pub fn rgb8(f: &mut Form, x: usize, afrac: u32) -> usize {
    let c = f.channels(x);
    let y = f.op1(opcode::CLAMP, &[x], c, clamp_params(0, 1 << afrac));
    f.op1(opcode::RESCALE, &[y], c, rescale_const(255, afrac))
}

/// `rescale` with one constant multiplier (`m_bytes` 4), one shift, no bias, `half_up`.
pub fn rescale_const(m: i64, shift: u32) -> Vec<u8> {
    RqW {
        round: fault!("rgb8-half-even", 1, 2), // half_up
        bias: 0,
        m_kind: 1,
        s_kind: 1,
        m_bytes: 4,
        b_bytes: 0,
        mult: vec![m],
        shift: vec![shift as u8],
        bias_v: vec![],
    }
    .write(P::new())
    .bytes()
}

/// `whm1/1` for a capability: its networks by role, in §13.0's order, the last (`g_s`) with the RGB8
/// step. `roles` lists the roles the capability has (`int_hyper` and `wai.video.int_hyper`'s
/// keyframe: `h_s`, `g_s`; `splat`: `g_s`), each of which the set must hold; a member the capability
/// has no role for is not read (docs/assumptions.md L3).
pub fn lower(file: &[u8], roles: &[&str]) -> R<Vec<(String, Vec<u8>)>> {
    let doc = source::parse(file, "whm1.json")?;
    let top = source::object(&doc, "whm1.json")?;
    let mut out = Vec::new();
    for &role in roles {
        let Some(v) = top.get(role) else {
            return refuse(format!("whm1.json.{role}: missing"));
        };
        let net = read(v, Family::Whm1, role)?;
        let mut f = Form::new();
        let mut x = graph(&mut f, &net, Family::Whm1)?;
        if role == "g_s" {
            x = rgb8(&mut f, x, net.header.afrac);
        }
        out.push((role.to_string(), f.bytes(&[x])?));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conv(c: u64, k: u64, wm: i64, mm: i64, bm: i64) -> Layer {
        Layer::Conv(ConvLayer {
            c,
            out: 1,
            k,
            stride: 1,
            pad: 0,
            opad: 0,
            weights: vec![wm],
            mult: vec![mm],
            bias: vec![bm],
        })
    }

    const H: Header = Header {
        afrac: 8,
        gf: 0,
        shift: 0,
    };

    fn x_of(l: &Layer, h: Header, fam: Family) -> Option<u128> {
        largest(&*predicate(l, h, fam).unwrap())
    }

    #[test]
    fn isqrt_is_the_floor_root() {
        assert_eq!(isqrt(0), 0);
        assert_eq!(isqrt(3), 1);
        assert_eq!(isqrt(4), 2);
        assert_eq!(isqrt(u128::MAX), u64::MAX as u128);
        assert_eq!(isqrt(i128::MAX as u128), 13_043_817_825_332_782_212);
    }

    #[test]
    fn conv_boundary_is_where_p_stops_holding() {
        // c = k = 1, Wm = 2, Mm = 1, Bm = 0, shift 0: P(X) is 2X ≤ I64 and 2X + 1 ≤ I64.
        // The second binds: 2X ≤ 2^63 − 2, so X_ℓ = 2^62 − 1.
        let l = conv(1, 1, 2, 1, 0);
        let x = x_of(&l, H, Family::Whm1).unwrap();
        assert_eq!(x, (1 << 62) - 1);
        let p = predicate(&l, H, Family::Whm1).unwrap();
        assert!(p(U256::from(x)) && !p(U256::from(x + 1)));
        // Term count c·k·k = 2·3·3 = 18, Wm = 7, Mm = 3, shift 2, Bm = 5: 126X ≤ I64, and
        // ⌊378X/4⌋ + 6 ≤ I64 ⇔ 378X ≤ 2^65 − 25. The first binds: X_ℓ = ⌊I64/126⌋
        // = 73_201_365_371_863_300 (the second allows up to 97_601_820_495_817_733).
        let h = Header { shift: 2, ..H };
        let x = x_of(&conv(2, 3, 7, 3, 5), h, Family::Whm1).unwrap();
        assert_eq!(x, 73_201_365_371_863_300);
        let p = predicate(&conv(2, 3, 7, 3, 5), h, Family::Whm1).unwrap();
        assert!(p(U256::from(x)) && !p(U256::from(x + 1)));
    }

    #[test]
    fn wam1_tag0_counts_c_k_terms() {
        // §13.3: the term count of tag 0 is c·k, not c·k·k. c = 2, k = 4, Wm = 1864, Mm = 64,
        // Bm = 100, shift 6: 14912X ≤ I64 ⇔ X ≤ ⌊I64/14912⌋ = 618_520_120_497_235, and
        // ⌊14912X·64/64⌋ + 101 ≤ I64 holds there too (618_520_120_497_235·14912 = I64 − 4767).
        let l = Layer::ConvT(ConvLayer {
            c: 2,
            out: 1,
            k: 4,
            stride: 2,
            pad: 1,
            opad: 0,
            weights: vec![-1864],
            mult: vec![64],
            bias: vec![100],
        });
        let h = Header {
            afrac: 10,
            gf: 12,
            shift: 6,
        };
        assert_eq!(x_of(&l, h, Family::Wam1), Some(618_520_120_497_235));
        // As a WHM1 layer the term count is 2·4·4 = 32: X ≤ ⌊I64/(32·1864)⌋.
        assert_eq!(x_of(&l, h, Family::Whm1), Some(i64::MAX as u128 / (32 * 1864)));
    }

    #[test]
    fn p_fails_at_zero_for_a_bias_of_i64() {
        // ⌊0⌋ + 1 + (2^63 − 1) > I64: refused (§13.2; §15.3 item 3).
        assert_eq!(x_of(&conv(1, 1, 1, 1, i64::MAX), H, Family::Whm1), None);
        // A bias of 2^63 − 2 holds only at X = 0 when Wm·Mm ≥ 1.
        assert_eq!(x_of(&conv(1, 1, 1, 1, i64::MAX - 1), H, Family::Whm1), Some(0));
    }

    #[test]
    fn leaky_and_igdn() {
        // Tag 4: X·|slope_q| ≤ I64. slope_q = −5: X = ⌊I64/5⌋; slope_q = 0: X = 2^63.
        let lk = |q| Layer::Leaky {
            slope_q: q,
            slope_frac: 3,
        };
        assert_eq!(x_of(&lk(-5), H, Family::Whm1), Some(i64::MAX as u128 / 5));
        assert_eq!(x_of(&lk(0), H, Family::Whm1), Some(1 << 63));
        assert_eq!(check_range(1 << 63), (i64::MIN, i64::MAX));
        // Tag 2 with c = 1, G = 1, Bb = 0, gf = 0, afrac = 8: N = X² + 1, isqrt(N) = X for X ≥ 1;
        // G·X² ≤ I128 gives X ≤ isqrt(I128) = 13_043_817_825_332_782_212 (> 2^63), so the last
        // condition binds: ⌊X²/256⌋ + 1 ≤ I64 ⇔ X² < 256·(2^63 − 1) ⇔ X² ≤ 2^71 − 257, and
        // isqrt(2^71 − 257) = isqrt(2^71 − 1) = 48_592_007_999 (48_592_008_000² > 2^71).
        let g = Layer::Igdn {
            c: 1,
            gamma: vec![1],
            beta: vec![0],
        };
        assert_eq!(x_of(&g, H, Family::Whm1), Some(isqrt((1 << 71) - 1)));
        assert_eq!(isqrt((1 << 71) - 1), 48_592_007_999);
    }

    #[test]
    fn load_checks_refuse() {
        let net = |s: &str| -> R<Net> {
            let v: Value = serde_json::from_str(s).unwrap();
            read(&v, Family::Whm1, "g_s")
        };
        let ok = r#"{"afrac":8,"gf":0,"shift":4,"layers":[{"tag":1,"c":1,"out":1,"k":1,"stride":1,"pad":0,"weights":[[[[2]]]],"mult":[3],"bias":[1]}]}"#;
        assert!(net(ok).is_ok());
        // shift < 128, gf < 128, afrac in 1..=30.
        assert!(net(&ok.replace(r#""shift":4"#, r#""shift":128"#)).is_err());
        assert!(net(&ok.replace(r#""gf":0"#, r#""gf":128"#)).is_err());
        assert!(net(&ok.replace(r#""afrac":8"#, r#""afrac":0"#)).is_err());
        assert!(net(&ok.replace(r#""afrac":8"#, r#""afrac":31"#)).is_err());
        // Weights are i16.
        assert!(net(&ok.replace("[[[[2]]]]", "[[[[32768]]]]")).is_err());
        // No layer of tag 0, 1 or 2.
        assert!(net(r#"{"afrac":8,"gf":0,"shift":4,"layers":[{"tag":3}]}"#).is_err());
        // slope_frac < 64.
        let leaky = |f: u32| {
            ok.replace(
                r#""bias":[1]}]"#,
                &format!(r#""bias":[1]}},{{"tag":4,"slope_q":1,"slope_frac":{f}}}]"#),
            )
        };
        assert!(net(&leaky(63)).is_ok());
        assert!(net(&leaky(64)).is_err());
        // The lengths against the running channel count: an igdn of 2 channels after 1.
        let igdn = ok.replace(
            r#""bias":[1]}]"#,
            r#""bias":[1]},{"tag":2,"c":2,"gamma":[[1,0],[0,1]],"beta":[1,1]}]"#,
        );
        assert!(net(&igdn).is_err());
        // An unknown tag; and tag 1 in WAM1 (L3).
        assert!(net(&ok.replace(r#""tag":1"#, r#""tag":5"#)).is_err());
        let v: Value = serde_json::from_str(ok).unwrap();
        assert!(read(&v, Family::Wam1, "g_s").is_err());
    }
}
