//! E1 `rans64_decode` (§5E) over the reconstructed core of docs/assumptions.md E1 (PROVISIONAL:
//! integer-payloads §2 is not in the seeds).
//!
//! The state is a `u64` and every step is exact in it: a symbol step forms at most
//! `f·(⌊x / 2^16⌋ + 1) − 1 ≤ 2^64 − 1`, and a renormalisation `x·2^32 + word` with `x < 2^31`. A
//! symbol is found by a table lookup (slot → index, built once per table read) rather than by a
//! search over `cdf`.

use super::dec::Dec;
use super::{Code, Refusal, SR};

/// The table rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TableRule {
    T4097,
    T2,
}

/// The escape rule; `strict`'s bounds as the request gives them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Escape {
    Lenient,
    Strict { lo: Dec, hi: Dec },
}

/// The end rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    Canonical,
    FinalOnly,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Modes {
    pub table: TableRule,
    pub escape: Escape,
    pub end: End,
}

/// A table as the request gives it.
#[derive(Clone, Debug)]
pub struct TableIn {
    pub cdf: Vec<Dec>,
    pub offset: Dec,
}

/// A table that met its rule: `cdf`, its offset, and (once read) its slot lookup.
struct Table {
    cdf: Vec<u32>,
    offset: i64,
    lookup: Option<Vec<u16>>,
}

impl Table {
    /// The index `k` with `cdf[k] ≤ slot < cdf[k+1]`, for each of the `2^16` slots.
    fn lookup(&mut self) -> &[u16] {
        let cdf = &self.cdf;
        self.lookup.get_or_insert_with(|| {
            let mut l = vec![0u16; 1 << 16];
            for (k, w) in cdf.windows(2).enumerate() {
                l[w[0] as usize..w[1] as usize].fill(k as u16);
            }
            l
        })
    }
}

/// Whether `cdf` meets the table rule: length within the rule, `cdf[0] = 0`, `cdf[n−1] = 65536`,
/// strictly increasing.
fn table_ok(cdf: &[Dec], rule: TableRule) -> Option<Vec<u32>> {
    let n = cdf.len();
    let (min_n, max_n) = match rule {
        TableRule::T4097 => (fault!("rans-t4097-accepts-2", 3, 2), 4097),
        TableRule::T2 => (2, 65537),
    };
    if n < min_n || n > max_n {
        return None;
    }
    let vals: Vec<i128> = cdf.iter().map(Dec::clamped).collect();
    if vals[0] != 0 || vals[n - 1] != 65536 || vals.windows(2).any(|w| w[0] >= w[1]) {
        return None;
    }
    Some(vals.iter().map(|&v| v as u32).collect())
}

/// The state and the words of a stream.
struct Coder<'a> {
    x: u64,
    words: &'a [u8],
    next: usize,
    /// The stream has run out: a renormalisation found no word left.
    ran_out: bool,
    /// It ran out during the current symbol's decode.
    ran_out_now: bool,
}

impl Coder<'_> {
    /// E1 item 4: one word when `x < 2^31`; with none left the state stands.
    fn renorm(&mut self) {
        if self.x < 1 << 31 {
            match self.words.get(4 * self.next..4 * self.next + 4) {
                Some(w) => {
                    let w = u32::from_le_bytes([w[0], w[1], w[2], w[3]]);
                    self.x = (self.x << 32) | u64::from(w);
                    self.next += 1;
                }
                None => {
                    self.ran_out = true;
                    self.ran_out_now = true;
                }
            }
        }
    }

    /// `bits(k)`, `k ≤ 4` here: `x mod 2^k`, then `x = ⌊x / 2^k⌋`.
    fn bits(&mut self, k: u32) -> u32 {
        let v = (self.x & ((1 << k) - 1)) as u32;
        self.x >>= k;
        self.renorm();
        v
    }

    /// A symbol step against `t`: the index `k` of the slot's interval.
    fn symbol(&mut self, t: &mut Table) -> usize {
        let slot = (self.x & 0xFFFF) as usize;
        let k = usize::from(t.lookup()[slot]);
        let (c0, c1) = (u64::from(t.cdf[k]), u64::from(t.cdf[k + 1]));
        self.x = (c1 - c0) * (self.x >> 16) + slot as u64 - c0;
        self.renorm();
        k
    }

    fn canonical_end(&self) -> bool {
        4 * self.next == self.words.len() && self.x == 1 << 31
    }
}

/// §5E's value for an escape's `raw`: `−⌊raw/2⌋ − 1` when odd, `⌊raw/2⌋ + (n − 2)` when even.
fn escape_value(raw: u64, n: usize) -> i64 {
    let half = (raw / 2) as i64;
    let negative = fault!("rans-escape-parity-swapped", raw % 2 == 1, raw % 2 != 1);
    if negative { -half - 1 } else { half + (n as i64 - 2) }
}

/// An escape's count: `first`, plus continuation groups while the group just read is 15 and the
/// stream has not run out, at most 8 of them.
fn continued(c: &mut Coder, first: u32) -> u32 {
    let (mut g, mut count, mut more) = (first, first, 0);
    while g == 15 && !c.ran_out && more < 8 {
        g = c.bits(4);
        count += g;
        more += 1;
    }
    count
}

/// `rans-range-before-exhausted`: whether `symbol` is outside strict mode's bounds.
#[cfg(feature = "mutants")]
fn outside(bounds: Option<(i64, i64)>, symbol: i64) -> bool {
    bounds.is_some_and(|(lo, hi)| !(lo..=hi).contains(&symbol))
}

