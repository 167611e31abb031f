//! §13 lowerings: the range predicates `P_ℓ` and their bounds (§13.2), that every set the
//! `whm1/1` lowering accepts meets `acc64`, and `int_synth/1`'s load checks (§13.1).

use num_bigint::BigInt;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{Value, json};
use wai_oracle::bounds::certificate::Header;
use wai_oracle::bounds::profile::Profile;
use wai_oracle::bounds::profiles_met;
use wai_oracle::lower::whm::{Form, Layer, bound, network, predicate};
use wai_oracle::lower::{self, certify};
use wai_oracle::refusal::Code;
use wai_oracle::whg1::{self, Op, Policy};

fn pick<T: Copy>(rng: &mut ChaCha8Rng, xs: &[T]) -> T {
    xs[rng.random_range(0..xs.len())]
}

/// A magnitude drawn to reach every regime: small, near a power of two, or extreme.
fn value(rng: &mut ChaCha8Rng, max: i64) -> i64 {
    let v = match rng.random_range(0..4) {
        0 => rng.random_range(0..=8),
        1 => rng.random_range(0..=max.min(1 << 20)),
        2 => 1i64.checked_shl(rng.random_range(0..63)).unwrap_or(1).min(max),
        _ => max - rng.random_range(0..=2).min(max),
    };
    if rng.random_bool(0.5) { -v.min(max) } else { v }
}

/// A random WHM1 network rendering of 1 to 4 layers, channels chained.
fn random_network(rng: &mut ChaCha8Rng, form: Form) -> Value {
    let mut c: u64 = rng.random_range(1..=3);
    let mut layers = Vec::new();
    for _ in 0..rng.random_range(1..=4) {
        let tags: &[u64] = if form == Form::Wam1 {
            &[0, 2, 3, 4]
        } else {
            &[0, 1, 2, 3, 4]
        };
        let layer = match pick(rng, tags) {
            tag @ (0 | 1) => {
                let out: u64 = rng.random_range(1..=3);
                let k: u64 = rng.random_range(1..=3);
                let n = (c * out * if form == Form::Wam1 { k } else { k * k }) as usize;
                let weights: Vec<i64> = (0..n).map(|_| value(rng, 32767)).collect();
                let dims = match (tag, form) {
                    (0, Form::Wam1) => vec![c, out, k],
                    (0, _) => vec![c, out, k, k],
                    _ => vec![out, c, k, k],
                };
                let l = json!({
                    "tag": tag, "c": c, "out": out, "k": k, "stride": rng.random_range(1..=2), "pad": rng.random_range(0..=1), "opad": 0,
                    "weights": nest(&weights, &dims),
                    "mult": (0..out).map(|_| value(rng, i64::MAX)).collect::<Vec<_>>(),
                    "bias": (0..out).map(|_| value(rng, i64::MAX)).collect::<Vec<_>>(),
                });
                c = out;
                l
            }
            2 => {
                let gamma: Vec<i64> = (0..c * c).map(|_| value(rng, i64::from(i32::MAX))).collect();
                json!({ "tag": 2, "c": c, "gamma": nest(&gamma, &[c, c]), "beta": (0..c).map(|_| value(rng, i64::MAX)).collect::<Vec<_>>() })
            }
            3 => json!({ "tag": 3 }),
            _ => json!({ "tag": 4, "slope_q": value(rng, i64::MAX), "slope_frac": rng.random_range(0..64) }),
        };
        layers.push(layer);
    }
    json!({ "afrac": rng.random_range(1..=30), "gf": rng.random_range(0..128), "shift": rng.random_range(0..128), "layers": layers })
}

fn nest(values: &[i64], dims: &[u64]) -> Value {
    match dims.split_first() {
        None => json!(values[0]),
        Some((&n, rest)) => {
            let step: usize = rest.iter().product::<u64>() as usize;
            Value::Array(
                (0..n as usize)
                    .map(|i| nest(&values[i * step..(i + 1) * step], rest))
                    .collect(),
            )
        }
    }
}

