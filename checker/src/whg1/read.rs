//! Reading `WHG1` bytes: load steps 1–6 of §10.5, one function per step, in that order.
//!
//! Every failure of steps 1–6 is `model_mismatch`, so the reader returns `Err(Malformed)` for all of them;
//! docs/assumptions.md A1 assigns each check to its step, and this reader checks the steps in order.
//! It never indexes past the file and never allocates from a count it has not checked against the
//! file's length (a table or a parameter array is allocated only once its bytes are known present).

use super::model::*;
use crate::num::Round;

/// A bounds-checked little-endian reader over a slice.
struct Rd<'a> {
    b: &'a [u8],
    pos: usize,
}

/// A graph refused by load steps 1–6 (`model_mismatch`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Malformed;

type R<T> = Result<T, Malformed>;

impl<'a> Rd<'a> {
    fn new(b: &'a [u8]) -> Self {
        Rd { b, pos: 0 }
    }
    fn left(&self) -> usize {
        self.b.len() - self.pos
    }
    fn take(&mut self, n: usize) -> R<&'a [u8]> {
        if n > self.left() {
            return Err(Malformed);
        }
        let s = &self.b[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }
    fn u8(&mut self) -> R<u8> {
        Ok(self.take(1)?[0])
    }
    fn i8(&mut self) -> R<i8> {
        Ok(self.u8()? as i8)
    }
    fn u16(&mut self) -> R<u16> {
        Ok(u16::from_le_bytes(self.take(2)?.try_into().map_err(|_| Malformed)?))
    }
    fn u32(&mut self) -> R<u32> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().map_err(|_| Malformed)?))
    }
    fn u64(&mut self) -> R<u64> {
        Ok(u64::from_le_bytes(self.take(8)?.try_into().map_err(|_| Malformed)?))
    }
    fn i64(&mut self) -> R<i64> {
        Ok(self.u64()? as i64)
    }
    fn zeros(&mut self, n: usize) -> R<()> {
        if self.take(n)?.iter().all(|&b| b == 0) {
            Ok(())
        } else {
            Err(Malformed)
        }
    }
    /// `count` signed integers of `width` bytes (1, 2, 4 or 8) each, sign-extended, after checking
    /// that their bytes are present.
    fn ints(&mut self, count: u128, width: u8) -> R<Vec<i64>> {
        let need = count.checked_mul(u128::from(width)).ok_or(Malformed)?;
        if need > self.left() as u128 {
            return Err(Malformed);
        }
        // One bounds check for the run, then each integer from its own bytes (weights are most of a
        // parameter set's bytes).
        let bytes = self.take(need as usize)?;
        Ok(match width {
            1 => bytes.iter().map(|&b| i64::from(b as i8)).collect(),
            2 => bytes
                .chunks_exact(2)
                .map(|b| i64::from(i16::from_le_bytes([b[0], b[1]])))
                .collect(),
            4 => bytes
                .chunks_exact(4)
                .map(|b| i64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])))
                .collect(),
            8 => bytes
                .chunks_exact(8)
                .map(|b| i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
                .collect(),
            _ => return Err(Malformed),
        })
    }
}

fn ensure(c: bool) -> R<()> {
    if c { Ok(()) } else { Err(Malformed) }
}

fn round_of(b: u8) -> R<Round> {
    match b {
        0 => Ok(Round::Floor),
        1 => Ok(Round::HalfUp),
        2 => Ok(Round::HalfEven),
        _ => Err(Malformed),
    }
}

/// What one operator's `RQ` may hold (§10.4's table).
#[derive(Clone, Copy)]
struct RqRules {
    bias_allowed: bool,
    mult_allowed: bool,
    per_channel_shift: bool,
}

const RQ_FULL: RqRules = RqRules {
    bias_allowed: true,
    mult_allowed: true,
    per_channel_shift: true,
};

