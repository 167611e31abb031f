//! The scale tier, streamed: each record's recipes expanded as its request is written, each answer
//! folded back to digests as it arrives, a differing tensor diffed against the checker's fill.

use super::*;

/// Grades a scale file (docs/protocol.md, the scale tier). A written-out request or answer may take
/// hundreds of megabytes, so neither is ever held for more than one record: the writer thread
/// expands one record's recipes at a time, and the reader thread folds each answer back into the
/// record's form as its line arrives, compares it, and keeps only its grade.
pub fn grade_scale(tree: &Path, committed: Vec<Sent>, o: &Options) -> Result<(Vec<Graded>, Ending), String> {
    grade_scale_capturing(tree, committed, o).map(|(records, ending, _)| (records, ending))
}

/// [`grade_scale`], with the last lines of the implementation's standard error.
///
/// A run that ends with records unanswered (a crash, a signal, the timeout, an early exit) loses the
/// first of them to how it ended, and the implementation is started again on the records after it,
/// at most [`RESTARTS`] times a file; the rest of a file past that are unanswered. The ending and
/// standard error told are those of the first run that lost a record, else of the one run.
pub(super) fn grade_scale_capturing(
    tree: &Path,
    committed: Vec<Sent>,
    o: &Options,
) -> Result<(Vec<Graded>, Ending, Vec<String>), String> {
    let committed = Arc::new(committed);
    let mut records = Vec::with_capacity(committed.len());
    let mut told: Option<(Ending, Vec<String>)> = None;
    let mut restarts = 0;
    loop {
        let from = records.len();
        let (graded, ending, stderr) = run_from(tree, &committed, from, o)?;
        records.extend(graded);
        let Some(lost) = committed.get(records.len()) else {
            let (ending, stderr) = told.unwrap_or((ending, stderr));
            return Ok((records, ending, stderr));
        };
        let again = restarts < RESTARTS && !matches!(ending, Ending::NotStarted(_));
        let why = match again {
            true => format!("{}; it was started again on the records after it", ending.why()),
            false => ending.why(),
        };
        records.push(failed_whole(lost, Outcome::Unanswered(why)));
        let (ending, stderr) = told.get_or_insert((ending, stderr)).clone();
        if !again {
            records.extend(committed[records.len()..].iter().map(|c| unanswered(c, &ending)));
            return Ok((records, ending, stderr));
        }
        restarts += 1;
    }
}

/// The most times a scale file's implementation is started again after a run that lost a record.
const RESTARTS: usize = 8;

/// One run of the implementation on the records of `committed` from `from` on: the grades of
/// those it answered, in order, and how it ended.
fn run_from(
    tree: &Path,
    committed: &Arc<Vec<Sent>>,
    from: usize,
    o: &Options,
) -> Result<(Vec<Graded>, Ending, Vec<String>), String> {
    let timeout = scale_timeout(&committed[from..], o.timeout);
    let grades = Arc::new(Mutex::new(Vec::new()));
    let unexpanded = Arc::new(Mutex::new(None));
    let sent = Arc::new(Mutex::new(Vec::new()));
    let (ending, stderr) = supervise(
        &o.implementation,
        tree,
        timeout,
        {
            let (committed, unexpanded, sent) = (committed.clone(), unexpanded.clone(), sent.clone());
            move |stdin| {
                if let Err(e) = write_expanded(&committed[from..], stdin, &sent) {
                    *lock(&unexpanded) = Some(e);
                }
            }
        },
        {
            let (committed, grades, sent) = (committed.clone(), grades.clone(), sent.clone());
            move |stdout| read_answers(&committed[from..], stdout, &grades, &sent)
        },
    );
    if let Some(e) = lock(&unexpanded).take() {
        return Err(e);
    }
    let graded = std::mem::take(&mut *lock(&grades));
    Ok((graded, ending, stderr))
}

/// A scale file's run may take one more `--timeout` per this many elements of its records' tensors.
const ELEMENTS_PER_TIMEOUT: u64 = 1 << 22;

/// A scale file's timeout: `timeout` once, and once more per [`ELEMENTS_PER_TIMEOUT`] elements of
/// its records' tensors written out.
fn scale_timeout(committed: &[Sent], timeout: Duration) -> Duration {
    let elements: u64 = committed.iter().map(|c| written_elements(&c.record)).sum();
    let extra = u32::try_from(elements / ELEMENTS_PER_TIMEOUT).unwrap_or(u32::MAX);
    timeout.saturating_mul(extra.saturating_add(1))
}

