//! Random small graphs and requests, deterministic in a seed.
//!
//! Each request holds one `WHG1` graph built operator by operator from a random choice among the 30
//! operators, with random parameters, ranges, policies, exponents and sizes, and a few decodes with
//! random inputs and scalars. Most graphs are valid; some are made invalid on purpose (a shape rule,
//! a cap, a range) and some have their bytes mutated, so that load refusals are covered too.

use wai_checker::whg1::write::{GraphW, InputW, OpW, P, RqW, TensorW};

/// SplitMix64.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `[lo, hi]`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return lo;
        }
        let span = (i128::from(hi) - i128::from(lo) + 1) as u128;
        (i128::from(lo) + (u128::from(self.next_u64()) % span) as i128) as i64
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
    /// True with probability `p` percent.
    pub fn pct(&mut self, p: u64) -> bool {
        self.below(100) < p
    }
    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }
}

/// A value of `w` bytes: mostly small, sometimes at the width's ends.
fn value(r: &mut Rng, w: u8) -> i64 {
    let bits = u32::from(w) * 8;
    let (min, max) = if bits == 64 {
        (i64::MIN, i64::MAX)
    } else {
        (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
    };
    match r.below(10) {
        0 => min,
        1 => max,
        2 => r.range(min, max),
        3 => r.range(-100, 100).clamp(min, max),
        _ => r.range(-4, 4),
    }
}

fn shift(r: &mut Rng) -> u8 {
    match r.below(12) {
        0 => r.pick(&[31, 32, 62, 63, 64, 127]),
        1 => r.range(0, 127) as u8,
        _ => r.range(0, 8) as u8,
    }
}

fn rq(r: &mut Rng, c: u32, mult: bool, bias: bool, per_channel_shift: bool) -> RqW {
    let round = r.range(0, 2) as u8;
    let bias_kind = if bias { r.range(0, 2) as u8 } else { 0 };
    let m_kind = if mult { r.range(0, 2) as u8 } else { 0 };
    let s_kind = if per_channel_shift { r.range(1, 2) as u8 } else { 1 };
    let m_bytes = if m_kind == 0 { 0 } else { r.pick(&[4, 8]) };
    let b_bytes = if bias_kind == 0 { 0 } else { r.pick(&[4, 8]) };
    let n_m = match m_kind {
        0 => 0,
        1 => 1,
        _ => c,
    };
    let mult = (0..n_m)
        .map(|_| if r.pct(60) { r.range(1, 300) } else { value(r, m_bytes) })
        .collect();
    let shift = (0..if s_kind == 1 { 1 } else { c }).map(|_| shift(r)).collect();
    let bias_v = (0..if bias_kind == 0 { 0 } else { c })
        .map(|_| value(r, b_bytes))
        .collect();
    RqW {
        round,
        bias: bias_kind,
        m_kind,
        s_kind,
        m_bytes,
        b_bytes,
        mult,
        shift,
        bias_v,
    }
}

/// A tensor being built: its index, channels and nominal sides.
#[derive(Clone, Copy, Debug)]
struct T {
    id: u32,
    c: u32,
    h: u64,
    w: u64,
}

struct Builder {
    g: GraphW,
    ts: Vec<T>,
}

impl Builder {
    fn tensor(&mut self, rec: TensorW, h: u64, w: u64) -> T {
        let id = self.g.tensors.len() as u32;
        let t = T {
            id,
            c: rec.channels,
            h,
            w,
        };
        self.g.tensors.push(rec);
        self.ts.push(t);
        t
    }
    fn scalar(&mut self, lo: i64, hi: i64) -> u32 {
        self.g.scalars.push((lo, hi));
        (self.g.scalars.len() - 1) as u32
    }
    fn op(&mut self, opcode: u8, ins: &[T], outs: &[T], params: Vec<u8>) {
        self.g.ops.push(OpW {
            opcode,
            ins: ins.iter().map(|t| t.id).collect(),
            outs: outs.iter().map(|t| t.id).collect(),
            params,
        });
    }
}

fn input_range(r: &mut Rng) -> (i64, i64) {
    match r.below(30) {
        0 => (i64::MIN, i64::MAX),
        1 => (-(1 << 31), (1 << 31) - 1),
        2 => (0, 255),
        3 => (-128, 127),
        4 => (i64::MIN + 1, i64::MAX),
        5 => (-32767, 32767),
        6 => {
            let a = r.range(-(1 << 40), 1 << 40);
            (a, a + r.range(0, 1 << 20))
        }
        _ => {
            let a = r.range(-20, 10);
            (a, a + r.range(0, 20))
        }
    }
}

/// The policy record of an operator's output: mostly derived.
fn out_rec(r: &mut Rng, c: u32) -> TensorW {
    let mut t = match r.below(10) {
        0 => {
            let (lo, hi) = input_range(r);
            TensorW::clamp(c, lo, hi)
        }
        1 => {
            let (lo, hi) = input_range(r);
            TensorW::check(c, lo, hi)
        }
        _ => TensorW::derived(c),
    };
    if r.pct(3) {
        t.exponent = r.range(-3, 3) as i8;
    }
    t
}

/// A random shift-free recipe for a realistic small graph; returns the builder and the nominal sides.
fn build(r: &mut Rng) -> (GraphW, u64, u64) {
    let declared = r.pct(60);
    let (h0, w0) = (r.range(1, 6) as u64, r.range(1, 6) as u64);
    let max_elems = if r.pct(8) { r.range(1, 80) as u32 } else { 1 << 26 };
    let mut b = Builder {
        g: GraphW {
            max_elems,
            scalars: vec![],
            inputs: vec![],
            outputs: vec![],
            tensors: vec![],
            ops: vec![],
        },
        ts: vec![],
    };
    // A stress graph aims at the bounds pass: wide ranges, squared, then arithmetic operators.
    let stress = r.pct(10);
    let c0 = r.range(1, 4) as u32;
    let (lo, hi) = if stress {
        r.pick(&[(i64::MIN, i64::MAX), (-(1 << 40), 1 << 40), (0, i64::MAX)])
    } else {
        input_range(r)
    };
    let rec0 = if r.pct(70) {
        TensorW::check(c0, lo, hi)
    } else {
        TensorW::clamp(c0, lo, hi)
    };
    let (mh, mw) = if declared { (h0 as u32, w0 as u32) } else { (0, 0) };
    let x0 = b.tensor(rec0, h0, w0);
    b.g.inputs.push(InputW::data(x0.id, mh, mw));
    if r.pct(20) {
        let (lo, hi) = input_range(r);
        let x1 = b.tensor(TensorW::check(r.range(1, 3) as u32, lo, hi), h0, w0);
        b.g.inputs.push(InputW::data(x1.id, mh, mw));
    }
    // A state input, fed by an add of itself and a 1×1 projection of input 0.
    let state = if r.pct(15) {
        let cs = r.range(1, 3) as u32;
        let (lo, hi) = input_range(r);
        let init = r.range(lo.max(-5), hi.min(5).max(lo.max(-5)));
        let rec = if r.pct(50) {
            TensorW::clamp(cs, lo, hi)
        } else {
            TensorW::check(cs, lo, hi)
        };
        let s = b.tensor(rec, h0, w0);
        b.g.inputs.push(InputW {
            tensor: s.id,
            max_h: mh,
            max_w: mw,
            kind: 1,
            src: 0,
            init,
        });
        Some(s)
    } else {
        None
    };
    if stress || r.pct(20) {
        // Amplify the range of input 0 by squaring it, so that the bounds pass meets intervals far
        // past 64 bits, saturation included.
        let mut t = x0;
        for _ in 0..r.range(1, 4) {
            let params = RqW::plain(r.range(0, 2) as u8, r.pick(&[0u8, 0, 1, 7]))
                .write(P::new())
                .bytes();
            let o = b.tensor(TensorW::derived(t.c), t.h, t.w);
            b.op(0x10, &[t, t], &[o], params);
            t = o;
        }
    }
    let n_ops = r.range(1, 5);
    for _ in 0..n_ops {
        let opcode = if stress {
            r.pick(&[
                0x01, 0x11, 0x02, 0x03, 0x10, 0x12, 0x18, 0x19, 0x1A, 0x1B, 0x1C, 0x1D, 0x1E, 0x0D, 0x05, 0x07, 0x13,
            ])
        } else {
            r.range(1, 0x1E) as u8
        };
        random_op(r, &mut b, opcode);
    }
    let mut outs = vec![*b.ts.last().expect("a tensor")];
    if let Some(s) = state {
        // conv 1×1 from input 0 to the state's channels, then add(state, that).
        let p = rq(r, s.c, true, true, true);
        let wts: Vec<i64> = (0..s.c * x0.c).map(|_| r.range(-2, 2)).collect();
        let params = p
            .write(
                P::new()
                    .u32(s.c)
                    .u32(1)
                    .u32(1)
                    .u32(1)
                    .u32(1)
                    .u32(0)
                    .u32(0)
                    .u32(1)
                    .u8(1)
                    .zeros(3),
            )
            .ints(&wts, 1)
            .bytes();
        let rec = out_rec(r, s.c);
        let proj = b.tensor(rec, h0, w0);
        b.op(0x01, &[x0], &[proj], params);
        let rec = if r.pct(50) {
            TensorW::clamp(s.c, -1000, 1000)
        } else {
            TensorW::derived(s.c)
        };
        let sum = b.tensor(rec, h0, w0);
        b.op(0x05, &[s, proj], &[sum], vec![]);
        outs.insert(0, sum);
    }
    if r.pct(20) {
        let t = b.ts[r.below(b.ts.len() as u64) as usize];
        outs.push(t);
    }
    b.g.outputs = outs.iter().map(|t| t.id).collect();
    (b.g, h0, w0)
}

/// Picks an input tensor: mostly the latest, sometimes any.
fn pick_in(r: &mut Rng, b: &Builder) -> T {
    if r.pct(60) {
        *b.ts.last().expect("a tensor")
    } else {
        b.ts[r.below(b.ts.len() as u64) as usize]
    }
}

fn random_op(r: &mut Rng, b: &mut Builder, opcode: u8) {
    let x = pick_in(r, b);
    let c = x.c;
    match opcode {
        0x01 => {
            let groups = if r.pct(70) {
                1
            } else if r.pct(50) {
                c
            } else {
                r.range(1, 3) as u32
            };
            let cout = if groups == c && r.pct(50) {
                c
            } else {
                groups * r.range(1, 3) as u32
            };
            let (kh, kw) = (r.range(1, 3) as u32, r.range(1, 3) as u32);
            let (sh, sw) = (r.range(1, 3) as u32, r.range(1, 3) as u32);
            let (ph, pw) = (r.range(0, 2) as u32, r.range(0, 2) as u32);
            let wb = r.pick(&[1u8, 2, 4, 8]);
            let n = cout as u64 * u64::from(c / groups.max(1)) * u64::from(kh * kw);
            let wts: Vec<i64> = (0..n).map(|_| value(r, wb)).collect();
            let p = rq(r, cout, true, true, true);
            let params = p
                .write(
                    P::new()
                        .u32(cout)
                        .u32(kh)
                        .u32(kw)
                        .u32(sh)
                        .u32(sw)
                        .u32(ph)
                        .u32(pw)
                        .u32(groups)
                        .u8(wb)
                        .zeros(3),
                )
                .ints(&wts, wb)
                .bytes();
            let ho = (x.h + 2 * u64::from(ph)).saturating_sub(u64::from(kh)) / u64::from(sh) + 1;
            let wo = (x.w + 2 * u64::from(pw)).saturating_sub(u64::from(kw)) / u64::from(sw) + 1;
            let rec = out_rec(r, cout);
            let o = b.tensor(rec, ho, wo);
            b.op(opcode, &[x], &[o], params);
        }
        0x11 => {
            let cout = r.range(1, 3) as u32;
            let (kh, kw) = (r.range(1, 3) as u32, r.range(1, 4) as u32);
            let (sh, sw) = (r.range(1, 3) as u32, r.range(1, 3) as u32);
            let (ph, pw) = (r.range(0, 1) as u32, r.range(0, 2) as u32);
            let (oph, opw) = (r.range(0, 2) as u32, r.range(0, 3) as u32);
            let wb = r.pick(&[1u8, 2, 4, 8]);
            let n = u64::from(c * cout * kh * kw);
            let wts: Vec<i64> = (0..n).map(|_| value(r, wb)).collect();
            let p = rq(r, cout, true, true, true);
            let params = p
                .write(
                    P::new()
                        .u32(cout)
                        .u32(kh)
                        .u32(kw)
                        .u32(sh)
                        .u32(sw)
                        .u32(ph)
                        .u32(pw)
                        .u32(oph)
                        .u32(opw)
                        .u8(wb)
                        .zeros(3),
                )
                .ints(&wts, wb)
                .bytes();
            let ho = ((x.h - 1) * u64::from(sh) + u64::from(kh + oph))
                .saturating_sub(2 * u64::from(ph))
                .max(1);
            let wo = ((x.w - 1) * u64::from(sw) + u64::from(kw + opw))
                .saturating_sub(2 * u64::from(pw))
                .max(1);
            let rec = out_rec(r, cout);
            let o = b.tensor(rec, ho, wo);
            b.op(opcode, &[x], &[o], params);
        }
        0x02 => {
            let params = rq(r, c, true, true, true).write(P::new()).bytes();
            let rec = out_rec(r, c);
            let o = b.tensor(rec, x.h, x.w);
            b.op(opcode, &[x], &[o], params);
        }
        0x03 => {
            let n_rows = r.range(1, 3) as u32;
            let lo = r.range(0, i64::from(n_rows) - 1);
            let hi = r.range(lo, i64::from(n_rows) - 1);
            let s = b.scalar(lo, hi);
            let mb = r.pick(&[4u8, 8]);
            let m: Vec<i64> = (0..n_rows * c).map(|_| value(r, mb)).collect();
            let params = P::new()
                .u32(s)
                .u32(n_rows)
                .u8(r.range(0, 2) as u8)
                .u8(mb)
                .u8(shift(r))
                .zeros(1)
                .ints(&m, mb)
                .bytes();
            let rec = out_rec(r, c);
            let o = b.tensor(rec, x.h, x.w);
            b.op(opcode, &[x], &[o], params);
        }
        0x04 => {
            let x = if r.pct(70) {
                // Bring the input into lut16's range first.
                let lim = r.pick(&[3i64, 100, 32767]);
                let cl = b.tensor(TensorW::derived(c), x.h, x.w);
                b.op(0x0B, &[x], &[cl], P::new().i64(-lim).i64(lim).bytes());
                cl
            } else {
                x
            };
            let e_in = b.g.tensors[x.id as usize].exponent;
            let mut table: Vec<i64> = (0..65536).map(|_| value(r, 2)).collect();
            table[0] = 0;
            let rec = out_rec(r, c);
            let e_out = rec.exponent;
            let params = P::new().u8(e_in as u8).u8(e_out as u8).zeros(2).ints(&table, 2).bytes();
            let o = b.tensor(rec, x.h, x.w);
            b.op(opcode, &[x], &[o], params);
        }
        0x05 | 0x10 => {
            let same: Vec<T> =
                b.ts.iter()
                    .copied()
                    .filter(|t| t.h == x.h && t.w == x.w && (t.c == c || (opcode == 0x10 && t.c == 1)))
                    .collect();
            let y = same[r.below(same.len() as u64) as usize];
            let params = if opcode == 0x10 {
                rq(r, c, true, false, true).write(P::new()).bytes()
            } else {
                vec![]
            };
            let mut rec = out_rec(r, c);
            if opcode == 0x05 {
                rec.exponent = b.g.tensors[x.id as usize].exponent;
            }
            let o = b.tensor(rec, x.h, x.w);
            b.op(opcode, &[x, y], &[o], params);
        }
        0x06 => {
            let same: Vec<T> = b.ts.iter().copied().filter(|t| t.h == x.h && t.w == x.w).collect();
            let n = r.range(2, 3);
            let ins: Vec<T> = std::iter::once(x)
                .chain((1..n).map(|_| same[r.below(same.len() as u64) as usize]))
                .collect();
            let csum: u32 = ins.iter().map(|t| t.c).sum();
            let mut rec = out_rec(r, csum);
            rec.exponent = -128;
            let o = b.tensor(rec, x.h, x.w);
            let ins: Vec<T> = ins.into_iter().collect();
            // The exponent rule: all none (inputs may carry one: then the load refuses, as it should).
            b.op(opcode, &ins, &[o], vec![]);
        }
        0x07 => {
            let mut rec = out_rec(r, (c / 2).max(1));
            rec.exponent = b.g.tensors[x.id as usize].exponent;
            let o = b.tensor(rec, x.h, x.w);
            b.op(opcode, &[x], &[o], vec![]);
        }
        0x08 => {
            let start = r.range(0, i64::from(c) - 1) as u32;
            let count = r.range(1, i64::from(c - start)) as u32;
            let rec = out_rec(r, count);
            let o = b.tensor(rec, x.h, x.w);
            b.op(opcode, &[x], &[o], P::new().u32(start).u32(count).bytes());
        }
        0x09 => {
            let rr = if c.is_multiple_of(4) && r.pct(60) { 2 } else { 1 };
            let rec = out_rec(r, c / (rr * rr));
            let o = b.tensor(rec, x.h * u64::from(rr), x.w * u64::from(rr));
            b.op(opcode, &[x], &[o], P::new().u32(rr).bytes());
        }
        0x0A => {
            let rr = if x.h.is_multiple_of(2) && x.w.is_multiple_of(2) && r.pct(70) {
                2
            } else {
                1
            };
            let rec = out_rec(r, c * rr * rr);
            let o = b.tensor(rec, x.h / u64::from(rr), x.w / u64::from(rr));
            b.op(opcode, &[x], &[o], P::new().u32(rr).bytes());
        }
        0x0B => {
            let (lo, hi) = input_range(r);
            let rec = out_rec(r, c);
            let o = b.tensor(rec, x.h, x.w);
            b.op(opcode, &[x], &[o], P::new().i64(lo).i64(hi).bytes());
        }
        0x0C | 0x13 | 0x1A | 0x1B => {
            let rec = out_rec(r, c);
            let o = b.tensor(rec, x.h, x.w);
            b.op(opcode, &[x], &[o], vec![]);
        }
        0x0D => {
            let a = if r.pct(70) { r.range(-5, 5) } else { value(r, 8) };
            let f = if r.pct(80) {
                r.range(0, 4) as u32
            } else {
                r.range(0, 63) as u32
            };
            let rec = out_rec(r, c);
            let o = b.tensor(rec, x.h, x.w);
            b.op(opcode, &[x], &[o], P::new().i64(a).u32(f).bytes());
        }
        0x0E => {
            let m = r.range(1, 3) as u64;
            let rec = out_rec(r, c);
            let o = b.tensor(rec, x.h.div_ceil(m) * m, x.w.div_ceil(m) * m);
            b.op(opcode, &[x], &[o], P::new().u32(m as u32).bytes());
        }
        0x0F => {
            let refs: Vec<T> = b.ts.iter().copied().filter(|t| t.h <= x.h && t.w <= x.w).collect();
            let rf = refs[r.below(refs.len() as u64) as usize];
            let rec = out_rec(r, c);
            let o = b.tensor(rec, rf.h, rf.w);
            b.op(opcode, &[x, rf], &[o], vec![]);
        }
        0x12 => {
            let gf = if r.pct(80) {
                r.range(0, 12) as u32
            } else {
                r.range(0, 127) as u32
            };
            let frac = if r.pct(80) {
                r.range(0, 12) as u32
            } else {
                r.range(0, 127) as u32
            };
            let gb = r.pick(&[4u8, 8]);
            let gamma: Vec<i64> = (0..c * c)
                .map(|_| if r.pct(70) { r.range(-3, 20) } else { value(r, gb) })
                .collect();
            let beta: Vec<i64> = (0..c)
                .map(|_| if r.pct(70) { r.range(-10, 1000) } else { value(r, 8) })
                .collect();
            let params = P::new()
                .u32(gf)
                .u32(frac)
                .u8(gb)
                .zeros(7)
                .ints(&gamma, gb)
                .ints(&beta, 8)
                .bytes();
            let rec = out_rec(r, c);
            let o = b.tensor(rec, x.h, x.w);
            b.op(opcode, &[x], &[o], params);
        }
        0x14 => {
            let side = |r: &mut Rng, b: &mut Builder, p: P, s: u64| -> (P, u64) {
                let start = r.range(0, s as i64 - 1);
                let len = r.range(1, s as i64 - start);
                let p = if r.pct(30) {
                    let k = b.scalar(r.range(-1, start), start + r.range(0, 1));
                    p.u8(1).zeros(3).u32(k)
                } else {
                    p.u8(0).zeros(3).u32(start as u32)
                };
                let p = if r.pct(30) {
                    let k = b.scalar(r.range(0, len), len + r.range(0, 1));
                    p.u8(1).zeros(3).u32(k)
                } else {
                    p.u8(0).zeros(3).u32(len as u32)
                };
                (p, len as u64)
            };
            // y0, x0, h, w: written as (y0, h) then reordered below.
            let (py, hh) = side(r, b, P::new(), x.h);
            let (px, ww) = side(r, b, P::new(), x.w);
            let (py, px) = (py.bytes(), px.bytes());
            let mut p = P::new();
            p.0.extend_from_slice(&py[..8]);
            p.0.extend_from_slice(&px[..8]);
            p.0.extend_from_slice(&py[8..]);
            p.0.extend_from_slice(&px[8..]);
            let rec = out_rec(r, c);
            let o = b.tensor(rec, hh, ww);
            b.op(opcode, &[x], &[o], p.bytes());
        }
        0x15 | 0x16 => {
            let mut order = [0u8, 1, 2, 3];
            for i in (1..4).rev() {
                order.swap(i, r.below(i as u64 + 1) as usize);
            }
            let (h2, w2) = ((x.h / 2).max(1), (x.w / 2).max(1));
            let outs: Vec<T> = (0..4)
                .map(|_| {
                    let rec = out_rec(r, c);
                    b.tensor(rec, h2, w2)
                })
                .collect();
            b.op(0x15, &[x], &outs, order.to_vec());
            if opcode == 0x16 {
                let mut o2 = [0u8, 1, 2, 3];
                if r.pct(50) {
                    o2 = order;
                }
                let rec = out_rec(r, c);
                let o = b.tensor(rec, h2 * 2, w2 * 2);
                b.op(0x16, &outs, &[o], o2.to_vec());
            }
        }
        0x17 => {
            let cout = r.range(1, 3) as u32;
            let p = if r.pct(40) {
                let (lo, hi) = input_range(r);
                let k = b.scalar(lo, hi);
                P::new().u8(1).zeros(7).i64(i64::from(k))
            } else {
                P::new().u8(0).zeros(7).i64(value(r, 8))
            };
            let rec = out_rec(r, cout);
            let o = b.tensor(rec, x.h, x.w);
            b.op(opcode, &[x], &[o], p.bytes());
        }
        0x18 => {
            let eps = r.pick(&[1u64, 2, 42949, 1 << 20, u64::MAX, 1 << 40]);
            let gb = r.pick(&[4u8, 8]);
            let gamma: Vec<i64> = (0..c)
                .map(|_| {
                    if r.pct(70) {
                        r.range(-70000, 70000)
                    } else {
                        value(r, gb)
                    }
                })
                .collect();
            let beta: Vec<i64> = (0..c)
                .map(|_| if r.pct(80) { r.range(-100, 100) } else { value(r, 8) })
                .collect();
            let params = P::new()
                .u64(eps)
                .u8(gb)
                .zeros(7)
                .ints(&gamma, gb)
                .ints(&beta, 8)
                .bytes();
            let rec = out_rec(r, c);
            let o = b.tensor(rec, x.h, x.w);
            b.op(opcode, &[x], &[o], params);
        }
        0x19 => {
            let eps = r.pick(&[1u64, 3, 42949, u64::MAX]);
            let rec = out_rec(r, c);
            let o = b.tensor(rec, x.h, x.w);
            b.op(opcode, &[x], &[o], P::new().u64(eps).bytes());
        }
        0x1C => {
            let alpha = if r.pct(70) {
                r.pick(&[65536, 1, -3, 1000])
            } else {
                value(r, 8)
            };
            let rec = out_rec(r, c);
            let o = b.tensor(rec, x.h, x.w);
            b.op(opcode, &[x], &[o], P::new().i64(alpha).bytes());
        }
        0x1D | 0x1E => {
            let divisors: Vec<u32> = (1..=c).filter(|g| c.is_multiple_of(*g)).collect();
            let groups = r.pick(&divisors);
            let d = c / groups;
            let p = rq(r, c, false, false, false).write(P::new().u32(groups)).bytes();
            let rec = out_rec(r, c);
            let gm = b.tensor(rec, 1, u64::from(d));
            b.op(0x1D, &[x, x], &[gm], p.clone());
            if opcode == 0x1E {
                let rec = out_rec(r, c);
                let o = b.tensor(rec, x.h, x.w);
                b.op(0x1E, &[gm, x], &[o], p);
            }
        }
        _ => {
            let rec = out_rec(r, c);
            let o = b.tensor(rec, x.h, x.w);
            b.op(0x0C, &[x], &[o], vec![]);
        }
    }
}

/// Random changes to valid bytes: a flipped byte, a truncation, an extra byte, a changed count.
fn mutate(r: &mut Rng, bytes: &mut Vec<u8>) {
    match r.below(5) {
        0 => {
            let i = r.below(bytes.len() as u64) as usize;
            bytes[i] ^= 1 << r.below(8);
        }
        1 => {
            let n = r.below(bytes.len() as u64) as usize;
            bytes.truncate(n);
        }
        2 => bytes.push(r.below(256) as u8),
        3 => {
            let i = r.below(bytes.len().min(64) as u64) as usize;
            bytes[i] = r.below(256) as u8;
        }
        _ => {
            let i = r.below(bytes.len() as u64) as usize;
            bytes[i] = r.pick(&[0u8, 1, 2, 0xff, 0x80, 0x7f]);
        }
    }
}

fn int_list(vs: &[String]) -> String {
    let inner: Vec<String> = vs.iter().map(|v| format!("\"{v}\"")).collect();
    format!("[{}]", inner.join(","))
}

/// One request line (without its line feed), deterministic in `seed`.
pub fn request(seed: u64) -> String {
    let mut r = Rng::new(seed);
    let (g, h0, w0) = build(&mut r);
    let mut bytes = g.bytes();
    if r.pct(8) {
        mutate(&mut r, &mut bytes);
    }
    let data_inputs: Vec<&InputW> = g.inputs.iter().filter(|i| i.kind == 0).collect();
    let n_dec = r.range(1, 3);
    let mut decodes = Vec::new();
    for _ in 0..n_dec {
        let (h, w) = match r.below(10) {
            0 => (r.range(0, 7) as u64, r.range(0, 7) as u64),
            1 => (h0.saturating_sub(1).max(1), w0),
            2 => (h0 + 1, w0 + r.range(0, 1) as u64),
            _ => (h0, w0),
        };
        let mut ins = Vec::new();
        for inp in &data_inputs {
            let t = &g.tensors[inp.tensor as usize];
            let c = if r.pct(3) {
                u64::from(t.channels) + 1
            } else {
                u64::from(t.channels)
            };
            let n = c * h * w;
            let fault = if r.pct(12) { Some(r.below(n.max(1))) } else { None };
            let vals: Vec<String> = (0..n)
                .map(|k| {
                    let v: i128 = if fault == Some(k) {
                        match r.below(3) {
                            0 => i128::from(t.lo) - 1,
                            1 => i128::from(t.hi) + 1,
                            _ => i128::from(i64::MAX) * 4,
                        }
                    } else {
                        match r.below(20) {
                            0 => i128::from(t.lo),
                            1 => i128::from(t.hi),
                            _ => i128::from(r.range(t.lo, t.hi)),
                        }
                    };
                    v.to_string()
                })
                .collect();
            ins.push(format!(
                "{{\"data\":{},\"shape\":{}}}",
                int_list(&vals),
                int_list(&[c.to_string(), h.to_string(), w.to_string()])
            ));
        }
        let sc: Vec<String> = g
            .scalars
            .iter()
            .map(|&(lo, hi)| {
                let v: i128 = match r.below(15) {
                    0 => i128::from(lo) - 1,
                    1 => i128::from(hi) + 1,
                    _ => i128::from(r.range(lo, hi)),
                };
                v.to_string()
            })
            .collect();
        decodes.push(format!(
            "{{\"inputs\":[{}],\"scalars\":{}}}",
            ins.join(","),
            int_list(&sc)
        ));
    }
    format!(
        "{{\"decodes\":[{}],\"graph\":\"{}\",\"id\":\"r{seed}\"}}",
        decodes.join(","),
        hex::encode(&bytes)
    )
}
