//! CIS-2's pinned values (§1.3, §2.3, §5.1, §6, §7.2) on the exact software binary32 under both
//! tininess rules and on the pinned hardware, and the two implementations against each other.

use wai_oracle::cis2::hard::Pinned;
use wai_oracle::cis2::pinned::{cos_pinned, exp_pinned, ln_pinned, rsqrt, silu, sin_pinned, table_digest};
use wai_oracle::cis2::reduce::{Matrix, dot_seq};
use wai_oracle::cis2::rope::{inv_freq, inv_freq_digest};
use wai_oracle::cis2::tokenizer::byte_to_unicode;
use wai_oracle::cis2::{Arith, F32, F64, Soft};

fn f(x: f32) -> F32 {
    F32(x.to_bits())
}

/// The §7.2 golden and the others that need no weights, on one arithmetic.
fn goldens(a: &impl Arith) {
    // §6.1: rsqrt(64) = 1 / 8 = 0.125 exactly.
    assert_eq!(rsqrt(a, f(64.0)), F32(0x3E00_0000));
    // §5.1: 1e8 + 1 rounds back to 1e8 (the ulp of 1e8 is 8), then − 1e8 gives 0.
    assert_eq!(dot_seq(a, &[f(1e8), f(1.0), f(-1e8)], &[f(1.0); 3]), F32(0));
    // §2.3: (1.0e-5f64) as f32.
    assert_eq!(a.narrow(F64(1.0e-5f64.to_bits())), F32(0x3727_C5AC));
    // §1.3's self-test: 2^-126 · 1e-10 and 0x00000001 + 0 are both +0.
    assert_eq!(a.mul(F32(0x0080_0000), f(1.0e-10)), F32(0));
    assert_eq!(a.add(F32(1), F32(0)), F32(0));
    // §7.2 for SmolLM2-135M: head_dim 64, rope_theta 100000.
    let table = inv_freq(a, 64, f(100_000.0));
    assert_eq!(table.len(), 32);
    assert_eq!(table[0], F32::ONE, "exp_pinned(−0) = 1");
    assert_eq!(
        hex::encode(inv_freq_digest(&table)),
        "da9f6dcfde0425588815509e874515cdcd3d6b8818b6d0136590052e7bbf6f12"
    );
}

#[test]
fn table_digest_is_pinned() {
    assert_eq!(
        hex::encode(table_digest()),
        "23c7bfaf5cef0095fd021af2eb1808abb4928bae4219756d86bdac670a06b35d"
    );
}

#[test]
fn goldens_on_software_binary32_under_both_rules() {
    goldens(&Soft::X86_64);
    goldens(&Soft::AARCH64);
}

#[test]
fn goldens_on_pinned_hardware() {
    let pinned = Pinned::new(1).expect("this host pins FTZ/DAZ");
    pinned.run(goldens);
}

#[test]
fn ln_of_rope_theta_is_within_the_spec_tolerance() {
    // §7.1: ln_pinned(100000) agrees with the v0.1 literal 0x413834F1 within 2e-6 relative.
    let a = Soft::X86_64;
    let got = f32::from_bits(ln_pinned(&a, f(100_000.0)).0);
    let literal = f32::from_bits(0x4138_34F1);
    assert!(((got - literal) / literal).abs() <= 2e-6, "{got} vs {literal}");
    // §6.5's domain guards: ln(0) = −∞, ln(−1) = NaN, and ln of a subnormal is −∞ (DAZ, C2).
    assert_eq!(ln_pinned(&a, F32(0)), F32::NEG_INFINITY);
    assert!(ln_pinned(&a, f(-1.0)).is_nan());
    assert_eq!(ln_pinned(&a, F32(1)), F32::NEG_INFINITY);
}

#[test]
fn exp_at_its_clamps() {
    let a = Soft::X86_64;
    // §6.2 steps 2–3: above 88 is +∞, below −88 is 0; exactly −88 reaches ldexp_exact with
    // k = floor(−88·log2(e) + 0.5) = floor(−126.46) = −127, which takes the biased exponent of
    // a result in [1, 2) (127) to 0: ldexp_exact returns 0.
    assert_eq!(exp_pinned(&a, F32(0x42B0_0001)), F32::INFINITY);
    assert_eq!(exp_pinned(&a, F32(0xC2B0_0001)), F32::ZERO);
    assert_eq!(exp_pinned(&a, f(-88.0)), F32::ZERO);
    assert_eq!(exp_pinned(&a, F32::ZERO), F32::ONE);
    assert!(exp_pinned(&a, F32::NAN).is_nan());
}

#[test]
fn byte_map_examples() {
    // §3.1.5.a: space → U+0120 'Ġ', newline → U+010A 'Ċ', '!' → itself; 188 bytes map to themselves.
    let m = byte_to_unicode();
    assert_eq!(m[0x20], '\u{120}');
    assert_eq!(m[0x0A], '\u{10A}');
    assert_eq!(m[b'!' as usize], '!');
    assert_eq!((0..256).filter(|&b| m[b] as u32 == b as u32).count(), 188);
    let mut sorted: Vec<char> = m.to_vec();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), 256, "a bijection");
}

