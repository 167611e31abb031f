//! Stage-operator test material: an E1 encoder written from docs/assumptions.md E1, random tables,
//! and a seeded generator of stage requests (§14.1) for differential runs. Each request is built
//! to reach a case: real rANS streams and the ways they break, `mans_decode` memories with and
//! without a sentinel, values at and past every width, and each condition broken on its own.

use crate::random::Rng;
use ethnum::I256;
use wai_checker::canon::{self, J};

/// One step of an E1 decode, as the encoder inverts it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    /// A symbol step that lands on index `k` of `cdf`.
    Symbol { cdf: Vec<u32>, k: usize },
    /// `bits(k)` returning `v`.
    Bits { k: u32, v: u32 },
}

impl Step {
    /// The state before this step, given the state after it (E1 items 2 and 3 inverted).
    fn before(&self, x: u64) -> u128 {
        match self {
            Step::Symbol { cdf, k } => {
                let (c0, c1) = (u64::from(cdf[*k]), u64::from(cdf[*k + 1]));
                let f = c1 - c0;
                u128::from(x / f) * 65536 + u128::from(x % f + c0)
            }
            Step::Bits { k, v } => (u128::from(x) << k) | u128::from(*v),
        }
    }
}

/// E1 item 8: from `x = 2^31`, invert the steps in reverse order, emitting the state's low word
/// when the next inverse would reach `2^63`; the final state first, then the words in the order the
/// decoder reads them. The stream ends canonically.
pub fn encode(steps: &[Step]) -> Vec<u8> {
    let mut x: u64 = 1 << 31;
    let mut words = Vec::new();
    for s in steps.iter().rev() {
        if s.before(x) >= 1 << 63 {
            words.push(x as u32);
            x >>= 32;
        }
        x = u64::try_from(s.before(x)).expect("below 2^63");
    }
    let mut out = x.to_le_bytes().to_vec();
    for w in words.iter().rev() {
        out.extend_from_slice(&w.to_le_bytes());
    }
    out
}

/// The count and groups that encode an escape's `value` against a table of `n` entries, minimally:
/// `raw = 2(value − (n − 2))` for `value ≥ n − 2`, `−2·value − 1` for `value < 0`.
pub fn escape_steps(value: i64, n: usize) -> Vec<Step> {
    let n2 = n as i64 - 2;
    let raw = if value >= n2 { 2 * (value - n2) } else { -2 * value - 1 };
    let raw = u64::try_from(raw).expect("an escaped value");
    assert!(raw < 1 << 32, "raw {raw} needs more than 8 groups");
    let count = (64 - raw.leading_zeros()).div_ceil(4);
    let mut s = vec![Step::Bits { k: 4, v: count }];
    s.extend((0..count).map(|j| Step::Bits {
        k: 4,
        v: ((raw >> (4 * j)) & 15) as u32,
    }));
    s
}

/// A random table meeting `t4097` (or `t2` when `t2`): sizes mostly small, sometimes at the rule's
/// ends.
pub fn random_cdf(r: &mut Rng, t2: bool) -> Vec<u32> {
    let n = match (t2, r.below(12)) {
        (false, 0) => r.pick(&[3, 4097]),
        (true, 0) => r.pick(&[2, 3, 65537]),
        (_, 1) => r.range(3, 300) as usize,
        (true, 2) => 2,
        _ => r.range(3, 8) as usize,
    };
    // n − 1 frequencies of at least 1, summing to 65536, skewed.
    let m = n - 1;
    let weights: Vec<u64> = (0..m)
        .map(|_| {
            if r.pct(20) {
                r.range(1, 50_000) as u64
            } else {
                r.range(1, 100) as u64
            }
        })
        .collect();
    let total: u64 = weights.iter().sum();
    let spare = 65536 - m as u64;
    let mut f: Vec<u64> = weights.iter().map(|w| 1 + w * spare / total).collect();
    let short = 65536 - f.iter().sum::<u64>();
    let big = (0..m).max_by_key(|&i| f[i]).unwrap_or(0);
    f[big] += short;
    let mut cdf = vec![0u32];
    for x in f {
        cdf.push(cdf[cdf.len() - 1] + x as u32);
    }
    cdf
}

