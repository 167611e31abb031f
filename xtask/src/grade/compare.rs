//! One answer against its committed record: each target's fields compared (`roles::owned`), a
//! tensor element by element, what fed a differing element by the checker.

use super::*;

/// One field that differs: its path, and the committed and received values (shortened).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diff {
    pub path: String,
    pub committed: String,
    pub received: String,
}

/// One record's grade.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Passed,
    Failed(Vec<Diff>),
    Unanswered(String),
    /// The implementation answered `{"id":…,"not_supported":"reason"}`: it declines the record.
    NotGradable(String),
    /// Refused as the record requires, with another code: the specification fixes the refusal, the
    /// code is the project's reading `reading` (docs/assumptions.md). Never a failure.
    CodeDiffers {
        reading: String,
        committed: String,
        received: String,
    },
}

impl Outcome {
    /// Failed or unanswered: the outcomes that make a verdict "does not conform".
    pub fn is_bad(&self) -> bool {
        matches!(self, Outcome::Failed(_) | Outcome::Unanswered(_))
    }

    /// Passed, or refused as required with another code ([`Outcome::CodeDiffers`]).
    pub fn passes(&self) -> bool {
        matches!(self, Outcome::Passed | Outcome::CodeDiffers { .. })
    }
}

/// The reason of a `{"id":…,"not_supported":"reason"}` answer for the record `id`: exactly those
/// two members, the id the request's, the reason a non-empty string. Anything else is graded as an
/// ordinary answer (and fails).
pub fn not_supported(answer: &Value, id: &str) -> Option<String> {
    let o = answer.as_object()?;
    let reason = o.get("not_supported")?.as_str()?;
    (o.len() == 2 && o.get("id")?.as_str()? == id && !reason.trim().is_empty()).then(|| reason.to_string())
}

/// The differences between a committed value and a received one, at most `limit` of them; a
/// tensor (`{data, shape}`) is compared element by element with each element's `(c, y, x)`, and the
/// elements of a tensor past the limit are counted.
pub fn diff(committed: &Value, received: &Value, path: &str, limit: usize, out: &mut Vec<Diff>) {
    diff_skipping(committed, received, None, path, limit, out);
}

/// [`diff`], as if the member `skip` names were absent from both sides ([`jsondiff::walk_skipping`]).
fn diff_skipping(
    committed: &Value,
    received: &Value,
    skip: Option<jsondiff::Skip>,
    path: &str,
    limit: usize,
    out: &mut Vec<Diff>,
) {
    // Per tensor past the limit: its `data` path and how many more elements differ.
    let mut more: Vec<(String, usize)> = Vec::new();
    jsondiff::walk_skipping(committed, received, skip, &mut |steps, c, r| {
        let here = joined(path, &jsondiff::render(steps));
        let show = |v: Option<&Value>| v.map_or("(absent)".into(), short);
        match tensor_element(committed, received, steps) {
            Some(_) if out.len() >= limit => {
                let data = here.rsplit_once('[').map_or(here.clone(), |x| x.0.to_string());
                match more.iter_mut().find(|m| m.0 == data) {
                    Some(m) => m.1 += 1,
                    None => more.push((data, 1)),
                }
            }
            Some((i, dims)) => out.push(Diff {
                path: format!("{here} (c, y, x) = {}", position(i, &dims)),
                committed: show(c),
                received: show(r),
            }),
            None => match (c, r) {
                (Some(Value::Array(a)), Some(Value::Array(b))) if tensor_data(committed, received, steps) => out_push(
                    out,
                    limit,
                    here,
                    format!("{} elements", a.len()),
                    format!("{} elements", b.len()),
                ),
                _ => out_push(out, limit, here, show(c), show(r)),
            },
        }
        ControlFlow::Continue(())
    });
    for (data, n) in more {
        more_elements(out, &data, n);
    }
}

/// `a.b` from a prefix path and a rendered one.
fn joined(prefix: &str, path: &str) -> String {
    match (prefix.is_empty(), path.is_empty()) {
        (true, _) => path.to_string(),
        (false, true) => prefix.to_string(),
        (false, false) => format!("{prefix}.{path}"),
    }
}

/// When `steps` is an element of a tensor's `data` (`…data[i]`) whose shape both sides share: its
/// index and the tensor's dimensions.
fn tensor_element(committed: &Value, received: &Value, steps: &[jsondiff::Step]) -> Option<(usize, Vec<usize>)> {
    let [parent @ .., jsondiff::Step::Key("data"), jsondiff::Step::Index(i)] = steps else {
        return None;
    };
    let dims = shared_shape(committed, received, parent)?;
    Some((*i, dims))
}

