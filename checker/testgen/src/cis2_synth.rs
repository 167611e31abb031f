//! Small CIS-2 models written from scratch, for tests and timing: a safetensors file of seeded BF16
//! tensors in §2.5's names and shapes, a `config.json` (C7) and a byte-level BPE `tokenizer.json`
//! in the form C6 accepts, whose merges spell "Once", "Ġupon", "Ġa" and "Ġtime".

use serde_json::{Value, json};
use std::path::Path;
use wai_checker::cis2::tokenizer::byte_to_char;

/// A seeded linear congruential generator.
pub struct Lcg(pub u64);

impl Lcg {
    pub fn next_u32(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as u32
    }

    /// A bf16 bit pattern uniform in about `[-scale, scale]`.
    pub fn bf16(&mut self, scale: f32) -> u16 {
        let u = (self.next_u32() % 20001) as f32 / 10000.0 - 1.0;
        ((u * scale).to_bits() >> 16) as u16
    }
}

/// A model's shape.
#[derive(Clone, Debug)]
pub struct Spec {
    pub hidden: usize,
    pub inter: usize,
    pub layers: usize,
    pub heads: usize,
    pub kv_heads: usize,
    pub vocab: usize,
    pub max_pos: usize,
    pub tie: bool,
    /// `q_proj.bias` and `k_proj.bias` in every layer.
    pub bias: bool,
}

impl Spec {
    /// A small model: hidden 8, 2 heads sharing 1 KV head, 2 layers, 320 tokens.
    pub fn small() -> Spec {
        Spec {
            hidden: 8,
            inter: 12,
            layers: 2,
            heads: 2,
            kv_heads: 1,
            vocab: 320,
            max_pos: 64,
            tie: true,
            bias: false,
        }
    }

    /// SmolLM2-135M's shape (§2.2), for timing.
    pub fn smollm2_shape() -> Spec {
        Spec {
            hidden: 576,
            inter: 1536,
            layers: 30,
            heads: 9,
            kv_heads: 3,
            vocab: 49152,
            max_pos: 8192,
            tie: true,
            bias: false,
        }
    }

    /// The tensors' names and shapes, in §2.5's order.
    pub fn tensors(&self) -> Vec<(String, Vec<u64>)> {
        let (h, i, v) = (self.hidden as u64, self.inter as u64, self.vocab as u64);
        let kv = (self.kv_heads * (self.hidden / self.heads)) as u64;
        let mut t = vec![("model.embed_tokens.weight".to_string(), vec![v, h])];
        for l in 0..self.layers {
            let p = format!("model.layers.{l}.");
            t.push((format!("{p}input_layernorm.weight"), vec![h]));
            t.push((format!("{p}post_attention_layernorm.weight"), vec![h]));
            t.push((format!("{p}self_attn.q_proj.weight"), vec![h, h]));
            t.push((format!("{p}self_attn.k_proj.weight"), vec![kv, h]));
            t.push((format!("{p}self_attn.v_proj.weight"), vec![kv, h]));
            t.push((format!("{p}self_attn.o_proj.weight"), vec![h, h]));
            t.push((format!("{p}mlp.gate_proj.weight"), vec![i, h]));
            t.push((format!("{p}mlp.up_proj.weight"), vec![i, h]));
            t.push((format!("{p}mlp.down_proj.weight"), vec![h, i]));
            if self.bias {
                t.push((format!("{p}self_attn.q_proj.bias"), vec![h]));
                t.push((format!("{p}self_attn.k_proj.bias"), vec![kv]));
            }
        }
        t.push(("model.norm.weight".to_string(), vec![h]));
        if !self.tie {
            t.push(("lm_head.weight".to_string(), vec![v, h]));
        }
        t
    }

