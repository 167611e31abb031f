//! `wai-checker cis2`: the pinned decode (§13.1). Checks §2.1's three SHA-256 hashes, opens the
//! model, runs the decode twice in this process (§12.4), asserts the two runs agree and prints the
//! receipt.

use super::arith::{After, Before, HOST_AFTER, Rule};
use super::decode::{self, FILE_NAMES, Files, Receipt};
use super::env;
use std::path::Path;
use std::time::Instant;

/// §2.1's hashes, in [`FILE_NAMES`]' order.
pub const PINNED_SHA256: [&str; 3] = [
    "80521b40281d6ce74e35c9282c22539e75aa0ac8578892b2a59955ef78d55da1",
    "1d556eab73b69c7f11f64c557a2f9c6f440bd4c6b89bb2584a6b498c92603843",
    "9ca9acddb6525a194ec8ac7a87f24fbba7232a9a15ffa1af0c1224fcd888e47c",
];

/// §3.2 and §3.4's pinned prompt and length.
pub const PINNED_PROMPT: &str = "Once upon a time";
pub const PINNED_GEN_TOKS: u64 = 16;

/// Which tininess rule a run uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tininess {
    After,
    Before,
}

impl Tininess {
    pub fn host() -> Tininess {
        if HOST_AFTER { Tininess::After } else { Tininess::Before }
    }
}

/// §2.1: every mismatch, naming the file and both hashes.
pub fn check_hashes(files: &Files) -> Result<(), String> {
    let h = files.hashes();
    let got = [h.weights, h.config, h.tokenizer];
    let mut errs = Vec::new();
    for ((name, want), got) in FILE_NAMES.iter().zip(PINNED_SHA256).zip(got) {
        let got = hex::encode(got);
        if got != want {
            errs.push(format!("{name}: sha256 {got}, but §2.1 pins {want}"));
        }
    }
    if errs.is_empty() { Ok(()) } else { Err(errs.join("\n")) }
}

/// What a receipt's computation took, in seconds: reading and opening the model (hashes, checks,
/// tokenizer, weights), and each of the two decodes (§12.4). Reported on stderr by `wai-checker
/// cis2`, with the process's peak resident memory, for `cargo xtask bench`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Timings {
    pub open: f64,
    pub decodes: [f64; 2],
}

fn twice<R: Rule>(art: &decode::Artifact, ids: &[u32], steps: usize, t: &mut Timings) -> Result<Receipt, String> {
    let start = Instant::now();
    let run1 = decode::decode::<R>(art, ids, steps)?;
    t.decodes[0] = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let run2 = decode::decode::<R>(art, ids, steps)?;
    t.decodes[1] = start.elapsed().as_secs_f64();
    if run1.witness != run2.witness {
        return Err(format!(
            "§12.4: the witness digests of the two runs differ: {} and {}",
            hex::encode(run1.witness),
            hex::encode(run2.witness)
        ));
    }
    if run1.argmax_digest != run2.argmax_digest {
        return Err("§12.4: the argmax digests of the two runs differ".into());
    }
    if run1.generated != run2.generated {
        return Err("§12.4: the token ids of the two runs differ".into());
    }
    Ok(run1)
}

/// The receipt's lines for the model in `dir`. With `check` false the hashes are not checked (a
/// model other than the pinned one, for tests).
pub fn receipt(dir: &Path, prompt: &str, gen_toks: u128, rule: Tininess, check: bool) -> Result<String, String> {
    receipt_timed(dir, prompt, gen_toks, rule, check).map(|(r, _)| r)
}

/// [`receipt`], with what its parts took.
pub fn receipt_timed(
    dir: &Path,
    prompt: &str,
    gen_toks: u128,
    rule: Tininess,
    check: bool,
) -> Result<(String, Timings), String> {
    let mut t = Timings::default();
    let start = Instant::now();
    let files = Files::read(dir)?;
    if check {
        check_hashes(&files)?;
    }
    let art = decode::open(files).map_err(|r| format!("refused ({}): {}", r.code(), r.reason()))?;
    let ids =
        decode::prompt_ids(&art, prompt, gen_toks).map_err(|r| format!("refused ({}): {}", r.code(), r.reason()))?;
    // The positions passed C7's check, so gen_toks is at most 2^24 here.
    let steps = usize::try_from(gen_toks).map_err(|_| "--gen-toks: too large".to_string())?;
    t.open = start.elapsed().as_secs_f64();
    let _pinned = env::pin()?;
    let rc = match rule {
        Tininess::After => twice::<After>(&art, &ids, steps, &mut t)?,
        Tininess::Before => twice::<Before>(&art, &ids, steps, &mut t)?,
    };
    let list = |v: &[u32]| v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ");
    // docs/assumptions.md C11: `prompt_idx` indexes §3.2's one prompt; any other is `custom`.
    let idx = if prompt == PINNED_PROMPT { "0" } else { "custom" };
    let h = art.hashes;
    let lines = format!(
        "CIS2_REF digest={} prompt_idx={idx} prompt_toks={} gen_toks={} dtype=fp32\n\
         prompt_hex={}\n\
         argmax_digest={}\n\
         table_digest={}\n\
         inv_freq_table_digest={}\n\
         weights_sha256={}\n\
         config_sha256={}\n\
         tokenizer_sha256={}\n\
         prompt_token_ids=[{}]\n\
         generated_token_ids=[{}]\n",
        hex::encode(rc.witness),
        rc.prompt_ids.len(),
        rc.generated.len(),
        hex::encode(prompt.as_bytes()),
        hex::encode(rc.argmax_digest),
        hex::encode(rc.table_digest),
        hex::encode(rc.inv_freq_digest),
        hex::encode(h.weights),
        hex::encode(h.config),
        hex::encode(h.tokenizer),
        list(&rc.prompt_ids),
        list(&rc.generated),
    );
    Ok((lines, t))
}

/// The process's peak resident memory in bytes (Linux: `VmHWM` of `/proc/self/status`), when known.
pub fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}
