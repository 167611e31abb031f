//! `wam1/1` (§13.3): a `WAM1` network (`wai.audio.int_codec`), over the project's JSON rendering
//! `{ "g_s": network }` (docs/assumptions.md L3, PROVISIONAL), lowered to `g_s` with the PCM step.
//!
//! The network is read and lowered by [`super`] with [`Family::Wam1`]: tensors `[C, 1, T]`,
//! tag 0 a one-dimensional `conv_transpose` whose term count is `c·k`, no tag 1. Scalar 0 is `t_out`,
//! `[1, 2^26]` (§13.0's driver contract). **The PCM step**, after the last layer:
//!
//! 1. `crop` with `y0 = 0`, `x0 = 0`, `h = 1` constant and `w` scalar 0; its output has the policy
//!    `check [⌈−2^63 / 32767⌉, ⌊(I64 − 2^(afrac−1)) / 32767⌋]`;
//! 2. `rescale` with one multiplier 32767 (`m_bytes` 4), one shift `afrac`, no bias, `half_up`;
//! 3. `clamp(−32768, 32767)`.

use crate::lower::form::{Form, clamp_params, opcode};
use crate::lower::source::{self, R};
use crate::lower::whm::{self, Family};
use crate::whg1::write::P;

/// The PCM step's `check` range for an `afrac` in `1..=30`.
pub fn pcm_range(afrac: u32) -> (i64, i64) {
    // ⌈−2^63 / 32767⌉ = −⌊2^63 / 32767⌋.
    let lo = -(((1u64 << 63) / 32767) as i64);
    let hi = (i64::MAX - (1i64 << (afrac - 1))) / 32767;
    (lo, hi)
}

/// Lowers `wam1.json` to `g_s`.
pub fn lower(file: &[u8]) -> R<Vec<(String, Vec<u8>)>> {
    let doc = source::parse(file, "wam1.json")?;
    let top = source::object(&doc, "wam1.json")?;
    let net = whm::read(source::member(top, "g_s", "wam1.json")?, Family::Wam1, "g_s")?;
    let mut f = Form::new();
    f.scalar(1, 1 << 26);
    let x = whm::graph(&mut f, &net, Family::Wam1)?;
    let c = f.channels(x);
    // crop: y0, x0 and h constant (0, 0, 1), w scalar 0.
    let operand = |p: P, kind: u8, v: u32| p.u8(kind).zeros(3).u32(v);
    let params = operand(operand(operand(operand(P::new(), 0, 0), 0, 0), 0, 1), 1, 0).bytes();
    let cropped = f.op1(opcode::CROP, &[x], c, params);
    let (lo, hi) = pcm_range(net.header.afrac);
    f.check(cropped, lo, hi);
    let scaled = f.op1(
        opcode::RESCALE,
        &[cropped],
        c,
        whm::rescale_const(32767, net.header.afrac),
    );
    let out = f.op1(opcode::CLAMP, &[scaled], c, clamp_params(-32768, 32767));
    Ok(vec![("g_s".to_string(), f.bytes(&[out])?)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pcm_range_is_where_the_sample_product_fits_i64() {
        // 2^63 / 32767 = 281_483_566_907_400.0…, so the lower end is −281_483_566_907_400, and
        // −281_483_566_907_400·32767 = −9_223_090_561_878_065_800 ≥ −2^63.
        // afrac = 10: (2^63 − 1 − 512)/32767 = 281_483_566_907_399.98…
        assert_eq!(pcm_range(10), (-281_483_566_907_400, 281_483_566_907_399));
        let (lo, hi) = pcm_range(10);
        assert!(i128::from(lo) * 32767 >= i128::from(i64::MIN));
        assert!(i128::from(hi) * 32767 + 512 <= i128::from(i64::MAX));
        assert!(i128::from(hi + 1) * 32767 + 512 > i128::from(i64::MAX));
    }

    #[test]
    fn tag_1_is_refused() {
        let set = br#"{"g_s":{"afrac":10,"gf":0,"shift":0,"layers":[{"tag":1,"c":1,"out":1,"k":1,"stride":1,"pad":0,"weights":[[[[1]]]],"mult":[1],"bias":[0]}]}}"#;
        assert!(lower(set).is_err());
    }
}
