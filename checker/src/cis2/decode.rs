//! The decode: the model folder opened and checked in docs/protocol.md's order, the prompt
//! tokenized and checked, the forward pass of §8–§11 with a KV cache (§3.5), the greedy loop of
//! §3.4 and the digests of §12.1 (the witness chain in its corrected order, C4) and §12.2.

use super::arith::{Rule, canonical_nan};
use super::artifact::{self, Config, MatAt, Refusal, Weights};
use super::pinned::{rsqrt, silu, table_digest};
use super::reduce::{Workers, argmax, dot_seq, matmul_on, rmsnorm, softmax};
use super::rope;
use super::tokenizer::{self, Tokenizer};
use sha2::{Digest, Sha256};
use std::path::Path;

/// The SHA-256 of the three files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hashes {
    pub weights: [u8; 32],
    pub tokenizer: [u8; 32],
    pub config: [u8; 32],
}

/// The three files of a model folder, read.
pub struct Files {
    pub safetensors: Vec<u8>,
    pub config: Vec<u8>,
    pub tokenizer: Vec<u8>,
}

pub const FILE_NAMES: [&str; 3] = ["model.safetensors", "config.json", "tokenizer.json"];

impl Files {
    /// Reads the folder's three files; a file that cannot be read is an error naming it.
    pub fn read(dir: &Path) -> Result<Files, String> {
        let read = |name: &str| {
            let p = dir.join(name);
            std::fs::read(&p).map_err(|e| format!("cannot read {}: {e}", p.display()))
        };
        Ok(Files {
            safetensors: read(FILE_NAMES[0])?,
            config: read(FILE_NAMES[1])?,
            tokenizer: read(FILE_NAMES[2])?,
        })
    }

    pub fn hashes(&self) -> Hashes {
        Hashes {
            weights: Sha256::digest(&self.safetensors).into(),
            tokenizer: Sha256::digest(&self.tokenizer).into(),
            config: Sha256::digest(&self.config).into(),
        }
    }
}

/// A model, checked; its vectors widened, its matrices kept as bf16 bits ([`super::bf16`]).
pub struct Artifact {
    pub config: Config,
    pub weights: Weights,
    pub tokenizer: Tokenizer,
    pub hashes: Hashes,
}

/// Checks the files in docs/protocol.md's order — the formats (safetensors, config, tokenizer),
/// then the config's values, then the tensors in §2.5's order — and keeps the weights. The
/// safetensors file's buffer becomes the weights' (its matrices regrouped in place), so the model
/// is in memory once; [`Artifact::hashes`] are the files' as read.
pub fn open(files: Files) -> Result<Artifact, Refusal> {
    let hashes = files.hashes();
    let st = artifact::safetensors(&files.safetensors).map_err(Refusal::ArtifactMalformed)?;
    let cfg_json = artifact::config_json(&files.config).map_err(Refusal::ArtifactMalformed)?;
    let tokenizer = tokenizer::load(&files.tokenizer).map_err(Refusal::ArtifactMalformed)?;
    let config = artifact::config(&cfg_json, &files.config).map_err(Refusal::ConfigUnsupported)?;
    let weights = artifact::weights(&st, &config).map_err(Refusal::TensorMismatch)?;
    drop(st);
    Ok(Artifact {
        config,
        weights: weights.adopt(files.safetensors),
        tokenizer,
        hashes,
    })
}

/// The largest position §7.3's cast to `f32` keeps exact: every integer up to 2^24 is exact in
/// binary32, 2^24 + 1 is not (C7).
pub const MAX_EXACT_POSITION: u128 = 1 << 24;

/// C7's bound on a decode's positions, on the counts alone: `prompt_toks` prompt tokens and
/// `gen_toks` steps use positions `0 … prompt_toks + gen_toks − 1` (§3.4), so the decode is
/// `config_unsupported` when the prompt has no token, or when that last position is past
/// `max_position_embeddings − 1` (when the config has the field) or past 2^24 (always). Compared
/// in 128 bits, saturating: a `gen_toks` past any machine word is refused, and nothing is
/// allocated per position.
pub fn check_positions(prompt_toks: usize, gen_toks: u128, max_pos: Option<u64>) -> Result<(), Refusal> {
    if prompt_toks == 0 {
        return Err(Refusal::ConfigUnsupported("the prompt has no token".into()));
    }
    let last = (prompt_toks as u128 - 1).saturating_add(gen_toks);
    let steps = if gen_toks == u128::MAX {
        "at least 2^127".to_string()
    } else {
        gen_toks.to_string()
    };
    if let Some(max) = max_pos
        && last > u128::from(max) - 1
    {
        return Err(Refusal::ConfigUnsupported(format!(
            "{prompt_toks} prompt tokens and {steps} generated reach position {last}, past max_position_embeddings {max} − 1"
        )));
    }
    if last > MAX_EXACT_POSITION {
        return Err(Refusal::ConfigUnsupported(format!(
            "{prompt_toks} prompt tokens and {steps} generated reach position {last}, past 2^24, \
             the last position §7.3 casts to f32 exactly"
        )));
    }
    Ok(())
}