/// Whether `steps` is the `data` of a tensor whose shape both sides share.
fn tensor_data(committed: &Value, received: &Value, steps: &[jsondiff::Step]) -> bool {
    matches!(steps, [parent @ .., jsondiff::Step::Key("data")] if shared_shape(committed, received, parent).is_some())
}

/// The dimensions of the tensor at `path` when it is a tensor on both sides with one shape.
fn shared_shape(committed: &Value, received: &Value, path: &[jsondiff::Step]) -> Option<Vec<usize>> {
    let (a, b) = (
        jsondiff::at(committed, path)?.as_object()?,
        jsondiff::at(received, path)?.as_object()?,
    );
    if !(is_tensor(a) && is_tensor(b) && a["shape"] == b["shape"]) {
        return None;
    }
    let dims = a["shape"].as_array()?.iter();
    Some(
        dims.map(|d| d.as_str().and_then(|s| s.parse().ok()).unwrap_or(0))
            .collect(),
    )
}

/// Notes, past the limit, how many more elements of the tensor at `path` differ than are listed.
pub(super) fn more_elements(out: &mut Vec<Diff>, path: &str, more: usize) {
    if more > 0 {
        out.push(Diff {
            path: format!("{path}: … {more} more differing elements not shown"),
            committed: String::new(),
            received: String::new(),
        });
    }
}

pub(super) fn out_push(out: &mut Vec<Diff>, limit: usize, path: String, committed: String, received: String) {
    if out.len() < limit {
        out.push(Diff {
            path,
            committed,
            received,
        });
    }
}

fn is_tensor(o: &Map<String, Value>) -> bool {
    o.len() == 2 && o.get("data").is_some_and(Value::is_array) && o.get("shape").is_some_and(Value::is_array)
}

/// An element's CHW position in a `[C, H, W]` tensor (or its index for another rank).
pub(super) fn position(i: usize, dims: &[usize]) -> String {
    match dims {
        [_, h, w] if *h > 0 && *w > 0 => format!("({}, {}, {})", i / (h * w), (i / w) % h, i % w),
        _ => format!("({i})"),
    }
}

/// One graded record.
#[derive(Clone, Debug)]
pub struct Graded {
    pub id: String,
    pub outcome: Outcome,
    /// The verdicts the record counts in, each with whether the fields its target computes matched
    /// (all false when the record failed as a whole: no line, not JSON).
    pub targets: Vec<(Target, bool)>,
}

/// A committed record as the grade sends it: its form and how the role grades it.
#[derive(Clone, Debug)]
pub struct Sent {
    pub record: Value,
    pub form: Form,
    pub how: Grading,
    /// The committed line, when it is known: an answer that is this line, byte for byte, passes
    /// without being compared field by field.
    line: Option<String>,
}

impl Sent {
    /// A committed record as `role` grades it.
    pub fn new(record: Value, role: Role) -> Sent {
        let form = Form::of(&record);
        let bounds = role == Role::Operator && form == Form::GraphVector && roles::refused_at_bounds(&record);
        let how = roles::grading(role, form, &record, bounds);
        Sent {
            record,
            form,
            how,
            line: None,
        }
    }

    /// The record with its committed line.
    pub(super) fn with_line(self, line: &str) -> Sent {
        Sent {
            line: Some(line.to_string()),
            ..self
        }
    }

    /// The request: the record without its computed fields, as [`crate::check::strip`] leaves
    /// it, with the profiles when they are given. Written member by member, the record never
    /// copied nor parsed again.
    pub(super) fn request(&self) -> String {
        let mut line = String::new();
        let given = self.how.profiles_given;
        match self.record.as_object() {
            Some(o) if !given || o.contains_key("profiles") => request_object(o, given, &mut line),
            _ => {
                let mut r = self.record.clone();
                suite::strip(&mut r);
                if given {
                    r["profiles"] = self.record["profiles"].clone();
                }
                line = r.to_string();
            }
        }
        line.push('\n');
        line
    }
}

