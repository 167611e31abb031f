//! E8 `mans_decode`: a two-state masked table-ANS decode over a backward 64-bit bit window,
//! in two modes, `sgm` (latents) and `fac` (hyper-latents).
//!
//! Tables and operands are checked first (`model_mismatch`, `at = −1`); every refusal after
//! that is `stream_exhausted`, at the position §14.1 names.

use super::{Stop, require};
use crate::num::{floor_div, modulo, pow2, wrap16};
use crate::refusal::Code;
use crate::whg1::CAP;
use num_bigint::{BigInt, Sign};
use num_traits::{ToPrimitive, Zero};

/// The window would need bits or bytes the stream does not hold.
#[derive(Debug)]
struct Exhausted;

/// *Memory and window*: `M` is 8 zero bytes followed by the stream; the window holds `p`,
/// the head `h`, the bit position `b` and the two states.
struct Window {
    memory: Vec<u8>,
    p: usize,
    h: BigInt,
    b: u32,
    s: [BigInt; 2],
}

impl Window {
    /// `LE64(i)`: the little-endian 64-bit value at `M[i .. i + 8]`.
    fn le64(&self, i: usize) -> BigInt {
        BigInt::from_bytes_le(num_bigint::Sign::Plus, &self.memory[i..i + 8])
    }

    /// `init`: `p = L; h = LE64(p)`, refused when `h = 0` (no sentinel bit); `b` the index of
    /// `h`'s highest set bit, which is removed; `s1 = read(8); s2 = read(8); flush`.
    fn init(stream: &[u8]) -> Result<Window, Exhausted> {
        let mut memory = vec![0u8; 8];
        memory.extend_from_slice(stream);
        let mut w = Window {
            memory,
            p: stream.len(),
            h: BigInt::zero(),
            b: 0,
            s: [BigInt::zero(), BigInt::zero()],
        };
        w.h = w.le64(w.p);
        if w.h.is_zero() {
            return Err(Exhausted);
        }
        w.b = (w.h.bits() - 1) as u32;
        w.h -= pow2(w.b);
        w.s[0] = w.read(8)?;
        w.s[1] = w.read(8)?;
        w.flush()?;
        Ok(w)
    }

    /// `read(k)`: refused when `k > b`; `b = b − k; r = ⌊h / 2^b⌋; h = h − r·2^b`.
    fn read(&mut self, k: u32) -> Result<BigInt, Exhausted> {
        if k > self.b {
            return Err(Exhausted);
        }
        self.b -= k;
        let r = floor_div(&self.h, &pow2(self.b));
        self.h -= &r * pow2(self.b);
        Ok(r)
    }

    /// `flush`: `d = 7 XOR ⌊b / 8⌋`, refused when `d > p`; `p = p − d;
    /// h = LE64(p) mod 2^(56 + (b mod 8)); b = 56 + (b mod 8)`.
    fn flush(&mut self) -> Result<(), Exhausted> {
        let d = (7 ^ (self.b / 8)) as usize;
        if d > self.p {
            return Err(Exhausted);
        }
        self.p -= d;
        let keep = 56 + self.b % 8;
        self.h = modulo(&self.le64(self.p), &pow2(keep));
        self.b = keep;
        Ok(())
    }

    /// The shared first step of `in`: `s_which = (⌊t/2^16⌋ OR read(⌊t/2^24⌋)) mod 2^8`.
    fn advance(&mut self, which: usize, t: &BigInt) -> Result<(), Exhausted> {
        let k = floor_div(t, &pow2(24)).to_u32().unwrap_or(u32::MAX);
        let r = self.read(k)?;
        self.s[which] = modulo(&(floor_div(t, &pow2(16)) | r), &pow2(8));
        Ok(())
    }

    fn state(&self, which: usize) -> usize {
        self.s[which].to_usize().unwrap_or(0)
    }
}

