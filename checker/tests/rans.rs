//! E1 `rans64_decode` (§5E, PROVISIONAL: docs/assumptions.md E1) on streams written by the test
//! material's encoder (`wai_checker_testgen::stage`): round trips in every mode, the checks'
//! order under `strict`, the conditions refused before any symbol, and `lenient`'s continuation
//! and saturation.

use wai_checker::stage::dec::Dec;
use wai_checker::stage::rans64_decode::{End, Escape, Modes, TableIn, TableRule, decode};
use wai_checker::stage::{Code, Refusal, SR};
use wai_checker_testgen::random::Rng;
use wai_checker_testgen::stage::{Step, encode, escape_steps, random_cdf};

fn di(v: i128) -> Dec {
    Dec::from_i128(v)
}

fn table(cdf: &[u32], offset: i64) -> TableIn {
    TableIn {
        cdf: cdf.iter().map(|&v| di(v.into())).collect(),
        offset: di(offset.into()),
    }
}

fn modes(table: TableRule, escape: Escape, end: End) -> Modes {
    Modes { table, escape, end }
}

fn strict(lo: i64, hi: i64) -> Escape {
    Escape::Strict {
        lo: di(lo.into()),
        hi: di(hi.into()),
    }
}

/// `lenient`'s saturation to i32.
fn sat_i32(v: i64) -> i64 {
    v.clamp(i32::MIN.into(), i32::MAX.into())
}

fn refused(r: SR<Vec<i64>>) -> (Code, i64) {
    let e = r.unwrap_err();
    (e.code, e.at)
}

/// The steps that encode `value` against `cdf` (escape when it is not a direct index).
fn steps_for(cdf: &[u32], value: i64) -> Vec<Step> {
    let n = cdf.len();
    if value >= 0 && value < n as i64 - 2 {
        vec![Step::Symbol {
            cdf: cdf.to_vec(),
            k: value as usize,
        }]
    } else {
        let mut s = vec![Step::Symbol {
            cdf: cdf.to_vec(),
            k: n - 2,
        }];
        s.extend(escape_steps(value, n));
        s
    }
}

#[test]
fn round_trip_every_mode() {
    let mut r = Rng::new(41);
    for case in 0..400 {
        let rule = if case % 2 == 0 { TableRule::T4097 } else { TableRule::T2 };
        let ntab = r.range(1, 3) as usize;
        let cdfs: Vec<Vec<u32>> = (0..ntab).map(|_| random_cdf(&mut r, rule == TableRule::T2)).collect();
        let offsets: Vec<i64> = (0..ntab).map(|_| r.range(-1000, 1000)).collect();
        let nsym = r.range(0, 40) as usize;
        let mut steps = Vec::new();
        let mut reads = Vec::new();
        let mut want = Vec::new();
        for _ in 0..nsym {
            let ti = r.below(ntab as u64) as usize;
            let n = cdfs[ti].len() as i64;
            let value = match r.below(4) {
                0 => r.range(-(1 << 31), (1 << 31) - 1 + n - 2),
                1 => r.range(-300, 300),
                _ => r.range(0, n - 1),
            };
            steps.extend(steps_for(&cdfs[ti], value));
            reads.push(di(ti as i128));
            want.push(value + offsets[ti]);
        }
        let stream = encode(&steps);
        let tables: Vec<TableIn> = cdfs.iter().zip(&offsets).map(|(c, &o)| table(c, o)).collect();
        for end in [End::Canonical, End::FinalOnly] {
            let m = modes(rule, strict(i32::MIN.into(), i32::MAX.into()), end);
            assert_eq!(decode(&stream, &tables, &reads, &m), Ok(want.clone()), "case {case}");
            // lenient decodes the same streams (counts ≤ 8, no group of 15 as a count),
            // saturating to i32.
            let m = modes(rule, Escape::Lenient, end);
            let sat: Vec<i64> = want.iter().map(|&v| sat_i32(v)).collect();
            assert_eq!(decode(&stream, &tables, &reads, &m), Ok(sat), "case {case}");
        }
        // One word short: the stream runs out (canonical), or has run out (final_only).
        if stream.len() > 8 {
            let short = &stream[..stream.len() - 4];
            let m = modes(rule, Escape::Lenient, End::Canonical);
            assert_eq!(refused(decode(short, &tables, &reads, &m)).0, Code::StreamExhausted);
            let m = modes(rule, Escape::Lenient, End::FinalOnly);
            assert_eq!(
                refused(decode(short, &tables, &reads, &m)),
                (Code::StreamExhausted, nsym as i64)
            );
        }
        // One word more: not a canonical end; final_only accepts it.
        let mut long = stream.clone();
        long.extend_from_slice(&[1, 2, 3, 4]);
        let m = modes(rule, Escape::Lenient, End::Canonical);
        assert_eq!(
            refused(decode(&long, &tables, &reads, &m)),
            (Code::StreamNoncanonical, nsym as i64)
        );
        let m = modes(rule, Escape::Lenient, End::FinalOnly);
        assert!(decode(&long, &tables, &reads, &m).is_ok());
    }
}