/// A random latent row of `width ≥ 1` non-negative entries summing to 256, with zeros.
pub fn random_pmf(r: &mut Rng, width: usize) -> Vec<u32> {
    let mut p = vec![0u32; width];
    let live: Vec<usize> = (0..width).filter(|_| r.pct(70)).collect();
    let live = if live.is_empty() {
        vec![r.below(width as u64) as usize]
    } else {
        live
    };
    for _ in 0..256 {
        let k = if r.pct(50) {
            live[0]
        } else {
            live[r.below(live.len() as u64) as usize]
        };
        p[k] += 1;
    }
    p
}

// ---- values ----

fn s(v: impl std::fmt::Display) -> J {
    J::Str(v.to_string())
}

/// `1` followed by `zeros` zeros, signed.
fn pow10(zeros: usize, neg: bool) -> String {
    format!("{}1{}", if neg { "-" } else { "" }, "0".repeat(zeros))
}

/// A value from every width: small, at the i32/i64/i128 ends and one past, past I256, or random.
fn wide(r: &mut Rng) -> String {
    match r.below(16) {
        0 => r
            .pick(&[
                i128::from(i32::MIN),
                i32::MAX.into(),
                i128::from(i32::MIN) - 1,
                i128::from(i32::MAX) + 1,
            ])
            .to_string(),
        1 => r
            .pick(&[
                i128::from(i64::MIN),
                i64::MAX.into(),
                i128::from(i64::MIN) - 1,
                i128::from(i64::MAX) + 1,
            ])
            .to_string(),
        2 => r.pick(&[i128::MIN, i128::MAX]).to_string(),
        3 => pow10(r.range(39, 120) as usize, r.pct(50)),
        4 => (I256::from(r.next_u64()) << 150u32).to_string(),
        5 => (i128::from(r.next_u64() as i64) << 40).to_string(),
        6 | 7 => (r.next_u64() as i64).to_string(),
        _ => r.range(-300, 300).to_string(),
    }
}

fn strs(vs: &[String]) -> J {
    J::Arr(vs.iter().map(|v| J::Str(v.clone())).collect())
}

fn line(id: String, op: &str, modes: J, inp: J) -> String {
    canon::write(&J::obj(vec![
        ("id", J::Str(id)),
        ("in", inp),
        ("modes", modes),
        ("op", J::str(op)),
    ]))
    .expect("printable")
}

fn no_modes() -> J {
    J::obj(Vec::<(&str, J)>::new())
}

// ---- one request per operator ----

fn dequantize(r: &mut Rng, id: String) -> String {
    let f: String = match r.below(10) {
        0 => r.pick(&["63", "-1", "64", "100000000000000000000"]).into(),
        1 => r.pick(&["0", "62"]).into(),
        _ => r.range(0, 62).to_string(),
    };
    let (sym, base) = match (r.below(5), f.parse::<u32>().ok().filter(|&f| f <= 62)) {
        // A value aimed at the i64 ends: base = target − sym·2^f, in I256.
        (0 | 1, Some(fv)) => {
            let sym = I256::from(r.next_u64() as i64) << r.range(0, 120) as u32;
            let sym = sym >> r.range(0, 130) as u32;
            let target = I256::from(r.pick(&[i64::MIN, i64::MAX])) + I256::from(r.range(-2, 2));
            let base = target - (sym << fv);
            (sym.to_string(), base.to_string())
        }
        // Cancellation past any fixed width, with f = 0: (10^z + t) − 10^z.
        (2, Some(0)) => {
            let z = r.range(40, 150) as usize;
            let t = r.range(0, 9);
            (format!("1{}{t}", "0".repeat(z - 1)), pow10(z, true))
        }
        _ => (wide(r), wide(r)),
    };
    line(
        id,
        "dequantize",
        no_modes(),
        J::obj(vec![("base", J::Str(base)), ("f", J::Str(f)), ("sym", J::Str(sym))]),
    )
}

