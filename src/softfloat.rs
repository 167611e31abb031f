//! Exact software IEEE-754 binary32 and binary64 (CIS-2 §1; DetessDequant).
//!
//! Every operation is computed on exact integers — a finite value is `sig · 2^exp` with an
//! integer `sig` — and rounded **once** to nearest, ties to even. Quotients and square roots
//! carry enough extra bits, and a sticky flag for what lies below them, to round exactly.
//!
//! Subnormals follow an [`Env`]: gradual underflow (IEEE-754), or flush-to-zero with
//! denormals-are-zero (CIS-2 §1.3), in which a tiny result becomes a zero of its sign and a
//! subnormal operand is read as a zero of its sign. "Tiny" is decided after rounding (x86-64)
//! or before (aarch64); docs/assumptions.md C1. The host FPU is never used.

use std::cmp::Ordering;

/// A binary interchange format: `frac` fraction bits and `exp` exponent bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Format {
    pub frac: u32,
    pub exp: u32,
}

pub const BINARY32: Format = Format { frac: 23, exp: 8 };
pub const BINARY64: Format = Format { frac: 52, exp: 11 };

impl Format {
    /// The precision `p`, in bits, the leading bit included.
    fn p(self) -> u32 {
        self.frac + 1
    }
    fn bias(self) -> i32 {
        (1 << (self.exp - 1)) - 1
    }
    /// The exponent of the smallest normal number.
    fn emin(self) -> i32 {
        1 - self.bias()
    }
    fn emax(self) -> i32 {
        self.bias()
    }
    fn sign_bit(self) -> u64 {
        1 << (self.frac + self.exp)
    }
    fn exp_field(self) -> u64 {
        (1 << self.exp) - 1
    }
    /// The quiet NaN every NaN result is written as (docs/assumptions.md C3).
    pub fn nan(self) -> u64 {
        (self.exp_field() << self.frac) | (1 << (self.frac - 1))
    }
    pub fn inf(self, neg: bool) -> u64 {
        self.sign(neg) | (self.exp_field() << self.frac)
    }
    pub fn zero(self, neg: bool) -> u64 {
        self.sign(neg)
    }
    fn sign(self, neg: bool) -> u64 {
        if neg { self.sign_bit() } else { 0 }
    }
}

/// When a result is tiny under flush-to-zero (docs/assumptions.md C1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tininess {
    /// The result rounded to `p` bits with an unbounded exponent is below the smallest normal
    /// (x86-64 MXCSR.FTZ).
    AfterRounding,
    /// The exact result is below the smallest normal (aarch64 FPCR.FZ).
    BeforeRounding,
}

/// The treatment of subnormal numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Env {
    /// IEEE-754's gradual underflow.
    Gradual,
    /// Flush tiny results to zero and read subnormal operands as zero (FTZ and DAZ).
    Flush(Tininess),
}

/// A value, its subnormal operands already read as zero where the environment says so.
/// A finite nonzero value is `sig · 2^exp` with `sig` normalised to exactly `p` bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Nan,
    Inf { neg: bool },
    Zero { neg: bool },
    Finite { neg: bool, sig: u128, exp: i32 },
}

fn bit_length(x: u128) -> u32 {
    128 - x.leading_zeros()
}

impl Env {
    fn unpack(self, f: Format, bits: u64) -> Class {
        let neg = bits & f.sign_bit() != 0;
        let field = (bits >> f.frac) & f.exp_field();
        let fraction = u128::from(bits & ((1 << f.frac) - 1));
        if field == f.exp_field() {
            return if fraction == 0 { Class::Inf { neg } } else { Class::Nan };
        }
        if field == 0 {
            if fraction == 0 || matches!(self, Env::Flush(_)) {
                return Class::Zero { neg };
            }
            // A subnormal: fraction · 2^(emin − frac), normalised to p bits.
            let shift = f.p() - bit_length(fraction);
            return Class::Finite {
                neg,
                sig: fraction << shift,
                exp: f.emin() - f.frac as i32 - shift as i32,
            };
        }
        Class::Finite {
            neg,
            sig: fraction | (1 << f.frac),
            exp: field as i32 - f.bias() - f.frac as i32,
        }
    }

