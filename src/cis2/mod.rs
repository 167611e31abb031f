//! CIS-2 (cis2-spec-v0.3b): the pinned fp32 decode of a small Llama-family transformer.
//!
//! Every function is written once, over [`Arith`]: the binary32 arithmetic of §1. Two
//! implementations run it:
//! - [`arith::Soft`], the exact software binary32 of [`crate::softfloat`], with FTZ/DAZ as §1.3
//!   pins them and either tininess rule (docs/assumptions.md C1); it never touches the FPU;
//! - [`hard::Hard`], the host's `f32` with the FPU environment pinned (§1.3), for the fast path.
//!
//! Modules follow the spec: `pinned` (§6), `reduce` (§5), `rope` (§7), `artifact` (§2, §4:
//! safetensors, `config.json`), `tokenizer` (§3.1), `decode` (§8–§12).

pub mod arith;
pub mod artifact;
pub mod decode;
pub mod hard;
pub mod pinned;
pub mod reduce;
pub mod rope;
pub mod tokenizer;
pub mod vector;

pub use arith::{Arith, F32, F64, Soft};
