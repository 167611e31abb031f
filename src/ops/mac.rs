//! The sums of products of §5.2, §5.3 and §5.9 (`conv`, `conv_transpose`, `gram`, `apply`), in a
//! checked small form.
//!
//! Each operator names, for every output element, the terms `a·b` its formula sums, as [`Run`]s of
//! indices into its two operands; [`dot`] forms that sum. It forms it in `i128` from `i64`
//! operands, every product with `checked_mul` and every partial sum with `checked_add`, so each step
//! is either the integer the spec means or `None`. On the first `None`, or when an operand does not
//! fit `i64`, the same terms are summed again in `BigInt` from the first. Either way the result is
//! the sum over the integers (addition is associative there, so the order of the terms is free): the
//! small form is a faster way to the same number, never a wrap (ARCHITECTURE.md, "Exact or
//! refused"). [`planes`] spreads an operator's output channels over rayon's threads; the `rq`
//! epilogue and the observer then see every sum in CHW order, as before.

use crate::plan::Shape;
use crate::tensor::Tensor;
use num_bigint::BigInt;
use rayon::prelude::*;
use std::borrow::Cow;

/// The forms a sum may be formed in: the checked small form (with `BigInt` past it), or `BigInt`
/// alone, so that the tests and the benchmark can hold the two to each other.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    Checked,
    Big,
}

/// One side of the products, read by index: a tensor's elements or an operator's weights.
pub struct Operand<'a> {
    /// Every element as `i64`, when every one fits (and the form is `Checked`).
    small: Option<Cow<'a, [i64]>>,
    /// The elements, when they are a tensor's; `None` for weights, which `small` holds exactly.
    big: Option<&'a [BigInt]>,
}