    /// Rounds `sig · 2^exp` — plus something strictly between 0 and `2^exp` when `sticky` — to
    /// the format, once, to nearest even, with this environment's subnormals.
    fn round(self, f: Format, neg: bool, sig: u128, exp: i32, sticky: bool) -> u64 {
        if sig == 0 {
            debug_assert!(!sticky, "a sticky remainder needs significant bits above it");
            return f.zero(neg);
        }
        let p = f.p() as i32;
        let lead = exp + bit_length(sig) as i32 - 1;
        // Rounded to p bits with an unbounded exponent.
        let (q, lead_rounded) = normalise(rne(sig, exp, sticky, lead - (p - 1)), lead - (p - 1), p);
        let normal = |q: u128, lead: i32| pack_normal(f, neg, q, lead);
        match self {
            Env::Flush(Tininess::AfterRounding) if lead_rounded < f.emin() => f.zero(neg),
            Env::Flush(Tininess::BeforeRounding) if lead < f.emin() => f.zero(neg),
            Env::Gradual if lead < f.emin() => {
                // Rounded on the subnormal grid, whose quantum is 2^(emin − frac).
                let q = rne(sig, exp, sticky, f.emin() - (p - 1));
                // q = 2^frac is the smallest normal number: its bits are q's.
                f.sign(neg) | q as u64
            }
            _ => normal(q, lead_rounded),
        }
    }
}

/// `sig · 2^exp` (plus the sticky part) rounded to a multiple of `2^quantum`, to nearest even;
/// the multiple's count. A sticky part needs `quantum > exp`.
fn rne(sig: u128, exp: i32, sticky: bool, quantum: i32) -> u128 {
    if quantum <= exp {
        debug_assert!(!sticky);
        return sig << (exp - quantum);
    }
    let shift = (quantum - exp) as u32;
    if shift > 128 {
        return 0; // below 2^(quantum − 1): less than half a quantum
    }
    let (q, rem) = if shift == 128 {
        (0, sig)
    } else {
        (sig >> shift, sig & ((1 << shift) - 1))
    };
    let half = 1u128 << (shift - 1);
    let up = match rem.cmp(&half) {
        Ordering::Greater => true,
        Ordering::Equal => sticky || q & 1 == 1,
        Ordering::Less => false,
    };
    q + u128::from(up)
}

/// A rounded count at `quantum` brought back to `p` bits after a carry; with its leading exponent.
fn normalise(q: u128, quantum: i32, p: i32) -> (u128, i32) {
    if bit_length(q) as i32 > p {
        (q >> 1, quantum + p)
    } else {
        (q, quantum + p - 1)
    }
}

fn pack_normal(f: Format, neg: bool, q: u128, lead: i32) -> u64 {
    if lead > f.emax() {
        return f.inf(neg);
    }
    f.sign(neg) | (((lead + f.bias()) as u64) << f.frac) | (q as u64 & ((1 << f.frac) - 1))
}

/// Integer square root and whether it was exact.
fn isqrt(m: u128) -> (u128, bool) {
    let mut root = 0u128;
    let mut bit = 1u128 << ((bit_length(m).saturating_sub(1)) & !1);
    let mut rest = m;
    while bit != 0 {
        if rest >= root + bit {
            rest -= root + bit;
            root = (root >> 1) + bit;
        } else {
            root >>= 1;
        }
        bit >>= 2;
    }
    (root, rest == 0)
}