/// The prompt's ids, checked last (after the files, the config and the tensors): a prompt with
/// no token (none at all, or only characters §3.1.5.b drops, C6), positions past C7's bounds
/// ([`check_positions`]), or an id with no embedding row, is `config_unsupported`. `gen_toks` is
/// the request's count, any size (one of 2^127 or more may be given as `u128::MAX`).
pub fn prompt_ids(art: &Artifact, prompt: &str, gen_toks: u128) -> Result<Vec<u32>, Refusal> {
    let ids = art.tokenizer.encode(prompt).map_err(Refusal::ArtifactMalformed)?;
    check_positions(ids.len(), gen_toks, art.config.max_pos)?;
    if let Some(&t) = ids.iter().find(|&&t| t as usize >= art.config.vocab) {
        return Err(Refusal::ConfigUnsupported(format!(
            "prompt token id {t} is not below vocab_size {}",
            art.config.vocab
        )));
    }
    Ok(ids)
}

/// A decode's results.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Receipt {
    pub table_digest: [u8; 32],
    pub inv_freq_digest: [u8; 32],
    pub prompt_ids: Vec<u32>,
    pub generated: Vec<u32>,
    pub argmax_digest: [u8; 32],
    pub witness: [u8; 32],
}

struct Forward<'a, 'w, R: Rule> {
    art: &'a Artifact,
    workers: &'w Workers<'a>,
    eps: f32,
    inv_freq: Vec<f32>,
    scale: f32,
    /// Per layer, post-RoPE keys and values, position after position.
    k_cache: Vec<Vec<f32>>,
    v_cache: Vec<Vec<f32>>,
    _rule: std::marker::PhantomData<R>,
}

fn add_in_place(h: &mut [f32], d: &[f32]) {
    for (a, &b) in h.iter_mut().zip(d) {
        *a = *a + b;
    }
}

impl<R: Rule> Forward<'_, '_, R> {
    /// §9.2–§9.4 for one query `q` of layer `l` against the cached positions (the causal window:
    /// the cache holds exactly the positions up to the query's).
    fn attend(&self, l: usize, q: &[f32]) -> Vec<f32> {
        let c = &self.art.config;
        let hd = c.head_dim;
        let kvd = c.kv_heads * hd;
        let group = c.heads / c.kv_heads;
        let (kc, vc) = (&self.k_cache[l], &self.v_cache[l]);
        let n = kc.len() / kvd;
        let mut attn = vec![0.0f32; c.hidden];
        let mut scores = vec![0.0f32; n];
        for qh in 0..c.heads {
            let kvh = qh / group;
            let q_head = &q[qh * hd..(qh + 1) * hd];
            for (j, s) in scores.iter_mut().enumerate() {
                let k_j = &kc[j * kvd + kvh * hd..j * kvd + (kvh + 1) * hd];
                let d = dot_seq::<R>(q_head, k_j);
                *s = R::mul(d, self.scale);
            }
            softmax::<R>(&mut scores);
            for d in 0..hd {
                let mut acc = 0.0f32;
                for (j, &p) in scores.iter().enumerate() {
                    let prod = R::mul(p, vc[j * kvd + kvh * hd + d]);
                    acc = acc + prod;
                }
                attn[qh * hd + d] = acc;
            }
        }
        attn
    }

    /// The tokens at positions `first, first + 1, …` through every layer (§9, §10), together: each
    /// matvec streams its weights once for all of them, every position's products and sums as
    /// its own single-position pass would do them. Attention runs position after position, each
    /// position's key and value appended to the cache just before its own attention, so each sees
    /// exactly the positions up to its own (§9.2). The logits (§11.1) of the last one when asked for.
    fn steps(&mut self, tokens: &[u32], first: usize, logits: bool) -> Result<Option<Vec<f32>>, String> {
        let c = &self.art.config;
        let w = &self.art.weights;
        let hd = c.head_dim;
        let mut hs: Vec<Vec<f32>> = tokens.iter().map(|&t| w.embedding(t as usize)).collect();
        let tables: Vec<(Vec<f32>, Vec<f32>)> = (0..tokens.len())
            .map(|p| rope::tables::<R>(&self.inv_freq, (first + p) as f32))
            .collect();
        for (l, lw) in w.layers.iter().enumerate() {
            let ln1: Vec<Vec<f32>> = hs.iter().map(|h| rmsnorm::<R>(h, &lw.ln1, self.eps)).collect();
            let [mut qs, mut ks, vs] = self.matmul([lw.q, lw.k, lw.v], &ln1)?;
            let mut attns = Vec::with_capacity(tokens.len());
            for (p, ((q, k), mut v)) in qs.iter_mut().zip(&mut ks).zip(vs).enumerate() {
                for (x, b) in [(&mut *q, &lw.q_bias), (&mut *k, &lw.k_bias), (&mut v, &lw.v_bias)] {
                    if let Some(b) = b {
                        add_in_place(x, b);
                    }
                }
                let (cos_v, sin_v) = &tables[p];
                for head in q.chunks_mut(hd) {
                    rope::rotate::<R>(head, cos_v, sin_v);
                }
                for head in k.chunks_mut(hd) {
                    rope::rotate::<R>(head, cos_v, sin_v);
                }
                self.k_cache[l].extend_from_slice(k);
                self.v_cache[l].extend_from_slice(&v);
                debug_assert_eq!(self.k_cache[l].len(), (first + p + 1) * c.kv_heads * hd);
                attns.push(self.attend(l, q));
            }
            let [os] = self.matmul([lw.o], &attns)?;
            let mut ln2s = Vec::with_capacity(tokens.len());
            for (h, o) in hs.iter_mut().zip(&os) {
                add_in_place(h, o);
                ln2s.push(rmsnorm::<R>(h, &lw.ln2, self.eps));
            }
            let [gates, ups] = self.matmul([lw.gate, lw.up], &ln2s)?;
            let hids: Vec<Vec<f32>> = gates
                .iter()
                .zip(&ups)
                .map(|(gate, up)| gate.iter().zip(up).map(|(&g, &u)| R::mul(silu::<R>(g), u)).collect())
                .collect();
            let [downs] = self.matmul([lw.down], &hids)?;
            for (h, down) in hs.iter_mut().zip(&downs) {
                add_in_place(h, down);
            }
        }
        if !logits {
            return Ok(None);
        }
        let last = hs.last().expect("at least one token");
        let hn = rmsnorm::<R>(last, &w.norm, self.eps);
        let mut y = matmul_on::<R>(self.workers, &[w.lm_head()], &[hn])?;
        Ok(y.pop().and_then(|mut y| y.pop()))
    }

