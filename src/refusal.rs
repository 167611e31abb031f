//! Refusals are values (§4): a code the spec names and, for people, what broke.

use std::fmt;

/// The refusal codes of §4, §5E and §10.5.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Code {
    ModelMismatch,
    TooLarge,
    FieldRange,
    GeometryMismatch,
    StreamExhausted,
    StreamNoncanonical,
    PayloadMalformed,
}

impl Code {
    pub const ALL: [Code; 7] = [
        Code::ModelMismatch,
        Code::TooLarge,
        Code::FieldRange,
        Code::GeometryMismatch,
        Code::StreamExhausted,
        Code::StreamNoncanonical,
        Code::PayloadMalformed,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Code::ModelMismatch => "model_mismatch",
            Code::TooLarge => "too_large",
            Code::FieldRange => "field_range",
            Code::GeometryMismatch => "geometry_mismatch",
            Code::StreamExhausted => "stream_exhausted",
            Code::StreamNoncanonical => "stream_noncanonical",
            Code::PayloadMalformed => "payload_malformed",
        }
    }

    pub fn parse(s: &str) -> Option<Code> {
        Code::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A refusal: the code, where it arose (`load.5`, `run.3.shape`, …) and a sentence
/// saying which rule broke. Only the code is observable; `at` and `why` are for people
/// and for the coverage tool, never part of a committed byte.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub code: Code,
    pub at: String,
    pub why: String,
}

impl Refusal {
    pub fn new(code: Code, why: impl Into<String>) -> Refusal {
        Refusal {
            code,
            at: String::new(),
            why: why.into(),
        }
    }

    /// Places the refusal inside `step`: `at` becomes `step` or `step.<at>`.
    pub fn within(mut self, step: &str) -> Refusal {
        self.at = if self.at.is_empty() {
            step.to_string()
        } else {
            format!("{step}.{}", self.at)
        };
        self
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.at.is_empty() {
            write!(f, "{}: {}", self.code, self.why)
        } else {
            write!(f, "{} at {}: {}", self.code, self.at, self.why)
        }
    }
}

impl std::error::Error for Refusal {}

/// `Err(Refusal)` with code `model_mismatch`.
pub fn model_mismatch<T>(why: impl Into<String>) -> Result<T, Refusal> {
    Err(Refusal::new(Code::ModelMismatch, why))
}

/// `Err(Refusal)` with code `too_large`.
pub fn too_large<T>(why: impl Into<String>) -> Result<T, Refusal> {
    Err(Refusal::new(Code::TooLarge, why))
}