impl Env {
    pub fn add(self, f: Format, a: u64, b: u64) -> u64 {
        use Class::*;
        match (self.unpack(f, a), self.unpack(f, b)) {
            (Nan, _) | (_, Nan) => f.nan(),
            (Inf { neg: x }, Inf { neg: y }) if x != y => f.nan(),
            (Inf { neg }, _) | (_, Inf { neg }) => f.inf(neg),
            (Zero { neg: x }, Zero { neg: y }) => f.zero(x && y),
            (Zero { .. }, Finite { neg, sig, exp }) | (Finite { neg, sig, exp }, Zero { .. }) => {
                self.round(f, neg, sig, exp, false)
            }
            (
                Finite {
                    neg: na,
                    sig: sa,
                    exp: ea,
                },
                Finite {
                    neg: nb,
                    sig: sb,
                    exp: eb,
                },
            ) => {
                // Both significands have p bits, so the exponents compare as the values' magnitudes.
                let ((nx, sx, ex), (ny, sy, ey)) = if ea >= eb {
                    ((na, sa, ea), (nb, sb, eb))
                } else {
                    ((nb, sb, eb), (na, sa, ea))
                };
                let gap = (ex - ey) as u32;
                if gap > f.p() + 4 {
                    // y is below a sixteenth of x's last place: x nudged toward y's side.
                    let sig = (sx << 3) - u128::from(nx != ny);
                    return self.round(f, nx, sig, ex - 3, true);
                }
                let (x, y) = (sx << gap, sy);
                match (nx == ny, x.cmp(&y)) {
                    (true, _) => self.round(f, nx, x + y, ey, false),
                    (false, Ordering::Equal) => f.zero(false),
                    (false, Ordering::Greater) => self.round(f, nx, x - y, ey, false),
                    (false, Ordering::Less) => self.round(f, ny, y - x, ey, false),
                }
            }
        }
    }

    pub fn sub(self, f: Format, a: u64, b: u64) -> u64 {
        self.add(f, a, b ^ f.sign_bit())
    }

    pub fn mul(self, f: Format, a: u64, b: u64) -> u64 {
        use Class::*;
        match (self.unpack(f, a), self.unpack(f, b)) {
            (Nan, _) | (_, Nan) => f.nan(),
            (Inf { .. }, Zero { .. }) | (Zero { .. }, Inf { .. }) => f.nan(),
            (Inf { neg: x } | Finite { neg: x, .. }, Inf { neg: y }) | (Inf { neg: x }, Finite { neg: y, .. }) => {
                f.inf(x != y)
            }
            (Zero { neg: x } | Finite { neg: x, .. }, Zero { neg: y }) | (Zero { neg: x }, Finite { neg: y, .. }) => {
                f.zero(x != y)
            }
            (
                Finite {
                    neg: na,
                    sig: sa,
                    exp: ea,
                },
                Finite {
                    neg: nb,
                    sig: sb,
                    exp: eb,
                },
            ) => self.round(f, na != nb, sa * sb, ea + eb, false),
        }
    }

    pub fn div(self, f: Format, a: u64, b: u64) -> u64 {
        use Class::*;
        match (self.unpack(f, a), self.unpack(f, b)) {
            (Nan, _) | (_, Nan) => f.nan(),
            (Inf { .. }, Inf { .. }) | (Zero { .. }, Zero { .. }) => f.nan(),
            (Inf { neg: x }, Zero { neg: y } | Finite { neg: y, .. }) | (Finite { neg: x, .. }, Zero { neg: y }) => {
                f.inf(x != y)
            }
            (Zero { neg: x } | Finite { neg: x, .. }, Inf { neg: y }) | (Zero { neg: x }, Finite { neg: y, .. }) => {
                f.zero(x != y)
            }
            (
                Finite {
                    neg: na,
                    sig: sa,
                    exp: ea,
                },
                Finite {
                    neg: nb,
                    sig: sb,
                    exp: eb,
                },
            ) => {
                // sa/sb lies in (1/2, 2): the quotient has at least p + 3 bits, two below the
                // rounding point, and the remainder is the sticky part.
                let k = f.p() + 3;
                let n = sa << k;
                let (q, r) = (n / sb, n % sb);
                self.round(f, na != nb, q, ea - eb - k as i32, r != 0)
            }
        }
    }

