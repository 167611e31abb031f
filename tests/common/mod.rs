//! Shared helpers for the integration tests: build a graph with
//! `wai_oracle::whg1::build::Builder`, then run it through the bytes (write,
//! load, decode), as a user's implementation would receive it.
#![allow(dead_code)]

use num_bigint::BigInt;
use wai_oracle::plan::Shape;
use wai_oracle::refusal::Code;
use wai_oracle::run::{Sequence, Stop};
use wai_oracle::tensor::Tensor;
use wai_oracle::whg1::{self, Graph, Loaded, Policy};

/// `check [lo, hi]`.
pub fn check(lo: i64, hi: i64) -> Policy {
    Policy::Check { lo, hi }
}

/// `clamp [lo, hi]`.
pub fn clamp(lo: i64, hi: i64) -> Policy {
    Policy::Clamp { lo, hi }
}

/// The widest `check` range: every i64 value.
pub fn any() -> Policy {
    Policy::Check {
        lo: i64::MIN,
        hi: i64::MAX,
    }
}

/// A tensor `[c, h, w]` from its elements in CHW order.
pub fn t(c: u64, h: u64, w: u64, data: &[i64]) -> Tensor {
    assert_eq!(data.len() as u64, c * h * w, "test tensor has the wrong element count");
    Tensor {
        shape: Shape::new(c, h, w),
        data: data.iter().map(|&v| BigInt::from(v)).collect(),
    }
}

/// A tensor from big integers.
pub fn tb(c: u64, h: u64, w: u64, data: Vec<BigInt>) -> Tensor {
    assert_eq!(data.len() as u64, c * h * w);
    Tensor {
        shape: Shape::new(c, h, w),
        data,
    }
}

/// The elements of a tensor as i128 (the tests' values fit).
pub fn vals(t: &Tensor) -> Vec<i128> {
    t.data
        .iter()
        .map(|v| i128::try_from(v).expect("test value fits i128"))
        .collect()
}

/// Writes the graph to bytes and loads them (§10.5 steps 1–7).
pub fn load(g: &Graph) -> Result<Loaded, Code> {
    let bytes = whg1::write(g);
    let loaded = whg1::load(&bytes).map_err(|r| r.code)?;
    assert_eq!(whg1::write(&loaded.graph), bytes, "write(read(b)) == b");
    Ok(loaded)
}

/// The load refusal's code; panics if the graph loads.
pub fn load_refusal(g: &Graph) -> Code {
    match load(g) {
        Ok(_) => panic!("the graph loaded"),
        Err(code) => code,
    }
}

/// One decode's outcome: the outputs, or the refusal code.
pub type Outcome = Result<Vec<Tensor>, Code>;

/// Loads the graph and runs one sequence of decodes `(data inputs, scalars)`.
pub fn run_sequence(g: &Graph, decodes: Vec<(Vec<Tensor>, Vec<i64>)>) -> Vec<Outcome> {
    let loaded = load(g).unwrap_or_else(|c| panic!("load refused: {c}"));
    let mut seq = Sequence::new(&loaded);
    decodes
        .into_iter()
        .map(|(inputs, scalars)| {
            let scalars: Vec<BigInt> = scalars.into_iter().map(BigInt::from).collect();
            match seq.decode(inputs, &scalars) {
                Ok(outs) => Ok(outs),
                Err(Stop::Refused(r)) => Err(r.code),
                Err(Stop::Error(e)) => panic!("decode error: {e}"),
            }
        })
        .collect()
}

/// Loads the graph and makes one decode.
pub fn decode(g: &Graph, inputs: Vec<Tensor>, scalars: Vec<i64>) -> Outcome {
    run_sequence(g, vec![(inputs, scalars)]).remove(0)
}

/// The single output of a successful one-output decode, as i128 values.
pub fn out1(g: &Graph, inputs: Vec<Tensor>, scalars: Vec<i64>) -> (Shape, Vec<i128>) {
    let outs = decode(g, inputs, scalars).unwrap_or_else(|c| panic!("decode refused: {c}"));
    assert_eq!(outs.len(), 1);
    (outs[0].shape, vals(&outs[0]))
}

/// The refusal code of one decode; panics if it completes.
pub fn refusal(g: &Graph, inputs: Vec<Tensor>, scalars: Vec<i64>) -> Code {
    match decode(g, inputs, scalars) {
        Ok(_) => panic!("the decode completed"),
        Err(code) => code,
    }
}

pub fn shape(c: u64, h: u64, w: u64) -> Shape {
    Shape::new(c, h, w)
}

// ---------------------------------------------------------------------------
// The bounds pass (§8) and the certificate. `load` above makes steps 1–7 only, so
// the operator tests exercise the interpreter on any graph that plans; these
// helpers add step 8's pass.

use wai_oracle::bounds::interval::Interval;
use wai_oracle::bounds::profile::Profile;
use wai_oracle::bounds::{self, Certified};

/// Steps 1–7, then the bounds pass (the refusals of step 8's first half).
pub fn certify(g: &Graph) -> Result<Certified, Code> {
    let loaded = load(g)?;
    Certified::new("g", whg1::write(g), loaded.graph).map_err(|r| r.code)
}

/// The certified graph; panics if the pass refuses it.
pub fn certified(g: &Graph) -> Certified {
    certify(g).unwrap_or_else(|c| panic!("refused: {c}"))
}

/// `[lo, hi]` from anything that converts to a big integer.
pub fn iv(lo: impl Into<BigInt>, hi: impl Into<BigInt>) -> Interval {
    Interval::new(lo, hi)
}

/// The interval node `index` records under `key`; panics if it records none.
pub fn intermediate(c: &Certified, index: usize, key: &str) -> Interval {
    c.pass.nodes[index]
        .intermediates
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, i)| i.clone())
        .unwrap_or_else(|| panic!("node {index} records no {key}"))
}

/// Node `index`'s producer result for output `k`.
pub fn result(c: &Certified, index: usize, k: usize) -> Interval {
    c.pass.nodes[index].results[k].clone()
}

/// The interval of tensor `t` after its policy.
pub fn tensor_interval(c: &Certified, t: u32) -> Interval {
    c.pass.tensors[t as usize].clone()
}

/// Whether node `index` is saturated (§8.1).
pub fn saturated(c: &Certified, index: usize) -> bool {
    c.pass.nodes[index].saturated
}

/// The profiles the graph's verdict meets.
pub fn met(c: &Certified) -> Vec<Profile> {
    bounds::profiles_met(std::slice::from_ref(c))
}

/// `2^k` as a big integer.
pub fn p2(k: u32) -> BigInt {
    BigInt::from(1) << k
}
