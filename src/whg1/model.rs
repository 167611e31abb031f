//! The typed model of a `WHG1` graph (§10.1–§10.4).
//!
//! The model keeps every choice the bytes make (field widths, one value or one
//! per channel), so that `write(read(b)) == b` for every graph that loads.

use crate::num::Round;

/// `max_elems`'s largest value, and the cap on every size (§3).
pub const CAP: u64 = 1 << 26;

/// A whole graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Graph {
    /// The cap on every tensor of this graph, `1..=2^26` (§10.1).
    pub max_elems: u32,
    pub scalars: Vec<Scalar>,
    pub inputs: Vec<Input>,
    /// The tensor of each graph output.
    pub outputs: Vec<u32>,
    pub tensors: Vec<TensorRecord>,
    /// The operators, in evaluation (graph) order.
    pub nodes: Vec<Node>,
}

/// A scalar record: the driver supplies a value in `[lo, hi]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scalar {
    pub lo: i64,
    pub hi: i64,
}

/// An input record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Input {
    pub tensor: u32,
    /// Both 0 (sizes set per decode) or both at least 1.
    pub max_h: u32,
    pub max_w: u32,
    pub kind: InputKind,
}

impl Input {
    pub fn declares_sizes(&self) -> bool {
        self.max_h != 0
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InputKind {
    Data,
    /// Fed by output `src` of the previous completed decode; `init` until then (§10.3).
    State {
        src: u32,
        init: i64,
    },
}

/// A tensor record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorRecord {
    pub channels: u32,
    /// `None` is encoded −128.
    pub exponent: Option<i8>,
    pub policy: Policy,
}

/// §3 Range and policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    Derived,
    Clamp { lo: i64, hi: i64 },
    Check { lo: i64, hi: i64 },
}

impl Policy {
    pub fn name(self) -> &'static str {
        match self {
            Policy::Derived => "derived",
            Policy::Clamp { .. } => "clamp",
            Policy::Check { .. } => "check",
        }
    }

    /// The declared range, for `clamp` and `check`.
    pub fn range(self) -> Option<(i64, i64)> {
        match self {
            Policy::Derived => None,
            Policy::Clamp { lo, hi } | Policy::Check { lo, hi } => Some((lo, hi)),
        }
    }
}

/// One operator record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Node {
    pub inputs: Vec<u32>,
    pub outputs: Vec<u32>,
    pub op: Op,
}

/// A field's byte width where the format lets the writer choose (§10.4).
pub type Width = u8;

/// One value for every channel, or one per channel (`m_kind`/`s_kind` 1 or 2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PerChannel<T> {
    One(T),
    Each(Vec<T>),
}

impl<T: Copy> PerChannel<T> {
    /// The value for channel `o`. Per-channel lengths are checked at load.
    pub fn at(&self, o: usize) -> T {
        match self {
            PerChannel::One(v) => *v,
            PerChannel::Each(vs) => vs[o],
        }
    }

    pub fn values(&self) -> &[T] {
        match self {
            PerChannel::One(v) => std::slice::from_ref(v),
            PerChannel::Each(vs) => vs,
        }
    }
}

/// `pre` or `post` (§5.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Placement {
    Pre,
    Post,
}

/// The requantisation block `RQ` (§5.1, §10.4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rq {
    pub round: Round,
    /// Absent means 1.
    pub mult: Option<Mult>,
    pub shift: PerChannel<u8>,
    /// Absent means 0.
    pub bias: Option<Bias>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mult {
    /// `m_bytes`: 4 or 8.
    pub bytes: Width,
    pub values: PerChannel<i64>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bias {
    pub placement: Placement,
    /// `b_bytes`: 4 or 8.
    pub bytes: Width,
    /// One per channel.
    pub values: Vec<i64>,
}

impl Rq {
    pub fn mult_at(&self, o: usize) -> i64 {
        self.mult.as_ref().map_or(1, |m| m.values.at(o))
    }

    pub fn shift_at(&self, o: usize) -> u32 {
        u32::from(self.shift.at(o))
    }

    /// The bias of channel `o` if it is placed `placement`, else 0.
    pub fn bias_at(&self, placement: Placement, o: usize) -> i64 {
        match &self.bias {
            Some(b) if b.placement == placement => b.values[o],
            _ => 0,
        }
    }
}

/// `conv` (§5.2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conv {
    pub cout: u32,
    pub kh: u32,
    pub kw: u32,
    pub sh: u32,
    pub sw: u32,
    pub ph: u32,
    pub pw: u32,
    pub groups: u32,
    /// `w_bytes`: 1, 2, 4 or 8.
    pub w_bytes: Width,
    pub rq: Rq,
    /// `Wt[cout][cin/groups][kh][kw]`, row-major.
    pub weights: Vec<i64>,
}

