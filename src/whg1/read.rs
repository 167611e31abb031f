//! Reading `WHG1` bytes: load steps 1–5 of §10.5, in that order.
//!
//! Every failure here is `model_mismatch`. Nothing is allocated before the
//! counts have been checked against the file's length (step 3), and no
//! parameter array is allocated before its bytes are known to be present.

use super::model::*;
use crate::num::Round;
use crate::refusal::{Refusal, model_mismatch};

/// A little-endian reader over a byte slice that refuses instead of running off the end.
struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
    what: &'static str,
}

impl<'a> Cursor<'a> {
    fn new(bytes: &'a [u8], what: &'static str) -> Cursor<'a> {
        Cursor { bytes, pos: 0, what }
    }

    fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], Refusal> {
        if n > self.remaining() {
            return model_mismatch(format!(
                "{} ends at byte {} of {}",
                self.what,
                self.pos,
                self.bytes.len()
            ));
        }
        let out = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(out)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], Refusal> {
        let mut out = [0u8; N];
        out.copy_from_slice(self.take(N)?);
        Ok(out)
    }

    fn u8(&mut self) -> Result<u8, Refusal> {
        Ok(self.array::<1>()?[0])
    }
    fn i8(&mut self) -> Result<i8, Refusal> {
        Ok(i8::from_le_bytes(self.array()?))
    }
    fn u16(&mut self) -> Result<u16, Refusal> {
        Ok(u16::from_le_bytes(self.array()?))
    }
    fn u32(&mut self) -> Result<u32, Refusal> {
        Ok(u32::from_le_bytes(self.array()?))
    }
    fn i64(&mut self) -> Result<i64, Refusal> {
        Ok(i64::from_le_bytes(self.array()?))
    }
    fn u64(&mut self) -> Result<u64, Refusal> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    /// A signed integer of `bytes` bytes (1, 2, 4 or 8), sign-extended.
    fn int(&mut self, bytes: Width) -> Result<i64, Refusal> {
        Ok(match bytes {
            1 => i64::from(self.i8()?),
            2 => i64::from(i16::from_le_bytes(self.array()?)),
            4 => i64::from(i32::from_le_bytes(self.array()?)),
            _ => self.i64()?,
        })
    }

    /// `count` integers of `bytes` bytes each, refused before allocating when
    /// the bytes are not all there.
    fn ints(&mut self, count: u128, bytes: Width) -> Result<Vec<i64>, Refusal> {
        if count.saturating_mul(u128::from(bytes)) > self.remaining() as u128 {
            return model_mismatch(format!(
                "{} is shorter than its {count} values of {bytes} bytes",
                self.what
            ));
        }
        (0..count).map(|_| self.int(bytes)).collect()
    }

    fn zero(&mut self, n: usize, field: &str) -> Result<(), Refusal> {
        if self.take(n)?.iter().any(|&b| b != 0) {
            return model_mismatch(format!("{}: reserved {field} is not zero", self.what));
        }
        Ok(())
    }

    fn end(&self) -> Result<(), Refusal> {
        if self.remaining() != 0 {
            return model_mismatch(format!("{} has {} bytes past its end", self.what, self.remaining()));
        }
        Ok(())
    }
}

fn check(cond: bool, why: impl FnOnce() -> String) -> Result<(), Refusal> {
    if cond { Ok(()) } else { model_mismatch(why()) }
}

/// The header's counts (§10.1).
struct Header {
    n_tensors: u32,
    n_ops: u32,
    n_inputs: u16,
    n_outputs: u16,
    n_scalars: u16,
    max_elems: u32,
}

/// Load steps 1–5: the header, the reserved fields, the counts against the
/// length, the table records and the operator records.
pub fn read(bytes: &[u8]) -> Result<Graph, Refusal> {
    let header = step1_header(bytes).map_err(|r| r.within("load.1"))?;
    step2_reserved(bytes).map_err(|r| r.within("load.2"))?;
    step3_counts(&header, bytes.len()).map_err(|r| r.within("load.3"))?;
    let mut cur = Cursor::new(bytes, "the file");
    cur.take(32)?;
    let (scalars, inputs, outputs, tensors) = step4_tables(&header, &mut cur).map_err(|r| r.within("load.4"))?;
    let nodes = step5_operators(&header, &scalars, &tensors, &mut cur).map_err(|r| r.within("load.5"))?;
    Ok(Graph {
        max_elems: header.max_elems,
        scalars,
        inputs,
        outputs,
        tensors,
        nodes,
    })
}