#[test]
fn x_l_is_where_p_l_stops_holding_for_every_tag() {
    // max|x_ℓ| ≤ X_ℓ exactly when P_ℓ(max|x_ℓ|): P_ℓ holds at X_ℓ and fails at X_ℓ + 1 (unless
    // X_ℓ = 2^63, the top of the search), for layers of every tag that has a predicate.
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    let mut seen = [0usize; 5];
    for _ in 0..3_000 {
        let form = pick(&mut rng, &[Form::Whm1, Form::Wam1]);
        let Ok(net) = network(&random_network(&mut rng, form), form, "net") else {
            continue;
        };
        for layer in &net.layers {
            let tag = match layer {
                Layer::Conv { transpose: true, .. } => 0,
                Layer::Conv { .. } => 1,
                Layer::Igdn { .. } => 2,
                Layer::Relu => 3,
                Layer::Leaky { .. } => 4,
            };
            seen[tag] += 1;
            let Some(x) = bound(&net, layer, form) else {
                assert_eq!(
                    predicate(&net, layer, form, &BigInt::ZERO),
                    Some(false),
                    "no bound only when P(0) fails"
                );
                continue;
            };
            if tag == 3 {
                continue;
            }
            assert_eq!(predicate(&net, layer, form, &x), Some(true), "P_ℓ(X_ℓ) holds");
            if x < BigInt::from(1u64 << 63) {
                assert_eq!(
                    predicate(&net, layer, form, &(&x + 1u32)),
                    Some(false),
                    "P_ℓ(X_ℓ + 1) fails"
                );
            }
        }
    }
    assert!(seen.iter().all(|&n| n > 100), "every tag is exercised: {seen:?}");
}

#[test]
fn the_lowered_check_ranges_are_minus_x_to_min_x_i64() {
    // One tag-1 layer: c·k·k = 1, Wm = 3, Mm = 1, Bm = 0, shift 0: P(X) ⟺ 3X ≤ I64 and 3X + 1 ≤ I64,
    // so X = ⌊(I64 − 1)/3⌋ = 3074457345618258602.
    let set = json!({ "g_s": { "afrac": 8, "gf": 0, "shift": 0, "layers": [
        { "tag": 1, "c": 1, "out": 1, "k": 1, "stride": 1, "pad": 0, "weights": [[[[3]]]], "mult": [1], "bias": [0] } ] } });
    let lowered = lower::lower(
        "whm1/1",
        "wai.splat.int_codec",
        &[("whm1.json".into(), set.to_string().into_bytes())],
    )
    .unwrap();
    let g = whg1::load(&lowered.graphs[0].1).unwrap().graph;
    let x = (i64::MAX - 1) / 3;
    assert_eq!(x, 3074457345618258602);
    assert_eq!(g.tensors[0].policy, Policy::Check { lo: -x, hi: x });
    // The RGB8 step: clamp(0, 2^8), then ×255 with shift 8, half_up.
    assert!(matches!(g.nodes[1].op, Op::Clamp { lo: 0, hi: 256 }));
    assert!(matches!(&g.nodes[2].op, Op::Rescale(rq) if rq.mult_at(0) == 255 && rq.shift_at(0) == 8));
}

