//! The model folder: safetensors (docs/assumptions.md C9), `config.json` (§2.2, §2.3, C7), the
//! tensors of §2.5 (C8), the vectors widened by §4.1's shift and the matrices kept as bf16 bits
//! ([`bf16`]), and the refusal codes of docs/protocol.md.

use super::bf16;
use serde_json::Value;
use std::collections::HashMap;

/// A refused decode (docs/protocol.md "cis2/decode.jsonl") and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    ArtifactMalformed(String),
    ConfigUnsupported(String),
    TensorMismatch(String),
}

impl Refusal {
    pub fn code(&self) -> &'static str {
        match self {
            Refusal::ArtifactMalformed(_) => "artifact_malformed",
            Refusal::ConfigUnsupported(_) => "config_unsupported",
            Refusal::TensorMismatch(_) => "tensor_mismatch",
        }
    }

    pub fn reason(&self) -> &str {
        match self {
            Refusal::ArtifactMalformed(s) | Refusal::ConfigUnsupported(s) | Refusal::TensorMismatch(s) => s,
        }
    }
}

/// §4.1: a bf16 bit pattern widened to binary32 by a 16-bit shift.
#[inline]
pub fn widen_bf16(b: u16) -> f32 {
    f32::from_bits(u32::from(b) << 16)
}

/// One tensor's header entry.
#[derive(Clone, Debug)]
pub struct Entry {
    pub dtype: String,
    pub shape: Vec<u64>,
    /// Byte range in the file (already offset by the data's start).
    pub begin: usize,
    pub end: usize,
}

/// A safetensors file, checked (C9).
pub struct SafeTensors<'a> {
    pub bytes: &'a [u8],
    pub entries: HashMap<String, Entry>,
}

/// The greatest header length accepted (C9: "at most 100 MB").
pub const MAX_HEADER: u64 = 100_000_000;

fn u64_of(v: &Value) -> Option<u64> {
    v.as_u64()
}

/// C9: reads and checks the header; every failure is `artifact_malformed`.
pub fn safetensors(bytes: &[u8]) -> Result<SafeTensors<'_>, String> {
    if bytes.len() < 8 {
        return Err(format!(
            "model.safetensors: {} bytes, too short for the header length",
            bytes.len()
        ));
    }
    let n = u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"));
    if n > MAX_HEADER {
        return Err(format!("model.safetensors: header length {n} exceeds {MAX_HEADER}"));
    }
    let rest = (bytes.len() - 8) as u64;
    if n > rest {
        return Err(format!(
            "model.safetensors: header length {n} exceeds the file's {rest} bytes after it"
        ));
    }
    let data_start = 8 + n as usize;
    let data_len = (bytes.len() - data_start) as u64;
    let header: Value = serde_json::from_slice(&bytes[8..data_start])
        .map_err(|e| format!("model.safetensors: the header is not JSON: {e}"))?;
    let Some(obj) = header.as_object() else {
        return Err("model.safetensors: the header is not a JSON object".into());
    };
    let mut entries = HashMap::new();
    for (name, v) in obj {
        if name == "__metadata__" {
            continue;
        }
        let bad = |what: &str| format!("model.safetensors: tensor {name:?}: {what}");
        let Some(m) = v.as_object() else {
            return Err(bad("its entry is not an object"));
        };
        let Some(dtype) = m.get("dtype").and_then(Value::as_str) else {
            return Err(bad("dtype missing or not a string"));
        };
        let Some(shape_v) = m.get("shape").and_then(Value::as_array) else {
            return Err(bad("shape missing or not an array"));
        };
        let shape: Vec<u64> = shape_v
            .iter()
            .map(u64_of)
            .collect::<Option<_>>()
            .ok_or_else(|| bad("a shape dimension that is not a non-negative integer"))?;
        let offs = m
            .get("data_offsets")
            .and_then(Value::as_array)
            .filter(|a| a.len() == 2)
            .ok_or_else(|| bad("data_offsets missing or not two values"))?;
        let (Some(b), Some(e)) = (u64_of(&offs[0]), u64_of(&offs[1])) else {
            return Err(bad("data_offsets not non-negative integers"));
        };
        if b > e || e > data_len {
            return Err(bad(&format!(
                "data_offsets [{b}, {e}] outside the data's {data_len} bytes"
            )));
        }
        if dtype == "BF16" {
            let elems = shape.iter().try_fold(1u128, |p, &d| p.checked_mul(u128::from(d)));
            if elems.and_then(|p| p.checked_mul(2)) != Some(u128::from(e - b)) {
                return Err(bad(&format!(
                    "data_offsets [{b}, {e}] do not hold 2 bytes per element of {shape:?}"
                )));
            }
        }
        entries.insert(
            name.clone(),
            Entry {
                dtype: dtype.to_string(),
                shape,
                begin: data_start + b as usize,
                end: data_start + e as usize,
            },
        );
    }
    Ok(SafeTensors { bytes, entries })
}