/// The digests of the written-out inputs of each record sent so far, per decode and input
/// ([`recipe::write_expanded_digests`]).
type Digests = Mutex<Vec<Vec<Vec<String>>>>;

/// Writes each record's request, its recipes expanded as they are written, one record at a time,
/// and notes each written-out input's digest in `sent`. Stops quietly when the implementation stops
/// reading (its failure, graded as such); fails on a record that does not expand, a suite bug.
fn write_expanded(committed: &[Sent], stdin: ChildStdin, sent: &Digests) -> Result<(), String> {
    let mut w = BufWriter::new(stdin);
    for c in committed {
        // The stripped record's expansion: `write_expanded` drops the computed fields.
        let written = recipe::write_expanded_digests(&c.record, c.how.profiles_given, &mut w);
        match written.and_then(|d| w.flush().map(|_| d)) {
            Ok(digests) => lock(sent).push(digests),
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                return Err(format!("record {}: {e}", record_id(&c.record)));
            }
            Err(_) => break,
        }
    }
    Ok(())
}

/// Grades each answer line as it arrives, keeping only the grades; past the last record's answer,
/// reads on and keeps nothing, so that the implementation never blocks on a full pipe.
fn read_answers(committed: &[Sent], stdout: Pipe, grades: &Mutex<Vec<Graded>>, sent: &Digests) {
    let mut stdout = BufReader::new(stdout);
    for (n, c) in committed.iter().enumerate() {
        let Some(answer) = read_line(&mut stdout, allowance(c)) else {
            return;
        };
        let g = match answer {
            Answer::Line(line) => {
                // Its inputs' digests as sent, when its request is written whole by now.
                let digests = lock(sent).get(n).cloned();
                grade_scale_answer(c, &line, digests.as_deref())
            }
            Answer::TooLong { cap } => too_long(c, cap),
        };
        lock(grades).push(g);
    }
    let _ = std::io::copy(&mut stdout, &mut std::io::sink());
}

/// Grades one scale answer as [`grade_answer`] does, its `data` arrays never parsed into JSON
/// values ([`arrays::split`]).
fn grade_scale_answer(c: &Sent, line: &[u8], sent: Option<&[Vec<String>]>) -> Graded {
    match arrays::split(line) {
        Ok(mut split) => {
            // Folded once, before each target's fields are picked out.
            let mut r = std::mem::take(&mut split.skeleton);
            let written = fold(&c.record, &mut r, &split, sent);
            grade_value(c, &r, |t| {
                scale_differences(&c.record, target_differences(c, &r, t).0, &written)
            })
        }
        Err(e) => not_json(c, &String::from_utf8_lossy(&line[..line.len().min(480)]), e),
    }
}

/// A tensor of an answer as the implementation wrote it, kept until its record is compared.
struct Written<'a> {
    /// Its path in the record, as a diff names it: `decodes[0].expect.outputs[1]`.
    path: String,
    /// The same, as a JSON pointer.
    pointer: String,
    shape: [u64; 3],
    data: &'a [u8],
}

/// A target's fields of a scale answer (folded back into the record's form by [`fold`]: an input
/// echo that is its recipe written out becomes the recipe, an output its digest) against the
/// record's, field by field (`d`, [`target_differences`]); a tensor that differs is diffed element
/// by element against the checker's, computed only then.
fn scale_differences(record: &Value, d: Vec<Diff>, written: &[Written]) -> Vec<Diff> {
    let differing: Vec<&Written> = written
        .iter()
        .filter(|w| d.iter().any(|x| under(&x.path, &w.path)))
        .collect();
    if differing.is_empty() {
        d
    } else {
        element_diffs(record, d, &differing)
    }
}

/// Whether a diff's path lies in the tensor at `tensor`.
fn under(path: &str, tensor: &str) -> bool {
    path.strip_prefix(tensor)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
}