/// Step 1: the magic, version and operator set, and the header's field rules.
fn step1_header(bytes: &[u8]) -> Result<Header, Refusal> {
    let mut cur = Cursor::new(bytes, "the header");
    let magic = cur
        .take(4)
        .or_else(|_| model_mismatch("the file is shorter than its magic"))?;
    check(magic == b"WHG1", || "the magic is not WHG1".into())?;
    let head = cur
        .take(28)
        .or_else(|_| model_mismatch("the file is shorter than its 32-byte header"))?;
    let mut cur = Cursor::new(head, "the header");
    check(cur.u8()? == 1, || "the version is not 1".into())?;
    check(cur.u8()? == 1, || "the operator set is not 1 (wai-ops/1)".into())?;
    cur.u16()?;
    let n_tensors = cur.u32()?;
    let n_ops = cur.u32()?;
    let n_inputs = cur.u16()?;
    let n_outputs = cur.u16()?;
    let n_scalars = cur.u16()?;
    cur.u16()?;
    let max_elems = cur.u32()?;
    check(n_tensors >= 1, || "n_tensors is 0".into())?;
    check(n_ops >= 1, || "n_ops is 0".into())?;
    check(n_inputs >= 1, || "n_inputs is 0".into())?;
    check(n_outputs >= 1, || "n_outputs is 0".into())?;
    // A header field out of its range, not a size past a cap (docs/assumptions.md).
    check((1..=CAP).contains(&u64::from(max_elems)), || {
        format!("max_elems {max_elems} is outside 1..=2^26")
    })?;
    Ok(Header {
        n_tensors,
        n_ops,
        n_inputs,
        n_outputs,
        n_scalars,
        max_elems,
    })
}

/// Step 2: the header's reserved fields (at 6, 22 and 28). The tables'
/// reserved fields are part of their records (steps 4 and 5).
fn step2_reserved(bytes: &[u8]) -> Result<(), Refusal> {
    let zero = |range: std::ops::Range<usize>| bytes[range].iter().all(|&b| b == 0);
    check(zero(6..8) && zero(22..24) && zero(28..32), || {
        "a reserved header field is not zero".into()
    })
}

/// Step 3: the fixed-size tables, and at least 8 bytes per operator record,
/// fit in the file.
fn step3_counts(h: &Header, len: usize) -> Result<(), Refusal> {
    let need = 32
        + 16 * u64::from(h.n_scalars)
        + 32 * u64::from(h.n_inputs)
        + 4 * u64::from(h.n_outputs)
        + 24 * u64::from(h.n_tensors)
        + 8 * u64::from(h.n_ops);
    check(need <= len as u64, || {
        format!("the counts need at least {need} bytes and the file has {len}")
    })
}

type Tables = (Vec<Scalar>, Vec<Input>, Vec<u32>, Vec<TensorRecord>);

/// Step 4: each table's records (§10.2).
fn step4_tables(h: &Header, cur: &mut Cursor) -> Result<Tables, Refusal> {
    let mut scalars = Vec::with_capacity(usize::from(h.n_scalars));
    for i in 0..h.n_scalars {
        let (lo, hi) = (cur.i64()?, cur.i64()?);
        check(lo <= hi, || format!("scalar {i}: lo > hi"))?;
        scalars.push(Scalar { lo, hi });
    }
    let mut inputs = Vec::with_capacity(usize::from(h.n_inputs));
    for i in 0..h.n_inputs {
        inputs.push(input_record(i, h, cur)?);
    }
    let declared = inputs.iter().filter(|inp| inp.declares_sizes()).count();
    check(declared == 0 || declared == inputs.len(), || {
        "some inputs declare their sizes and some do not".into()
    })?;
    let mut outputs = Vec::with_capacity(usize::from(h.n_outputs));
    for i in 0..h.n_outputs {
        let t = cur.u32()?;
        check(t < h.n_tensors, || format!("output {i}: tensor {t} does not exist"))?;
        outputs.push(t);
    }
    let mut tensors = Vec::with_capacity(h.n_tensors as usize);
    for i in 0..h.n_tensors {
        tensors.push(tensor_record(i, cur)?);
    }
    Ok((scalars, inputs, outputs, tensors))
}

