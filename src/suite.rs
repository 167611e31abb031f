//! The tree's suites and their record forms (docs/protocol.md, "The record forms at a glance"),
//! written once: which corpus folders the generator fills each suite's files from, where they go in
//! the tree, which member marks a line's form, and which fields `fill` computes. The generator
//! writes the tree by it, `fill` tells a line's form by it, and xtask strips requests and lists the
//! grader's suites by it.

use serde_json::Value;

/// A record form, told by the member that marks it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// A graph vector, per-operator or not, a scale record's included: a line no other form's
    /// member marks.
    GraphVector,
    /// A stage-operator vector: `op`.
    Stage,
    /// A lowering record: `lowering`.
    Lowering,
    /// A jpegai scale-path record: `bundle`.
    ScalePath,
    /// A CIS-2 function or primitive: `fn`.
    Cis2Function,
    /// A CIS-2 decode: `model`.
    Cis2Decode,
    /// A DetessDequant call: `buffers`.
    DequantCall,
    /// A DetessDequant numeric record: an `in` holding `q`.
    DequantNumeric,
}

/// Every form.
const FORMS: [Form; 8] = [
    Form::GraphVector,
    Form::Stage,
    Form::Lowering,
    Form::ScalePath,
    Form::Cis2Function,
    Form::Cis2Decode,
    Form::DequantCall,
    Form::DequantNumeric,
];

/// The forms a top-level member marks, in the order a line is told by.
const MARKS: [(&str, Form); 6] = [
    ("op", Form::Stage),
    ("lowering", Form::Lowering),
    ("bundle", Form::ScalePath),
    ("fn", Form::Cis2Function),
    ("model", Form::Cis2Decode),
    ("buffers", Form::DequantCall),
];

/// The field `fill` computes in each decode of a graph vector.
pub const DECODE_COMPUTED: &str = "expect";

impl Form {
    /// A line's form: the first of [`MARKS`] whose member it holds, else a DetessDequant numeric
    /// record when its `in` holds `q`, else a graph vector (a line that is no object included).
    pub fn of(line: &Value) -> Form {
        match MARKS.iter().find(|(member, _)| line.get(member).is_some()) {
            Some(&(_, form)) => form,
            None if line.get("in").is_some_and(|i| i.get("q").is_some()) => Form::DequantNumeric,
            None => Form::GraphVector,
        }
    }

    /// The form as reports name it.
    pub fn name(self) -> &'static str {
        match self {
            Form::GraphVector => "a graph vector",
            Form::Stage => "a stage-operator vector",
            Form::Lowering => "a lowering record",
            Form::ScalePath => "a jpegai scale-path record",
            Form::Cis2Function => "a CIS-2 function record",
            Form::Cis2Decode => "a CIS-2 decode record",
            Form::DequantCall => "a DetessDequant call",
            Form::DequantNumeric => "a DetessDequant numeric record",
        }
    }

    /// The top-level fields `fill` computes (and a graph vector's decodes' [`DECODE_COMPUTED`]).
    pub fn computed(self) -> &'static [&'static str] {
        match self {
            Form::GraphVector => &["load", "profiles"],
            _ => &["expect"],
        }
    }
}

/// Removes a record's computed fields, leaving the request `fill` receives. Every form's are
/// removed, whatever the record's form: a committed record that holds another form's (a file gone
/// wrong) is then reported by that field, not refused as a request.
pub fn strip(record: &mut Value) {
    let Some(o) = record.as_object_mut() else {
        return;
    };
    for field in FORMS.iter().flat_map(|f| f.computed()) {
        o.remove(*field);
    }
    let decodes = o.get_mut("decodes").and_then(Value::as_array_mut);
    for d in decodes.into_iter().flatten().filter_map(Value::as_object_mut) {
        d.remove(DECODE_COMPUTED);
    }
}

/// A suite: its name, which is its folder in the tree (and under [`PROVISIONAL`]) and the grader's
/// `--suite`; the forms of its records; and the corpus folders the generator fills it from.
#[derive(Debug, PartialEq, Eq)]
pub struct Suite {
    pub name: &'static str,
    pub forms: &'static [Form],
    /// The corpus folders filled case by case (the lowering records and CIS-2's are written from
    /// `corpus/sets/` and `corpus/cis2/` as wholes).
    pub folders: &'static [Folder],
}

/// A corpus folder whose every file `<stem>.json` becomes the tree file `<tree><stem>.jsonl`, one
/// line per case.
#[derive(Debug, PartialEq, Eq)]
pub struct Folder {
    /// The folder under `corpus/`.
    pub corpus: &'static str,
    /// The tree file's path up to the stem.
    pub tree: &'static str,
    pub cases: Cases,
}

/// What a corpus folder's cases describe (docs/corpus.md), and so how the generator makes their
/// requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cases {
    /// Graph vectors whose every graph holds one operator, the file's stem.
    Operator,
    /// Graph vectors.
    Graphs,
    /// Vectors of one stage operator, the file's stem.
    StageOperator,
    /// jpegai scale-path records.
    ScalePath,
    /// DetessDequant calls and numeric records, each case's members telling which.
    DetessDequant,
}

const fn folder(corpus: &'static str, tree: &'static str, cases: Cases) -> Folder {
    Folder { corpus, tree, cases }
}

pub const VECTORS: Suite = Suite {
    name: "vectors",
    forms: &[Form::GraphVector],
    folders: &[folder("vectors", "vectors/", Cases::Operator)],
};

pub const GRAPHS: Suite = Suite {
    name: "graphs",
    forms: &[Form::GraphVector, Form::ScalePath],
    // Scale-path records are graph vectors' neighbours (§14.2, §13.6.1).
    folders: &[
        folder("graphs", "graphs/", Cases::Graphs),
        folder("jpegai", "graphs/jpegai_", Cases::ScalePath),
    ],
};

