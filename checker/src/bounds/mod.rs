//! The bounds pass, the profiles and the certificate (§7–§9).

pub mod admissible;
pub mod certificate;
pub mod interval;
pub mod npu;
pub mod pass;
pub mod profile;
pub mod rules;
pub mod sat;

pub use interval::Iv;
pub use pass::{Pass, pass};
pub use profile::Profile;
pub use rules::Refuse;