/// One slot of a latent table: its symbol and `next`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Slot {
    pub sym: BigInt,
    pub next: BigInt,
}

/// `sym(k)`: `k/2` if `k` is even, `−(k + 1)/2` if odd.
fn sym_of(k: usize) -> BigInt {
    if k.is_multiple_of(2) {
        BigInt::from(k / 2)
    } else {
        -BigInt::from(k.div_ceil(2))
    }
}

/// *Building the latent tables*, for one row `P` (non-negative, summing to 256): each of the
/// 256 slots with its symbol and `next`, or `None` for a slot nothing writes (which §5E says
/// never happens). The slot loops index `slots` by `u` because `next` is a formula in `u`.
#[allow(clippy::needless_range_loop)]
pub fn latent_slots(p: &[BigInt]) -> Vec<Option<Slot>> {
    let mut c = vec![BigInt::zero()];
    for pk in p {
        let next = c.last().cloned().unwrap_or_default() + pk;
        c.push(next);
    }
    let f = |k: usize| &c[k] - floor_div(&c[k], &BigInt::from(2));
    let g = |k: usize| floor_div(&c[k], &BigInt::from(2)) + 128;
    let mut slots: Vec<Option<Slot>> = vec![None; 256];
    let idx = |v: &BigInt| v.to_usize().unwrap_or(usize::MAX);
    for k in 0..p.len() {
        if c[k] >= BigInt::from(256) {
            break;
        }
        for u in idx(&f(k))..idx(&f(k + 1)) {
            let next = &p[k] + (BigInt::from(u) - f(k));
            slots[u] = Some(Slot { sym: sym_of(k), next });
        }
        for u in idx(&g(k))..idx(&g(k + 1)) {
            let next = &p[k] + (f(k + 1) - f(k)) + (BigInt::from(u) - g(k));
            slots[u] = Some(Slot { sym: sym_of(k), next });
        }
    }
    slots
}

/// `nb`: the number of doublings that bring `next` to at least 256.
pub fn doublings(next: &BigInt) -> u32 {
    (0..).find(|&nb| next * pow2(nb) >= BigInt::from(256)).unwrap_or(0)
}

/// A slot's entry `nb·2^24 + base·2^16 + (sym mod 2^16)`, `base = (next·2^nb) XOR 256`.
fn entry(slot: &Slot) -> BigInt {
    let nb = doublings(&slot.next);
    let base = (&slot.next * pow2(nb)) ^ BigInt::from(256);
    BigInt::from(nb) * pow2(24) + base * pow2(16) + modulo(&slot.sym, &pow2(16))
}

/// The decode's input for `sgm`: the rows `P[σ]`, the bounds `B_y` and the spans.
pub struct Sgm {
    pub pmf: Vec<Vec<BigInt>>,
    pub bounds: Vec<BigInt>,
    pub spans: Vec<Span>,
}

pub struct Span {
    pub mask: Vec<bool>,
    pub sigma: Vec<BigInt>,
}

/// The decode's input for `fac`: the rows of 63 cumulative counts and each row's length.
pub struct Fac {
    pub rows: Vec<Vec<BigInt>>,
    pub lengths: Vec<BigInt>,
}

/// Where the decode is, to name a refusal's position (§14.1 *The refusal index*).
struct Cursor {
    window: Window,
    /// The last position whose `in` step ran.
    last_in: i64,
}

/// A refusal in the window's `init`: `at = 0` (§14.1).
fn at_init(_: Exhausted) -> Stop {
    Stop::new(
        0,
        Code::StreamExhausted,
        "init",
        "the window's init needs bits the stream does not hold",
    )
}

fn exhausted(at: i64) -> impl Fn(Exhausted) -> Stop {
    move |_| {
        Stop::new(
            at,
            Code::StreamExhausted,
            "exhausted",
            format!("the window needs bits the stream does not hold (at {at})"),
        )
    }
}