/// Folds an answer's written-out tensors into the record's form in place; returns each folded
/// tensor as written (an input echo only when it is not its recipe written out). `sent` holds the
/// digests of the inputs as the request wrote them out, when known.
fn fold<'a>(c: &Value, r: &mut Value, split: &arrays::Split<'a>, sent: Option<&[Vec<String>]>) -> Vec<Written<'a>> {
    let mut written = Vec::new();
    let decodes = r.get_mut("decodes").and_then(Value::as_array_mut);
    for (i, d) in decodes.into_iter().flatten().enumerate() {
        let inputs = d.get_mut("inputs").and_then(Value::as_array_mut);
        for (k, t) in inputs.into_iter().flatten().enumerate() {
            let recipe = &c["decodes"][i]["inputs"][k];
            let path = format!("decodes[{i}].inputs[{k}]");
            let digest = sent.and_then(|s| s.get(i)?.get(k)).map(String::as_str);
            if echoes(recipe, t, split, digest) {
                *t = recipe.clone();
            } else if let Some(w) = compacted(t, split, path, format!("/decodes/{i}/inputs/{k}"), None) {
                written.push(w);
            }
        }
        let outputs = d.pointer_mut("/expect/outputs").and_then(Value::as_array_mut);
        for (k, t) in outputs.into_iter().flatten().enumerate() {
            let path = format!("decodes[{i}].expect.outputs[{k}]");
            let pointer = format!("/decodes/{i}/expect/outputs/{k}");
            let committed = c.pointer(&pointer);
            written.extend(compacted(t, split, path, pointer, committed));
        }
    }
    written
}

/// The shape and `data` bytes of a written-out tensor of the skeleton.
fn tensor_parts<'a>(t: &Value, split: &arrays::Split<'a>) -> Result<([u64; 3], &'a [u8]), String> {
    let o = t
        .as_object()
        .filter(|o| o.len() == 2)
        .ok_or("not a tensor {\"data\", \"shape\"}")?;
    let data = split.data(t).ok_or("data: not an array of integer strings")?;
    let dims: Vec<u64> = o["shape"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|d| d.as_str().and_then(wai_checker::canon::parse_u64))
        .collect::<Option<_>>()
        .ok_or("shape: not canonical integers")?;
    let shape: [u64; 3] = dims.try_into().map_err(|_| "shape: not three dimensions")?;
    Ok((shape, data))
}

/// Replaces a written-out tensor by its digest form (or, when it is no tensor, by why) and returns
/// it as written, when it is a tensor. A tensor whose shape and `data` digest are those of the
/// committed digest form (`committed`) is that form: the same bytes, whose digest form the gate
/// holds to be the committed one (`cargo xtask check` refills the scale tier with the checker), so
/// its elements are not read one by one.
fn compacted<'a>(
    t: &mut Value,
    split: &arrays::Split<'a>,
    path: String,
    pointer: String,
    committed: Option<&Value>,
) -> Option<Written<'a>> {
    let parts = tensor_parts(t, split);
    let committed_bytes = |shape: [u64; 3], data: &[u8]| {
        let c = committed?;
        let same_shape = c["shape"] == Value::Array(shape.iter().map(|d| Value::String(d.to_string())).collect());
        let same = same_shape
            && c["sha256"]
                .as_str()
                .is_some_and(|h| wai_oracle::bounds::certificate::sha256_hex(data) == h);
        same.then(|| c.clone())
    };
    let form = parts
        .clone()
        .and_then(|(shape, data)| committed_bytes(shape, data).map_or_else(|| recipe::compact_data(shape, data), Ok))
        .unwrap_or_else(|e| Value::String(format!("not a tensor: {e}")));
    *t = form;
    let (shape, data) = parts.ok()?;
    Some(Written {
        path,
        pointer,
        shape,
        data,
    })
}

/// Whether a received input is the committed recipe written out, element by element (the
/// expansion itself is never formed): its `data` bytes are those the request wrote out when their
/// digest (`sent`) is theirs, and otherwise are compared element by element.
fn echoes(recipe: &Value, received: &Value, split: &arrays::Split, sent: Option<&str>) -> bool {
    let Ok(t) = recipe::RecipeTensor::read(recipe, "input") else {
        return false;
    };
    let same = |data: &[u8]| {
        sent.is_some_and(|d| wai_oracle::bounds::certificate::sha256_hex(data) == d) || recipe::echoes_data(&t, data)
    };
    matches!(tensor_parts(received, split), Ok((shape, data)) if shape == t.shape && same(data))
}

