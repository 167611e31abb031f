//! E8 `mans_decode` (§5E): the two-state masked table-ANS decode over a backward 64-bit window, in
//! both modes, with §14.1's refusal positions and docs/assumptions.md S4.
//!
//! The window is a `u64` head with a bit count and two `u8` states. The tables are built by a
//! closed form where the spec counts: the number of doublings that bring `v ∈ [1, 511]` to at least
//! 256 is `8 − ⌊log2 v⌋` (0 from 256 on), read from the leading zeros, both for the latent entries'
//! `nb` and for the preprocessing table `Zp` (whose running counter it equals, as a test checks).

use super::dec::Dec;
use super::{Code, Refusal, SR};

/// The number of doublings that bring `v ∈ [1, 511]` to at least 256.
pub fn doublings(v: u32) -> u32 {
    debug_assert!((1..512).contains(&v));
    if v >= 256 { 0 } else { v.leading_zeros() - 23 }
}

/// `Zp[i]` for `i ∈ [1, 511]`: `((i·2^nb) XOR 256) + 256·nb`, `nb` the doublings of `i`.
pub fn zp(i: u32) -> u32 {
    let nb = doublings(i);
    let nb = fault!("mans-zp-doubles-to-257", nb, if i << nb == 256 { nb + 1 } else { nb });
    ((i << nb) ^ 256) + 256 * nb
}

/// One latent slot as the builder writes it, before it is packed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Slot {
    pub sym: i64,
    pub next: u32,
}

/// `sym(k)`: `k/2` for even `k`, `−(k + 1)/2` for odd.
pub fn sym_of(k: usize) -> i64 {
    let k = k as i64;
    if k % 2 == 0 { k / 2 } else { -(k + 1) / 2 }
}

/// The 256 slots of a latent row `P` (non-negative, summing to 256): E8's *Building the latent
/// tables*, column by column while `C[k] < 256`. `None` for a slot no column writes (never, for a
/// row that meets the conditions; a test checks it).
pub fn latent_slots(p: &[u32]) -> [Option<Slot>; 256] {
    let mut slots = [None; 256];
    let mut c = 0u32; // C[k]
    for (k, &pk) in p.iter().enumerate() {
        if c >= 256 {
            break;
        }
        let c1 = c + pk;
        let (f0, f1) = (c - c / 2, c1 - c1 / 2);
        let (g0, g1) = (c / 2 + 128, c1 / 2 + 128);
        for u in f0..f1 {
            slots[u as usize] = Some(Slot {
                sym: sym_of(k),
                next: pk + (u - f0),
            });
        }
        for u in g0..g1 {
            slots[u as usize] = Some(Slot {
                sym: sym_of(k),
                next: pk + (f1 - f0) + (u - g0),
            });
        }
        c = c1;
    }
    slots
}

/// The packed entry `nb·2^24 + base·2^16 + (sym mod 2^16)`, with `base = (next·2^nb) XOR 256`.
fn pack(s: Slot) -> u32 {
    let nb = doublings(s.next);
    let base = (s.next << nb) ^ 256;
    (nb << 24) | (base << 16) | (s.sym.rem_euclid(1 << 16) as u32)
}

/// `wrap16(a)`.
fn wrap16(a: i64) -> i64 {
    (a + (1 << 15)).rem_euclid(1 << 16) - (1 << 15)
}

/// The refusal of a window step: the window needs bits or bytes the memory does not hold.
struct Exhausted;

/// The window over `M`, 8 zero bytes followed by the stream.
struct Window<'a> {
    stream: &'a [u8],
    p: usize,
    h: u64,
    b: u32,
    s: [u32; 2],
}

impl<'a> Window<'a> {
    /// `LE64(i)`: `M[i .. i + 8]`, little-endian, for `i ≤ L`.
    fn le64(&self, i: usize) -> u64 {
        (0..8).fold(0u64, |acc, j| {
            let byte = (i + j).checked_sub(8).map_or(0, |k| self.stream[k]);
            acc | (u64::from(byte) << (8 * j))
        })
    }