/// An escape the decode took: its position, and for `sgm` the bound `β` it was taken at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Escaped {
    pub at: i64,
    pub bound: Option<BigInt>,
}

/// `sgm` mode: the latent symbols, one array per span, 0 at every unmasked position.
pub fn decode_sgm(memory: &[u8], d: &Sgm) -> Result<Vec<Vec<BigInt>>, Stop> {
    decode_sgm_traced(memory, d, &mut Vec::new())
}

/// `decode_sgm`, recording every escape taken (for the coverage tool).
pub fn decode_sgm_traced(memory: &[u8], d: &Sgm, escapes: &mut Vec<Escaped>) -> Result<Vec<Vec<BigInt>>, Stop> {
    let rows = d.pmf.len();
    let width = d.pmf.first().map_or(0, Vec::len);
    for (r, row) in d.pmf.iter().enumerate() {
        require(row.len() == width && width >= 1, "pmf_width", || {
            format!("pmf row {r} does not have the rows' one width w ≥ 1")
        })?;
        require(row.iter().all(|v| *v >= BigInt::zero()), "pmf_negative", || {
            format!("pmf row {r} holds a negative entry")
        })?;
        require(row.iter().sum::<BigInt>() == BigInt::from(256), "pmf_sum", || {
            format!("pmf row {r} does not sum to 256")
        })?;
    }
    for (i, b) in d.bounds.iter().enumerate() {
        require(*b >= BigInt::zero() && *b <= BigInt::from(255), "bound", || {
            format!("bound {i} is not in [0, 255]")
        })?;
    }
    for (k, span) in d.spans.iter().enumerate() {
        require(span.mask.len() == span.sigma.len(), "span_lengths", || {
            format!("span {k}: mask and sigma differ in length")
        })?;
        for s in &span.sigma {
            let ok = s.to_usize().is_some_and(|s| s < rows && s < d.bounds.len());
            require(ok, "sigma", || {
                format!("span {k}: σ = {s} names no row of T_y and bound")
            })?;
        }
    }
    let tables: Vec<Vec<BigInt>> = d
        .pmf
        .iter()
        .map(|p| {
            latent_slots(p)
                .iter()
                .map(|s| s.as_ref().map_or_else(BigInt::zero, entry))
                .collect()
        })
        .collect();
    let mut cur = Cursor {
        window: Window::init(memory).map_err(at_init)?,
        last_in: 0,
    };
    let mut out = Vec::new();
    let mut base = 0i64;
    for span in &d.spans {
        let n = span.mask.len();
        let sigma: Vec<usize> = span.sigma.iter().map(|s| s.to_usize().unwrap_or(0)).collect();
        let mut sym = vec![BigInt::zero(); n];
        // in(which, i): t = T_y[σ_i][s_which]; advance the state; sym_i = wrap16(t mod 2^16).
        let step_in = |cur: &mut Cursor, sym: &mut [BigInt], which: usize, i: usize| -> Result<(), Stop> {
            cur.last_in = base + i as i64;
            if !span.mask[i] {
                return Ok(());
            }
            let t = tables[sigma[i]][cur.window.state(which)].clone();
            cur.window.advance(which, &t).map_err(exhausted(base + i as i64))?;
            sym[i] = wrap16(&modulo(&t, &pow2(16)));
            Ok(())
        };
        // out(i): the escape when sym_i + β = 0.
        let mut step_out = |cur: &mut Cursor, sym: &mut [BigInt], i: usize| -> Result<(), Stop> {
            if !span.mask[i] {
                return Ok(());
            }
            let beta = &d.bounds[sigma[i]];
            if (&sym[i] + beta).is_zero() {
                escapes.push(Escaped {
                    at: base + i as i64,
                    bound: Some(beta.clone()),
                });
                let at = exhausted(base + i as i64);
                let w = &mut cur.window;
                let f = w.read(1).map_err(&at)?;
                let v = w.read(if f == BigInt::from(1) { 3 } else { 16 }).map_err(&at)?;
                let half = floor_div(&v, &BigInt::from(2));
                sym[i] = if modulo(&v, &BigInt::from(2)).is_zero() {
                    wrap16(&(half + beta))
                } else {
                    wrap16(&(-half - beta))
                };
                w.flush().map_err(&at)?;
            }
            Ok(())
        };
        let flush = |cur: &mut Cursor| cur.window.flush().map_err(exhausted(cur.last_in));
        let mut i = 0;
        while i + 4 <= n {
            for q in 0..4 {
                step_in(&mut cur, &mut sym, q % 2, i + q)?;
            }
            flush(&mut cur)?;
            for q in 0..4 {
                step_out(&mut cur, &mut sym, i + q)?;
            }
            i += 4;
        }
        if n % 4 >= 2 {
            for q in 0..2 {
                step_in(&mut cur, &mut sym, q, i + q)?;
                step_out(&mut cur, &mut sym, i + q)?;
            }
            flush(&mut cur)?;
            i += 2;
        }
        if n % 2 == 1 {
            step_in(&mut cur, &mut sym, 0, i)?;
            step_out(&mut cur, &mut sym, i)?;
            flush(&mut cur)?;
        }
        base += n as i64;
        out.push(sym);
    }
    Ok(out)
}

