//! §8.1 Intervals and saturating arithmetic; §8.2 term and partial-sum intervals.
//!
//! Every primitive operation of the bounds pass goes through `Sat`, which
//! applies `sat(v) = clamp(v, −2^255, 2^255)` to its result and remembers
//! whether `sat` changed one. A node during whose computation a result was
//! changed is **saturated** (§8.1).

use crate::num;
use num_bigint::BigInt;
use num_traits::{Signed, Zero};
use std::sync::LazyLock;

/// `2^255`, the saturation bound.
pub static BOUND: LazyLock<BigInt> = LazyLock::new(|| num::pow2(255));

/// An integer interval `[lo, hi]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Interval {
    pub lo: BigInt,
    pub hi: BigInt,
}

impl Interval {
    pub fn new(lo: impl Into<BigInt>, hi: impl Into<BigInt>) -> Interval {
        Interval {
            lo: lo.into(),
            hi: hi.into(),
        }
    }

    /// `[v, v]`.
    pub fn point(v: impl Into<BigInt>) -> Interval {
        let v = v.into();
        Interval { lo: v.clone(), hi: v }
    }

    /// `bits([lo, hi])` (§2).
    pub fn bits(&self) -> u32 {
        num::bits(&self.lo, &self.hi)
    }

    /// Whether both ends fit iN.
    pub fn fits(&self, n: u32) -> bool {
        num::fits(&self.lo, n) && num::fits(&self.hi, n)
    }

    /// `max(|lo|, |hi|)`.
    pub fn magnitude(&self) -> BigInt {
        self.lo.abs().max(self.hi.abs())
    }
}

/// The bounds pass's arithmetic: every result saturated to `[−2^255, 2^255]`,
/// and a flag that records whether saturation changed any result.
#[derive(Debug, Default)]
pub struct Sat {
    pub saturated: bool,
}

impl Sat {
    /// `sat(v)`. A result of exactly ±2^255 is unchanged, so not saturated
    /// (docs/assumptions.md).
    pub fn sat(&mut self, v: BigInt) -> BigInt {
        if v > *BOUND {
            self.saturated = true;
            BOUND.clone()
        } else if v < -&*BOUND {
            self.saturated = true;
            -&*BOUND
        } else {
            v
        }
    }

    pub fn add(&mut self, a: &BigInt, b: &BigInt) -> BigInt {
        self.sat(a + b)
    }
    pub fn sub(&mut self, a: &BigInt, b: &BigInt) -> BigInt {
        self.sat(a - b)
    }
    pub fn mul(&mut self, a: &BigInt, b: &BigInt) -> BigInt {
        self.sat(a * b)
    }
    /// `⌊a / b⌋`, `b > 0`.
    pub fn div(&mut self, a: &BigInt, b: &BigInt) -> BigInt {
        self.sat(num::floor_div(a, b))
    }
    /// `⌊a / 2^s⌋`: a floor division by a power of two.
    pub fn shr(&mut self, a: &BigInt, s: u32) -> BigInt {
        self.sat(num::r_floor(a, s))
    }
    /// `R_round(p, s)` as §2 writes it; for `half_up` that is `⌊(p + 2^(s−1)) / 2^s⌋`,
    /// an addition then a division, each saturated.
    pub fn round(&mut self, round: num::Round, p: &BigInt, s: u32) -> BigInt {
        if s == 0 && round != num::Round::Floor {
            return p.clone();
        }
        match round {
            num::Round::Floor => self.shr(p, s),
            num::Round::HalfUp => {
                let biased = self.add(p, &num::pow2(s - 1));
                self.shr(&biased, s)
            }
            num::Round::HalfEven => {
                let q = self.shr(p, s);
                let q2s = self.mul(&q, &num::pow2(s));
                let r = self.sub(p, &q2s);
                let h = num::pow2(s - 1);
                if r > h || (r == h && num_integer::Integer::is_odd(&q)) {
                    self.add(&q, &BigInt::from(1))
                } else {
                    q
                }
            }
        }
    }
    pub fn isqrt(&mut self, a: &BigInt) -> BigInt {
        self.sat(num::isqrt(a))
    }
    pub fn isqrt_ceil(&mut self, a: &BigInt) -> BigInt {
        self.sat(num::isqrt_ceil(a))
    }
    pub fn min(&mut self, a: &BigInt, b: &BigInt) -> BigInt {
        self.sat(a.min(b).clone())
    }
    pub fn max(&mut self, a: &BigInt, b: &BigInt) -> BigInt {
        self.sat(a.max(b).clone())
    }
    pub fn abs(&mut self, a: &BigInt) -> BigInt {
        self.sat(a.abs())
    }
    pub fn neg(&mut self, a: &BigInt) -> BigInt {
        self.sat(-a)
    }

