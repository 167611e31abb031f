//! What the corpus must cover (docs/corpus.md): the items of each operator's per-operator file,
//! of each stage operator's file and of the whole tree, and the list a run checks.

use super::scale;
use wai_oracle::suite::Tier;
use wai_oracle::whg1::OPERATORS;

/// The operators whose every graph fails `acc32` (§7.3).
const NEVER_ACC32: [&str; 5] = ["layernorm_c", "l2norm", "softmax", "sigmoid", "elu"];

/// The rq operators and whether their `rq` has a multiplier.
fn rq_op(op: &str) -> Option<bool> {
    match op {
        "conv" | "conv_transpose" | "rescale" | "chscale" | "mul" => Some(true),
        "gram" | "apply" => Some(false),
        _ => None,
    }
}

/// The accumulator keys whose partial-sum interval's ends an input must attain (§14.1 item 1),
/// with the ends that can be attained (docs/corpus.md).
pub fn accumulators(op: &str) -> &'static [(&'static str, &'static [&'static str])] {
    match op {
        "conv" => &[("conv.acc", &["lo", "hi"])],
        "conv_transpose" => &[("convT.acc", &["lo", "hi"])],
        "gram" => &[("gram.acc", &["lo", "hi"])],
        "apply" => &[("apply.acc", &["lo", "hi"])],
        "igdn" => &[("igdn.N", &["lo", "hi"])],
        "layernorm_c" => &[("ln.S", &["lo", "hi"])],
        "l2norm" => &[("l2.T", &["lo", "hi"])],
        "softmax" => &[("sm.sum", &["hi"])],
        _ => &[],
    }
}

const TIE_SHIFTS: [u32; 6] = [1, 31, 32, 62, 63, 64];
const SHIFTS: [u32; 8] = [0, 1, 31, 32, 62, 63, 64, 127];

/// Every item a per-operator file must cover.
fn operator(op: &str) -> Vec<String> {
    let mut items = vec!["decode".to_string(), "1x1".into(), "odd".into()];
    for (key, ends) in accumulators(op) {
        items.extend(ends.iter().map(|e| format!("acc-ends:{key}:{e}")));
    }
    if let Some(mult) = rq_op(op) {
        for round in ["floor", "half_up", "half_even"] {
            for s in TIE_SHIFTS {
                for sign in ["pos", "neg"] {
                    // Without a multiplier the product is an i64: no tie at 2^63 (docs/corpus.md).
                    if mult || s < 64 || sign == "neg" {
                        items.push(format!("tie:{round}:{sign}:s{s}"));
                    }
                }
            }
            // At 127 only p = 2^126 ties, and for half_up and half_even its interval reaches
            // 2^126 + 2^126 = 2^127, past i128: only floor's loads (docs/corpus.md).
            if mult && round == "floor" {
                items.push(format!("tie:{round}:pos:s127"));
            }
        }
        items.extend(SHIFTS.iter().map(|s| format!("shift:s{s}")));
    }
    if matches!(op, "conv" | "conv_transpose") {
        items.extend(["kernel>input".into(), "stride>kernel".into()]);
    }
    if op == "conv_transpose" {
        items.push("outpad>=stride".into());
    }
    if NEVER_ACC32.contains(&op) {
        items.push("profiles:acc64".into());
    } else {
        items.extend(["profiles:both", "profiles:acc64"].map(String::from));
        // Ends no interval of the operator can have in an acc32 vector (docs/corpus.md).
        let unreachable: &[&str] = match op {
            "chunk_add" => &["acc32:max"],
            "abs" => &["acc32:min"],
            "lut16" => &["acc32:max", "acc32:min", "acc32:past"],
            _ => &[],
        };
        for item in ["acc32:max", "acc32:min", "acc32:past"] {
            if !unreachable.contains(&item) {
                items.push(item.into());
            }
        }
    }
    for side in ["in", "out"] {
        items.extend(["lo", "hi", "below", "above"].map(|e| format!("check-{side}:{e}")));
    }
    if matches!(op, "chscale" | "crop" | "fill") {
        items.extend(["lo", "hi", "below", "above"].map(|e| format!("scalar:{e}")));
    }
    let shape_rule = [
        "conv",
        "conv_transpose",
        "add",
        "mul",
        "concat",
        "pixel_unshuffle",
        "crop_to",
        "crop",
        "subpos_split",
        "subpos_merge",
        "gram",
        "apply",
    ];
    if shape_rule.contains(&op) {
        items.push("plan:shape".into());
    }
    // subpos_merge's 2H passes 2^26 only on an input of more than 2^25 rows, which no
    // one-operator vector can carry; a graph vector covers it (docs/corpus.md).
    if matches!(op, "conv" | "conv_transpose" | "pad_rep") {
        items.push("plan:size".into());
    }
    // gram's output [C, 1, C/groups] does not depend on the sizes, and gram must declare
    // them, so load planning already refuses an output past max_elems (docs/corpus.md).
    if matches!(
        op,
        "conv" | "conv_transpose" | "pad_rep" | "concat" | "subpos_merge" | "fill"
    ) {
        items.push("plan:max_elems".into());
    }
    let distinguishing: &[&str] = match op {
        "igdn" => &["floor-each-term"],
        "leaky" => &["floor-away"],
        "softmax" => &["row-sum", "exp-n62", "exp-n63"],
        "sigmoid" => &["exp-n62", "exp-n63", "range-min-refused", "range-near-min"],
        "elu" => &["zero", "exp-n62", "exp-n63", "range-min-refused", "range-near-min"],
        "layernorm_c" => &["odd-c", "half-mean", "eps-max"],
        "rescale" => &["q-past-64"],
        _ => &[],
    };
    items.extend(distinguishing.iter().map(|s| s.to_string()));
    items
}