/// The raw text of each top-level member of a JSON object that is a number, the last one of a
/// repeated key (as serde_json keeps). The text must already be valid JSON.
pub fn top_level_number_texts(text: &str) -> HashMap<String, String> {
    struct S<'a> {
        b: &'a [u8],
        i: usize,
    }
    impl S<'_> {
        fn ws(&mut self) {
            while self.i < self.b.len() && matches!(self.b[self.i], b' ' | b'\t' | b'\n' | b'\r') {
                self.i += 1;
            }
        }
        /// A string at `i` (on its quote), decoded.
        fn string(&mut self) -> String {
            let start = self.i;
            self.i += 1;
            while self.i < self.b.len() && self.b[self.i] != b'"' {
                if self.b[self.i] == b'\\' {
                    self.i += 1;
                }
                self.i += 1;
            }
            self.i += 1;
            let raw = std::str::from_utf8(&self.b[start..self.i.min(self.b.len())]).unwrap_or("\"\"");
            serde_json::from_str::<String>(raw).unwrap_or_default()
        }
        /// Skips one value; returns its text when it is a number.
        fn value(&mut self) -> Option<String> {
            self.ws();
            let start = self.i;
            match self.b.get(self.i) {
                Some(b'"') => {
                    self.string();
                    None
                }
                Some(b'{' | b'[') => {
                    let mut depth = 0usize;
                    while self.i < self.b.len() {
                        match self.b[self.i] {
                            b'"' => {
                                self.string();
                                continue;
                            }
                            b'{' | b'[' => depth += 1,
                            b'}' | b']' => {
                                depth -= 1;
                                if depth == 0 {
                                    self.i += 1;
                                    return None;
                                }
                            }
                            _ => {}
                        }
                        self.i += 1;
                    }
                    None
                }
                Some(c) if *c == b'-' || c.is_ascii_digit() => {
                    while self.i < self.b.len()
                        && matches!(self.b[self.i], b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')
                    {
                        self.i += 1;
                    }
                    std::str::from_utf8(&self.b[start..self.i]).ok().map(str::to_string)
                }
                _ => {
                    while self.i < self.b.len() && self.b[self.i].is_ascii_alphabetic() {
                        self.i += 1;
                    }
                    None
                }
            }
        }
    }
    let mut s = S {
        b: text.as_bytes(),
        i: 0,
    };
    let mut out = HashMap::new();
    s.ws();
    if s.b.get(s.i) != Some(&b'{') {
        return out;
    }
    s.i += 1;
    loop {
        s.ws();
        match s.b.get(s.i) {
            Some(b'"') => {}
            _ => return out,
        }
        let key = s.string();
        s.ws();
        s.i += 1; // ':'
        match s.value() {
            Some(num) => {
                out.insert(key, num);
            }
            None => {
                out.remove(&key);
            }
        }
        s.ws();
        if s.b.get(s.i) == Some(&b',') {
            s.i += 1;
        } else {
            return out;
        }
    }
}

