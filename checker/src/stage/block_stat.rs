//! E6 `block_stat(x; b, s, lo, hi)` (§5E): each channel's plane tiled by `b × b` blocks, each
//! block's sum rounded by `s` and clamped to `[lo, hi]`, in the fixed width with an exact fallback.

use super::dec::Dec;
use super::scalar::{clamp_dec, cond, elems, r_half_up_256, shift};
use super::{Code, SR};
use ethnum::I256;

/// A request tensor `[C, H, W]`, its elements in CHW order.
#[derive(Clone, Debug)]
pub struct DecTensor {
    pub shape: [u64; 3],
    pub data: Vec<Dec>,
}

/// E6 `block_stat(x; b, s, lo, hi)`, for `b ≥ 1`, `s` in `0..=127` and `lo ≤ hi`; `x` has every side
/// at least 1 and at most `2^26` elements (§3).
///
/// A block whose values all fit i128 is summed in I256 (fewer than `2^64` terms, so `|S| < 2^191`)
/// and rounded there; a block holding a value past i128 is summed exactly by columns
/// (`Dec::sum`) and rounded by long division. The clamp compares exactly, so `lo` and `hi` may
/// have any length. A side `b` past the plane's sides is one block per plane.
pub fn block_stat(x: &DecTensor, b: &Dec, s: &Dec, lo: &Dec, hi: &Dec) -> SR<Vec<Dec>> {
    if b.clamped() < 1 {
        return cond(Code::ModelMismatch);
    }
    let s = shift(s)?;
    if lo > hi {
        return cond(Code::ModelMismatch);
    }
    let [c, h, w] = x.shape;
    if c == 0 || h == 0 || w == 0 {
        return cond(Code::ModelMismatch);
    }
    if elems([c, h, w]).is_none_or(|n| n > 1 << 26) {
        return cond(Code::TooLarge);
    }
    let (c, h, w) = (c as usize, h as usize, w as usize);
    // b ≥ max(H, W) tiles each plane with one block, as b = max(H, W) does.
    let b = match b.to_i128() {
        Some(v) if v < h.max(w) as i128 => v as usize,
        _ => h.max(w),
    };
    let small: Vec<Option<i128>> = x.data.iter().map(Dec::to_i128).collect();
    let (lo_w, hi_w) = (lo.to_i256(), hi.to_i256());
    let mut out = vec![Dec::ZERO; x.data.len()];
    for ch in 0..c {
        let plane = ch * h * w;
        for by in (0..h).step_by(b) {
            for bx in (0..w).step_by(b) {
                let cells =
                    || (by..(by + b).min(h)).flat_map(move |y| (bx..(bx + b).min(w)).map(move |x| plane + y * w + x));
                let s = fault!("block-stat-shift-full-blocks-only", s, if_full(s, cells().count(), b));
                let v = if cells().all(|k| small[k].is_some()) {
                    let sum = cells().fold(I256::ZERO, |a, k| a + I256::from(small[k].expect("fits")));
                    let r = fault!("block-stat-floor", r_half_up_256(sum, s), sum >> s);
                    match (lo_w, hi_w) {
                        (Some(l), Some(u)) => Dec::from_i256(r.clamp(l, u)),
                        _ => clamp_dec(Dec::from_i256(r), lo, hi),
                    }
                } else {
                    let terms: Vec<&Dec> = cells().map(|k| &x.data[k]).collect();
                    clamp_dec(Dec::sum(&terms).r_half_up(s), lo, hi)
                };
                for k in cells() {
                    out[k] = v.clone();
                }
            }
        }
    }
    Ok(out)
}

/// `block-stat-shift-full-blocks-only`: `s` for a block of `b × b` cells, else 0.
#[cfg(feature = "mutants")]
fn if_full(s: u32, cells: usize, b: usize) -> u32 {
    if cells == b * b { s } else { 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Dec {
        Dec::parse(s).unwrap()
    }
    fn di(v: i128) -> Dec {
        Dec::from_i128(v)
    }
    fn refused<T: std::fmt::Debug>(r: SR<T>) -> (Code, i64) {
        let e = r.unwrap_err();
        (e.code, e.at)
    }

    #[test]
    fn block_stat_facts() {
        let x = DecTensor {
            shape: [2, 2, 3],
            data: (1..=12).map(di).collect(),
        };
        // b = 2: blocks {1,2,4,5}, {3,6}, per channel; s applied whatever the block's size.
        let out = block_stat(&x, &di(2), &di(0), &di(-30), &di(30)).unwrap();
        let got: Vec<i128> = out.iter().map(|v| v.to_i128().unwrap()).collect();
        assert_eq!(got, [12, 12, 9, 12, 12, 9, 30, 30, 21, 30, 30, 21]);
        let out = block_stat(&x, &di(2), &di(2), &di(0), &di(7)).unwrap();
        let got: Vec<i128> = out.iter().map(|v| v.to_i128().unwrap()).collect();
        assert_eq!(got, [3, 3, 2, 3, 3, 2, 7, 7, 5, 7, 7, 5]);
        // A side past the plane, and one past 2^64: one block per plane.
        for b in [di(3), di(1 << 70)] {
            let out = block_stat(&x, &b, &di(0), &di(-100), &di(100)).unwrap();
            assert!(out[..6].iter().all(|v| *v == di(21)) && out[6..].iter().all(|v| *v == di(57)));
        }
        let z = DecTensor {
            shape: [1, 0, 1],
            data: vec![],
        };
        assert_eq!(
            refused(block_stat(&z, &di(1), &di(0), &di(0), &di(1))),
            (Code::ModelMismatch, -1)
        );
        assert_eq!(
            refused(block_stat(&x, &di(0), &di(0), &di(0), &di(1))),
            (Code::ModelMismatch, -1)
        );
        assert_eq!(
            refused(block_stat(&x, &di(1), &di(128), &di(0), &di(1))),
            (Code::ModelMismatch, -1)
        );
        assert_eq!(
            refused(block_stat(&x, &di(1), &di(0), &di(2), &di(1))),
            (Code::ModelMismatch, -1)
        );
        // Values past i128 cancel exactly.
        let big = format!("1{}", "0".repeat(60));
        let y = DecTensor {
            shape: [1, 1, 3],
            data: vec![d(&big), di(7), d(&format!("-{big}"))],
        };
        let out = block_stat(&y, &di(4), &di(1), &di(-100), &di(100)).unwrap();
        assert!(out.iter().all(|v| *v == di(4)));
    }
}
