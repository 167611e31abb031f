//! The refusal codes of §4 that a graph's load (§10.5) and its decodes (§4's run steps) give.

/// A refusal code of §4.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    ModelMismatch,
    TooLarge,
    FieldRange,
    GeometryMismatch,
}

impl Code {
    pub fn name(self) -> &'static str {
        match self {
            Code::ModelMismatch => "model_mismatch",
            Code::TooLarge => "too_large",
            Code::FieldRange => "field_range",
            Code::GeometryMismatch => "geometry_mismatch",
        }
    }
}
