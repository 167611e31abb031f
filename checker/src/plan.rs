//! Planning (§3 caps, §4 run step 3, §5 shape rules, §10.5 step 7).
//!
//! Channel counts never depend on sizes, so they are checked once at load (step 7, first part). A
//! shape plan runs operator by operator in graph order: for each, the sizes formed before its shape
//! rule against `2^26`, then the shape rule, then each output against `max_elems` (§4 run step 3). At
//! load the same plan runs on the declared sizes (docs/assumptions.md A3, A4, A8), with §5.10's rule
//! for a `crop` with scalar operands, and a shape failure is `model_mismatch` there.

use crate::whg1::{CAP, Graph, Kind, Op, OpKind, Operand};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shape {
    pub c: u64,
    pub h: u64,
    pub w: u64,
}

impl Shape {
    pub fn elems(self) -> u128 {
        u128::from(self.c) * u128::from(self.h) * u128::from(self.w)
    }
}

/// Why a plan stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// A size past a cap (`too_large`).
    TooLarge,
    /// A shape rule fails (`geometry_mismatch` at run time, `model_mismatch` at load).
    Shape,
}

/// Where a plan runs: at load on the declared sizes, or at a decode on its scalars' values.
#[derive(Clone, Copy)]
pub enum When<'a> {
    Load,
    Run(&'a [i64]),
}

/// Load step 7, first part: every operator's output channel counts, as §5 derives them, and their
/// equality with the output tensors' records (§10.3). `false` is `model_mismatch`.
pub fn channels_plan(g: &Graph) -> bool {
    g.ops.iter().all(|op| {
        let cin: Vec<u64> = op.ins.iter().map(|&t| g.channels(t)).collect();
        match out_channels(op, &cin) {
            Some(outs) => {
                outs.len() == op.outs.len()
                    && op
                        .outs
                        .iter()
                        .zip(&outs)
                        .all(|(&t, &c)| c.is_none_or(|c| c == g.channels(t)))
            }
            None => false,
        }
    })
}

/// The output channel counts of §5 (`None` inside: taken from the tensor record, for `fill`), or
/// `None` when the channel counts break the operator's rule.
fn out_channels(op: &Op, cin: &[u64]) -> Option<Vec<Option<u64>>> {
    let c = cin[0];
    let one = |v: u64| Some(vec![Some(v)]);
    match &op.kind {
        OpKind::Conv(p) => {
            let g = u64::from(p.groups);
            if !c.is_multiple_of(g) || u64::from(p.cout) % g != 0 {
                return None;
            }
            one(u64::from(p.cout))
        }
        OpKind::ConvT(p) => one(u64::from(p.cout)),
        OpKind::Add | OpKind::Gram { .. } => {
            if cin[1] != c {
                return None;
            }
            if let OpKind::Gram { groups, .. } = op.kind
                && !c.is_multiple_of(u64::from(groups))
            {
                return None;
            }
            one(c)
        }
        OpKind::Apply { groups, .. } => {
            if cin[1] != c || !c.is_multiple_of(u64::from(*groups)) {
                return None;
            }
            one(c)
        }
        OpKind::Mul(_) => {
            if cin[1] != c && cin[1] != 1 {
                return None;
            }
            one(c)
        }
        OpKind::Concat => one(cin.iter().try_fold(0u64, |a, &b| a.checked_add(b))?),
        OpKind::ChunkAdd => {
            if !c.is_multiple_of(2) {
                return None;
            }
            one(c / 2)
        }
        OpKind::Split { start, count } => {
            let (start, count) = (u64::from(*start), u64::from(*count));
            if fault!("plan-split-start-times-count", start + count, start * count) > c {
                return None;
            }
            one(count)
        }
        OpKind::PixelShuffle(r) => {
            let r2 = u64::from(*r) * u64::from(*r);
            if !c.is_multiple_of(r2) {
                return None;
            }
            one(c / r2)
        }
        OpKind::PixelUnshuffle(r) => one(c.checked_mul(u64::from(*r) * u64::from(*r))?),
        OpKind::SubposSplit(_) => Some(vec![Some(c); 4]),
        OpKind::SubposMerge(_) => {
            if cin.iter().any(|&x| x != c) {
                return None;
            }
            one(c)
        }
        OpKind::Fill(_) => Some(vec![None]),
        // crop_to: only ref's sides are read (A5); every other operator keeps its channels.
        _ => one(c),
    }
}

/// The operators whose bounds need a reduction length from declared sizes (§8.1, §10.5 step 7).
pub fn needs_sizes(op: &Op) -> bool {
    matches!(op.kind, OpKind::Gram { .. } | OpKind::L2Norm { .. } | OpKind::Softmax)
}

fn cap(v: Option<u64>) -> Result<u64, Stop> {
    match v {
        Some(v) if v <= CAP => Ok(v),
        _ => Err(Stop::TooLarge),
    }
}

