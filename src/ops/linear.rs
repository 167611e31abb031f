//! §5.2 `conv` and §5.3 `conv_transpose`, transcribed as sums over taps, each sum formed by
//! `mac::dot` (exact: checked `i128`, `BigInt` past it).

use super::mac::{self, Form, Operand, Run};
use super::observe::Observer;
use super::rq::rq_each;
use crate::plan::Shape;
use crate::tensor::Tensor;
use crate::whg1::{Conv, ConvTranspose};
use num_bigint::BigInt;
use std::ops::Range;

/// The taps `i < k` whose input row (or column) `y·s + i − p` lies in `[0, n)`. `X̃` is 0 outside
/// the plane, so the other taps add 0 to the sum and are left out of it.
fn inside(y: usize, s: u32, p: u32, k: usize, n: usize) -> Range<usize> {
    let first = (y * s as usize) as i128 - i128::from(p); // the row tap 0 reads
    let lo = (-first).clamp(0, k as i128);
    let hi = (n as i128 - first).clamp(lo, k as i128);
    lo as usize..hi as usize
}

/// §5.2: `acc[o][y][x] = Σ_ci Σ_i Σ_j Wt[o][ci][i][j]·X̃[⌊o/og⌋·cg + ci][y·sh + i − ph][x·sw + j − pw]`,
/// then `rq_o`.
pub fn conv(p: &Conv, x: &Tensor, out: Shape, obs: &mut dyn Observer) -> Tensor {
    conv_in(Form::Checked, p, x, out, obs)
}

/// [`conv`], its sums formed in `form`.
pub fn conv_in(form: Form, p: &Conv, x: &Tensor, out: Shape, obs: &mut dyn Observer) -> Tensor {
    let cg = x.c() / p.groups as usize;
    let og = p.cout as usize / p.groups as usize;
    let (kh, kw) = (p.kh as usize, p.kw as usize);
    let (sh, sw, ph, pw) = (p.sh as usize, p.sw as usize, p.ph as usize, p.pw as usize);
    let wt = |o: usize, ci: usize, i: usize, j: usize| ((o * cg + ci) * kh + i) * kw + j;
    let (w, xs) = (Operand::weights(&p.weights), Operand::tensor(x, form));
    let acc = mac::planes(out, |o, y, xo| {
        let (rows, cols) = (inside(y, p.sh, p.ph, kh, x.h()), inside(xo, p.sw, p.pw, kw, x.w()));
        if rows.is_empty() || cols.is_empty() {
            return BigInt::ZERO; // the window lies wholly in the padding
        }
        let (j0, n) = (cols.start, cols.len());
        // For each input channel and kernel row, the taps `j ∈ cols` are a run: weights and
        // inputs each 1 apart. In the plane, y·sh + i ≥ ph and x·sw + j ≥ pw.
        let runs = (0..cg).flat_map(move |ci| {
            let c = (o / og) * cg + ci;
            rows.clone().map(move |i| Run {
                a0: wt(o, ci, i, j0),
                da: 1,
                b0: x.index(c, y * sh + i - ph, xo * sw + j0 - pw),
                db: 1,
                n,
            })
        });
        mac::dot(&w, &xs, runs)
    });
    rq_each("conv.acc", &p.rq, out, acc, obs)
}

/// §5.3, the gather form: `acc[o][y][x] = Σ Wt[ci][o][i][j]·X[ci][ty/sh][tx/sw]` over the
/// taps with `ty = y + ph − i ≥ 0`, `ty mod sh = 0`, `ty/sh < H`, and likewise for `tx`;
/// then `rq_o`. A position no tap reaches holds `rq_o(0)`.
pub fn conv_transpose(p: &ConvTranspose, x: &Tensor, out: Shape, obs: &mut dyn Observer) -> Tensor {
    let (cout, kh, kw) = (p.cout as usize, p.kh as usize, p.kw as usize);
    let wt = |ci: usize, o: usize, i: usize, j: usize| ((ci * cout + o) * kh + i) * kw + j;
    // The input row (or column) tap `i` reads at output position `y`, if any.
    let source = |y: usize, pad: u32, i: usize, stride: u32, n: usize| -> Option<usize> {
        let t = (y as i128) + i128::from(pad) - (i as i128);
        let s = i128::from(stride);
        (t >= 0 && t % s == 0 && t / s < n as i128).then(|| (t / s) as usize)
    };
    // Planned once: the taps `(i, u)` each output row receives, and `(j, v)` each output column.
    let taps = |n_out: u64, pad: u32, k: usize, stride: u32, n: usize| -> Vec<Vec<(usize, usize)>> {
        (0..n_out as usize)
            .map(|y| {
                (0..k)
                    .filter_map(|i| source(y, pad, i, stride, n).map(|u| (i, u)))
                    .collect()
            })
            .collect()
    };
    let rows = taps(out.h, p.ph, kh, p.sh, x.h());
    let cols = taps(out.w, p.pw, kw, p.sw, x.w());
    let (w, xs) = (Operand::weights(&p.weights), Operand::tensor(x, Form::Checked));
    let acc = mac::planes(out, |o, y, xo| {
        let (rows, cols) = (&rows[y], &cols[xo]);
        let runs = (0..x.c()).flat_map(move |ci| {
            rows.iter().flat_map(move |&(i, u)| {
                cols.iter()
                    .map(move |&(j, v)| Run::one(wt(ci, o, i, j), x.index(ci, u, v)))
            })
        });
        mac::dot(&w, &xs, runs)
    });
    rq_each("convT.acc", &p.rq, out, acc, obs)
}

#[cfg(test)]
mod tests {
    use super::inside;

    #[test]
    fn inside_is_the_taps_that_read_the_plane() {
        for (s, p, k, n) in [
            (1, 1, 3, 5),
            (2, 1, 3, 4),
            (1, 0, 1, 1),
            (3, 4, 7, 2),
            (1, 6, 3, 2),
            (2, 0, 5, 9),
        ] {
            for y in 0..12 {
                let want: Vec<usize> = (0..k)
                    .filter(|&i| (0..n as i128).contains(&((y * s + i) as i128 - p as i128)))
                    .collect();
                let got: Vec<usize> = inside(y, s as u32, p as u32, k, n).collect();
                assert_eq!(got, want, "y {y} s {s} p {p} k {k} n {n}");
            }
        }
    }
}