fn input_record(i: u16, h: &Header, cur: &mut Cursor) -> Result<Input, Refusal> {
    let tensor = cur.u32()?;
    let (max_h, max_w) = (cur.u32()?, cur.u32()?);
    let kind = cur.u8()?;
    cur.zero(3, "input bytes")?;
    let src = cur.u32()?;
    cur.zero(4, "input u32")?;
    let init = cur.i64()?;
    check(tensor < h.n_tensors, || {
        format!("input {i}: tensor {tensor} does not exist")
    })?;
    check((max_h == 0) == (max_w == 0), || {
        format!("input {i}: max_h and max_w must both be 0 or both be at least 1")
    })?;
    let kind = match kind {
        0 => {
            check(src == 0 && init == 0, || {
                format!("input {i}: a data input has src and init 0")
            })?;
            InputKind::Data
        }
        1 => InputKind::State { src, init },
        k => return model_mismatch(format!("input {i}: kind {k} is neither data nor state")),
    };
    Ok(Input {
        tensor,
        max_h,
        max_w,
        kind,
    })
}

fn tensor_record(i: u32, cur: &mut Cursor) -> Result<TensorRecord, Refusal> {
    let channels = cur.u32()?;
    let exponent = cur.i8()?;
    let policy = cur.u8()?;
    cur.zero(2, "tensor u16")?;
    let (lo, hi) = (cur.i64()?, cur.i64()?);
    check(channels >= 1, || format!("tensor {i}: channels is 0"))?;
    let policy = match policy {
        0 => {
            check(lo == 0 && hi == 0, || {
                format!("tensor {i}: a derived tensor has lo and hi 0")
            })?;
            Policy::Derived
        }
        1 | 2 => {
            check(lo <= hi, || format!("tensor {i}: lo > hi"))?;
            if policy == 1 {
                Policy::Clamp { lo, hi }
            } else {
                Policy::Check { lo, hi }
            }
        }
        p => return model_mismatch(format!("tensor {i}: policy {p} is not 0, 1 or 2")),
    };
    let exponent = if exponent == -128 { None } else { Some(exponent) };
    Ok(TensorRecord {
        channels,
        exponent,
        policy,
    })
}

/// Step 5: each operator's opcode, arity, parameter length and parameter ranges.
fn step5_operators(
    h: &Header,
    scalars: &[Scalar],
    tensors: &[TensorRecord],
    cur: &mut Cursor,
) -> Result<Vec<Node>, Refusal> {
    let mut nodes = Vec::new();
    for index in 0..h.n_ops {
        let code = cur.u8()?;
        let (n_in, n_out) = (cur.u8()?, cur.u8()?);
        cur.zero(1, "operator byte")?;
        let name = name_of(code).ok_or_else(|| mm(format!("operator {index}: opcode {code:#04x} is unknown")))?;
        let (a_in, a_out) = arity(code);
        check(a_in.admits(n_in) && a_out.admits(n_out), || {
            format!("operator {index} ({name}): {n_in} inputs and {n_out} outputs is not its arity")
        })?;
        let mut ids = |n: u8| -> Result<Vec<u32>, Refusal> {
            (0..n)
                .map(|_| {
                    let t = cur.u32()?;
                    check(t < h.n_tensors, || {
                        format!("operator {index} ({name}): tensor {t} does not exist")
                    })?;
                    Ok(t)
                })
                .collect()
        };
        let inputs = ids(n_in)?;
        let outputs = ids(n_out)?;
        let plen = cur.u32()?;
        let pbytes = cur.take(plen as usize).or_else(|_| {
            model_mismatch(format!(
                "operator {index} ({name}): its {plen} parameter bytes run past the file"
            ))
        })?;
        let c = tensors[inputs[0] as usize].channels;
        let ctx = ParamContext { scalars, c };
        let mut p = Cursor::new(pbytes, "a parameter block");
        let op = params(code, &ctx, &mut p)
            .and_then(|op| p.end().map(|_| op))
            .map_err(|r| mm(format!("operator {index} ({name}): {}", r.why)))?;
        nodes.push(Node { inputs, outputs, op });
    }
    cur.end()?;
    Ok(nodes)
}

fn mm(why: String) -> Refusal {
    Refusal::new(crate::refusal::Code::ModelMismatch, why)
}

/// What a parameter block's layout depends on: the scalar table and the
/// channel count `C` (or `cin`) of the operator's first input.
struct ParamContext<'a> {
    scalars: &'a [Scalar],
    c: u32,
}

impl ParamContext<'_> {
    fn scalar(&self, k: u64) -> Result<Scalar, Refusal> {
        usize::try_from(k)
            .ok()
            .and_then(|k| self.scalars.get(k).copied())
            .ok_or_else(|| mm(format!("scalar {k} does not exist")))
    }
}

