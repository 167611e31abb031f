//! E13 `coding_order` (§5E): `raster` (channel, then row, then column), or `checkerboard` with
//! its anchor; each element's CHW position, in coding order.

use super::scalar::{cond, elems};
use super::{Code, SR};

/// E13's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    Raster,
    Checkerboard(bool),
}

/// E13 `coding_order`: each element's CHW position, in coding order. A side of 0 is a condition
/// (`model_mismatch`), and a shape past `2^26` elements is `too_large` (docs/assumptions.md S5).
pub fn coding_order(shape: [u64; 3], order: Order) -> SR<Vec<u64>> {
    let [c, h, w] = shape;
    if c == 0 || h == 0 || w == 0 {
        return cond(Code::ModelMismatch);
    }
    let Some(n) = elems(shape).filter(|&n| n <= 1 << 26) else {
        return cond(Code::TooLarge);
    };
    let all = 0..n as u64;
    Ok(match order {
        Order::Raster => all.collect(),
        Order::Checkerboard(anchor) => {
            // Position k is (c, y, x) with y = ⌊k / W⌋ mod H and x = k mod W.
            let anchor = fault!("checkerboard-anchor-inverted", anchor, !anchor);
            all.filter(|k| {
                let parity = k / w % h + k % w + fault!("checkerboard-parity-with-channel", 0, k / (w * h));
                (parity % 2 == 0) == anchor
            })
            .collect()
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused<T: std::fmt::Debug>(r: SR<T>) -> (Code, i64) {
        let e = r.unwrap_err();
        (e.code, e.at)
    }

    #[test]
    fn coding_order_facts() {
        assert_eq!(coding_order([2, 1, 3], Order::Raster), Ok(vec![0, 1, 2, 3, 4, 5]));
        assert_eq!(
            coding_order([2, 2, 3], Order::Checkerboard(true)),
            Ok(vec![0, 2, 4, 6, 8, 10])
        );
        assert_eq!(
            coding_order([2, 2, 3], Order::Checkerboard(false)),
            Ok(vec![1, 3, 5, 7, 9, 11])
        );
        assert_eq!(coding_order([1, 2, 2], Order::Checkerboard(true)), Ok(vec![0, 3]));
        assert_eq!(coding_order([1, 1, 1], Order::Checkerboard(false)), Ok(vec![]));
        assert_eq!(
            refused(coding_order([0, u64::MAX, 1], Order::Raster)),
            (Code::ModelMismatch, -1)
        );
        assert_eq!(
            refused(coding_order([1, 8192, 8193], Order::Raster)),
            (Code::TooLarge, -1)
        );
        assert_eq!(coding_order([1, 8192, 8192], Order::Raster).unwrap().len(), 1 << 26);
    }
}