#[test]
fn software_and_hardware_agree_on_every_function() {
    // The host's tininess rule on both sides; inputs spread over exponents −30..30 and signs.
    let soft = Soft::host();
    let pinned = Pinned::new(1).expect("this host pins FTZ/DAZ");
    let mut s = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let inputs: Vec<F32> = (0..20_000)
        .map(|_| {
            let r = next();
            let exp = (97 + r % 60) as u32; // biased exponents 97..157: about 2^-30 to 2^30
            F32(((r >> 8) as u32 & 0x807F_FFFF) | (exp << 23))
        })
        .collect();
    pinned.run(|hard| {
        for &x in &inputs {
            for (name, s, h) in [
                ("exp", exp_pinned(&soft, x), exp_pinned(hard, x)),
                ("sin", sin_pinned(&soft, x), sin_pinned(hard, x)),
                ("cos", cos_pinned(&soft, x), cos_pinned(hard, x)),
                ("silu", silu(&soft, x), silu(hard, x)),
                ("rsqrt", rsqrt(&soft, x), rsqrt(hard, x)),
                ("ln", ln_pinned(&soft, x), ln_pinned(hard, x)),
            ] {
                assert_eq!(s.canonical(), h.canonical(), "{name}({:#010x})", x.0);
            }
        }
    });
}

#[test]
fn tiled_matvecs_are_each_rows_dot_seq() {
    // §5.2: y[o] = dot_seq(w[o, :], x), whatever the tiling, on ragged shapes (rows and columns
    // not multiples of the 8 × 8 tile) and special patterns (±0, subnormals, ±∞, NaN).
    let specials = [
        0x0000u16, 0x8000, 0x0001, 0x807F, 0x7F80, 0xFF80, 0x7FC1, 0x3F80, 0xC2F7,
    ];
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let pinned = Pinned::new(2).expect("this host pins FTZ/DAZ");
    for (rows, cols) in [(1, 1), (8, 8), (9, 17), (16, 64), (23, 40), (5, 3)] {
        let mut bytes = Vec::new();
        for _ in 0..rows * cols {
            let r = next();
            let w = if r % 5 == 0 {
                specials[(r >> 8) as usize % specials.len()]
            } else {
                (r >> 16) as u16
            };
            bytes.extend(w.to_le_bytes());
        }
        let m = Matrix::new(rows, cols, &bytes);
        let xs: Vec<Vec<F32>> = (0..3)
            .map(|_| (0..cols).map(|_| F32((next() >> 32) as u32)).collect())
            .collect();
        let soft = Soft::host();
        let fast = pinned.run(|hard| m.matvecs(hard, &xs));
        for (p, x) in xs.iter().enumerate() {
            let want: Vec<F32> = (0..rows).map(|o| dot_seq(&soft, &m.row(o), x).canonical()).collect();
            let canonical = |y: &[F32]| y.iter().map(|v| v.canonical()).collect::<Vec<_>>();
            assert_eq!(
                canonical(&m.matvecs(&soft, &xs)[p]),
                want,
                "software, [{rows}, {cols}], x {p}"
            );
            assert_eq!(canonical(&fast[p]), want, "pinned hardware, [{rows}, {cols}], x {p}");
        }
    }
}

#[test]
fn fast_and_exact_decodes_agree_on_the_suites_models() {
    use wai_oracle::cis2::decode::{Artifacts, run};
    // Every valid model of the committed suite: the pinned hardware (row-parallel matvecs) and
    // the software binary32 under the host's rule give the same receipt, digests included.
    let pinned = Pinned::new(2).expect("this host pins FTZ/DAZ");
    let mut checked = 0;
    for e in std::fs::read_dir("ops-conformance/cis2/models").unwrap() {
        let dir = e.unwrap().path();
        let read = |n: &str| std::fs::read(dir.join(n)).unwrap();
        let files = Artifacts {
            weights: read("model.safetensors"),
            config: read("config.json"),
            tokenizer: read("tokenizer.json"),
        };
        let Ok(exact) = run(&Soft::host(), &files, "Once upon a time, 42 foxes", 12) else {
            continue;
        };
        let fast = pinned
            .run(|hard| run(hard, &files, "Once upon a time, 42 foxes", 12))
            .unwrap();
        assert_eq!(exact, fast, "{}", dir.display());
        checked += 1;
    }
    assert!(checked >= 4);
}

#[test]
fn positions_end_at_max_position_embeddings_and_at_two_to_the_24() {
    use wai_oracle::cis2::decode::check_positions;
    // docs/assumptions.md C7: positions 0 … P + gen_toks − 1.
    let ok = |p, n, m| check_positions(p, n, m).is_ok();
    assert!(ok(2, 6, Some(8)), "the last position 7 is max_position_embeddings − 1");
    assert!(!ok(2, 7, Some(8)));
    assert!(
        ok(2, (1 << 24) - 1, None),
        "the last position is 2^24, still exact in f32"
    );
    assert!(!ok(2, 1 << 24, None), "2^24 + 1 is not exact in f32");
    assert!(
        !ok(2, (1 << 24) - 1 + 1, Some(usize::MAX)),
        "2^24 bounds a larger max_position_embeddings too"
    );
    assert!(!ok(1, usize::MAX, None), "counted without overflow");
    let refused = check_positions(1, usize::MAX, Some(8)).unwrap_err();
    assert_eq!(refused.code.as_str(), "config_unsupported");
}
