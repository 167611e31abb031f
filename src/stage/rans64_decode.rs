//! E1 `rans64_decode` — PROVISIONAL.
//!
//! The modes (table rules `t4097` and `t2`, escapes `lenient` and `strict(lo, hi)`, end rules
//! `canonical` and `final_only`) and the per-symbol check order are the seeds' (§5E E1). The
//! core decode is integer-payloads §2, which the seeds do not contain; it is reconstructed
//! here as the 64-bit-state rANS the seeds imply, every assumption listed in
//! docs/assumptions.md (section "E1"):
//!
//! - the stream's first 8 bytes are the initial state `x` (little-endian); the rest are
//!   32-bit little-endian words read forward;
//! - a symbol takes `slot = x mod 2^16`, the `k` with `cdf[k] ≤ slot < cdf[k+1]`, and
//!   `x = (cdf[k+1] − cdf[k])·⌊x / 2^16⌋ + slot − cdf[k]`; `bits(k)` takes `x mod 2^k` and
//!   `x = ⌊x / 2^k⌋`; after each, when `x < 2^31`, one word is read: `x = x·2^32 + word`;
//! - the stream **runs out** when that read finds no word left; the state then stands;
//! - the escape is the table's last symbol, `k = n − 2`; every other symbol's value is `k`;
//! - a stream **ends canonically** when every word has been read and `x = 2^31`;
//! - `lenient`'s continuation groups add to the count.

use super::{Stop, require};
use crate::num::{floor_div, modulo, pow2};
use crate::refusal::Code;
use num_bigint::BigInt;
use num_traits::{ToPrimitive, Zero};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableRule {
    T4097,
    T2,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Escape {
    Lenient,
    Strict,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndRule {
    Canonical,
    FinalOnly,
}

/// The three modes, and `strict`'s range.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Modes {
    pub table: TableRule,
    pub escape: Escape,
    pub end: EndRule,
    /// `strict(lo, hi)`.
    pub range: Option<(BigInt, BigInt)>,
}

/// A table `cdf` of length `n` with its offset `o`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Table {
    pub cdf: Vec<BigInt>,
    pub offset: BigInt,
}

/// The renormalisation bound `2^31`, the state a canonical stream ends in.
fn low() -> BigInt {
    pow2(31)
}

/// The decoder's state: `x`, the words still to read, and whether the stream ran out.
struct State<'a> {
    x: BigInt,
    words: &'a [u8],
    ran_out: bool,
}

impl State<'_> {
    fn renormalise(&mut self) {
        if self.x < low() {
            match self.words.split_first_chunk::<4>() {
                Some((word, rest)) => {
                    self.x = &self.x * pow2(32) + u32::from_le_bytes(*word);
                    self.words = rest;
                }
                None => self.ran_out = true,
            }
        }
    }

    /// One symbol of `table`: its index `k`.
    fn symbol(&mut self, cdf: &[BigInt]) -> usize {
        let slot = modulo(&self.x, &pow2(16));
        let k = (0..cdf.len() - 1)
            .find(|&k| cdf[k] <= slot && slot < cdf[k + 1])
            .unwrap_or(0);
        let freq = &cdf[k + 1] - &cdf[k];
        self.x = freq * floor_div(&self.x, &pow2(16)) + slot - &cdf[k];
        self.renormalise();
        k
    }

    /// `bits(k)`.
    fn bits(&mut self, k: u32) -> BigInt {
        let v = modulo(&self.x, &pow2(k));
        self.x = floor_div(&self.x, &pow2(k));
        self.renormalise();
        v
    }
}

fn fits_i32(v: &BigInt) -> bool {
    crate::num::fits(v, 32)
}

fn saturate_i32(v: BigInt) -> BigInt {
    v.max(BigInt::from(i32::MIN)).min(BigInt::from(i32::MAX))
}

/// The value an escape's `raw` decodes to: `−⌊raw/2⌋ − 1` for odd `raw`, `⌊raw/2⌋ + (n − 2)` for even.
fn escape_value(raw: &BigInt, n: usize) -> BigInt {
    let half = floor_div(raw, &BigInt::from(2));
    if modulo(raw, &BigInt::from(2)).is_zero() {
        half + (n - 2)
    } else {
        -half - 1u32
    }
}

