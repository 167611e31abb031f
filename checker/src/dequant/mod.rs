//! DetessDequant (seeds/detessdequant.md) on the hardware's binary32, written from the seed and
//! docs/assumptions.md D1–D6 alone.
//!
//! - [`env`]: the floating-point environment, read (never written) and self-tested before any
//!   arithmetic: round to nearest, gradual underflow, masked traps; other ISAs are refused;
//! - [`numeric`]: the separately rounded `zp`, `difference`, `output` and the BF16 narrowing (D1);
//! - [`call`]: a whole call: [`call::request`], the two record forms of docs/protocol.md read into
//!   typed values (request errors); [`call::check`], the checks of D3 in order, giving a plan or a
//!   refusal code; [`call::exec`], a checked call's execution into its output buffer;
//! - [`layout`]: the input layouts (D4, D5) as a closed-form size and a physical walk, and the output
//!   placement (D6); [`nat`]: integers of any size, for output strides;
//! - [`fill`]: `numeric.jsonl` and `calls.jsonl`/`layout.jsonl` filling.
//!
//! # Method, where it differs from the contract's text
//!
//! - The environment check reads MXCSR and the x87 control word (x86-64) or FPCR (aarch64) and then
//!   runs a self-test through [`std::hint::black_box`]; it never writes them. A nonempty computation
//!   on a thread whose mode is not the default is refused with an error, never computed.
//! - Output strides are integers of any size ([`nat::Nat`]): D3's rules and the span's 64-bit test
//!   are applied to them exactly.
//! - The input is never materialized past its given `bytes`: a read past them is the buffer's zero
//!   fill. Sizes are formed in checked `u128` (closed forms over the at most two tile extents per
//!   axis); nothing is allocated for a capacity until the call is admitted and its output capacity is
//!   at most 2^20 bytes.
//! - The execution walks the input in physical order (slices, tiles in tile order, pixels, channels)
//!   and places each element by its logical coordinates; the walk's end offset is checked against
//!   the closed-form size.

pub mod call;
pub mod env;
pub mod fill;
pub mod layout;
pub mod nat;
pub mod numeric;
