//! Request integers of any length, for the values a stage operator reads beyond its fixed width.
//!
//! A stage request's integers are decimal strings with no bound (§14.1). The operators compute in
//! fixed width (`i32`, `i64`, `i128`, `I256`); a value that does not fit is handled here, exactly,
//! by digit-serial methods whose state is fixed-width: comparison digit by digit, a sum by column
//! sums and one carry pass, and a division by `2^s` by long division with a `U256` remainder.

use ethnum::{I256, U256};
use std::cmp::Ordering;
use std::fmt;

/// An exact integer: a sign and its decimal digits, most significant first, with no leading zero
/// (zero has no digits and is never negative).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Dec {
    neg: bool,
    digits: Vec<u8>,
}

impl Dec {
    pub const ZERO: Dec = Dec {
        neg: false,
        digits: Vec::new(),
    };

    /// Parses a canonical decimal string (`crate::canon::is_canonical_int`); `None` otherwise.
    pub fn parse(s: &str) -> Option<Dec> {
        if !crate::canon::is_canonical_int(s) {
            return None;
        }
        let (neg, body) = match s.strip_prefix('-') {
            Some(b) => (true, b),
            None => (false, s),
        };
        let digits: Vec<u8> = if body == "0" {
            Vec::new()
        } else {
            body.bytes().map(|b| b - b'0').collect()
        };
        Some(Dec { neg, digits })
    }

    fn from_parts(neg: bool, mut digits: Vec<u8>) -> Dec {
        let lead = digits.iter().take_while(|&&d| d == 0).count();
        digits.drain(..lead);
        Dec {
            neg: neg && !digits.is_empty(),
            digits,
        }
    }

    pub fn from_i128(v: i128) -> Dec {
        Dec::parse(&v.to_string()).expect("a canonical integer")
    }

    pub fn from_i256(v: I256) -> Dec {
        Dec::parse(&v.to_string()).expect("a canonical integer")
    }

    /// `−self`.
    pub fn negated(&self) -> Dec {
        Dec::from_parts(!self.neg, self.digits.clone())
    }

    pub fn is_neg(&self) -> bool {
        self.neg
    }

    pub fn is_zero(&self) -> bool {
        self.digits.is_empty()
    }

    /// The decimal digits of `|self|`, most significant first (none for zero).
    pub fn digits(&self) -> &[u8] {
        &self.digits
    }

    /// The value, when it fits i128.
    pub fn to_i128(&self) -> Option<i128> {
        if self.digits.len() > 39 {
            return None;
        }
        self.to_string().parse().ok()
    }

    /// The value, when it fits i64.
    pub fn to_i64(&self) -> Option<i64> {
        self.to_i128().and_then(|v| i64::try_from(v).ok())
    }

    /// The value, when it fits I256.
    pub fn to_i256(&self) -> Option<I256> {
        if self.digits.len() > 78 {
            return None;
        }
        I256::from_str_radix(&self.to_string(), 10).ok()
    }

    /// The value clamped into i128: every comparison with a bound that fits i128 is kept.
    pub fn clamped(&self) -> i128 {
        match self.to_i128() {
            Some(v) => v,
            None if self.neg => i128::MIN,
            None => i128::MAX,
        }
    }

    /// `Σ terms`, exactly: each decimal column is summed in i128 (a column holds one digit of each
    /// term), and one carry pass from the least significant column forms the digits. A negative
    /// total shows as a carry that settles at −1; the sum is then formed again from the negated
    /// columns.
    pub fn sum(terms: &[&Dec]) -> Dec {
        let width = terms.iter().map(|t| t.digits.len()).max().unwrap_or(0);
        // columns[i] is the column of 10^i.
        let mut columns = vec![0i128; width];
        for t in terms {
            let sign = if t.neg { -1 } else { 1 };
            for (i, &d) in t.digits.iter().rev().enumerate() {
                columns[i] += sign * i128::from(d);
            }
        }
        let carry_pass = |cols: &[i128]| -> (Vec<u8>, i128) {
            let mut out = Vec::with_capacity(cols.len() + 40);
            let mut carry = 0i128;
            for &c in cols {
                let t = c + carry;
                out.push(t.rem_euclid(10) as u8);
                carry = t.div_euclid(10);
            }
            while carry != 0 && carry != -1 {
                out.push(carry.rem_euclid(10) as u8);
                carry = carry.div_euclid(10);
            }
            (out, carry)
        };
        let (mut low_first, carry) = carry_pass(&columns);
        let neg = carry == -1;
        if neg {
            let negated: Vec<i128> = columns.iter().map(|c| -c).collect();
            let (again, c) = carry_pass(&negated);
            debug_assert_eq!(c, 0);
            low_first = again;
        }
        low_first.reverse();
        Dec::from_parts(neg, low_first)
    }

    /// `(⌊self / 2^s⌋, self mod 2^s)` for `s ≤ 127`: long division of `|self|` by `2^s`, one decimal
    /// digit at a time, the remainder below `2^s` and each partial dividend below `10·2^s`.
    pub fn floor_shr(&self, s: u32) -> (Dec, U256) {
        assert!(s <= 127);
        let mask = (U256::ONE << s) - 1;
        let mut rem = U256::ZERO;
        let mut q = Vec::with_capacity(self.digits.len());
        for &d in &self.digits {
            let cur = rem * 10 + U256::from(d);
            q.push((cur >> s).as_u8());
            rem = cur & mask;
        }
        let q = Dec::from_parts(self.neg, q);
        if self.neg && rem != U256::ZERO {
            // ⌊−m / 2^s⌋ = −⌈m / 2^s⌉, and the remainder becomes 2^s − r.
            let q = Dec::sum(&[&q, &Dec::from_i128(-1)]);
            (q, (U256::ONE << s) - rem)
        } else {
            (q, rem)
        }
    }