/// Writes a record's request as [`suite::strip`] leaves it (`profiles` kept when `given`), in
/// serde_json's compact form: the members in key order, each value as serde_json writes it.
fn request_object(o: &Map<String, Value>, given: bool, out: &mut String) {
    use std::fmt::Write;
    // The members `strip` removes, found by stripping the record's keys alone.
    let mut kept = Value::Object(o.keys().map(|k| (k.clone(), Value::Null)).collect());
    suite::strip(&mut kept);
    let kept = kept.as_object().expect("an object");
    let key = |k: &str, out: &mut String| {
        if k.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
            let _ = write!(out, "\"{k}\":");
        } else {
            let _ = write!(out, "{}:", Value::String(k.to_string()));
        }
    };
    out.push('{');
    let mut first = true;
    for (k, v) in o {
        if !(kept.contains_key(k) || given && k == "profiles") {
            continue;
        }
        if !std::mem::take(&mut first) {
            out.push(',');
        }
        key(k, out);
        match v.as_array() {
            Some(decodes) if k == "decodes" => {
                out.push('[');
                for (i, d) in decodes.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    match d.as_object() {
                        Some(d) => {
                            out.push('{');
                            let members = d.iter().filter(|(k, _)| *k != suite::DECODE_COMPUTED);
                            for (j, (k, v)) in members.enumerate() {
                                if j > 0 {
                                    out.push(',');
                                }
                                key(k, out);
                                let _ = write!(out, "{v}");
                            }
                            out.push('}');
                        }
                        None => {
                            let _ = write!(out, "{d}");
                        }
                    }
                }
                out.push(']');
            }
            _ => {
                let _ = write!(out, "{v}");
            }
        }
    }
    out.push('}');
}

/// The most differing fields a failed record reports.
pub(super) const LIMIT: usize = 8;

/// Grades one file's responses against its committed records.
pub fn grade_lines(committed: &[Sent], response: &[u8], ending: &Ending) -> Vec<Graded> {
    let answers: Vec<Answer> = response
        .split_inclusive(|&b| b == b'\n')
        .map(|l| Answer::Line(l.strip_suffix(b"\n").unwrap_or(l).to_vec()))
        .collect();
    grade_answers(committed, &answers, ending)
}

/// [`grade_lines`] over the answers as the grader read them, one per record.
pub fn grade_answers(committed: &[Sent], answers: &[Answer], ending: &Ending) -> Vec<Graded> {
    let mut answers = answers.iter();
    committed
        .iter()
        .map(|c| match answers.next() {
            None => unanswered(c, ending),
            Some(Answer::TooLong { cap }) => too_long(c, *cap),
            Some(Answer::Line(line)) => grade_line(c, &String::from_utf8_lossy(line)),
        })
        .collect()
}

/// Grades one answer line (a carriage return before its line feed is not part of it).
fn grade_line(c: &Sent, line: &str) -> Graded {
    let line = line.strip_suffix('\r').unwrap_or(line);
    if c.line.as_deref() == Some(line) && not_supported(&c.record, &record_id(&c.record)).is_none() {
        // The committed line itself: every target's fields are the committed ones.
        return Graded {
            id: record_id(&c.record),
            outcome: Outcome::Passed,
            targets: c.how.targets.iter().map(|t| (*t, true)).collect(),
        };
    }
    // `Value`'s `FromStr`: serde_json's own, optimized, parse (xtask builds unoptimized).
    match line.parse::<Value>() {
        Ok(r) => code_differs(c, &r).unwrap_or_else(|| grade_value(c, &r, |t| written_differences(c, &r, t))),
        Err(e) => not_json(c, line, e),
    }
}

/// A refusal with another code than the committed refusal's, on a record whose codes are a reading
/// ([`roles::code_reading`]): when the answer passes with the committed code in place of its own,
/// it is [`Outcome::CodeDiffers`].
fn code_differs(c: &Sent, r: &Value) -> Option<Graded> {
    let reading = roles::code_reading(c.form)?;
    let committed = c.record.pointer("/expect/refuse")?.as_str()?;
    let received = r.pointer("/expect/refuse")?.as_str()?;
    if committed == received {
        return None;
    }
    let mut same = r.clone();
    same["expect"]["refuse"] = committed.into();
    let g = grade_value(c, &same, |t| written_differences(c, &same, t));
    (g.outcome == Outcome::Passed).then(|| Graded {
        outcome: Outcome::CodeDiffers {
            reading: reading.into(),
            committed: committed.into(),
            received: received.into(),
        },
        ..g
    })
}

/// The most bytes a record's answer line may take (docs/protocol.md, "Line length"): 24 per element
/// it writes out (a quoted 64-bit integer and its comma), twice the committed record, and 1 MiB. The
/// rest of a longer line is read and dropped, so that a runaway implementation never grows the
/// grader.
pub(super) fn allowance(c: &Sent) -> usize {
    let record = c.line.as_ref().map_or_else(|| serialized_len(&c.record), String::len);
    let bytes = 24u64
        .saturating_mul(written_elements(&c.record))
        .saturating_add(2 * record as u64 + (1 << 20));
    usize::try_from(bytes).unwrap_or(usize::MAX)
}