fn bucket(r: &mut Rng, id: String) -> String {
    let ceil = r.pct(50);
    let n = match r.below(10) {
        0 => 0,
        1 => 1,
        _ => r.range(2, 6) as usize,
    };
    let mut edges: Vec<i128> = (0..n).map(|_| r.range(-50, 50).into()).collect();
    if !ceil || r.pct(50) {
        edges.sort();
    }
    if !ceil && n >= 2 && r.pct(10) {
        edges.swap(0, n - 1); // decreasing: a condition
        edges[0] += 1;
    }
    let sigma = match r.below(5) {
        0 if n > 0 => edges[r.below(n as u64) as usize].to_string(),
        1 => wide(r),
        _ => r.range(-60, 60).to_string(),
    };
    let mut edges: Vec<String> = edges.iter().map(i128::to_string).collect();
    if r.pct(10) && n > 0 {
        edges[0] = wide(r);
    }
    let modes = J::obj(vec![("bucket", J::str(if ceil { "ceil" } else { "floor" }))]);
    line(
        id,
        "bucket",
        modes,
        J::obj(vec![("edges", strs(&edges)), ("sigma", J::Str(sigma))]),
    )
}

fn coded(r: &mut Rng, id: String) -> String {
    let thr = wide(r);
    let v = match r.below(3) {
        0 => thr.clone(),
        _ => wide(r),
    };
    line(
        id,
        "coded",
        no_modes(),
        J::obj(vec![("thr", J::Str(thr)), ("v", J::Str(v))]),
    )
}

fn scale_index(r: &mut Rng, id: String) -> String {
    let sh = match r.below(12) {
        0 => r.pick(&[-1, 128, 1000]),
        1 => r.pick(&[0, 1, 31, 32, 62, 63, 64, 127]),
        _ => r.range(0, 12),
    };
    let v = match r.below(4) {
        // A tie: (2k + 1)·2^(s−1), either sign.
        0 if (1..=127).contains(&sh) => ((I256::from(r.range(-40, 40)) * 2 + 1) << (sh as u32 - 1)).to_string(),
        1 => wide(r),
        _ => (I256::from(r.range(-5000, 5000)) << (sh.clamp(0, 127) as u32)).to_string(),
    };
    let n = match r.below(10) {
        0 => r.pick(&["0", "-3"]).to_string(),
        1 => wide(r),
        _ => r.pick(&["1", "32", "7", "100"]).to_string(),
    };
    line(
        id,
        "scale_index",
        no_modes(),
        J::obj(vec![("n", J::Str(n)), ("s", s(sh)), ("v", J::Str(v))]),
    )
}

fn block_stat(r: &mut Rng, id: String) -> String {
    let (c, h, w) = (r.range(1, 3), r.range(1, 9), r.range(1, 9));
    let big = r.pct(15);
    let data: Vec<String> = (0..c * h * w)
        .map(|_| {
            if big && r.pct(30) {
                wide(r)
            } else {
                r.range(-5000, 5000).to_string()
            }
        })
        .collect();
    let b = match r.below(12) {
        0 => "0".to_string(),
        1 => r.pick(&["9", "100", "4294967296", "18446744073709551615"]).to_string(),
        _ => r.range(1, 5).to_string(),
    };
    let sh = match r.below(12) {
        0 => r.pick(&[128, -1]),
        1 => r.pick(&[63, 64, 127]),
        _ => r.range(0, 8),
    };
    let (lo, hi) = match r.below(10) {
        0 => (wide(r), wide(r)),
        1 => ("5".into(), "4".into()),
        _ => {
            let lo = r.range(-3000, 100);
            (lo.to_string(), (lo + r.range(0, 4000)).to_string())
        }
    };
    let x = J::obj(vec![("data", strs(&data)), ("shape", J::Arr(vec![s(c), s(h), s(w)]))]);
    let inp = J::obj(vec![
        ("b", J::Str(b)),
        ("hi", J::Str(hi)),
        ("lo", J::Str(lo)),
        ("s", s(sh)),
        ("x", x),
    ]);
    line(id, "block_stat", no_modes(), inp)
}

