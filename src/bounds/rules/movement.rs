//! §8.3 movement: the input's interval for each output; `crop_to`'s is its first
//! input's; `concat` and `subpos_merge` take the hull of their inputs'; `fill` takes
//! `[v, v]` for a constant or its scalar's declared range.

use crate::bounds::interval::{Interval, hull};
use crate::whg1::{FillValue, Graph, Op};

pub fn results(graph: &Graph, op: &Op, ins: &[Interval], outputs: usize) -> Vec<Interval> {
    let one = match op {
        Op::Concat | Op::SubposMerge { .. } => hull(ins).unwrap_or_else(|| ins[0].clone()),
        Op::Fill(FillValue::Const(v)) => Interval::point(*v),
        Op::Fill(FillValue::Scalar(k)) => {
            let s = graph.scalars[*k as usize];
            Interval::new(s.lo, s.hi)
        }
        _ => ins[0].clone(),
    };
    vec![one; outputs]
}