/// The elements a record's answer writes out, by its committed shapes: every decode's inputs
/// (echoed) and outputs.
pub(super) fn written_elements(c: &Value) -> u64 {
    let decodes = c["decodes"].as_array().into_iter().flatten();
    decodes
        .flat_map(|d| {
            let outputs = d.pointer("/expect/outputs").and_then(Value::as_array);
            d["inputs"]
                .as_array()
                .into_iter()
                .flatten()
                .chain(outputs.into_iter().flatten())
        })
        .map(|t| {
            let dims = t["shape"].as_array().into_iter().flatten();
            dims.map(|d| d.as_str().and_then(|d| d.parse().ok()).unwrap_or(0))
                .fold(1u64, u64::saturating_mul)
        })
        .fold(0, u64::saturating_add)
}

/// The length of a value's JSON (`to_string`), counted as serde_json writes it, never held.
fn serialized_len(v: &Value) -> usize {
    struct Count(usize);
    impl std::fmt::Write for Count {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            self.0 += s.len();
            Ok(())
        }
    }
    let mut n = Count(0);
    let _ = std::fmt::Write::write_fmt(&mut n, format_args!("{v}"));
    n.0
}

/// An answer line past the record's allowance: failed, as a whole.
pub(super) fn too_long(c: &Sent, cap: usize) -> Graded {
    let d = Diff {
        path: "(line)".into(),
        committed: format!("a line of at most {cap} bytes"),
        received: "a longer line (the rest was not read)".into(),
    };
    failed_whole(c, Outcome::Failed(vec![d]))
}

/// The differences between the fields `t` computes of a committed record and of an answer, each
/// differing output element explained.
fn written_differences(c: &Sent, r: &Value, t: Target) -> Vec<Diff> {
    let (mut d, mine) = target_differences(c, r, t);
    if d.iter().any(|d| output_element(&d.path).is_some()) {
        let mine = mine.unwrap_or_else(|| roles::owned(t, c.form, &c.record));
        d.iter_mut().for_each(|d| explain(&mine, d));
    }
    d
}

/// [`diff`] of the fields `t` computes of a committed record and of an answer (those of
/// [`roles::owned`]): in place, the member `t` does not compute skipped, where that member's object
/// is an object on both sides or on neither, and otherwise between the owned copies; with the
/// committed one's copy when one was made.
pub(super) fn target_differences(c: &Sent, r: &Value, t: Target) -> (Vec<Diff>, Option<Value>) {
    let skip = roles::unowned(t, c.form);
    let in_place =
        skip.is_none_or(|(at, _)| roles::object_at(&c.record, at).is_some() == roles::object_at(r, at).is_some());
    let mut d = Vec::new();
    if in_place {
        diff_skipping(&c.record, r, skip, "", LIMIT, &mut d);
        (d, None)
    } else {
        let mine = roles::owned(t, c.form, &c.record);
        diff(&mine, &roles::owned(t, c.form, r), "", LIMIT, &mut d);
        (d, Some(mine))
    }
}

/// The decode, output and element a difference's path names, when it is an output element's:
/// `decodes[D].expect.outputs[O].data[I]…`.
fn output_element(path: &str) -> Option<(usize, usize, usize)> {
    let at = |s: &str, prefix: &str| -> Option<(usize, String)> {
        let (n, rest) = s.strip_prefix(prefix)?.split_once(']')?;
        Some((n.parse().ok()?, rest.to_string()))
    };
    let (decode, rest) = at(path, "decodes[")?;
    let (output, rest) = at(&rest, ".expect.outputs[")?;
    let (index, _) = at(&rest, ".data[")?;
    Some((decode, output, index))
}

/// Adds to a differing output element of a one-operator graph vector what feeds it, by the checker
/// (the input elements at its position, an `rq`'s steps): `… (c, y, x) = (0, 0, 3), fed by inputs[0]
/// = 5; rq (§5.1): …`.
fn explain(record: &Value, d: &mut Diff) {
    let element = output_element(&d.path)
        .and_then(|(decode, output, index)| wai_checker::explain::element(record, decode, output, index));
    if let Some(words) = element {
        d.path = format!("{}, fed by {words}", d.path);
    }
}