fn params(code: u8, ctx: &ParamContext, p: &mut Cursor) -> Result<Op, Refusal> {
    Ok(match code {
        0x01 => Op::Conv(conv(ctx, p)?),
        0x02 => Op::Rescale(rq(p, ctx.c)?),
        0x03 => Op::Chscale(chscale(ctx, p)?),
        0x04 => Op::Lut16(lut16(p)?),
        0x05 => Op::Add,
        0x06 => Op::Concat,
        0x07 => Op::ChunkAdd,
        0x08 => {
            let (start, count) = (p.u32()?, p.u32()?);
            check(count >= 1, || "split count is 0".into())?;
            Op::Split { start, count }
        }
        0x09 | 0x0A => {
            let r = p.u32()?;
            check(r >= 1, || "r is 0".into())?;
            if code == 0x09 {
                Op::PixelShuffle { r }
            } else {
                Op::PixelUnshuffle { r }
            }
        }
        0x0B => {
            let (lo, hi) = (p.i64()?, p.i64()?);
            check(lo <= hi, || "clamp lo > hi".into())?;
            Op::Clamp { lo, hi }
        }
        0x0C => Op::Relu,
        0x0D => {
            let (a, f) = (p.i64()?, p.u32()?);
            check(f <= 63, || format!("leaky f {f} is above 63"))?;
            Op::Leaky { a, f }
        }
        0x0E => {
            let m = p.u32()?;
            check(m >= 1, || "pad_rep m is 0".into())?;
            Op::PadRep { m }
        }
        0x0F => Op::CropTo,
        0x10 => {
            let rq = rq(p, ctx.c)?;
            check(rq.bias.is_none(), || "mul's RQ has a bias".into())?;
            Op::Mul(rq)
        }
        0x11 => Op::ConvTranspose(conv_transpose(ctx, p)?),
        0x12 => Op::Igdn(igdn(ctx, p)?),
        0x13 => Op::Abs,
        0x14 => Op::Crop(Crop {
            y0: operand(ctx, p)?,
            x0: operand(ctx, p)?,
            h: operand(ctx, p)?,
            w: operand(ctx, p)?,
        }),
        0x15 | 0x16 => {
            let order: [u8; 4] = p.array()?;
            let mut seen = [false; 4];
            for &o in &order {
                check(o < 4 && !seen[o as usize], || {
                    "order is not a permutation of the four sub-positions".into()
                })?;
                seen[o as usize] = true;
            }
            if code == 0x15 {
                Op::SubposSplit { order }
            } else {
                Op::SubposMerge { order }
            }
        }
        0x17 => {
            let kind = p.u8()?;
            p.zero(7, "fill bytes")?;
            let value = p.i64()?;
            match kind {
                0 => Op::Fill(FillValue::Const(value)),
                1 => {
                    let k = u64::try_from(value).map_err(|_| mm("fill's scalar index is negative".into()))?;
                    ctx.scalar(k)?;
                    Op::Fill(FillValue::Scalar(k as u32))
                }
                k => {
                    return model_mismatch(format!("fill kind {k} is neither constant nor scalar"));
                }
            }
        }
        0x18 => Op::LayernormC(layernorm_c(ctx, p)?),
        0x19 => Op::L2norm { eps: epsilon(p)? },
        0x1A => Op::Softmax,
        0x1B => Op::Sigmoid,
        0x1C => Op::Elu { alpha: p.i64()? },
        0x1D | 0x1E => {
            let groups = p.u32()?;
            check(groups >= 1, || "groups is 0".into())?;
            let rq = rq(p, ctx.c)?;
            check(
                rq.mult.is_none() && rq.bias.is_none() && matches!(rq.shift, PerChannel::One(_)),
                || "a contraction's RQ has a multiplier, a bias or one shift per channel".into(),
            )?;
            let c = Contraction { groups, rq };
            if code == 0x1D { Op::Gram(c) } else { Op::Apply(c) }
        }
        _ => return model_mismatch(format!("opcode {code:#04x} is unknown")),
    })
}

fn round(v: u8) -> Result<Round, Refusal> {
    match v {
        0 => Ok(Round::Floor),
        1 => Ok(Round::HalfUp),
        2 => Ok(Round::HalfEven),
        r => model_mismatch(format!("round {r} is not 0, 1 or 2")),
    }
}

