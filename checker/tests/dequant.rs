//! DetessDequant (seeds/detessdequant.md, docs/assumptions.md D1–D6): the seed's worked call, the
//! numerical core on hand-worked cases and against an exact integer model written here, the
//! layouts on hand-laid buffers, every refusal code, request errors and the environment check.

use serde_json::{Value, json};
use wai_checker::dequant::{env, fill as dfill, numeric};
use wai_checker::fill;
use wai_checker::request::LineError;

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

fn filled(v: &Value) -> Value {
    let line = v.to_string();
    match fill::fill_line(&line) {
        Ok(s) => serde_json::from_str(&s).unwrap(),
        Err(LineError::Bad(m) | LineError::Bug(m)) => panic!("{line}: {m}"),
    }
}

fn bad(v: &Value) -> String {
    let line = v.to_string();
    match fill::fill_line(&line) {
        Err(LineError::Bad(m)) => m,
        Err(LineError::Bug(m)) => panic!("{line}: a bug, not a request error: {m}"),
        Ok(s) => panic!("{line}: filled as {s}"),
    }
}

/// The output buffer's bytes after a call that succeeds.
fn output(v: &Value) -> Vec<u8> {
    let f = filled(v);
    let Some(hex) = f["expect"]["outputs"][0].as_str() else {
        panic!("{v}: not a success: {}", f["expect"]);
    };
    hex::decode(hex).unwrap()
}

fn refusal(v: &Value) -> String {
    let f = filled(v);
    match f["expect"]["refuse"].as_str() {
        Some(c) => c.to_string(),
        None => panic!("{v}: not refused: {}", f["expect"]),
    }
}

fn strs(xs: &[i128]) -> Value {
    Value::Array(xs.iter().map(|x| Value::String(x.to_string())).collect())
}

fn tiled(axes: &[i128], tile: &[i128], channels: &str) -> Value {
    json!({"MlaTiled": {"axes": strs(axes), "channels": channels, "tile_shape": strs(tile)}})
}

fn strided(s: &[i128]) -> Value {
    json!({"Strided": {"strides": strs(s)}})
}

fn contiguous() -> Value {
    json!({"Contiguous": {}})
}

/// A call: one input spec, one output spec, one buffer each.
#[allow(clippy::too_many_arguments)]
fn call(
    shape: &[i128],
    in_layout: Value,
    out_dtype: &str,
    out_layout: Value,
    scale: u32,
    zero_point: i64,
    bytes: &[u8],
    in_cap: u64,
    out_cap: u64,
) -> Value {
    json!({
        "id": "t",
        "inputs": [{"dtype": "Int8", "layout": in_layout, "shape": strs(shape)}],
        "outputs": [{"dtype": out_dtype, "layout": out_layout, "shape": strs(shape)}],
        "params": {"scale": format!("{scale:08x}"), "zero_point": zero_point.to_string()},
        "buffers": {
            "inputs": [{"address": "4096", "capacity": in_cap.to_string(), "bytes": hex::encode(bytes)}],
            "outputs": [{"address": "65536", "capacity": out_cap.to_string(), "poison": "aa"}]
        }
    })
}

