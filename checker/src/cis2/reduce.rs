//! §5 reductions, §8 RMSNorm, §9.3 softmax and §11.2 argmax.
//!
//! [`matmul_on`] multiplies bf16 matrices ([`super::bf16`], widened as read) into one or several
//! positions' inputs. A large matrix's rows are split (§5.2 allows any row order) between the
//! calling thread and [`Workers`], threads that live as long as a decode and pin their own
//! floating-point environment ([`super::env::pin`]) once. Within one thread, rows are taken a
//! block of eight at a time, and each block column is widened once and multiplied into up to seven
//! positions: `8 × 7` accumulators side by side, each still one row's §5.1 sequence for one
//! position (`acc = acc + (w[o][i]·x[i])`, `i` ascending), only interleaved with the others'. The
//! compiler may vectorise the side-by-side accumulators (lane by lane the same IEEE operations,
//! under the same MXCSR/FPCR); nothing is fused (`.ci/no-fma`).

use super::arith::Rule;
use super::bf16::{BLOCK, Mat, widen, widen_column};
use super::env;
use super::pinned::{exp_pinned, rsqrt};
use std::sync::{Arc, OnceLock, mpsc};

/// §5.1: `dot_seq`.
pub fn dot_seq<R: Rule>(a: &[f32], b: &[f32]) -> f32 {
    debug_assert_eq!(a.len(), b.len());
    let mut acc = 0.0f32;
    for (&x, &y) in a.iter().zip(b) {
        let p = R::mul(x, y);
        acc = acc + p;
    }
    acc
}

/// §5.3: `sum_seq`.
pub fn sum_seq(a: &[f32]) -> f32 {
    let mut acc = 0.0f32;
    for &v in a {
        acc = acc + v;
    }
    acc
}

/// Below this many products a matvec runs on the calling thread alone.
const PARALLEL_MIN: usize = 1 << 16;

/// The number of threads a large matvec uses (the calling thread included), asked of the system
/// once (on Linux the question reads the cgroup's files).
pub fn threads() -> usize {
    static N: OnceLock<usize> = OnceLock::new();
    *N.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 16))
}

/// The most positions per tile: each block column, once widened, is multiplied into up to this
/// many positions' accumulators. With AVX2, seven positions' accumulators and the widened column
/// fit in the sixteen vector registers (with eight they spill: seven times slower, measured).
const TILE: usize = 7;

/// One block of a matrix against `Q` positions: `xt[i][q]` is position `q`'s input `i`. Each of
/// the `BLOCK × Q` accumulators is one row's §5.1 sequence for one position (`acc = acc +
/// w[o][i]·x[i]`, `i` ascending), side by side with the others.
#[inline(always)]
fn block_dots<R: Rule, const Q: usize>(block: &[u8], xt: &[f32]) -> [[f32; BLOCK]; Q] {
    let (xt, _) = xt.as_chunks::<Q>();
    let mut acc = [[0.0f32; BLOCK]; Q];
    for (c, x) in block.chunks_exact(2 * BLOCK).zip(xt) {
        let w = widen_column(c.try_into().expect("a block column"));
        for (a, &xq) in acc.iter_mut().zip(x) {
            for (ar, &wr) in a.iter_mut().zip(&w) {
                *ar = *ar + R::mul(wr, xq);
            }
        }
    }
    acc
}

/// §5.1 on a row-major row of bf16 bits, each widened as read.
#[inline(always)]
fn dot_bf16<R: Rule>(row: &[u8], x: &[f32]) -> f32 {
    let mut acc = 0.0f32;
    for (e, &xi) in row.chunks_exact(2).zip(x) {
        acc = acc + R::mul(widen(e[0], e[1]), xi);
    }
    acc
}

/// A tile of positions: the first, how many, and their inputs transposed (`[i][q]`, flat).
struct Tile {
    first: usize,
    len: usize,
    xt: Vec<f32>,
}

/// One matvec's inputs: the positions, and the same in tiles of at most [`TILE`], as even as can be.
struct Inputs {
    xs: Vec<Vec<f32>>,
    tiles: Vec<Tile>,
}

impl Inputs {
    fn new(xs: &[Vec<f32>], cols: usize) -> Inputs {
        let n = xs.len().div_ceil(TILE);
        let mut tiles = Vec::with_capacity(n);
        let mut first = 0;
        for t in 0..n {
            let len = (xs.len() - first) / (n - t);
            let xt = (0..cols)
                .flat_map(|i| xs[first..first + len].iter().map(move |x| x[i]))
                .collect();
            tiles.push(Tile { first, len, xt });
            first += len;
        }
        Inputs { xs: xs.to_vec(), tiles }
    }
}