fn sat_i32(v: i64) -> i64 {
    v.clamp(i32::MIN.into(), i32::MAX.into())
}

/// Decodes the symbols of `reads`, or refuses with E1's code and §14.1's `at`.
pub fn decode(stream: &[u8], tables: &[TableIn], reads: &[Dec], modes: &Modes) -> SR<Vec<i64>> {
    let mismatch = Err(Refusal {
        code: Code::ModelMismatch,
        at: -1,
    });
    // The conditions, before any symbol.
    if stream.len() < 8 || !stream.len().is_multiple_of(4) {
        return mismatch;
    }
    let mut ts = Vec::with_capacity(tables.len());
    for t in tables {
        let Some(cdf) = table_ok(&t.cdf, modes.table) else {
            return mismatch;
        };
        let fits = |o: &i64| fault!("rans-offset-unchecked", i32::try_from(*o).is_ok(), true);
        let Some(offset) = t.offset.to_i64().filter(fits) else {
            return mismatch;
        };
        ts.push(Table {
            cdf,
            offset,
            lookup: None,
        });
    }
    let bounds = match &modes.escape {
        Escape::Lenient => None,
        Escape::Strict { lo, hi } => {
            let fit = |v: &Dec| v.to_i64().filter(|v| i32::try_from(*v).is_ok());
            match (fit(lo), fit(hi)) {
                (Some(lo), Some(hi)) if fault!("rans-strict-bounds-unordered", lo <= hi, true) => Some((lo, hi)),
                _ => return mismatch,
            }
        }
    };
    let mut which = Vec::with_capacity(reads.len());
    for r in reads {
        match r.to_i64() {
            Some(i) if i >= 0 && (i as u64) < ts.len() as u64 => which.push(i as usize),
            _ => return mismatch,
        }
    }
    // The decode.
    let mut c = Coder {
        x: u64::from_le_bytes(stream[..8].try_into().expect("8 bytes")),
        words: &stream[8..],
        next: 0,
        ran_out: false,
        ran_out_now: false,
    };
    let canonical = modes.end == End::Canonical;
    let mut out = Vec::with_capacity(reads.len());
    for (i, &ti) in which.iter().enumerate() {
        let at = i as i64;
        let refuse = |code| Err(Refusal { code, at });
        let t = &mut ts[ti];
        c.ran_out_now = false;
        let n = t.cdf.len();
        let k = c.symbol(t);
        let escape = k == n - 2;
        let (symbol, count, last_group) = if !escape {
            // Every lenient symbol is saturated, a direct one too (docs/assumptions.md E1 item 6).
            let direct = k as i64 + t.offset;
            (if bounds.is_none() { sat_i32(direct) } else { direct }, 0, 0)
        } else if bounds.is_none() {
            // lenient: continuation groups while the group just read is 15 and the stream has
            // not run out, at most 8 of them; the count clamped to 8; the value and the symbol
            // saturated to i32.
            let first = c.bits(4);
            let count = continued(&mut c, first);
            let mut raw = 0u64;
            for j in 0..count.min(8) {
                raw |= u64::from(c.bits(4)) << (4 * j);
            }
            let value = escape_value(raw, n);
            let value = fault!("rans-lenient-unsaturated", sat_i32(value), value);
            let symbol = fault!("rans-lenient-unsaturated", sat_i32(value + t.offset), value + t.offset);
            (symbol, 0, 0)
        } else {
            // strict: one count and no continuation group; nothing saturated.
            let count = c.bits(4);
            let count = fault!("rans-strict-reads-continuation", count, continued(&mut c, count));
            let (mut raw, mut last) = (0u64, 0);
            if count <= 8 {
                for j in 0..count {
                    last = c.bits(4);
                    raw |= u64::from(last) << (4 * j);
                }
            }
            (escape_value(raw, n) + t.offset, count, last)
        };
        // The checks on one symbol, in order.
        if fault!("rans-range-before-exhausted", false, outside(bounds, symbol)) {
            return refuse(Code::FieldRange);
        }
        let each = fault!("rans-final-only-refuses-early", canonical, true);
        if each && c.ran_out_now {
            return refuse(Code::StreamExhausted);
        }
        if let Some((lo, hi)) = bounds {
            let unminimal = escape && count >= 1 && last_group == 0;
            // Equivalent when the minimality check comes first: a count past 8 reads no group, so
            // its last group is 0 and both checks give `stream_noncanonical` at this symbol.
            if fault!("rans-minimal-before-count", false, unminimal) {
                return refuse(Code::StreamNoncanonical);
            }
            if escape && count > 8 {
                return refuse(Code::StreamNoncanonical);
            }
            if unminimal {
                return refuse(Code::StreamNoncanonical);
            }
            if !(lo..=hi).contains(&symbol) {
                return refuse(Code::FieldRange);
            }
        }
        out.push(symbol);
    }
    let at = reads.len() as i64;
    match modes.end {
        End::Canonical if fault!("rans-canonical-end-unchecked", !c.canonical_end(), false) => Err(Refusal {
            code: Code::StreamNoncanonical,
            at,
        }),
        End::FinalOnly if c.ran_out => Err(Refusal {
            code: Code::StreamExhausted,
            at,
        }),
        _ => Ok(out),
    }
}