/// An `RQ` block over `c` channels (§10.4).
fn read_rq(r: &mut Rd, c: u64, rules: RqRules) -> R<Rq> {
    let round = round_of(r.u8()?)?;
    let bias_kind = r.u8()?;
    let m_kind = r.u8()?;
    let s_kind = r.u8()?;
    let m_bytes = r.u8()?;
    let b_bytes = r.u8()?;
    r.zeros(2)?;
    let placement = match bias_kind {
        0 => Placement::None,
        1 => Placement::Pre,
        2 => Placement::Post,
        _ => return Err(Malformed),
    };
    ensure(m_kind <= 2 && (s_kind == 1 || s_kind == 2))?;
    ensure(if m_kind == 0 {
        m_bytes == 0
    } else {
        m_bytes == 4 || m_bytes == 8
    })?;
    ensure(if placement == Placement::None {
        b_bytes == 0
    } else {
        b_bytes == 4 || b_bytes == 8
    })?;
    ensure(rules.bias_allowed || placement == Placement::None)?;
    ensure(rules.mult_allowed || m_kind == 0)?;
    ensure(rules.per_channel_shift || s_kind == 1)?;
    let c = u128::from(c);
    let n_mult = match m_kind {
        0 => 0,
        1 => 1,
        _ => c,
    };
    let mult = r.ints(n_mult, m_bytes.max(1))?;
    let n_shift = if s_kind == 1 { 1 } else { c };
    if n_shift > r.left() as u128 {
        return Err(Malformed);
    }
    let shift: Vec<u8> = (0..n_shift).map(|_| r.u8()).collect::<R<_>>()?;
    ensure(shift.iter().all(|&s| s <= 127))?;
    let bias = if placement == Placement::None {
        Vec::new()
    } else {
        r.ints(c, b_bytes)?
    };
    Ok(Rq {
        round,
        placement,
        mult,
        shift,
        bias,
    })
}

fn operand(r: &mut Rd, n_scalars: usize) -> R<Operand> {
    let kind = r.u8()?;
    r.zeros(3)?;
    let v = r.u32()?;
    match kind {
        0 => Ok(Operand::Const(i64::from(v))),
        1 => {
            ensure((v as usize) < n_scalars)?;
            Ok(Operand::Scalar(v as usize))
        }
        _ => Err(Malformed),
    }
}

fn order4(r: &mut Rd) -> R<[u8; 4]> {
    let o = [r.u8()?, r.u8()?, r.u8()?, r.u8()?];
    let mut seen = [false; 4];
    for &k in &o {
        ensure(k < 4 && !seen[usize::from(k)])?;
        seen[usize::from(k)] = true;
    }
    Ok(o)
}

fn exponent(e: i8) -> Option<i8> {
    if e == -128 { None } else { Some(e) }
}

