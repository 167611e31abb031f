//! §5.10 Data movement. Each output element is one input element, found by the
//! table's definition read as a gather.

use crate::plan::Shape;
use crate::tensor::Tensor;
use num_bigint::BigInt;

/// The inputs' channels, in input order.
pub fn concat(xs: &[&Tensor], out: Shape) -> Tensor {
    let mut data = Vec::with_capacity(xs.iter().map(|x| x.data.len()).sum());
    for x in xs {
        data.extend_from_slice(&x.data);
    }
    Tensor { shape: out, data }
}

/// `out[c] = in[start + c]`.
pub fn split(x: &Tensor, start: usize, out: Shape) -> Tensor {
    Tensor::from_fn(out, |c, y, xo| x.at(start + c, y, xo).clone())
}

/// `out[c][h·r + i][w·r + j] = in[c·r² + i·r + j][h][w]`.
pub fn pixel_shuffle(x: &Tensor, r: usize, out: Shape) -> Tensor {
    Tensor::from_fn(out, |c, y, xo| {
        x.at(c * r * r + (y % r) * r + xo % r, y / r, xo / r).clone()
    })
}

/// `out[c·r² + i·r + j][h][w] = in[c][h·r + i][w·r + j]`.
pub fn pixel_unshuffle(x: &Tensor, r: usize, out: Shape) -> Tensor {
    Tensor::from_fn(out, |oc, h, w| {
        let (c, i, j) = (oc / (r * r), (oc % (r * r)) / r, oc % r);
        x.at(c, h * r + i, w * r + j).clone()
    })
}

/// `out[c][y][x] = in[c][min(y, H−1)][min(x, W−1)]`.
pub fn pad_rep(x: &Tensor, out: Shape) -> Tensor {
    Tensor::from_fn(out, |c, y, xo| x.at(c, y.min(x.h() - 1), xo.min(x.w() - 1)).clone())
}

/// `crop_to` and `crop`: `out[c][y][x] = in[c][y0 + y][x0 + x]` (`crop_to` at `(0, 0)`).
pub fn crop(x: &Tensor, y0: usize, x0: usize, out: Shape) -> Tensor {
    Tensor::from_fn(out, |c, y, xo| x.at(c, y0 + y, x0 + xo).clone())
}

/// The sub-position `(a, b)` that `order[k] = 2a + b` names.
fn sub_position(code: u8) -> (usize, usize) {
    (usize::from(code / 2), usize::from(code % 2))
}

/// `out_k[c][y][x] = in[c][2y + a_k][2x + b_k]`, with `(a_k, b_k) = order[k]`.
pub fn subpos_split(x: &Tensor, order: [u8; 4], out: Shape) -> Vec<Tensor> {
    order
        .iter()
        .map(|&code| {
            let (a, b) = sub_position(code);
            Tensor::from_fn(out, |c, y, xo| x.at(c, 2 * y + a, 2 * xo + b).clone())
        })
        .collect()
}

/// The inverse of `subpos_split` with the same order: output `(c, 2y + a_k, 2x + b_k)`
/// is `in_k[c][y][x]`.
pub fn subpos_merge(xs: &[&Tensor], order: [u8; 4], out: Shape) -> Tensor {
    let mut source = [0usize; 4]; // source[2a + b] = k
    for (k, &code) in order.iter().enumerate() {
        source[usize::from(code)] = k;
    }
    Tensor::from_fn(out, |c, y, x| {
        xs[source[(y % 2) * 2 + x % 2]].at(c, y / 2, x / 2).clone()
    })
}

/// Every element is the value.
pub fn fill(value: &BigInt, out: Shape) -> Tensor {
    Tensor::filled(out, value)
}
