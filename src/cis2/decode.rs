//! §8–§12: the decode — RMSNorm, GQA attention with a KV cache, SwiGLU, the LM head, greedy
//! argmax — and its digests.

use super::arith::{Arith, F32};
use super::artifact::{Code, Config, Refuse, SafeTensors, refuse};
use super::pinned::{exp_pinned, rsqrt, silu, table_digest};
use super::reduce::{Matrix, add, dot_seq, sum_seq};
use super::rope;
use super::tokenizer::Tokenizer;
use sha2::{Digest, Sha256};

/// §8: `out[i] = (x[i] · rsqrt(Σx²/n + eps)) · weight[i]`.
pub fn rmsnorm(a: &impl Arith, x: &[F32], weight: &[F32], eps: F32) -> Vec<F32> {
    let sq: Vec<F32> = x.iter().map(|&v| a.mul(v, v)).collect();
    let ss = sum_seq(a, &sq);
    let mean = a.div(ss, a.of_int(x.len() as i64));
    let inv = rsqrt(a, a.add(mean, eps));
    x.iter().zip(weight).map(|(&v, &w)| a.mul(a.mul(v, inv), w)).collect()
}

/// §9.3: in place; the first maximum wins, `exp_pinned(v − max)`, then each over the sum.
pub fn softmax(a: &impl Arith, scores: &mut [F32]) {
    let mut max_v = scores[0];
    for &v in &scores[1..] {
        if a.gt(v, max_v) {
            max_v = v;
        }
    }
    for v in scores.iter_mut() {
        *v = exp_pinned(a, a.sub(*v, max_v));
    }
    let denom = sum_seq(a, scores);
    for v in scores.iter_mut() {
        *v = a.div(*v, denom);
    }
}

/// §11.2: the first index of the maximum, by strict `>`.
pub fn argmax(a: &impl Arith, logits: &[F32]) -> usize {
    let mut best = 0;
    for (i, &v) in logits.iter().enumerate() {
        if a.gt(v, logits[best]) {
            best = i;
        }
    }
    best
}

struct Layer<'a> {
    input_norm: Vec<F32>,
    post_norm: Vec<F32>,
    q: Matrix<'a>,
    k: Matrix<'a>,
    v: Matrix<'a>,
    o: Matrix<'a>,
    gate: Matrix<'a>,
    up: Matrix<'a>,
    down: Matrix<'a>,
    /// §9.1: the optional projection biases.
    bias: [Option<Vec<F32>>; 3],
}

/// The weights (§2.5): norms and biases widened (§4.2), matrices read in place from the file's
/// bytes and widened as they are used.
pub struct Model<'a> {
    pub config: Config,
    embed: Matrix<'a>,
    layers: Vec<Layer<'a>>,
    norm: Vec<F32>,
    /// `lm_head.weight` when untied (§11.1).
    lm_head: Option<Matrix<'a>>,
}