/// One operator's parameters (§10.4), from exactly `plen` bytes. `cin` is its first input's channels.
fn read_params(opcode: u8, p: &[u8], cin: u64, scalars: &[ScalarRec]) -> R<OpKind> {
    let mut r = Rd::new(p);
    let ns = scalars.len();
    let kind = match opcode {
        0x01 => {
            let [cout, kh, kw, sh, sw, ph, pw, groups] = [(); 8].map(|_| r.u32());
            let (cout, kh, kw, sh, sw, ph, pw, groups) = (cout?, kh?, kw?, sh?, sw?, ph?, pw?, groups?);
            ensure(cout >= 1 && kh >= 1 && kw >= 1 && sh >= 1 && sw >= 1 && groups >= 1)?;
            let w_bytes = r.u8()?;
            ensure(matches!(w_bytes, 1 | 2 | 4 | 8))?;
            r.zeros(3)?;
            let rq = read_rq(&mut r, u64::from(cout), RQ_FULL)?;
            // The weight count needs cin/groups; a cin that is not a multiple fails step 7 anyway.
            ensure(cin.is_multiple_of(u64::from(groups)))?;
            let n = u128::from(cout) * u128::from(cin / u64::from(groups)) * u128::from(kh) * u128::from(kw);
            let w = r.ints(n, w_bytes)?;
            OpKind::Conv(Conv {
                cout,
                kh,
                kw,
                sh,
                sw,
                ph,
                pw,
                groups,
                rq,
                w: Weights::new(w),
            })
        }
        0x11 => {
            let [cout, kh, kw, sh, sw, ph, pw, oph, opw] = [(); 9].map(|_| r.u32());
            let (cout, kh, kw, sh, sw, ph, pw, oph, opw) = (cout?, kh?, kw?, sh?, sw?, ph?, pw?, oph?, opw?);
            ensure(cout >= 1 && kh >= 1 && kw >= 1 && sh >= 1 && sw >= 1)?;
            let w_bytes = r.u8()?;
            ensure(matches!(w_bytes, 1 | 2 | 4 | 8))?;
            r.zeros(3)?;
            let rq = read_rq(&mut r, u64::from(cout), RQ_FULL)?;
            let n = u128::from(cin) * u128::from(cout) * u128::from(kh) * u128::from(kw);
            let w = r.ints(n, w_bytes)?;
            OpKind::ConvT(ConvT {
                cout,
                kh,
                kw,
                sh,
                sw,
                ph,
                pw,
                oph,
                opw,
                rq,
                w: Weights::new(w),
            })
        }
        0x02 => OpKind::Rescale(read_rq(&mut r, cin, RQ_FULL)?),
        0x03 => {
            let scalar = r.u32()? as usize;
            let n_rows = r.u32()?;
            let round = round_of(r.u8()?)?;
            let m_bytes = r.u8()?;
            ensure(m_bytes == 4 || m_bytes == 8)?;
            let shift = r.u8()?;
            ensure(shift <= 127)?;
            r.zeros(1)?;
            // The scalar exists and its declared range lies within [0, n_rows − 1] (§5.4).
            ensure(scalar < ns && n_rows >= 1)?;
            let s = scalars[scalar];
            ensure(s.lo >= 0 && s.hi < i64::from(n_rows))?;
            let m = r.ints(u128::from(n_rows) * u128::from(cin), m_bytes)?;
            OpKind::Chscale {
                scalar,
                n_rows,
                round,
                shift,
                m,
            }
        }
        0x04 => {
            let e_in = exponent(r.i8()?);
            let e_out = exponent(r.i8()?);
            r.zeros(2)?;
            let table: Vec<i16> = r.ints(65536, 2)?.into_iter().map(|v| v as i16).collect();
            ensure(fault!("whg1-lut16-t0-unchecked", table[0] == 0, true))?;
            OpKind::Lut16 { e_in, e_out, table }
        }
        0x05 => OpKind::Add,
        0x06 => OpKind::Concat,
        0x07 => OpKind::ChunkAdd,
        0x0C => OpKind::Relu,
        0x13 => OpKind::Abs,
        0x0F => OpKind::CropTo,
        0x1A => OpKind::Softmax,
        0x1B => OpKind::Sigmoid,
        0x08 => {
            let start = r.u32()?;
            let count = r.u32()?;
            ensure(count >= 1)?;
            OpKind::Split { start, count }
        }
        0x09 | 0x0A => {
            let f = r.u32()?;
            ensure(f >= 1)?;
            if opcode == 0x09 {
                OpKind::PixelShuffle(f)
            } else {
                OpKind::PixelUnshuffle(f)
            }
        }
        0x0B => {
            let lo = r.i64()?;
            let hi = r.i64()?;
            ensure(lo <= hi)?;
            OpKind::Clamp(lo, hi)
        }
        0x0D => {
            let a = r.i64()?;
            let f = r.u32()?;
            ensure(f <= fault!("whg1-leaky-f-64", 63, 64))?;
            OpKind::Leaky { a, f }
        }
        0x0E => {
            let m = r.u32()?;
            ensure(m >= 1)?;
            OpKind::PadRep(m)
        }
        0x10 => OpKind::Mul(read_rq(
            &mut r,
            cin,
            RqRules {
                bias_allowed: false,
                ..RQ_FULL
            },
        )?),
        0x12 => {
            let gf = r.u32()?;
            let frac = r.u32()?;
            ensure(gf <= 127 && frac <= 127)?;
            let g_bytes = r.u8()?;
            ensure(g_bytes == 4 || g_bytes == 8)?;
            r.zeros(7)?;
            let gamma = r.ints(u128::from(cin) * u128::from(cin), g_bytes)?;
            let beta = r.ints(u128::from(cin), 8)?;
            OpKind::Igdn { gf, frac, gamma, beta }
        }
        0x14 => {
            let ops = [(); 4].map(|_| operand(&mut r, ns));
            let [a, b, c, d] = ops;
            OpKind::Crop([a?, b?, c?, d?])
        }
        0x15 => OpKind::SubposSplit(order4(&mut r)?),
        0x16 => OpKind::SubposMerge(order4(&mut r)?),
        0x17 => {
            let kind = r.u8()?;
            r.zeros(7)?;
            let v = r.i64()?;
            match kind {
                0 => OpKind::Fill(Operand::Const(v)),
                1 => {
                    ensure(v >= 0 && (v as u64) < ns as u64)?;
                    OpKind::Fill(Operand::Scalar(v as usize))
                }
                _ => return Err(Malformed),
            }
        }
        0x18 => {
            let eps = r.u64()?;
            ensure(eps >= 1)?;
            let g_bytes = r.u8()?;
            ensure(g_bytes == 4 || g_bytes == 8)?;
            r.zeros(7)?;
            let gamma = r.ints(u128::from(cin), g_bytes)?;
            let beta = r.ints(u128::from(cin), 8)?;
            OpKind::LayerNorm { eps, gamma, beta }
        }
        0x19 => {
            let eps = r.u64()?;
            ensure(eps >= 1)?;
            OpKind::L2Norm { eps }
        }
        0x1C => OpKind::Elu(r.i64()?),
        0x1D | 0x1E => {
            let groups = r.u32()?;
            ensure(groups >= 1)?;
            let rq = read_rq(
                &mut r,
                cin,
                RqRules {
                    bias_allowed: false,
                    mult_allowed: false,
                    per_channel_shift: false,
                },
            )?;
            if opcode == 0x1D {
                OpKind::Gram { groups, rq }
            } else {
                OpKind::Apply { groups, rq }
            }
        }
        _ => return Err(Malformed),
    };
    // Every parameter length is exact.
    ensure(fault!("whg1-trailing-params", r.left() == 0, true))?;
    Ok(kind)
}