    /// `R_half_up(self, s)` (§2) for `s ≤ 127`: `⌊self / 2^s⌋`, plus 1 when the remainder is at
    /// least `2^(s−1)`.
    pub fn r_half_up(&self, s: u32) -> Dec {
        if s == 0 {
            return self.clone();
        }
        let (q, r) = self.floor_shr(s);
        if r >= U256::ONE << (s - 1) {
            Dec::sum(&[&q, &Dec::from_i128(1)])
        } else {
            q
        }
    }
}

impl Ord for Dec {
    fn cmp(&self, other: &Dec) -> Ordering {
        match (self.neg, other.neg) {
            (false, true) => Ordering::Greater,
            (true, false) => Ordering::Less,
            (neg, _) => {
                let mag = self
                    .digits
                    .len()
                    .cmp(&other.digits.len())
                    .then_with(|| self.digits.cmp(&other.digits));
                if neg { mag.reverse() } else { mag }
            }
        }
    }
}

impl PartialOrd for Dec {
    fn partial_cmp(&self, other: &Dec) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Dec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.digits.is_empty() {
            return f.write_str("0");
        }
        let mut s = String::with_capacity(self.digits.len() + 1);
        if self.neg {
            s.push('-');
        }
        s.extend(self.digits.iter().map(|&d| char::from(b'0' + d)));
        f.write_str(&s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::seeded::Rng;

    fn d(s: &str) -> Dec {
        Dec::parse(s).unwrap()
    }

    #[test]
    fn parse_print_and_order() {
        for s in [
            "0",
            "1",
            "-1",
            "170141183460469231731687303715884105728",
            "-99999999999999999999999",
        ] {
            assert_eq!(d(s).to_string(), s);
        }
        assert!(Dec::parse("-0").is_none() && Dec::parse("01").is_none());
        let mut xs: Vec<Dec> = [
            "5",
            "-5",
            "0",
            "100",
            "-100",
            "99",
            "-99999999999999999999999999999",
            "1e",
        ]
        .iter()
        .filter_map(|s| Dec::parse(s))
        .collect();
        xs.sort();
        let got: Vec<String> = xs.iter().map(|x| x.to_string()).collect();
        assert_eq!(
            got,
            ["-99999999999999999999999999999", "-100", "-5", "0", "5", "99", "100"]
        );
        assert_eq!(d("170141183460469231731687303715884105727").to_i128(), Some(i128::MAX));
        assert_eq!(d("170141183460469231731687303715884105728").to_i128(), None);
        assert_eq!(d("-170141183460469231731687303715884105728").clamped(), i128::MIN);
        assert_eq!(d("-1701411834604692317316873037158841057280").clamped(), i128::MIN);
        assert_eq!(d("1701411834604692317316873037158841057280").clamped(), i128::MAX);
        assert_eq!(Dec::from_i256(I256::MIN).to_i256(), Some(I256::MIN));
        assert_eq!(Dec::sum(&[&Dec::from_i256(I256::MAX), &d("1")]).to_i256(), None);
    }

    #[test]
    fn sums_agree_with_i128() {
        let mut r = Rng::new(7);
        for _ in 0..3000 {
            let n = r.range(0, 6) as usize;
            let vs: Vec<i128> = (0..n)
                .map(|_| {
                    let v = i128::from(r.next_u64() as i64) >> r.below(64);
                    if r.pct(30) { v * (1 << 40) } else { v }
                })
                .collect();
            let ds: Vec<Dec> = vs.iter().map(|&v| Dec::from_i128(v)).collect();
            let refs: Vec<&Dec> = ds.iter().collect();
            assert_eq!(Dec::sum(&refs).to_i128(), Some(vs.iter().sum::<i128>()), "{vs:?}");
        }
        // Cancellation far past any fixed width.
        let big = format!("1{}", "0".repeat(300));
        let s = Dec::sum(&[&d(&big), &d(&format!("-{big}")), &d("-7")]);
        assert_eq!(s.to_string(), "-7");
        let s = Dec::sum(&[&d(&format!("-{big}")), &d("3")]);
        assert_eq!(s.to_string(), format!("-{}7", "9".repeat(299)));
    }

    #[test]
    fn shifts_agree_with_i128() {
        let mut r = Rng::new(8);
        for _ in 0..5000 {
            let v = i128::from(r.next_u64() as i64) * i128::from(r.next_u64() >> r.below(64));
            let s = r.range(0, 127) as u32;
            let (q, rem) = Dec::from_i128(v).floor_shr(s);
            assert_eq!(q.to_i128(), Some(v >> s), "{v} {s}");
            let want = if s == 0 { 0 } else { (v as u128) & ((1u128 << s) - 1) };
            assert_eq!(rem, U256::from(want), "{v} {s}");
            let hu = crate::num::r_round(v, s, crate::num::Round::HalfUp).unwrap();
            assert_eq!(Dec::from_i128(v).r_half_up(s).to_i128(), Some(hu), "{v} {s}");
        }
        // −5 / 2 rounds half up to −2; 10^100 + 1 over 2 to 5·10^99 + 1.
        assert_eq!(d("-5").r_half_up(1).to_string(), "-2");
        let big = d(&format!("1{}1", "0".repeat(99)));
        assert_eq!(big.r_half_up(1).to_string(), format!("5{}1", "0".repeat(98)));
    }
}