/// The items every tree must cover somewhere (§14.2, and every refusal code).
fn tree() -> Vec<String> {
    let mut items: Vec<String> = [
        "load.1",
        "load.2",
        "load.3",
        "load.4",
        "load.5",
        "load.6",
        "load.7",
        "load.8.pass",
        "load.8.profile",
    ]
    .map(|s| format!("graph:{s}"))
    .into();
    for s in [
        "run.1.channels",
        "run.1.sides",
        "run.1.declared",
        "run.1.max_elems",
        "run.2",
        "run.3.size",
        "run.3.shape",
        "run.3.max_elems",
        "run.4.input",
        "run.4.check",
    ] {
        items.push(format!("graph:{s}"));
    }
    items.extend(
        [
            "graph:state-three",
            "graph:state-refused",
            "graph:phase-form",
            "graph:mixed",
        ]
        .map(String::from),
    );
    items.extend(["model_mismatch", "too_large", "field_range", "geometry_mismatch"].map(|c| format!("code:{c}")));
    items
}

/// The items a stage-operator file must cover (docs/corpus.md).
fn stage(op: &str) -> Vec<String> {
    let refuse = |rules: &[&str]| rules.iter().map(|r| format!("refuse:{r}")).collect::<Vec<_>>();
    let mut items: Vec<String> = match op {
        "dequantize" => [vec!["decode".into()], refuse(&["f", "value"])].concat(),
        "bucket" => [
            vec![
                "ceil:decode".into(),
                "floor:decode".into(),
                "ceil:at-edge".into(),
                "floor:at-edge".into(),
            ],
            refuse(&["edges", "order"]),
        ]
        .concat(),
        "coded" => vec!["true".into(), "false".into()],
        "scale_index" => [vec!["decode".into()], refuse(&["s", "n"])].concat(),
        "block_stat" => [
            vec!["decode".into(), "partial".into()],
            refuse(&["side", "b", "s", "range"]),
        ]
        .concat(),
        "band_lookup" => [vec!["decode".into()], refuse(&["row", "entries"])].concat(),
        "residual_step" => [
            ["r=R", "r=-R", "r=R+1", "r=-R-1", "i32-limits"]
                .map(String::from)
                .to_vec(),
            refuse(&["range", "pred", "q", "r"]),
        ]
        .concat(),
        "coding_order" => [
            ["raster", "checkerboard-true", "checkerboard-false"]
                .map(String::from)
                .to_vec(),
            refuse(&["side", "size"]),
        ]
        .concat(),
        "mans_decode" => [
            [
                "sgm",
                "fac",
                "zero-tail",
                "short",
                "bound-128",
                "bound-255",
                "escape-128",
                "escape-255",
                "fac-escape",
                "unmasked",
            ]
            .map(String::from)
            .to_vec(),
            refuse(&[
                "pmf_width",
                "pmf_negative",
                "pmf_sum",
                "bound",
                "span_lengths",
                "sigma",
                "row_counts",
                "row_order",
                "lengths",
                "length",
                "size",
            ]),
        ]
        .concat(),
        "rans64_decode" => {
            let mut v = Vec::new();
            for t in ["t4097", "t2"] {
                for e in ["lenient", "strict"] {
                    for end in ["canonical", "final_only"] {
                        v.push(format!("modes:{t}:{e}:{end}"));
                    }
                }
            }
            v.extend(["end:canonical", "end:final_only", "lenient:canonical:exhausted"].map(String::from));
            for c in [
                "exhausted",
                "count",
                "minimal",
                "range",
                "exhausted+count",
                "exhausted+minimal",
                "exhausted+range",
                "count+range",
                "minimal+range",
            ] {
                v.push(format!("strict:canonical:{c}"));
            }
            for c in ["count", "minimal", "range", "count+range", "minimal+range"] {
                v.push(format!("strict:final_only:{c}"));
            }
            [
                v,
                refuse(&[
                    "stream_length",
                    "table_n",
                    "table_ends",
                    "table_order",
                    "offset",
                    "strict_range",
                    "read",
                ]),
            ]
            .concat()
        }
        _ => vec![],
    };
    items.sort();
    items
}

