//! §2 and §4: the model's three files — `model.safetensors`, `config.json`, `tokenizer.json`
//! (read in `tokenizer`) — and bf16 widening. Every check names the file and the field
//! (docs/assumptions.md C7–C9).

use super::arith::{Arith, F32, F64};
use super::reduce::Matrix;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// Why a decode is refused (docs/protocol.md, CIS-2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    ArtifactMalformed,
    ConfigUnsupported,
    TensorMismatch,
}

impl Code {
    pub fn as_str(self) -> &'static str {
        match self {
            Code::ArtifactMalformed => "artifact_malformed",
            Code::ConfigUnsupported => "config_unsupported",
            Code::TensorMismatch => "tensor_mismatch",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refuse {
    pub code: Code,
    pub why: String,
}

pub fn refuse<T>(code: Code, why: impl Into<String>) -> Result<T, Refuse> {
    Err(Refuse { code, why: why.into() })
}

/// The largest safetensors header read (docs/assumptions.md C9).
const MAX_HEADER: u64 = 100_000_000;

/// §4.1: a bf16 pattern widened by shifting it into the top half of a binary32.
pub fn widen_bf16(b: u16) -> F32 {
    F32(u32::from(b) << 16)
}

/// [`widen_bf16`] of a pattern stored as safetensors stores it, little-endian.
pub fn widen_bf16_le(b: [u8; 2]) -> F32 {
    widen_bf16(u16::from_le_bytes(b))
}

/// One tensor's header entry.
struct Entry {
    dtype: String,
    shape: Vec<u64>,
    begin: usize,
    end: usize,
}

/// A parsed `model.safetensors`: the header's entries over the data that follows it.
pub struct SafeTensors<'a> {
    entries: BTreeMap<String, Entry>,
    data: &'a [u8],
}

impl<'a> SafeTensors<'a> {
    pub fn parse(bytes: &'a [u8]) -> Result<SafeTensors<'a>, Refuse> {
        let bad = |why: String| refuse(Code::ArtifactMalformed, format!("model.safetensors: {why}"));
        let Some(len) = bytes.get(..8) else {
            return bad("shorter than its 8-byte header length".into());
        };
        let n = u64::from_le_bytes(len.try_into().expect("8 bytes"));
        if n > MAX_HEADER || n > (bytes.len() - 8) as u64 {
            return bad(format!(
                "a header of {n} bytes does not fit the file of {} bytes",
                bytes.len()
            ));
        }
        let header_end = 8 + n as usize;
        let header: Value = match serde_json::from_slice(&bytes[8..header_end]) {
            Ok(v) => v,
            Err(e) => return bad(format!("the header is not JSON: {e}")),
        };
        let Some(header) = header.as_object() else {
            return bad("the header is not a JSON object".into());
        };
        let data = &bytes[header_end..];
        let mut entries = BTreeMap::new();
        for (name, v) in header.iter().filter(|(k, _)| *k != "__metadata__") {
            match Self::entry(v, data.len()) {
                Ok(entry) => entries.insert(name.clone(), entry),
                Err(why) => return bad(format!("tensor {name}: {why}")),
            };
        }
        Ok(SafeTensors { entries, data })
    }

    fn entry(v: &Value, data_len: usize) -> Result<Entry, String> {
        let o = v.as_object().ok_or("not an object")?;
        let dtype = o
            .get("dtype")
            .and_then(Value::as_str)
            .ok_or("no dtype string")?
            .to_string();
        let shape: Vec<u64> = o
            .get("shape")
            .and_then(Value::as_array)
            .ok_or("no shape array")?
            .iter()
            .map(|d| d.as_u64().ok_or("a shape entry is not a non-negative integer"))
            .collect::<Result<_, _>>()?;
        let offsets: Vec<u64> = o
            .get("data_offsets")
            .and_then(Value::as_array)
            .filter(|a| a.len() == 2)
            .ok_or("no data_offsets pair")?
            .iter()
            .map(|d| d.as_u64().ok_or("an offset is not a non-negative integer"))
            .collect::<Result<_, _>>()?;
        let (begin, end) = (offsets[0], offsets[1]);
        if begin > end || end > data_len as u64 {
            return Err(format!(
                "data_offsets [{begin}, {end}] are not within the {data_len} data bytes"
            ));
        }
        if dtype == "BF16" {
            let elements = shape.iter().try_fold(1u64, |n, &d| n.checked_mul(d));
            if elements.and_then(|n| n.checked_mul(2)) != Some(end - begin) {
                return Err(format!("{} bytes for a BF16 tensor of shape {shape:?}", end - begin));
            }
        }
        Ok(Entry {
            dtype,
            shape,
            begin: begin as usize,
            end: end as usize,
        })
    }

    pub fn contains(&self, name: &str) -> bool {
        self.entries.contains_key(name)
    }

    /// The tensor `name`, which must be BF16 of exactly `shape`, widened (§4.2).
    pub fn tensor(&self, name: &str, shape: &[usize]) -> Result<Vec<F32>, Refuse> {
        Ok(self
            .bytes(name, shape)?
            .chunks_exact(2)
            .map(|b| widen_bf16_le([b[0], b[1]]))
            .collect())
    }

    /// The tensor `name` as a matrix read in place (widened as it is used); it must be BF16 of
    /// exactly `[rows, cols]`.
    pub fn matrix(&self, name: &str, rows: usize, cols: usize) -> Result<Matrix<'a>, Refuse> {
        Ok(Matrix::new(rows, cols, self.bytes(name, &[rows, cols])?))
    }

