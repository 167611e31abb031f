//! Test material: a generator of random small graphs and requests, for the
//! checker's own tests and for differential runs against another implementation of `fill`.

pub mod differential;
pub mod random;
pub mod stage;