/// Every item a run requires, in the order it reports them: those of each operator (of `only`,
/// or all) in the small tier and the scale tier, of each stage operator, and with no `only` the
/// tree's; of `tier` alone.
pub fn all(only: &[String], tier: Tier) -> Vec<String> {
    let chosen = |op: &str| only.is_empty() || only.iter().any(|o| o == op);
    let mut items: Vec<String> = Vec::new();
    for (_, op) in OPERATORS.iter().filter(|(_, op)| chosen(op)) {
        items.extend(operator(op).into_iter().map(|i| format!("{op}:{i}")));
    }
    for (_, op) in OPERATORS.iter().filter(|(_, op)| chosen(op)) {
        items.extend(scale::required(op).into_iter().map(|i| format!("scale:{op}:{i}")));
    }
    for op in wai_oracle::fill::stage::OPERATORS.iter().filter(|op| chosen(op)) {
        items.extend(stage(op).into_iter().map(|i| format!("{op}:{i}")));
    }
    if only.is_empty() {
        items.extend(["sets:acc64-by-one", "sets:claim-acc32-by-one"].map(String::from));
        items.extend(wai_oracle::lower::LOWERINGS.iter().map(|l| format!("lowering:{l}")));
        items.extend(["jpegai:decode", "jpegai:load-refused", "jpegai:stream-exhausted"].map(String::from));
        items.extend(tree());
        items.extend(scale::required_graphs().into_iter().map(|i| format!("scale:graph:{i}")));
        items.extend(crate::cis2::required());
        items.extend(crate::dequant::required());
        items.extend(["stream_exhausted", "stream_noncanonical"].map(|c| format!("code:{c}")));
    }
    // The scale tier's items are its size classes (docs/scale.md), `scale:…`.
    items.retain(|i| {
        if i.starts_with("scale:") {
            tier.has_scale()
        } else {
            tier.has_small()
        }
    });
    items
}
