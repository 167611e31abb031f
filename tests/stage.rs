//! Stage operators (§5E): the spec's stated identities as seeded property tests, the E8 table
//! builder's stated facts, and the provisional E1 core against its encoder.

use num_bigint::BigInt;
use rand::{RngExt, SeedableRng};
use rand_chacha::ChaCha8Rng;
use wai_oracle::num::{clamp, fits};
use wai_oracle::refusal::Code;
use wai_oracle::stage::mans_decode::{doublings, latent_slots};
use wai_oracle::stage::rans64_decode::{self, EndRule, Escape, Modes, Step, Table, TableRule};
use wai_oracle::stage::scalar::residual_step;

fn b(v: i64) -> BigInt {
    BigInt::from(v)
}

#[test]
fn e9_32_bit_form_equals_the_step_under_its_conditions() {
    // clamp(pred + r·q, lo, hi) = clamp(pred + clamp(r, −R, R)·q, lo, hi), R = ⌊(hi − lo)/q⌋ + 1.
    let mut rng = ChaCha8Rng::seed_from_u64(9);
    for case in 0..100_000 {
        // Half the cases inside the 32-bit form's width conditions, half anywhere in i32.
        let narrow = case % 2 == 0;
        let (lo, hi) = if narrow {
            let lo = rng.random_range(i64::from(i32::MIN) + 131_070..=i64::from(i32::MAX) - 131_070 - 65_535);
            (lo, lo + rng.random_range(1..=65_535))
        } else {
            let lo = rng.random_range(i64::from(i32::MIN)..i64::from(i32::MAX));
            (lo, rng.random_range(lo + 1..=i64::from(i32::MAX)))
        };
        let pred = rng.random_range(lo..=hi);
        let q = rng.random_range(1..=65_535);
        let r = match rng.random_range(0..4) {
            0 => rng.random_range(i64::from(i32::MIN)..=i64::from(i32::MAX)),
            _ => rng.random_range(-70_000..=70_000),
        };
        let step = residual_step(&b(pred), &b(r), &b(q), &b(lo), &b(hi)).unwrap();
        let big_r = (hi - lo) / q + 1;
        let inner = b(pred) + clamp(&b(r), &b(-big_r), &b(big_r)) * b(q);
        assert_eq!(
            step,
            clamp(&inner, &b(lo), &b(hi)),
            "pred {pred} r {r} q {q} [{lo}, {hi}]"
        );
        if narrow {
            // §5E E9 *Width*: every value the form forms fits i32.
            assert!(
                fits(&b(big_r * q), 32) && fits(&inner, 32),
                "pred {pred} r {r} q {q} [{lo}, {hi}]"
            );
        }
    }
}

#[test]
fn e9_width_fails_near_the_i32_limits_as_stated() {
    // §5E's example: lo = 2^31 − 65536, hi = 2^31 − 1, q = 65535, pred = hi, r = 2: the form
    // forms hi + 2·65535, past i32; the step itself is still hi.
    let (lo, hi, q) = ((1i64 << 31) - 65_536, (1i64 << 31) - 1, 65_535);
    let big_r = (hi - lo) / q + 1;
    assert_eq!(big_r, 2);
    assert!(!fits(&(b(hi) + b(2) * b(q)), 32));
    assert_eq!(residual_step(&b(hi), &b(2), &b(q), &b(lo), &b(hi)).unwrap(), b(hi));
}

/// A random row of `w` non-negative entries summing to 256.
fn random_row(rng: &mut ChaCha8Rng, w: usize) -> Vec<BigInt> {
    let mut cuts: Vec<i64> = (0..w - 1).map(|_| rng.random_range(0..=256)).collect();
    cuts.push(0);
    cuts.push(256);
    cuts.sort();
    cuts.windows(2).map(|c| b(c[1] - c[0])).collect()
}

/// §5E E8: "Every slot is written, and next ∈ [1, 511]", and nb ≤ 8.
fn assert_table_facts(row: &[BigInt]) {
    for (u, slot) in latent_slots(row).iter().enumerate() {
        let slot = slot
            .as_ref()
            .unwrap_or_else(|| panic!("slot {u} of {row:?} is not written"));
        assert!(
            slot.next >= b(1) && slot.next <= b(511),
            "slot {u} of {row:?}: next {}",
            slot.next
        );
        assert!(doublings(&slot.next) <= 8);
    }
}