    /// The bytes of the tensor `name`; it must be BF16 of exactly `shape` (`tensor_mismatch`).
    fn bytes(&self, name: &str, shape: &[usize]) -> Result<&'a [u8], Refuse> {
        let Some(e) = self.entries.get(name) else {
            return refuse(Code::TensorMismatch, format!("model.safetensors: no tensor {name}"));
        };
        if e.dtype != "BF16" {
            return refuse(
                Code::TensorMismatch,
                format!("model.safetensors: tensor {name} is {}, not BF16", e.dtype),
            );
        }
        if e.shape.len() != shape.len() || e.shape.iter().zip(shape).any(|(&a, &b)| a != b as u64) {
            return refuse(
                Code::TensorMismatch,
                format!(
                    "model.safetensors: tensor {name} has shape {:?}, not {shape:?}",
                    e.shape
                ),
            );
        }
        Ok(&self.data[e.begin..e.end])
    }
}

/// §2.2's architecture parameters, read from `config.json` (docs/assumptions.md C7).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    pub hidden: usize,
    pub intermediate: usize,
    pub layers: usize,
    pub heads: usize,
    pub kv_heads: usize,
    pub vocab: usize,
    /// `max_position_embeddings`, optional (C7).
    pub max_positions: Option<usize>,
    /// §2.3: `rms_norm_eps as f32`.
    pub eps: F32,
    /// `rope_theta as f32`, §7.1.
    pub theta: F32,
    pub tied: bool,
}

impl Config {
    /// The JSON of `config.json`; only its syntax is checked here (`artifact_malformed`).
    pub fn json(bytes: &[u8]) -> Result<Map<String, Value>, Refuse> {
        match serde_json::from_slice::<Value>(bytes) {
            Ok(Value::Object(o)) => Ok(o),
            Ok(_) => refuse(Code::ArtifactMalformed, "config.json: not a JSON object"),
            Err(e) => refuse(Code::ArtifactMalformed, format!("config.json: not JSON: {e}")),
        }
    }

    /// The parameters, checked (`config_unsupported`).
    pub fn read(a: &impl Arith, o: &Map<String, Value>) -> Result<Config, Refuse> {
        let bad = |why: String| refuse(Code::ConfigUnsupported, format!("config.json: {why}"));
        let field = |k: &str| o.get(k).ok_or(format!("{k} is missing"));
        let size = |k: &str| -> Result<usize, String> {
            field(k)?
                .as_u64()
                .filter(|&n| n >= 1)
                .and_then(|n| usize::try_from(n).ok())
                .ok_or(format!("{k} is not a positive integer"))
        };
        let number = |k: &str| -> Result<F32, String> {
            let x = field(k)?.as_f64().ok_or(format!("{k} is not a number"))?;
            Ok(a.narrow(F64(x.to_bits())))
        };
        let flag = |k: &str| field(k)?.as_bool().ok_or(format!("{k} is not true or false"));
        let c = (|| -> Result<Config, String> {
            if field("hidden_act")?.as_str() != Some("silu") {
                return Err("hidden_act is not \"silu\" (§2.2)".into());
            }
            if o.get("rope_interleaved").is_some_and(|v| v != &Value::Bool(false)) {
                return Err("rope_interleaved is not false: only rotate-half is defined (§7.4)".into());
            }
            Ok(Config {
                hidden: size("hidden_size")?,
                intermediate: size("intermediate_size")?,
                layers: size("num_hidden_layers")?,
                heads: size("num_attention_heads")?,
                kv_heads: size("num_key_value_heads")?,
                vocab: size("vocab_size")?,
                max_positions: o
                    .contains_key("max_position_embeddings")
                    .then(|| size("max_position_embeddings"))
                    .transpose()?,
                eps: number("rms_norm_eps")?,
                theta: number("rope_theta")?,
                tied: flag("tie_word_embeddings")?,
            })
        })();
        let c = match c {
            Ok(c) => c,
            Err(why) => return bad(why),
        };
        if c.hidden % c.heads != 0 || c.heads % c.kv_heads != 0 || c.head_dim() % 2 != 0 {
            return bad(format!(
                "hidden_size {} over {} heads over {} kv heads does not give whole groups of an even head_dim (§2.2)",
                c.hidden, c.heads, c.kv_heads
            ));
        }
        Ok(c)
    }

    /// `hidden_size / num_attention_heads`.
    pub fn head_dim(&self) -> usize {
        self.hidden / self.heads
    }

    /// `num_attention_heads / num_key_value_heads`.
    pub fn group(&self) -> usize {
        self.heads / self.kv_heads
    }
}
