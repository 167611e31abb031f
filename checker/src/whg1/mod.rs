//! `WHG1`, the graph form (§10): the model and §5's opcode table ([`model`]), the reader with load
//! steps 1–6 ([`read`](mod@read)), the load that follows it, steps 7 and 8 ([`load`]), and the checker's own
//! writer ([`write`](mod@write)).

pub mod load;
pub mod model;
pub mod read;
pub mod write;

pub use model::*;
pub use read::{Malformed, read};