impl<'a> Model<'a> {
    /// The tensors, in §2.5's order, each layer's biases after its weights, `lm_head.weight` last.
    pub fn load(config: Config, st: &SafeTensors<'a>) -> Result<Model<'a>, Refuse> {
        let c = &config;
        let (h, kv) = (c.hidden, c.kv_heads * c.head_dim());
        let embed = st.matrix("model.embed_tokens.weight", c.vocab, h)?;
        let layers = (0..c.layers)
            .map(|i| {
                let p = format!("model.layers.{i}");
                let bias = |proj: &str, n: usize| {
                    let name = format!("{p}.self_attn.{proj}.bias");
                    st.contains(&name).then(|| st.tensor(&name, &[n])).transpose()
                };
                let layer = Layer {
                    input_norm: st.tensor(&format!("{p}.input_layernorm.weight"), &[h])?,
                    post_norm: st.tensor(&format!("{p}.post_attention_layernorm.weight"), &[h])?,
                    q: st.matrix(&format!("{p}.self_attn.q_proj.weight"), h, h)?,
                    k: st.matrix(&format!("{p}.self_attn.k_proj.weight"), kv, h)?,
                    v: st.matrix(&format!("{p}.self_attn.v_proj.weight"), kv, h)?,
                    o: st.matrix(&format!("{p}.self_attn.o_proj.weight"), h, h)?,
                    gate: st.matrix(&format!("{p}.mlp.gate_proj.weight"), c.intermediate, h)?,
                    up: st.matrix(&format!("{p}.mlp.up_proj.weight"), c.intermediate, h)?,
                    down: st.matrix(&format!("{p}.mlp.down_proj.weight"), h, c.intermediate)?,
                    bias: [bias("q_proj", h)?, bias("k_proj", kv)?, bias("v_proj", kv)?],
                };
                Ok(layer)
            })
            .collect::<Result<_, Refuse>>()?;
        let norm = st.tensor("model.norm.weight", &[h])?;
        let lm_head = match (c.tied, st.contains("lm_head.weight")) {
            (true, true) => {
                return refuse(
                    Code::TensorMismatch,
                    "model.safetensors: lm_head.weight with tie_word_embeddings true",
                );
            }
            (true, false) => None,
            (false, _) => Some(st.matrix("lm_head.weight", c.vocab, h)?),
        };
        Ok(Model {
            config,
            embed,
            layers,
            norm,
            lm_head,
        })
    }
}

/// The post-RoPE keys and the values of every position so far, per layer (§3.5).
struct Cache {
    k: Vec<Vec<Vec<F32>>>,
    v: Vec<Vec<Vec<F32>>>,
}

impl Model<'_> {
    /// The forward pass (§8–§11) of `tokens` at positions `pos, pos + 1, …`, in one pass over
    /// the weights: each matrix is read once for all of them (§5.2's sums unchanged), and each
    /// position attends causally, in order, to the cache up to itself (§9). The last position's
    /// logits when `logits` is set (§11.1).
    fn forward(
        &self,
        a: &impl Arith,
        tokens: &[u32],
        pos: usize,
        inv_freq: &[F32],
        cache: &mut Cache,
        logits: bool,
    ) -> Option<Vec<F32>> {
        let c = &self.config;
        let (hd, group) = (c.head_dim(), c.group());
        let scale = rsqrt(a, a.of_int(hd as i64));
        let tables: Vec<_> = (0..tokens.len()).map(|p| rope::tables(a, inv_freq, pos + p)).collect();
        let mut hs: Vec<Vec<F32>> = tokens.iter().map(|&t| self.embed.row(t as usize)).collect();
        let residual = |hs: &mut Vec<Vec<F32>>, m: &Matrix, xs: &[Vec<F32>]| {
            for (h, y) in hs.iter_mut().zip(m.matvecs(a, xs)) {
                *h = add(a, h, &y);
            }
        };
        for (l, layer) in self.layers.iter().enumerate() {
            let ln1: Vec<_> = hs.iter().map(|h| rmsnorm(a, h, &layer.input_norm, c.eps)).collect();
            let project = |m: &Matrix, bias: &Option<Vec<F32>>| -> Vec<Vec<F32>> {
                let ys = m.matvecs(a, &ln1);
                match bias {
                    Some(b) => ys.iter().map(|y| add(a, y, b)).collect(),
                    None => ys,
                }
            };
            let (qs, ks, vs) = (
                project(&layer.q, &layer.bias[0]),
                project(&layer.k, &layer.bias[1]),
                project(&layer.v, &layer.bias[2]),
            );
            let mut attns = Vec::with_capacity(tokens.len());
            for (((mut q, mut k), v), (cos, sin)) in qs.into_iter().zip(ks).zip(vs).zip(&tables) {
                q.chunks_mut(hd).for_each(|head| rope::rotate(a, head, cos, sin));
                k.chunks_mut(hd).for_each(|head| rope::rotate(a, head, cos, sin));
                cache.k[l].push(k);
                cache.v[l].push(v);
                attns.push(attend(a, &q, &cache.k[l], &cache.v[l], hd, group, scale));
            }
            residual(&mut hs, &layer.o, &attns);
            let ln2: Vec<_> = hs.iter().map(|h| rmsnorm(a, h, &layer.post_norm, c.eps)).collect();
            let gates = layer.gate.matvecs(a, &ln2);
            let ups = layer.up.matvecs(a, &ln2);
            let hids: Vec<Vec<F32>> = gates
                .iter()
                .zip(&ups)
                .map(|(gate, up)| gate.iter().zip(up).map(|(&g, &u)| a.mul(silu(a, g), u)).collect())
                .collect();
            residual(&mut hs, &layer.down, &hids);
        }
        logits.then(|| {
            let hn = rmsnorm(a, hs.last().expect("a position"), &self.norm, c.eps);
            self.lm_head.as_ref().unwrap_or(&self.embed).matvec(a, &hn)
        })
    }
}

/// §9.2–§9.4 for one position: each query head over its KV head's cached keys and values.
fn attend(
    a: &impl Arith,
    q: &[F32],
    keys: &[Vec<F32>],
    values: &[Vec<F32>],
    hd: usize,
    group: usize,
    scale: F32,
) -> Vec<F32> {
    let mut attn = Vec::with_capacity(q.len());
    for (qh, q_head) in q.chunks(hd).enumerate() {
        let kv = (qh / group) * hd..(qh / group + 1) * hd;
        let mut scores: Vec<F32> = keys
            .iter()
            .map(|kj| a.mul(dot_seq(a, q_head, &kj[kv.clone()]), scale))
            .collect();
        softmax(a, &mut scores);
        for d in kv {
            let acc = scores
                .iter()
                .zip(values)
                .fold(F32::ZERO, |acc, (&s, vj)| a.add(acc, a.mul(s, vj[d])));
            attn.push(acc);
        }
    }
    attn
}

/// The three files, as bytes.
pub struct Artifacts {
    pub weights: Vec<u8>,
    pub config: Vec<u8>,
    pub tokenizer: Vec<u8>,
}