/// Load steps 1–6 of §10.5, in order. `Err(Malformed)` is `model_mismatch`.
pub fn read(bytes: &[u8]) -> R<Graph> {
    let mut r = Rd::new(bytes);
    let h = step1_header(&mut r)?;
    step2_reserved(&h)?;
    step3_counts(&h, bytes.len())?;
    let mut g = step4_records(&mut r, &h)?;
    g.ops = step5_operators(&mut r, &g, h.n_ops)?;
    step6_graph_rules(&g)?;
    Ok(g)
}

/// The 32-byte header (§10.1).
struct Header {
    n_tensors: u32,
    n_ops: u32,
    n_inputs: u16,
    n_outputs: u16,
    n_scalars: u16,
    max_elems: u32,
    /// The reserved fields at bytes 6, 22 and 28.
    reserved: [u32; 3],
}

/// Step 1: magic, version, operator set, and the header's field rules (A1, A2).
fn step1_header(r: &mut Rd) -> R<Header> {
    ensure(r.take(4).ok() == Some(b"WHG1".as_slice()))?;
    ensure(r.u8()? == 1 && r.u8()? == 1)?;
    let reserved6 = r.u16()?;
    let n_tensors = r.u32()?;
    let n_ops = r.u32()?;
    let n_inputs = r.u16()?;
    let n_outputs = r.u16()?;
    let n_scalars = r.u16()?;
    let reserved22 = r.u16()?;
    let max_elems = r.u32()?;
    let reserved28 = r.u32()?;
    ensure(n_tensors >= 1 && n_ops >= 1 && n_inputs >= 1 && n_outputs >= 1)?;
    let cap = fault!("whg1-max-elems-cap-exclusive", CAP, CAP - 1);
    ensure(max_elems >= 1 && u64::from(max_elems) <= cap)?;
    Ok(Header {
        n_tensors,
        n_ops,
        n_inputs,
        n_outputs,
        n_scalars,
        max_elems,
        reserved: [u32::from(reserved6), u32::from(reserved22), reserved28],
    })
}

/// Step 2: the reserved header fields.
fn step2_reserved(h: &Header) -> R<()> {
    ensure(fault!("whg1-reserved-unchecked", h.reserved == [0; 3], true))
}

