//! DetessDequant: the seed's worked example through `fill`, and proof that the committed numeric
//! suite would catch a fused subtract-multiply or a BF16 narrowing of the exact product.

use serde_json::{Value, json};
use wai_oracle::fill::dequant::{fill_call, fill_numeric};
use wai_oracle::softfloat::{BINARY32, Env, Format};

fn seed_call(output_layout: Value, capacity: u64) -> Value {
    json!({
        "id": "seed",
        "inputs": [{ "dtype": "Int8", "shape": ["2", "3"],
                     "layout": { "MlaTiled": { "axes": ["-1", "-1", "0", "1"], "channels": "Compact", "tile_shape": ["1", "1", "2", "3"] } } }],
        "outputs": [{ "dtype": "Float32", "shape": ["2", "3"], "layout": output_layout }],
        "params": { "scale": "3e800000", "zero_point": "-3" },
        "buffers": {
            "inputs": [{ "address": "4096", "capacity": "16", "bytes": "05fdfc7f8000eeeeeeeeeeeeeeeeeeee" }],
            "outputs": [{ "address": "8192", "capacity": capacity.to_string(), "poison": "a5" }]
        }
    })
}

/// The six values of the seed's example: q = 5, −3, −4, 127, −128, 0 with zero point −3 and scale
/// 0.25 give (q + 3)/4 = 2, 0, −0.25, 32.5, −31.25, 0.75, as little-endian FP32 bytes.
const VALUES: [&str; 6] = ["00000040", "00000000", "000080be", "00000242", "0000fac1", "0000403f"];

#[test]
fn the_seed_worked_example() {
    let contiguous = fill_call(&seed_call(json!({ "Contiguous": {} }), 24)).unwrap();
    assert_eq!(contiguous["expect"]["outputs"][0], VALUES.concat());
    // Strided{16, 4}: row 1 starts at byte 16, so 28 bytes are addressed and bytes 12..16 are a
    // hole that keeps the poison.
    let strided = fill_call(&seed_call(json!({ "Strided": { "strides": ["16", "4"] } }), 28)).unwrap();
    let want = format!("{}a5a5a5a5{}", VALUES[..3].concat(), VALUES[3..].concat());
    assert_eq!(strided["expect"]["outputs"][0], want);
    // 27 bytes cannot hold the 28-byte span: refused, nothing written.
    let short = fill_call(&seed_call(json!({ "Strided": { "strides": ["16", "4"] } }), 27)).unwrap();
    assert_eq!(short["expect"], json!({ "refuse": "capacity" }));
}

fn committed_numeric() -> Vec<Value> {
    std::fs::read_to_string("ops-conformance/detessdequant/numeric.jsonl")
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A normal binary32 as `sig · 2^exp` with a 24-bit integer `sig`.
fn split(bits: u32) -> Option<(i64, i32)> {
    let field = ((bits >> 23) & 0xFF) as i32;
    (field != 0 && field != 0xFF).then(|| {
        let sig = i64::from((bits & 0x7F_FFFF) | 0x80_0000);
        (if bits >> 31 == 1 { -sig } else { sig }, field - 150)
    })
}

/// `n · 2^e` rounded once to `f`: the integer `n` is rounded once, then scaled by a power of two,
/// which is exact when the result is normal (`None` otherwise: the check skips that value).
fn round_once(n: i64, e: i32, f: Format) -> Option<u64> {
    let env = Env::Gradual;
    let bias = (1i32 << (f.exp - 1)) - 1;
    let (mut r, mut k) = (env.from_int(f, n), e);
    while k != 0 {
        let step = k.clamp(-60, 60);
        let power = ((step + bias) as u64) << f.frac;
        r = env.mul(f, r, power);
        k -= step;
    }
    let field = (r >> f.frac) & ((1 << f.exp) - 1);
    (n == 0 || (field != 0 && field != (1 << f.exp) - 1)).then_some(r)
}

#[test]
fn the_suite_catches_a_fused_subtract_multiply_and_a_direct_bf16_narrowing() {
    let env = Env::Gradual;
    let bf16 = Format { frac: 7, exp: 8 };
    let (mut fused_differs, mut direct_differs) = (0, 0);
    for record in committed_numeric() {
        // The committed record is what fill computes.
        let mut request = record.clone();
        request.as_object_mut().unwrap().remove("expect");
        assert_eq!(fill_numeric(&request).unwrap(), record);
        let i = &record["in"];
        let scale = u32::from_str_radix(i["scale"].as_str().unwrap(), 16).unwrap();
        let Some((s_sig, s_exp)) = split(scale) else { continue };
        let zp: i64 = i["zero_point"].as_str().unwrap().parse().unwrap();
        let zp32 = env.from_int(BINARY32, zp);
        for (k, q) in i["q"].as_array().unwrap().iter().enumerate() {
            let q: i64 = q.as_str().unwrap().parse().unwrap();
            // Fused: (q − zero_point) · scale exactly, rounded once to binary32.
            if let Some(fused) = round_once((q - zp) * s_sig, s_exp, BINARY32) {
                fused_differs += usize::from(record["expect"]["f32"][k] != format!("{fused:08x}").as_str());
            }
            // Direct BF16: the staged difference times scale, exactly, rounded once to BF16.
            let difference = env.sub(BINARY32, env.from_int(BINARY32, q), zp32) as u32;
            let Some((d_sig, d_exp)) = split(difference) else {
                continue;
            };
            if let Some(direct) = round_once(d_sig * s_sig, d_exp + s_exp, bf16) {
                direct_differs += usize::from(record["expect"]["bf16"][k] != format!("{direct:04x}").as_str());
            }
        }
    }
    assert!(
        fused_differs > 0,
        "no committed value tells a fused subtract-multiply apart"
    );
    assert!(
        direct_differs > 0,
        "no committed value tells a direct BF16 narrowing apart"
    );
}