fn f32s(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

/// The seed's worked call: `[2, 3]` Int8, `MlaTiled{axes {−1, −1, 0, 1}, tile {1, 1, 2, 3}}`, scale
/// 0.25, zero point −3. The tile holds 2 pixels × 3 channels = 6 bytes in a 16-byte span; element
/// `(w, c)` is byte `3w + c`. Bytes 6–15 are padding and hold junk that must be ignored.
const EXAMPLE_BYTES: [u8; 16] = [
    0xfd, 0x00, 0x01, 0x05, 0x7f, 0x80, // q = −3, 0, 1, 5, 127, −128
    0x7f, 0x80, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x01, // padding junk
];

/// By hand: zp = (float)(−3) = −3.0 exactly; difference = q + 3; output = difference · 0.25, all
/// exact:
///
/// | q | difference | × 0.25 | binary32 |
/// |---|---|---|---|
/// | −3 | 0 | +0 | 00000000 |
/// | 0 | 3 | 0.75 = 1.5·2^-1 | 3f400000 |
/// | 1 | 4 | 1 | 3f800000 |
/// | 5 | 8 | 2 | 40000000 |
/// | 127 | 130 | 32.5 = 1.015625·2^5 | exponent 132 = 0x84, fraction 0.015625·2^23 = 0x020000: 42020000 |
/// | −128 | −125 | −31.25 = −1.953125·2^4 | exponent 131 = 0x83, fraction 0.953125·2^23 = 0x7a0000: c1fa0000 |
const EXAMPLE_F32: [u32; 6] = [
    0x0000_0000,
    0x3f40_0000,
    0x3f80_0000,
    0x4000_0000,
    0x4202_0000,
    0xc1fa_0000,
];

fn example(out_dtype: &str, out_layout: Value, out_cap: u64) -> Value {
    call(
        &[2, 3],
        tiled(&[-1, -1, 0, 1], &[1, 1, 2, 3], "Compact"),
        out_dtype,
        out_layout,
        0x3e80_0000, // 0.25
        -3,
        &EXAMPLE_BYTES,
        16,
        out_cap,
    )
}

// ---------------------------------------------------------------------------------------------
// The seed's worked call
// ---------------------------------------------------------------------------------------------

#[test]
fn worked_example_contiguous_f32() {
    // Contiguous [2, 3] Float32: element (w, c) at 4·(3w + c), 24 bytes.
    let out = output(&example("Float32", contiguous(), 24));
    assert_eq!(out.len(), 24);
    assert_eq!(f32s(&out), EXAMPLE_F32);
}

#[test]
fn worked_example_strided_f32_leaves_the_hole() {
    // Strided{16, 4}: element (w, c) at 16w + 4c; span = 4 + (2−1)·16 + (3−1)·4 = 28 bytes, not 24.
    let v = example("Float32", strided(&[16, 4]), 28);
    let out = output(&v);
    assert_eq!(out.len(), 28);
    let words = f32s(&out);
    assert_eq!(&words[0..3], &EXAMPLE_F32[0..3]);
    // Bytes 12–15, the hole between rows, keep the poison.
    assert_eq!(&out[12..16], &[0xaa; 4]);
    assert_eq!(&words[4..7], &EXAMPLE_F32[3..6]);
    // 24 bytes are not enough for the addressed span.
    assert_eq!(refusal(&example("Float32", strided(&[16, 4]), 24)), "capacity");
    assert_eq!(refusal(&example("Float32", strided(&[16, 4]), 27)), "capacity");
    // Spare capacity stays untouched too.
    let out = output(&example("Float32", strided(&[16, 4]), 40));
    assert_eq!(&out[28..], &[0xaa; 12]);
    assert_eq!(&out[..28], &output(&v)[..]);
}

#[test]
fn worked_example_bf16() {
    // BF16 of the same binary32 results: the upper halves (their low halves are zero, no rounding).
    let out = output(&example("BFloat16", contiguous(), 12));
    let halves: Vec<u16> = out.chunks(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
    assert_eq!(halves, [0x0000, 0x3f40, 0x3f80, 0x4000, 0x4202, 0xc1fa]);
    // Strided{8, 2} BFloat16: (w, c) at 8w + 2c; span 2 + 8 + 4 = 14; bytes 6–7 keep the poison.
    let out = output(&example("BFloat16", strided(&[8, 2]), 14));
    assert_eq!(&out[6..8], &[0xaa, 0xaa]);
    assert_eq!(&out[8..14], &[0x00, 0x40, 0x02, 0x42, 0xfa, 0xc1]);
}

#[test]
fn filled_line_is_canonical_and_echoes_the_request() {
    let v = example("Float32", contiguous(), 24);
    let line = fill::fill_line(&v.to_string()).ok().unwrap();
    let want = concat!(
        r#"{"buffers":{"inputs":[{"address":"4096","bytes":"fd0001057f807f801122334455667701","#,
        r#""capacity":"16"}],"outputs":[{"address":"65536","capacity":"24","poison":"aa"}]},"#,
        r#""expect":{"outputs":["000000000000403f0000803f00000040000002420000fac1"]},"id":"t","#,
        r#""inputs":[{"dtype":"Int8","layout":{"MlaTiled":{"axes":["-1","-1","0","1"],"channels":"Compact","#,
        r#""tile_shape":["1","1","2","3"]}},"shape":["2","3"]}],"#,
        r#""outputs":[{"dtype":"Float32","layout":{"Contiguous":{}},"shape":["2","3"]}],"#,
        r#""params":{"scale":"3e800000","zero_point":"-3"}}"#
    );
    assert_eq!(line, want);
    // A stale expect is ignored and recomputed; an absent zero point stays absent and means 0.
    let mut v2 = v.clone();
    v2["expect"] = json!({"refuse": "scale"});
    assert_eq!(fill::fill_line(&v2.to_string()).ok().unwrap(), want);
    let mut v3 = v.clone();
    v3["params"].as_object_mut().unwrap().remove("zero_point");
    let f = filled(&v3);
    assert!(f["params"].get("zero_point").is_none());
    // zp = 0: q = −3 → −3 · 0.25 = −0.75 = −1.5 · 2^-1 (bf400000); q = 0 → +0.
    let words = f32s(&hex::decode(f["expect"]["outputs"][0].as_str().unwrap()).unwrap());
    assert_eq!(words[0], 0xbf40_0000);
    assert_eq!(words[1], 0x0000_0000);
    // dequant fill and fill give the same line.
    assert_eq!(dfill::fill_line(&v.to_string()).ok().unwrap(), want);
}

// ---------------------------------------------------------------------------------------------
// The numerical core
// ---------------------------------------------------------------------------------------------

fn numeric(q: &[i128], scale: u32, zero_point: i64) -> (Vec<String>, Vec<String>) {
    let v =
        json!({"id": "n", "in": {"q": strs(q), "scale": format!("{scale:08x}"), "zero_point": zero_point.to_string()}});
    let f = filled(&v);
    let get = |k: &str| {
        f["expect"][k]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap().to_string())
            .collect()
    };
    (get("f32"), get("bf16"))
}

#[test]
fn bf16_narrowing_hand_worked() {
    // (bits + 0x7fff + ((bits >> 16) & 1)) >> 16:
    // 0x3f808000: low half 0x8000 is a tie, upper 0x3f80 even: 0x3f808000 + 0x7fff + 0 = 0x3f80ffff → 3f80.
    assert_eq!(numeric::bf16_bits(f32::from_bits(0x3f80_8000)), 0x3f80);
    // 0x3f818000: a tie with odd upper 0x3f81: + 0x7fff + 1 = 0x3f820000 → 3f82 (to even, up).
    assert_eq!(numeric::bf16_bits(f32::from_bits(0x3f81_8000)), 0x3f82);
    // 0x3f808001: just above the tie: 0x3f810000 → 3f81.
    assert_eq!(numeric::bf16_bits(f32::from_bits(0x3f80_8001)), 0x3f81);
    // f32::MAX 0x7f7fffff: + 0x7fff + 1 = 0x7f807fff → 7f80, BF16 infinity.
    assert_eq!(numeric::bf16_bits(f32::MAX), 0x7f80);
    // 0x7f7f7fff, just below the tie with the overflow: 0x7f7ffffe → 7f7f (BF16's largest finite).
    assert_eq!(numeric::bf16_bits(f32::from_bits(0x7f7f_7fff)), 0x7f7f);
    // A tiny negative, −2^-149 = 0x80000001: + 0x7fff = 0x80008000 → 8000, −0.
    assert_eq!(numeric::bf16_bits(f32::from_bits(0x8000_0001)), 0x8000);
    // −0x80008000 is a tie with even upper 0x8000: 0x8000ffff → 8000, −0 again.
    assert_eq!(numeric::bf16_bits(f32::from_bits(0x8000_8000)), 0x8000);
    // ∞ stays ∞: 0xff800000 + 0x7fff = 0xff807fff → ff80.
    assert_eq!(numeric::bf16_bits(f32::NEG_INFINITY), 0xff80);

    // Through the core: scale = f32::MAX, q = 1, zp = 0 → difference 1, output f32::MAX (7f7fffff),
    // BF16 7f80 (∞); q = 2 → 2·MAX overflows binary32: 7f800000, BF16 7f80.
    let (f, b) = numeric(&[1, 2, -2], 0x7f7f_ffff, 0);
    assert_eq!(f, ["7f7fffff", "7f800000", "ff800000"]);
    assert_eq!(b, ["7f80", "7f80", "ff80"]);
    // scale = 2^-149 (the least subnormal): q = −1 → −2^-149 = 80000001, BF16 8000 (−0); q = 1 →
    // 00000001, BF16 0000; q = 0 → difference +0 (x − x is +0), output +0.
    let (f, b) = numeric(&[-1, 1, 0], 0x0000_0001, 0);
    assert_eq!(f, ["80000001", "00000001", "00000000"]);
    assert_eq!(b, ["8000", "0000", "0000"]);
}

#[test]
fn bf16_rounds_the_rounded_binary32_not_the_real_product() {
    // scale 0x3eacaaaa = 0xacaaaa · 2^-25 = 11315882 · 2^-25; q = 3, zp = 0: difference 3; the real
    // product is 33947646 · 2^-25. Near 1 a binary32 ulp is 2^-23 = 4 · 2^-25: 33947646 is halfway
    // between 33947644 and 33947648, and 33947648/4 = 0x818000 is even: output 0x3f818000.
    // BF16: 0x3f818000 is itself a tie with odd upper half 0x3f81: + 0x7fff + 1 = 0x3f820000 → 3f82.
    // The real product, 2^-24 below that tie, would have narrowed directly to 3f81.
    let (f, b) = numeric(&[3], 0x3eac_aaaa, 0);
    assert_eq!(f, ["3f818000"]);
    assert_eq!(b, ["3f82"]);
}

#[test]
fn wide_zero_points_round_to_binary32_first() {
    // (float)zero_point, rounded to nearest even, before the subtraction (scale 1):
    // zp = 2^24 + 1 = 16777217 → tie between 16777216 and 16777218 → even significand: 16777216.
    //   q = 1: 1 − 16777216 = −16777215, exact (< 2^24): cb7fffff. (Unrounded: −16777216 = cb800000.)
    //   q = 0: −16777216 = cb800000.
    let (f, _) = numeric(&[1, 0], 0x3f80_0000, 16_777_217);
    assert_eq!(f, ["cb7fffff", "cb800000"]);
    // zp = 2^24 − 1 = 16777215, exact (4b7fffff).
    //   q = −2: −16777217 → tie → even: −16777216 (cb800000); q = −3: −16777218, exact: cb800001.
    //   q = 0: −16777215 = cb7fffff.
    let (f, _) = numeric(&[-2, -3, 0], 0x3f80_0000, 16_777_215);
    assert_eq!(f, ["cb800000", "cb800001", "cb7fffff"]);
    // zp = −(2^24 + 1) → −16777216.
    //   q = −1: −1 + 16777216 = 16777215, exact: 4b7fffff. (Unrounded: 16777216.)
    //   q = 2: 16777218, exact: 4b800001.
    let (f, _) = numeric(&[-1, 2], 0x3f80_0000, -16_777_217);
    assert_eq!(f, ["4b7fffff", "4b800001"]);
    // zp = −(2^24 − 1), exact.
    //   q = 2: 16777217 → tie → 16777216 (4b800000); q = 3: 16777218 (4b800001).
    let (f, _) = numeric(&[2, 3], 0x3f80_0000, -16_777_215);
    assert_eq!(f, ["4b800000", "4b800001"]);
    // zp = 2^31 − 1 = 2147483647: in [2^30, 2^31) the spacing is 128; 2^31 − 1 is 1 from 2^31 →
    // 2^31 (4f000000).
    //   q = 0: −2^31 = cf000000.
    //   q = 127: 127 − 2^31 = −2147483521; below 2^31 spacing 128: −(2^31 − 128) is 1 away → ceffffff.
    //   q = −128: −2^31 − 128 = −2147483776; above 2^31 spacing 256: a tie between 2^31 (even
    //   significand) and 2^31 + 256 → −2^31 = cf000000.
    let (f, _) = numeric(&[0, 127, -128], 0x3f80_0000, 2_147_483_647);
    assert_eq!(f, ["cf000000", "ceffffff", "cf000000"]);
    // zp = −2^31, exact (cf000000).
    //   q = 0: 2^31 = 4f000000; q = 127: 2^31 + 127 → nearest of 2^31, 2^31 + 256: 2^31;
    //   q = −128: 2^31 − 128 = 2147483520, exact: 4effffff.
    let (f, _) = numeric(&[0, 127, -128], 0x3f80_0000, -2_147_483_648);
    assert_eq!(f, ["4f000000", "4f000000", "4effffff"]);
    // The same through scale 0.5: every result halves exactly.
    let (f, _) = numeric(&[1], 0x3f00_0000, 16_777_217);
    assert_eq!(f, ["caffffff"]);
}

// ---------------------------------------------------------------------------------------------
// An exact model of D1 on integers, and the hardware against it
// ---------------------------------------------------------------------------------------------

/// Rounds `(−1)^neg · n · 2^e` to nearest even in a binary format of `p` significand bits whose least
/// quantum is `2^qmin` and whose largest exponent field is 254 (binary32: `p = 24`, `qmin = −149`;
/// BF16: `p = 8`, `qmin = −133`). Returns the bits (sign at bit `p + 7`).
fn round_exact(neg: bool, n: u128, e: i32, p: u32, qmin: i32) -> u32 {
    let sign = u32::from(neg) << (p + 7);
    if n == 0 {
        return sign;
    }
    let len = 128 - n.leading_zeros() as i32;
    // The quantum of the result: the significand holds p bits, never below 2^qmin.
    let mut q = (len + e - p as i32).max(qmin);
    let shift = q - e;
    let mut m = if shift <= 0 {
        n << (-shift)
    } else if shift >= 127 {
        0 // n < 2^100 here: below half a quantum
    } else {
        let (m, r, half) = (n >> shift, n & ((1 << shift) - 1), 1u128 << (shift - 1));
        if r > half || (r == half && m & 1 == 1) {
            m + 1
        } else {
            m
        }
    };
    if m == 1 << p {
        m >>= 1;
        q += 1;
    }
    let field = if m < 1 << (p - 1) { 0 } else { q - qmin + 1 };
    if field >= 255 {
        return sign | (0xff << (p - 1));
    }
    sign | ((field as u32) << (p - 1)) | (m as u32 & ((1 << (p - 1)) - 1))
}

/// An integer rounded to binary32 (its exact value): the int32 → binary32 and int → binary32 steps.
fn round_int(v: i128) -> i128 {
    let bits = round_exact(v < 0, v.unsigned_abs(), 0, 24, -149);
    if v == 0 {
        return 0;
    }
    let (m, e) = decode(bits);
    // An integer's binary32 rounding is an integer: exact either way.
    let mag = if e >= 0 { m << e } else { m >> -e };
    let mag = i128::try_from(mag).unwrap();
    if v < 0 { -mag } else { mag }
}

/// A positive binary32's `(significand, exponent)`: value = m · 2^e.
fn decode(bits: u32) -> (u128, i32) {
    let field = ((bits >> 23) & 0xff) as i32;
    let frac = u128::from(bits & 0x7f_ffff);
    if field == 0 {
        (frac, -149)
    } else {
        (frac | 1 << 23, field - 150)
    }
}

/// D1 exactly: `zp`, `difference`, `output` each rounded once; BF16 by rounding the binary32 value.
fn model(q: i8, scale: u32, zero_point: i32) -> (u32, u16) {
    let zp = round_int(i128::from(zero_point));
    let d = round_int(i128::from(q) - zp);
    let (m, e) = decode(scale);
    // (+0 when d = 0: x − x is +0, and +0 · a positive scale is +0.)
    let f = round_exact(d < 0, d.unsigned_abs() * m, e, 24, -149);
    let (fm, fe) = if (f >> 23) & 0xff == 0xff {
        (0, 0)
    } else {
        decode(f & 0x7fff_ffff)
    };
    let b = if (f >> 23) & 0xff == 0xff {
        (f >> 16) as u16 // ±∞
    } else {
        round_exact(f >> 31 == 1, fm, fe, 8, -133) as u16
    };
    (f, b)
}

#[test]
fn the_exact_model_on_hand_worked_values() {
    assert_eq!(model(127, 0x3e80_0000, -3), (0x4202_0000, 0x4202));
    assert_eq!(model(1, 0x3f80_0000, 16_777_217), (0xcb7f_ffff, 0xcb80));
    assert_eq!(model(-1, 0x0000_0001, 0), (0x8000_0001, 0x8000));
    assert_eq!(model(2, 0x7f7f_ffff, 0), (0x7f80_0000, 0x7f80));
    // 255 · (1 + 2^-23) = 255 + 255·2^-23; 255's ulp is 2^-16 and 255·2^-23 ≈ 1.99·2^-16 rounds to
    // 2 ulps: 0x437f0000 + 2 = 0x437f0002; BF16 437f.
    assert_eq!(model(127, 0x3f80_0001, -128), (0x437f_0002, 0x437f));
    assert_eq!(model(3, 0x3eac_aaaa, 0), (0x3f81_8000, 0x3f82));
}

#[test]
fn hardware_core_equals_the_exact_model() {
    let scales: &[u32] = &[
        0x0000_0001, // 2^-149, the least subnormal
        0x0000_0003,
        0x0000_1234,
        0x0040_0001,
        0x007f_ffff, // the largest subnormal
        0x0080_0000, // 2^-126
        0x0080_0001,
        0x0d80_0000, // 2^-100
        0x3a80_0000, // 2^-10
        0x3d80_0000, // 1/16
        0x3e80_0000, // 0.25
        0x3dcc_cccd, // 0.1
        0x3eaa_aaab, // 1/3
        0x3f00_0000, // 0.5
        0x3f80_0000, // 1
        0x3f80_0001, // 1 + 2^-23
        0x3fc0_0000, // 1.5
        0x4000_0000, // 2
        0x4180_0000, // 16
        0x4b80_0001,
        0x7180_0000, // 2^100
        0x7b00_0000,
        0x7e80_0000, // 2^126
        0x7f00_0000, // 2^127
        0x7f7f_ffff, // the largest finite
        0x3f9e_0652,
        0x3b44_9ba6,
    ];
    let zero_points: &[i32] = &[
        0,
        -3,
        1,
        -1,
        127,
        -128,
        255,
        -255,
        16_777_088,
        16_777_089,
        -16_777_089,
        16_777_215,
        16_777_216,
        16_777_217,
        -16_777_215,
        -16_777_217,
        33_554_435,
        123_456_789,
        -987_654_321,
        2_147_483_520,
        2_147_483_584,
        i32::MAX,
        i32::MIN,
    ];
    let checked = env::check().unwrap();
    let mut n = 0;
    for &s in scales {
        for &z in zero_points {
            let p = numeric::prepare(&checked, f32::from_bits(s), z);
            for q in i8::MIN..=i8::MAX {
                let y = numeric::output(&checked, &p, q);
                let got = (y.to_bits(), numeric::bf16_bits(y));
                assert_eq!(got, model(q, s, z), "q {q}, scale {s:08x}, zero point {z}");
                n += 1;
            }
        }
    }
    assert_eq!(n, 256 * scales.len() * zero_points.len());
    // And one record per scale through the fill, all 256 q values.
    let all: Vec<i128> = (-128..=127).collect();
    for &s in scales {
        let (f, b) = numeric(&all, s, -16_777_217);
        for (k, q) in (i8::MIN..=i8::MAX).enumerate() {
            let (mf, mb) = model(q, s, -16_777_217);
            assert_eq!(
                (f[k].as_str(), b[k].as_str()),
                (&*format!("{mf:08x}"), &*format!("{mb:04x}"))
            );
        }
    }
}

#[test]
fn numeric_records_request_errors() {
    let rec = |q: Value, scale: &str, zp: Value| json!({"id": "n", "in": {"q": q, "scale": scale, "zero_point": zp}});
    for s in [
        "00000000", "80000000", "7f800000", "ff800000", "7fc00000", "bf800000", "80000001",
    ] {
        assert!(bad(&rec(json!(["1"]), s, json!("0"))).starts_with("in.scale:"), "{s}");
    }
    assert!(bad(&rec(json!(["128"]), "3f800000", json!("0"))).starts_with("in.q[0]:"));
    assert!(bad(&rec(json!(["-129"]), "3f800000", json!("0"))).starts_with("in.q[0]:"));
    assert!(bad(&rec(json!([1]), "3f800000", json!("0"))).starts_with("in.q[0]:"));
    assert!(bad(&rec(json!(["01"]), "3f800000", json!("0"))).starts_with("in.q[0]:"));
    assert!(bad(&rec(json!(["1"]), "3F800000", json!("0"))).starts_with("in.scale:"));
    assert!(bad(&rec(json!(["1"]), "3f80000", json!("0"))).starts_with("in.scale:"));
    assert!(bad(&rec(json!(["1"]), "3f800000", json!("2147483648"))).starts_with("in.zero_point:"));
    assert!(bad(&rec(json!(["1"]), "3f800000", json!("-2147483649"))).starts_with("in.zero_point:"));
    let mut v = rec(json!(["1"]), "3f800000", json!("0"));
    v["in"].as_object_mut().unwrap().remove("zero_point");
    assert!(bad(&v).starts_with("in.zero_point: missing"));
    let mut v = rec(json!(["1"]), "3f800000", json!("0"));
    v["extra"] = json!("x");
    assert!(bad(&v).starts_with("extra:"));
    // A positive subnormal scale is admitted; an empty q gives empty arrays.
    let (f, b) = numeric(&[], 0x0000_0001, 0);
    assert!(f.is_empty() && b.is_empty());
}

// ---------------------------------------------------------------------------------------------
// Layouts (D4, D5), laid out by hand
// ---------------------------------------------------------------------------------------------

/// q(h, w, c) = 10h + 3w + c for a [3, 2, 5] (H, W, C) tensor, read back through scale 1, zp 0.
fn hwc_value(h: usize, w: usize, c: usize) -> u8 {
    (10 * h + 3 * w + c) as u8
}

/// Fills `need` bytes with junk 0x5a, then places q(h, w, c) at `offset(h, w, c)`, runs the call
/// into a contiguous Float32 [3, 2, 5] output and checks every element.
fn check_hwc(layout: Value, need: usize, offset: impl Fn(usize, usize, usize) -> usize) {
    let mut bytes = vec![0x5a; need];
    for h in 0..3 {
        for w in 0..2 {
            for c in 0..5 {
                bytes[offset(h, w, c)] = hwc_value(h, w, c);
            }
        }
    }
    let shape = [3, 2, 5];
    let v = call(
        &shape,
        layout.clone(),
        "Float32",
        contiguous(),
        0x3f80_0000,
        0,
        &bytes,
        need as u64,
        120,
    );
    let out = f32s(&output(&v));
    for h in 0..3 {
        for w in 0..2 {
            for c in 0..5 {
                let want = f32::from(hwc_value(h, w, c)).to_bits();
                assert_eq!(out[(h * 2 + w) * 5 + c], want, "({h}, {w}, {c})");
            }
        }
    }
    // One byte short is refused.
    let v = call(
        &shape,
        layout,
        "Float32",
        contiguous(),
        0x3f80_0000,
        0,
        &bytes[..need - 1],
        need as u64 - 1,
        120,
    );
    assert_eq!(refusal(&v), "capacity");
}

#[test]
fn mla_tiled_pad16_with_partial_tiles() {
    // [H=3, W=2, C=5], axes {−1, 0, 1, 2}, tile {1, 2, 1, 3}, Pad16. C tiles: c 0–2 (3), c 3–4 (2);
    // H tiles: h 0–1 (2), h 2 (1); W tiles: w 0, w 1. Tile order C, D, H, W. Each pixel stores 16
    // bytes (3 or 2 channels, then padding), pixels row-major:
    //   C tile 0: (h0–1, w0) base 0 span 32 | (h0–1, w1) base 32 span 32 | (h2, w0) 64 span 16 |
    //             (h2, w1) 80 span 16
    //   C tile 1: the same at 96, 128, 160, 176; total 192.
    check_hwc(tiled(&[-1, 0, 1, 2], &[1, 2, 1, 3], "Pad16"), 192, |h, w, c| {
        let (base_c, lc) = if c < 3 { (0, c) } else { (96, c - 3) };
        let (base_t, p) = match (h, w) {
            (0 | 1, 0) => (0, h),
            (0 | 1, _) => (32, h),
            (_, 0) => (64, 0),
            _ => (80, 0),
        };
        base_c + base_t + 16 * p + lc
    });
}

#[test]
fn mla_tiled_compact_with_partial_tiles() {
    // The same tiles, Compact: a pixel stores its tile's actual channels, a tile's span rounds
    // pixels × channels up to 16:
    //   C tile 0 (3 channels): (h0–1, w0) base 0, 6 bytes → 16 | (h0–1, w1) 16 | (h2, w0) 32 |
    //             (h2, w1) 48
    //   C tile 1 (2 channels): 64, 80, 96, 112; total 128. Offset = base + p·channels + local c.
    check_hwc(tiled(&[-1, 0, 1, 2], &[1, 2, 1, 3], "Compact"), 128, |h, w, c| {
        let (base_c, lc, ch) = if c < 3 { (0, c, 3) } else { (64, c - 3, 2) };
        let (base_t, p) = match (h, w) {
            (0 | 1, 0) => (0, h),
            (0 | 1, _) => (16, h),
            (_, 0) => (32, 0),
            _ => (48, 0),
        };
        base_c + base_t + p * ch + lc
    });
}

#[test]
fn mla_cblocked_blocks_of_16() {
    // [H=3, W=2, C=5] MlaCBlocked{tile {2, 2, 5}}: H tiles h0–1 (2), h2 (1); one W tile; one C tile.
    // Tile (h0–1): P = 4 pixels, offset 16·((c/16)·P + p) + c%16 = 16p + c (c < 16), span 16·4 = 64.
    // Tile (h2): base 64, P = 2, span 32; total 96.
    check_hwc(json!({"MlaCBlocked": {"tile": strs(&[2, 2, 5])}}), 96, |h, w, c| {
        if h < 2 { 16 * (h * 2 + w) + c } else { 64 + 16 * w + c }
    });
}

#[test]
fn mla_cblocked_partial_channel_blocks_and_outer_axes() {
    // [N=2, H=1, W=2, C=20] MlaCBlocked{tile {1, 2, 32}}: one tile per slice, P = 2, actual c 20:
    // channel c of pixel p at 16·((c/16)·2 + p) + c%16; span ⌈20/16⌉·16·2 = 64; slice n at 64n.
    // Output Strided with a channel stride of 8 bytes (holes between channels), Float32:
    // strides {n: 320, h: 320, w: 160, c: 8}: span 4 + 320 + 160 + 19·8 = 636.
    let mut bytes = vec![0x33u8; 128];
    let q = |n: usize, w: usize, c: usize| (n * 50 + w * 25 + c) as u8;
    for n in 0..2 {
        for w in 0..2 {
            for c in 0..20 {
                bytes[64 * n + 16 * ((c / 16) * 2 + w) + c % 16] = q(n, w, c);
            }
        }
    }
    let v = call(
        &[2, 1, 2, 20],
        json!({"MlaCBlocked": {"tile": strs(&[1, 2, 32])}}),
        "Float32",
        strided(&[320, 320, 160, 8]),
        0x3f80_0000,
        0,
        &bytes,
        128,
        640,
    );
    let out = output(&v);
    let mut written = vec![false; 640];
    for n in 0..2 {
        for w in 0..2 {
            for c in 0..20 {
                let at = 320 * n + 160 * w + 8 * c;
                let word = u32::from_le_bytes(out[at..at + 4].try_into().unwrap());
                assert_eq!(word, f32::from(q(n, w, c)).to_bits(), "({n}, {w}, {c})");
                written[at..at + 4].fill(true);
            }
        }
    }
    for (i, b) in out.iter().enumerate() {
        if !written[i] {
            assert_eq!(*b, 0xaa, "byte {i} is a hole and keeps the poison");
        }
    }
    // MlaCBlocked needs rank 3–6.
    let v = call(
        &[2, 20],
        json!({"MlaCBlocked": {"tile": strs(&[1, 32])}}),
        "Float32",
        contiguous(),
        0x3f80_0000,
        0,
        &[],
        0,
        160,
    );
    assert_eq!(refusal(&v), "rank");
}

#[test]
fn mla_tiled_permuted_and_outer_axes() {
    // [C=2, H=3] with axes {−1, 1, −1, 0}: H is logical axis 1, C logical axis 0. Tile {1, 3, 1, 2}:
    // one tile of 3 pixels (h) × 2 channels: element [c, h] at byte 2h + c.
    let bytes = [10u8, 20, 11, 21, 12, 22]; // q[c, h] = 10(c+1) + h at 2h + c
    let v = call(
        &[2, 3],
        tiled(&[-1, 1, -1, 0], &[1, 3, 1, 2], "Compact"),
        "Float32",
        contiguous(),
        0x3f80_0000,
        0,
        &bytes,
        16,
        24,
    );
    let out = f32s(&output(&v));
    let want: Vec<u32> = [10.0f32, 11.0, 12.0, 20.0, 21.0, 22.0]
        .iter()
        .map(|x| x.to_bits())
        .collect();
    assert_eq!(out, want);
    // [W=2, N=2, C=3] with axes {−1, −1, 0, 2}: axis 1 is outer; slice n at 16n, element (w, n, c)
    // at 16n + 3w + c.
    let mut bytes = [0u8; 32];
    for n in 0..2 {
        for w in 0..2 {
            for c in 0..3 {
                bytes[16 * n + 3 * w + c] = (100 * w + 10 * n + c) as u8;
            }
        }
    }
    let v = call(
        &[2, 2, 3],
        tiled(&[-1, -1, 0, 2], &[1, 1, 2, 3], "Compact"),
        "Float32",
        contiguous(),
        0x3f80_0000,
        0,
        &bytes,
        32,
        48,
    );
    let out = f32s(&output(&v));
    for w in 0..2 {
        for n in 0..2 {
            for c in 0..3 {
                assert_eq!(
                    out[(w * 2 + n) * 3 + c],
                    f32::from((100 * w + 10 * n + c) as u8).to_bits()
                );
            }
        }
    }
    // An unmapped D/H/W axis has extent 1 whatever its tile extent; a tile larger than the axis is
    // one tile of the axis' extent. [C=3], axes {−1, −1, −1, 0}, tile {7, 7, 7, 100}: 3 bytes in 16.
    let v = call(
        &[3],
        tiled(&[-1, -1, -1, 0], &[7, 7, 7, 100], "Pad16"),
        "Float32",
        contiguous(),
        0x3f80_0000,
        0,
        &[1, 2, 3],
        16,
        12,
    );
    assert_eq!(
        f32s(&output(&v)),
        [1.0f32.to_bits(), 2.0f32.to_bits(), 3.0f32.to_bits()]
    );
    let v = call(
        &[3],
        tiled(&[-1, -1, -1, 0], &[7, 7, 7, 100], "Pad16"),
        "Float32",
        contiguous(),
        0x3f80_0000,
        0,
        &[1, 2, 3],
        15,
        12,
    );
    assert_eq!(refusal(&v), "capacity");
}

#[test]
fn input_bytes_past_the_given_ones_are_zeros() {
    // Capacity 16 with 2 bytes given: the other 4 logical bytes are 0 → (0 + 3)·0.25 = 0.75.
    let v = call(
        &[2, 3],
        tiled(&[-1, -1, 0, 1], &[1, 1, 2, 3], "Compact"),
        "Float32",
        contiguous(),
        0x3e80_0000,
        -3,
        &[0xfd, 0x00],
        16,
        24,
    );
    assert_eq!(
        f32s(&output(&v)),
        [0, 0x3f40_0000, 0x3f40_0000, 0x3f40_0000, 0x3f40_0000, 0x3f40_0000]
    );
}

#[test]
fn empty_tensors() {
    // [0, 3]: no element, no arithmetic; the input needs 0 bytes, the output span is 0. The buffer
    // keeps its poison.
    let v = call(
        &[0, 3],
        tiled(&[-1, -1, 0, 1], &[1, 1, 2, 3], "Compact"),
        "Float32",
        contiguous(),
        0x3e80_0000,
        -3,
        &[],
        0,
        8,
    );
    assert_eq!(output(&v), vec![0xaa; 8]);
    // Null pointers are refused even for an empty tensor.
    let mut v2 = v.clone();
    v2["buffers"]["outputs"][0]["address"] = json!("0");
    assert_eq!(refusal(&v2), "null_pointer");
    // A huge empty tensor: [0, 2^63, 2^63] has span 0 and needs 0 bytes.
    let v = call(
        &[0, 1 << 63, 1 << 63],
        tiled(&[-1, -1, 1, 2], &[1, 1, 1, 1], "Compact"),
        "Float32",
        contiguous(),
        0x3e80_0000,
        0,
        &[],
        0,
        0,
    );
    assert_eq!(output(&v), Vec::<u8>::new());
}

// ---------------------------------------------------------------------------------------------
// Refusals (D3): one test per code, and the order
// ---------------------------------------------------------------------------------------------

fn base() -> Value {
    example("Float32", strided(&[16, 4]), 28)
}

fn with(f: impl FnOnce(&mut Value)) -> String {
    let mut v = base();
    f(&mut v);
    refusal(&v)
}

#[test]
fn refuse_ports() {
    assert_eq!(with(|v| v["inputs"] = json!([])), "ports");
    assert_eq!(
        with(|v| {
            let o = v["outputs"][0].clone();
            v["outputs"] = json!([o.clone(), o])
        }),
        "ports"
    );
    // Execution: one buffer each.
    assert_eq!(with(|v| v["buffers"]["inputs"] = json!([])), "ports");
    assert_eq!(
        with(|v| {
            let o = v["buffers"]["outputs"][0].clone();
            v["buffers"]["outputs"] = json!([o.clone(), o])
        }),
        "ports"
    );
    // Spec ports come first, before the scale.
    assert_eq!(
        with(|v| {
            v["inputs"] = json!([]);
            v["params"]["scale"] = json!("00000000")
        }),
        "ports"
    );
}

#[test]
fn refuse_scale() {
    for s in [
        "00000000", "80000000", "7f800000", "ff800000", "7fc00000", "ffc00001", "bf800000", "80000001",
    ] {
        assert_eq!(with(|v| v["params"]["scale"] = json!(s)), "scale", "{s}");
    }
    // A positive subnormal is admitted.
    let mut v = base();
    v["params"]["scale"] = json!("00000001");
    output(&v);
    // The scale comes before the rank.
    assert_eq!(
        with(|v| {
            v["params"]["scale"] = json!("00000000");
            v["inputs"][0]["shape"] = json!([])
        }),
        "scale"
    );
}

#[test]
fn refuse_rank() {
    // A scalar (rank 0), in both specs.
    assert_eq!(
        with(|v| {
            v["inputs"][0]["shape"] = json!([]);
            v["outputs"][0]["shape"] = json!([])
        }),
        "rank"
    );
    // Rank 7.
    let seven = json!(["1", "1", "1", "1", "1", "2", "3"]);
    assert_eq!(
        with(|v| {
            v["inputs"][0]["shape"] = seven.clone();
            v["outputs"][0]["shape"] = seven
        }),
        "rank"
    );
    // The output's rank too (before shape_mismatch).
    assert_eq!(with(|v| v["outputs"][0]["shape"] = json!([])), "rank");
    // MlaCBlocked below rank 3: its layout's admission, after input_dtype (D3).
    let cblocked = json!({"MlaCBlocked": {"tile": ["1", "1", "1"]}});
    assert_eq!(with(|v| v["inputs"][0]["layout"] = cblocked.clone()), "rank");
    assert_eq!(
        with(|v| {
            v["inputs"][0]["layout"] = cblocked;
            v["inputs"][0]["dtype"] = json!("UInt8");
        }),
        "input_dtype"
    );
}

#[test]
fn refuse_shape_mismatch() {
    assert_eq!(with(|v| v["outputs"][0]["shape"] = json!(["3", "2"])), "shape_mismatch");
    assert_eq!(
        with(|v| v["outputs"][0]["shape"] = json!(["2", "3", "1"])),
        "shape_mismatch"
    );
}

#[test]
fn refuse_input_dtype() {
    for d in ["UInt8", "Int16", "Int32", "Float16", "BFloat16", "Float32"] {
        assert_eq!(with(|v| v["inputs"][0]["dtype"] = json!(d)), "input_dtype", "{d}");
    }
    // Before the input layout.
    assert_eq!(
        with(|v| {
            v["inputs"][0]["dtype"] = json!("UInt8");
            v["inputs"][0]["layout"] = contiguous()
        }),
        "input_dtype"
    );
}

#[test]
fn refuse_input_layout() {
    assert_eq!(with(|v| v["inputs"][0]["layout"] = contiguous()), "input_layout");
    assert_eq!(with(|v| v["inputs"][0]["layout"] = strided(&[3, 1])), "input_layout");
}

#[test]
fn refuse_axis_mapping() {
    let axes = |a: &[i128]| {
        let a = strs(a);
        move |v: &mut Value| v["inputs"][0]["layout"]["MlaTiled"]["axes"] = a
    };
    assert_eq!(with(axes(&[-1, -1, 0, -1])), "axis_mapping"); // C unmapped
    assert_eq!(with(axes(&[-1, -1, 0, 2])), "axis_mapping"); // past the rank
    assert_eq!(with(axes(&[-1, -2, 0, 1])), "axis_mapping"); // below −1
    assert_eq!(with(axes(&[-1, 0, 0, 1])), "axis_mapping"); // axis 0 twice
    assert_eq!(with(axes(&[-1, -1, 1, 1])), "axis_mapping"); // C's axis twice
    assert_eq!(with(axes(&[-1, 0, 1])), "axis_mapping"); // not four axes
    assert_eq!(with(axes(&[-1, -1, -1, 0, 1])), "axis_mapping");
    let huge = "100000000000000000000000000000000000000000";
    assert_eq!(
        with(|v| v["inputs"][0]["layout"]["MlaTiled"]["axes"][3] = json!(huge)),
        "axis_mapping"
    );
    // Before the tile shape.
    assert_eq!(
        with(|v| {
            v["inputs"][0]["layout"]["MlaTiled"]["axes"] = strs(&[-1, -1, 0, -1]);
            v["inputs"][0]["layout"]["MlaTiled"]["tile_shape"] = strs(&[0, 0, 0, 0]);
        }),
        "axis_mapping"
    );
}

#[test]
fn refuse_tile_shape() {
    let tile = |t: &[i128]| {
        let t = strs(t);
        move |v: &mut Value| v["inputs"][0]["layout"]["MlaTiled"]["tile_shape"] = t
    };
    assert_eq!(with(tile(&[1, 1, 2, 0])), "tile_shape");
    assert_eq!(with(tile(&[0, 1, 2, 3])), "tile_shape"); // an unmapped axis' extent too
    assert_eq!(with(tile(&[1, 2, 3])), "tile_shape");
    assert_eq!(with(tile(&[1, 1, 1, 2, 3])), "tile_shape");
    let cb = |t: &[i128]| {
        let t = strs(t);
        move |v: &mut Value| {
            let three = json!(["1", "2", "3"]);
            v["inputs"][0]["shape"] = three.clone();
            v["outputs"][0]["shape"] = three;
            v["outputs"][0]["layout"] = contiguous();
            v["inputs"][0]["layout"] = json!({"MlaCBlocked": {"tile": t}});
        }
    };
    assert_eq!(with(cb(&[1, 0, 3])), "tile_shape");
    assert_eq!(with(cb(&[1, 2, 3, 4])), "tile_shape");
    assert_eq!(with(cb(&[1, 2])), "tile_shape");
    // Before the output dtype.
    assert_eq!(
        with(|v| {
            tile(&[0, 1, 1, 1])(v);
            v["outputs"][0]["dtype"] = json!("Int8")
        }),
        "tile_shape"
    );
}

#[test]
fn refuse_output_dtype() {
    for d in ["Int8", "UInt8", "Int16", "Int32", "Float16"] {
        assert_eq!(with(|v| v["outputs"][0]["dtype"] = json!(d)), "output_dtype", "{d}");
    }
    assert_eq!(
        with(|v| {
            v["outputs"][0]["dtype"] = json!("Float16");
            v["outputs"][0]["layout"] = json!({"MlaCBlocked": {"tile": ["1","1","1"]}})
        }),
        "output_dtype"
    );
}

#[test]
fn refuse_output_layout() {
    assert_eq!(
        with(|v| v["outputs"][0]["layout"] = tiled(&[-1, -1, 0, 1], &[1, 1, 2, 3], "Compact")),
        "output_layout"
    );
    assert_eq!(
        with(|v| v["outputs"][0]["layout"] = json!({"MlaCBlocked": {"tile": ["1", "1", "1"]}})),
        "output_layout"
    );
}

#[test]
fn refuse_stride() {
    let s = |st: &[i128]| {
        let st = strided(st);
        move |v: &mut Value| v["outputs"][0]["layout"] = st
    };
    assert_eq!(with(s(&[16])), "stride"); // not one per axis
    assert_eq!(with(s(&[16, 4, 4])), "stride");
    assert_eq!(with(s(&[16, 2])), "stride"); // not a multiple of 4
    assert_eq!(with(s(&[18, 4])), "stride");
    assert_eq!(with(s(&[0, 4])), "stride"); // 0 on an axis of extent 2
    assert_eq!(with(s(&[-16, 4])), "stride"); // negative (the seed: strides are nonnegative)
    // BFloat16: multiples of 2.
    assert_eq!(
        with(|v| {
            s(&[16, 3])(v);
            v["outputs"][0]["dtype"] = json!("BFloat16")
        }),
        "stride"
    );
    let mut v = base();
    v["outputs"][0]["dtype"] = json!("BFloat16");
    v["outputs"][0]["layout"] = strided(&[6, 2]);
    output(&v);
    // A stride of 0 on an axis of extent 1 is fine: [1, 3] with strides {0, 4}.
    let mut v = base();
    v["inputs"][0]["shape"] = json!(["1", "3"]);
    v["outputs"][0]["shape"] = json!(["1", "3"]);
    v["outputs"][0]["layout"] = strided(&[0, 4]);
    assert_eq!(f32s(&output(&v))[..3], EXAMPLE_F32[..3]);
    // Before overlap.
    assert_eq!(with(s(&[4, 2])), "stride");
}

#[test]
fn refuse_overlap() {
    let s = |st: &[i128]| {
        let st = strided(st);
        move |v: &mut Value| v["outputs"][0]["layout"] = st
    };
    // By increasing stride: axis 1 (4) needs ≥ 4; span then 4 + 2·4 = 12; axis 0 (8) < 12.
    assert_eq!(with(s(&[8, 4])), "overlap");
    // Axis 0 (4) first, span 4 + 4 = 8; axis 1 (4, tie, later axis) < 8.
    assert_eq!(with(s(&[4, 4])), "overlap");
    // Exactly adjacent: {12, 4} is contiguous; {4, 8} is column-major: 4 ≥ 4, span 8, 8 ≥ 8.
    let mut v = base();
    s(&[4, 8])(&mut v);
    v["buffers"]["outputs"][0]["capacity"] = json!("24");
    // (w, c) at 4w + 8c: column-major.
    let out = f32s(&output(&v));
    assert_eq!(
        out,
        [
            EXAMPLE_F32[0],
            EXAMPLE_F32[3],
            EXAMPLE_F32[1],
            EXAMPLE_F32[4],
            EXAMPLE_F32[2],
            EXAMPLE_F32[5]
        ]
    );
    // Before address_overflow: two strides of 2^64 − 4, the second (a tie, later axis) below the
    // first's span 4 + (2^64 − 4).
    assert_eq!(with(s(&[18446744073709551612, 18446744073709551612])), "overlap");
}

#[test]
fn refuse_address_overflow() {
    // The output span: 4 + (2^64 − 4) + 2·4 passes 2^64.
    assert_eq!(
        with(|v| v["outputs"][0]["layout"] = strided(&[18446744073709551612, 4])),
        "address_overflow"
    );
    // The contiguous output of [2^32, 2^32] (4·2^64 bytes).
    let big = json!(["4294967296", "4294967296"]);
    assert_eq!(
        with(|v| {
            v["inputs"][0]["shape"] = big.clone();
            v["outputs"][0]["shape"] = big;
            v["outputs"][0]["layout"] = contiguous();
        }),
        "address_overflow"
    );
    // The input span alone: [W = 2^62, C = 1], Pad16, tile {1, 1, 1, 1}: 2^62 one-pixel tiles of 16
    // bytes = 2^66 input bytes, while the BFloat16 output's span is 2·2^62 = 2^63.
    let v = call(
        &[1 << 62, 1],
        tiled(&[-1, -1, 0, 1], &[1, 1, 1, 1], "Pad16"),
        "BFloat16",
        contiguous(),
        0x3f80_0000,
        0,
        &[],
        0,
        0,
    );
    assert_eq!(refusal(&v), "address_overflow");
    // A buffer whose address plus capacity passes 2^64 (execution), after the alignment check.
    assert_eq!(
        with(|v| {
            v["buffers"]["inputs"][0]["address"] = json!("18446744073709551600");
            v["buffers"]["inputs"][0]["capacity"] = json!("32");
        }),
        "address_overflow"
    );
    assert_eq!(
        with(|v| v["buffers"]["outputs"][0]["address"] = json!("18446744073709551600")),
        "address_overflow"
    );
    // Ending exactly at 2^64 is fine: 2^64 − 16 + 16.
    let mut v = base();
    v["buffers"]["inputs"][0]["address"] = json!("18446744073709551600");
    output(&v);
    assert_eq!(
        with(|v| {
            v["buffers"]["inputs"][0]["address"] = json!("18446744073709551600");
            v["buffers"]["inputs"][0]["capacity"] = json!("17")
        }),
        "address_overflow"
    );
}

#[test]
fn strides_of_any_size_are_exact() {
    let s = |st: &[&str]| {
        let st = json!({"Strided": {"strides": st}});
        move |v: &mut Value| v["outputs"][0]["layout"] = st
    };
    // 2^64 on an axis of extent 2: the span passes 64 bits.
    assert_eq!(with(s(&["18446744073709551616", "4"])), "address_overflow");
    // −2^64: negative.
    assert_eq!(with(s(&["-18446744073709551616", "4"])), "stride");
    // 10^40 + 2 is 2 mod 4 (10^40 = 2^40 · 5^40).
    assert_eq!(with(s(&["10000000000000000000000000000000000000002", "4"])), "stride");
    // Two strides of 10^40 (a tie): the second is below the first's span 4 + 10^40.
    let t = "10000000000000000000000000000000000000000";
    assert_eq!(with(s(&[t, t])), "overlap");
    // 10^40 and 4: no overlap, a span past 64 bits.
    assert_eq!(with(s(&[t, "4"])), "address_overflow");
    // Any stride on an axis of extent 1 never moves: [1, 3] with strides {2^64, 4} succeeds.
    let mut v = base();
    v["inputs"][0]["shape"] = json!(["1", "3"]);
    v["outputs"][0]["shape"] = json!(["1", "3"]);
    s(&["18446744073709551616", "4"])(&mut v);
    assert_eq!(f32s(&output(&v))[..3], EXAMPLE_F32[..3]);
    v["outputs"][0]["layout"]["Strided"]["strides"][0] = json!(t);
    assert_eq!(f32s(&output(&v))[..3], EXAMPLE_F32[..3]);
}

#[test]
fn refuse_capacity() {
    assert_eq!(
        with(|v| {
            v["buffers"]["inputs"][0]["capacity"] = json!("15");
            v["buffers"]["inputs"][0]["bytes"] = json!("")
        }),
        "capacity"
    );
    assert_eq!(
        with(|v| v["buffers"]["outputs"][0]["capacity"] = json!("27")),
        "capacity"
    );
    // Before null_pointer.
    assert_eq!(
        with(|v| {
            v["buffers"]["outputs"][0]["capacity"] = json!("0");
            v["buffers"]["outputs"][0]["address"] = json!("0")
        }),
        "capacity"
    );
}

#[test]
fn refuse_null_pointer() {
    assert_eq!(
        with(|v| v["buffers"]["inputs"][0]["address"] = json!("0")),
        "null_pointer"
    );
    assert_eq!(
        with(|v| v["buffers"]["outputs"][0]["address"] = json!("0")),
        "null_pointer"
    );
    // Before alignment.
    assert_eq!(
        with(|v| {
            v["buffers"]["inputs"][0]["address"] = json!("0");
            v["buffers"]["outputs"][0]["address"] = json!("3")
        }),
        "null_pointer"
    );
}

#[test]
fn refuse_alignment() {
    assert_eq!(
        with(|v| v["buffers"]["inputs"][0]["address"] = json!("4104")),
        "alignment"
    );
    assert_eq!(
        with(|v| v["buffers"]["outputs"][0]["address"] = json!("65538")),
        "alignment"
    );
    // BFloat16 needs 2: 65538 is aligned, 65537 is not.
    let mut v = example("BFloat16", contiguous(), 12);
    v["buffers"]["outputs"][0]["address"] = json!("65538");
    output(&v);
    v["buffers"]["outputs"][0]["address"] = json!("65537");
    assert_eq!(refusal(&v), "alignment");
    // Before address_overflow (address + capacity past 2^64).
    assert_eq!(
        with(|v| v["buffers"]["outputs"][0]["address"] = json!("18446744073709551614")),
        "alignment"
    );
}

#[test]
fn refuse_aliasing() {
    // Input accessed [4096, 4112), output [4108, 4136): they share 4108–4111.
    assert_eq!(
        with(|v| v["buffers"]["outputs"][0]["address"] = json!("4108")),
        "aliasing"
    );
    assert_eq!(
        with(|v| v["buffers"]["outputs"][0]["address"] = json!("4072")),
        "aliasing"
    );
    // Adjacent views are allowed: output at 4112, or ending at 4096.
    for a in ["4112", "4068"] {
        let mut v = base();
        v["buffers"]["outputs"][0]["address"] = json!(a);
        output(&v);
    }
    // Unused extra capacity may overlap: input capacity 64 reaching past the output's start.
    let mut v = base();
    v["buffers"]["outputs"][0]["address"] = json!("4112");
    v["buffers"]["inputs"][0]["capacity"] = json!("64");
    output(&v);
}

// ---------------------------------------------------------------------------------------------
// Request errors and caps
// ---------------------------------------------------------------------------------------------

#[test]
fn call_request_errors_name_the_field() {
    let e = |f: &dyn Fn(&mut Value)| {
        let mut v = base();
        f(&mut v);
        bad(&v)
    };
    assert!(e(&|v| v["inputs"][0]["dtype"] = json!("Int4")).starts_with("inputs[0].dtype:"));
    assert!(e(&|v| v["inputs"][0]["shape"] = json!(["-1", "3"])).starts_with("inputs[0].shape[0]:"));
    assert!(e(&|v| v["inputs"][0]["shape"] = json!(["18446744073709551616", "3"])).starts_with("inputs[0].shape[0]:"));
    assert!(e(&|v| v["inputs"][0]["shape"] = json!([2, "3"])).starts_with("inputs[0].shape[0]:"));
    assert!(e(&|v| v["inputs"][0]["layout"] = json!({"Tiled": {}})).starts_with("inputs[0].layout.Tiled:"));
    assert!(e(&|v| v["inputs"][0]["layout"] = json!({})).starts_with("inputs[0].layout:"));
    assert!(
        e(&|v| v["inputs"][0]["layout"]["MlaTiled"]["channels"] = json!("Pad32"))
            .starts_with("inputs[0].layout.MlaTiled.channels:")
    );
    assert!(
        e(&|v| {
            v["inputs"][0]["layout"]["MlaTiled"]
                .as_object_mut()
                .unwrap()
                .remove("channels");
        })
        .starts_with("inputs[0].layout.MlaTiled.channels: missing")
    );
    assert!(
        e(&|v| v["inputs"][0]["layout"]["MlaTiled"]["tile_shape"] = strs(&[1, 1, -2, 3]))
            .starts_with("inputs[0].layout.MlaTiled.tile_shape[2]:")
    );
    assert!(
        e(&|v| v["outputs"][0]["layout"] = json!({"Contiguous": {"x": "1"}}))
            .starts_with("outputs[0].layout.Contiguous.x:")
    );
    assert!(
        e(&|v| v["outputs"][0]["layout"] = json!({"Strided": {"strides": ["16", "+4"]}}))
            .starts_with("outputs[0].layout.Strided.strides[1]:")
    );
    assert!(e(&|v| v["params"]["zero_point"] = json!("2147483648")).starts_with("params.zero_point:"));
    assert!(e(&|v| v["params"]["scale"] = json!("0.25")).starts_with("params.scale:"));
    assert!(e(&|v| v["buffers"]["inputs"][0]["bytes"] = json!("0")).starts_with("buffers.inputs[0].bytes:"));
    assert!(e(&|v| v["buffers"]["inputs"][0]["bytes"] = json!("AB")).starts_with("buffers.inputs[0].bytes:"));
    assert!(e(&|v| v["buffers"]["inputs"][0]["capacity"] = json!("5")).starts_with("buffers.inputs[0].bytes:"));
    assert!(e(&|v| v["buffers"]["outputs"][0]["poison"] = json!("aabb")).starts_with("buffers.outputs[0].poison:"));
    assert!(
        e(&|v| v["buffers"]["outputs"][0]["address"] = json!("18446744073709551616"))
            .starts_with("buffers.outputs[0].address:")
    );
    assert!(e(&|v| v["buffers"]["outputs"][0]["capacity"] = json!("-1")).starts_with("buffers.outputs[0].capacity:"));
    assert!(e(&|v| v["id"] = json!(7)).starts_with("id:"));
    assert!(e(&|v| v["id"] = json!("tab\there")).starts_with("id:"));
    assert!(e(&|v| v["extra"] = json!("x")).starts_with("extra:"));
    assert!(
        e(&|v| {
            v.as_object_mut().unwrap().remove("params");
        })
        .starts_with("params: missing")
    );
    // A call that would succeed with more than 2^20 bytes of output is a line error ...
    assert!(
        e(&|v| v["buffers"]["outputs"][0]["capacity"] = json!("1048577")).starts_with("buffers.outputs[0].capacity:")
    );
    // ... but 2^20 exactly is not, and a refused call may name any capacity.
    let mut v = base();
    v["buffers"]["outputs"][0]["capacity"] = json!("1048576");
    assert_eq!(output(&v).len(), 1 << 20);
    assert_eq!(
        with(|v| {
            v["buffers"]["outputs"][0]["capacity"] = json!("18446744073709551615");
            v["buffers"]["outputs"][0]["address"] = json!("0")
        }),
        "null_pointer"
    );
}

#[test]
fn dequant_fill_command_lines() {
    let mut out = String::new();
    let mut errs = Vec::new();
    let good = base().to_string();
    let input = format!(
        "{good}\nnot json\n{{\"fn\":\"add\",\"id\":\"x\",\"in\":{{\"a\":\"3f800000\",\"b\":\"3f800000\"}}}}\n{good}"
    );
    let n = dfill::fill(input.as_bytes(), &mut out, &mut |m| errs.push(m));
    assert_eq!(n, 2);
    assert!(errs[0].starts_with("line 2: not JSON"));
    assert!(errs[1].starts_with("line 3: line: not a DetessDequant record"));
    assert_eq!(out.lines().count(), 2);
}

// ---------------------------------------------------------------------------------------------
// The floating-point environment
// ---------------------------------------------------------------------------------------------

#[test]
fn environment_is_checked_and_never_changed() {
    env::check().unwrap();
    env::self_test().unwrap();
    // On a thread whose mode has FTZ/DAZ set (the CIS-2 pin), nonempty work is refused with an
    // error, not a vector; an empty call needs no mode. Dropping the pin restores the default.
    std::thread::spawn(|| {
        let v = base();
        let numeric = json!({"id": "n", "in": {"q": ["1"], "scale": "3f800000", "zero_point": "0"}});
        {
            let _pinned = wai_checker::cis2::env::pin().unwrap();
            let e = env::check().err().unwrap();
            assert!(e.contains("FTZ") && e.contains("DAZ"), "{e}");
            let m = bad(&v);
            assert!(m.starts_with("floating-point environment:"), "{m}");
            assert!(bad(&numeric).starts_with("floating-point environment:"));
            // A refused call and an empty call do no arithmetic.
            let mut r = base();
            r["params"]["scale"] = json!("00000000");
            assert_eq!(refusal(&r), "scale");
            let mut empty = base();
            empty["inputs"][0]["shape"] = json!(["0", "3"]);
            empty["outputs"][0]["shape"] = json!(["0", "3"]);
            assert_eq!(output(&empty), vec![0xaa; 28]);
        }
        env::check().unwrap();
        output(&v);
    })
    .join()
    .unwrap();
}

#[test]
fn cis2_records_on_the_same_thread_do_not_leak_their_mode() {
    // A CIS-2 record pins FTZ/DAZ while it computes (CIS-2 §1.3) and restores the register after;
    // a DetessDequant record on the same thread, next in the same fill, computes with gradual
    // underflow: 2^-149 · q with q = 1.
    std::thread::spawn(|| {
        let cis2 = r#"{"fn":"mul","id":"m","in":{"a":"00800000","b":"3f000000"}}"#;
        let dq = json!({"id": "n", "in": {"q": ["1"], "scale": "00000001", "zero_point": "0"}}).to_string();
        let input = format!("{cis2}\n{dq}\n{cis2}\n{dq}\n");
        let mut out = String::new();
        let n = fill::fill(input.as_bytes(), &mut out, &mut |m| panic!("{m}"));
        assert_eq!(n, 0);
        let lines: Vec<&str> = out.lines().collect();
        // CIS-2 flushes 2^-126 · 0.5 to zero; DetessDequant keeps the subnormal 2^-149.
        assert!(lines[0].contains(r#""r":"00000000""#), "{}", lines[0]);
        assert!(lines[1].contains(r#""f32":["00000001"]"#), "{}", lines[1]);
        assert_eq!(lines[1], lines[3]);
        env::check().unwrap();
    })
    .join()
    .unwrap();
}