/// Everything §12 prints, and whether a logit was NaN (docs/assumptions.md C3).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Receipt {
    pub weights_sha256: [u8; 32],
    pub tokenizer_sha256: [u8; 32],
    pub config_sha256: [u8; 32],
    pub table_digest: [u8; 32],
    pub inv_freq_table_digest: [u8; 32],
    pub prompt_ids: Vec<u32>,
    pub generated_ids: Vec<u32>,
    pub argmax_digest: [u8; 32],
    pub witness_digest: [u8; 32],
    pub nan_logit: bool,
}

fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// §7.3 casts a position to `f32` exactly: every integer up to 2^24 is exact.
pub const LAST_EXACT_POSITION: u128 = 1 << 24;

/// C7: the positions `0 … prompt + gen_toks − 1` (§3.4) end at or before
/// `max_position_embeddings − 1` when the config gives it, and at or before 2^24 always. Counted
/// in 128 bits, so no count overflows.
pub fn check_positions(prompt: usize, gen_toks: usize, max_positions: Option<usize>) -> Result<(), Refuse> {
    let last = (prompt as u128 + gen_toks as u128).saturating_sub(1);
    let bound = match max_positions {
        Some(m) => (m as u128 - 1).min(LAST_EXACT_POSITION),
        None => LAST_EXACT_POSITION,
    };
    if last > bound {
        let what = match max_positions {
            Some(m) if m as u128 - 1 == bound => format!("max_position_embeddings {m}"),
            _ => "2^24 (§7.3 casts a position to f32 exactly)".to_string(),
        };
        return refuse(
            Code::ConfigUnsupported,
            format!("{prompt} prompt tokens and {gen_toks} steps reach position {last}, past {what}"),
        );
    }
    Ok(())
}

/// Reads the files, tokenizes `prompt` and decodes `gen_toks` tokens greedily (§3.4), in the
/// check order of docs/protocol.md: the files' formats, the config's values, the tensors, the
/// prompt.
pub fn run(a: &impl Arith, files: &Artifacts, prompt: &str, gen_toks: usize) -> Result<Receipt, Refuse> {
    let st = SafeTensors::parse(&files.weights)?;
    let json = Config::json(&files.config)?;
    let tokenizer = Tokenizer::parse(&files.tokenizer)?;
    let config = Config::read(a, &json)?;
    let model = Model::load(config, &st)?;
    let c = &model.config;
    let prompt_ids = tokenizer
        .encode(prompt)
        .or_else(|e| refuse(Code::ConfigUnsupported, format!("prompt: {e}")))?;
    if prompt_ids.is_empty() {
        return refuse(Code::ConfigUnsupported, "prompt: no token (nothing to decode from)");
    }
    check_positions(prompt_ids.len(), gen_toks, c.max_positions)?;
    if let Some(t) = prompt_ids.iter().find(|&&t| t as usize >= c.vocab) {
        return refuse(
            Code::ConfigUnsupported,
            format!("prompt: token {t} is past vocab_size {}", c.vocab),
        );
    }
    let inv_freq = rope::inv_freq(a, c.head_dim(), c.theta);
    let mut r = Receipt {
        weights_sha256: sha256(&files.weights),
        tokenizer_sha256: sha256(&files.tokenizer),
        config_sha256: sha256(&files.config),
        table_digest: table_digest(),
        inv_freq_table_digest: rope::inv_freq_digest(&inv_freq),
        prompt_ids,
        generated_ids: Vec::new(),
        argmax_digest: [0; 32],
        witness_digest: [0; 32],
        nan_logit: false,
    };
    // §12.1, in its corrected order (docs/assumptions.md C4).
    let mut witness = Sha256::new();
    for d in [
        r.weights_sha256,
        r.tokenizer_sha256,
        r.config_sha256,
        r.table_digest,
        r.inv_freq_table_digest,
    ] {
        witness.update(d);
    }
    r.prompt_ids.iter().for_each(|t| witness.update(t.to_le_bytes()));
    let mut cache = Cache {
        k: vec![Vec::new(); c.layers],
        v: vec![Vec::new(); c.layers],
    };
    let n = r.prompt_ids.len();
    // Prefill: every prompt position in one pass over the weights.
    let mut logits = model.forward(a, &r.prompt_ids, 0, &inv_freq, &mut cache, gen_toks > 0);
    for step in 0..gen_toks {
        let l = logits.take().expect("the logits of the last position");
        let next = argmax(a, &l) as u32;
        r.nan_logit |= l.iter().any(|v| v.is_nan());
        l.iter().for_each(|v| witness.update(v.le_bytes()));
        witness.update(next.to_le_bytes());
        r.generated_ids.push(next);
        if step + 1 < gen_toks {
            logits = model.forward(a, &[next], n + step, &inv_freq, &mut cache, true);
        }
    }
    r.witness_digest = witness.finalize().into();
    // §12.2: a separate hash of every token id, prompt first.
    let mut ids = Sha256::new();
    r.prompt_ids
        .iter()
        .chain(&r.generated_ids)
        .for_each(|t| ids.update(t.to_le_bytes()));
    r.argmax_digest = ids.finalize().into();
    Ok(r)
}