/// `conv_transpose` (§5.3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvTranspose {
    pub cout: u32,
    pub kh: u32,
    pub kw: u32,
    pub sh: u32,
    pub sw: u32,
    pub ph: u32,
    pub pw: u32,
    pub oph: u32,
    pub opw: u32,
    pub w_bytes: Width,
    pub rq: Rq,
    /// `Wt[cin][cout][kh][kw]`, row-major.
    pub weights: Vec<i64>,
}

/// `chscale` (§5.4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Chscale {
    /// The scalar index `k`.
    pub scalar: u32,
    pub n_rows: u32,
    pub round: Round,
    pub m_bytes: Width,
    pub shift: u8,
    /// `M[n_rows][C]`, row-major.
    pub m: Vec<i64>,
}

/// `lut16` (§5.6).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lut16 {
    pub e_in: Option<i8>,
    pub e_out: Option<i8>,
    /// 65,536 entries; `T[0] = 0`.
    pub table: Vec<i16>,
}

/// `igdn` (§5.7).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Igdn {
    pub gf: u32,
    pub frac: u32,
    pub g_bytes: Width,
    /// `γ[C][C]`, row `i` the output channel.
    pub gamma: Vec<i64>,
    pub beta: Vec<i64>,
}

/// `layernorm_c` (§5.7).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LayernormC {
    pub eps: u64,
    pub g_bytes: Width,
    pub gamma: Vec<i64>,
    pub beta: Vec<i64>,
}

/// `gram` and `apply` (§5.9): `groups` and an `RQ` with no multiplier, no bias
/// and one shift.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Contraction {
    pub groups: u32,
    pub rq: Rq,
}

/// A `crop` operand (§10.4): a `u32` constant or a scalar index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operand {
    Const(u32),
    Scalar(u32),
}

/// `fill`'s value: an `i64` constant or a scalar index.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FillValue {
    Const(i64),
    Scalar(u32),
}

/// `crop`'s four operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Crop {
    pub y0: Operand,
    pub x0: Operand,
    pub h: Operand,
    pub w: Operand,
}

/// Every graph operator of §5, with its parameters (§10.4).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    Conv(Conv),
    Rescale(Rq),
    Chscale(Chscale),
    Lut16(Lut16),
    Add,
    Concat,
    ChunkAdd,
    Split { start: u32, count: u32 },
    PixelShuffle { r: u32 },
    PixelUnshuffle { r: u32 },
    Clamp { lo: i64, hi: i64 },
    Relu,
    Leaky { a: i64, f: u32 },
    PadRep { m: u32 },
    CropTo,
    Mul(Rq),
    ConvTranspose(ConvTranspose),
    Igdn(Igdn),
    Abs,
    Crop(Crop),
    SubposSplit { order: [u8; 4] },
    SubposMerge { order: [u8; 4] },
    Fill(FillValue),
    LayernormC(LayernormC),
    L2norm { eps: u64 },
    Softmax,
    Sigmoid,
    Elu { alpha: i64 },
    Gram(Contraction),
    Apply(Contraction),
}

