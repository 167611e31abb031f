//! The checks of docs/assumptions.md D3, in its order; the first that applies is the refusal.
//!
//! Planning ([`plan`]): `ports`, `scale`, `rank`, `shape_mismatch`, `input_dtype`, `input_layout`,
//! `axis_mapping`, `tile_shape`, `output_dtype`, `output_layout`, `stride`, `overlap`,
//! `address_overflow` (a span past 64 bits). Execution ([`admit`]): `ports` (buffers), `capacity`
//! (input, then output), `null_pointer`, `alignment`, `address_overflow` (address + capacity past
//! 2^64), `aliasing`.

use super::request::{Call, Channels, DType, Layout};
use crate::dequant::layout::{self, InGeom, Kind};
use crate::dequant::nat::Nat;
use crate::dequant::numeric;

/// A refusal code (docs/protocol.md "DetessDequant").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    Ports,
    Scale,
    Rank,
    ShapeMismatch,
    InputDtype,
    InputLayout,
    AxisMapping,
    TileShape,
    OutputDtype,
    OutputLayout,
    Stride,
    Overlap,
    AddressOverflow,
    Capacity,
    NullPointer,
    Alignment,
    Aliasing,
}

impl Code {
    pub fn name(self) -> &'static str {
        match self {
            Code::Ports => "ports",
            Code::Scale => "scale",
            Code::Rank => "rank",
            Code::ShapeMismatch => "shape_mismatch",
            Code::InputDtype => "input_dtype",
            Code::InputLayout => "input_layout",
            Code::AxisMapping => "axis_mapping",
            Code::TileShape => "tile_shape",
            Code::OutputDtype => "output_dtype",
            Code::OutputLayout => "output_layout",
            Code::Stride => "stride",
            Code::Overlap => "overlap",
            Code::AddressOverflow => "address_overflow",
            Code::Capacity => "capacity",
            Code::NullPointer => "null_pointer",
            Code::Alignment => "alignment",
            Code::Aliasing => "aliasing",
        }
    }
}

/// The output's scalar.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutType {
    F32,
    Bf16,
}

impl OutType {
    /// The scalar width in bytes.
    pub fn width(self) -> u64 {
        match self {
            OutType::F32 => 4,
            OutType::Bf16 => 2,
        }
    }
}

/// A call that passed the planning checks.
#[derive(Clone, Debug)]
pub struct Plan {
    pub shape: Vec<u64>,
    pub input: InGeom,
    /// The input bytes the layout needs (D4, D5).
    pub need: u64,
    pub out: OutType,
    /// The output's byte strides (D6); all zero for an empty `Contiguous` tensor, which has none to
    /// use.
    pub strides: Vec<u64>,
    /// The output's addressed span (D6).
    pub span: u64,
    pub scale: f32,
    pub zero_point: i32,
}

impl Plan {
    pub fn is_empty(&self) -> bool {
        self.shape.contains(&0)
    }
}

fn rank_ok(r: usize) -> bool {
    (1..=6).contains(&r)
}