pub const STAGE: Suite = Suite {
    name: "stage",
    forms: &[Form::Stage],
    folders: &[
        folder("stage", "stage/", Cases::StageOperator),
        folder("provisional/stage", "provisional/stage/", Cases::StageOperator),
    ],
};

pub const LOWERINGS: Suite = Suite {
    name: "lowerings",
    forms: &[Form::Lowering],
    folders: &[],
};

pub const CIS2: Suite = Suite {
    name: "cis2",
    forms: &[Form::Cis2Function, Form::Cis2Decode],
    folders: &[],
};

pub const DETESSDEQUANT: Suite = Suite {
    name: "detessdequant",
    forms: &[Form::DequantNumeric, Form::DequantCall],
    folders: &[
        folder("detessdequant", "detessdequant/", Cases::DetessDequant),
        folder(
            "provisional/detessdequant",
            "provisional/detessdequant/",
            Cases::DetessDequant,
        ),
    ],
};

/// The scale tier (docs/scale.md): graph vectors at the sizes where implementations break, in a
/// folder with its own manifest.
pub const SCALE: Suite = Suite {
    name: "scale",
    forms: &[Form::GraphVector],
    folders: &[
        folder("scale", "scale/", Cases::Operator),
        folder("scale/graphs", "scale/graphs/", Cases::Graphs),
    ],
};

/// Every suite, the scale tier's last.
pub const SUITES: [&Suite; 7] = [&VECTORS, &GRAPHS, &STAGE, &LOWERINGS, &CIS2, &DETESSDEQUANT, &SCALE];

/// The folder of the files that rest on readings the seeds do not fix (docs/assumptions.md), each
/// of a suite: `provisional/stage/rans64_decode.jsonl`.
pub const PROVISIONAL: &str = "provisional";

/// The suite of that name.
pub fn named(name: &str) -> Option<&'static Suite> {
    SUITES.into_iter().find(|s| s.name == name)
}

/// The suite a tree file (relative, `/`-separated) belongs to, and whether it is provisional.
pub fn of_path(path: &str) -> Option<(&'static Suite, bool)> {
    let (rest, provisional) = match path.strip_prefix(PROVISIONAL).and_then(|r| r.strip_prefix('/')) {
        Some(rest) => (rest, true),
        None => (path, false),
    };
    Some((named(rest.split('/').next()?)?, provisional))
}

/// The tree's two tiers (docs/scale.md): the scale suite's folder, with its own manifest, and
/// everything else.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tier {
    Small,
    Scale,
    All,
}

impl Tier {
    /// The names [`Tier::parse`] takes.
    pub const NAMES: [&str; 3] = ["small", "scale", "all"];

    pub fn parse(name: &str) -> Result<Tier, String> {
        match name {
            "small" => Ok(Tier::Small),
            "scale" => Ok(Tier::Scale),
            "all" => Ok(Tier::All),
            other => Err(format!("{other:?} is not small, scale or all")),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Tier::Small => "small",
            Tier::Scale => "scale",
            Tier::All => "all",
        }
    }

    pub fn has_small(self) -> bool {
        self != Tier::Scale
    }

    pub fn has_scale(self) -> bool {
        self != Tier::Small
    }

    /// Whether the tree file at `path` (relative, `/`-separated) belongs to this tier.
    pub fn holds(self, path: &str) -> bool {
        let scale = path.strip_prefix(SCALE.name).is_some_and(|r| r.starts_with('/'));
        self.has(scale)
    }

    /// The suites whose files are in this tier.
    pub fn suites(self) -> impl Iterator<Item = &'static Suite> {
        SUITES.into_iter().filter(move |s| self.has(**s == SCALE))
    }

    /// Whether this tier holds the scale tier's files (`scale`) or the small tier's.
    fn has(self, scale: bool) -> bool {
        if scale { self.has_scale() } else { self.has_small() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_line_is_told_by_its_first_marking_member() {
        assert_eq!(Form::of(&json!({"op": "coded", "lowering": "x"})), Form::Stage);
        assert_eq!(Form::of(&json!({"fn": "exp", "in": {"q": []}})), Form::Cis2Function);
        assert_eq!(Form::of(&json!({"in": {"q": []}})), Form::DequantNumeric);
        assert_eq!(Form::of(&json!({"in": {"x": []}})), Form::GraphVector);
        assert_eq!(Form::of(&json!([1])), Form::GraphVector);
    }

    #[test]
    fn strip_leaves_the_request() {
        let mut graph =
            json!({"decodes": [{"expect": {}, "inputs": []}], "graph": "", "id": "g", "load": "ok", "profiles": []});
        strip(&mut graph);
        assert_eq!(graph, json!({"decodes": [{"inputs": []}], "graph": "", "id": "g"}));
        // A graph vector's computed field in a stage vector goes too.
        let mut stage = json!({"expect": {}, "id": "s", "in": {}, "load": "ok", "op": "coded"});
        strip(&mut stage);
        assert_eq!(stage, json!({"id": "s", "in": {}, "op": "coded"}));
    }

    #[test]
    fn a_tree_file_names_its_suite() {
        assert_eq!(of_path("provisional/stage/rans64_decode.jsonl"), Some((&STAGE, true)));
        assert_eq!(of_path("graphs/jpegai_scale_path.jsonl"), Some((&GRAPHS, false)));
        assert_eq!(of_path("scale/graphs/networks.jsonl"), Some((&SCALE, false)));
        assert_eq!(of_path("certificates/x.json"), None);
        assert!(Tier::Scale.holds("scale/conv.jsonl") && !Tier::Scale.holds("scalex/conv.jsonl"));
    }
}