#[test]
fn e8_every_slot_is_written_with_next_in_1_511_for_random_rows() {
    let mut rng = ChaCha8Rng::seed_from_u64(8);
    for _ in 0..2_000 {
        let w = rng.random_range(1..=80);
        assert_table_facts(&random_row(&mut rng, w));
    }
    // Rows with zeros and a single 256.
    assert_table_facts(&[b(0), b(256), b(0)]);
    assert_table_facts(&[b(256)]);
    assert_table_facts(&(0..256).map(|_| b(1)).collect::<Vec<_>>());
}

#[test]
fn e8_every_slot_is_written_for_the_corpus_rows() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/ops-conformance/stage/mans_decode.jsonl");
    let text = std::fs::read_to_string(path).expect("the committed mans_decode vectors");
    let mut rows = 0;
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        for row in v["in"]["pmf"].as_array().into_iter().flatten() {
            let row: Vec<BigInt> = row
                .as_array()
                .unwrap()
                .iter()
                .map(|x| x.as_str().unwrap().parse().unwrap())
                .collect();
            let valid = row.iter().all(|x| *x >= b(0)) && row.iter().sum::<BigInt>() == b(256);
            if valid {
                assert_table_facts(&row);
                rows += 1;
            }
        }
    }
    assert!(rows > 0, "the corpus holds pmf rows");
}

fn cdf_of(rng: &mut ChaCha8Rng, n: usize) -> Vec<BigInt> {
    let mut points: Vec<i64> = Vec::new();
    while points.len() < n - 2 {
        let p = rng.random_range(1..65_536);
        if !points.contains(&p) {
            points.push(p);
        }
    }
    points.sort();
    std::iter::once(0)
        .chain(points)
        .chain(std::iter::once(65_536))
        .map(b)
        .collect()
}

#[test]
fn e1_streams_from_the_encoder_decode_back_under_every_mode() {
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    for case in 0..500 {
        let n = rng.random_range(3..=40);
        let cdf = cdf_of(&mut rng, n);
        let offset = rng.random_range(-1000..=1000);
        let count = rng.random_range(1..=30);
        let mut steps = Vec::new();
        let mut want = Vec::new();
        for _ in 0..count {
            let k = rng.random_range(0..n - 1);
            steps.push(Step::Symbol { cdf: cdf.clone(), k });
            if k + 2 < n {
                want.push(b(k as i64 + offset));
            } else {
                // A minimal escape: raw < 16^3 in `groups` nibbles, least significant first.
                let raw: i64 = rng.random_range(1..4096);
                let groups: Vec<i64> = (0..3).map(|j| (raw >> (4 * j)) & 15).collect();
                let used = groups.iter().rposition(|&g| g != 0).map_or(0, |p| p + 1);
                steps.push(Step::Bits {
                    k: 4,
                    value: b(used as i64),
                });
                for &g in &groups[..used] {
                    steps.push(Step::Bits { k: 4, value: b(g) });
                }
                let value = if raw % 2 == 1 {
                    -(raw / 2) - 1
                } else {
                    raw / 2 + (n as i64 - 2)
                };
                want.push(b(value + offset));
            }
        }
        let stream = rans64_decode::encode(&steps);
        let tables = [Table { cdf, offset: b(offset) }];
        let reads = vec![b(0); count];
        for (escape, end) in [
            (Escape::Strict, EndRule::Canonical),
            (Escape::Strict, EndRule::FinalOnly),
            (Escape::Lenient, EndRule::Canonical),
        ] {
            let modes = Modes {
                table: TableRule::T4097,
                escape,
                end,
                range: Some((b(-100_000), b(100_000))),
            };
            assert_eq!(
                rans64_decode::decode(&stream, &tables, &reads, &modes).unwrap(),
                want,
                "case {case}"
            );
        }
        // One word more: no longer a canonical end (at = the number of symbols).
        let mut longer = stream.clone();
        longer.extend_from_slice(&[1, 0, 0, 0]);
        let modes = Modes {
            table: TableRule::T4097,
            escape: Escape::Strict,
            end: EndRule::Canonical,
            range: Some((b(-100_000), b(100_000))),
        };
        let stop = rans64_decode::decode(&longer, &tables, &reads, &modes).unwrap_err();
        assert_eq!((stop.at, stop.code), (count as i64, Code::StreamNoncanonical));
    }
}