#[test]
fn strict_checks_in_order() {
    let cdf = [0u32, 30000, 65536]; // n = 3: index 0 direct, index 1 the escape
    let t = [table(&cdf, 0)];
    let esc = Step::Symbol {
        cdf: cdf.to_vec(),
        k: 1,
    };
    let reads = [di(0)];
    let run = |steps: &[Step], lo: i64, hi: i64, end: End| {
        decode(
            &encode(steps),
            &t,
            &reads,
            &modes(TableRule::T4097, strict(lo, hi), end),
        )
    };
    for end in [End::Canonical, End::FinalOnly] {
        // count > 8: no group read, refused as non-canonical.
        let s = [esc.clone(), Step::Bits { k: 4, v: 9 }];
        assert_eq!(refused(run(&s, -100, 100, end)), (Code::StreamNoncanonical, 0));
        // A last group of 0.
        let s = [
            esc.clone(),
            Step::Bits { k: 4, v: 2 },
            Step::Bits { k: 4, v: 4 },
            Step::Bits { k: 4, v: 0 },
        ];
        assert_eq!(refused(run(&s, -100, 100, end)), (Code::StreamNoncanonical, 0));
        // ... which comes before a symbol out of range (raw = 4 → value 3).
        assert_eq!(refused(run(&s, 5, 100, end)), (Code::StreamNoncanonical, 0));
        // count 0: raw = 0, value n − 2 = 1; out of [2, 3].
        let s = [esc.clone(), Step::Bits { k: 4, v: 0 }];
        assert_eq!(run(&s, 1, 1, end), Ok(vec![1]));
        assert_eq!(refused(run(&s, 2, 3, end)), (Code::FieldRange, 0));
        // A direct symbol out of range.
        let s = [Step::Symbol {
            cdf: cdf.to_vec(),
            k: 0,
        }];
        assert_eq!(refused(run(&s, 1, 3, end)), (Code::FieldRange, 0));
    }
    // Under canonical, running out comes before count > 8. x0 = 2^16 + 30009: the escape's step
    // leaves 35536 + 9 < 2^31 with no word to read, and bits(4) then gives 9.
    let cut = (65536u64 + 30009).to_le_bytes();
    let m = modes(TableRule::T4097, strict(-100, 100), End::Canonical);
    assert_eq!(refused(decode(&cut, &t, &reads, &m)), (Code::StreamExhausted, 0));
    // final_only: the symbol's own check comes first.
    let m = modes(TableRule::T4097, strict(-100, 100), End::FinalOnly);
    assert_eq!(refused(decode(&cut, &t, &reads, &m)).0, Code::StreamNoncanonical);
}