    pub fn sqrt(self, f: Format, a: u64) -> u64 {
        match self.unpack(f, a) {
            Class::Nan | Class::Inf { neg: true } | Class::Finite { neg: true, .. } => f.nan(),
            Class::Inf { neg: false } => f.inf(false),
            Class::Zero { neg } => f.zero(neg),
            Class::Finite { sig, exp, .. } => {
                // Scale to at least 2p + 4 bits with an even exponent: the root has p + 2 bits.
                let mut shift = f.p() + 4;
                if (exp - shift as i32) % 2 != 0 {
                    shift += 1;
                }
                let (root, exact) = isqrt(sig << shift);
                self.round(f, false, root, (exp - shift as i32) / 2, !exact)
            }
        }
    }

    /// The comparison of two values; `None` when either is NaN. Zeros of both signs are equal.
    pub fn compare(self, f: Format, a: u64, b: u64) -> Option<Ordering> {
        let key = |c: Class| -> Option<(i8, i32, u128)> {
            match c {
                Class::Nan => None,
                Class::Zero { .. } => Some((0, 0, 0)),
                Class::Inf { neg } => Some((if neg { -2 } else { 2 }, 0, 0)),
                Class::Finite { neg, sig, exp } => Some((if neg { -1 } else { 1 }, exp, sig)),
            }
        };
        let (x, y) = (key(self.unpack(f, a))?, key(self.unpack(f, b))?);
        let magnitude = (x.1, x.2).cmp(&(y.1, y.2));
        Some(match x.0.cmp(&y.0) {
            Ordering::Equal if x.0 == -1 => magnitude.reverse(),
            Ordering::Equal => magnitude,
            other => other,
        })
    }

    /// A value of format `from` in format `to`: exact when widening, rounded once when narrowing.
    pub fn convert(self, from: Format, to: Format, a: u64) -> u64 {
        match self.unpack(from, a) {
            Class::Nan => to.nan(),
            Class::Inf { neg } => to.inf(neg),
            Class::Zero { neg } => to.zero(neg),
            Class::Finite { neg, sig, exp } => self.round(to, neg, sig, exp, false),
        }
    }

    /// An integer, rounded once to the format.
    pub fn from_int(self, f: Format, n: i64) -> u64 {
        self.round(f, n < 0, u128::from(n.unsigned_abs()), 0, false)
    }

    /// The integral value nearest below (`floor`) or nearest with ties away from zero
    /// (`round`); exact, so no environment's rounding enters (infinities and NaN unchanged).
    pub fn integral(self, f: Format, a: u64, rule: Integral) -> u64 {
        let Class::Finite { neg, sig, exp } = self.unpack(f, a) else {
            return match self.unpack(f, a) {
                Class::Nan => f.nan(),
                Class::Inf { neg } => f.inf(neg),
                _ => f.zero(a & f.sign_bit() != 0),
            };
        };
        if exp >= 0 {
            return a;
        }
        let shift = (-exp) as u32;
        let (whole, rem) = if shift >= 128 {
            (0, sig)
        } else {
            (sig >> shift, sig & ((1 << shift) - 1))
        };
        let up = match rule {
            Integral::Floor => neg && rem != 0,
            Integral::RoundHalfAway => shift <= 128 && rem >= 1u128 << (shift - 1),
        };
        let n = whole + u128::from(up);
        if n == 0 {
            f.zero(neg)
        } else {
            self.round(f, neg, n, 0, false)
        }
    }

    /// An integral value as an integer (`as i64`: truncation toward zero, saturating, NaN 0).
    pub fn to_int(self, f: Format, a: u64) -> i64 {
        match self.unpack(f, a) {
            Class::Nan | Class::Zero { .. } => 0,
            Class::Inf { neg } => {
                if neg {
                    i64::MIN
                } else {
                    i64::MAX
                }
            }
            Class::Finite { neg, sig, exp } => {
                let magnitude = if exp >= 0 {
                    if exp >= 64 {
                        u128::MAX
                    } else {
                        sig.checked_shl(exp as u32).unwrap_or(u128::MAX)
                    }
                } else if -exp >= 128 {
                    0
                } else {
                    sig >> (-exp)
                };
                let m = i128::try_from(magnitude).unwrap_or(i128::MAX);
                let v = if neg { -m } else { m };
                v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
            }
        }
    }
}

