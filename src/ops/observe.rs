//! The named intermediates of §5, as the interpreter forms them. The coverage tool
//! observes them to check that a vector reaches what it claims (an interval's end, a
//! rounding tie); evaluation itself never reads them back.

use num_bigint::BigInt;

/// Receives each named value an operator forms: its key (§5, Table 8.5-A), the output
/// channel it belongs to, and the value.
pub trait Observer {
    fn see(&mut self, key: &'static str, channel: usize, value: &BigInt);
}

/// The observer of a plain decode: it keeps nothing.
pub struct Silent;

impl Observer for Silent {
    fn see(&mut self, _: &'static str, _: usize, _: &BigInt) {}
}
