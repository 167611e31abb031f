//! A `WHG1` writer (§10.1–§10.4). It writes what it is given, valid or not: the lowerings' canonical
//! form ([`crate::lower::form`]) checks every count against its field first, and tests write
//! malformed graphs on purpose.

/// A tensor record.
#[derive(Clone, Debug)]
pub struct TensorW {
    pub channels: u32,
    pub exponent: i8,
    /// 0 derived, 1 clamp, 2 check.
    pub policy: u8,
    pub lo: i64,
    pub hi: i64,
}

impl TensorW {
    pub fn derived(channels: u32) -> Self {
        TensorW {
            channels,
            exponent: -128,
            policy: 0,
            lo: 0,
            hi: 0,
        }
    }
    pub fn clamp(channels: u32, lo: i64, hi: i64) -> Self {
        TensorW {
            channels,
            exponent: -128,
            policy: 1,
            lo,
            hi,
        }
    }
    pub fn check(channels: u32, lo: i64, hi: i64) -> Self {
        TensorW {
            channels,
            exponent: -128,
            policy: 2,
            lo,
            hi,
        }
    }
}

#[derive(Clone, Debug)]
pub struct InputW {
    pub tensor: u32,
    pub max_h: u32,
    pub max_w: u32,
    pub kind: u8,
    pub src: u32,
    pub init: i64,
}

impl InputW {
    pub fn data(tensor: u32, max_h: u32, max_w: u32) -> Self {
        InputW {
            tensor,
            max_h,
            max_w,
            kind: 0,
            src: 0,
            init: 0,
        }
    }
}

#[derive(Clone, Debug)]
pub struct OpW {
    pub opcode: u8,
    pub ins: Vec<u32>,
    pub outs: Vec<u32>,
    pub params: Vec<u8>,
}

#[derive(Clone, Debug)]
pub struct GraphW {
    pub max_elems: u32,
    pub scalars: Vec<(i64, i64)>,
    pub inputs: Vec<InputW>,
    pub outputs: Vec<u32>,
    pub tensors: Vec<TensorW>,
    pub ops: Vec<OpW>,
}

impl GraphW {
    pub fn bytes(&self) -> Vec<u8> {
        let mut b = Vec::new();
        b.extend_from_slice(b"WHG1");
        b.extend_from_slice(&[1, 1, 0, 0]);
        b.extend_from_slice(&(self.tensors.len() as u32).to_le_bytes());
        b.extend_from_slice(&(self.ops.len() as u32).to_le_bytes());
        b.extend_from_slice(&(self.inputs.len() as u16).to_le_bytes());
        b.extend_from_slice(&(self.outputs.len() as u16).to_le_bytes());
        b.extend_from_slice(&(self.scalars.len() as u16).to_le_bytes());
        b.extend_from_slice(&[0, 0]);
        b.extend_from_slice(&self.max_elems.to_le_bytes());
        b.extend_from_slice(&[0; 4]);
        for &(lo, hi) in &self.scalars {
            b.extend_from_slice(&lo.to_le_bytes());
            b.extend_from_slice(&hi.to_le_bytes());
        }
        for i in &self.inputs {
            b.extend_from_slice(&i.tensor.to_le_bytes());
            b.extend_from_slice(&i.max_h.to_le_bytes());
            b.extend_from_slice(&i.max_w.to_le_bytes());
            b.extend_from_slice(&[i.kind, 0, 0, 0]);
            b.extend_from_slice(&i.src.to_le_bytes());
            b.extend_from_slice(&[0; 4]);
            b.extend_from_slice(&i.init.to_le_bytes());
        }
        for o in &self.outputs {
            b.extend_from_slice(&o.to_le_bytes());
        }
        for t in &self.tensors {
            b.extend_from_slice(&t.channels.to_le_bytes());
            b.push(t.exponent as u8);
            b.push(t.policy);
            b.extend_from_slice(&[0, 0]);
            b.extend_from_slice(&t.lo.to_le_bytes());
            b.extend_from_slice(&t.hi.to_le_bytes());
        }
        for op in &self.ops {
            b.extend_from_slice(&[op.opcode, op.ins.len() as u8, op.outs.len() as u8, 0]);
            for t in op.ins.iter().chain(&op.outs) {
                b.extend_from_slice(&t.to_le_bytes());
            }
            b.extend_from_slice(&(op.params.len() as u32).to_le_bytes());
            b.extend_from_slice(&op.params);
        }
        b
    }
}

/// Little-endian parameter bytes.
#[derive(Default, Clone, Debug)]
pub struct P(pub Vec<u8>);

impl P {
    pub fn new() -> Self {
        P(Vec::new())
    }
    pub fn u8(mut self, v: u8) -> Self {
        self.0.push(v);
        self
    }
    pub fn u32(mut self, v: u32) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn u64(mut self, v: u64) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn i64(mut self, v: i64) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    pub fn zeros(mut self, n: usize) -> Self {
        self.0.extend(std::iter::repeat_n(0, n));
        self
    }
    /// A signed integer in `width` bytes (truncated).
    pub fn int(mut self, v: i64, width: u8) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes()[..usize::from(width)]);
        self
    }
    pub fn ints(mut self, vs: &[i64], width: u8) -> Self {
        for &v in vs {
            self = self.int(v, width);
        }
        self
    }
    pub fn bytes(self) -> Vec<u8> {
        self.0
    }
}

/// An `RQ` block (§10.4).
#[derive(Clone, Debug)]
pub struct RqW {
    pub round: u8,
    pub bias: u8,
    pub m_kind: u8,
    pub s_kind: u8,
    pub m_bytes: u8,
    pub b_bytes: u8,
    pub mult: Vec<i64>,
    pub shift: Vec<u8>,
    pub bias_v: Vec<i64>,
}

impl RqW {
    /// No multiplier, no bias, one shift.
    pub fn plain(round: u8, shift: u8) -> Self {
        RqW {
            round,
            bias: 0,
            m_kind: 0,
            s_kind: 1,
            m_bytes: 0,
            b_bytes: 0,
            mult: vec![],
            shift: vec![shift],
            bias_v: vec![],
        }
    }
    pub fn write(&self, p: P) -> P {
        let mut p = p
            .u8(self.round)
            .u8(self.bias)
            .u8(self.m_kind)
            .u8(self.s_kind)
            .u8(self.m_bytes)
            .u8(self.b_bytes)
            .zeros(2)
            .ints(&self.mult, self.m_bytes.max(1));
        for &s in &self.shift {
            p = p.u8(s);
        }
        p.ints(&self.bias_v, self.b_bytes.max(1))
    }
}