/// Binary32 `+` and `×` for the common case, in 64-bit integers: both operands normal and the
/// result normal before and after rounding, where neither tininess rule nor DAZ can apply. Any
/// other case goes to the general operations above, so these are the same functions, faster (a
/// test compares them on millions of operand pairs). After Berkeley SoftFloat's `f32_add`/`f32_mul`.
impl Env {
    pub fn add32(self, a: u32, b: u32) -> u32 {
        add32_normal(a, b).unwrap_or_else(|| self.add(BINARY32, u64::from(a), u64::from(b)) as u32)
    }

    pub fn mul32(self, a: u32, b: u32) -> u32 {
        mul32_normal(a, b).unwrap_or_else(|| self.mul(BINARY32, u64::from(a), u64::from(b)) as u32)
    }
}

/// A normal binary32's sign, biased exponent field and 24-bit significand; `None` otherwise.
fn normal32(x: u32) -> Option<(bool, i32, u64)> {
    let field = ((x >> 23) & 0xFF) as i32;
    (1..=254)
        .contains(&field)
        .then(|| (x >> 31 == 1, field, u64::from(x & 0x7F_FFFF) | 1 << 23))
}

/// `s · 2^(field − 150)` rounded to 24 bits, to nearest even, packed; `None` when the result would
/// not be normal (its exponent field, before or after rounding, outside 1..=254). `0 < s < 2^63`.
/// Written without data-dependent branches: the rounding's cases are arithmetic on flags.
fn round32(neg: bool, s: u64, field: i32) -> Option<u32> {
    let lz = s.leading_zeros();
    // The biased exponent of the leading bit: s has 64 − lz bits, its leading bit 2^(63 − lz).
    let before = field + (64 - lz as i32) - 24;
    // The leading bit moved to bit 63 (exactly): 24 bits kept above 40 rounded off.
    let t = s << lz;
    let (q, rest, half) = (t >> 40, t & ((1 << 40) - 1), 1u64 << 39);
    let q = q + u64::from((rest > half) | ((rest == half) & (q & 1 == 1)));
    // Rounding up from 2^24 − 1 carries into a 25th bit: one more to the exponent.
    let carry = (q >> 24) as u32;
    let (q, lead) = (q >> carry, before + carry as i32);
    ((1..=254).contains(&before) && lead <= 254)
        .then(|| (u32::from(neg) << 31) | ((lead as u32) << 23) | (q as u32 & 0x7F_FFFF))
}

fn mul32_normal(a: u32, b: u32) -> Option<u32> {
    let ((na, ea, ma), (nb, eb, mb)) = (normal32(a)?, normal32(b)?);
    // a·b = ma·mb · 2^(ea + eb − 300) = ma·mb · 2^((ea + eb − 150) − 150).
    round32(na != nb, ma * mb, ea + eb - 150)
}

fn add32_normal(a: u32, b: u32) -> Option<u32> {
    // The larger magnitude first: normals' patterns without the sign order as their magnitudes.
    let (x, y) = if a & 0x7FFF_FFFF >= b & 0x7FFF_FFFF {
        (a, b)
    } else {
        (b, a)
    };
    let ((nx, ex, mx), (ny, ey, my)) = (normal32(x)?, normal32(y)?);
    // Aligned at the smaller exponent, exactly, while it fits 64 bits; then `x ≥ y`.
    let gap = (ex - ey) as u32;
    if gap > 38 {
        return None;
    }
    let x = mx << gap;
    let s = if nx == ny { x + my } else { x - my };
    if s == 0 {
        return Some(0); // x − x = +0
    }
    round32(nx, s, ey)
}

/// The two integral-rounding functions CIS-2 uses: `floor` (§6.2) and `f64::round` (§6.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Integral {
    Floor,
    RoundHalfAway,
}

#[cfg(test)]
mod tests {
    use super::*;

    const FTZ: Env = Env::Flush(Tininess::AfterRounding);
    const FZ: Env = Env::Flush(Tininess::BeforeRounding);

