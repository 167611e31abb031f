//! Intervals of §8.1–§8.2 over saturating values, and the record of one node's intermediates.

use super::sat::{Ctx, S, bits};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Iv {
    pub lo: S,
    pub hi: S,
}

impl Iv {
    pub fn new(lo: S, hi: S) -> Iv {
        Iv { lo, hi }
    }
    pub fn point(v: S) -> Iv {
        Iv { lo: v, hi: v }
    }
    pub fn i(lo: i128, hi: i128) -> Iv {
        Iv::new(S::from_i128(lo), S::from_i128(hi))
    }
    /// The smallest interval holding both.
    pub fn hull(self, o: Iv) -> Iv {
        Iv {
            lo: self.lo.min(o.lo),
            hi: self.hi.max(o.hi),
        }
    }
    /// `bits([lo, hi])` (§2).
    pub fn bits(self) -> u32 {
        bits(self.lo).max(bits(self.hi))
    }
    pub fn fits(self, n: u32) -> bool {
        self.bits() <= n
    }
}

/// The hull of an optional interval with another.
pub fn hull_into(acc: &mut Option<Iv>, v: Iv) {
    *acc = Some(match *acc {
        None => v,
        Some(a) => fault!("iv-hull-keeps-first", a.hull(v), a),
    });
}

impl Ctx {
    /// The corner hull of two intervals (§8.2): `[min, max]` of the four corner products.
    pub fn corner(&mut self, a: Iv, b: Iv) -> Iv {
        let (ll, hh) = (self.mul(a.lo, b.lo), self.mul(a.hi, b.hi));
        let lh = fault!("iv-corner-two-products", self.mul(a.lo, b.hi), ll);
        let hl = fault!("iv-corner-two-products", self.mul(a.hi, b.lo), hh);
        let c = [ll, lh, hl, hh];
        let lo = c.iter().copied().min().unwrap_or(S::ZERO);
        let hi = c.iter().copied().max().unwrap_or(S::ZERO);
        Iv { lo, hi }
    }

    /// `[⌊lo / 2^s⌋, ⌊hi / 2^s⌋]`.
    pub fn shr_iv(&mut self, a: Iv, s: u32) -> Iv {
        Iv {
            lo: self.shr(a.lo, s),
            hi: self.shr(a.hi, s),
        }
    }

    /// `[lo + b, hi + b]`.
    pub fn add_iv(&mut self, a: Iv, b: S) -> Iv {
        Iv {
            lo: self.add(a.lo, b),
            hi: self.add(a.hi, b),
        }
    }
}

/// The intermediates one node records by their keys of Table 8.5-A (whose classes
/// [`super::profile::INTERMEDIATES`] gives), hulled over channels (§8.1), in the order first recorded.
#[derive(Default, Debug)]
pub struct Rec {
    pub items: Vec<(&'static str, Iv)>,
}

impl Rec {
    pub fn put(&mut self, key: &'static str, v: Iv) {
        match self.items.iter_mut().find(|e| e.0 == key) {
            Some(e) => e.1 = e.1.hull(v),
            None => self.items.push((key, v)),
        }
    }
}
