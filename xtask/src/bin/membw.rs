//! `membw BYTES [RUNS]`: the time to stream BYTES of f32 from memory once, read in row order by the
//! machine's threads as the CIS-2 fast path's matvec reads its weights; prints the best and median
//! seconds per pass (for `cargo xtask bench`'s memory-streaming bound).

use rayon::prelude::*;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let bytes: usize = args.get(1).and_then(|a| a.parse().ok()).unwrap_or(1 << 28);
    let runs: usize = args.get(2).and_then(|a| a.parse().ok()).unwrap_or(5);
    let n = bytes / 4;
    let data: Vec<f32> = (0..n).map(|i| (i % 1024) as f32).collect();
    let rows = 4096.min(n.max(1));
    let row = n / rows;
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            let sum: f32 = (0..rows)
                .into_par_iter()
                .map(|r| data[r * row..(r + 1) * row].iter().sum::<f32>())
                .sum();
            std::hint::black_box(sum);
            start.elapsed().as_secs_f64()
        })
        .collect();
    times.sort_by(f64::total_cmp);
    println!("{} {}", times[0], times[runs / 2]);
}
