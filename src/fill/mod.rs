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
use std::io::{BufRead, Write};
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

/// Writes `each` of every line of `input` to `output`, as `fill_stream` does.
pub fn stream(
    input: impl BufRead,
    mut output: impl Write,
    mut errors: impl Write,
    each: impl Fn(&str) -> Result<String, String>,
) -> std::io::Result<usize> {
    let mut bad = 0;
    for (n, line) in input.split(b'\n').enumerate() {
        let mut line = line?;
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        // A line that is not UTF-8 is a bad line like any other, not the end of the stream.
        let filled = String::from_utf8(line)
            .map_err(|_| "not JSON: not UTF-8".to_string())
            .and_then(|line| each(&line));
        match filled {
            Ok(filled) => output.write_all(filled.as_bytes())?,
            Err(e) => {
                bad += 1;
                writeln!(errors, "line {}: {e}", n + 1)?;
            }
        }
    }
    output.flush()?;
    Ok(bad)
}