    fn init(stream: &'a [u8]) -> Result<Window<'a>, Exhausted> {
        let mut w = Window {
            stream,
            p: stream.len(),
            h: 0,
            b: 0,
            s: [0; 2],
        };
        w.h = w.le64(w.p);
        if w.h == 0 {
            return Err(Exhausted);
        }
        w.b = 63 - w.h.leading_zeros();
        w.h -= fault!("mans-sentinel-kept", 1 << w.b, 0);
        w.s[0] = w.read(8)?;
        w.s[1] = w.read(8)?;
        w.flush()?;
        Ok(w)
    }

    fn read(&mut self, k: u32) -> Result<u32, Exhausted> {
        if k > self.b {
            return Err(Exhausted);
        }
        self.b -= k;
        let r = self.h >> self.b;
        self.h -= r << self.b;
        Ok(r as u32)
    }

    fn flush(&mut self) -> Result<(), Exhausted> {
        let d = (7 ^ (self.b / 8)) as usize;
        let d = fault!("mans-flush-one-byte-short", d, d.saturating_sub(1));
        if d > self.p {
            return Err(Exhausted);
        }
        self.p -= d;
        let keep = 56 + self.b % 8;
        self.h = self.le64(self.p) & ((1u64 << keep) - 1);
        self.b = keep;
        Ok(())
    }

    /// `s_which = (⌊t/2^16⌋ OR read(⌊t/2^24⌋)) mod 2^8`.
    fn step_state(&mut self, which: usize, t: u32) -> Result<(), Exhausted> {
        let r = self.read(t >> 24)?;
        self.s[which] = ((t >> 16) | r) & 0xFF;
        Ok(())
    }
}

/// A span of the `sgm` mode as the request gives it.
#[derive(Clone, Debug)]
pub struct SpanIn {
    pub mask: Vec<bool>,
    pub sigma: Vec<Dec>,
}

/// Bookkeeping of §14.1's positions.
struct Positions {
    /// The position the current step belongs to.
    at: i64,
    /// The last position whose `in` step ran (0 before any: docs/assumptions.md S4).
    last_in: i64,
}

impl Positions {
    fn refusal(&self) -> Refusal {
        Refusal {
            code: Code::StreamExhausted,
            at: self.at,
        }
    }
    /// Enters position `i`'s `in` step.
    fn enter_in(&mut self, i: i64) {
        self.at = i;
        self.last_in = i;
    }
    /// A flush that belongs to no single position.
    fn group_flush(&mut self) {
        self.at = self.last_in;
    }
}

/// A group's flush: the window's, at the group's last `in` position.
fn group_flush(w: &mut Window, pos: &mut Positions) -> Result<(), Exhausted> {
    pos.group_flush();
    w.flush()
}

fn mismatch<T>() -> SR<T> {
    Err(Refusal {
        code: Code::ModelMismatch,
        at: -1,
    })
}

/// E8 in `sgm` mode.
pub fn decode_sgm(memory: &[u8], pmf: &[Vec<Dec>], bounds: &[Dec], spans: &[SpanIn]) -> SR<Vec<Vec<i64>>> {
    // The conditions: one width w ≥ 1, non-negative entries summing to 256; every bound in
    // [0, 255]; each span's mask and σ of one length, each σ naming a row and a bound.
    let width = pmf.first().map_or(1, Vec::len);
    let mut tables = Vec::with_capacity(pmf.len());
    for row in pmf {
        if row.len() != width || width == 0 {
            return mismatch();
        }
        let vals: Vec<i128> = row.iter().map(Dec::clamped).collect();
        if vals.iter().any(|&v| !(0..=256).contains(&v)) || vals.iter().sum::<i128>() != 256 {
            return mismatch();
        }
        let p: Vec<u32> = vals.iter().map(|&v| v as u32).collect();
        let slots = latent_slots(&p);
        let table: Vec<u32> = slots.iter().map(|s| pack(s.expect("every slot is written"))).collect();
        tables.push(table);
    }
    let mut beta = Vec::with_capacity(bounds.len());
    for b in bounds {
        match b.clamped() {
            v @ 0..=255 => beta.push(fault!("mans-bound-signed", v as i64, v as u8 as i8 as i64)),
            _ => return mismatch(),
        }
    }
    let named = pmf.len().min(beta.len()) as i128;
    let mut sigmas = Vec::with_capacity(spans.len());
    for sp in spans {
        if sp.mask.len() != sp.sigma.len() {
            return mismatch();
        }
        let mut ss = Vec::with_capacity(sp.sigma.len());
        for s in &sp.sigma {
            match s.clamped() {
                v if (0..named).contains(&v) => ss.push(v as usize),
                _ => return mismatch(),
            }
        }
        sigmas.push(ss);
    }
    // The decode.
    let mut pos = Positions { at: 0, last_in: 0 };
    let mut w = Window::init(memory).map_err(|_| pos.refusal())?;
    let mut out = Vec::with_capacity(spans.len());
    let mut base = 0i64;
    for (sp, sig) in spans.iter().zip(&sigmas) {
        let n = sp.mask.len();
        let mut sym = vec![0i64; n];
        // in(which, i) and out(i), each where the mask is set.
        let in_step = |w: &mut Window, pos: &mut Positions, sym: &mut [i64], i: usize, which: usize| {
            pos.enter_in(base + i as i64);
            if sp.mask[i] {
                let t = tables[sig[i]][w.s[which] as usize];
                w.step_state(which, t)?;
                sym[i] = wrap16(i64::from(t & 0xFFFF));
            }
            Ok::<(), Exhausted>(())
        };
        let out_step = |w: &mut Window, pos: &mut Positions, sym: &mut [i64], i: usize| {
            pos.at = base + i as i64;
            if sp.mask[i] {
                let b = beta[sig[i]];
                if sym[i] + b == 0 {
                    let f = w.read(1)?;
                    let short = fault!("mans-escape-short-read-4", 3, 4);
                    let v = i64::from(w.read(if f == 1 { short } else { 16 })?);
                    sym[i] = if fault!("mans-escape-sign-swapped", v % 2 == 0, v % 2 != 0) {
                        wrap16(v / 2 + b)
                    } else {
                        wrap16(-(v / 2) - b)
                    };
                    w.flush()?;
                }
            }
            Ok::<(), Exhausted>(())
        };
        let run = |w: &mut Window, pos: &mut Positions, sym: &mut [i64]| -> Result<(), Exhausted> {
            let mut i = 0;
            while n - i >= 4 {
                for j in 0..4 {
                    in_step(w, pos, sym, i + j, j % 2)?;
                }
                fault!("mans-group-flush-after-out", group_flush(w, pos)?, ());
                for j in 0..4 {
                    out_step(w, pos, sym, i + j)?;
                }
                fault!("mans-group-flush-after-out", (), group_flush(w, pos)?);
                i += 4;
            }
            if n - i >= 2 {
                for j in 0..2 {
                    in_step(w, pos, sym, i + j, fault!("mans-remainder-pair-one-state", j, 0))?;
                    out_step(w, pos, sym, i + j)?;
                }
                pos.group_flush();
                w.flush()?;
                i += 2;
            }
            if n - i == 1 {
                in_step(w, pos, sym, i, 0)?;
                out_step(w, pos, sym, i)?;
                pos.group_flush();
                w.flush()?;
            }
            Ok(())
        };
        run(&mut w, &mut pos, &mut sym).map_err(|_| pos.refusal())?;
        out.push(sym);
        base += n as i64;
    }
    Ok(out)
}

/// The most symbols `fac` mode decodes: §3's cap on a tensor (docs/assumptions.md S7).
pub const FAC_CAP: u64 = 1 << 26;

/// E8 in `fac` mode.
pub fn decode_fac(memory: &[u8], rows: &[Vec<Dec>], lengths: &[Dec]) -> SR<Vec<Vec<i64>>> {
    // The conditions: each row 63 counts 0 ≤ c_0 ≤ … ≤ c_62 ≤ 255; one length for each row.
    if rows.len() != lengths.len() {
        return mismatch();
    }
    let mut counts = Vec::with_capacity(rows.len());
    for row in rows {
        let c: Vec<i128> = row.iter().map(Dec::clamped).collect();
        let unordered = c.windows(2).any(|w| w[0] > w[1]);
        if c.len() != 63 || c[0] < 0 || c[62] > 255 || fault!("mans-fac-order-unchecked", unordered, false) {
            return mismatch();
        }
        counts.push(c.iter().map(|&v| v as u32).collect::<Vec<u32>>());
    }
    let mut lens = Vec::with_capacity(lengths.len());
    for l in lengths {
        if l.is_neg() {
            return mismatch();
        }
        lens.push(l.to_i128().and_then(|v| u64::try_from(v).ok()).unwrap_or(u64::MAX));
    }
    // The lengths' total, before any symbol is decoded (S7); a length past u64 passes it too.
    if lens
        .iter()
        .try_fold(0u64, |t, &n| t.checked_add(n))
        .is_none_or(|t| t > FAC_CAP)
    {
        return Err(Refusal {
            code: Code::TooLarge,
            at: -1,
        });
    }
    // The decode.
    let mut pos = Positions { at: 0, last_in: 0 };
    let mut w = match Window::init(memory) {
        Ok(w) => w,
        Err(_) => return Err(pos.refusal()),
    };
    let mut tz = [0u32; 256];
    let mut out = Vec::with_capacity(rows.len());
    let mut base = 0u64;
    for (c, &n) in counts.iter().zip(&lens) {
        fault!("mans-fac-table-reset", (), tz = [0u32; 256]);
        // The row table: slots [c_{a−1}, c_a) for a < 63, then slot 255.
        let mut prev = 0;
        for (a, &ca) in c.iter().enumerate() {
            let k = ca - prev;
            for j in prev..ca {
                tz[j as usize] = (zp(k + j - prev) << 16) | a as u32;
            }
            prev = ca;
        }
        tz[255] = (zp(1) << 16) | 63;
        // Symbols of this mode are below 64.
        let mut sym: Vec<u8> = Vec::new();
        let in_step = |w: &mut Window, pos: &mut Positions, sym: &mut Vec<u8>, which: usize| {
            pos.enter_in((base + sym.len() as u64) as i64);
            let t = tz[w.s[which] as usize];
            w.step_state(which, t)?;
            sym.push((t & 0xFF) as u8);
            Ok::<(), Exhausted>(())
        };
        let out_step = |w: &mut Window, pos: &mut Positions, sym: &mut [u8], i: u64| {
            pos.at = (base + i) as i64;
            if sym[i as usize] == 63 {
                sym[i as usize] = w.read(6)? as u8;
            }
            Ok::<(), Exhausted>(())
        };
        let run = |w: &mut Window, pos: &mut Positions, sym: &mut Vec<u8>| -> Result<(), Exhausted> {
            let mut i = 0u64;
            while n - i >= 4 {
                for j in 0..4 {
                    in_step(w, pos, sym, j % 2)?;
                }
                for j in 0..4 {
                    out_step(w, pos, sym, i + j)?;
                }
                pos.group_flush();
                w.flush()?;
                i += 4;
            }
            if n - i >= 2 {
                for j in 0..2 {
                    in_step(w, pos, sym, j as usize)?;
                    out_step(w, pos, sym, i + j)?;
                }
                i += 2;
            }
            if n - i == 1 {
                in_step(w, pos, sym, 0)?;
                out_step(w, pos, sym, i)?;
            }
            // The row's final flush.
            if fault!("mans-fac-row-flush-only-remainder", true, n % 4 != 0) {
                pos.group_flush();
                w.flush()?;
            }
            Ok(())
        };
        if run(&mut w, &mut pos, &mut sym).is_err() {
            return Err(pos.refusal());
        }
        out.push(sym.into_iter().map(i64::from).collect());
        base += n;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn di(v: i128) -> Dec {
        Dec::from_i128(v)
    }
    fn row(vs: &[u32]) -> Vec<Dec> {
        vs.iter().map(|&v| di(v.into())).collect()
    }

    /// E8's `Zp`, as the spec counts it: from 511 down, `nb` grows by one when `i·2^nb < 256`.
    fn zp_literal() -> Vec<u32> {
        let mut z = vec![0; 512];
        let mut nb = 0;
        for i in (1..=511u32).rev() {
            if i << nb < 256 {
                nb += 1;
            }
            z[i as usize] = ((i << nb) ^ 256) + 256 * nb;
        }
        z
    }

    #[test]
    fn zp_closed_form_is_the_counter() {
        let z = zp_literal();
        for i in 1..=511 {
            assert_eq!(zp(i), z[i as usize], "{i}");
            // Its nb is ⌊Zp/2^8⌋, and its base below 256.
            assert_eq!(zp(i) >> 8, doublings(i));
        }
        assert_eq!(zp(1), 2048);
        assert_eq!(zp(256), 0);
        assert_eq!(zp(255), 254 + 256);
    }

    #[test]
    fn sym_and_the_packing_of_a_negative_symbol() {
        assert_eq!((0..5).map(sym_of).collect::<Vec<_>>(), [0, -1, 1, -2, 2]);
        assert_eq!(pack(Slot { sym: -1, next: 1 }), (8 << 24) | 0xFFFF);
        assert_eq!(pack(Slot { sym: 3, next: 300 }), (44 << 16) | 3);
    }

    #[test]
    fn window_operations() {
        // The 8 zero bytes in front may be read (S4): a stream of one byte 0x01 is only its
        // sentinel at bit 0, so init's read(8) refuses.
        assert!(Window::init(&[0x01]).is_err());
        assert!(Window::init(&[]).is_err());
        assert!(Window::init(&[0; 12]).is_err()); // a zero tail: no sentinel
        // Sentinel at bit 63 of the last 8 bytes: reads s1 and s2 from the bits below it, and the
        // flush moves back two bytes, into the zero prefix.
        // h = 0x4DAB·2^48 after the sentinel: s1 = bits 62..55 = 0x9B, s2 = bits 54..47 = 0x56;
        // b = 47, so d = 7 XOR 5 = 2 and b = 56 + 7.
        let w = Window::init(&[0, 0, 0, 0, 0, 0, 0xAB, 0xCD]).ok().unwrap();
        assert_eq!(w.s, [0x9B, 0x56]);
        assert_eq!((w.p, w.b), (6, 63));
        // LE64(6) = M[6..14]: two zero bytes of the prefix, then the stream's first six.
        assert_eq!(w.h, 0);
    }

    #[test]
    fn sgm_decodes_and_refuses_at_positions() {
        let pmf = vec![row(&[128, 128])];
        let bounds = vec![di(0)];
        let span = |n: usize, mask: bool| SpanIn {
            mask: vec![mask; n],
            sigma: vec![di(0); n],
        };
        // No memory: init refuses at 0, even with no positions.
        assert_eq!(
            decode_sgm(&[], &pmf, &bounds, &[]),
            Err(Refusal {
                code: Code::StreamExhausted,
                at: 0
            })
        );
        // Unmasked positions are 0 and read nothing.
        let mem = [0x5A; 9];
        assert_eq!(decode_sgm(&mem, &pmf, &bounds, &[span(6, false)]), Ok(vec![vec![0; 6]]));
        // Conditions.
        let mm = Err(Refusal {
            code: Code::ModelMismatch,
            at: -1,
        });
        assert_eq!(decode_sgm(&mem, &[row(&[128, 127])], &bounds, &[]), mm);
        assert_eq!(decode_sgm(&mem, &[row(&[128, 128]), row(&[256])], &bounds, &[]), mm);
        assert_eq!(decode_sgm(&mem, &pmf, &[di(256)], &[]), mm);
        let mut bad = span(3, true);
        bad.sigma[1] = di(1);
        assert_eq!(decode_sgm(&mem, &pmf, &bounds, &[bad]), mm);
        let mut bad = span(3, false);
        bad.mask.pop();
        assert_eq!(decode_sgm(&mem, &pmf, &bounds, &[bad]), mm);
    }

    #[test]
    fn fac_conditions_and_a_decode_that_reads_nothing() {
        // A row whose every count is 0 writes only slot 255; from state 0 every step reads
        // nothing, and the decode never needs a byte.
        let zero = row(&[0; 63]);
        let mem = [0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x80];
        let got = decode_fac(&mem, std::slice::from_ref(&zero), &[di(10)]);
        assert_eq!(got, Ok(vec![vec![0; 10]]));
        // Such a decode never refuses, so the lengths' total is bounded up front (S7): a total of
        // 2^26 + 1 is too large, and so is a length past u64.
        let too_large = Err(Refusal {
            code: Code::TooLarge,
            at: -1,
        });
        let two = [zero.clone(), zero.clone()];
        assert_eq!(decode_fac(&mem, &two, &[di(1 << 25), di((1 << 25) + 1)]), too_large);
        assert_eq!(decode_fac(&mem, &[zero], &[di(1 << 70)]), too_large);
        // Conditions.
        let mm = Err(Refusal {
            code: Code::ModelMismatch,
            at: -1,
        });
        assert_eq!(decode_fac(&mem, &[row(&[0; 62])], &[di(1)]), mm);
        let mut dec = vec![0u32; 63];
        dec[3] = 5;
        assert_eq!(decode_fac(&mem, &[row(&dec)], &[di(1)]), mm);
        let mut high = vec![0u32; 63];
        high[62] = 256;
        assert_eq!(decode_fac(&mem, &[row(&high)], &[di(1)]), mm);
        assert_eq!(decode_fac(&mem, &[row(&[0; 63])], &[]), mm);
        assert_eq!(decode_fac(&mem, &[row(&[0; 63])], &[di(-1)]), mm);
    }
}
