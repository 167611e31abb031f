//! §13.0's canonical form: the one byte sequence a lowering writes for a set.
//!
//! - Header: version 1, operator set 1, `max_elems = 2^26`, the counts of what is written.
//! - Input `i` is tensor `i`; each operator's outputs take the next unused indices, in order.
//! - Tensor records: the planned channel count, exponent −128, policy `derived` with `lo = hi = 0`
//!   unless the lowering gives a `check` range.
//! - Every lowered input is of kind data; every reserved byte is 0.
//!
//! The bytes are written by the checker's own `WHG1` writer ([`crate::whg1::write`]); this
//! module numbers the tensors and checks that every count and parameter length fits its field
//! (docs/assumptions.md L1), which that writer does not.

use super::source::{R, refuse};
use crate::whg1::CAP;
use crate::whg1::write::{GraphW, InputW, OpW, TensorW};

/// A graph being lowered.
#[derive(Default)]
pub struct Form {
    scalars: Vec<(i64, i64)>,
    /// `(tensor, max_h, max_w)` of each data input.
    inputs: Vec<(usize, u32, u32)>,
    /// `(channels, check range)` of each tensor, in index order.
    tensors: Vec<(u64, Option<(i64, i64)>)>,
    ops: Vec<OpRec>,
}

/// An operator record: opcode, input and output tensors, parameter bytes.
struct OpRec {
    opcode: u8,
    ins: Vec<usize>,
    outs: Vec<usize>,
    params: Vec<u8>,
}

impl Form {
    pub fn new() -> Self {
        Form::default()
    }

    /// Adds a scalar with its declared range.
    pub fn scalar(&mut self, lo: i64, hi: i64) {
        self.scalars.push((lo, hi));
    }

    /// Adds a data input of `channels` with the policy `check [lo, hi]`; inputs come before every
    /// operator, so input `i` is tensor `i`.
    pub fn input(&mut self, channels: u64, lo: i64, hi: i64, max_h: u32, max_w: u32) -> usize {
        debug_assert!(self.ops.is_empty(), "inputs first");
        let t = self.tensors.len();
        self.tensors.push((channels, Some((lo, hi))));
        self.inputs.push((t, max_h, max_w));
        t
    }

    /// Adds an operator reading `ins` and writing one new tensor per entry of `out_channels`;
    /// returns the new tensors' indices.
    pub fn op(&mut self, opcode: u8, ins: &[usize], out_channels: &[u64], params: Vec<u8>) -> Vec<usize> {
        let outs: Vec<usize> = out_channels
            .iter()
            .map(|&c| {
                self.tensors.push((c, None));
                self.tensors.len() - 1
            })
            .collect();
        self.ops.push(OpRec {
            opcode,
            ins: ins.to_vec(),
            outs: outs.clone(),
            params,
        });
        outs
    }

    /// An operator with one output; returns it.
    pub fn op1(&mut self, opcode: u8, ins: &[usize], channels: u64, params: Vec<u8>) -> usize {
        self.op(opcode, ins, &[channels], params)[0]
    }

    /// Gives tensor `t` the policy `check [lo, hi]`.
    pub fn check(&mut self, t: usize, lo: i64, hi: i64) {
        self.tensors[t].1 = Some((lo, hi));
    }

    pub fn channels(&self, t: usize) -> u64 {
        self.tensors[t].0
    }

    /// The canonical bytes with `outputs` as the output table, or why a count, a channel count or
    /// a parameter length does not fit its `WHG1` field.
    pub fn bytes(&self, outputs: &[usize]) -> R<Vec<u8>> {
        let fits = |n: usize, max: u64| (n as u64) <= max;
        if !fits(self.tensors.len(), u32::MAX.into()) || !fits(self.ops.len(), u32::MAX.into()) {
            return refuse("a count past its WHG1 field");
        }
        if !fits(self.inputs.len(), u16::MAX.into())
            || !fits(outputs.len(), u16::MAX.into())
            || !fits(self.scalars.len(), u16::MAX.into())
        {
            return refuse("an input, output or scalar count past its u16 field");
        }
        let mut tensors = Vec::with_capacity(self.tensors.len());
        for &(c, range) in &self.tensors {
            let Ok(channels) = u32::try_from(c) else {
                return refuse(format!("a tensor of {c} channels: past its u32 field"));
            };
            tensors.push(match range {
                Some((lo, hi)) => TensorW::check(channels, lo, hi),
                None => TensorW::derived(channels),
            });
        }
        let mut ops = Vec::with_capacity(self.ops.len());
        for OpRec {
            opcode,
            ins,
            outs,
            params,
        } in &self.ops
        {
            if ins.len() > usize::from(u8::MAX) || outs.len() > usize::from(u8::MAX) {
                return refuse("an operator with more than 255 inputs");
            }
            if !fits(params.len(), u32::MAX.into()) {
                return refuse("a parameter length past its u32 field");
            }
            ops.push(OpW {
                opcode: *opcode,
                ins: ins.iter().map(|&t| t as u32).collect(),
                outs: outs.iter().map(|&t| t as u32).collect(),
                params: params.clone(),
            });
        }
        let g = GraphW {
            max_elems: CAP as u32,
            scalars: self.scalars.clone(),
            inputs: self
                .inputs
                .iter()
                .map(|&(t, h, w)| InputW::data(t as u32, h, w))
                .collect(),
            outputs: outputs.iter().map(|&t| t as u32).collect(),
            tensors,
            ops,
        };
        Ok(g.bytes())
    }
}

