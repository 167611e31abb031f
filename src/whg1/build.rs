//! Building a graph model by hand (tests, the corpus): tensors are numbered as
//! §13.0 numbers them when inputs are added before operators, and every free
//! width is the smallest that holds the values (§13.0).

use super::model::*;
use crate::num::Round;

/// A graph under construction.
pub struct Builder {
    graph: Graph,
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

impl Builder {
    /// An empty graph with `max_elems = 2^26`.
    pub fn new() -> Builder {
        Builder {
            graph: Graph {
                max_elems: CAP as u32,
                scalars: vec![],
                inputs: vec![],
                outputs: vec![],
                tensors: vec![],
                nodes: vec![],
            },
        }
    }

    pub fn max_elems(&mut self, max_elems: u32) -> &mut Builder {
        self.graph.max_elems = max_elems;
        self
    }

    /// A scalar record; returns its index.
    pub fn scalar(&mut self, lo: i64, hi: i64) -> u32 {
        self.graph.scalars.push(Scalar { lo, hi });
        (self.graph.scalars.len() - 1) as u32
    }

    fn tensor(&mut self, channels: u32, policy: Policy) -> u32 {
        self.graph.tensors.push(TensorRecord {
            channels,
            exponent: None,
            policy,
        });
        (self.graph.tensors.len() - 1) as u32
    }

    /// A data input with no declared sizes; returns its tensor.
    pub fn input(&mut self, channels: u32, policy: Policy) -> u32 {
        self.input_sized(channels, policy, 0, 0)
    }

    /// A data input declaring `max_h` and `max_w`; returns its tensor.
    pub fn input_sized(&mut self, channels: u32, policy: Policy, max_h: u32, max_w: u32) -> u32 {
        let tensor = self.tensor(channels, policy);
        self.graph.inputs.push(Input {
            tensor,
            max_h,
            max_w,
            kind: InputKind::Data,
        });
        tensor
    }

    /// A state input fed by output `src`; returns its tensor.
    pub fn state(&mut self, channels: u32, policy: Policy, src: u32, init: i64, max_h: u32, max_w: u32) -> u32 {
        let tensor = self.tensor(channels, policy);
        self.graph.inputs.push(Input {
            tensor,
            max_h,
            max_w,
            kind: InputKind::State { src, init },
        });
        tensor
    }

    /// An operator with one output of `channels` channels, policy `derived`;
    /// returns the output tensor.
    pub fn op(&mut self, op: Op, inputs: &[u32], channels: u32) -> u32 {
        self.op_n(op, inputs, &[channels])[0]
    }

    /// An operator with one output per entry of `channels`.
    pub fn op_n(&mut self, op: Op, inputs: &[u32], channels: &[u32]) -> Vec<u32> {
        let outputs: Vec<u32> = channels.iter().map(|&c| self.tensor(c, Policy::Derived)).collect();
        self.graph.nodes.push(Node {
            inputs: inputs.to_vec(),
            outputs: outputs.clone(),
            op,
        });
        outputs
    }

    pub fn policy(&mut self, tensor: u32, policy: Policy) -> &mut Builder {
        self.graph.tensors[tensor as usize].policy = policy;
        self
    }

    pub fn exponent(&mut self, tensor: u32, exponent: Option<i8>) -> &mut Builder {
        self.graph.tensors[tensor as usize].exponent = exponent;
        self
    }

    /// Makes `tensor` the next graph output; returns its output index.
    pub fn output(&mut self, tensor: u32) -> u32 {
        self.graph.outputs.push(tensor);
        (self.graph.outputs.len() - 1) as u32
    }

    pub fn build(&self) -> Graph {
        self.graph.clone()
    }
}

impl Rq {
    /// No multiplier, no bias; one shift, or one per channel.
    pub fn new(round: Round, shift: PerChannel<u8>) -> Rq {
        Rq {
            round,
            mult: None,
            shift,
            bias: None,
        }
    }

    /// With a multiplier of the smallest width (4 or 8 bytes).
    pub fn mult(mut self, values: PerChannel<i64>) -> Rq {
        let bytes = smallest_width(values.values(), &[4, 8]);
        self.mult = Some(Mult { bytes, values });
        self
    }

    /// With a bias per channel of the smallest width (4 or 8 bytes).
    pub fn bias(mut self, placement: Placement, values: Vec<i64>) -> Rq {
        let bytes = smallest_width(&values, &[4, 8]);
        self.bias = Some(Bias {
            placement,
            bytes,
            values,
        });
        self
    }
}

/// A kernel's geometry: `(kh, kw)`, `(sh, sw)`, `(ph, pw)`.
#[derive(Clone, Copy, Debug)]
pub struct Geometry {
    pub k: (u32, u32),
    pub s: (u32, u32),
    pub p: (u32, u32),
}

impl Conv {
    pub fn new(cout: u32, g: Geometry, groups: u32, weights: Vec<i64>, rq: Rq) -> Conv {
        let w_bytes = smallest_width(&weights, &[1, 2, 4, 8]);
        let Geometry {
            k: (kh, kw),
            s: (sh, sw),
            p: (ph, pw),
        } = g;
        Conv {
            cout,
            kh,
            kw,
            sh,
            sw,
            ph,
            pw,
            groups,
            w_bytes,
            rq,
            weights,
        }
    }
}

impl ConvTranspose {
    /// `op` is the output padding `(oph, opw)`.
    pub fn new(cout: u32, g: Geometry, op: (u32, u32), weights: Vec<i64>, rq: Rq) -> ConvTranspose {
        let w_bytes = smallest_width(&weights, &[1, 2, 4, 8]);
        let Geometry {
            k: (kh, kw),
            s: (sh, sw),
            p: (ph, pw),
        } = g;
        ConvTranspose {
            cout,
            kh,
            kw,
            sh,
            sw,
            ph,
            pw,
            oph: op.0,
            opw: op.1,
            w_bytes,
            rq,
            weights,
        }
    }
}

impl Chscale {
    pub fn new(scalar: u32, n_rows: u32, round: Round, shift: u8, m: Vec<i64>) -> Chscale {
        let m_bytes = smallest_width(&m, &[4, 8]);
        Chscale {
            scalar,
            n_rows,
            round,
            m_bytes,
            shift,
            m,
        }
    }
}

impl Igdn {
    pub fn new(gf: u32, frac: u32, gamma: Vec<i64>, beta: Vec<i64>) -> Igdn {
        let g_bytes = smallest_width(&gamma, &[4, 8]);
        Igdn {
            gf,
            frac,
            g_bytes,
            gamma,
            beta,
        }
    }
}

impl LayernormC {
    pub fn new(eps: u64, gamma: Vec<i64>, beta: Vec<i64>) -> LayernormC {
        let g_bytes = smallest_width(&gamma, &[4, 8]);
        LayernormC {
            eps,
            g_bytes,
            gamma,
            beta,
        }
    }
}

impl Contraction {
    pub fn new(groups: u32, round: Round, shift: u8) -> Contraction {
        Contraction {
            groups,
            rq: Rq::new(round, PerChannel::One(shift)),
        }
    }
}