    fn f32b(x: f32) -> u64 {
        u64::from(x.to_bits())
    }

    #[test]
    fn exact_small_cases() {
        let f = BINARY32;
        // 1 + 2 = 3, 1.5 · 2 = 3, 3 / 2 = 1.5, sqrt(64) = 8: all exact.
        assert_eq!(Env::Gradual.add(f, f32b(1.0), f32b(2.0)), f32b(3.0));
        assert_eq!(Env::Gradual.mul(f, f32b(1.5), f32b(2.0)), f32b(3.0));
        assert_eq!(Env::Gradual.div(f, f32b(3.0), f32b(2.0)), f32b(1.5));
        assert_eq!(Env::Gradual.sqrt(f, f32b(64.0)), f32b(8.0));
        // 1/3 = 0x3EAAAAAB: 0.0101…01|0101… rounds up at the 24th bit (the rest is above half).
        assert_eq!(Env::Gradual.div(f, f32b(1.0), f32b(3.0)), 0x3EAA_AAAB);
        // 1 + 2^-24 is a tie between 1 and 1 + 2^-23: to even, 1. 1 + 3·2^-24 ties up to 1 + 2^-22.
        assert_eq!(Env::Gradual.add(f, f32b(1.0), 0x3380_0000), f32b(1.0));
        assert_eq!(Env::Gradual.add(f, f32b(1.0), 0x3440_0000), 0x3F80_0002);
        // x − x = +0; (−0) + (−0) = −0.
        assert_eq!(Env::Gradual.sub(f, f32b(5.0), f32b(5.0)), 0);
        assert_eq!(Env::Gradual.add(f, 0x8000_0000, 0x8000_0000), 0x8000_0000);
    }

    #[test]
    fn subnormals_in_each_environment() {
        let f = BINARY32;
        // The smallest normal times 0.5 is 2^-127, a subnormal (0x00400000), flushed under FTZ.
        assert_eq!(Env::Gradual.mul(f, 0x0080_0000, f32b(0.5)), 0x0040_0000);
        assert_eq!(FTZ.mul(f, 0x0080_0000, f32b(0.5)), 0);
        // §1.3's self-test: 2^-126 · 1e-10 = +0, and the smallest subnormal + 0 = +0 (DAZ).
        assert_eq!(FTZ.mul(f, 0x0080_0000, f32b(1.0e-10)), 0);
        assert_eq!(FTZ.add(f, 0x0000_0001, 0), 0);
        assert_eq!(Env::Gradual.add(f, 0x0000_0001, 0), 1);
        // A negative tiny result keeps its sign.
        assert_eq!(FTZ.mul(f, 0x8080_0000, f32b(0.5)), 0x8000_0000);
    }

    #[test]
    fn tininess_before_and_after_rounding() {
        // SPEC-NOTES 15: 0x20000001 × 0x1FFFFFFE. The significands are (2^23 + 1) and
        // (2^24 − 2)·2^-1·… : 0x20000001 = (1 + 2^-23)·2^-63 and 0x1FFFFFFE = (2 − 2^-22)·2^-64,
        // so the exact product is (1 + 2^-23)(2 − 2^-22)·2^-127 = (2 − 2^-46)·2^-127
        // = 2^-126 − 2^-173: just below 2^-126, and 24-bit rounding takes it up to 2^-126.
        let (a, b) = (0x2000_0001, 0x1FFF_FFFE);
        assert_eq!(FTZ.mul(BINARY32, a, b), 0x0080_0000);
        assert_eq!(FZ.mul(BINARY32, a, b), 0);
        // Gradual underflow rounds on the subnormal grid: also 2^-126.
        assert_eq!(Env::Gradual.mul(BINARY32, a, b), 0x0080_0000);
    }