/// `d` with the differences in each differing tensor replaced by its first differing elements
/// against the checker's expected tensor (the record's expansion, filled by the checker), with
/// their `(c, y, x)`. An expected output whose digest is not the committed one is a suite bug, said
/// loudly.
fn element_diffs(c: &Value, d: Vec<Diff>, differing: &[&Written]) -> Vec<Diff> {
    let line = match expected(c) {
        Ok(line) => line,
        Err(e) => {
            let mut d = d;
            d.push(Diff {
                path: "(expected tensors)".into(),
                committed: format!("the checker could not fill the expanded record: {e}"),
                received: String::new(),
            });
            return d;
        }
    };
    let expected = match arrays::split(line.as_bytes()) {
        Ok(e) => e,
        Err(e) => {
            return vec![bug(
                c,
                "(expected tensors)",
                format!("the checker's line is not JSON: {e}"),
            )];
        }
    };
    let mut out = Vec::new();
    let mut done: Vec<&str> = Vec::new();
    for x in d {
        let w = differing.iter().find(|w| under(&x.path, &w.path));
        let e = w.and_then(|w| {
            expected
                .skeleton
                .pointer(&w.pointer)
                .map(|e| (w, tensor_parts(e, &expected)))
        });
        match e {
            None => out.push(x),
            Some((w, _)) if done.contains(&w.path.as_str()) => {}
            Some((w, Err(e))) => out.push(bug(c, &w.path, format!("the checker's tensor: {e}"))),
            Some((w, Ok((shape, data)))) => {
                done.push(&w.path);
                suite_bug(c, w, shape, data, &mut out);
                elements_differing(w, shape, data, &mut out);
            }
        }
    }
    out
}

/// The first elements of a written tensor that differ from the expected one, with their `(c, y, x)`.
fn elements_differing(w: &Written, shape: [u64; 3], expected: &[u8], out: &mut Vec<Diff>) {
    if w.shape != shape {
        let dims = |s: [u64; 3]| format!("{s:?}");
        return out_push(out, LIMIT, format!("{}.shape", w.path), dims(shape), dims(w.shape));
    }
    let dims = shape.map(|d| d as usize);
    let mut received = recipe::data_elements(w.data);
    // Past the limit the rest is only counted, for the report's "… more not shown".
    let mut more = 0;
    for (i, e) in recipe::data_elements(expected).enumerate() {
        let (e, r) = (e.unwrap_or_default(), received.next());
        let r = match r {
            Some(Ok(r)) if r == e => continue,
            Some(Ok(r)) => format!("{r:?}"),
            Some(Err(why)) => why,
            None => "(absent)".into(),
        };
        if out.len() >= LIMIT {
            more += 1;
            continue;
        }
        let path = format!("{}.data[{i}] (c, y, x) = {}", w.path, position(i, &dims));
        out_push(out, LIMIT, path, format!("{e:?}"), r);
    }
    more_elements(out, &format!("{}.data", w.path), more);
}

/// The checker's answer to a record's expanded request: every tensor written out.
fn expected(c: &Value) -> Result<String, String> {
    use wai_checker::fill::fill_line;
    use wai_checker::request::LineError;
    let mut request = Vec::new();
    recipe::write_expanded(c, false, &mut request).map_err(|e| e.to_string())?;
    fill_line(String::from_utf8_lossy(&request).trim_end()).map_err(|e| match e {
        LineError::Bad(m) | LineError::Bug(m) => m,
    })
}

/// A suite bug's difference, printed too: the checker and the suite disagree.
fn bug(c: &Value, path: &str, what: String) -> Diff {
    eprintln!("grade: SUITE BUG: record {}: {path}: {what}", record_id(c));
    Diff {
        path: format!("{path} (SUITE BUG)"),
        committed: what,
        received: String::new(),
    }
}

/// Notes (and prints) an expected output that does not match the committed digest: the checker and
/// the suite disagree, so the suite or the checker has a bug.
fn suite_bug(c: &Value, w: &Written, shape: [u64; 3], data: &[u8], out: &mut Vec<Diff>) {
    // Outputs only: an input's recipe has no digest to disagree with.
    let Some(committed) = c.pointer(&w.pointer).filter(|_| w.pointer.contains("/expect/")) else {
        return;
    };
    let form = recipe::compact_data(shape, data).unwrap_or_else(Value::String);
    if form != *committed {
        let d = Diff {
            path: format!(
                "{} (SUITE BUG: the checker's expected tensor is not the committed one)",
                w.path
            ),
            committed: short(committed),
            received: format!("the checker's {}", short(&form)),
        };
        eprintln!(
            "grade: SUITE BUG: record {}: {}: committed {} vs the checker's {}",
            record_id(c),
            w.path,
            d.committed,
            d.received
        );
        out.push(d);
    }
}
