//! CIS-2 (cis2-spec-v0.3b): an independent implementation of the pinned fp32 decode on the
//! hardware's binary32, with the floating-point environment pinned (§1.3), for the two CIS-2 suites
//! (docs/protocol.md "CIS-2") and the pinned decode (§13.1).
//!
//! # Modules
//!
//! - [`env`]: §1.3, FTZ/DAZ pinned per thread by inline assembly, read back, self-tested;
//! - [`arith`]: the two tininess rules (docs/assumptions.md C1), the host's by the bare hardware,
//!   the other by an exact fix-up;
//! - [`pinned`]: §6's functions and §6.6's table digest;
//! - [`reduce`]: §5's reductions and the row-parallel matvec of several positions at once, §8
//!   RMSNorm, §9.3 softmax, §11.2 argmax;
//! - [`rope`]: RoPE (§7);
//! - [`artifact`]: safetensors (C9), `config.json` (C7), the tensors (§2.5, C8), §4's widening;
//! - [`bf16`]: the matrices kept as bf16 bits, regrouped in blocks of eight rows, widened as read;
//! - [`tokenizer`]: §3.1 (C5, C6), over the `tokenizers` crate v0.23.1 (§3.1.2);
//! - [`decode`]: §3.4, §9–§11 and the digests of §12;
//! - [`fill`]: the suites' `fill`;
//! - [`vector`]: the pinned vector, §2.1's hashes and the receipt of the `cis2` command.
//!
//! # Method, where it differs from the spec's text
//!
//! - Every product, quotient and f64 → f32 narrowing goes through a tininess [`arith::Rule`]; on the
//!   rule that is not the host's, the hardware result is fixed up where the rules part (a result
//!   of ±2^−126 or ±0 whose exact magnitude is decided in binary64).
//! - `floor` (§6.2) and `f64::round` (§6.3) are computed from exact integer truncations, not libm.
//! - The matrices stay bf16 in memory and are widened by §4.1's shift as the matvec reads them
//!   (§4.2 widens at load time; the shift is exact and environment-free, so the values are the
//!   same, subnormals included, and half the bytes are streamed).
//! - Matvec rows run on several threads in blocks of eight rows, each block column widened once
//!   and multiplied into up to seven positions' accumulators side by side, each row's §5.1 order
//!   kept for each position; every worker pins its own environment.
//! - The prompt's positions go through each layer together (up to [`decode::PREFILL_BATCH`] at
//!   a time), so each weight row is streamed once for all of them; each position's values are
//!   the ones a pass of its own gives, attention running position after position on the cache of
//!   the positions before it.
//! - Prefill computes logits only at the last prompt position (the others are never observed);
//!   with `gen_toks = 0` nothing is computed.
//! - A NaN is hashed (inv_freq digest, witness logits) as `7fc00000`, the bits the suites write
//!   (C3); no pinned or committed vector holds one.

// The spec writes its steps as `acc = acc + p`; the code keeps that form.
#![allow(clippy::assign_op_pattern)]

pub mod arith;
pub mod artifact;
pub mod bf16;
pub mod decode;
pub mod env;
pub mod fill;
pub mod pinned;
pub mod reduce;
pub mod rope;
pub mod tokenizer;
pub mod vector;