/// *The preprocessing table* `Zp[i]` for `i` from 511 down to 1 (index 0 unused).
pub fn zp() -> Vec<BigInt> {
    let mut zp = vec![BigInt::zero(); 512];
    let mut nb = 0u32;
    for i in (1..512usize).rev() {
        if BigInt::from(i) * pow2(nb) < BigInt::from(256) {
            nb += 1;
        }
        zp[i] = ((BigInt::from(i) * pow2(nb)) ^ BigInt::from(256)) + BigInt::from(256) * nb;
    }
    zp
}

/// `fac` mode: the hyper-latent symbols, one array per row.
pub fn decode_fac(memory: &[u8], d: &Fac) -> Result<Vec<Vec<BigInt>>, Stop> {
    decode_fac_traced(memory, d, &mut Vec::new())
}

/// `decode_fac`, recording every escape taken (for the coverage tool).
pub fn decode_fac_traced(memory: &[u8], d: &Fac, escapes: &mut Vec<Escaped>) -> Result<Vec<Vec<BigInt>>, Stop> {
    for (r, row) in d.rows.iter().enumerate() {
        require(row.len() == 63, "row_counts", || {
            format!("row {r} holds {} counts, not 63", row.len())
        })?;
        let ok = row.first().is_some_and(|c| *c >= BigInt::zero())
            && row.windows(2).all(|w| w[0] <= w[1])
            && row.last().is_some_and(|c| *c <= BigInt::from(255));
        require(ok, "row_order", || format!("row {r} is not 0 ≤ c_0 ≤ … ≤ c_62 ≤ 255"))?;
    }
    require(d.lengths.len() == d.rows.len(), "lengths", || {
        "there is not one length for each row".into()
    })?;
    for (r, l) in d.lengths.iter().enumerate() {
        require(l.sign() != Sign::Minus, "length", || format!("length {r} is negative"))?;
    }
    // The symbols are one tensor's worth at most (§3's cap; docs/assumptions.md S7).
    let total: BigInt = d.lengths.iter().sum();
    if total > BigInt::from(CAP) {
        return Err(Stop::new(-1, Code::TooLarge, "size", "the lengths pass 2^26 symbols"));
    }
    let zp = zp();
    let mut tz = vec![BigInt::zero(); 256];
    let mut cur = Cursor {
        window: Window::init(memory).map_err(at_init)?,
        last_in: 0,
    };
    let mut out = Vec::new();
    let mut base = 0i64;
    for (row, len) in d.rows.iter().zip(&d.lengths) {
        // The row table: slots [c_{a−1}, c_a) get Zp[k + j − c_{a−1}]·2^16 + a, then slot 255.
        let count = |v: &BigInt| v.to_usize().unwrap_or(0);
        for a in 0..63 {
            let lo = if a == 0 { 0 } else { count(&row[a - 1]) };
            let hi = count(&row[a]);
            let k = hi - lo;
            for j in lo..hi {
                tz[j] = &zp[k + j - lo] * pow2(16) + a;
            }
        }
        tz[255] = &zp[1] * pow2(16) + 63u32;
        let n = count(len);
        let mut sym = vec![BigInt::zero(); n];
        let step_in = |cur: &mut Cursor, sym: &mut [BigInt], which: usize, i: usize| -> Result<(), Stop> {
            cur.last_in = base + i as i64;
            let t = tz[cur.window.state(which)].clone();
            cur.window.advance(which, &t).map_err(exhausted(base + i as i64))?;
            sym[i] = modulo(&t, &pow2(8));
            Ok(())
        };
        let mut step_out = |cur: &mut Cursor, sym: &mut [BigInt], i: usize| -> Result<(), Stop> {
            if sym[i] == BigInt::from(63) {
                escapes.push(Escaped {
                    at: base + i as i64,
                    bound: None,
                });
                sym[i] = cur.window.read(6).map_err(exhausted(base + i as i64))?;
            }
            Ok(())
        };
        let flush = |cur: &mut Cursor| cur.window.flush().map_err(exhausted(cur.last_in));
        let mut i = 0;
        while i + 4 <= n {
            for q in 0..4 {
                step_in(&mut cur, &mut sym, q % 2, i + q)?;
            }
            for q in 0..4 {
                step_out(&mut cur, &mut sym, i + q)?;
            }
            flush(&mut cur)?;
            i += 4;
        }
        if n % 4 >= 2 {
            for q in 0..2 {
                step_in(&mut cur, &mut sym, q, i + q)?;
                step_out(&mut cur, &mut sym, i + q)?;
            }
            i += 2;
        }
        if n % 2 == 1 {
            step_in(&mut cur, &mut sym, 0, i)?;
            step_out(&mut cur, &mut sym, i)?;
        }
        flush(&mut cur)?;
        base += n as i64;
        out.push(sym);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zp_doubles_below_256() {
        // At i = 511 … 256, nb stays 0: Zp[i] = i XOR 256. At i = 255, 255·1 < 256, so nb = 1:
        // Zp[255] = (510 XOR 256) + 256 = 254 + 256. At i = 1, nb = 8: (256 XOR 256) + 2048 = 2048.
        let zp = zp();
        assert_eq!(zp[511], BigInt::from(255));
        assert_eq!(zp[256], BigInt::from(0));
        assert_eq!(zp[255], BigInt::from(510));
        assert_eq!(zp[128], BigInt::from(256));
        assert_eq!(zp[1], BigInt::from(2048));
    }

    #[test]
    fn a_single_symbol_row() {
        // P = [256]: C = [0, 256]; F[0] = 0, F[1] = 128, G[0] = 128, G[1] = 256. Slots 0..128 get
        // sym 0 and next = 256 + u; slots 128..256 get next = 256 + 128 + (u − 128) = 256 + u.
        let slots = latent_slots(&[BigInt::from(256)]);
        for (u, s) in slots.iter().enumerate() {
            let s = s.as_ref().unwrap();
            assert_eq!(s.sym, BigInt::from(0));
            assert_eq!(s.next, BigInt::from(256 + u));
        }
    }

    #[test]
    fn init_refuses_a_stream_without_a_sentinel() {
        let e = decode_fac(
            &[0u8; 16],
            &Fac {
                rows: vec![],
                lengths: vec![],
            },
        )
        .unwrap_err();
        assert_eq!((e.at, e.code), (0, Code::StreamExhausted));
    }
}
