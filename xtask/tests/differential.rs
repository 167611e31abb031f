//! The checker against the oracle on 10,000 random graphs (the checker's seeded generator:
//! every operator, policies, state, scalars, exponents, malformed bytes).

#[test]
fn the_checker_agrees_with_the_oracle_on_10000_random_graphs() {
    let (stats, found) = xtask::differential::run(0..10_000);
    for d in found.iter().take(5) {
        eprintln!("seed {}: {}\n{}", d.seed, d.what, d.request);
    }
    assert!(found.is_empty(), "{} disagreements", found.len());
    // The run is not vacuous: many graphs load, decode and are certified.
    assert!(
        stats.loads_ok > 2_500 && stats.decodes > 2_500 && stats.certificates > 2_500,
        "{stats:?}"
    );
    assert!(stats.refused_decodes > 100, "{stats:?}");
}
