//! `int_synth/1` (§13.1): the `int_synth` model specification, one file `int_synth.json`, lowered
//! to the graph `synth`.
//!
//! Each layer is a `conv_transpose` (weights `i32 [in_ch][out_ch][k][k]` as stored, an `RQ` with
//! `floor`, a `pre` bias `i32 [out_ch]`, no multiplier and the layer's one shift), then `relu` when
//! `relu` is set; the graph ends with `clamp(0, 255)`. Input 0 is the latents, `check [−128, 127]`,
//! sizes per decode (§13.0's driver contract), with `C` the first layer's `in_ch`
//! (docs/assumptions.md L2). Widths are the form's: `w_bytes = b_bytes = 4` (§13.0's table).
//!
//! The load checks of §13.1, each `payload_malformed` (the code is the caller's):
//! at least one layer; the layers chain; the parameter lengths are exact (the nesting of `weight`
//! and the length of `bias`); `in_ch`, `out_ch`, `k`, `stride`, `pad` and `out_pad` below `2^32`;
//! `out_ch ≥ 1`, `k ≥ 1`, `stride ≥ 1`, `shift ≤ 127`; the values 32-bit integers; the caps
//! (docs/assumptions.md L1, checked by the caller on the lowered bytes).

use super::form::{Form, clamp_params, opcode};
use super::source::{self, I32, R, U32, refuse};
use crate::whg1::write::{P, RqW};
use serde_json::Value;

/// One layer as read and checked.
struct Layer {
    in_ch: u64,
    out_ch: u64,
    k: u64,
    stride: u64,
    pad: u64,
    out_pad: u64,
    weight: Vec<i64>,
    bias: Vec<i64>,
    shift: u8,
    relu: bool,
}

fn layer(v: &Value, what: &str) -> R<Layer> {
    let m = source::object(v, what)?;
    let u = |key: &str| source::int_member(m, key, U32.0, U32.1, what).map(|x| x as u64);
    let (in_ch, out_ch, k, stride, pad) = (u("in_ch")?, u("out_ch")?, u("k")?, u("stride")?, u("pad")?);
    let out_pad = source::int_or(m, "out_pad", 0, U32.0, U32.1, what)? as u64;
    if out_ch < 1 || k < 1 || stride < 1 {
        return refuse(format!("{what}: out_ch, k and stride must be at least 1"));
    }
    let shift = source::int_or(m, "shift", 0, 0, 127, what)? as u8;
    let relu = match m.get("relu") {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return refuse(format!("{what}.relu: not a boolean")),
    };
    let weight = source::nested(
        source::member(m, "weight", what)?,
        &[in_ch, out_ch, k, k],
        I32.0,
        I32.1,
        &format!("{what}.weight"),
    )?;
    let bias = source::nested(
        source::member(m, "bias", what)?,
        &[out_ch],
        I32.0,
        I32.1,
        &format!("{what}.bias"),
    )?;
    Ok(Layer {
        in_ch,
        out_ch,
        k,
        stride,
        pad,
        out_pad,
        weight,
        bias,
        shift,
        relu,
    })
}

