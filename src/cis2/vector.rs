//! The pinned vector (§2.1, §12, §13.1): SmolLM2-135M's three files checked against their
//! pinned SHA-256, the decode run twice (§12.4), and the receipt.

use super::arith::Soft;
use super::decode::{self, Artifacts, Receipt};
use super::hard::Pinned;
use sha2::{Digest, Sha256};
use std::path::Path;
use std::time::{Duration, Instant};

/// §2.1: the files and their SHA-256.
pub const ARTIFACTS: [(&str, &str); 3] = [
    (
        "model.safetensors",
        "80521b40281d6ce74e35c9282c22539e75aa0ac8578892b2a59955ef78d55da1",
    ),
    (
        "config.json",
        "1d556eab73b69c7f11f64c557a2f9c6f440bd4c6b89bb2584a6b498c92603843",
    ),
    (
        "tokenizer.json",
        "9ca9acddb6525a194ec8ac7a87f24fbba7232a9a15ffa1af0c1224fcd888e47c",
    ),
];

/// §3.2 and §3.4.
pub const PROMPT: &str = "Once upon a time";
pub const GEN_TOKS: usize = 16;

/// §13.1's values.
pub const PROMPT_IDS: [u32; 4] = [6403, 1980, 253, 655];
pub const GENERATED_IDS: [u32; 16] = [
    28, 665, 436, 253, 1838, 8180, 3365, 14176, 30, 2306, 4161, 281, 253, 2066, 2291, 351,
];
pub const ARGMAX_DIGEST: &str = "0b9c8f3ac90d0b9cd5f1719ac327dca1fc639fd87468305fccebbe3d56f67aff";
pub const CIS2_REF: &str = "d82743059d1db929e710236fe4ec37f89e6f932524801345a006980f7c3cc9df";

/// The three files of `dir`, each checked against §2.1 (a mismatch names the file and both
/// hashes).
pub fn read_verified(dir: &Path) -> Result<Artifacts, String> {
    let files = read(dir)?;
    for ((name, pinned), bytes) in ARTIFACTS.iter().zip([&files.weights, &files.config, &files.tokenizer]) {
        let got = hex::encode(Sha256::digest(bytes));
        if got != *pinned {
            return Err(format!(
                "{}: sha256 {got} is not the {pinned} that CIS-2 §2.1 pins; refusing to run",
                dir.join(name).display()
            ));
        }
    }
    Ok(files)
}

/// The three files of `dir`, unchecked.
pub fn read(dir: &Path) -> Result<Artifacts, String> {
    let file = |name: &str| std::fs::read(dir.join(name)).map_err(|e| format!("{}: {e}", dir.join(name).display()));
    Ok(Artifacts {
        weights: file(ARTIFACTS[0].0)?,
        config: file(ARTIFACTS[1].0)?,
        tokenizer: file(ARTIFACTS[2].0)?,
    })
}

/// The decode of `files`, run twice (§12.4) on the pinned hardware or, with `exact`, on the
/// software binary32 under the host's tininess rule; with each run's time.
pub fn run(files: &Artifacts, prompt: &str, gen_toks: usize, exact: bool) -> Result<(Receipt, [Duration; 2]), String> {
    let once = || -> Result<(Receipt, Duration), String> {
        let start = Instant::now();
        let r = if exact {
            decode::run(&Soft::host(), files, prompt, gen_toks)
        } else {
            Pinned::new(0)?.run(|hard| decode::run(hard, files, prompt, gen_toks))
        };
        r.map(|r| (r, start.elapsed()))
            .map_err(|e| format!("{}: {}", e.code.as_str(), e.why))
    };
    let ((first, t1), (second, t2)) = (once()?, once()?);
    if first != second {
        return Err("CIS-2 §12.4: two runs in one process differ".into());
    }
    Ok((first, [t1, t2]))
}

/// The receipt lines of §12: §12.1's line (`prompt_idx` is `custom` for a prompt other than
/// §3.2's, docs/assumptions.md C11), the prompt's bytes, then §13.1's values.
pub fn receipt(r: &Receipt, prompt: &str) -> String {
    let idx = if prompt == PROMPT { "0" } else { "custom" };
    let ids = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
    format!(
        "CIS2_REF digest={} prompt_idx={idx} prompt_toks={} gen_toks={} dtype=fp32\n\
         prompt_hex={}\nargmax_digest={}\ntable_digest={}\ninv_freq_table_digest={}\n\
         weights_sha256={}\nconfig_sha256={}\ntokenizer_sha256={}\n\
         prompt_token_ids=[{}]\ngenerated_token_ids=[{}]\n",
        hex::encode(r.witness_digest),
        r.prompt_ids.len(),
        r.generated_ids.len(),
        hex::encode(prompt),
        hex::encode(r.argmax_digest),
        hex::encode(r.table_digest),
        hex::encode(r.inv_freq_table_digest),
        hex::encode(r.weights_sha256),
        hex::encode(r.config_sha256),
        hex::encode(r.tokenizer_sha256),
        ids(&r.prompt_ids),
        ids(&r.generated_ids),
    )
}