fn width(v: u8, allowed: &[Width], field: &str) -> Result<Width, Refusal> {
    check(allowed.contains(&v), || {
        format!("{field} {v} is not one of {allowed:?}")
    })?;
    Ok(v)
}

fn per_channel<T>(kind: u8, c: u32, mut read: impl FnMut() -> Result<T, Refusal>) -> Result<PerChannel<T>, Refusal> {
    Ok(match kind {
        1 => PerChannel::One(read()?),
        _ => PerChannel::Each((0..c).map(|_| read()).collect::<Result<_, _>>()?),
    })
}

/// The `RQ` block over `c` channels (§10.4).
fn rq(p: &mut Cursor, c: u32) -> Result<Rq, Refusal> {
    let round = round(p.u8()?)?;
    let (bias, m_kind, s_kind, m_bytes, b_bytes) = (p.u8()?, p.u8()?, p.u8()?, p.u8()?, p.u8()?);
    p.zero(2, "RQ u16")?;
    check(bias <= 2, || format!("RQ bias {bias} is not 0, 1 or 2"))?;
    check(m_kind <= 2, || format!("RQ m_kind {m_kind} is not 0, 1 or 2"))?;
    check((1..=2).contains(&s_kind), || {
        format!("RQ s_kind {s_kind} is not 1 or 2")
    })?;
    check((m_kind == 0) == (m_bytes == 0), || {
        "RQ m_bytes is 0 exactly when m_kind is 0".into()
    })?;
    check((bias == 0) == (b_bytes == 0), || {
        "RQ b_bytes is 0 exactly when bias is 0".into()
    })?;
    // Bound the per-channel arrays by the bytes present before reading them one by one.
    let per = |kind: u8, bytes: u8| {
        if kind == 2 {
            u128::from(c) * u128::from(bytes)
        } else {
            u128::from(bytes)
        }
    };
    let need = per(m_kind, m_bytes)
        + per(s_kind, 1)
        + if bias == 0 {
            0
        } else {
            u128::from(c) * u128::from(b_bytes)
        };
    check(need <= p.remaining() as u128, || {
        "the RQ block is shorter than its arrays".into()
    })?;
    let mult = if m_kind == 0 {
        None
    } else {
        let bytes = width(m_bytes, &[4, 8], "RQ m_bytes")?;
        Some(Mult {
            bytes,
            values: per_channel(m_kind, c, || p.int(bytes))?,
        })
    };
    let shift = per_channel(s_kind, c, || {
        let s = p.u8()?;
        check(s <= 127, || format!("RQ shift {s} is above 127"))?;
        Ok(s)
    })?;
    let bias = match bias {
        0 => None,
        b => {
            let bytes = width(b_bytes, &[4, 8], "RQ b_bytes")?;
            let placement = if b == 1 { Placement::Pre } else { Placement::Post };
            Some(Bias {
                placement,
                bytes,
                values: p.ints(u128::from(c), bytes)?,
            })
        }
    };
    Ok(Rq {
        round,
        mult,
        shift,
        bias,
    })
}

fn u32s<const N: usize>(p: &mut Cursor) -> Result<[u32; N], Refusal> {
    let mut out = [0u32; N];
    for v in &mut out {
        *v = p.u32()?;
    }
    Ok(out)
}

fn w_bytes(p: &mut Cursor) -> Result<Width, Refusal> {
    let w = width(p.u8()?, &[1, 2, 4, 8], "w_bytes")?;
    p.zero(3, "w_bytes padding")?;
    Ok(w)
}

fn conv(ctx: &ParamContext, p: &mut Cursor) -> Result<Conv, Refusal> {
    let [cout, kh, kw, sh, sw, ph, pw, groups] = u32s(p)?;
    check(
        cout >= 1 && kh >= 1 && kw >= 1 && sh >= 1 && sw >= 1 && groups >= 1,
        || "conv cout, kh, kw, sh, sw and groups are each at least 1".into(),
    )?;
    // The weight count needs cin/groups; a cin that is not a multiple of groups does not plan.
    check(ctx.c.is_multiple_of(groups), || {
        format!("cin {} is not a multiple of groups {groups}", ctx.c)
    })?;
    let w_bytes = w_bytes(p)?;
    let rq = rq(p, cout)?;
    let count = u128::from(cout) * u128::from(ctx.c / groups) * u128::from(kh) * u128::from(kw);
    let weights = p.ints(count, w_bytes)?;
    Ok(Conv {
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
    })
}