#[test]
fn conditions_refuse_before_any_symbol() {
    let ok = [0u32, 100, 65536];
    let st = encode(&[]);
    let m = modes(TableRule::T4097, Escape::Lenient, End::Canonical);
    let c = |stream: &[u8], t: &[TableIn], reads: &[Dec], m: &Modes| refused(decode(stream, t, reads, m));
    let mm = (Code::ModelMismatch, -1);
    assert_eq!(decode(&st, &[], &[], &m), Ok(vec![]));
    assert_eq!(c(&st[..4], &[], &[], &m), mm);
    assert_eq!(c(&[0; 10], &[], &[], &m), mm);
    assert_eq!(c(&st, &[table(&ok, 0)], &[di(1)], &m), mm);
    assert_eq!(c(&st, &[table(&ok, 0)], &[di(-1)], &m), mm);
    assert_eq!(c(&st, &[table(&ok, 1 << 31)], &[], &m), mm);
    assert_eq!(c(&st, &[table(&ok, -(1 << 31) - 1)], &[], &m), mm);
    assert_eq!(decode(&st, &[table(&ok, -(1 << 31))], &[], &m), Ok(vec![]));
    for bad in [
        &[0u32, 65536][..],
        &[1, 100, 65536],
        &[0, 100, 65535],
        &[0, 100, 100, 65536],
    ] {
        assert_eq!(c(&st, &[table(bad, 0)], &[], &m), mm, "{bad:?}");
    }
    let t2 = modes(TableRule::T2, Escape::Lenient, End::Canonical);
    assert_eq!(decode(&st, &[table(&[0, 65536], 0)], &[], &t2), Ok(vec![]));
    let full: Vec<u32> = (0..=65536).collect();
    assert_eq!(decode(&st, &[table(&full, 0)], &[], &t2), Ok(vec![]));
    assert_eq!(c(&st, &[table(&full, 0)], &[], &m), mm);
    let long: Vec<u32> = (0..4097).map(|i| i * 15).chain([65536]).collect();
    assert_eq!(c(&st, &[table(&long, 0)], &[], &m), mm);
    assert_eq!(
        decode(&st, &[table(&long[1..], 0)], &[], &m),
        Err(Refusal {
            code: Code::ModelMismatch,
            at: -1
        })
    );
    let mut l2 = long.clone();
    l2.remove(1);
    assert_eq!(decode(&st, &[table(&l2, 0)], &[], &m), Ok(vec![]));
    let s = modes(TableRule::T4097, strict(3, 2), End::Canonical);
    assert_eq!(c(&st, &[], &[], &s), mm);
    let s = modes(TableRule::T4097, strict(0, 1 << 31), End::Canonical);
    assert_eq!(c(&st, &[], &[], &s), mm);
}

#[test]
fn lenient_continuation_and_saturation() {
    let cdf = [0u32, 65535, 65536];
    let t = [table(&cdf, i32::MAX.into())];
    let esc = Step::Symbol {
        cdf: cdf.to_vec(),
        k: 1,
    };
    let m = modes(TableRule::T4097, Escape::Lenient, End::Canonical);
    // 15 + 15 + 3 = 33, clamped to 8 groups; raw = 0xFFFFFFFE → value 2^31 − 1 + 1, saturated;
    // then the symbol saturated.
    let mut s = vec![
        esc.clone(),
        Step::Bits { k: 4, v: 15 },
        Step::Bits { k: 4, v: 15 },
        Step::Bits { k: 4, v: 3 },
    ];
    s.push(Step::Bits { k: 4, v: 0xE });
    s.extend((0..7).map(|_| Step::Bits { k: 4, v: 0xF }));
    assert_eq!(decode(&encode(&s), &t, &[di(0)], &m), Ok(vec![i32::MAX.into()]));
    // A direct symbol is saturated too: k + o = 0 + (2^31 − 1), then 1 + (2^31 − 1) → 2^31 − 1.
    let s = [Step::Symbol {
        cdf: cdf.to_vec(),
        k: 0,
    }];
    assert_eq!(decode(&encode(&s), &t, &[di(0)], &m), Ok(vec![i32::MAX.into()]));
    let t1 = [table(&[0, 100, 200, 65536], i32::MAX.into())];
    let s = [Step::Symbol {
        cdf: vec![0, 100, 200, 65536],
        k: 1,
    }];
    assert_eq!(decode(&encode(&s), &t1, &[di(0)], &m), Ok(vec![i32::MAX.into()]));
    // Under strict nothing is saturated: 2^31 is past hi = 2^31 − 1.
    let strict_modes = modes(TableRule::T4097, strict(0, i32::MAX.into()), End::Canonical);
    assert_eq!(
        refused(decode(&encode(&s), &t1, &[di(0)], &strict_modes)),
        (Code::FieldRange, 0)
    );
    // A count of 15 followed by groups that are not 15: 15 + 2 = 17 → 8 value groups.
    let mut s = vec![esc, Step::Bits { k: 4, v: 15 }, Step::Bits { k: 4, v: 2 }];
    s.extend((0..8).map(|j| Step::Bits { k: 4, v: j }));
    let t0 = [table(&cdf, 0)];
    let raw: i64 = (0..8).map(|j| j << (4 * j)).sum();
    assert_eq!(decode(&encode(&s), &t0, &[di(0)], &m), Ok(vec![raw / 2 + 1]));
}