fn band_lookup(r: &mut Rng, id: String) -> String {
    let m = r.range(0, 4) as usize;
    let mut edges: Vec<i64> = (0..m).map(|_| r.range(-100, 2000)).collect();
    if r.pct(70) {
        edges.sort();
    }
    let rows = r.range(0, 3) as usize;
    let table: Vec<J> = (0..rows)
        .map(|_| {
            let len = if r.pct(10) { r.range(0, 6) as usize } else { m + 1 };
            let row: Vec<String> = (0..len)
                .map(|_| {
                    if r.pct(10) {
                        wide(r)
                    } else {
                        r.range(-100, 200).to_string()
                    }
                })
                .collect();
            strs(&row)
        })
        .collect();
    let row = match r.below(10) {
        0 => r.pick(&[-1, 3, 100]),
        _ => r.range(0, rows.max(1) as i64 - 1),
    };
    let v = match r.below(3) {
        0 if m > 0 => edges[r.below(m as u64) as usize].to_string(),
        1 => wide(r),
        _ => r.range(-150, 2100).to_string(),
    };
    let edges: Vec<String> = edges.iter().map(i64::to_string).collect();
    let inp = J::obj(vec![
        ("edges", strs(&edges)),
        ("row", s(row)),
        ("table", J::Arr(table)),
        ("v", J::Str(v)),
    ]);
    line(id, "band_lookup", no_modes(), inp)
}

fn residual_step(r: &mut Rng, id: String) -> String {
    let (lo, hi): (I256, I256) = match r.below(7) {
        0 => (0.into(), 255.into()),
        1 => ((-32768).into(), 32767.into()),
        2 => (I256::from((1i64 << 31) - 65536), I256::from(i32::MAX)),
        3 => (I256::from(i32::MIN), I256::from(i32::MIN) + 65535),
        4 => (I256::from(i64::MIN), I256::from(i64::MAX)),
        5 => {
            let lo = I256::from(r.next_u64() as i64) << 100u32;
            (lo, lo + I256::from(r.range(1, 1 << 40)))
        }
        _ => {
            let lo = I256::from(r.range(-(1 << 40), 1 << 40));
            (lo, lo + I256::from(r.range(1, 1 << 20)))
        }
    };
    let q: i64 = match r.below(6) {
        0 => r.pick(&[1, 65535]),
        _ => r.range(1, 300),
    };
    let span = hi - lo;
    let pred = match r.below(4) {
        0 => lo,
        1 => hi,
        _ => lo + I256::from(r.next_u64()) % (span + 1),
    };
    let big_r = span / I256::from(q) + 1;
    let rv: I256 = match r.below(6) {
        0 => r.pick(&[big_r, -big_r, big_r + 1, -big_r - 1]),
        1 => I256::from(r.pick(&[i32::MIN, i32::MAX])),
        _ => I256::from(r.range(-1000, 1000)),
    };
    let rv = rv.clamp(I256::from(i32::MIN), I256::from(i32::MAX));
    let mut f = [
        lo.to_string(),
        hi.to_string(),
        pred.to_string(),
        q.to_string(),
        rv.to_string(),
    ];
    if r.pct(12) {
        // One condition broken.
        match r.below(5) {
            0 => f[1] = f[0].clone(),
            1 => f[2] = (hi + 1).to_string(),
            2 => f[3] = r.pick(&["0", "65536"]).into(),
            3 => f[4] = r.pick(&["2147483648", "-2147483649"]).into(),
            _ => f[2] = (lo - 1).to_string(),
        }
    }
    let [lo, hi, pred, q, rv] = f;
    let inp = J::obj(vec![
        ("hi", J::Str(hi)),
        ("lo", J::Str(lo)),
        ("pred", J::Str(pred)),
        ("q", J::Str(q)),
        ("r", J::Str(rv)),
    ]);
    line(id, "residual_step", no_modes(), inp)
}

