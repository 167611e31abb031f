//! One output's accumulation: the `acc` partial sums of `conv`, `gram` and `apply` (§5.2, §5.9), and
//! the exact sum that reaches `rq`. Exact here; the implementation faults of
//! [`crate::mutants::FAULTS`] that live in how a kernel forms a sum are applied at these two points,
//! so that each operator names them once.

use super::{E, ck};

/// Where a sum of `len` terms is split into two requantised halves: never (`None`), unless the
/// `split-rq` fault is on and the reduction is long enough for a kernel to split it (2^10 terms).
pub fn split_point(len: usize) -> Option<usize> {
    (fault!("split-rq", false, true) && len >= 1 << 10).then(|| len.div_ceil(2))
}

/// The accumulated value as the operator hands it to `rq`: exact, or under `acc32-wrap` wrapped to
/// i32. Wrapping the total once is wrapping every partial sum (addition modulo 2^32 is associative),
/// so a 32-bit accumulator needs no per-term site.
pub fn wrapped(acc: i64) -> i64 {
    fault!("acc32-wrap", acc, i64::from(acc as i32))
}

/// A running sum of terms numbered in the operator's order.
pub struct Sum {
    acc: i64,
    /// Where the second half starts ([`split_point`]).
    split: Option<usize>,
    /// The first half's sum, once the second half has started.
    first: Option<i64>,
}

impl Sum {
    pub fn new(split: Option<usize>) -> Sum {
        Sum {
            acc: 0,
            split,
            first: None,
        }
    }

    /// Adds term number `k` (terms may be skipped, never reordered across the split).
    #[inline]
    pub fn add(&mut self, k: usize, term: i64, what: &str) -> E<()> {
        if self.split.is_some_and(|s| k >= s) && self.first.is_none() {
            self.first = Some(std::mem::take(&mut self.acc));
        }
        self.acc = ck(self.acc.checked_add(term), what)?;
        Ok(())
    }

    /// The sum through `rq`: `rq(acc)`, or `rq(first) + rq(second)` for a split sum (whose second
    /// half is 0 when every term of it was skipped).
    pub fn finish(self, rq: impl Fn(i64) -> E<i64>) -> E<i64> {
        let (first, second) = match (self.split, self.first) {
            (None, _) => return rq(wrapped(self.acc)),
            (Some(_), Some(first)) => (first, self.acc),
            (Some(_), None) => (self.acc, 0),
        };
        ck(rq(first)?.checked_add(rq(second)?), "rq.y")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `rq` as a floor shift by 2, enough to tell one sum from two.
    fn rq(v: i64) -> E<i64> {
        Ok(v >> 2)
    }

    fn sum(split: Option<usize>, terms: &[(usize, i64)]) -> i64 {
        let mut s = Sum::new(split);
        for &(k, t) in terms {
            s.add(k, t, "test").unwrap();
        }
        s.finish(rq).unwrap()
    }

    #[test]
    fn a_split_sum_is_requantised_in_two_halves() {
        let terms = [(0, 3), (1, 3), (2, 3), (3, 3)];
        assert_eq!(sum(None, &terms), 3); // ⌊12 / 4⌋
        assert_eq!(sum(Some(2), &terms), 2); // ⌊6 / 4⌋ + ⌊6 / 4⌋
        // Terms skipped across the split (padding taps): the halves still split at term 2.
        assert_eq!(sum(Some(2), &[(0, 3), (3, 6)]), 1);
        // A second half with every term skipped is rq(0).
        assert_eq!(sum(Some(2), &[(0, 5), (1, 5)]), 2);
    }

    #[test]
    fn only_long_reductions_split_and_only_under_the_fault() {
        // The test process never sets WAI_MUTANT.
        assert_eq!(split_point(1 << 20), None);
        assert_eq!(wrapped(1 << 40), 1 << 40);
    }
}