fn rule(ok: bool) -> Result<(), Stop> {
    if ok { Ok(()) } else { Err(Stop::Shape) }
}

/// One side of a `crop` (§5.10): start and length operands against the input side `s`.
fn crop_side(start: Operand, len: Operand, s: u64, when: When, g: &Graph) -> Result<(u64, u64), Stop> {
    let s = i128::from(s);
    let (s0, l) = match when {
        When::Run(vals) => {
            let v = |o: Operand| -> i128 {
                match o {
                    Operand::Const(c) => i128::from(c),
                    Operand::Scalar(k) => i128::from(vals[k]),
                }
            };
            (v(start), v(len))
        }
        When::Load => {
            // The smallest start and the largest length within the input.
            let s0 = match start {
                Operand::Const(c) => i128::from(c),
                Operand::Scalar(_) => fault!("plan-crop-load-start-lo", 0, range_lo(g, start)),
            };
            let l = match len {
                Operand::Const(c) => i128::from(c),
                Operand::Scalar(k) => {
                    let hi = i128::from(g.scalars[k].hi);
                    fault!("plan-crop-load-len-hi", hi.min(s - s0), hi)
                }
            };
            (s0, l)
        }
    };
    rule(s0 >= 0 && l >= 1 && s0 + l <= s)?;
    Ok((s0 as u64, l as u64))
}

/// `plan-crop-load-start-lo`: a scalar operand's range's `lo`.
#[cfg(feature = "mutants")]
fn range_lo(g: &Graph, o: Operand) -> i128 {
    match o {
        Operand::Const(c) => i128::from(c),
        Operand::Scalar(k) => i128::from(g.scalars[k].lo),
    }
}

/// The output shapes of one operator on its input shapes (§4 run step 3, §5), without the
/// `max_elems` check of its outputs.
pub fn plan_op(g: &Graph, op: &Op, ins: &[Shape], when: When) -> Result<Vec<Shape>, Stop> {
    let x = ins[0];
    let same = |s: Shape| Ok(vec![s]);
    match &op.kind {
        OpKind::Conv(p) => {
            let hp = cap(x.h.checked_add(2 * u64::from(p.ph)))?;
            let wp = cap(x.w.checked_add(2 * u64::from(p.pw)))?;
            rule(hp >= u64::from(p.kh) && wp >= u64::from(p.kw))?;
            let out = |n: u64, s: u32| fault!("plan-conv-out-ceil", n / u64::from(s), n.div_ceil(u64::from(s))) + 1;
            let ho = out(hp - u64::from(p.kh), p.sh);
            let wo = out(wp - u64::from(p.kw), p.sw);
            same(Shape {
                c: u64::from(p.cout),
                h: ho,
                w: wo,
            })
        }
        OpKind::ConvT(p) => {
            let side = |n: u64, s: u32, k: u32, op_: u32| -> Option<u64> {
                (n - 1)
                    .checked_mul(u64::from(s))?
                    .checked_add(u64::from(k))?
                    .checked_add(u64::from(op_))
            };
            let (oph, opw) = fault!("plan-convt-out-pad-ignored", (p.oph, p.opw), (0, 0));
            let (uh, uw) = (side(x.h, p.sh, p.kh, oph), side(x.w, p.sw, p.kw, opw));
            let caps = || -> Result<(u64, u64), Stop> {
                let (uh, uw) = (cap(uh)?, cap(uw)?);
                cap(u64::from(p.cout).checked_mul(uh).and_then(|v| v.checked_mul(uw)))?;
                Ok((uh, uw))
            };
            // §4: the uncropped sizes are checked before the shape rule.
            let (uh, uw) = fault!("plan-convt-caps-after-shape", caps()?, unchecked(uh, uw));
            let ho = i128::from(uh) - 2 * i128::from(p.ph);
            let wo = i128::from(uw) - 2 * i128::from(p.pw);
            rule(ho >= 1 && wo >= 1)?;
            fault!("plan-convt-caps-after-shape", (), caps().map(|_| ())?);
            same(Shape {
                c: u64::from(p.cout),
                h: ho as u64,
                w: wo as u64,
            })
        }
        OpKind::Add => {
            rule(ins[1] == x)?;
            same(x)
        }
        OpKind::Mul(_) => {
            rule(ins[1].h == x.h && ins[1].w == x.w)?;
            same(x)
        }
        OpKind::Concat => {
            rule(ins.iter().all(|s| s.h == x.h && s.w == x.w))?;
            same(Shape {
                c: ins.iter().map(|s| s.c).sum(),
                ..x
            })
        }
        OpKind::ChunkAdd => same(Shape { c: x.c / 2, ..x }),
        OpKind::Split { count, .. } => same(Shape {
            c: u64::from(*count),
            ..x
        }),
        OpKind::PixelShuffle(r) => {
            let r = u64::from(*r);
            let h = cap(x.h.checked_mul(r))?;
            let w = cap(x.w.checked_mul(r))?;
            same(Shape { c: x.c / (r * r), h, w })
        }
        OpKind::PixelUnshuffle(r) => {
            let r = u64::from(*r);
            let divides = x.h.is_multiple_of(r) && x.w.is_multiple_of(r);
            rule(fault!("plan-unshuffle-divisibility-unchecked", divides, true))?;
            same(Shape {
                c: x.c * r * r,
                h: x.h / r,
                w: x.w / r,
            })
        }
        OpKind::PadRep(m) => {
            let m = u64::from(*m);
            let side = |n: u64| fault!("plan-pad-rep-floor", n.div_ceil(m), n / m);
            let h = cap(side(x.h).checked_mul(m))?;
            let w = cap(side(x.w).checked_mul(m))?;
            same(Shape { h, w, ..x })
        }
        OpKind::CropTo => {
            let r = ins[1];
            let within = |a: u64, b: u64| fault!("plan-crop-to-strict", a <= b, a < b);
            rule(within(r.h, x.h) && within(r.w, x.w))?;
            same(Shape { c: x.c, h: r.h, w: r.w })
        }
        OpKind::Crop([y0, x0, h, w]) => {
            let (_, ch) = crop_side(*y0, *h, x.h, when, g)?;
            let (_, cw) = crop_side(*x0, *w, x.w, when, g)?;
            same(Shape { c: x.c, h: ch, w: cw })
        }
        OpKind::SubposSplit(_) => {
            rule(x.h.is_multiple_of(2) && x.w.is_multiple_of(2))?;
            Ok(vec![
                Shape {
                    c: x.c,
                    h: x.h / 2,
                    w: x.w / 2
                };
                4
            ])
        }
        OpKind::SubposMerge(_) => {
            // The output sides come from the first input (A7), then all four must agree.
            let h = cap(x.h.checked_mul(2))?;
            let w = cap(x.w.checked_mul(2))?;
            rule(ins.iter().all(|&s| s == x))?;
            same(Shape { c: x.c, h, w })
        }
        OpKind::Fill(_) => same(Shape {
            c: g.channels(op.outs[0]),
            ..x
        }),
        OpKind::Gram { groups, .. } => {
            rule(ins[1] == x)?;
            same(Shape {
                c: x.c,
                h: 1,
                w: x.c / u64::from(*groups),
            })
        }
        OpKind::Apply { groups, .. } => {
            let v = ins[1];
            rule(x.c == v.c && x.h == 1 && x.w == v.c / u64::from(*groups))?;
            same(v)
        }
        _ => same(x),
    }
}

