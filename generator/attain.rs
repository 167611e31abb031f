//! The `attain` recipe: the input that makes a `conv` or `conv_transpose` reach one end of
//! its accumulator's partial-sum interval (§8.2) at one output position.
//!
//! For the output channel (and, for `conv_transpose`, the residue) whose `A(K, b)` end is
//! the hull's, every tap of one output position reads the end of the input range that
//! pushes its term toward that end: `h` under a positive weight and `l` under a negative
//! one for the upper end, the other way round for the lower end. Every other element is 0
//! (or the range's end nearest 0). The coverage tool then checks that the end is reached.

use crate::value::*;
use num_bigint::BigInt;
use serde_json::Value;
use wai_oracle::plan::{self, Shape, Stage};
use wai_oracle::tensor::Tensor;
use wai_oracle::whg1::{Graph, Op, Placement};

pub fn input(g: &Graph, shape: Shape, v: &Value, path: &str) -> Result<Tensor, Fail> {
    let o = object(v, path)?;
    only(o, &["node", "end"], path)?;
    let index = u32_(member(o, "node", path)?, &format!("{path}.node"))? as usize;
    let upper = match string(member(o, "end", path)?, &format!("{path}.end"))? {
        "hi" => true,
        "lo" => false,
        other => return Err(format!("{path}.end: {other:?} is neither hi nor lo")),
    };
    let node = g
        .nodes
        .get(index)
        .ok_or_else(|| format!("{path}.node: no node {index}"))?;
    let (l, h) = g.tensors[node.inputs[0] as usize]
        .policy
        .range()
        .ok_or_else(|| format!("{path}: the input has no range"))?;
    if g.inputs.first().map(|i| i.tensor) != Some(node.inputs[0]) {
        return Err(format!("{path}: node {index} does not read input 0"));
    }
    let planned = plan::shapes(g, &[shape], Stage::Run { scalars: &[] }).map_err(|r| format!("{path}: {r}"))?;
    let out = planned[node.outputs[0] as usize];
    let rest = 0i64.clamp(l, h);
    let mut data = vec![BigInt::from(rest); shape.elems().unwrap_or(0) as usize];
    // The input that pushes weight w's term toward the chosen end.
    let pick = |w: i64| {
        BigInt::from(if (w > 0) == upper {
            h
        } else if w == 0 {
            rest
        } else {
            l
        })
    };
    let term = |w: i64| {
        let (w, l, h) = (i128::from(w), i128::from(l), i128::from(h));
        if upper {
            (w * h).max(w * l).max(0)
        } else {
            (w * h).min(w * l).min(0)
        }
    };
    let at = |c: usize, y: usize, x: usize| (c * shape.h as usize + y) * shape.w as usize + x;
    match &node.op {
        Op::Conv(p) => {
            let (cin, cout) = (shape.c as usize, p.cout as usize);
            let (cg, og) = (cin / p.groups as usize, cout / p.groups as usize);
            let (kh, kw) = (p.kh as usize, p.kw as usize);
            let taps = cg * kh * kw;
            let score = |o: usize| -> i128 {
                let b = p.rq.bias_at(Placement::Pre, o) as i128;
                let b = if upper { b.max(0) } else { b.min(0) };
                b + p.weights[o * taps..(o + 1) * taps]
                    .iter()
                    .map(|&w| term(w))
                    .sum::<i128>()
            };
            let best = (0..cout)
                .max_by_key(|&o| if upper { score(o) } else { -score(o) })
                .unwrap_or(0);
            let inside = |y: usize, x: usize| {
                let u0 = (y * p.sh as usize) as i128 - i128::from(p.ph);
                let v0 = (x * p.sw as usize) as i128 - i128::from(p.pw);
                u0 >= 0 && v0 >= 0 && u0 + kh as i128 <= shape.h as i128 && v0 + kw as i128 <= shape.w as i128
            };
            let (y, x) = positions(out)
                .find(|&(y, x)| inside(y, x))
                .ok_or_else(|| format!("{path}: no output position reads only the input"))?;
            for ci in 0..cg {
                for i in 0..kh {
                    for j in 0..kw {
                        let w = p.weights[((best * cg + ci) * kh + i) * kw + j];
                        let (u, v) = (
                            y * p.sh as usize + i - p.ph as usize,
                            x * p.sw as usize + j - p.pw as usize,
                        );
                        data[at((best / og) * cg + ci, u, v)] = pick(w);
                    }
                }
            }
        }
        Op::ConvTranspose(p) => {
            let (cin, cout, kh, kw) = (shape.c as usize, p.cout as usize, p.kh as usize, p.kw as usize);
            let (sh, sw) = (p.sh as usize, p.sw as usize);
            let w_at = |ci: usize, o: usize, i: usize, j: usize| p.weights[((ci * cout + o) * kh + i) * kw + j];
            let score = |o: usize, ry: usize, rx: usize| -> i128 {
                let b = p.rq.bias_at(Placement::Pre, o) as i128;
                let mut s = if upper { b.max(0) } else { b.min(0) };
                for ci in 0..cin {
                    for i in (ry..kh).step_by(sh) {
                        for j in (rx..kw).step_by(sw) {
                            s += term(w_at(ci, o, i, j));
                        }
                    }
                }
                s
            };
            // The output positions whose residue's taps all read inside the input.
            let source = |y: usize, pad: u32, i: usize, s: usize, n: u64| {
                let t = y as i128 + i128::from(pad) - i as i128;
                (t >= 0 && t % s as i128 == 0 && t / (s as i128) < n as i128).then(|| (t / s as i128) as usize)
            };
            let full = |y: usize, x: usize| {
                let (ry, rx) = ((y + p.ph as usize) % sh, (x + p.pw as usize) % sw);
                (ry..kh).step_by(sh).all(|i| source(y, p.ph, i, sh, shape.h).is_some())
                    && (rx..kw).step_by(sw).all(|j| source(x, p.pw, j, sw, shape.w).is_some())
            };
            let best = (0..cout)
                .flat_map(|o| positions(out).filter(|&(y, x)| full(y, x)).map(move |(y, x)| (o, y, x)))
                .max_by_key(|&(o, y, x)| {
                    let s = score(o, (y + p.ph as usize) % sh, (x + p.pw as usize) % sw);
                    if upper { s } else { -s }
                })
                .ok_or_else(|| format!("{path}: no output position reads a whole residue inside the input"))?;
            let (o, y, x) = best;
            let (ry, rx) = ((y + p.ph as usize) % sh, (x + p.pw as usize) % sw);
            for ci in 0..cin {
                for i in (ry..kh).step_by(sh) {
                    for j in (rx..kw).step_by(sw) {
                        let (u, v) = (
                            source(y, p.ph, i, sh, shape.h).unwrap_or(0),
                            source(x, p.pw, j, sw, shape.w).unwrap_or(0),
                        );
                        data[at(ci, u, v)] = pick(w_at(ci, o, i, j));
                    }
                }
            }
        }
        other => {
            return Err(format!(
                "{path}: attain is for conv and conv_transpose, not {}",
                other.name()
            ));
        }
    }
    Ok(Tensor { shape, data })
}

fn positions(s: Shape) -> impl Iterator<Item = (usize, usize)> {
    (0..s.h as usize).flat_map(move |y| (0..s.w as usize).map(move |x| (y, x)))
}
