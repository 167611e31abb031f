//! `wai-checker`: an independent recomputation of the `wai-ops/1` conformance vectors and
//! certificates, written from the spec text (integer-operators.md) and the project's documented
//! readings (docs/assumptions.md) alone. It never depends on the oracle crate.
//!
//! # Modules
//!
//! - [`canon`]: canonical JSON (§8.5, §14.1) and canonical integer strings;
//! - [`whg1`]: the `WHG1` model, its reader (load steps 1–6), the load (steps 1–8) and the
//!   checker's own writer (§10);
//! - [`plan`]: channel counts, shape rules and caps (§3, §4 run step 3, §5, §10.5 step 7);
//! - [`refusal`]: the refusal codes of §4;
//! - [`num`]: §2's integer functions in fixed width;
//! - [`ops`]: the 30 graph operators (§5);
//! - [`run`]: run steps 1–4 and sequences with state (§4, §10.3);
//! - [`bounds`]: the bounds pass, profiles, flags, verdict and certificate (§7–§9);
//! - [`stage`]: the stage operators of §5E (E1–E9 and E13) and stage-operator vectors (§14.1);
//! - [`cis2`]: CIS-2 (cis2-spec-v0.3b) on the hardware's binary32, FTZ/DAZ pinned: its two
//!   suites and the pinned decode;
//! - [`dequant`]: DetessDequant (seeds/detessdequant.md) on the hardware's binary32, the environment
//!   read and self-tested, never changed: its numerical-core and whole-call records;
//! - [`lower`]: the lowerings of §13 (`int_synth/1`, `whm1/1`, `wam1/1`, `wmb1/1`, `world/1`,
//!   `jpegai-int/1`) to canonical `WHG1` bytes (§13.0), their load checks, certificates and
//!   lowering records, and (`lower::scale_path`) `wai.image.jpegai`'s scale path and entropy
//!   decodes (§13.6.1) as scale-path records;
//! - [`recipe`]: the scale tier's record form (docs/protocol.md): `splitmix64` recipes for input
//!   tensors, SHA-256 digests and samples for output tensors, and the written-out expansion;
//! - [`request`]: what every request reader shares, the line outcome and the line loop;
//! - [`fill`], [`certify`]: the commands (docs/protocol.md).
//!
//! Test material (random graphs and stage requests, an E1 encoder, differential runs, small CIS-2
//! models) is the crate `wai-checker-testgen` (`checker/testgen/`), not this library.
//!
//! # Method, where it differs from the spec's definitions
//!
//! - Evaluation is fixed-width: tensors are `i64`, `wide` and `product` values `i128`, every
//!   operation checked. A loaded graph meets `acc64`, so an overflow is a bug, reported, not wrapped.
//! - `conv_transpose` runs in the scatter form of §5.3's informative paragraph, into the kept window.
//! - `R_round` is read from the remainder's bits rather than by adding `2^(s−1)`.
//! - The bounds pass is 256-bit (`ethnum`): a value is an `I256` or exactly `+2^255`, and §8.1's
//!   saturation is detected from checked `U256` magnitude arithmetic.
//! - Partial-sum intervals of `conv` and `conv_transpose` use §8.2's closed form from `S⁺` and `S⁻`
//!   per output channel (and per residue), the term hull from the extreme weights; an `rq` whose
//!   fields are one value for every channel is bounded once, not per channel.
//! - Stage operators compute at their §5E widths: E1's state and E8's window are `u64`, E8's states
//!   `u8`. E1 finds a symbol by a slot → index lookup table; E8's `nb` and `Zp` are a closed form
//!   (`8 − ⌊log2 v⌋` doublings) in place of the counter. E9 uses its 32-bit form under its
//!   conditions, else checked `i64`. E2 is formed digit by digit in `i128` (a running value past
//!   `2^67` can never return), E5 and E6 round in `I256`. Request values past those widths are
//!   exact decimal values (`stage::dec`): compared digit by digit, summed by columns, divided by
//!   `2^s` by long division with a `U256` remainder; never wrapped.
//! - Lowerings: §13.2's `P_ℓ` is evaluated in `U256` (every value it forms is below `2^240`) with
//!   `isqrt` bit by bit in `u128`, and `X_ℓ` by the literal binary search on `[0, 2^63]`; the caps
//!   of a lowered graph are the run-time plan on the smallest inputs (docs/assumptions.md L1). The
//!   `WHG1` bytes are written by the checker's own writer (`whg1::write`), with every count
//!   checked against its field first.

// First, so that its `fault!` is in scope in every module after it.
#[macro_use]
pub mod mutants;

pub mod bounds;
pub mod canon;
pub mod certify;
pub mod cis2;
pub mod dequant;
pub mod explain;
pub mod fill;
pub mod lower;
pub mod num;
pub mod ops;
pub mod plan;
pub mod recipe;
pub mod refusal;
pub mod request;
pub mod run;
#[cfg(test)]
mod seeded;
pub mod stage;
pub mod whg1;