/// Step 3: the fixed-size tables and 8 bytes per operator record fit in the file.
fn step3_counts(h: &Header, len: usize) -> R<()> {
    let need = 32u64
        + 16 * u64::from(h.n_scalars)
        + 32 * u64::from(h.n_inputs)
        + 4 * u64::from(h.n_outputs)
        + 24 * u64::from(h.n_tensors)
        + 8 * u64::from(h.n_ops);
    ensure(need <= len as u64)
}

/// Step 4: the scalar, input, output and tensor records (§10.2); the graph without its operators.
fn step4_records(r: &mut Rd, h: &Header) -> R<Graph> {
    let nt = h.n_tensors as usize;
    let scalars = (0..h.n_scalars).map(|_| scalar_record(r)).collect::<R<_>>()?;
    let inputs: Vec<InputRec> = (0..h.n_inputs).map(|_| input_record(r, nt)).collect::<R<_>>()?;
    let same = inputs.iter().all(|i| i.declares_sizes() == inputs[0].declares_sizes());
    ensure(fault!("whg1-mixed-sizes", same, true))?;
    let outputs = (0..h.n_outputs)
        .map(|_| {
            let t = r.u32()? as usize;
            ensure(t < nt)?;
            Ok(t)
        })
        .collect::<R<_>>()?;
    let tensors = (0..h.n_tensors).map(|_| tensor_record(r)).collect::<R<_>>()?;
    Ok(Graph {
        max_elems: u64::from(h.max_elems),
        scalars,
        inputs,
        outputs,
        tensors,
        ops: Vec::new(),
    })
}

fn scalar_record(r: &mut Rd) -> R<ScalarRec> {
    let lo = r.i64()?;
    let hi = r.i64()?;
    ensure(lo <= hi)?;
    Ok(ScalarRec { lo, hi })
}

/// An input record, its tensor one of the `nt` tensors.
fn input_record(r: &mut Rd, nt: usize) -> R<InputRec> {
    let tensor = r.u32()? as usize;
    let max_h = r.u32()?;
    let max_w = r.u32()?;
    let kind = r.u8()?;
    r.zeros(3)?;
    let src = r.u32()?;
    r.zeros(4)?;
    let init = r.i64()?;
    ensure(tensor < nt)?;
    ensure((max_h >= 1 && max_w >= 1) || (max_h == 0 && max_w == 0))?;
    let kind = match kind {
        0 => {
            ensure(src == 0 && init == 0)?;
            Kind::Data
        }
        1 => Kind::State,
        _ => return Err(Malformed),
    };
    Ok(InputRec {
        tensor,
        max_h,
        max_w,
        kind,
        src,
        init,
    })
}

fn tensor_record(r: &mut Rd) -> R<TensorRec> {
    let channels = r.u32()?;
    let e = r.i8()?;
    let policy = r.u8()?;
    r.zeros(2)?;
    let lo = r.i64()?;
    let hi = r.i64()?;
    ensure(channels >= 1)?;
    let policy = match policy {
        0 => {
            ensure(lo == 0 && hi == 0)?;
            Policy::Derived
        }
        1 | 2 => {
            ensure(lo <= hi)?;
            if policy == 1 {
                Policy::Clamp(lo, hi)
            } else {
                Policy::Check(lo, hi)
            }
        }
        _ => return Err(Malformed),
    };
    Ok(TensorRec {
        channels,
        exponent: exponent(e),
        policy,
    })
}

/// Step 5: the `n_ops` operator records (§5, §10.4), then nothing after the last.
fn step5_operators(r: &mut Rd, g: &Graph, n_ops: u32) -> R<Vec<Op>> {
    let mut ops = Vec::new();
    for _ in 0..n_ops {
        ops.push(operator_record(r, g)?);
    }
    ensure(r.left() == 0)?;
    Ok(ops)
}

