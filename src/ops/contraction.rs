//! §5.9 Contractions: `gram` and `apply`, each followed by `rq` (no multiplier,
//! no bias, one shift). Each sum is formed by `mac::dot` (exact: checked `i128`, `BigInt` past it).

use super::mac::{self, Form, Operand, Run};
use super::observe::Observer;
use super::rq::rq_each;
use crate::plan::Shape;
use crate::tensor::Tensor;
use crate::whg1::Contraction;

/// `out[g·d + i][0][j] = R_round(Σ_{y,x} A[g·d + i][y][x]·B[g·d + j][y][x], s)`.
pub fn gram(p: &Contraction, a: &Tensor, b: &Tensor, out: Shape, obs: &mut dyn Observer) -> Tensor {
    let d = a.c() / p.groups as usize;
    let (sa, sb) = (Operand::tensor(a, Form::Checked), Operand::tensor(b, Form::Checked));
    let acc = mac::planes(out, |o, _, j| {
        let (g, i) = (o / d, o % d);
        // Plane against plane, element by element.
        let run = Run {
            a0: a.index(g * d + i, 0, 0),
            da: 1,
            b0: b.index(g * d + j, 0, 0),
            db: 1,
            n: a.h() * a.w(),
        };
        mac::dot(&sa, &sb, [run].into_iter())
    });
    rq_each("gram.acc", &p.rq, out, acc, obs)
}

/// `out[g·d + i][y][x] = R_round(Σ_{j<d} A[g·d + i][0][j]·V[g·d + j][y][x], s)`.
pub fn apply(p: &Contraction, a: &Tensor, v: &Tensor, obs: &mut dyn Observer) -> Tensor {
    let d = a.c() / p.groups as usize;
    let (sa, sv) = (Operand::tensor(a, Form::Checked), Operand::tensor(v, Form::Checked));
    let acc = mac::planes(v.shape, |o, y, x| {
        let (g, i) = (o / d, o % d);
        // Row `g·d + i` of A against element (y, x) of V's channels g·d + j, one plane apart.
        let run = Run {
            a0: a.index(g * d + i, 0, 0),
            da: 1,
            b0: v.index(g * d, y, x),
            db: v.h() * v.w(),
            n: d,
        };
        mac::dot(&sa, &sv, [run].into_iter())
    });
    rq_each("apply.acc", &p.rq, v.shape, acc, obs)
}