/// The planning checks, in D3's order.
pub fn plan(call: &Call) -> Result<Plan, Code> {
    // ports: one input spec and one output spec.
    let ([input], [output]) = (&call.inputs[..], &call.outputs[..]) else {
        return Err(Code::Ports);
    };
    // scale: by its bits.
    if !numeric::scale_admitted(call.scale_bits) {
        return Err(Code::Scale);
    }
    // rank: 1–6 for both specs (an MlaCBlocked input's 3–6 is its layout's admission, below).
    let rank = input.shape.len();
    if !rank_ok(rank) || !rank_ok(output.shape.len()) {
        return Err(Code::Rank);
    }
    // shape_mismatch: equal logical shape and rank.
    if input.shape != output.shape {
        return Err(Code::ShapeMismatch);
    }
    let shape = &input.shape;
    if input.dtype != DType::Int8 {
        return Err(Code::InputDtype);
    }
    let geom = match &input.layout {
        Layout::MlaTiled {
            axes,
            tile_shape,
            channels,
        } => {
            // axis_mapping: four axes (D, H, W, C), C mapped, each index −1 or 0..rank, no logical
            // axis mapped twice.
            if axes.len() != 4 {
                return Err(Code::AxisMapping);
            }
            let mut mapped = [None; 4];
            for (k, &a) in axes.iter().enumerate() {
                if a == -1 {
                    continue;
                }
                match usize::try_from(a) {
                    Ok(a) if a < rank && !mapped.contains(&Some(a)) => mapped[k] = Some(a),
                    _ => return Err(Code::AxisMapping),
                }
            }
            if mapped[3].is_none() {
                return Err(Code::AxisMapping);
            }
            // tile_shape: four extents, none 0.
            let Ok(tile) = <[u64; 4]>::try_from(&tile_shape[..]) else {
                return Err(Code::TileShape);
            };
            if tile.contains(&0) {
                return Err(Code::TileShape);
            }
            InGeom {
                kind: Kind::Tiled {
                    pad16: *channels == Channels::Pad16,
                },
                axes: mapped,
                tile,
                outer: (0..rank).filter(|a| !mapped.contains(&Some(*a))).collect(),
            }
        }
        Layout::MlaCBlocked { tile } => {
            // rank: MlaCBlocked admits 3–6, the last three axes H, W, C; tile {tile_h, tile_w, tile_c}.
            if rank < 3 {
                return Err(Code::Rank);
            }
            let Ok([th, tw, tc]) = <[u64; 3]>::try_from(&tile[..]) else {
                return Err(Code::TileShape);
            };
            if [th, tw, tc].contains(&0) {
                return Err(Code::TileShape);
            }
            InGeom {
                kind: Kind::CBlocked,
                axes: [None, Some(rank - 3), Some(rank - 2), Some(rank - 1)],
                tile: [1, th, tw, tc],
                outer: (0..rank - 3).collect(),
            }
        }
        Layout::Contiguous | Layout::Strided { .. } => return Err(Code::InputLayout),
    };
    let out = match output.dtype {
        DType::Float32 => OutType::F32,
        DType::BFloat16 => OutType::Bf16,
        _ => return Err(Code::OutputDtype),
    };
    let width = out.width();
    let empty = shape.contains(&0);
    let mut output_overflow = false;
    let strides = match &output.layout {
        Layout::Contiguous => match layout::contiguous_strides(width, shape) {
            Some(s) => s,
            None if empty => vec![0; rank],
            // A nonempty tensor whose row-major strides pass 2^64 has a span past 2^64.
            None => return Err(Code::AddressOverflow),
        },
        Layout::Strided { strides } => {
            // stride: one per axis, nonnegative, scalar-aligned, nonzero on an axis of extent ≠ 1.
            if strides.len() != rank {
                return Err(Code::Stride);
            }
            for (st, &e) in strides.iter().zip(shape) {
                let zero = st.magnitude.is_zero();
                if (st.negative && !zero) || st.magnitude.rem_small(width) != 0 || (zero && e != 1) {
                    return Err(Code::Stride);
                }
            }
            // overlap: the sorted-span proof over the axes of extent above 1, exactly; what it
            // accumulates is the addressed span.
            let mut span = Nat::from_u64(width);
            if !empty {
                let mut order: Vec<usize> = (0..rank).filter(|&k| shape[k] > 1).collect();
                order.sort_by(|&a, &b| strides[a].magnitude.cmp(&strides[b].magnitude).then(a.cmp(&b)));
                for k in order {
                    let st = &strides[k].magnitude;
                    if *st < span {
                        return Err(Code::Overlap);
                    }
                    span = span.add(&st.mul_small(shape[k] - 1));
                }
            }
            // A span past 64 bits is address_overflow, checked below after the input's. When it
            // fits, every stride of an axis of extent above 1 fits; an axis of extent 1 (or 0)
            // never moves, so its stride, of any size, is kept as 0.
            if span.to_u64().is_none() {
                output_overflow = true;
            }
            (0..rank)
                .map(|k| match strides[k].magnitude.to_u64() {
                    Some(s) if shape[k] > 1 && !output_overflow => s,
                    _ => 0,
                })
                .collect()
        }
        Layout::MlaTiled { .. } | Layout::MlaCBlocked { .. } => return Err(Code::OutputLayout),
    };
    // address_overflow: a span that does not fit 64 bits (input, then output).
    let fits = |n: Option<u128>| n.and_then(|n| u64::try_from(n).ok());
    let Some(need) = fits(geom.size(shape)) else {
        return Err(Code::AddressOverflow);
    };
    let Some(span) = fits(layout::out_span(width, shape, &strides)).filter(|_| !output_overflow) else {
        return Err(Code::AddressOverflow);
    };
    Ok(Plan {
        shape: shape.clone(),
        input: geom,
        need,
        out,
        strides,
        span,
        scale: f32::from_bits(call.scale_bits),
        zero_point: call.zero_point,
    })
}

/// The execution checks on the buffers, in D3's order.
pub fn admit(plan: &Plan, call: &Call) -> Result<(), Code> {
    let ([i], [o]) = (&call.in_bufs[..], &call.out_bufs[..]) else {
        return Err(Code::Ports);
    };
    if i.capacity < plan.need || o.capacity < plan.span {
        return Err(Code::Capacity);
    }
    if i.address == 0 || o.address == 0 {
        return Err(Code::NullPointer);
    }
    if i.address % 16 != 0 || o.address % plan.out.width() != 0 {
        return Err(Code::Alignment);
    }
    let end = |address: u64, len: u64| u128::from(address) + u128::from(len);
    if end(i.address, i.capacity) > 1 << 64 || end(o.address, o.capacity) > 1 << 64 {
        return Err(Code::AddressOverflow);
    }
    // aliasing: the accessed ranges [address, address + need or span) overlap; empty ranges never do.
    let (i0, i1) = (u128::from(i.address), end(i.address, plan.need));
    let (o0, o1) = (u128::from(o.address), end(o.address, plan.span));
    if i0 < i1 && o0 < o1 && i0 < o1 && o0 < i1 {
        return Err(Code::Aliasing);
    }
    Ok(())
}