/// The operators by code, with their names (§5's table).
pub const OPERATORS: [(u8, &str); 30] = [
    (0x01, "conv"),
    (0x02, "rescale"),
    (0x03, "chscale"),
    (0x04, "lut16"),
    (0x05, "add"),
    (0x06, "concat"),
    (0x07, "chunk_add"),
    (0x08, "split"),
    (0x09, "pixel_shuffle"),
    (0x0A, "pixel_unshuffle"),
    (0x0B, "clamp"),
    (0x0C, "relu"),
    (0x0D, "leaky"),
    (0x0E, "pad_rep"),
    (0x0F, "crop_to"),
    (0x10, "mul"),
    (0x11, "conv_transpose"),
    (0x12, "igdn"),
    (0x13, "abs"),
    (0x14, "crop"),
    (0x15, "subpos_split"),
    (0x16, "subpos_merge"),
    (0x17, "fill"),
    (0x18, "layernorm_c"),
    (0x19, "l2norm"),
    (0x1A, "softmax"),
    (0x1B, "sigmoid"),
    (0x1C, "elu"),
    (0x1D, "gram"),
    (0x1E, "apply"),
];

/// The name of the operator with code `code`.
pub fn name_of(code: u8) -> Option<&'static str> {
    OPERATORS.iter().find(|(c, _)| *c == code).map(|(_, n)| *n)
}

/// The code of the operator named `name`.
pub fn code_of(name: &str) -> Option<u8> {
    OPERATORS.iter().find(|(_, n)| *n == name).map(|(c, _)| *c)
}

/// How many inputs and outputs an operator takes (§5's table, §10.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arity {
    Exactly(u8),
    AtLeast(u8),
}

impl Arity {
    pub fn admits(self, n: u8) -> bool {
        match self {
            Arity::Exactly(k) => n == k,
            Arity::AtLeast(k) => n >= k,
        }
    }
}

/// `(n_in, n_out)` of operator `code`.
pub fn arity(code: u8) -> (Arity, Arity) {
    use Arity::*;
    match code {
        0x05 | 0x0F | 0x10 | 0x1D | 0x1E => (Exactly(2), Exactly(1)),
        0x06 => (AtLeast(2), Exactly(1)),
        0x15 => (Exactly(1), Exactly(4)),
        0x16 => (Exactly(4), Exactly(1)),
        _ => (Exactly(1), Exactly(1)),
    }
}

impl Op {
    pub fn code(&self) -> u8 {
        match self {
            Op::Conv(_) => 0x01,
            Op::Rescale(_) => 0x02,
            Op::Chscale(_) => 0x03,
            Op::Lut16(_) => 0x04,
            Op::Add => 0x05,
            Op::Concat => 0x06,
            Op::ChunkAdd => 0x07,
            Op::Split { .. } => 0x08,
            Op::PixelShuffle { .. } => 0x09,
            Op::PixelUnshuffle { .. } => 0x0A,
            Op::Clamp { .. } => 0x0B,
            Op::Relu => 0x0C,
            Op::Leaky { .. } => 0x0D,
            Op::PadRep { .. } => 0x0E,
            Op::CropTo => 0x0F,
            Op::Mul(_) => 0x10,
            Op::ConvTranspose(_) => 0x11,
            Op::Igdn(_) => 0x12,
            Op::Abs => 0x13,
            Op::Crop(_) => 0x14,
            Op::SubposSplit { .. } => 0x15,
            Op::SubposMerge { .. } => 0x16,
            Op::Fill(_) => 0x17,
            Op::LayernormC(_) => 0x18,
            Op::L2norm { .. } => 0x19,
            Op::Softmax => 0x1A,
            Op::Sigmoid => 0x1B,
            Op::Elu { .. } => 0x1C,
            Op::Gram(_) => 0x1D,
            Op::Apply(_) => 0x1E,
        }
    }

    pub fn name(&self) -> &'static str {
        name_of(self.code()).unwrap_or("?")
    }
}

/// The smallest width among `allowed` (ascending) that holds every value, as
/// §13.0 fixes where a width is free.
pub fn smallest_width(values: &[i64], allowed: &[Width]) -> Width {
    let fits = |bytes: Width, v: i64| {
        let bits = u32::from(bytes) * 8;
        bits >= 64 || (-(1i64 << (bits - 1))..(1i64 << (bits - 1))).contains(&v)
    };
    allowed
        .iter()
        .copied()
        .find(|&b| values.iter().all(|&v| fits(b, v)))
        .unwrap_or(8)
}
