//! DetessDequant's numerical core, both implementations: for every scale and zero point of the
//! committed numeric suite and every one of the 256 INT8 values, the oracle's software binary32
//! and the checker's hardware path (its FP environment checked first) give the same FP32 and BF16
//! bits.

use wai_checker::dequant::{env, numeric as checker};
use wai_oracle::dequant::numeric;

#[test]
fn software_and_hardware_agree_on_every_q_of_the_numeric_suite() {
    let checked = env::check().expect("the default FP environment: nearest, no flush");
    let text = std::fs::read_to_string("../ops-conformance/detessdequant/numeric.jsonl").unwrap();
    let mut pairs = 0;
    for line in text.lines() {
        let r: serde_json::Value = serde_json::from_str(line).unwrap();
        let scale = u32::from_str_radix(r["in"]["scale"].as_str().unwrap(), 16).unwrap();
        let zero_point: i32 = r["in"]["zero_point"].as_str().unwrap().parse().unwrap();
        let prepared = checker::prepare(&checked, f32::from_bits(scale), zero_point);
        for q in i8::MIN..=i8::MAX {
            let oracle = numeric::dequantize(q, scale, zero_point);
            let hardware = checker::output(&checked, &prepared, q);
            assert_eq!(
                hardware.to_bits(),
                oracle,
                "q {q}, scale {scale:#010x}, zero point {zero_point}"
            );
            assert_eq!(checker::bf16_bits(hardware), numeric::bf16(oracle));
            pairs += 1;
        }
    }
    assert!(pairs >= 256 * 60, "{pairs}");
}