/// `config.json`'s values (C7). `eps` and `theta` are the binary64 nearest the JSON numbers; the
/// decode narrows them under its tininess rule (§2.3).
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub hidden: usize,
    pub inter: usize,
    pub layers: usize,
    pub heads: usize,
    pub kv_heads: usize,
    pub head_dim: usize,
    pub eps: f64,
    pub theta: f64,
    /// `max_position_embeddings`, optional (C7).
    pub max_pos: Option<u64>,
    pub tie: bool,
    pub vocab: usize,
}

/// `config.json` read as JSON: `artifact_malformed` when it is not a JSON object.
pub fn config_json(bytes: &[u8]) -> Result<Value, String> {
    let v: Value = serde_json::from_slice(bytes).map_err(|e| format!("config.json: not JSON: {e}"))?;
    if !v.is_object() {
        return Err("config.json: not a JSON object".into());
    }
    Ok(v)
}

/// C7's checks of the values: every failure is `config_unsupported`.
pub fn config(v: &Value, text: &[u8]) -> Result<Config, String> {
    let m = v.as_object().expect("checked by config_json");
    let get = |k: &str| m.get(k).ok_or_else(|| format!("config.json: {k} missing"));
    let size = |k: &str| -> Result<usize, String> {
        match get(k)?.as_u64() {
            Some(n) if n >= 1 => usize::try_from(n).map_err(|_| format!("config.json: {k} = {n} too large")),
            _ => Err(format!("config.json: {k} is not an integer of at least 1")),
        }
    };
    let hidden = size("hidden_size")?;
    let inter = size("intermediate_size")?;
    let layers = size("num_hidden_layers")?;
    let heads = size("num_attention_heads")?;
    let kv_heads = size("num_key_value_heads")?;
    match get("hidden_act")?.as_str() {
        Some("silu") => {}
        _ => return Err("config.json: hidden_act is not \"silu\"".into()),
    }
    let texts = top_level_number_texts(std::str::from_utf8(text).unwrap_or(""));
    let number = |k: &str| -> Result<f64, String> {
        let val = get(k)?;
        if !val.is_number() {
            return Err(format!("config.json: {k} is not a number"));
        }
        // The nearest binary64, from the number's own text (std's parse rounds correctly).
        match texts.get(k).and_then(|t| t.parse::<f64>().ok()) {
            Some(x) => Ok(x),
            None => val.as_f64().ok_or_else(|| format!("config.json: {k} is not a number")),
        }
    };
    let eps = number("rms_norm_eps")?;
    let theta = number("rope_theta")?;
    // Optional (C7): absent, the decode's positions are bounded by §7.3's exact cast alone.
    let max_pos = match m.get("max_position_embeddings") {
        None if fault!("cis2-max-positions-required", false, true) => {
            return Err("config.json: max_position_embeddings missing".into());
        }
        None => None,
        Some(v) => match v.as_u64() {
            Some(n) if n >= 1 => Some(n),
            _ => return Err("config.json: max_position_embeddings is not an integer of at least 1".into()),
        },
    };
    let tie = get("tie_word_embeddings")?
        .as_bool()
        .ok_or("config.json: tie_word_embeddings is not a boolean")?;
    let vocab = size("vocab_size")?;
    match m.get("rope_interleaved") {
        None | Some(Value::Bool(false)) => {}
        Some(Value::Bool(true)) => {
            return Err("config.json: rope_interleaved = true (only rotate-half is defined)".into());
        }
        Some(_) => return Err("config.json: rope_interleaved is not a boolean".into()),
    }
    if !hidden.is_multiple_of(heads) {
        return Err(format!(
            "config.json: hidden_size {hidden} is not a multiple of num_attention_heads {heads}"
        ));
    }
    if !heads.is_multiple_of(kv_heads) {
        return Err(format!(
            "config.json: num_attention_heads {heads} is not a multiple of num_key_value_heads {kv_heads}"
        ));
    }
    let head_dim = hidden / heads;
    if head_dim % 2 != 0 {
        return Err(format!("config.json: head_dim {head_dim} is odd"));
    }
    Ok(Config {
        hidden,
        inter,
        layers,
        heads,
        kv_heads,
        head_dim,
        eps,
        theta,
        max_pos,
        tie,
        vocab,
    })
}