/// Rows `first..first + out.len() / p` of `w` against the `p` positions of `inp`, into `out`
/// (`[row][position]`): each full block streamed once for every tile, then the rows after the last
/// block one by one. `first` is a multiple of [`BLOCK`].
#[inline(always)]
fn rows_body<R: Rule>(w: Mat<'_>, inp: &Inputs, first: usize, out: &mut [f32]) {
    let p = inp.xs.len();
    let rows = out.len() / p;
    let mut o = 0;
    while o + BLOCK <= rows && first + o < w.blocks() * BLOCK {
        let block = w.block((first + o) / BLOCK);
        let mut put = |q0: usize, acc: &[[f32; BLOCK]]| {
            for (dq, a) in acc.iter().enumerate() {
                for (r, &v) in a.iter().enumerate() {
                    out[(o + r) * p + q0 + dq] = v;
                }
            }
        };
        for t in &inp.tiles {
            let (q0, xt) = (t.first, &t.xt[..]);
            match t.len {
                1 => put(q0, &block_dots::<R, 1>(block, xt)),
                2 => put(q0, &block_dots::<R, 2>(block, xt)),
                3 => put(q0, &block_dots::<R, 3>(block, xt)),
                4 => put(q0, &block_dots::<R, 4>(block, xt)),
                5 => put(q0, &block_dots::<R, 5>(block, xt)),
                6 => put(q0, &block_dots::<R, 6>(block, xt)),
                _ => put(q0, &block_dots::<R, TILE>(block, xt)),
            }
        }
        o += BLOCK;
    }
    while o < rows {
        let row = w.tail_row(first + o);
        for (q, x) in inp.xs.iter().enumerate() {
            out[o * p + q] = dot_bf16::<R>(row, x);
        }
        o += 1;
    }
}

/// [`rows_body`] compiled for AVX2, whose 256-bit vectors hold a block's eight accumulators (the
/// same IEEE operations lane by lane; FMA is another feature, never enabled).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn rows_avx2<R: Rule>(w: Mat<'_>, inp: &Inputs, first: usize, out: &mut [f32]) {
    rows_body::<R>(w, inp, first, out);
}

fn rows_into<R: Rule>(w: Mat<'_>, inp: &Inputs, first: usize, out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: the CPU has AVX2, checked just above.
        unsafe { rows_avx2::<R>(w, inp, first, out) };
        return;
    }
    rows_body::<R>(w, inp, first, out);
}

/// One thread's share of a matvec: rows `first..first + rows` of `w`.
#[derive(Clone, Copy)]
struct Part<'a> {
    w: Mat<'a>,
    first: usize,
    rows: usize,
}

fn run_part<R: Rule>(part: &Part<'_>, inp: &Inputs) -> Vec<f32> {
    let mut out = vec![0.0f32; part.rows * inp.xs.len()];
    rows_into::<R>(part.w, inp, part.first, &mut out);
    out
}