/// `plan-convt-caps-after-shape`: the uncropped sides before their caps are checked (past u64 as
/// `u64::MAX`, for the shape rule).
#[cfg(feature = "mutants")]
fn unchecked(uh: Option<u64>, uw: Option<u64>) -> (u64, u64) {
    (uh.unwrap_or(u64::MAX), uw.unwrap_or(u64::MAX))
}

/// Why a whole plan stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlanErr {
    TooLarge,
    Shape,
}

/// Plans every operator in graph order from the inputs' shapes (one per input record), checking each
/// output against `max_elems`. Returns every tensor's shape.
pub fn plan(g: &Graph, inputs: &[Shape], when: When) -> Result<Vec<Option<Shape>>, PlanErr> {
    let mut shapes: Vec<Option<Shape>> = vec![None; g.tensors.len()];
    for (rec, &s) in g.inputs.iter().zip(inputs) {
        shapes[rec.tensor] = Some(s);
    }
    for op in &g.ops {
        let ins: Vec<Shape> = op
            .ins
            .iter()
            .map(|&t| shapes[t].expect("planned in graph order"))
            .collect();
        let outs = plan_op(g, op, &ins, when).map_err(|e| match e {
            Stop::TooLarge => PlanErr::TooLarge,
            Stop::Shape => PlanErr::Shape,
        })?;
        for (&t, s) in op.outs.iter().zip(outs) {
            if fault!("plan-outputs-uncapped", s.elems() > u128::from(g.max_elems), false) {
                return Err(PlanErr::TooLarge);
            }
            shapes[t] = Some(s);
        }
    }
    Ok(shapes)
}

/// Load step 7 with declared sizes: each input at `[C, max_h, max_w]` against `max_elems`, in
/// input-table order (A3, A8), then the plan.
pub fn load_plan(g: &Graph) -> Result<Vec<Option<Shape>>, PlanErr> {
    let mut inputs = Vec::new();
    for rec in &g.inputs {
        let s = Shape {
            c: g.channels(rec.tensor),
            h: u64::from(rec.max_h),
            w: u64::from(rec.max_w),
        };
        if s.elems() > u128::from(g.max_elems) {
            return Err(PlanErr::TooLarge);
        }
        inputs.push(s);
    }
    debug_assert!(g.inputs.iter().all(|i| i.kind == Kind::Data || i.declares_sizes()));
    plan(g, &inputs, When::Load)
}
