//! Writing `WHG1` bytes: the canonical encoding of a model (§10.1–§10.4).
//!
//! Every reserved byte is zero, and every width is the one the model carries,
//! so `write(read(b)) == b` for every graph that reads.

use super::model::*;
use crate::num::Round;

/// Whether every count of `graph` fits the field §10.1 and §10.4 give it (tensors and nodes `u32`;
/// inputs, outputs and scalars `u16`; a node's inputs and outputs `u8`): [`write`] needs it.
pub fn counts_fit(graph: &Graph) -> Result<(), String> {
    let header = [
        ("tensors", graph.tensors.len(), u32::MAX as usize),
        ("nodes", graph.nodes.len(), u32::MAX as usize),
        ("inputs", graph.inputs.len(), u16::MAX.into()),
        ("outputs", graph.outputs.len(), u16::MAX.into()),
        ("scalars", graph.scalars.len(), u16::MAX.into()),
    ];
    let nodes = graph.nodes.iter().enumerate().flat_map(|(i, n)| {
        [
            ("a node's inputs", n.inputs.len(), i),
            ("a node's outputs", n.outputs.len(), i),
        ]
    });
    for (what, n, max) in header {
        if n > max {
            return Err(format!("{n} {what}: past the field's {max}"));
        }
    }
    for (what, n, i) in nodes {
        if n > u8::MAX.into() {
            return Err(format!("node {i}: {n} of {what}: past the field's 255"));
        }
    }
    Ok(())
}

/// The bytes of `graph`, whose counts fit their fields ([`counts_fit`]).
pub fn write(graph: &Graph) -> Vec<u8> {
    let mut w = Writer::default();
    w.bytes(b"WHG1");
    w.u8(1);
    w.u8(1);
    w.u16(0);
    w.u32(graph.tensors.len() as u32);
    w.u32(graph.nodes.len() as u32);
    w.u16(graph.inputs.len() as u16);
    w.u16(graph.outputs.len() as u16);
    w.u16(graph.scalars.len() as u16);
    w.u16(0);
    w.u32(graph.max_elems);
    w.u32(0);
    for s in &graph.scalars {
        w.i64(s.lo);
        w.i64(s.hi);
    }
    for inp in &graph.inputs {
        w.input(inp);
    }
    for &t in &graph.outputs {
        w.u32(t);
    }
    for t in &graph.tensors {
        w.tensor(t);
    }
    for node in &graph.nodes {
        w.node(node);
    }
    w.out
}

#[derive(Default)]
struct Writer {
    out: Vec<u8>,
}

impl Writer {
    fn bytes(&mut self, b: &[u8]) {
        self.out.extend_from_slice(b);
    }
    fn u8(&mut self, v: u8) {
        self.out.push(v);
    }
    fn u16(&mut self, v: u16) {
        self.bytes(&v.to_le_bytes());
    }
    fn u32(&mut self, v: u32) {
        self.bytes(&v.to_le_bytes());
    }
    fn i64(&mut self, v: i64) {
        self.bytes(&v.to_le_bytes());
    }
    fn zeros(&mut self, n: usize) {
        self.out.resize(self.out.len() + n, 0);
    }
    /// `v` in `bytes` bytes, two's complement, truncated (the model holds values that fit).
    fn int(&mut self, bytes: Width, v: i64) {
        self.bytes(&v.to_le_bytes()[..usize::from(bytes)]);
    }
    fn ints(&mut self, bytes: Width, vs: &[i64]) {
        for &v in vs {
            self.int(bytes, v);
        }
    }

    fn input(&mut self, inp: &Input) {
        self.u32(inp.tensor);
        self.u32(inp.max_h);
        self.u32(inp.max_w);
        let (kind, src, init) = match inp.kind {
            InputKind::Data => (0, 0, 0),
            InputKind::State { src, init } => (1, src, init),
        };
        self.u8(kind);
        self.zeros(3);
        self.u32(src);
        self.zeros(4);
        self.i64(init);
    }

    fn tensor(&mut self, t: &TensorRecord) {
        self.u32(t.channels);
        self.bytes(&t.exponent.unwrap_or(-128).to_le_bytes());
        let (policy, lo, hi) = match t.policy {
            Policy::Derived => (0, 0, 0),
            Policy::Clamp { lo, hi } => (1, lo, hi),
            Policy::Check { lo, hi } => (2, lo, hi),
        };
        self.u8(policy);
        self.zeros(2);
        self.i64(lo);
        self.i64(hi);
    }

    fn node(&mut self, node: &Node) {
        self.u8(node.op.code());
        self.u8(node.inputs.len() as u8);
        self.u8(node.outputs.len() as u8);
        self.u8(0);
        for &t in node.inputs.iter().chain(&node.outputs) {
            self.u32(t);
        }
        let mut p = Writer::default();
        p.params(&node.op);
        self.u32(p.out.len() as u32);
        self.bytes(&p.out);
    }

