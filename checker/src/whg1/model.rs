//! The typed model of a `WHG1` graph (§10.1–§10.4), and §5's table of opcodes.
//!
//! A convolution's weights carry their extremes, found once as they are read; `RQ` fields keep one
//! value or one per channel as the bytes give them.

use crate::num::Round;

/// The `2^26` cap of §3.
pub const CAP: u64 = 1 << 26;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    Derived,
    Clamp(i64, i64),
    Check(i64, i64),
}

impl Policy {
    pub fn name(self) -> &'static str {
        match self {
            Policy::Derived => "derived",
            Policy::Clamp(..) => "clamp",
            Policy::Check(..) => "check",
        }
    }
    /// The declared range, for `clamp` and `check`.
    pub fn range(self) -> Option<(i64, i64)> {
        match self {
            Policy::Derived => None,
            Policy::Clamp(lo, hi) | Policy::Check(lo, hi) => Some((lo, hi)),
        }
    }
}

#[derive(Clone, Debug)]
pub struct TensorRec {
    pub channels: u32,
    pub exponent: Option<i8>,
    pub policy: Policy,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Data,
    State,
}

#[derive(Clone, Debug)]
pub struct InputRec {
    pub tensor: usize,
    pub max_h: u32,
    pub max_w: u32,
    pub kind: Kind,
    pub src: u32,
    pub init: i64,
}

impl InputRec {
    pub fn declares_sizes(&self) -> bool {
        self.max_h != 0
    }
}

#[derive(Clone, Copy, Debug)]
pub struct ScalarRec {
    pub lo: i64,
    pub hi: i64,
}

/// A bias's placement in an `RQ` block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    None,
    Pre,
    Post,
}

/// The requantisation block `RQ` (§5.1, §10.4).
#[derive(Clone, Debug)]
pub struct Rq {
    pub round: Round,
    pub placement: Placement,
    /// Empty when absent, one value, or one per channel.
    pub mult: Vec<i64>,
    /// One value or one per channel.
    pub shift: Vec<u8>,
    /// Empty when there is no bias, else one per channel.
    pub bias: Vec<i64>,
}

impl Rq {
    pub fn has_mult(&self) -> bool {
        !self.mult.is_empty()
    }
    pub fn mult(&self, o: usize) -> Option<i64> {
        match self.mult.len() {
            0 => None,
            1 => Some(self.mult[0]),
            _ => Some(self.mult[o]),
        }
    }
    pub fn shift(&self, o: usize) -> u32 {
        u32::from(if self.shift.len() == 1 {
            self.shift[0]
        } else {
            self.shift[o]
        })
    }
    pub fn pre(&self, o: usize) -> i64 {
        if self.placement == Placement::Pre {
            self.bias[o]
        } else {
            0
        }
    }
    pub fn post(&self, o: usize) -> i64 {
        if self.placement == Placement::Post {
            self.bias[o]
        } else {
            0
        }
    }
}

/// A `crop` or `fill` operand: a constant or a scalar index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    Const(i64),
    Scalar(usize),
}

#[derive(Clone, Debug)]
pub struct Conv {
    pub cout: u32,
    pub kh: u32,
    pub kw: u32,
    pub sh: u32,
    pub sw: u32,
    pub ph: u32,
    pub pw: u32,
    pub groups: u32,
    pub rq: Rq,
    /// `Wt[cout][cin/groups][kh][kw]`.
    pub w: Weights,
}

/// A convolution's weights with their extremes, found once as they are read (the bounds pass and
/// the profile's parameter conditions need only the extremes).
#[derive(Clone, Debug)]
pub struct Weights {
    values: Vec<i64>,
    lo: i64,
    hi: i64,
}

impl Weights {
    pub fn new(values: Vec<i64>) -> Weights {
        let (lo, hi) = values
            .iter()
            .fold((i64::MAX, i64::MIN), |(lo, hi), &w| (lo.min(w), hi.max(w)));
        let (lo, hi) = if values.is_empty() { (0, 0) } else { (lo, hi) };
        Weights { values, lo, hi }
    }
    /// The smallest and the largest weight (`(0, 0)` when there is none).
    pub fn range(&self) -> (i64, i64) {
        (self.lo, self.hi)
    }
}

impl std::ops::Deref for Weights {
    type Target = [i64];
    fn deref(&self) -> &[i64] {
        &self.values
    }
}