    /// The matrices `ms`, which share their input, at every position of `xs` ([`matmul_on`]).
    fn matmul<const M: usize>(&self, ms: [MatAt; M], xs: &[Vec<f32>]) -> Result<[Vec<Vec<f32>>; M], String> {
        let w = &self.art.weights;
        let ys = matmul_on::<R>(self.workers, &ms.map(|m| w.mat(m)), xs)?;
        Ok(ys.try_into().expect("one result per matrix"))
    }
}

/// The prompt's positions run together, this many at a time (one weight stream each).
pub const PREFILL_BATCH: usize = 64;

/// The greedy decode of §3.4 for `gen_toks` steps under the tininess rule `R`. The calling thread
/// must be pinned ([`super::env::pin`]).
pub fn decode<R: Rule>(art: &Artifact, prompt_ids: &[u32], gen_toks: usize) -> Result<Receipt, String> {
    decode_batched::<R>(art, prompt_ids, gen_toks, PREFILL_BATCH)
}

/// [`decode`], the prompt's positions run `batch` at a time (at least one): the same receipt
/// whatever `batch` is.
pub fn decode_batched<R: Rule>(
    art: &Artifact,
    prompt_ids: &[u32],
    gen_toks: usize,
    batch: usize,
) -> Result<Receipt, String> {
    let c = &art.config;
    let eps = R::narrow(c.eps);
    let theta = R::narrow(c.theta);
    let inv_freq = rope::inv_freq::<R>(c.head_dim, theta);
    let table = table_digest();
    let inv_digest = rope::inv_freq_digest(&inv_freq);
    let mut witness = Sha256::new();
    witness.update(art.hashes.weights);
    witness.update(art.hashes.tokenizer);
    witness.update(art.hashes.config);
    witness.update(table);
    witness.update(inv_digest);
    for &t in prompt_ids {
        witness.update(t.to_le_bytes());
    }
    let mut generated = Vec::new();
    if gen_toks > 0 {
        Workers::with(|workers| -> Result<(), String> {
            let mut fwd = Forward::<R> {
                art,
                workers,
                eps,
                scale: rsqrt::<R>(c.head_dim as f32),
                inv_freq,
                k_cache: vec![Vec::new(); c.layers],
                v_cache: vec![Vec::new(); c.layers],
                _rule: std::marker::PhantomData,
            };
            // Logits at the last prompt position only (the others are never observed).
            let mut logits = None;
            let mut first = 0;
            for chunk in prompt_ids.chunks(batch.max(1)) {
                logits = fwd.steps(chunk, first, first + chunk.len() == prompt_ids.len())?;
                first += chunk.len();
            }
            for s in 0..gen_toks {
                let l = logits.take().expect("logits of the previous position");
                let next = argmax(&l) as u32;
                for &v in &l {
                    witness.update(canonical_nan(v).to_bits().to_le_bytes());
                }
                witness.update(next.to_le_bytes());
                generated.push(next);
                if s + 1 < gen_toks {
                    logits = fwd.steps(&[next], prompt_ids.len() + s, true)?;
                }
            }
            Ok(())
        })?;
    }
    let mut ad = Sha256::new();
    for &t in prompt_ids.iter().chain(&generated) {
        ad.update(t.to_le_bytes());
    }
    Ok(Receipt {
        table_digest: table,
        inv_freq_digest: inv_digest,
        prompt_ids: prompt_ids.to_vec(),
        generated,
        argmax_digest: ad.finalize().into(),
        witness: witness.finalize().into(),
    })
}