/// A worker's job: its parts, the inputs, and the rule's kernel.
type Job<'a> = (Vec<Part<'a>>, Arc<Inputs>, fn(&Part<'a>, &Inputs) -> Vec<f32>);

/// A worker's results: its parts' rows, or the error that stopped it.
type Done = Result<Vec<Vec<f32>>, String>;

/// Worker threads for the matvecs over one model's matrices, alive as long as [`Workers::with`]'s
/// closure: each pins its floating-point environment once ([`env::pin`]) and takes its share of
/// every matvec it is sent, so no thread is started per matvec.
pub struct Workers<'a> {
    /// Per worker, where its jobs go and where its results come back.
    each: Vec<(mpsc::Sender<Job<'a>>, mpsc::Receiver<Done>)>,
}

impl<'a> Workers<'a> {
    /// Runs `f` with [`threads`]` − 1` workers, which end with it.
    pub fn with<T>(f: impl FnOnce(&Workers<'a>) -> T) -> T {
        std::thread::scope(|s| {
            let each = (1..threads())
                .map(|_| {
                    let (job_tx, jobs) = mpsc::channel::<Job<'a>>();
                    let (done, done_rx) = mpsc::channel::<Done>();
                    s.spawn(move || {
                        let pinned = env::pin();
                        for (parts, inp, run) in jobs {
                            let r = match &pinned {
                                Ok(_) => Ok(parts.iter().map(|part| run(part, &inp)).collect()),
                                Err(e) => Err(e.clone()),
                            };
                            if done.send(r).is_err() {
                                break;
                            }
                        }
                    });
                    (job_tx, done_rx)
                })
                .collect();
            f(&Workers { each })
        })
    }
}

/// §5.2 for several matrices sharing their input, each at several positions at once: `y[m][q][o]
/// = dot_seq(ws[m][o, :], xs[q])`, every matrix a regrouped bf16 one ([`super::bf16`]) widened
/// as read. Each block of rows is streamed from memory once for all the positions, and every
/// output is one §5.1 sequence. A large matrix's rows are split between the calling thread and
/// the workers in whole blocks (§5.2 allows any row order). The calling thread must be pinned.
pub fn matmul_on<'a, R: Rule>(
    workers: &Workers<'a>,
    ws: &[Mat<'a>],
    xs: &[Vec<f32>],
) -> Result<Vec<Vec<Vec<f32>>>, String> {
    let p = xs.len();
    let Some(cols) = ws.first().map(|w| w.cols) else {
        return Ok(Vec::new());
    };
    assert!(ws.iter().all(|w| w.cols == cols), "matvec: matrix widths");
    assert!(xs.iter().all(|x| x.len() == cols), "matvec: input size");
    if p == 0 {
        return Ok(vec![Vec::new(); ws.len()]);
    }
    // Each thread's parts, with the matrix each part belongs to.
    let n = workers.each.len() + 1;
    let mut parts: Vec<Vec<(usize, Part<'a>)>> = vec![Vec::new(); n];
    for (m, &w) in ws.iter().enumerate() {
        if n == 1 || w.rows * cols * p < PARALLEL_MIN || w.rows < 2 * n * BLOCK {
            parts[0].push((
                m,
                Part {
                    w,
                    first: 0,
                    rows: w.rows,
                },
            ));
            continue;
        }
        // Whole blocks; the rows after the last block go with the last share.
        let per = w.blocks().div_ceil(n) * BLOCK;
        let mut first = 0;
        for share in &mut parts {
            if first == w.rows {
                break;
            }
            let rows = if first + per >= w.blocks() * BLOCK {
                w.rows - first
            } else {
                per
            };
            share.push((m, Part { w, first, rows }));
            first += rows;
        }
    }
    let inp = Arc::new(Inputs::new(xs, cols));
    let run: fn(&Part<'a>, &Inputs) -> Vec<f32> = run_part::<R>;
    let mut sent = Vec::new();
    for ((job, _), share) in workers.each.iter().zip(&parts[1..]) {
        let busy = !share.is_empty();
        if busy {
            let ps = share.iter().map(|&(_, part)| part).collect();
            job.send((ps, Arc::clone(&inp), run))
                .map_err(|_| "a matvec worker has stopped".to_string())?;
        }
        sent.push(busy);
    }
    let mut outs: Vec<Vec<Vec<f32>>> = vec![parts[0].iter().map(|(_, part)| run(part, &inp)).collect()];
    let mut result = Ok(());
    for ((_, done), busy) in workers.each.iter().zip(sent) {
        let r = if busy {
            done.recv().unwrap_or_else(|_| Err("a matvec worker panicked".into()))
        } else {
            Ok(Vec::new())
        };
        match r {
            Ok(o) => outs.push(o),
            Err(e) => {
                outs.push(Vec::new());
                if result.is_ok() {
                    result = Err(e);
                }
            }
        }
    }
    result?;
    // Each matrix's rows in order (the shares are in row order, thread after thread), then by
    // position.
    let mut ys: Vec<Vec<f32>> = vec![Vec::new(); ws.len()];
    for (share, out) in parts.iter().zip(outs) {
        for (&(m, _), rows) in share.iter().zip(out) {
            ys[m].extend_from_slice(&rows);
        }
    }
    Ok(ws
        .iter()
        .zip(ys)
        .map(|(w, y)| (0..p).map(|q| (0..w.rows).map(|o| y[o * p + q]).collect()).collect())
        .collect())
}

/// [`matmul_on`] for one matrix, with workers of its own.
pub fn matmul<R: Rule>(w: Mat<'_>, xs: &[Vec<f32>]) -> Result<Vec<Vec<f32>>, String> {
    Workers::with(|workers| matmul_on::<R>(workers, &[w], xs)).map(|mut y| y.pop().expect("one matrix"))
}

/// §5.2 for one position: `y[o] = dot_seq(w[o, :], x)`.
pub fn matvec<R: Rule>(w: Mat<'_>, x: &[f32]) -> Result<Vec<f32>, String> {
    let mut y = matmul::<R>(w, std::slice::from_ref(&x.to_vec()))?;
    Ok(y.pop().expect("one position"))
}

/// §8: RMSNorm of `x` with gain `weight` and `eps`.
pub fn rmsnorm<R: Rule>(x: &[f32], weight: &[f32], eps: f32) -> Vec<f32> {
    debug_assert_eq!(x.len(), weight.len());
    let sq: Vec<f32> = x.iter().map(|&v| R::mul(v, v)).collect();
    let ss = sum_seq(&sq);
    let mean = R::div(ss, x.len() as f32);
    let inv = rsqrt::<R>(mean + eps);
    x.iter()
        .zip(weight)
        .map(|(&v, &g)| {
            let scaled = R::mul(v, inv);
            R::mul(scaled, g)
        })
        .collect()
}

/// §9.3: `softmax_seq`, in place; `scores` is not empty.
pub fn softmax<R: Rule>(scores: &mut [f32]) {
    let mut max_v = scores[0];
    for &v in &scores[1..] {
        if v > max_v {
            max_v = v;
        }
    }
    for v in scores.iter_mut() {
        *v = exp_pinned::<R>(*v - max_v);
    }
    let denom = sum_seq(scores);
    for v in scores.iter_mut() {
        *v = R::div(*v, denom);
    }
}

/// §11.2: the first index of the greatest value by strict `>`; `logits` is not empty.
pub fn argmax(logits: &[f32]) -> usize {
    let mut best_idx = 0;
    let mut best_val = logits[0];
    for (idx, &v) in logits.iter().enumerate() {
        if v > best_val {
            best_val = v;
            best_idx = idx;
        }
    }
    best_idx
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cis2::arith::{After, Before};
    use crate::cis2::bf16::regroup;

    /// The kernel compiled plainly and (where the CPU has it) for AVX2, at every tile size and with
    /// rows after the last block, against §5.1 on the widened rows, under both rules.
    fn both_kernels<R: Rule>() {
        let _p = env::pin().unwrap();
        let (rows, cols) = (45, 19);
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        // bf16 bits: exponents near 2^-63 so that products near 2^-126 occur, a few subnormals.
        let bits: Vec<u16> = (0..rows * cols)
            .map(|k| {
                let r = next();
                if k % 11 == 0 {
                    (r as u16) & 0x807f
                } else {
                    ((r as u16) & 0x807f) | ((((r >> 16) % 6 + 60) as u16) << 7)
                }
            })
            .collect();
        let w: Vec<Vec<f32>> = bits
            .chunks(cols)
            .map(|r| r.iter().map(|&b| f32::from_bits(u32::from(b) << 16)).collect())
            .collect();
        let mut bytes: Vec<u8> = bits.iter().flat_map(|b| b.to_le_bytes()).collect();
        regroup(&mut bytes, rows, cols);
        let m = Mat::new(&bytes, rows, cols);
        for p in 1..=2 * TILE + 1 {
            let xs: Vec<Vec<f32>> = (0..p)
                .map(|_| {
                    (0..cols)
                        .map(|_| f32::from_bits(((next() as u32) & 0x807f_ffff) | (((next() % 6 + 60) as u32) << 23)))
                        .collect()
                })
                .collect();
            let inp = Inputs::new(&xs, cols);
            assert_eq!(inp.tiles.iter().map(|t| t.len).sum::<usize>(), p);
            assert!(inp.tiles.iter().all(|t| t.len <= TILE));
            let mut plain = vec![0.0f32; rows * p];
            rows_body::<R>(m, &inp, 0, &mut plain);
            let mut chosen = vec![0.0f32; rows * p];
            rows_into::<R>(m, &inp, 0, &mut chosen);
            for (q, x) in xs.iter().enumerate() {
                for (o, row) in w.iter().enumerate() {
                    let want = dot_seq::<R>(row, x).to_bits();
                    assert_eq!(plain[o * p + q].to_bits(), want, "plain, {p} positions: ({q}, {o})");
                    assert_eq!(chosen[o * p + q].to_bits(), want, "chosen, {p} positions: ({q}, {o})");
                }
            }
        }
    }

    #[test]
    fn kernels_keep_each_rows_order() {
        both_kernels::<After>();
        both_kernels::<Before>();
    }
}
