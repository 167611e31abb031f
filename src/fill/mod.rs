//! The `fill` protocol (ARCHITECTURE.md): read request lines, compute their
//! computed fields, write canonical lines.

pub mod cis2;
pub mod dequant;
pub mod graph;
pub mod jpegai;
pub mod lowering;
pub mod recipe;
pub mod stage;

use crate::canon;
use crate::suite::Form;
use std::io::{BufRead, Read, Write};
use std::path::Path;

/// Fills one request line (no tree: a CIS-2 decode record is refused as a line error).
pub fn fill_line(line: &str) -> Result<String, String> {
    fill_line_in(line, None)
}

/// Fills one request line, by its form (`suite::Form::of`): a stage vector (`op`), a lowering record
/// (`lowering`), a jpegai scale-path record (`bundle`), a CIS-2 ops record (`fn`) or decode record
/// (`model`, its path relative to `tree`), a DetessDequant call (`buffers`) or numeric record (an
/// `in` holding `q`), or else a graph vector.
pub fn fill_line_in(line: &str, tree: Option<&Path>) -> Result<String, String> {
    let value: serde_json::Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    let filled = match Form::of(&value) {
        Form::Stage => stage::fill(&value)?,
        Form::Lowering => lowering::fill(&value)?,
        Form::ScalePath => jpegai::fill(&value)?,
        Form::Cis2Function => cis2::fill_op(&value)?,
        Form::Cis2Decode => cis2::fill_decode(&value, tree)?,
        Form::DequantCall => dequant::fill_call(&value)?,
        Form::DequantNumeric => dequant::fill_numeric(&value)?,
        Form::GraphVector => graph::fill(&value)?,
    };
    canon::to_line(&filled).map_err(|e| e.to_string())
}

/// Expands one scale record (docs/protocol.md, the scale tier): its recipes written out and its
/// outputs in full. Any other graph vector is filled as it is.
pub fn expand_line(line: &str) -> Result<String, String> {
    let value: serde_json::Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    canon::to_line(&graph::expand(&value)?).map_err(|e| e.to_string())
}

/// Fills every line of `input` into `output`. A bad line is reported on
/// `errors` as `line N: <what is wrong>` and skipped; the result is the number
/// of bad lines.
pub fn fill_stream(
    input: impl BufRead,
    output: impl Write,
    errors: impl Write,
    tree: Option<&Path>,
) -> std::io::Result<usize> {
    stream(input, output, errors, |line| fill_line_in(line, tree))
}

/// The longest request line any reader of the protocol takes (docs/protocol.md, "Line length"): one
/// tensor at the cap of §3, `2^26` elements, written out at 24 bytes each (the widest element,
/// `"-9223372036854775808",`, takes 23), and 1 MiB for the rest of the record.
pub const MAX_LINE: usize = 24 * (1 << 26) + (1 << 20);

/// Writes `each` of every line of `input` to `output`, as `fill_stream` does.
pub fn stream(
    input: impl BufRead,
    output: impl Write,
    errors: impl Write,
    each: impl Fn(&str) -> Result<String, String>,
) -> std::io::Result<usize> {
    stream_capped(input, output, errors, MAX_LINE, each)
}

/// [`stream`] with lines of at most `max_line` bytes: of a longer one, at most `max_line` bytes are
/// ever held; it is a bad line (`longer than … bytes`) and the rest of it is skipped unread.
pub fn stream_capped(
    mut input: impl BufRead,
    mut output: impl Write,
    mut errors: impl Write,
    max_line: usize,
    each: impl Fn(&str) -> Result<String, String>,
) -> std::io::Result<usize> {
    let mut bad = 0;
    let mut n = 0;
    while let Some(line) = next_line(&mut input, max_line)? {
        n += 1;
        // A line that is not UTF-8 is a bad line like any other, not the end of the stream.
        let filled = line
            .ok_or_else(|| format!("longer than {max_line} bytes"))
            .and_then(|line| String::from_utf8(line).map_err(|_| "not JSON: not UTF-8".to_string()))
            .and_then(|line| each(&line));
        match filled {
            Ok(filled) => output.write_all(filled.as_bytes())?,
            Err(e) => {
                bad += 1;
                writeln!(errors, "line {n}: {e}")?;
            }
        }
    }
    output.flush()?;
    Ok(bad)
}

/// The next line of `input` without its line feed (and a carriage return before it), `None` in
/// place of a line longer than `max` bytes (read to its end, never held); `None` at the end.
fn next_line(input: &mut impl BufRead, max: usize) -> std::io::Result<Option<Option<Vec<u8>>>> {
    let mut line = Vec::new();
    input.by_ref().take(max as u64).read_until(b'\n', &mut line)?;
    if line.last() == Some(&b'\n') {
        line.pop();
    } else if line.len() == max && !input.fill_buf()?.is_empty() {
        // `max` bytes and more to come: the line feed right after them ends a line of exactly `max`.
        if input.fill_buf()?[0] == b'\n' {
            input.consume(1);
        } else {
            input.skip_until(b'\n')?;
            return Ok(Some(None));
        }
    } else if line.is_empty() {
        return Ok(None);
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Ok(Some(Some(line)))
}
