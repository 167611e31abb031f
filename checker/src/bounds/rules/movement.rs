//! §8.3 movement: the input's interval for each output (`crop_to`'s is its first input's);
//! `concat` and `subpos_merge` take the hull of their inputs'; `fill` takes `[v, v]` for a constant
//! or its scalar's declared range.

use super::{Out, plain, si};
use crate::bounds::interval::Iv;
use crate::whg1::ScalarRec;

/// `split`, `pixel_shuffle`, `pixel_unshuffle`, `pad_rep`, `crop_to` and `crop`: the input's interval.
pub(super) fn moved(x: Iv) -> Out {
    plain(vec![x])
}

/// `concat` and `subpos_merge`: the hull of the inputs' intervals.
pub(super) fn merged(ins: &[Iv]) -> Out {
    plain(vec![ins.iter().copied().reduce(Iv::hull).expect("inputs")])
}

/// `subpos_split`: the input's interval for each of its four outputs.
pub(super) fn subpos_split(x: Iv) -> Out {
    plain(vec![x; 4])
}

/// `fill` with a constant `v`.
pub(super) fn fill_const(v: i64) -> Out {
    plain(vec![Iv::point(si(v))])
}

/// `fill` with a scalar: its declared range.
pub(super) fn fill_scalar(s: ScalarRec) -> Out {
    plain(vec![Iv::new(si(s.lo), si(s.hi))])
}