/// Lowers `int_synth.json` to the bytes of `synth`, or why the set is refused.
pub fn lower(file: &[u8]) -> R<Vec<u8>> {
    let doc = source::parse(file, "int_synth.json")?;
    let top = source::object(&doc, "int_synth.json")?;
    let layers_v = source::array(source::member(top, "layers", "int_synth.json")?, "layers")?;
    if layers_v.is_empty() {
        return refuse("layers: there must be at least one layer");
    }
    let layers = layers_v
        .iter()
        .enumerate()
        .map(|(i, l)| layer(l, &format!("layers[{i}]")))
        .collect::<R<Vec<_>>>()?;
    // The layers chain; C is the first in_ch (L2), and a tensor has at least one channel (§3).
    if layers[0].in_ch < 1 {
        return refuse("layers[0].in_ch: C must be at least 1");
    }
    for (i, w) in layers.windows(2).enumerate() {
        if w[1].in_ch != w[0].out_ch {
            return refuse(format!("layers[{}].in_ch: not the previous out_ch", i + 1));
        }
    }
    let mut f = Form::new();
    let (lo, hi) = fault!("synth-input-unsigned", (-128, 127), (0, 255));
    let mut x = f.input(layers[0].in_ch, lo, hi, 0, 0);
    for l in &layers {
        let [k, s, p, op] = [l.k, l.stride, l.pad, l.out_pad].map(|v| v as u32);
        let rq = RqW {
            round: 0,
            bias: fault!("synth-bias-post", 1, 2), // pre
            m_kind: 0,
            s_kind: 1,
            m_bytes: 0,
            b_bytes: 4,
            mult: vec![],
            shift: vec![l.shift],
            bias_v: l.bias.clone(),
        };
        let params = P::new()
            .u32(l.out_ch as u32)
            .u32(k)
            .u32(k)
            .u32(s)
            .u32(s)
            .u32(p)
            .u32(p)
            .u32(op)
            .u32(op)
            .u8(4)
            .zeros(3);
        let params = rq.write(params).ints(&l.weight, 4).bytes();
        x = f.op1(opcode::CONV_TRANSPOSE, &[x], l.out_ch, params);
        if l.relu {
            x = f.op1(opcode::RELU, &[x], l.out_ch, vec![]);
        }
    }
    let c = f.channels(x);
    let out = f.op1(opcode::CLAMP, &[x], c, clamp_params(0, 255));
    f.bytes(&[out])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one_layer(fields: &str) -> Vec<u8> {
        format!(r#"{{"layers":[{{{fields}}}]}}"#).into_bytes()
    }

    #[test]
    fn load_checks_refuse() {
        let ok = r#""bias":[0],"in_ch":1,"k":1,"out_ch":1,"pad":0,"stride":1,"weight":[[[[1]]]]"#;
        assert!(lower(&one_layer(ok)).is_ok());
        // §13.1: at least one layer.
        assert!(lower(br#"{"layers":[]}"#).is_err());
        // shift ≤ 127: 127 lowers, 128 is refused.
        assert!(lower(&one_layer(&format!("{ok},\"shift\":127"))).is_ok());
        assert!(lower(&one_layer(&format!("{ok},\"shift\":128"))).is_err());
        // k ≥ 1, stride ≥ 1, out_ch ≥ 1.
        assert!(
            lower(&one_layer(
                &ok.replace(r#""k":1"#, r#""k":0"#).replace("[[[[1]]]]", "[[[]]]")
            ))
            .is_err()
        );
        assert!(lower(&one_layer(&ok.replace(r#""stride":1"#, r#""stride":0"#))).is_err());
        let zero_out = r#""bias":[],"in_ch":1,"k":1,"out_ch":0,"pad":0,"stride":1,"weight":[[]]"#;
        assert!(lower(&one_layer(zero_out)).is_err());
        // A field of 2^32 does not fit its WHG1 field.
        let big_pad = ok.replace(r#""pad":0"#, r#""pad":4294967296"#);
        assert!(lower(&one_layer(&big_pad)).is_err());
        // Weights are 32-bit: 2^31 − 1 lowers, 2^31 is refused.
        assert!(lower(&one_layer(&ok.replace("[[[[1]]]]", "[[[[2147483647]]]]"))).is_ok());
        assert!(lower(&one_layer(&ok.replace("[[[[1]]]]", "[[[[2147483648]]]]"))).is_err());
        // The parameter lengths are exact: a bias of two values for one output channel.
        assert!(lower(&one_layer(&ok.replace(r#""bias":[0]"#, r#""bias":[0,0]"#))).is_err());
        // The layers chain: 1 → 2, then a layer reading 3.
        let chain = br#"{"layers":[{"bias":[0,0],"in_ch":1,"k":1,"out_ch":2,"pad":0,"stride":1,"weight":[[[[1]],[[1]]]]},{"bias":[0],"in_ch":3,"k":1,"out_ch":1,"pad":0,"stride":1,"weight":[[[[1]]],[[[1]]],[[[1]]]]}]}"#;
        assert!(lower(chain).is_err());
        // Not JSON, or not the form.
        assert!(lower(b"{").is_err());
        assert!(lower(br#"{"layers":{}}"#).is_err());
    }

    #[test]
    fn the_graph_is_conv_transpose_relu_then_clamp() {
        let set = br#"{"layers":[{"bias":[5],"in_ch":2,"k":2,"out_ch":1,"pad":0,"relu":true,"shift":3,"stride":2,"weight":[[[[1,2],[3,4]]],[[[5,6],[7,8]]]]}]}"#;
        let g = crate::whg1::read(&lower(set).unwrap()).unwrap();
        let names: Vec<&str> = g.ops.iter().map(|o| o.name()).collect();
        assert_eq!(names, ["conv_transpose", "relu", "clamp"]);
        assert_eq!(g.tensors[0].channels, 2);
        assert_eq!(g.tensors[0].policy, crate::whg1::Policy::Check(-128, 127));
        assert_eq!((g.inputs[0].max_h, g.inputs[0].max_w), (0, 0));
        assert_eq!(g.outputs, [3]);
        match &g.ops[0].kind {
            crate::whg1::OpKind::ConvT(p) => {
                assert_eq!((p.cout, p.kh, p.sh, p.ph, p.oph), (1, 2, 2, 0, 0));
                assert_eq!(p.rq.shift, [3]);
                assert_eq!(p.rq.bias, [5]);
                assert!(p.rq.mult.is_empty());
                assert_eq!(p.w[..], [1, 2, 3, 4, 5, 6, 7, 8]);
            }
            _ => panic!("not conv_transpose"),
        }
    }
}
