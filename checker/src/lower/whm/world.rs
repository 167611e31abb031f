//! `world/1` (§13.5, informative): the integer renderer of `wai.world.model`, over the project's
//! JSON rendering `{ "T", "g_s", "latent_channels", "rows" }` (docs/assumptions.md L3,
//! PROVISIONAL), lowered to the graphs `T` and `g_s`.
//!
//! **Load checks** (`model_mismatch`): both networks' `afrac` in `1..=30` and equal; `A`, `T`'s input
//! channel count (§13.2) minus `C = latent_channels`, at least 1; every row of `A` entries.
//!
//! **`T`.** Scalars `0 … A − 1` (the plane values, each `[−2^63, 2^63 − 1]`); input 0 is `z`,
//! `check [−2^63, 2^63 − 1]`, `C` channels. Then `fill` from scalar `a` for `a = 0 … A − 1`, each
//! reading `z` and writing one channel; `concat(z, fill_0, …, fill_{A−1})` writing `x_0` with `T`'s
//! layer-0 range check; `T`'s layers (§13.2); `clamp(−2^afrac, 2^afrac)`, the graph's output.
//! **`g_s`** is `whm1/1` with the RGB8 step.

use crate::lower::form::{Form, clamp_params, opcode};
use crate::lower::source::{self, I64, R, U32, refuse};
use crate::lower::whm::{self, Family};
use crate::whg1::write::P;

pub fn lower(file: &[u8]) -> R<Vec<(String, Vec<u8>)>> {
    let doc = source::parse(file, "world.json")?;
    let top = source::object(&doc, "world.json")?;
    let t = whm::read(source::member(top, "T", "world.json")?, Family::Whm1, "T")?;
    let g = whm::read(source::member(top, "g_s", "world.json")?, Family::Whm1, "g_s")?;
    if t.header.afrac != g.header.afrac {
        return refuse("T.afrac and g_s.afrac differ");
    }
    // C: a tensor's channel count, at least 1 and within its u32 field.
    let c = source::int_member(top, "latent_channels", 1, U32.1, "world.json")? as u64;
    if t.in_channels <= c {
        return refuse(format!(
            "T's input channels {} leave no action plane over latent_channels {c}",
            t.in_channels
        ));
    }
    let a = t.in_channels - c;
    for (i, row) in source::array(source::member(top, "rows", "world.json")?, "rows")?
        .iter()
        .enumerate()
    {
        source::nested(row, &[a], I64.0, I64.1, &format!("rows[{i}]"))?;
    }
    // T. Every count must fit its field (the scalars' u16, concat's u8 n_in): checked by the form.
    if a > u64::from(u16::MAX) {
        return refuse(format!("{a} action planes: past the scalar table's u16 count"));
    }
    let mut f = Form::new();
    for _ in 0..a {
        f.scalar(i64::MIN, i64::MAX);
    }
    let z = f.input(c, i64::MIN, i64::MAX, 0, 0);
    let mut parts = vec![z];
    for k in 0..a {
        let params = P::new().u8(1).zeros(7).i64(k as i64).bytes();
        parts.push(f.op1(opcode::FILL, &[z], 1, params));
    }
    let x0 = f.op1(opcode::CONCAT, &parts, t.in_channels, vec![]);
    let x = whm::append(&mut f, &t, x0, Family::Whm1)?;
    let cx = f.channels(x);
    let bound = (1i64 << t.header.afrac) - fault!("world-clamp-one-short", 0, 1);
    let out = f.op1(opcode::CLAMP, &[x], cx, clamp_params(-bound, bound));
    let t_bytes = f.bytes(&[out])?;
    // g_s.
    let mut f = Form::new();
    let x = whm::graph(&mut f, &g, Family::Whm1)?;
    let x = whm::rgb8(&mut f, x, g.header.afrac);
    Ok(vec![("T".to_string(), t_bytes), ("g_s".to_string(), f.bytes(&[x])?)])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn net(afrac: u32, c: u32) -> String {
        format!(
            r#"{{"afrac":{afrac},"gf":0,"shift":0,"layers":[{{"tag":1,"c":{c},"out":1,"k":1,"stride":1,"pad":0,"weights":[[{}]],"mult":[1],"bias":[0]}}]}}"#,
            vec!["[[1]]"; c as usize].join(",")
        )
    }

    fn set(ta: u32, ga: u32, tc: u32, lc: u32, rows: &str) -> Vec<u8> {
        format!(
            r#"{{"T":{},"g_s":{},"latent_channels":{lc},"rows":{rows}}}"#,
            net(ta, tc),
            net(ga, 1)
        )
        .into_bytes()
    }

    #[test]
    fn load_checks() {
        // T reads 4 channels, C = 1: A = 3 planes, so three scalars and three fills.
        let ok = lower(&set(9, 9, 4, 1, "[[1,0,0]]")).unwrap();
        let t = crate::whg1::read(&ok[0].1).unwrap();
        assert_eq!(t.scalars.len(), 3);
        let names: Vec<&str> = t.ops.iter().map(|o| o.name()).collect();
        assert_eq!(names, ["fill", "fill", "fill", "concat", "conv", "clamp"]);
        // afrac differs; A = 0; a row of 2 entries where A = 3.
        assert!(lower(&set(9, 10, 4, 1, "[]")).is_err());
        assert!(lower(&set(9, 9, 4, 4, "[]")).is_err());
        assert!(lower(&set(9, 9, 4, 1, "[[1,0]]")).is_err());
    }
}