fn coding_order(r: &mut Rng, id: String) -> String {
    let shape: [String; 3] = match r.below(12) {
        0 => ["0".into(), "3".into(), "18446744073709551615".into()],
        1 => ["1".into(), "8192".into(), "8193".into()],
        2 => ["4294967296".into(), "4294967296".into(), "1".into()],
        _ => [
            r.range(1, 3).to_string(),
            r.range(1, 6).to_string(),
            r.range(1, 6).to_string(),
        ],
    };
    let mut m = vec![("shape", strs(&shape))];
    if r.pct(50) {
        m.push(("order", J::str("raster")));
        if r.pct(30) {
            m.push(("anchor", J::Bool(r.pct(50))));
        }
    } else {
        m.push(("order", J::str("checkerboard")));
        m.push(("anchor", J::Bool(r.pct(50))));
    }
    line(id, "coding_order", no_modes(), J::obj(m))
}

// ---- rans64_decode ----

/// A random E1 request: tables, modes and symbols; a stream from [`encode`], then one way of
/// breaking it or a condition.
fn rans(r: &mut Rng, id: String) -> String {
    let t2 = r.pct(40);
    let strict = r.pct(60);
    let canonical = r.pct(50);
    let ntab = r.range(1, 3) as usize;
    let cdfs: Vec<Vec<u32>> = (0..ntab).map(|_| random_cdf(r, t2)).collect();
    let offsets: Vec<i64> = (0..ntab)
        .map(|_| match r.below(10) {
            0 => r.pick(&[i32::MIN.into(), i32::MAX.into()]),
            _ => r.range(-500, 500),
        })
        .collect();
    let nsym = r.range(0, 24) as usize;
    let mut steps = Vec::new();
    let mut reads = Vec::new();
    let mut symbols = Vec::new();
    for _ in 0..nsym {
        let ti = r.below(ntab as u64) as usize;
        let cdf = &cdfs[ti];
        let n = cdf.len();
        let value: i64 = match r.below(6) {
            0 => r.range(-(1 << 31), i64::from(i32::MAX) + n as i64 - 2),
            1 => r.range(-20, 20),
            _ => r.range(0, n as i64 - 1),
        };
        if value >= 0 && value < n as i64 - 2 {
            steps.push(Step::Symbol {
                cdf: cdf.clone(),
                k: value as usize,
            });
        } else {
            steps.push(Step::Symbol {
                cdf: cdf.clone(),
                k: n - 2,
            });
            let mut e = escape_steps(value, n);
            match r.below(40) {
                // count > 8, no group.
                0 => {
                    e = vec![Step::Bits {
                        k: 4,
                        v: r.range(9, 15) as u32,
                    }]
                }
                // A non-minimal last group of 0.
                1 => {
                    if let Step::Bits { v, .. } = &mut e[0]
                        && *v < 8
                    {
                        *v += 1;
                        e.push(Step::Bits { k: 4, v: 0 });
                    }
                }
                // A lenient continuation: a count of 15, then more.
                2 => {
                    e = vec![
                        Step::Bits { k: 4, v: 15 },
                        Step::Bits {
                            k: 4,
                            v: r.range(0, 15) as u32,
                        },
                    ];
                    e.extend((0..8).map(|_| Step::Bits {
                        k: 4,
                        v: r.range(0, 15) as u32,
                    }));
                }
                _ => {}
            }
            steps.extend(e);
        }
        reads.push(ti.to_string());
        symbols.push(value + offsets[ti]);
    }
    let mut stream = encode(&steps);
    match r.below(10) {
        0 if stream.len() > 8 => {
            let cut = 4 * r.range(1, ((stream.len() - 8) / 4) as i64) as usize;
            stream.truncate(stream.len() - cut);
        }
        1 => stream.extend_from_slice(&(r.next_u64() as u32).to_le_bytes()),
        2 => {
            let i = r.below(stream.len() as u64) as usize;
            stream[i] ^= 1 << r.below(8);
        }
        3 => stream[..8].copy_from_slice(&r.next_u64().to_le_bytes()),
        4 => {
            // A small initial state.
            stream[..8].copy_from_slice(&(r.next_u64() >> r.range(33, 63)).to_le_bytes());
        }
        5 | 6 => {
            // A random stream that runs out early: every check of one symbol meets a stream that
            // has run out, and their pairs arise under both end rules.
            stream = (r.next_u64() >> r.range(20, 50)).to_le_bytes().to_vec();
            for _ in 0..r.range(0, 2) {
                stream.extend_from_slice(&(r.next_u64() as u32).to_le_bytes());
            }
        }
        _ => {}
    }
    let (mut lo, mut hi) = match symbols.len() {
        0 => (-5i64, 5i64),
        _ => {
            let mn = *symbols.iter().min().expect("some");
            let mx = *symbols.iter().max().expect("some");
            match r.below(4) {
                0 => (mn + 1, mx),
                1 => (mn, mx - 1),
                _ => (mn, mx),
            }
        }
    };
    lo = lo.clamp(i32::MIN.into(), i32::MAX.into());
    hi = hi.clamp(i32::MIN.into(), i32::MAX.into());
    let mut tables: Vec<(Vec<String>, String)> = cdfs
        .iter()
        .zip(&offsets)
        .map(|(c, o)| (c.iter().map(u32::to_string).collect(), o.to_string()))
        .collect();
    let mut stream_hex = hex::encode(&stream);
    let (mut los, mut his) = (lo.to_string(), hi.to_string());
    if r.pct(10) {
        // One condition broken.
        match r.below(8) {
            0 => stream_hex.truncate(stream_hex.len() - 2),
            1 => stream_hex = "00".repeat(r.range(0, 7) as usize),
            2 => tables[0].1 = r.pick(&["2147483648", "-2147483649"]).into(),
            3 => {
                let c = &mut tables[0].0;
                let last = c.len() - 1;
                c[last] = "65535".into();
            }
            4 => {
                let c = &mut tables[0].0;
                if c.len() > 2 {
                    c[1] = c[2].clone();
                } else {
                    c[0] = "1".into();
                }
            }
            5 => reads.push(ntab.to_string()),
            6 => std::mem::swap(&mut los, &mut his),
            _ => los = "-2147483649".into(),
        }
    }
    let mut modes = vec![
        ("end", J::str(if canonical { "canonical" } else { "final_only" })),
        ("escape", J::str(if strict { "strict" } else { "lenient" })),
        ("table", J::str(if t2 { "t2" } else { "t4097" })),
    ];
    if strict {
        modes.push(("hi", J::Str(his)));
        modes.push(("lo", J::Str(los)));
    }
    let tables = J::Arr(
        tables
            .iter()
            .map(|(c, o)| J::obj(vec![("cdf", strs(c)), ("offset", J::Str(o.clone()))]))
            .collect(),
    );
    let inp = J::obj(vec![
        ("reads", strs(&reads)),
        ("stream", J::Str(stream_hex)),
        ("tables", tables),
    ]);
    line(id, "rans64_decode", J::obj(modes), inp)
}

