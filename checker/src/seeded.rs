//! The unit tests' seeded cases: SplitMix64 ([`crate::recipe::splitmix64`]) drawn in sequence,
//! seeded and mapped as `wai-checker-testgen`'s generator is, so that each test meets the cases it
//! always has. Compiled for tests only; the test material proper is that crate.

use crate::recipe::splitmix64;

pub struct Rng {
    state: u64,
    drawn: u64,
}

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng {
            state: seed ^ 0x9E37_79B9_7F4A_7C15,
            drawn: 0,
        }
    }
    pub fn next_u64(&mut self) -> u64 {
        self.drawn += 1;
        splitmix64(self.state, self.drawn - 1)
    }
    /// Uniform in `[lo, hi]`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        if hi <= lo {
            return lo;
        }
        let span = (i128::from(hi) - i128::from(lo) + 1) as u128;
        (i128::from(lo) + (u128::from(self.next_u64()) % span) as i128) as i64
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
    /// True with probability `p` percent.
    pub fn pct(&mut self, p: u64) -> bool {
        self.below(100) < p
    }
    pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len() as u64) as usize]
    }
}
