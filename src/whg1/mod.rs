//! `WHG1`, the graph form (§10): the model, the reader (load steps 1–5), the
//! load checks that follow it (steps 6–7) and the canonical writer.

pub mod build;
pub mod load;
pub mod model;
pub mod read;
pub mod write;

pub use load::{Loaded, load};
pub use model::*;
pub use read::read;
pub use write::write;
