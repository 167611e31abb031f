//! The grader's roles: integer-operators §1's conformance targets, and which fields of which record
//! form each one computes (docs/protocol.md, "Roles"). A role is graded on its own fields only; the
//! fields another target owns are given in its request or left out of its comparison, never charged
//! to it. The suites and the record forms are the oracle's registry's (`wai_oracle::suite`); what
//! each role owes of them is the grader's policy, here.

use serde_json::Value;
use wai_oracle::suite::{self, CIS2, DETESSDEQUANT, Form, GRAPHS, LOWERINGS, STAGE, VECTORS};

/// `--role`: the target an implementation is graded as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Role {
    /// An operator implementation (§1): each decode's `expect` and load steps 1–7, with the
    /// profiles given.
    Operator,
    /// A certifier (§1): graph vectors' `load` and `profiles`, and the lowering records.
    Certifier,
    /// A sink decoding a capability that §13 lowers (§1): the lowering records' graphs and load,
    /// and the jpegai scale path.
    Sink,
    /// Every field of every record, each target's verdict from its own fields.
    All,
}

impl Role {
    pub fn name(self) -> &'static str {
        match self {
            Role::Operator => "operator",
            Role::Certifier => "certifier",
            Role::Sink => "sink",
            Role::All => "all",
        }
    }

    /// The suites graded when `--suite` is absent: those holding a record form the role computes
    /// something of (the CIS-2 and DetessDequant suites, other specifications, only under `all`).
    /// Never the scale tier's: written out, its requests run to hundreds of megabytes, so it runs
    /// only when named or with `--suite all`.
    pub fn default_suites(self) -> &'static [&'static str] {
        match self {
            Role::Operator => &[VECTORS.name, GRAPHS.name, STAGE.name],
            Role::Certifier => &[VECTORS.name, GRAPHS.name, LOWERINGS.name],
            Role::Sink => &[GRAPHS.name, LOWERINGS.name],
            Role::All => &[
                VECTORS.name,
                GRAPHS.name,
                STAGE.name,
                LOWERINGS.name,
                CIS2.name,
                DETESSDEQUANT.name,
            ],
        }
    }

    /// Whether the role computes anything of a suite's records: of one of its forms.
    pub fn grades_suite(self, name: &str) -> bool {
        suite::named(name).is_some_and(|s| s.forms.iter().any(|f| self.computes(*f)))
    }

    /// Whether the role computes any field of a record of this form (another specification's forms
    /// under every role: their suites are their own targets).
    fn computes(self, form: Form) -> bool {
        match form {
            Form::GraphVector => self.includes(Role::Operator) || self.includes(Role::Certifier),
            Form::Stage => self.includes(Role::Operator),
            Form::Lowering => self.includes(Role::Certifier) || self.includes(Role::Sink),
            Form::ScalePath => self.includes(Role::Sink),
            Form::Cis2Function | Form::Cis2Decode | Form::DequantCall | Form::DequantNumeric => true,
        }
    }

    fn includes(self, role: Role) -> bool {
        self == Role::All || self == role
    }
}

/// A verdict of §1 (or another specification's suite) that a record counts in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Target {
    /// An operator implementation of a profile: the graph and per-operator vectors tagged with it.
    Operator(&'static str),
    /// An operator implementation's stage operators (§5E, §14.1's stage-operator vectors).
    StageOperators,
    Certifier,
    Sink,
    /// The CIS-2 or DetessDequant suite.
    Suite(&'static str),
}

impl Target {
    pub fn name(self) -> String {
        match self {
            Target::Operator(p) => format!("operator implementation, {p}"),
            Target::StageOperators => "operator implementation, stage operators".into(),
            Target::Certifier => "certifier".into(),
            Target::Sink => "sink".into(),
            Target::Suite(s) => format!("{s} suite"),
        }
    }

    /// The target whose [`Target::name`] this is.
    pub fn named(name: &str) -> Option<Target> {
        let operators = crate::grade::PROFILES.into_iter().map(Target::Operator);
        let suites = suite::SUITES.iter().map(|s| Target::Suite(s.name));
        operators
            .chain([Target::StageOperators, Target::Certifier, Target::Sink])
            .chain(suites)
            .find(|t| t.name() == name)
    }
}

/// How a record is graded under a role: the targets it counts in, and whether the profiles are
/// given in its request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grading {
    pub targets: Vec<Target>,
    pub profiles_given: bool,
}