/// Checks every table, offset, mode and read before any symbol is decoded (`at = −1`).
fn conditions(stream: &[u8], tables: &[Table], reads: &[BigInt], modes: &Modes) -> Result<(), Stop> {
    require(
        stream.len().is_multiple_of(4) && stream.len() >= 8,
        "stream_length",
        || {
            format!(
                "the stream's {} bytes are not a multiple of 4 of at least 8",
                stream.len()
            )
        },
    )?;
    let (lo_n, hi_n) = match modes.table {
        TableRule::T4097 => (3, 4097),
        TableRule::T2 => (2, 65537),
    };
    for (i, t) in tables.iter().enumerate() {
        let n = t.cdf.len();
        require((lo_n..=hi_n).contains(&n), "table_n", || {
            format!("table {i}: n = {n} is outside {lo_n}..={hi_n}")
        })?;
        require(t.cdf[0].is_zero() && t.cdf[n - 1] == pow2(16), "table_ends", || {
            format!("table {i}: cdf does not run from 0 to 65536")
        })?;
        require(t.cdf.windows(2).all(|w| w[0] < w[1]), "table_order", || {
            format!("table {i}: cdf is not strictly increasing")
        })?;
        require(fits_i32(&t.offset), "offset", || {
            format!("table {i}: the offset does not fit i32")
        })?;
    }
    if modes.escape == Escape::Strict {
        let (lo, hi) = modes
            .range
            .as_ref()
            .ok_or_else(|| Stop::condition("strict_range", "strict needs lo and hi"))?;
        require(lo <= hi && fits_i32(lo) && fits_i32(hi), "strict_range", || {
            "strict's lo and hi are not lo ≤ hi within i32".into()
        })?;
    }
    for (s, r) in reads.iter().enumerate() {
        require(r.to_usize().is_some_and(|r| r < tables.len()), "read", || {
            format!("symbol {s}'s table {r} is not one of the tables given")
        })?;
    }
    Ok(())
}

