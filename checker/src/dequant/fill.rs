//! Filling the DetessDequant records (docs/protocol.md "DetessDequant"): a line with a `"buffers"`
//! member is a whole call (`calls.jsonl`, `layout.jsonl`), a line whose `"in"` holds `"q"` a
//! numerical-core record (`numeric.jsonl`). The filled line echoes the request's members and adds
//! the computed `expect`, canonically.

use super::call::check::{self, Code};
use super::call::exec::{self, Stop};
use super::call::request;
use super::env;
use super::numeric;
use crate::canon::{self, J};
use crate::request::{Bad, LineError};
use serde_json::Value;

/// A successful call's output capacity is at most 2^20 bytes (docs/protocol.md).
pub const MAX_OUTPUT_CAPACITY: u64 = 1 << 20;

/// Whether a parsed line is a DetessDequant record.
pub fn is_dequant(v: &Value) -> bool {
    v.as_object().is_some_and(|m| {
        m.contains_key("buffers")
            || m.get("in")
                .and_then(Value::as_object)
                .is_some_and(|i| i.contains_key("q"))
    })
}

fn stop(s: Stop) -> LineError {
    match s {
        Stop::Environment(m) => LineError::Bad(m),
        Stop::Bug(m) => LineError::Bug(m),
    }
}

fn line(v: &Value, expect: J) -> Result<String, LineError> {
    let mut members = request::echo(v).map_err(LineError::Bad)?;
    members.push(("expect".into(), expect));
    canon::write(&J::Obj(members)).map_err(|e| LineError::Bad(format!("line: {e}")))
}

/// A whole call's `expect`: the output buffer after the call, or the refusal.
pub fn call_expect(call: &request::Call) -> Result<J, LineError> {
    let refuse = |c: Code| Ok(J::obj(vec![("refuse", J::str(c.name()))]));
    let plan = match check::plan(call) {
        Ok(p) => p,
        Err(c) => return refuse(c),
    };
    if let Err(c) = check::admit(&plan, call) {
        return refuse(c);
    }
    let (input, output) = (&call.in_bufs[0], &call.out_bufs[0]);
    if output.capacity > MAX_OUTPUT_CAPACITY {
        let b: Bad = format!(
            "buffers.outputs[0].capacity: {} bytes in a call that succeeds, past the 2^20 a record may hold",
            output.capacity
        );
        return Err(LineError::Bad(b));
    }
    let mut out = vec![output.poison; output.capacity as usize];
    exec::execute(&plan, input, &mut out).map_err(stop)?;
    Ok(J::obj(vec![("outputs", J::Arr(vec![J::Str(hex::encode(&out))]))]))
}

/// A numerical-core record's `expect`: each `q`'s binary32 and BF16 outputs.
pub fn numeric_expect(n: &request::Numeric) -> Result<J, LineError> {
    if !numeric::scale_admitted(n.scale_bits) {
        return Err(LineError::Bad(format!(
            "in.scale: {:08x} is a scale the contract refuses (NaN, infinite, zero or negative): not a numeric record",
            n.scale_bits
        )));
    }
    let (mut f32s, mut bf16s) = (Vec::with_capacity(n.q.len()), Vec::with_capacity(n.q.len()));
    if !n.q.is_empty() {
        let checked = env::check().map_err(LineError::Bad)?;
        let p = numeric::prepare(&checked, f32::from_bits(n.scale_bits), n.zero_point);
        for &q in &n.q {
            let y = numeric::output(&checked, &p, q);
            f32s.push(J::Str(format!("{:08x}", y.to_bits())));
            bf16s.push(J::Str(format!("{:04x}", numeric::bf16_bits(y))));
        }
    }
    Ok(J::obj(vec![("bf16", J::Arr(bf16s)), ("f32", J::Arr(f32s))]))
}

/// Fills one parsed DetessDequant record; the canonical filled line, without its line feed.
pub fn fill_value(v: &Value) -> Result<String, LineError> {
    let is_call = v.as_object().is_some_and(|m| m.contains_key("buffers"));
    let expect = if is_call {
        call_expect(&request::call(v).map_err(LineError::Bad)?)?
    } else {
        numeric_expect(&request::numeric(v).map_err(LineError::Bad)?)?
    };
    line(v, expect)
}

/// Fills one request line of `wai-checker dequant fill`: a DetessDequant record or a line error.
pub fn fill_line(line: &str) -> Result<String, LineError> {
    let v: Value = serde_json::from_str(line).map_err(|e| LineError::Bad(format!("not JSON: {e}")))?;
    if !is_dequant(&v) {
        return Err(LineError::Bad(
            "line: not a DetessDequant record (no \"buffers\", no \"in\" holding \"q\")".into(),
        ));
    }
    fill_value(&v)
}

/// Fills every line of `input` into `out` (as [`crate::fill::fill`] does, DetessDequant records
/// only); returns the number of bad lines, after reporting each on `err` as `line N: …`.
pub fn fill(input: &[u8], out: &mut String, err: &mut dyn FnMut(String)) -> usize {
    crate::request::fill_bytes(input, out, err, &fill_line)
}

/// [`fill`], streaming (as [`crate::fill::fill_stream`]).
pub fn fill_stream(
    input: &mut dyn std::io::BufRead,
    out: &mut dyn std::io::Write,
    err: &mut dyn FnMut(String),
) -> std::io::Result<usize> {
    crate::request::fill_lines(input, out, err, crate::request::MAX_LINE, &fill_line)
}