/// Where one matrix of §2.5 lies in [`Weights`]' buffer: `2·rows·cols` bytes from `begin`, its
/// bf16 bits in [`bf16`]'s layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MatAt {
    pub rows: usize,
    pub cols: usize,
    pub begin: usize,
}

impl MatAt {
    fn end(&self) -> usize {
        self.begin + 2 * self.rows * self.cols
    }
}

/// One layer's weights: the norms' gains and the biases widened (§4.2), the matrices as bf16 bits.
pub struct Layer {
    pub ln1: Vec<f32>,
    pub ln2: Vec<f32>,
    pub q: MatAt,
    pub k: MatAt,
    pub v: MatAt,
    pub o: MatAt,
    pub gate: MatAt,
    pub up: MatAt,
    pub down: MatAt,
    pub q_bias: Option<Vec<f32>>,
    pub k_bias: Option<Vec<f32>>,
    pub v_bias: Option<Vec<f32>>,
}

/// The model's weights: vectors widened (§4.2), matrices kept as bf16 bits and widened where read
/// (§4.1, exact: see [`bf16`]).
pub struct Weights {
    /// The matrices' bytes: the safetensors file's own buffer, its matrices regrouped in place
    /// ([`Weights::adopt`]).
    data: Vec<u8>,
    pub embed: MatAt,
    pub layers: Vec<Layer>,
    pub norm: Vec<f32>,
    /// `Some` when untied (§11.1).
    pub lm_head: Option<MatAt>,
}

impl Weights {
    /// A matrix of these weights.
    pub fn mat(&self, m: MatAt) -> bf16::Mat<'_> {
        bf16::Mat::new(&self.data[m.begin..m.end()], m.rows, m.cols)
    }

    /// §11.1's head: `lm_head` when untied, else the embedding.
    pub fn lm_head(&self) -> bf16::Mat<'_> {
        self.mat(self.lm_head.unwrap_or(self.embed))
    }

    /// Token `t`'s embedding row, widened.
    pub fn embedding(&self, t: usize) -> Vec<f32> {
        self.mat(self.embed).row(t)
    }

    fn mats(&mut self) -> impl Iterator<Item = &mut MatAt> {
        let layers = self.layers.iter_mut().flat_map(|l| {
            [
                &mut l.q,
                &mut l.k,
                &mut l.v,
                &mut l.o,
                &mut l.gate,
                &mut l.up,
                &mut l.down,
            ]
        });
        std::iter::once(&mut self.embed)
            .chain(layers)
            .chain(self.lm_head.as_mut())
    }

    /// Takes the safetensors file's bytes ([`weights`] located the matrices in them) and regroups
    /// each matrix in place. Should two matrices' byte ranges overlap (C9 does not forbid it),
    /// each matrix is copied out to a buffer of its own first, so each is regrouped once.
    pub fn adopt(mut self, file: Vec<u8>) -> Weights {
        let mut ranges: Vec<(usize, usize)> = self.mats().map(|m| (m.begin, m.end())).collect();
        ranges.sort_unstable();
        let disjoint = ranges.windows(2).all(|p| p[0].1 <= p[1].0);
        self.data = if disjoint {
            file
        } else {
            let mut data = Vec::new();
            for m in self.mats() {
                let at = data.len();
                data.extend_from_slice(&file[m.begin..m.end()]);
                m.begin = at;
            }
            data
        };
        let mats: Vec<MatAt> = self.mats().map(|m| *m).collect();
        for m in mats {
            let (begin, end) = (m.begin, m.end());
            bf16::regroup(&mut self.data[begin..end], m.rows, m.cols);
        }
        self
    }
}