#[derive(Clone, Debug)]
pub struct ConvT {
    pub cout: u32,
    pub kh: u32,
    pub kw: u32,
    pub sh: u32,
    pub sw: u32,
    pub ph: u32,
    pub pw: u32,
    pub oph: u32,
    pub opw: u32,
    pub rq: Rq,
    /// `Wt[cin][cout][kh][kw]`.
    pub w: Weights,
}

#[derive(Clone, Debug)]
pub enum OpKind {
    Conv(Conv),
    Rescale(Rq),
    Chscale {
        scalar: usize,
        n_rows: u32,
        round: Round,
        shift: u8,
        m: Vec<i64>,
    },
    Lut16 {
        e_in: Option<i8>,
        e_out: Option<i8>,
        table: Vec<i16>,
    },
    Add,
    Concat,
    ChunkAdd,
    Split {
        start: u32,
        count: u32,
    },
    PixelShuffle(u32),
    PixelUnshuffle(u32),
    Clamp(i64, i64),
    Relu,
    Leaky {
        a: i64,
        f: u32,
    },
    PadRep(u32),
    CropTo,
    Mul(Rq),
    ConvT(ConvT),
    Igdn {
        gf: u32,
        frac: u32,
        gamma: Vec<i64>,
        beta: Vec<i64>,
    },
    Abs,
    Crop([Operand; 4]),
    SubposSplit([u8; 4]),
    SubposMerge([u8; 4]),
    Fill(Operand),
    LayerNorm {
        eps: u64,
        gamma: Vec<i64>,
        beta: Vec<i64>,
    },
    L2Norm {
        eps: u64,
    },
    Softmax,
    Sigmoid,
    Elu(i64),
    Gram {
        groups: u32,
        rq: Rq,
    },
    Apply {
        groups: u32,
        rq: Rq,
    },
}

/// §5's table: opcode, name, and the fixed arity (`None` for `concat`'s `n ≥ 2` inputs).
pub const OPS: [(u8, &str, Option<u8>, u8); 30] = [
    (0x01, "conv", Some(1), 1),
    (0x02, "rescale", Some(1), 1),
    (0x03, "chscale", Some(1), 1),
    (0x04, "lut16", Some(1), 1),
    (0x05, "add", Some(2), 1),
    (0x06, "concat", None, 1),
    (0x07, "chunk_add", Some(1), 1),
    (0x08, "split", Some(1), 1),
    (0x09, "pixel_shuffle", Some(1), 1),
    (0x0A, "pixel_unshuffle", Some(1), 1),
    (0x0B, "clamp", Some(1), 1),
    (0x0C, "relu", Some(1), 1),
    (0x0D, "leaky", Some(1), 1),
    (0x0E, "pad_rep", Some(1), 1),
    (0x0F, "crop_to", Some(2), 1),
    (0x10, "mul", Some(2), 1),
    (0x11, "conv_transpose", Some(1), 1),
    (0x12, "igdn", Some(1), 1),
    (0x13, "abs", Some(1), 1),
    (0x14, "crop", Some(1), 1),
    (0x15, "subpos_split", Some(1), 4),
    (0x16, "subpos_merge", Some(4), 1),
    (0x17, "fill", Some(1), 1),
    (0x18, "layernorm_c", Some(1), 1),
    (0x19, "l2norm", Some(1), 1),
    (0x1A, "softmax", Some(1), 1),
    (0x1B, "sigmoid", Some(1), 1),
    (0x1C, "elu", Some(1), 1),
    (0x1D, "gram", Some(2), 1),
    (0x1E, "apply", Some(2), 1),
];

/// The operator's name (§5) for an opcode of the table.
pub fn op_name(opcode: u8) -> &'static str {
    OPS.iter().find(|o| o.0 == opcode).map(|o| o.1).unwrap_or("?")
}

#[derive(Clone, Debug)]
pub struct Op {
    pub opcode: u8,
    pub ins: Vec<usize>,
    pub outs: Vec<usize>,
    pub kind: OpKind,
}

impl Op {
    pub fn name(&self) -> &'static str {
        op_name(self.opcode)
    }
}

#[derive(Clone, Debug)]
pub struct Graph {
    pub max_elems: u64,
    pub scalars: Vec<ScalarRec>,
    pub inputs: Vec<InputRec>,
    pub outputs: Vec<usize>,
    pub tensors: Vec<TensorRec>,
    pub ops: Vec<Op>,
}

impl Graph {
    pub fn declares_sizes(&self) -> bool {
        self.inputs.first().is_some_and(InputRec::declares_sizes)
    }
    pub fn channels(&self, t: usize) -> u64 {
        u64::from(self.tensors[t].channels)
    }
}