/// An operator record: its opcode, its arity, its tensors, and its parameters of exactly the
/// length it gives.
fn operator_record(r: &mut Rd, g: &Graph) -> R<Op> {
    let nt = g.tensors.len();
    let opcode = r.u8()?;
    let n_in = r.u8()?;
    let n_out = r.u8()?;
    r.zeros(1)?;
    let spec = OPS.iter().find(|o| o.0 == opcode).ok_or(Malformed)?;
    match spec.2 {
        Some(k) => ensure(n_in == k)?,
        None => ensure(n_in >= 2)?,
    }
    ensure(n_out == spec.3)?;
    let mut tensor = || -> R<usize> {
        let t = r.u32()? as usize;
        ensure(t < nt)?;
        Ok(t)
    };
    let ins: Vec<usize> = (0..n_in).map(|_| tensor()).collect::<R<_>>()?;
    let outs: Vec<usize> = (0..n_out).map(|_| tensor()).collect::<R<_>>()?;
    let plen = r.u32()? as usize;
    let p = r.take(plen)?;
    let cin = u64::from(g.tensors[ins[0]].channels);
    let kind = read_params(opcode, p, cin, &g.scalars)?;
    Ok(Op {
        opcode,
        ins,
        outs,
        kind,
    })
}

/// Step 6: §10.3's graph and state rules and §3's and §5.6's exponent rules.
fn step6_graph_rules(g: &Graph) -> R<()> {
    let nt = g.tensors.len();
    let mut is_input = vec![false; nt];
    for i in &g.inputs {
        ensure(!is_input[i.tensor])?; // one input record per tensor
        is_input[i.tensor] = true;
    }
    // The operator that writes each tensor.
    let mut producer: Vec<Option<usize>> = vec![None; nt];
    for (k, op) in g.ops.iter().enumerate() {
        for &t in &op.outs {
            ensure(!is_input[t] && producer[t].is_none())?;
            producer[t] = Some(k);
        }
    }
    // Every tensor is a graph input or the output of exactly one operator.
    ensure((0..nt).all(|t| is_input[t] || producer[t].is_some()))?;
    // An operator reads only graph inputs and the outputs of earlier operators.
    for (k, op) in g.ops.iter().enumerate() {
        for &t in &op.ins {
            ensure(is_input[t] || producer[t].is_some_and(|p| p < k))?;
        }
    }
    // A graph input's policy is `check` or `clamp`; input 0 is data.
    for i in &g.inputs {
        ensure(g.tensors[i.tensor].policy != Policy::Derived)?;
    }
    ensure(g.inputs[0].kind == Kind::Data)?;
    // State rules.
    for i in g.inputs.iter().filter(|i| i.kind == Kind::State) {
        ensure((i.src as usize) < g.outputs.len())?;
        let out_t = fault!("whg1-state-src-as-tensor", g.outputs[i.src as usize], i.src as usize);
        ensure(g.tensors[out_t].channels == g.tensors[i.tensor].channels)?;
        let own = g.tensors[i.tensor].policy.range().ok_or(Malformed)?;
        let (lo, hi) = fault!(
            "whg1-state-init-source-range",
            own,
            g.tensors[out_t].policy.range().unwrap_or((i64::MIN, i64::MAX))
        );
        ensure(fault!("whg1-state-init-unchecked", lo <= i.init && i.init <= hi, true))?;
    }
    // Exponent rules.
    for op in &g.ops {
        let all_equal = |ts: &mut dyn Iterator<Item = usize>| -> bool {
            let es: Vec<Option<i8>> = ts.map(|t| g.tensors[t].exponent).collect();
            es.iter().all(|e| e.is_none()) || (es.iter().all(|e| e.is_some()) && es.windows(2).all(|w| w[0] == w[1]))
        };
        match &op.kind {
            OpKind::Add | OpKind::Concat | OpKind::ChunkAdd => {
                let equal = all_equal(&mut op.ins.iter().chain(op.outs.iter()).copied());
                ensure(fault!("whg1-exponents-unchecked", equal, true))?;
            }
            OpKind::Lut16 { e_in, e_out, .. } => {
                let (e_x, e_y) = (g.tensors[op.ins[0]].exponent, g.tensors[op.outs[0]].exponent);
                ensure(fault!("whg1-lut16-e-in-unchecked", *e_in == e_x, true))?;
                ensure(*e_out == e_y)?;
            }
            _ => {}
        }
    }
    Ok(())
}