    /// `config.json`'s members.
    pub fn config(&self) -> Value {
        json!({
            "architectures": ["LlamaForCausalLM"],
            "hidden_size": self.hidden,
            "intermediate_size": self.inter,
            "num_hidden_layers": self.layers,
            "num_attention_heads": self.heads,
            "num_key_value_heads": self.kv_heads,
            "hidden_act": "silu",
            "rms_norm_eps": 1e-05,
            "rope_theta": 10000.0,
            "rope_interleaved": false,
            "max_position_embeddings": self.max_pos,
            "tie_word_embeddings": self.tie,
            "torch_dtype": "bfloat16",
            "vocab_size": self.vocab
        })
    }
}

/// A safetensors file of BF16 tensors with seeded values (norm gains near 1, the rest in ±0.5).
pub fn safetensors(list: &[(String, Vec<u64>)], seed: u64) -> Vec<u8> {
    let mut rng = Lcg(seed);
    let mut header = serde_json::Map::new();
    let mut data = Vec::new();
    for (name, shape) in list {
        let n: u64 = shape.iter().product();
        let begin = data.len();
        data.reserve(2 * n as usize);
        for _ in 0..n {
            let b = if name.contains("norm") {
                ((1.0f32 + f32::from_bits(u32::from(rng.bf16(0.25)) << 16)).to_bits() >> 16) as u16
            } else {
                rng.bf16(0.5)
            };
            data.extend_from_slice(&b.to_le_bytes());
        }
        header.insert(
            name.clone(),
            json!({"dtype": "BF16", "shape": shape, "data_offsets": [begin, data.len()]}),
        );
    }
    header.insert("__metadata__".into(), json!({"format": "pt"}));
    let h = serde_json::to_vec(&Value::Object(header)).expect("JSON");
    let mut out = (h.len() as u64).to_le_bytes().to_vec();
    out.extend_from_slice(&h);
    out.extend_from_slice(&data);
    out
}

/// A byte-level BPE tokenizer: `<|endoftext|>` is id 0 (and an added token), byte `b`'s character
/// id `b + 1`, then the merges' results from 257.
pub fn tokenizer_json() -> Value {
    let map = byte_to_char();
    let mut vocab = serde_json::Map::new();
    vocab.insert("<|endoftext|>".into(), json!(0));
    for (b, c) in map.iter().enumerate() {
        vocab.insert(c.to_string(), json!(b + 1));
    }
    let mut merges = Vec::new();
    let mut next = 257;
    for word in ["Once", "Ġupon", "Ġa", "Ġtime"] {
        let chars: Vec<char> = word.chars().collect();
        let mut acc = chars[0].to_string();
        for c in &chars[1..] {
            merges.push(format!("{acc} {c}"));
            acc.push(*c);
            if !vocab.contains_key(&acc) {
                vocab.insert(acc.clone(), json!(next));
                next += 1;
            }
        }
    }
    json!({
        "version": "1.0",
        "truncation": null,
        "padding": null,
        "added_tokens": [{"id": 0, "content": "<|endoftext|>", "single_word": false, "lstrip": false,
                          "rstrip": false, "normalized": false, "special": true}],
        "normalizer": null,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Digits", "individual_digits": true},
            {"type": "ByteLevel", "add_prefix_space": false, "trim_offsets": true, "use_regex": true}]},
        "post_processor": null,
        "decoder": {"type": "ByteLevel", "add_prefix_space": true, "trim_offsets": true, "use_regex": true},
        "model": {"type": "BPE", "dropout": null, "unk_token": null, "continuing_subword_prefix": null,
                  "end_of_word_suffix": null, "fuse_unk": false, "byte_fallback": false,
                  "ignore_merges": false, "vocab": vocab, "merges": merges}
    })
}

/// Writes the three files of a model of shape `s` into `dir`.
pub fn write_model(dir: &Path, s: &Spec, seed: u64) -> std::io::Result<()> {
    std::fs::write(dir.join("model.safetensors"), safetensors(&s.tensors(), seed))?;
    std::fs::write(
        dir.join("config.json"),
        serde_json::to_vec_pretty(&s.config()).expect("JSON"),
    )?;
    std::fs::write(
        dir.join("tokenizer.json"),
        serde_json::to_vec(&tokenizer_json()).expect("JSON"),
    )
}
