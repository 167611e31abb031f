//! A tensor's value: a shape `[C, H, W]` and its elements in CHW order (§3).

use crate::plan::Shape;
use num_bigint::BigInt;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tensor {
    pub shape: Shape,
    pub data: Vec<BigInt>,
}

impl Tensor {
    /// The tensor whose element `(c, y, x)` is `f(c, y, x)`. The shape was
    /// planned, so its element count is within the caps.
    pub fn from_fn(shape: Shape, mut f: impl FnMut(usize, usize, usize) -> BigInt) -> Tensor {
        let (c, h, w) = (shape.c as usize, shape.h as usize, shape.w as usize);
        let mut data = Vec::with_capacity(c * h * w);
        for ci in 0..c {
            for y in 0..h {
                for x in 0..w {
                    data.push(f(ci, y, x));
                }
            }
        }
        Tensor { shape, data }
    }

    /// Every element equal to `v`.
    pub fn filled(shape: Shape, v: &BigInt) -> Tensor {
        Tensor::from_fn(shape, |_, _, _| v.clone())
    }

    pub fn c(&self) -> usize {
        self.shape.c as usize
    }
    pub fn h(&self) -> usize {
        self.shape.h as usize
    }
    pub fn w(&self) -> usize {
        self.shape.w as usize
    }

    /// The row-major position of element `(c, y, x)`: `(c·H + y)·W + x`.
    pub fn index(&self, c: usize, y: usize, x: usize) -> usize {
        (c * self.h() + y) * self.w() + x
    }

    /// Element `(c, y, x)`.
    pub fn at(&self, c: usize, y: usize, x: usize) -> &BigInt {
        &self.data[self.index(c, y, x)]
    }

    /// The same shape, each element mapped by `f`.
    pub fn map(&self, f: impl Fn(&BigInt) -> BigInt) -> Tensor {
        Tensor {
            shape: self.shape,
            data: self.data.iter().map(f).collect(),
        }
    }
}
