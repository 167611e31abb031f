//! The `wai-ops/1` conformance oracle: one slow, obviously-correct
//! implementation of integer-operators, computed exactly on `BigInt` (sums of
//! products in a checked `i128` form that falls back to it: `ops::mac`).
//!
//! Modules follow the spec's concerns: `num` (§2), `canon` (§8.5, §14.1),
//! `whg1` (§10), `plan` (§3–§5 shapes and caps), `ops` (§5), `run` (§4, §10.3),
//! `fill` (the protocol every suite runs through), `files` (files written whole or not at all),
//! `json` (its fields read with their paths), `suite` (the suites and their record forms, for the
//! generator, `fill` and xtask).

pub mod bounds;
pub mod canon;
pub mod cis2;
pub mod dequant;
pub mod files;
pub mod fill;
pub mod json;
pub mod lower;
pub mod num;
pub mod ops;
pub mod plan;
pub mod refusal;
pub mod run;
pub mod softfloat;
pub mod stage;
pub mod suite;
pub mod tensor;
pub mod whg1;