// ---- mans_decode ----

/// A memory: mostly random with a sentinel in the last byte, sometimes a zero tail or short.
fn memory(r: &mut Rng) -> String {
    let len = match r.below(8) {
        0 => r.range(0, 8) as usize,
        1 => r.range(8, 16) as usize,
        _ => r.range(8, 80) as usize,
    };
    let mut m: Vec<u8> = (0..len).map(|_| r.next_u64() as u8).collect();
    match r.below(8) {
        0 => {
            let z = len.min(r.range(1, 12) as usize);
            m[len - z..].fill(0); // a zero tail
        }
        1 if len > 0 => m[len - 1] = 1 << r.below(8),
        _ if len > 0 && m[len - 1] == 0 => m[len - 1] = 0x80,
        _ => {}
    }
    hex::encode(m)
}

fn mans_sgm(r: &mut Rng, id: String) -> String {
    let rows = r.range(1, 4) as usize;
    let width = match r.below(6) {
        0 => 512,
        _ => r.range(1, 12) as usize,
    };
    let mut pmf: Vec<Vec<String>> = (0..rows)
        .map(|_| {
            let mut p = random_pmf(r, width);
            if width == 512 && r.pct(60) {
                // Mass on the column whose symbol is −128 or −255 (k = 2β − 1).
                p.fill(0);
                let k = r.pick(&[255usize, 509]);
                p[k] = 200;
                p[0] = 56;
            }
            p.iter().map(u32::to_string).collect()
        })
        .collect();
    let nb = rows + r.range(0, 1) as usize;
    let mut bounds: Vec<String> = (0..nb)
        .map(|_| {
            let any = r.range(0, 255);
            r.pick(&[0, 1, 2, 3, 128, 255, any]).to_string()
        })
        .collect();
    let nspans = r.range(0, 4) as usize;
    let named = rows.min(nb);
    let mut spans: Vec<(Vec<bool>, Vec<String>)> = (0..nspans)
        .map(|_| {
            let n = r.range(0, 13) as usize;
            let dense = r.pct(60);
            let mask = (0..n).map(|_| if dense { r.pct(90) } else { r.pct(40) }).collect();
            let sig = (0..n).map(|_| r.below(named as u64).to_string()).collect();
            (mask, sig)
        })
        .collect();
    if r.pct(12) {
        match r.below(5) {
            0 => pmf[0][0] = (pmf[0][0].parse::<u32>().expect("ours") + 1).to_string(),
            1 => pmf[0].push("0".into()),
            2 => bounds[0] = "256".into(),
            3 if !spans.is_empty() && !spans[0].1.is_empty() => spans[0].1[0] = named.to_string(),
            _ if !spans.is_empty() => {
                spans[0].0.push(true);
            }
            _ => bounds[0] = "-1".into(),
        }
    }
    let spans = J::Arr(
        spans
            .iter()
            .map(|(m, s)| {
                J::obj(vec![
                    ("mask", J::Arr(m.iter().map(|&b| J::Bool(b)).collect())),
                    ("sigma", strs(s)),
                ])
            })
            .collect(),
    );
    let inp = J::obj(vec![
        ("bounds", strs(&bounds)),
        ("memory", J::Str(memory(r))),
        ("mode", J::str("sgm")),
        ("pmf", J::Arr(pmf.iter().map(|p| strs(p)).collect())),
        ("spans", spans),
    ]);
    line(id, "mans_decode", no_modes(), inp)
}