/// Decodes one symbol per entry of `reads` (a table index), under `modes`.
pub fn decode(stream: &[u8], tables: &[Table], reads: &[BigInt], modes: &Modes) -> Result<Vec<BigInt>, Stop> {
    conditions(stream, tables, reads, modes)?;
    let (head, words) = stream.split_at(8);
    let mut st = State {
        x: BigInt::from_bytes_le(num_bigint::Sign::Plus, head),
        words,
        ran_out: false,
    };
    let mut out = Vec::with_capacity(reads.len());
    for (i, r) in reads.iter().enumerate() {
        let at = i as i64;
        let table = &tables[r.to_usize().unwrap_or(0)];
        let n = table.cdf.len();
        let ran_out_before = st.ran_out;
        st.ran_out = false;
        let k = st.symbol(&table.cdf);
        let mut count = BigInt::zero();
        let mut last_group = None;
        let value = if k + 2 < n {
            BigInt::from(k)
        } else {
            match modes.escape {
                Escape::Lenient => {
                    count = st.bits(4);
                    let mut group = count.clone();
                    let mut more = 0;
                    while group == BigInt::from(15) && !(st.ran_out || ran_out_before) && more < 8 {
                        group = st.bits(4);
                        count += &group;
                        more += 1;
                    }
                    let count = count.clone().min(BigInt::from(8)).to_u32().unwrap_or(8);
                    let raw: BigInt = (0..count).map(|j| st.bits(4) * pow2(4 * j)).sum();
                    saturate_i32(escape_value(&raw, n))
                }
                Escape::Strict => {
                    count = st.bits(4);
                    let mut raw = BigInt::zero();
                    if count <= BigInt::from(8) {
                        for j in 0..count.to_u32().unwrap_or(0) {
                            let g = st.bits(4);
                            raw += &g * pow2(4 * j);
                            last_group = Some(g);
                        }
                    }
                    escape_value(&raw, n)
                }
            }
        };
        let symbol = &value + &table.offset;
        let symbol = if modes.escape == Escape::Lenient {
            saturate_i32(symbol)
        } else {
            symbol
        };
        let ran_out_here = st.ran_out;
        st.ran_out |= ran_out_before;
        // The checks on one symbol, in order (§5E E1 *Checks on one symbol under strict*); under
        // lenient only the first applies. The first that applies refuses; the others are kept.
        let mut applies: Vec<(&'static str, Code, String)> = Vec::new();
        if modes.end == EndRule::Canonical && ran_out_here {
            applies.push((
                "exhausted",
                Code::StreamExhausted,
                format!("the stream ran out during symbol {i}"),
            ));
        }
        if modes.escape == Escape::Strict && k + 2 >= n {
            if count > BigInt::from(8) {
                applies.push((
                    "count",
                    Code::StreamNoncanonical,
                    format!("symbol {i}: escape count {count} > 8"),
                ));
            }
            if count >= BigInt::from(1) && last_group.as_ref().is_some_and(Zero::is_zero) {
                applies.push((
                    "minimal",
                    Code::StreamNoncanonical,
                    format!("symbol {i}: the escape's last group is 0"),
                ));
            }
        }
        if let (Escape::Strict, Some((lo, hi))) = (modes.escape, &modes.range)
            && (symbol < *lo || symbol > *hi)
        {
            applies.push((
                "range",
                Code::FieldRange,
                format!("symbol {i} = {symbol} is outside [{lo}, {hi}]"),
            ));
        }
        if let Some((rule, code, why)) = applies.first() {
            let mut stop = Stop::new(at, *code, rule, why.clone());
            stop.also = applies[1..].iter().map(|a| a.0).collect();
            return Err(stop);
        }
        out.push(symbol);
    }
    let end = reads.len() as i64;
    match modes.end {
        EndRule::Canonical if !(st.words.is_empty() && st.x == low()) => Err(Stop::new(
            end,
            Code::StreamNoncanonical,
            "end",
            "the stream does not end canonically",
        )),
        EndRule::FinalOnly if st.ran_out => {
            Err(Stop::new(end, Code::StreamExhausted, "exhausted", "the stream ran out"))
        }
        _ => Ok(out),
    }
}

/// One step the decoder takes, for the encoder to invert.
#[derive(Clone, Debug)]
pub enum Step {
    /// Symbol index `k` of table `cdf`.
    Symbol { cdf: Vec<BigInt>, k: usize },
    /// `bits(k)` reading `value`.
    Bits { k: u32, value: BigInt },
}

/// Encodes steps (in decode order) into a stream the decoder reads back exactly and that
/// ends canonically: the encoder starts from `x = 2^31`, inverts the steps in reverse, emits
/// a 32-bit word whenever the next step would take `x` past `2^63`, and writes its final
/// state first.
pub fn encode(steps: &[Step]) -> Vec<u8> {
    let mut x = low();
    let mut words: Vec<u32> = Vec::new();
    for step in steps.iter().rev() {
        let (freq, start, scale) = match step {
            Step::Symbol { cdf, k } => (&cdf[*k + 1] - &cdf[*k], cdf[*k].clone(), 16),
            Step::Bits { k, value } => (BigInt::from(1), value.clone(), *k),
        };
        // x_max = ((2^31 / 2^scale)·2^32)·freq: past it, one word moves out.
        let x_max = floor_div(&low(), &pow2(scale)) * pow2(32) * &freq;
        if x >= x_max {
            words.push(modulo(&x, &pow2(32)).to_u32().unwrap_or(0));
            x = floor_div(&x, &pow2(32));
        }
        x = floor_div(&x, &freq) * pow2(scale) + modulo(&x, &freq) + start;
    }
    let mut stream = x.to_u64().unwrap_or(0).to_le_bytes().to_vec();
    for w in words.iter().rev() {
        stream.extend_from_slice(&w.to_le_bytes());
    }
    stream
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cdf(v: &[i64]) -> Vec<BigInt> {
        v.iter().map(|&x| BigInt::from(x)).collect()
    }

    fn modes(escape: Escape, end: EndRule) -> Modes {
        Modes {
            table: TableRule::T4097,
            escape,
            end,
            range: Some((BigInt::from(-1000), BigInt::from(1000))),
        }
    }

    #[test]
    fn an_encoded_stream_decodes_back_and_ends_canonically() {
        // Table of 4 entries: symbols 0, 1 and the escape (k = 2).
        let c = cdf(&[0, 40000, 60000, 65536]);
        let table = Table {
            cdf: c.clone(),
            offset: BigInt::from(10),
        };
        let sym = |k| Step::Symbol { cdf: c.clone(), k };
        let bits = |v: i64| Step::Bits {
            k: 4,
            value: BigInt::from(v),
        };
        // 0, 1, then an escape with count 2 and groups 3, 1: raw = 3 + 16 = 19 (odd) → value −10.
        let steps = vec![sym(0), sym(1), sym(2), bits(2), bits(3), bits(1), sym(0)];
        let stream = encode(&steps);
        assert_eq!(stream.len() % 4, 0);
        let reads = vec![BigInt::zero(); 4];
        let got = decode(&stream, &[table], &reads, &modes(Escape::Strict, EndRule::Canonical)).unwrap();
        assert_eq!(got, [10, 11, 0, 10].map(BigInt::from).to_vec());
    }
}