    /// A left fold of binary additions, starting from `first` (§8.1 for `Σ`).
    pub fn sum<'a>(&mut self, first: BigInt, rest: impl IntoIterator<Item = &'a BigInt>) -> BigInt {
        rest.into_iter().fold(first, |acc, v| self.add(&acc, v))
    }

    /// The image of two ends under a map that is non-decreasing: `[f(lo), f(hi)]`.
    pub fn monotone(&mut self, i: &Interval, mut f: impl FnMut(&mut Sat, &BigInt) -> BigInt) -> Interval {
        let lo = f(self, &i.lo);
        let hi = f(self, &i.hi);
        Interval { lo, hi }
    }

    /// §8.2 term interval of a weight `w` over `[l, h]`: `[min(w·l, w·h), max(w·l, w·h)]`.
    pub fn term(&mut self, w: &BigInt, x: &Interval) -> Interval {
        let a = self.mul(w, &x.lo);
        let b = self.mul(w, &x.hi);
        Interval {
            lo: self.min(&a, &b),
            hi: self.max(&a, &b),
        }
    }

    /// §8.2 corner hull: `[min(C), max(C)]` of the four products of the ends,
    /// each a left fold in the order written: `l1·l2, l1·h2, h1·l2, h1·h2`.
    pub fn corner_hull(&mut self, a: &Interval, b: &Interval) -> Interval {
        let c = [
            self.mul(&a.lo, &b.lo),
            self.mul(&a.lo, &b.hi),
            self.mul(&a.hi, &b.lo),
            self.mul(&a.hi, &b.hi),
        ];
        let mut lo = c[0].clone();
        let mut hi = c[0].clone();
        for v in &c[1..] {
            lo = self.min(&lo, v);
            hi = self.max(&hi, v);
        }
        Interval { lo, hi }
    }

    /// §8.2 `A(K, b) = [min(0, b) + Σ_k min(0, lo_k), max(0, b) + Σ_k max(0, hi_k)]`.
    pub fn partial_sums<'a>(&mut self, terms: impl IntoIterator<Item = &'a Interval>, b: &BigInt) -> Interval {
        let zero = BigInt::zero();
        let mut lo = self.min(&zero, b);
        let mut hi = self.max(&zero, b);
        for k in terms {
            let l = self.min(&zero, &k.lo);
            let h = self.max(&zero, &k.hi);
            lo = self.add(&lo, &l);
            hi = self.add(&hi, &h);
        }
        Interval { lo, hi }
    }
}

/// The smallest interval containing every one of `intervals` (§8.1 hull over
/// channels). Comparisons only; nothing saturates.
pub fn hull<'a>(intervals: impl IntoIterator<Item = &'a Interval>) -> Option<Interval> {
    let mut it = intervals.into_iter();
    let first = it.next()?.clone();
    Some(it.fold(first, |acc, i| Interval {
        lo: acc.lo.min(i.lo.clone()),
        hi: acc.hi.max(i.hi.clone()),
    }))
}