fn mans_fac(r: &mut Rng, id: String) -> String {
    let nrows = r.range(0, 4) as usize;
    let mut rows: Vec<Vec<String>> = (0..nrows)
        .map(|_| {
            let mut c: Vec<u32> = match r.below(5) {
                0 => vec![0; 63],
                1 => {
                    let mut c = vec![0; 63];
                    c[62] = r.range(0, 255) as u32;
                    c
                }
                _ => (0..63).map(|_| r.range(0, 255) as u32).collect(),
            };
            c.sort();
            c.iter().map(u32::to_string).collect()
        })
        .collect();
    let mut lengths: Vec<String> = (0..nrows)
        .map(|_| {
            let any = r.range(0, 40);
            r.pick(&[0, 1, 2, 3, 16, any]).to_string()
        })
        .collect();
    if r.pct(12) {
        match r.below(5) {
            0 if nrows > 0 => {
                rows[0].pop();
            }
            1 if nrows > 0 => rows[0][62] = "256".into(),
            2 if nrows > 0 => rows[0][0] = "7".into(),
            3 => lengths.push("1".into()),
            _ if nrows > 0 => lengths[0] = "-1".into(),
            _ => lengths.push("2".into()),
        }
    }
    let inp = J::obj(vec![
        ("lengths", strs(&lengths)),
        ("memory", J::Str(memory(r))),
        ("mode", J::str("fac")),
        ("rows", J::Arr(rows.iter().map(|p| strs(p)).collect())),
    ]);
    line(id, "mans_decode", no_modes(), inp)
}