impl<'a> Operand<'a> {
    /// An operator's weights (`i64` in the graph, so always small).
    pub fn weights(w: &'a [i64]) -> Operand<'a> {
        Operand {
            small: Some(Cow::Borrowed(w)),
            big: None,
        }
    }

    /// A tensor's elements, in CHW order ([`Tensor::index`]).
    pub fn tensor(t: &'a Tensor, form: Form) -> Operand<'a> {
        let small = match form {
            Form::Checked => t
                .data
                .iter()
                .map(|v| i64::try_from(v).ok())
                .collect::<Option<Vec<i64>>>(),
            Form::Big => None,
        };
        Operand {
            small: small.map(Cow::Owned),
            big: Some(&t.data),
        }
    }

    /// Element `i` as a `BigInt`.
    fn value(&self, i: usize) -> BigInt {
        match (self.big, &self.small) {
            (Some(big), _) => big[i].clone(),
            (None, Some(small)) => BigInt::from(small[i]),
            (None, None) => unreachable!("an operand holds its elements in one form or both"),
        }
    }
}

/// The terms `a[a0 + k·da]·b[b0 + k·db]` for `k < n`: a row of a kernel against a row of its input,
/// a plane against a plane.
#[derive(Clone, Copy, Debug)]
pub struct Run {
    pub a0: usize,
    pub da: usize,
    pub b0: usize,
    pub db: usize,
    pub n: usize,
}

impl Run {
    /// One term, `a[a0]·b[b0]`.
    pub fn one(a0: usize, b0: usize) -> Run {
        Run {
            a0,
            da: 0,
            b0,
            db: 0,
            n: 1,
        }
    }

    /// The index pairs of its terms.
    fn terms(self) -> impl Iterator<Item = (usize, usize)> {
        (0..self.n).map(move |k| (self.a0 + k * self.da, self.b0 + k * self.db))
    }
}

/// The sum of every term of `runs`, exactly: in `i128` while every step is checked, else in
/// `BigInt` from the first term.
pub fn dot(a: &Operand, b: &Operand, runs: impl Iterator<Item = Run> + Clone) -> BigInt {
    if let (Some(sa), Some(sb)) = (&a.small, &b.small) {
        let small = runs.clone().try_fold(0i128, |acc, run| {
            run.terms().try_fold(acc, |acc, (i, j)| {
                acc.checked_add(i128::from(sa[i]).checked_mul(i128::from(sb[j]))?)
            })
        });
        if let Some(sum) = small {
            return BigInt::from(sum);
        }
    }
    runs.flat_map(Run::terms)
        .fold(BigInt::ZERO, |acc, (i, j)| acc + a.value(i) * b.value(j))
}

/// `f(o, y, x)` for every element of `out`, in CHW order, the output channels spread over rayon's
/// threads. `f` must be a function of its position alone (each is a sum of products).
pub fn planes(out: Shape, f: impl Fn(usize, usize, usize) -> BigInt + Sync) -> Vec<BigInt> {
    let (h, w) = (out.h as usize, out.w as usize);
    let mut v = vec![BigInt::ZERO; out.c as usize * h * w];
    v.par_chunks_mut((h * w).max(1)).enumerate().for_each(|(o, plane)| {
        for (k, e) in plane.iter_mut().enumerate() {
            *e = f(o, k / w, k % w);
        }
    });
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Shape;

    fn tensor(data: Vec<BigInt>) -> Tensor {
        Tensor {
            shape: Shape::new(1, 1, data.len() as u64),
            data,
        }
    }

    /// `a[k]·b[k]` for `k` in `0..n`.
    fn contiguous(n: usize) -> Run {
        Run {
            a0: 0,
            da: 1,
            b0: 0,
            db: 1,
            n,
        }
    }

    #[test]
    fn small_sums_are_the_integer_sums() {
        // 3·(−4) + (−5)·6 + 7·8 = −12 − 30 + 56 = 14.
        let w = [3, -5, 7];
        let x = tensor([-4, 6, 8].map(BigInt::from).to_vec());
        for form in [Form::Checked, Form::Big] {
            let (a, b) = (Operand::weights(&w), Operand::tensor(&x, form));
            assert_eq!(dot(&a, &b, [contiguous(3)].into_iter()), BigInt::from(14));
            assert_eq!(dot(&a, &b, std::iter::empty()), BigInt::ZERO);
        }
        // Strided: a[1]·b[0] + a[3]·b[3] + a[5]·b[6] = 2·10 + 4·40 + 6·70 = 600.
        let w = [1, 2, 3, 4, 5, 6];
        let x = tensor((1..=7).map(|k| BigInt::from(10 * k)).collect());
        let run = Run {
            a0: 1,
            da: 2,
            b0: 0,
            db: 3,
            n: 3,
        };
        for form in [Form::Checked, Form::Big] {
            let (a, b) = (Operand::weights(&w), Operand::tensor(&x, form));
            assert_eq!(dot(&a, &b, [run].into_iter()), BigInt::from(600));
        }
    }

    #[test]
    fn past_i128_the_sum_goes_on_in_bigint() {
        // (2^63 − 1)·(−2^63) is about −2^126; four of them pass −2^127 (i128's least), two do not.
        let w = [i64::MAX; 4];
        let x = tensor(vec![BigInt::from(i64::MIN); 4]);
        let (a, b) = (Operand::weights(&w), Operand::tensor(&x, Form::Checked));
        let term = BigInt::from(i64::MAX) * BigInt::from(i64::MIN);
        assert_eq!(dot(&a, &b, (0..4).map(|k| Run::one(k, k))), &term * 4);
        assert_eq!(dot(&a, &b, (0..2).map(|k| Run::one(k, k))), &term * 2);
        // And back: past the least and home again; the small form gave up at the third term.
        let w = [i64::MAX, i64::MAX, i64::MAX, -i64::MAX, -i64::MAX];
        let x = tensor(vec![BigInt::from(i64::MIN); 5]);
        let b = Operand::tensor(&x, Form::Checked);
        let sum = dot(&Operand::weights(&w), &b, [contiguous(5)].into_iter());
        assert_eq!(sum, term);
    }

    #[test]
    fn an_operand_past_i64_is_summed_in_bigint() {
        // 2^70·3 + 1·(−1) = 3·2^70 − 1.
        let big = BigInt::from(1) << 70u32;
        let x = tensor(vec![big.clone(), BigInt::from(-1)]);
        let (a, b) = (Operand::weights(&[3, 1]), Operand::tensor(&x, Form::Checked));
        assert!(b.small.is_none());
        assert_eq!(dot(&a, &b, (0..2).map(|k| Run::one(k, k))), big * 3 - 1);
    }

    #[test]
    fn planes_are_in_chw_order() {
        let out = Shape::new(3, 2, 5);
        let v = planes(out, |o, y, x| BigInt::from((o * 2 + y) * 5 + x));
        assert_eq!(v, (0..30).map(BigInt::from).collect::<Vec<_>>());
    }
}