/// The smallest weight width (1, 2, 4 or 8 bytes) that holds every value (§13.0).
pub fn weight_width(values: &[i64]) -> u8 {
    let (lo, hi) = min_max(values);
    [1u8, 2, 4]
        .into_iter()
        .find(|&w| {
            let bits = u32::from(w) * 8;
            lo >= -(1i64 << (bits - 1)) && hi < (1i64 << (bits - 1))
        })
        .unwrap_or(8)
}

/// The smallest multiplier, bias or `γ` width (4 or 8 bytes) that holds every value (§13.0).
pub fn wide_width(values: &[i64]) -> u8 {
    let (lo, hi) = min_max(values);
    if lo >= i64::from(i32::MIN) && hi <= i64::from(i32::MAX) {
        4
    } else {
        8
    }
}

fn min_max(values: &[i64]) -> (i64, i64) {
    values.iter().fold((0, 0), |(lo, hi), &v| (lo.min(v), hi.max(v)))
}

/// Opcodes (§5's table) of the operators the lowerings write.
pub mod opcode {
    pub const CONV: u8 = 0x01;
    pub const RESCALE: u8 = 0x02;
    pub const CONCAT: u8 = 0x06;
    pub const PIXEL_SHUFFLE: u8 = 0x09;
    pub const CLAMP: u8 = 0x0B;
    pub const RELU: u8 = 0x0C;
    pub const LEAKY: u8 = 0x0D;
    pub const CONV_TRANSPOSE: u8 = 0x11;
    pub const IGDN: u8 = 0x12;
    pub const ABS: u8 = 0x13;
    pub const CROP: u8 = 0x14;
    pub const FILL: u8 = 0x17;
}

/// `clamp(lo, hi)`'s parameters.
pub fn clamp_params(lo: i64, hi: i64) -> Vec<u8> {
    crate::whg1::write::P::new().i64(lo).i64(hi).bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn smallest_widths() {
        // §13.0: 1, 2, 4 or 8 bytes for weights; 4 or 8 for biases. An empty field holds in the
        // smallest.
        assert_eq!(weight_width(&[]), 1);
        assert_eq!(weight_width(&[-128, 127]), 1);
        assert_eq!(weight_width(&[128]), 2);
        assert_eq!(weight_width(&[-32769]), 4);
        assert_eq!(weight_width(&[1 << 31]), 8);
        assert_eq!(wide_width(&[0]), 4);
        assert_eq!(wide_width(&[i64::from(i32::MIN)]), 4);
        assert_eq!(wide_width(&[i64::from(i32::MAX) + 1]), 8);
    }

    #[test]
    fn tensors_are_numbered_inputs_first_then_outputs_in_order() {
        let mut f = Form::new();
        let x = f.input(2, -1, 1, 0, 0);
        let y = f.op1(opcode::RELU, &[x], 2, vec![]);
        let z = f.op1(opcode::CLAMP, &[y], 2, clamp_params(0, 1));
        assert_eq!((x, y, z), (0, 1, 2));
        let b = f.bytes(&[z]).unwrap();
        let g = crate::whg1::read(&b).expect("a valid graph");
        assert_eq!(g.tensors.len(), 3);
        assert_eq!(g.max_elems, 1 << 26);
        // A channel count past u32 does not fit its field.
        let mut f = Form::new();
        f.input(1 << 32, 0, 0, 0, 0);
        assert!(f.bytes(&[0]).is_err());
    }
}
