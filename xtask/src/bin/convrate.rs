//! `convrate [RUNS]`: the oracle's exact `conv` (§5.2 with its `rq` epilogue) on a 64-in, 64-out
//! channel 3×3 convolution (padding 1) over a 64×64 plane, int8 weights and inputs, for
//! `cargo xtask bench`. Prints one line per configuration,
//! `form threads seconds-min seconds-median seconds-max macs`, with `form` one of
//! - `checked`: the oracle's `conv`, its sums in checked `i128`, `BigInt` past it (`ops::mac`);
//! - `bigint`: the same loops with every sum in `BigInt` (`Form::Big`, the fallback alone);
//! - `before`: the oracle's `conv` as it was before the checked form (commit f1b3d67), kept below
//!   verbatim, a `BigInt` per product;
//!
//! `checked` on one thread and on all of the machine's, the others on one. Every configuration's
//! tensor is the same (checked here).

use std::time::Instant;
use wai_oracle::fill::recipe::splitmix64;
use wai_oracle::num::Round;
use wai_oracle::ops::linear::conv_in;
use wai_oracle::ops::mac::Form;
use wai_oracle::ops::observe::{Observer, Silent};
use wai_oracle::ops::rq::rq;
use wai_oracle::plan::Shape;
use wai_oracle::tensor::Tensor;
use wai_oracle::whg1::model::{Bias, Conv, PerChannel, Placement, Rq};

const C: u64 = 64;
const SIDE: u64 = 64;

/// An int8 value from SplitMix64.
fn int8(seed: u64, i: u64) -> i64 {
    (splitmix64(seed, i) >> 56) as i64 - 128
}

/// The oracle's `conv` at commit f1b3d67, verbatim: `acc` a `BigInt`, one product at a time.
fn conv_before(p: &Conv, x: &Tensor, out: Shape, obs: &mut dyn Observer) -> Tensor {
    use num_bigint::BigInt;
    fn padded(x: &Tensor, c: usize, u: i128, v: i128) -> BigInt {
        if (0..x.h() as i128).contains(&u) && (0..x.w() as i128).contains(&v) {
            x.at(c, u as usize, v as usize).clone()
        } else {
            BigInt::ZERO
        }
    }
    let cg = x.c() / p.groups as usize;
    let og = p.cout as usize / p.groups as usize;
    let (kh, kw) = (p.kh as usize, p.kw as usize);
    let wt = |o: usize, ci: usize, i: usize, j: usize| p.weights[((o * cg + ci) * kh + i) * kw + j];
    Tensor::from_fn(out, |o, y, xo| {
        let mut acc = BigInt::ZERO;
        for ci in 0..cg {
            for i in 0..kh {
                for j in 0..kw {
                    let u = (y * p.sh as usize + i) as i128 - i128::from(p.ph);
                    let v = (xo * p.sw as usize + j) as i128 - i128::from(p.pw);
                    acc += wt(o, ci, i, j) * padded(x, (o / og) * cg + ci, u, v);
                }
            }
        }
        obs.see("conv.acc", o, &acc);
        rq(&p.rq, o, &acc, obs)
    })
}

fn main() {
    let runs: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(3).max(1);
    let p = Conv {
        cout: C as u32,
        kh: 3,
        kw: 3,
        sh: 1,
        sw: 1,
        ph: 1,
        pw: 1,
        groups: 1,
        w_bytes: 1,
        rq: Rq {
            round: Round::HalfEven,
            mult: None,
            shift: PerChannel::One(10),
            bias: Some(Bias {
                placement: Placement::Pre,
                bytes: 4,
                values: (0..C).map(|o| 37 * o as i64 - 1000).collect(),
            }),
        },
        weights: (0..C * C * 9).map(|i| int8(64, i)).collect(),
    };
    let shape = Shape::new(C, SIDE, SIDE);
    let x = Tensor {
        shape,
        data: (0..C * SIDE * SIDE).map(|i| int8(1, i).into()).collect(),
    };
    // Nominal: every output sums cin·kh·kw products, the padding's zeros included.
    let macs = C * C * 9 * SIDE * SIDE;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let conv = |name: &str| match name {
        "checked" => conv_in(Form::Checked, &p, &x, shape, &mut Silent),
        "bigint" => conv_in(Form::Big, &p, &x, shape, &mut Silent),
        _ => conv_before(&p, &x, shape, &mut Silent),
    };
    let configurations = [("checked", 1), ("checked", cores), ("bigint", 1), ("before", 1)];
    let mut first: Option<Tensor> = None;
    for (name, threads) in configurations {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("a thread pool");
        let mut times: Vec<f64> = (0..runs)
            .map(|_| {
                let start = Instant::now();
                let y = pool.install(|| conv(name));
                let t = start.elapsed().as_secs_f64();
                let first = first.get_or_insert_with(|| y.clone());
                assert!(*first == y, "{name} on {threads} threads differs");
                t
            })
            .collect();
        times.sort_by(f64::total_cmp);
        println!(
            "{name} {threads} {} {} {} {macs}",
            times[0],
            times[runs / 2],
            times[runs - 1]
        );
    }
}
