//! A whole call: the checks of docs/assumptions.md D3, in order, then the execution (D4–D6).

use super::layout::{Channels, Geometry};
use super::numeric::{bf16, dequantize, scale_admitted};
use num_bigint::BigInt;

/// The contract's tensor element types (the C++ enumerators).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DType {
    Int8,
    UInt8,
    Int16,
    Int32,
    Float16,
    BFloat16,
    Float32,
}

/// A tensor's layout, as the request writes it; validated by the checks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Layout {
    MlaTiled {
        axes: Vec<i64>,
        tile_shape: Vec<u64>,
        channels: Channels,
    },
    MlaCBlocked {
        tile: Vec<u64>,
    },
    Contiguous,
    Strided {
        strides: Vec<BigInt>,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spec {
    pub shape: Vec<u64>,
    pub dtype: DType,
    pub layout: Layout,
}

/// A buffer: its address and capacity (64-bit values of the request).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Buffer {
    pub address: u64,
    pub capacity: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    pub inputs: Vec<Spec>,
    pub outputs: Vec<Spec>,
    pub scale: u32,
    pub zero_point: i32,
    pub input_buffers: Vec<Buffer>,
    pub output_buffers: Vec<Buffer>,
}

/// The refusal codes (docs/protocol.md, DetessDequant), in the order the checks run.
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
    pub fn as_str(self) -> &'static str {
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

fn require(ok: bool, code: Code) -> Result<(), Code> {
    if ok { Ok(()) } else { Err(code) }
}

/// What the checks admit: the input geometry, each output element's byte offset rule, and the
/// byte counts the buffers must hold.
pub struct Plan {
    geometry: Geometry,
    shape: Vec<u64>,
    strides: Vec<BigInt>,
    bfloat16: bool,
    input_bytes: BigInt,
    output_span: BigInt,
}

/// `check_inference`: every check on the specs and parameters, in order (D3).
pub fn check_inference(call: &Call) -> Result<Plan, Code> {
    require(call.inputs.len() == 1 && call.outputs.len() == 1, Code::Ports)?;
    require(scale_admitted(call.scale), Code::Scale)?;
    let (input, output) = (&call.inputs[0], &call.outputs[0]);
    let rank = input.shape.len();
    for spec in [input, output] {
        require((1..=6).contains(&spec.shape.len()), Code::Rank)?;
    }
    require(input.shape == output.shape, Code::ShapeMismatch)?;
    require(input.dtype == DType::Int8, Code::InputDtype)?;
    let geometry = match &input.layout {
        Layout::MlaTiled {
            axes,
            tile_shape,
            channels,
        } => {
            let mapped = mapping(axes, rank)?;
            let tile: [u64; 4] = tile_shape.as_slice().try_into().map_err(|_| Code::TileShape)?;
            require(tile.iter().all(|&t| t >= 1), Code::TileShape)?;
            Geometry::tiled(&input.shape, mapped, tile, *channels)
        }
        Layout::MlaCBlocked { tile } => {
            // The tiled input's admission, after the logical-shape checks (D3): ranks 3–6.
            require((3..=6).contains(&rank), Code::Rank)?;
            let tile: [u64; 3] = tile.as_slice().try_into().map_err(|_| Code::TileShape)?;
            require(tile.iter().all(|&t| t >= 1), Code::TileShape)?;
            Geometry::cblocked(&input.shape, tile)
        }
        _ => return Err(Code::InputLayout),
    };
    let bfloat16 = match output.dtype {
        DType::Float32 => false,
        DType::BFloat16 => true,
        _ => return Err(Code::OutputDtype),
    };
    let width = if bfloat16 { 2u64 } else { 4 };
    let shape = &output.shape;
    let strides = match &output.layout {
        Layout::Contiguous => contiguous(shape, width),
        Layout::Strided { strides } => {
            require(strides.len() == rank, Code::Stride)?;
            for (s, &e) in strides.iter().zip(shape) {
                let aligned = *s >= BigInt::ZERO && (s % width) == BigInt::ZERO;
                require(aligned && (e == 1 || *s > BigInt::ZERO), Code::Stride)?;
            }
            strides.clone()
        }
        _ => return Err(Code::OutputLayout),
    };
    require(disjoint(shape, &strides, width), Code::Overlap)?;
    let empty = shape.contains(&0);
    let output_span = if empty {
        BigInt::ZERO
    } else {
        shape.iter().zip(&strides).map(|(&e, s)| (e - 1) * s).sum::<BigInt>() + width
    };
    let input_bytes = geometry.required();
    let fits = |n: &BigInt| *n < (BigInt::from(1) << 64);
    require(fits(&input_bytes) && fits(&output_span), Code::AddressOverflow)?;
    Ok(Plan {
        geometry,
        shape: shape.clone(),
        strides,
        bfloat16,
        input_bytes,
        output_span,
    })
}