/// A record with no answer line.
pub(super) fn unanswered(c: &Sent, ending: &Ending) -> Graded {
    failed_whole(c, Outcome::Unanswered(ending.why()))
}

/// A record whose answer failed as a whole: failed in every verdict it counts in.
pub(super) fn failed_whole(c: &Sent, outcome: Outcome) -> Graded {
    Graded {
        id: record_id(&c.record),
        outcome,
        targets: c.how.targets.iter().map(|t| (*t, false)).collect(),
    }
}

/// A line that is not JSON: failed, with the line's start.
pub(super) fn not_json(c: &Sent, line: &str, e: serde_json::Error) -> Graded {
    // Only the line's start is shown, and a scale answer's line may hold a gigabyte.
    let start = Value::String(line.chars().take(120).collect());
    let d = Diff {
        path: "(line)".into(),
        committed: "a JSON record".into(),
        received: format!("not JSON ({e}): {}", short(&start)),
    };
    failed_whole(c, Outcome::Failed(vec![d]))
}

/// Grades a parsed answer: a decline is not gradable; otherwise each target's fields
/// ([`roles::owned`]) are compared by `differences`, and the record's differences are theirs
/// together.
pub(super) fn grade_value(c: &Sent, r: &Value, mut differences: impl FnMut(Target) -> Vec<Diff>) -> Graded {
    let id = record_id(&c.record);
    if let Some(why) = not_supported(r, &id) {
        let targets = c.how.targets.iter().map(|t| (*t, false)).collect();
        return Graded {
            id,
            outcome: Outcome::NotGradable(why),
            targets,
        };
    }
    let mut all: Vec<Diff> = Vec::new();
    let mut targets = Vec::new();
    // Targets that own the same fields of the committed record (an operator's two profiles) are
    // compared once: those whose owned records are equal, which is those that remove the same
    // member present in it, or none.
    let mut compared: Vec<(Option<jsondiff::Skip>, bool)> = Vec::new();
    for &t in &c.how.targets {
        let removed = roles::unowned(t, c.form)
            .filter(|(at, member)| roles::object_at(&c.record, at).is_some_and(|o| o.contains_key(*member)));
        let ok = match compared.iter().find(|(v, _)| *v == removed) {
            Some((_, ok)) => *ok,
            None => {
                let d = differences(t);
                let ok = d.is_empty();
                all.extend(d.into_iter().filter(|x| !all.contains(x)).collect::<Vec<_>>());
                compared.push((removed, ok));
                ok
            }
        };
        targets.push((t, ok));
    }
    let outcome = if all.is_empty() {
        Outcome::Passed
    } else {
        Outcome::Failed(all)
    };
    Graded { id, outcome, targets }
}

pub(super) fn record_id(c: &Value) -> String {
    c.get("id").and_then(Value::as_str).unwrap_or("?").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::check::strip;

    /// The request as `check::strip` makes it: serialized, parsed, stripped, serialized again.
    fn stripped(c: &Sent) -> String {
        let line = strip(format!("{}\n", c.record).as_bytes()).unwrap();
        if !c.how.profiles_given {
            return String::from_utf8(line).unwrap();
        }
        let mut r: Value = serde_json::from_slice(&line).unwrap();
        r["profiles"] = c.record["profiles"].clone();
        format!("{r}\n")
    }

    #[test]
    fn every_committed_records_request_is_the_stripped_record() {
        let tree = Path::new(env!("CARGO_MANIFEST_DIR")).join("../ops-conformance");
        let mut n = 0;
        for path in crate::compare::files(&tree).iter().filter(|f| f.ends_with(".jsonl")) {
            for line in std::fs::read_to_string(tree.join(path)).unwrap().lines() {
                let record: Value = serde_json::from_str(line).unwrap();
                for role in [Role::Operator, Role::Certifier, Role::Sink, Role::All] {
                    let c = Sent::new(record.clone(), role);
                    assert_eq!(c.request(), stripped(&c), "{path}");
                    n += 1;
                }
            }
        }
        // Odd members too: escaped keys, a decode that is no object, no decodes at all.
        let odd = serde_json::json!({"a\"b": {"x\n": 1}, "decodes": [1, {"expect": 2, "z": "é"}], "load": "ok",
                                     "profiles": ["acc32"], "graph": "00"});
        for role in [Role::Operator, Role::All] {
            let c = Sent::new(odd.clone(), role);
            assert_eq!(c.request(), stripped(&c));
        }
        assert!(n > 4000, "{n}");
    }
}