    fn params(&mut self, op: &Op) {
        match op {
            Op::Conv(c) => {
                for v in [c.cout, c.kh, c.kw, c.sh, c.sw, c.ph, c.pw, c.groups] {
                    self.u32(v);
                }
                self.w_bytes(c.w_bytes);
                self.rq(&c.rq);
                self.ints(c.w_bytes, &c.weights);
            }
            Op::ConvTranspose(c) => {
                for v in [c.cout, c.kh, c.kw, c.sh, c.sw, c.ph, c.pw, c.oph, c.opw] {
                    self.u32(v);
                }
                self.w_bytes(c.w_bytes);
                self.rq(&c.rq);
                self.ints(c.w_bytes, &c.weights);
            }
            Op::Rescale(rq) | Op::Mul(rq) => self.rq(rq),
            Op::Chscale(c) => {
                self.u32(c.scalar);
                self.u32(c.n_rows);
                self.u8(round_code(c.round));
                self.u8(c.m_bytes);
                self.u8(c.shift);
                self.u8(0);
                self.ints(c.m_bytes, &c.m);
            }
            Op::Lut16(l) => {
                self.bytes(&l.e_in.unwrap_or(-128).to_le_bytes());
                self.bytes(&l.e_out.unwrap_or(-128).to_le_bytes());
                self.zeros(2);
                for &v in &l.table {
                    self.bytes(&v.to_le_bytes());
                }
            }
            Op::Add | Op::Concat | Op::ChunkAdd | Op::Relu | Op::Abs | Op::CropTo | Op::Softmax | Op::Sigmoid => {}
            Op::Split { start, count } => {
                self.u32(*start);
                self.u32(*count);
            }
            Op::PixelShuffle { r } | Op::PixelUnshuffle { r } => self.u32(*r),
            Op::Clamp { lo, hi } => {
                self.i64(*lo);
                self.i64(*hi);
            }
            Op::Leaky { a, f } => {
                self.i64(*a);
                self.u32(*f);
            }
            Op::PadRep { m } => self.u32(*m),
            Op::Crop(c) => {
                for operand in [c.y0, c.x0, c.h, c.w] {
                    let (kind, v) = match operand {
                        Operand::Const(v) => (0, v),
                        Operand::Scalar(k) => (1, k),
                    };
                    self.u8(kind);
                    self.zeros(3);
                    self.u32(v);
                }
            }
            Op::SubposSplit { order } | Op::SubposMerge { order } => self.bytes(order),
            Op::Fill(v) => {
                let (kind, value) = match *v {
                    FillValue::Const(v) => (0, v),
                    FillValue::Scalar(k) => (1, i64::from(k)),
                };
                self.u8(kind);
                self.zeros(7);
                self.i64(value);
            }
            Op::Igdn(g) => {
                self.u32(g.gf);
                self.u32(g.frac);
                self.g_bytes(g.g_bytes);
                self.ints(g.g_bytes, &g.gamma);
                self.ints(8, &g.beta);
            }
            Op::LayernormC(l) => {
                self.bytes(&l.eps.to_le_bytes());
                self.g_bytes(l.g_bytes);
                self.ints(l.g_bytes, &l.gamma);
                self.ints(8, &l.beta);
            }
            Op::L2norm { eps } => self.bytes(&eps.to_le_bytes()),
            Op::Elu { alpha } => self.i64(*alpha),
            Op::Gram(c) | Op::Apply(c) => {
                self.u32(c.groups);
                self.rq(&c.rq);
            }
        }
    }

    fn w_bytes(&mut self, w: Width) {
        self.u8(w);
        self.zeros(3);
    }

    fn g_bytes(&mut self, g: Width) {
        self.u8(g);
        self.zeros(7);
    }

    fn rq(&mut self, rq: &Rq) {
        let kind = |pc_each: bool| if pc_each { 2 } else { 1 };
        self.u8(round_code(rq.round));
        self.u8(match &rq.bias {
            None => 0,
            Some(b) if b.placement == Placement::Pre => 1,
            Some(_) => 2,
        });
        self.u8(rq
            .mult
            .as_ref()
            .map_or(0, |m| kind(matches!(m.values, PerChannel::Each(_)))));
        self.u8(kind(matches!(rq.shift, PerChannel::Each(_))));
        self.u8(rq.mult.as_ref().map_or(0, |m| m.bytes));
        self.u8(rq.bias.as_ref().map_or(0, |b| b.bytes));
        self.u16(0);
        if let Some(m) = &rq.mult {
            self.ints(m.bytes, m.values.values());
        }
        self.bytes(rq.shift.values());
        if let Some(b) = &rq.bias {
            self.ints(b.bytes, &b.values);
        }
    }
}

fn round_code(r: Round) -> u8 {
    match r {
        Round::Floor => 0,
        Round::HalfUp => 1,
        Round::HalfEven => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_past_its_field_is_named_before_it_is_written() {
        // §10.1's scalar count is a u16: 65,535 scalars fit, 65,536 would be written as 0.
        let scalar = Scalar { lo: 0, hi: 0 };
        let mut g = Graph {
            max_elems: 1,
            scalars: vec![scalar; 65_535],
            inputs: vec![],
            outputs: vec![],
            tensors: vec![],
            nodes: vec![],
        };
        assert_eq!(counts_fit(&g), Ok(()));
        g.scalars.push(scalar);
        assert_eq!(counts_fit(&g), Err("65536 scalars: past the field's 65535".into()));
    }
}