/// MlaTiled's `axes` (D, H, W, C): each `−1` or a logical axis, C mapped, no axis twice.
fn mapping(axes: &[i64], rank: usize) -> Result<[Option<usize>; 4], Code> {
    let axes: [i64; 4] = axes.try_into().map_err(|_| Code::AxisMapping)?;
    let mut mapped = [None; 4];
    for (k, &a) in axes.iter().enumerate() {
        if a == -1 {
            continue;
        }
        let a = usize::try_from(a).ok().filter(|&a| a < rank).ok_or(Code::AxisMapping)?;
        require(!mapped.contains(&Some(a)), Code::AxisMapping)?;
        mapped[k] = Some(a);
    }
    require(mapped[3].is_some(), Code::AxisMapping)?;
    Ok(mapped)
}

/// Row-major strides with no gaps.
fn contiguous(shape: &[u64], width: u64) -> Vec<BigInt> {
    let mut strides = vec![BigInt::ZERO; shape.len()];
    let mut step = BigInt::from(width);
    for k in (0..shape.len()).rev() {
        strides[k] = step.clone();
        step *= shape[k];
    }
    strides
}

/// The sorted-span proof (D3): the axes of extent above 1 by increasing stride, each stride at
/// least the span of the axes before it. An empty tensor addresses nothing.
fn disjoint(shape: &[u64], strides: &[BigInt], width: u64) -> bool {
    if shape.contains(&0) {
        return true;
    }
    let mut axes: Vec<usize> = (0..shape.len()).filter(|&k| shape[k] > 1).collect();
    axes.sort_by(|&a, &b| strides[a].cmp(&strides[b]).then(a.cmp(&b)));
    let mut span = BigInt::from(width);
    for k in axes {
        if strides[k] < span {
            return false;
        }
        span += (shape[k] - 1) * &strides[k];
    }
    true
}

/// `execute`'s checks on the buffers, in order (D3), for an admitted plan.
pub fn check_buffers(call: &Call, plan: &Plan) -> Result<(), Code> {
    require(
        call.input_buffers.len() == 1 && call.output_buffers.len() == 1,
        Code::Ports,
    )?;
    let (i, o) = (call.input_buffers[0], call.output_buffers[0]);
    require(BigInt::from(i.capacity) >= plan.input_bytes, Code::Capacity)?;
    require(BigInt::from(o.capacity) >= plan.output_span, Code::Capacity)?;
    require(i.address != 0 && o.address != 0, Code::NullPointer)?;
    let out_align = if plan.bfloat16 { 2 } else { 4 };
    require(i.address % 16 == 0 && o.address % out_align == 0, Code::Alignment)?;
    let ends_fit = |b: Buffer| u128::from(b.address) + u128::from(b.capacity) <= 1u128 << 64;
    require(ends_fit(i) && ends_fit(o), Code::AddressOverflow)?;
    // The accessed ranges, not the capacities: adjacent views and spare capacity are allowed.
    let range = |b: Buffer, n: &BigInt| (BigInt::from(b.address), BigInt::from(b.address) + n);
    let ((i0, i1), (o0, o1)) = (range(i, &plan.input_bytes), range(o, &plan.output_span));
    let overlap = i0 < i1 && o0 < o1 && i0 < o1 && o0 < i1;
    require(!overlap, Code::Aliasing)
}

/// Runs an admitted call: every logical element read where the input layout puts it, dequantized,
/// and written where the output layout puts it. `input` holds the input buffer's bytes (at least
/// `input_bytes` of them); `output` is the output buffer, changed only at the elements' bytes.
pub fn execute(call: &Call, plan: &Plan, input: &[u8], output: &mut [u8]) {
    let offsets = plan.geometry.offsets();
    let mut index = vec![0u64; plan.shape.len()];
    for offset in offsets {
        let q = input[offset as usize] as i8;
        let bits = dequantize(q, call.scale, call.zero_point);
        let at: BigInt = index.iter().zip(&plan.strides).map(|(&i, s)| i * s).sum();
        let at = usize::try_from(&at).expect("inside the checked span");
        if plan.bfloat16 {
            output[at..at + 2].copy_from_slice(&bf16(bits).to_le_bytes());
        } else {
            output[at..at + 4].copy_from_slice(&bits.to_le_bytes());
        }
        for k in (0..index.len()).rev() {
            index[k] += 1;
            if index[k] < plan.shape[k] {
                break;
            }
            index[k] = 0;
        }
    }
}

impl Plan {
    pub fn input_bytes(&self) -> &BigInt {
        &self.input_bytes
    }
    pub fn output_span(&self) -> &BigInt {
        &self.output_span
    }
}