/// The stage operators the generator covers, in the order `request` cycles through them.
pub const OPS: [&str; 11] = [
    "rans64_decode",
    "dequantize",
    "bucket",
    "coded",
    "scale_index",
    "block_stat",
    "band_lookup",
    "mans_decode",
    "mans_decode",
    "residual_step",
    "coding_order",
];

/// The request of `seed`: one canonical line, its operator chosen by the seed, its id
/// `<op>-<seed>`.
pub fn request(seed: u64) -> String {
    let mut r = Rng::new(seed ^ 0x5747_4531);
    let which = (seed % OPS.len() as u64) as usize;
    let id = format!("{}-{seed}", OPS[which]);
    match which {
        0 => rans(&mut r, id),
        1 => dequantize(&mut r, id),
        2 => bucket(&mut r, id),
        3 => coded(&mut r, id),
        4 => scale_index(&mut r, id),
        5 => block_stat(&mut r, id),
        6 => band_lookup(&mut r, id),
        7 => mans_sgm(&mut r, id),
        8 => mans_fac(&mut r, id),
        9 => residual_step(&mut r, id),
        _ => coding_order(&mut r, id),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wai_checker::fill;

    #[test]
    fn every_generated_request_fills_and_round_trips() {
        let mut input = String::new();
        for seed in 0..3000 {
            let l = request(seed);
            assert_eq!(l, request(seed), "deterministic");
            input.push_str(&l);
            input.push('\n');
        }
        let mut out = String::new();
        let mut errs = Vec::new();
        assert_eq!(
            fill::fill(input.as_bytes(), &mut out, &mut |m| errs.push(m)),
            0,
            "{errs:?}"
        );
        // Each filled line is its request with `expect` added; filling it again changes nothing.
        for (req, got) in input.lines().zip(out.lines()) {
            let a: serde_json::Value = serde_json::from_str(req).unwrap();
            let mut b: serde_json::Value = serde_json::from_str(got).unwrap();
            b.as_object_mut().unwrap().remove("expect");
            assert_eq!(a, b);
        }
        let mut again = String::new();
        fill::fill(out.as_bytes(), &mut again, &mut |m| panic!("{m}"));
        assert_eq!(again, out);
    }

    #[test]
    fn escape_steps_are_minimal() {
        assert_eq!(escape_steps(1, 3), vec![Step::Bits { k: 4, v: 0 }]);
        assert_eq!(
            escape_steps(-1, 3),
            vec![Step::Bits { k: 4, v: 1 }, Step::Bits { k: 4, v: 1 }]
        );
        // value −2^31: raw = 2^32 − 1, eight groups of 15.
        let e = escape_steps(i32::MIN.into(), 2);
        assert_eq!(e.len(), 9);
        assert!(e[1..].iter().all(|s| *s == Step::Bits { k: 4, v: 15 }));
    }
}