/// The targets a committed record counts in under `role`. `refused_at_bounds` says that its load is
/// refused at load step 8: an operator implementation owes nothing of it (docs/assumptions.md G1).
pub fn grading(role: Role, form: Form, record: &Value, refused_at_bounds: bool) -> Grading {
    let mut targets = Vec::new();
    let mut profiles_given = false;
    match form {
        Form::GraphVector => {
            if role.includes(Role::Operator) && !refused_at_bounds {
                let tags = record["profiles"].as_array().into_iter().flatten();
                for p in crate::grade::PROFILES {
                    if tags.clone().any(|t| t == p) {
                        targets.push(Target::Operator(p));
                    }
                }
                profiles_given = role == Role::Operator;
            }
            if role.includes(Role::Certifier) {
                targets.push(Target::Certifier);
            }
        }
        Form::Stage if role.includes(Role::Operator) => targets.push(Target::StageOperators),
        Form::Lowering => {
            if role.includes(Role::Certifier) {
                targets.push(Target::Certifier);
            }
            if role.includes(Role::Sink) {
                targets.push(Target::Sink);
            }
        }
        Form::ScalePath if role.includes(Role::Sink) => targets.push(Target::Sink),
        Form::Cis2Function | Form::Cis2Decode => targets.push(Target::Suite(CIS2.name)),
        Form::DequantCall | Form::DequantNumeric => targets.push(Target::Suite(DETESSDEQUANT.name)),
        Form::Stage | Form::ScalePath => {}
    }
    Grading {
        targets,
        profiles_given,
    }
}

/// Whether a graph vector's committed `load` is a refusal made at load step 8 (§10.5: the bounds
/// pass and the profile against the verdict): the graph passes steps 1–7 by the checker's reading.
pub fn refused_at_bounds(record: &Value) -> bool {
    let refused = record["load"].as_str().is_some_and(|l| l != "ok");
    let graph = record["graph"].as_str().and_then(|h| hex::decode(h).ok());
    refused && graph.is_some_and(|g| wai_checker::whg1::load::planned(&g).is_ok())
}

/// What `target` computes of a record of `form`: the record (committed or received) with the
/// fields it does not compute removed. An operator implementation receives `profiles`; a
/// certifier runs no decode; a sink need not write the certificate (§8.6).
pub fn owned(target: Target, form: Form, record: &Value) -> Value {
    let mut v = record.clone();
    if let Some((at, member)) = unowned(target, form)
        && let Some(o) = object_at_mut(&mut v, at)
    {
        o.remove(member);
    }
    v
}

/// The field `target` does not compute of a record of `form`, which [`owned`] removes: the member
/// named `.1` of the object at the keys `.0`, when it is an object.
pub fn unowned(target: Target, form: Form) -> Option<(&'static [&'static str], &'static str)> {
    match (target, form) {
        (Target::Operator(_), Form::GraphVector) => Some((&[], "profiles")),
        (Target::Certifier, Form::GraphVector) => Some((&[], "decodes")),
        (Target::Sink, Form::Lowering) => Some((&["expect"], "certificate_sha256")),
        _ => None,
    }
}

/// The object at the keys `at` of `v`.
pub fn object_at<'v>(v: &'v Value, at: &[&str]) -> Option<&'v serde_json::Map<String, Value>> {
    at.iter().try_fold(v, |v, k| v.get(k))?.as_object()
}

fn object_at_mut<'v>(v: &'v mut Value, at: &[&str]) -> Option<&'v mut serde_json::Map<String, Value>> {
    at.iter().try_fold(v, |v, k| v.get_mut(k))?.as_object_mut()
}

/// The reading that names the refusal codes of a record form whose specification fixes when to
/// refuse but names no code: DetessDequant's calls (D3) and CIS-2's decodes (C12). An answer that
/// refuses such a record with another code is graded apart ([`super::Outcome::CodeDiffers`]).
pub fn code_reading(form: Form) -> Option<&'static str> {
    match form {
        Form::DequantCall => Some("D3"),
        Form::Cis2Decode => Some("C12"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_role_grades_the_suites_holding_a_form_it_computes() {
        let graded = |r: Role| -> Vec<&str> {
            suite::SUITES
                .iter()
                .filter(|s| r.grades_suite(s.name))
                .map(|s| s.name)
                .collect()
        };
        let (cis2, dequant) = ("cis2", "detessdequant");
        assert_eq!(
            graded(Role::Operator),
            ["vectors", "graphs", "stage", cis2, dequant, "scale"]
        );
        assert_eq!(
            graded(Role::Certifier),
            ["vectors", "graphs", "lowerings", cis2, dequant, "scale"]
        );
        assert_eq!(graded(Role::Sink), ["graphs", "lowerings", cis2, dequant]);
        assert_eq!(graded(Role::All).len(), suite::SUITES.len());
        assert!(!Role::All.grades_suite("certificates"));
    }
}
