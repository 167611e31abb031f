//! Test material for the checker (`wai-checker`), outside its library: seeded generators of
//! requests and models, for its tests and for differential runs against another implementation of
//! `fill`. It computes nothing a committed byte depends on.
//!
//! - [`random`]: random small `WHG1` graphs (every operator, policies, state, scalars, exponents,
//!   malformed bytes) and their requests, deterministic in a seed;
//! - [`stage`]: random stage-operator requests, with the provisional E1 encoder;
//! - [`differential`]: requests run through another `fill`/`certify` and through the checker,
//!   compared byte for byte;
//! - [`cis2_synth`]: small CIS-2 models written from scratch, for tests and timing.

pub mod cis2_synth;
pub mod differential;
pub mod random;
pub mod stage;
