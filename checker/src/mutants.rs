//! Deliberate faults, for the grader's own tests (`xtask/tests/grade.rs`): each turns the checker
//! into a real wrong implementation of one rule. They exist only in a build with the `mutants`
//! feature, and act only when `WAI_CHECKER_MUTANT` names one of them:
//!
//! - `half-even-up`: `R_half_even` rounds ties up;
//! - `check-ignored`: a `check` policy is never applied;
//! - `floor-truncates`: `⌊p / 2^s⌋` truncates toward zero on negative `p`;
//! - `state-not-carried`: no state input carries its output to the next decode;
//! - `certificate-key-order`: a certificate writes its last two members in the wrong order;
//! - `crash-on-stage`, `hang-on-cis2`, `garbage-on-dequant`: the process exits, sleeps forever,
//!   or prints a line that is not JSON when it meets a stage, CIS-2 ops or DetessDequant request.

use std::sync::OnceLock;

/// Whether the named fault is on.
pub fn active(name: &str) -> bool {
    static CHOSEN: OnceLock<Option<String>> = OnceLock::new();
    cfg!(feature = "mutants")
        && CHOSEN
            .get_or_init(|| std::env::var("WAI_CHECKER_MUTANT").ok())
            .as_deref()
            == Some(name)
}
