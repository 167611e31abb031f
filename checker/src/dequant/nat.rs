//! Non-negative integers of any size, for output strides: a request's stride is any integer
//! (docs/protocol.md), and D3's `stride` and `overlap` rules and the span's 64-bit test apply to it
//! exactly, however large. Little-endian `u64` limbs; only what those rules need.

use std::cmp::Ordering;

/// A non-negative integer: little-endian limbs with no high zero limb (zero has none).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nat(Vec<u64>);

impl Nat {
    pub fn zero() -> Nat {
        Nat(Vec::new())
    }

    pub fn from_u64(v: u64) -> Nat {
        let mut n = Nat(vec![v]);
        n.trim();
        n
    }

    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    /// `self · m + a`, in place.
    fn mul_add_small(&mut self, m: u64, a: u64) {
        let mut carry = u128::from(a);
        for limb in &mut self.0 {
            let t = u128::from(*limb) * u128::from(m) + carry;
            *limb = t as u64;
            carry = t >> 64;
        }
        if carry != 0 {
            self.0.push(carry as u64);
        }
        self.trim();
    }

    /// Parses decimal digits (ASCII `0`–`9`, at least one); `None` otherwise.
    pub fn parse_digits(s: &str) -> Option<Nat> {
        if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let mut n = Nat::zero();
        // Nineteen digits at a time: 10^19 < 2^64.
        for chunk in s.as_bytes().chunks(19) {
            let v = chunk.iter().fold(0u64, |v, &b| v * 10 + u64::from(b - b'0'));
            n.mul_add_small(10u64.pow(chunk.len() as u32), v);
        }
        Some(n)
    }

    pub fn is_zero(&self) -> bool {
        self.0.is_empty()
    }

    /// `self mod m` for `m ≥ 1`.
    pub fn rem_small(&self, m: u64) -> u64 {
        self.0
            .iter()
            .rev()
            .fold(0u128, |r, &limb| ((r << 64) | u128::from(limb)) % u128::from(m)) as u64
    }

    /// `self · m`.
    pub fn mul_small(&self, m: u64) -> Nat {
        let mut n = self.clone();
        n.mul_add_small(m, 0);
        n
    }

    /// `self + other`.
    pub fn add(&self, other: &Nat) -> Nat {
        let (long, short) = if self.0.len() >= other.0.len() {
            (self, other)
        } else {
            (other, self)
        };
        let mut out = Vec::with_capacity(long.0.len() + 1);
        let mut carry = 0u64;
        for (i, &a) in long.0.iter().enumerate() {
            let b = short.0.get(i).copied().unwrap_or(0);
            let (s1, c1) = a.overflowing_add(b);
            let (s2, c2) = s1.overflowing_add(carry);
            out.push(s2);
            carry = u64::from(c1) + u64::from(c2);
        }
        if carry != 0 {
            out.push(carry);
        }
        let mut n = Nat(out);
        n.trim();
        n
    }

    /// The value when it fits 64 bits.
    pub fn to_u64(&self) -> Option<u64> {
        match self.0[..] {
            [] => Some(0),
            [v] => Some(v),
            _ => None,
        }
    }
}

impl Ord for Nat {
    fn cmp(&self, other: &Nat) -> Ordering {
        self.0
            .len()
            .cmp(&other.0.len())
            .then_with(|| self.0.iter().rev().cmp(other.0.iter().rev()))
    }
}

impl PartialOrd for Nat {
    fn partial_cmp(&self, other: &Nat) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

#[cfg(test)]
mod tests {
    use super::Nat;

    #[test]
    fn parse_compare_add_multiply() {
        let p = |s: &str| Nat::parse_digits(s).unwrap();
        assert_eq!(p("0"), Nat::zero());
        assert_eq!(p("18446744073709551615").to_u64(), Some(u64::MAX));
        assert_eq!(p("18446744073709551616").to_u64(), None);
        assert_eq!(
            p("18446744073709551615").add(&Nat::from_u64(1)),
            p("18446744073709551616")
        );
        // (10^40) · 3 + 10^40 = 4·10^40.
        let t = p("10000000000000000000000000000000000000000");
        assert_eq!(t.mul_small(3).add(&t), p("40000000000000000000000000000000000000000"));
        assert!(p("10000000000000000000000000000000000000001") > t);
        assert!(p("9999999999999999999999999999999999999999") < t);
        // 10^40 = 2^40 · 5^40: divisible by 4; 10^40 + 2 is not.
        assert_eq!(t.rem_small(4), 0);
        assert_eq!(p("10000000000000000000000000000000000000002").rem_small(4), 2);
        assert_eq!(
            p("123456789012345678901234567890").rem_small(1_000_000_007),
            123456789012345678901234567890u128.rem_euclid(1_000_000_007) as u64
        );
        assert!(Nat::parse_digits("").is_none());
        assert!(Nat::parse_digits("-1").is_none());
    }
}