/// C8: the tensors of §2.5 (and the optional biases and untied head) in §2.5's order; every
/// failure is `tensor_mismatch`. The vectors are widened; the matrices are located in the file,
/// and their bytes are taken by [`Weights::adopt`].
pub fn weights(st: &SafeTensors<'_>, c: &Config) -> Result<Weights, String> {
    let kv = c.kv_heads * c.head_dim;
    let (h, i, v) = (c.hidden as u64, c.inter as u64, c.vocab as u64);
    let kv = kv as u64;
    let entry = |name: &str, shape: &[u64]| -> Result<&Entry, String> {
        let e = st.entries.get(name).ok_or_else(|| format!("{name}: missing"))?;
        if e.dtype != "BF16" {
            return Err(format!("{name}: dtype {} is not BF16", e.dtype));
        }
        if e.shape != shape {
            return Err(format!("{name}: shape {:?} is not {shape:?}", e.shape));
        }
        Ok(e)
    };
    let widen = |e: &Entry| -> Vec<f32> {
        st.bytes[e.begin..e.end]
            .chunks_exact(2)
            .map(|p| widen_bf16(u16::from_le_bytes([p[0], p[1]])))
            .collect()
    };
    let load = |name: &str, shape: &[u64]| -> Result<Vec<f32>, String> { entry(name, shape).map(widen) };
    let load_opt = |name: &str, shape: &[u64]| -> Result<Option<Vec<f32>>, String> {
        if st.entries.contains_key(name) {
            load(name, shape).map(Some)
        } else {
            Ok(None)
        }
    };
    // A matrix: its shape checked (the sizes fit in usize: its bytes are in the file).
    let mat = |name: &str, shape: &[u64; 2]| -> Result<MatAt, String> {
        let e = entry(name, shape)?;
        Ok(MatAt {
            rows: shape[0] as usize,
            cols: shape[1] as usize,
            begin: e.begin,
        })
    };
    let embed = mat("model.embed_tokens.weight", &[v, h])?;
    let mut layers = Vec::new(); // no capacity from the config: its tensors are not checked yet
    for l in 0..c.layers {
        let p = format!("model.layers.{l}.");
        let ln1 = load(&format!("{p}input_layernorm.weight"), &[h])?;
        let ln2 = load(&format!("{p}post_attention_layernorm.weight"), &[h])?;
        let q = mat(&format!("{p}self_attn.q_proj.weight"), &[h, h])?;
        let q_bias = load_opt(&format!("{p}self_attn.q_proj.bias"), &[h])?;
        let k = mat(&format!("{p}self_attn.k_proj.weight"), &[kv, h])?;
        let k_bias = load_opt(&format!("{p}self_attn.k_proj.bias"), &[kv])?;
        let vw = mat(&format!("{p}self_attn.v_proj.weight"), &[kv, h])?;
        let v_bias = load_opt(&format!("{p}self_attn.v_proj.bias"), &[kv])?;
        let o = mat(&format!("{p}self_attn.o_proj.weight"), &[h, h])?;
        let gate = mat(&format!("{p}mlp.gate_proj.weight"), &[i, h])?;
        let up = mat(&format!("{p}mlp.up_proj.weight"), &[i, h])?;
        let down = mat(&format!("{p}mlp.down_proj.weight"), &[h, i])?;
        layers.push(Layer {
            ln1,
            ln2,
            q,
            k,
            v: vw,
            o,
            gate,
            up,
            down,
            q_bias,
            k_bias,
            v_bias,
        });
    }
    let norm = load("model.norm.weight", &[h])?;
    let lm_head = if c.tie {
        if st.entries.contains_key("lm_head.weight") {
            return Err("lm_head.weight: present with tie_word_embeddings = true".into());
        }
        None
    } else {
        Some(mat("lm_head.weight", &[v, h])?)
    };
    Ok(Weights {
        data: Vec::new(),
        embed,
        layers,
        norm,
        lm_head,
    })
}
