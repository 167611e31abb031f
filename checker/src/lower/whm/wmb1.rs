//! `wmb1/1` (§13.4): a `WMB1` bundle (`wai.neural.int_mlicpp`) holds three `WHM1` networks, `h_s`,
//! `entropy` and `g_s`, each lowered by §13.2, `g_s` with the RGB8 step. Over the project's JSON
//! rendering `{ "afrac", "h_s", "entropy", "g_s" }` (docs/assumptions.md L3, PROVISIONAL); the
//! bundle's tables are the stage operators' data and are not lowered.
//!
//! Load check beyond §13.2's: the three networks and the bundle share one `afrac` in `1..=30`
//! (§15.2, integer-payloads §14).

use crate::lower::form::Form;
use crate::lower::source::{self, R, refuse};
use crate::lower::whm::{self, Family};

pub const ROLES: [&str; 3] = ["h_s", "entropy", "g_s"];

pub fn lower(file: &[u8]) -> R<Vec<(String, Vec<u8>)>> {
    let doc = source::parse(file, "wmb1.json")?;
    let top = source::object(&doc, "wmb1.json")?;
    let afrac = source::int_member(top, "afrac", 1, 30, "wmb1.json")? as u32;
    let mut out = Vec::new();
    for role in ROLES {
        let net = whm::read(source::member(top, role, "wmb1.json")?, Family::Whm1, role)?;
        if net.header.afrac != afrac {
            return refuse(format!("{role}.afrac: not the bundle's afrac {afrac}"));
        }
        let mut f = Form::new();
        let mut x = whm::graph(&mut f, &net, Family::Whm1)?;
        if role == "g_s" {
            x = whm::rgb8(&mut f, x, afrac);
        }
        out.push((role.to_string(), f.bytes(&[x])?));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn net(afrac: u32) -> String {
        format!(
            r#"{{"afrac":{afrac},"gf":0,"shift":0,"layers":[{{"tag":1,"c":1,"out":1,"k":1,"stride":1,"pad":0,"weights":[[[[1]]]],"mult":[1],"bias":[0]}}]}}"#
        )
    }

    #[test]
    fn one_afrac_for_the_bundle() {
        let b = |a: u32, e: u32| {
            format!(
                r#"{{"afrac":{a},"entropy":{},"g_s":{},"h_s":{}}}"#,
                net(e),
                net(a),
                net(a)
            )
        };
        let roles: Vec<String> = lower(b(11, 11).as_bytes()).unwrap().into_iter().map(|r| r.0).collect();
        assert_eq!(roles, ["h_s", "entropy", "g_s"]);
        assert!(lower(b(11, 12).as_bytes()).is_err());
        assert!(lower(b(31, 31).as_bytes()).is_err());
    }
}