#[test]
fn every_set_the_lowering_accepts_meets_acc64() {
    let mut rng = ChaCha8Rng::seed_from_u64(1302);
    let (mut accepted, mut refused) = (0, 0);
    for case in 0..2_000 {
        let (lowering, set) = match case % 3 {
            0 => (
                "whm1/1",
                json!({ "h_s": random_network(&mut rng, Form::Whm1), "g_s": random_network(&mut rng, Form::Whm1) }),
            ),
            1 => ("whm1/1", json!({ "g_s": random_network(&mut rng, Form::Whm1) })),
            _ => ("wam1/1", json!({ "g_s": random_network(&mut rng, Form::Wam1) })),
        };
        let files = [("set.json".to_string(), set.to_string().into_bytes())];
        let capability = if set.get("h_s").is_some() {
            "wai.neural.int_hyper"
        } else {
            "wai.splat.int_codec"
        };
        match lower::lower(lowering, capability, &files) {
            Err(r) => {
                assert_eq!(r.code, Code::ModelMismatch);
                refused += 1;
            }
            Ok(lowered) => {
                let header = Header {
                    lowering: lowering.into(),
                    ..Header::default()
                };
                match certify(&lowered, &header) {
                    // §15.3 item 3: a check range that holds no value its producer can give
                    // refuses the set at load (model_mismatch).
                    Err(r) => {
                        assert_eq!(r.code, Code::ModelMismatch, "case {case}: {r}");
                        refused += 1;
                    }
                    Ok((certified, _)) => {
                        assert!(
                            profiles_met(&certified).contains(&Profile::Acc64),
                            "case {case}: an accepted set fails acc64\n{set}"
                        );
                        accepted += 1;
                    }
                }
            }
        }
    }
    assert!(accepted >= 1_000, "{accepted} accepted, {refused} refused");
}

fn synth(layers: Value) -> Result<lower::Lowered, wai_oracle::refusal::Refusal> {
    lower::lower(
        "int_synth/1",
        "wai.neural.int_synth",
        &[(
            "int_synth.json".into(),
            json!({ "layers": layers }).to_string().into_bytes(),
        )],
    )
}

#[test]
fn int_synth_load_checks_refuse_with_payload_malformed() {
    let ok = json!({ "in_ch": 1, "out_ch": 1, "k": 1, "stride": 1, "pad": 0, "weight": [[[[1]]]], "bias": [0] });
    assert!(synth(json!([ok])).is_ok());
    let with = |k: &str, v: Value| {
        let mut l = ok.clone();
        l[k] = v;
        json!([l])
    };
    let cases = [
        ("no layers", json!([])),
        ("shift 128", with("shift", json!(128))),
        ("k 0", with("k", json!(0))),
        ("stride 0", with("stride", json!(0))),
        ("out_ch 0", with("out_ch", json!(0))),
        ("in_ch 2^32", with("in_ch", json!(1u64 << 32))),
        ("a weight of 2^31", with("weight", json!([[[[1u64 << 31]]]]))),
        ("a bias of −2^31 − 1", with("bias", json!([-(1i64 << 31) - 1]))),
        ("the weight count", with("weight", json!([[[[1, 2]]]]))),
        (
            "layers that do not chain",
            json!([ok, with("in_ch", json!(2))[0].clone()]),
        ),
    ];
    for (what, layers) in cases {
        let r = synth(layers).err().unwrap_or_else(|| panic!("{what} was accepted"));
        assert_eq!(r.code, Code::PayloadMalformed, "{what}");
    }
}

#[test]
fn int_synth_lowers_to_conv_transpose_relu_and_clamp_with_4_byte_widths() {
    let lowered = synth(json!([
        { "in_ch": 2, "out_ch": 1, "k": 2, "stride": 2, "pad": 0, "shift": 3, "relu": true, "weight": [[[[1, 2], [3, 4]]], [[[5, 6], [7, 8]]]], "bias": [9] }
    ]))
    .unwrap();
    assert_eq!(lowered.graphs[0].0, "synth");
    let g = whg1::load(&lowered.graphs[0].1).unwrap().graph;
    assert_eq!(g.tensors[0].policy, Policy::Check { lo: -128, hi: 127 });
    let Op::ConvTranspose(c) = &g.nodes[0].op else {
        panic!("not a conv_transpose")
    };
    assert_eq!(
        (c.w_bytes, c.rq.bias.as_ref().unwrap().bytes, c.rq.shift_at(0)),
        (4, 4, 3)
    );
    assert!(c.rq.mult.is_none());
    assert!(matches!(g.nodes[1].op, Op::Relu));
    assert!(matches!(g.nodes[2].op, Op::Clamp { lo: 0, hi: 255 }));
    assert_eq!(g.outputs, vec![3]);
}