fn conv_transpose(ctx: &ParamContext, p: &mut Cursor) -> Result<ConvTranspose, Refusal> {
    let [cout, kh, kw, sh, sw, ph, pw, oph, opw] = u32s(p)?;
    check(cout >= 1 && kh >= 1 && kw >= 1 && sh >= 1 && sw >= 1, || {
        "conv_transpose cout, kh, kw, sh and sw are each at least 1".into()
    })?;
    let w_bytes = w_bytes(p)?;
    let rq = rq(p, cout)?;
    let count = u128::from(ctx.c) * u128::from(cout) * u128::from(kh) * u128::from(kw);
    let weights = p.ints(count, w_bytes)?;
    Ok(ConvTranspose {
        cout,
        kh,
        kw,
        sh,
        sw,
        ph,
        pw,
        oph,
        opw,
        w_bytes,
        rq,
        weights,
    })
}

fn chscale(ctx: &ParamContext, p: &mut Cursor) -> Result<Chscale, Refusal> {
    let (scalar, n_rows) = (p.u32()?, p.u32()?);
    let round = round(p.u8()?)?;
    let m_bytes = width(p.u8()?, &[4, 8], "chscale m_bytes")?;
    let shift = p.u8()?;
    p.zero(1, "chscale byte")?;
    check(shift <= 127, || format!("chscale shift {shift} is above 127"))?;
    let range = ctx.scalar(u64::from(scalar))?;
    // §5.4: the scalar's declared range lies within [0, n_rows − 1].
    check(range.lo >= 0 && range.hi < i64::from(n_rows), || {
        format!(
            "scalar {scalar}'s range [{}, {}] is not within [0, n_rows − 1]",
            range.lo, range.hi
        )
    })?;
    let m = p.ints(u128::from(n_rows) * u128::from(ctx.c), m_bytes)?;
    Ok(Chscale {
        scalar,
        n_rows,
        round,
        m_bytes,
        shift,
        m,
    })
}

fn lut16(p: &mut Cursor) -> Result<Lut16, Refusal> {
    let exp = |e: i8| if e == -128 { None } else { Some(e) };
    let (e_in, e_out) = (exp(p.i8()?), exp(p.i8()?));
    p.zero(2, "lut16 bytes")?;
    let table: Vec<i16> = p.ints(65536, 2)?.into_iter().map(|v| v as i16).collect();
    check(table[0] == 0, || "lut16 T[0] is not 0".into())?;
    Ok(Lut16 { e_in, e_out, table })
}

fn operand(ctx: &ParamContext, p: &mut Cursor) -> Result<Operand, Refusal> {
    let kind = p.u8()?;
    p.zero(3, "crop operand bytes")?;
    let v = p.u32()?;
    match kind {
        0 => Ok(Operand::Const(v)),
        1 => {
            ctx.scalar(u64::from(v))?;
            Ok(Operand::Scalar(v))
        }
        k => model_mismatch(format!("crop operand kind {k} is neither constant nor scalar")),
    }
}

fn epsilon(p: &mut Cursor) -> Result<u64, Refusal> {
    let eps = p.u64()?;
    check(eps >= 1, || "ε is 0".into())?;
    Ok(eps)
}

fn g_bytes(p: &mut Cursor) -> Result<Width, Refusal> {
    let g = width(p.u8()?, &[4, 8], "g_bytes")?;
    p.zero(7, "g_bytes padding")?;
    Ok(g)
}

fn igdn(ctx: &ParamContext, p: &mut Cursor) -> Result<Igdn, Refusal> {
    let (gf, frac) = (p.u32()?, p.u32()?);
    check(gf <= 127 && frac <= 127, || {
        "igdn gf and frac are each at most 127".into()
    })?;
    let g_bytes = g_bytes(p)?;
    let c = u128::from(ctx.c);
    let gamma = p.ints(c * c, g_bytes)?;
    let beta = p.ints(c, 8)?;
    Ok(Igdn {
        gf,
        frac,
        g_bytes,
        gamma,
        beta,
    })
}

fn layernorm_c(ctx: &ParamContext, p: &mut Cursor) -> Result<LayernormC, Refusal> {
    let eps = epsilon(p)?;
    let g_bytes = g_bytes(p)?;
    let gamma = p.ints(u128::from(ctx.c), g_bytes)?;
    let beta = p.ints(u128::from(ctx.c), 8)?;
    Ok(LayernormC {
        eps,
        g_bytes,
        gamma,
        beta,
    })
}