    #[test]
    fn matches_the_host_under_gradual_underflow() {
        // Correct rounding is unique: the host's IEEE-754 arithmetic (its default environment:
        // gradual underflow, nearest even) must agree bit for bit, NaNs aside.
        let mut s = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let f = BINARY32;
        for _ in 0..200_000 {
            let (a, b) = (next() as u32, next() as u32);
            let (x, y) = (f32::from_bits(a), f32::from_bits(b));
            let check = |got: u64, want: f32| {
                if want.is_nan() {
                    assert_eq!(got, f.nan(), "{a:08x} {b:08x}");
                } else {
                    assert_eq!(got, u64::from(want.to_bits()), "{a:08x} {b:08x}");
                }
            };
            let (a, b) = (u64::from(a), u64::from(b));
            check(Env::Gradual.add(f, a, b), x + y);
            check(Env::Gradual.sub(f, a, b), x - y);
            check(Env::Gradual.mul(f, a, b), x * y);
            check(Env::Gradual.div(f, a, b), x / y);
            check(Env::Gradual.sqrt(f, a), x.sqrt());
            let w = next();
            check(Env::Gradual.convert(BINARY64, f, w), f64::from_bits(w) as f32);
            let (c, d) = (next(), next());
            let (u, v) = (f64::from_bits(c), f64::from_bits(d));
            let check64 = |got: u64, want: f64| {
                if want.is_nan() {
                    assert_eq!(got, BINARY64.nan());
                } else {
                    assert_eq!(got, want.to_bits(), "{c:016x} {d:016x}");
                }
            };
            check64(Env::Gradual.add(BINARY64, c, d), u + v);
            check64(Env::Gradual.mul(BINARY64, c, d), u * v);
            check64(Env::Gradual.div(BINARY64, c, d), u / v);
            check64(Env::Gradual.sqrt(BINARY64, c), u.sqrt());
            check64(Env::Gradual.integral(BINARY64, c, Integral::RoundHalfAway), u.round());
            assert_eq!(Env::Gradual.compare(BINARY64, c, d), u.partial_cmp(&v));
        }
    }

    #[test]
    fn the_binary32_fast_paths_are_the_general_operations() {
        // Operands from every class: random bits, and exponents near the ends of the normal range
        // and near each other, where the fast paths hand over to the general operations.
        let mut s = 0x1234_5678_9ABC_DEF1u64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        let pick = |r: u64| -> u32 {
            let bits = r as u32;
            match (r >> 40) % 4 {
                0 => bits,
                1 => (bits & 0x807F_FFFF) | ((((r >> 48) % 8) as u32) << 23),
                2 => (bits & 0x807F_FFFF) | ((250 + ((r >> 48) % 5) as u32) << 23),
                _ => (bits & 0x807F_FFFF) | ((120 + ((r >> 48) % 16) as u32) << 23),
            }
        };
        for env in [FTZ, FZ, Env::Gradual] {
            for _ in 0..1_000_000 {
                let (a, b) = (pick(next()), pick(next()));
                let (a64, b64) = (u64::from(a), u64::from(b));
                assert_eq!(
                    u64::from(env.add32(a, b)),
                    env.add(BINARY32, a64, b64),
                    "{env:?} {a:08x} + {b:08x}"
                );
                assert_eq!(
                    u64::from(env.mul32(a, b)),
                    env.mul(BINARY32, a64, b64),
                    "{env:?} {a:08x} × {b:08x}"
                );
            }
        }
    }

    #[test]
    fn integral_rules() {
        let f = BINARY32;
        let fl = |x: f32| f32::from_bits(Env::Gradual.integral(f, f32b(x), Integral::Floor) as u32);
        assert_eq!(fl(-0.5), -1.0);
        assert_eq!(fl(2.5), 2.0);
        assert_eq!(fl(-3.0), -3.0);
        assert!(fl(0.25) == 0.0 && fl(0.25).is_sign_positive());
        let rd = |x: f64| f64::from_bits(Env::Gradual.integral(BINARY64, x.to_bits(), Integral::RoundHalfAway));
        assert_eq!(rd(2.5), 3.0);
        assert_eq!(rd(-2.5), -3.0);
        assert_eq!(rd(0.49999999999999994), 0.0);
        assert_eq!(Env::Gradual.to_int(BINARY64, (-7.0f64).to_bits()), -7);
    }
}
