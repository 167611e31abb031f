//! The `fill` protocol (ARCHITECTURE.md): read request lines, compute their
//! computed fields, write canonical lines.

pub mod graph;
pub mod jpegai;
pub mod json;
pub mod lowering;
pub mod stage;

use crate::canon;
use std::io::{BufRead, Write};

/// Fills one request line: a stage vector (it names an `op`), a lowering record (it names a
/// `lowering`), a jpegai scale-path record (it holds a `bundle`) or a graph vector.
pub fn fill_line(line: &str) -> Result<String, String> {
    let value: serde_json::Value = serde_json::from_str(line).map_err(|e| format!("not JSON: {e}"))?;
    let filled = if value.get("op").is_some() {
        stage::fill(&value)?
    } else {
        graph::fill(&value)?
    };
    canon::to_line(&filled).map_err(|e| e.to_string())
}

/// Fills every line of `input` into `output`. A bad line is reported on
/// `errors` as `line N: <what is wrong>` and skipped; the result is the number
/// of bad lines.
pub fn fill_stream(input: impl BufRead, mut output: impl Write, mut errors: impl Write) -> std::io::Result<usize> {
    let mut bad = 0;
    for (n, line) in input.lines().enumerate() {
        let line = line?;
        match fill_line(&line) {
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
