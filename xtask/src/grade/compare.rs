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
}

impl Outcome {
    /// Failed or unanswered: the outcomes that make a verdict "does not conform".
    pub fn is_bad(&self) -> bool {
        matches!(self, Outcome::Failed(_) | Outcome::Unanswered(_))
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
    // Per tensor past the limit: its `data` path and how many more elements differ.
    let mut more: Vec<(String, usize)> = Vec::new();
    jsondiff::walk(committed, received, &mut |steps, c, r| {
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
}

impl Sent {
    /// A committed record as `role` grades it.
    pub fn new(record: Value, role: Role) -> Sent {
        let form = Form::of(&record);
        let bounds = role == Role::Operator && form == Form::GraphVector && roles::refused_at_bounds(&record);
        let how = roles::grading(role, form, &record, bounds);
        Sent { record, form, how }
    }

    /// The request: the record without its computed fields, with the profiles when they are given.
    pub(super) fn request(&self) -> Result<String, String> {
        let line = strip(format!("{}\n", self.record).as_bytes())?;
        if !self.how.profiles_given {
            return String::from_utf8(line).map_err(|e| e.to_string());
        }
        let mut r: Value = serde_json::from_slice(&line).map_err(|e| e.to_string())?;
        r["profiles"] = self.record["profiles"].clone();
        Ok(format!("{r}\n"))
    }
}

/// The most differing fields a failed record reports.
pub(super) const LIMIT: usize = 8;

/// Grades one file's responses against its committed records.
pub fn grade_lines(committed: &[Sent], response: &[u8], ending: &Ending) -> Vec<Graded> {
    let text = String::from_utf8_lossy(response);
    let mut lines = text.lines();
    committed
        .iter()
        .map(|c| match lines.next() {
            None => unanswered(c, ending),
            Some(line) => grade_answer(c, line, |c, r| {
                let mut d = Vec::new();
                diff(c, r, "", LIMIT, &mut d);
                d.iter_mut().for_each(|d| explain(c, d));
                d
            }),
        })
        .collect()
}

/// Adds to a differing output element of a one-operator graph vector what feeds it, by the checker
/// (the input elements at its position, an `rq`'s steps): `… (c, y, x) = (0, 0, 3), fed by inputs[0]
/// = 5; rq (§5.1): …`.
fn explain(record: &Value, d: &mut Diff) {
    let at = |s: &str, prefix: &str| -> Option<(usize, String)> {
        let (n, rest) = s.strip_prefix(prefix)?.split_once(']')?;
        Some((n.parse().ok()?, rest.to_string()))
    };
    let element = at(&d.path, "decodes[").and_then(|(decode, rest)| {
        let (output, rest) = at(&rest, ".expect.outputs[")?;
        let (index, _) = at(&rest, ".data[")?;
        wai_checker::explain::element(record, decode, output, index)
    });
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

/// Grades one answer line: garbage fails, a decline is not gradable, and a record is compared with
/// the committed one by `differences`.
fn grade_answer(c: &Sent, line: &str, differences: impl FnMut(&Value, &Value) -> Vec<Diff>) -> Graded {
    match serde_json::from_str::<Value>(line) {
        Ok(r) => grade_value(c, &r, differences),
        Err(e) => not_json(c, line, e),
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
pub(super) fn grade_value(c: &Sent, r: &Value, mut differences: impl FnMut(&Value, &Value) -> Vec<Diff>) -> Graded {
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
    // Targets that own the same fields (an operator's two profiles) are compared once.
    let mut compared: Vec<(Value, bool)> = Vec::new();
    for &t in &c.how.targets {
        let mine = roles::owned(t, c.form, &c.record);
        let ok = match compared.iter().find(|(v, _)| *v == mine) {
            Some((_, ok)) => *ok,
            None => {
                let d = differences(&mine, &roles::owned(t, c.form, r));
                let ok = d.is_empty();
                all.extend(d.into_iter().filter(|x| !all.contains(x)).collect::<Vec<_>>());
                compared.push((mine, ok));
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
