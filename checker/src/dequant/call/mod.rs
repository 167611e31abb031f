//! A whole call (docs/assumptions.md D3–D6): the record read into typed values ([`request`]), the
//! checks of D3 in order ([`check`]), then the execution into the output buffer ([`exec`]).

pub mod check;
pub mod exec;
pub mod request;
