//! E8 `mans_decode`'s latent tables (§5E, *Building the latent tables*) on random rows from the test
//! material (`wai_checker_testgen::stage::random_pmf`): every slot written, each `next` in range
//! with its doublings, each column's symbol in exactly `P[k]` slots.

use wai_checker::stage::mans_decode::{doublings, latent_slots, sym_of};
use wai_checker_testgen::random::Rng;
use wai_checker_testgen::stage::random_pmf;

#[test]
fn latent_tables_write_every_slot_with_next_in_range() {
    let mut r = Rng::new(5);
    for _ in 0..3000 {
        let width = r.range(1, 40) as usize;
        let p = random_pmf(&mut r, width);
        assert_eq!(p.iter().sum::<u32>(), 256);
        let slots = latent_slots(&p);
        for s in slots.iter() {
            let s = s.expect("every slot is written");
            assert!((1..=511).contains(&s.next), "{p:?}");
            let nb = doublings(s.next);
            assert!(nb <= 8);
            assert!(s.next << nb >= 256 && (nb == 0 || s.next << (nb - 1) < 256));
            assert!((s.next << nb) ^ 256 < 256);
        }
        // Each column's symbol takes exactly P[k] slots.
        for (k, &pk) in p.iter().enumerate() {
            let n = slots.iter().filter(|s| s.unwrap().sym == sym_of(k)).count();
            assert_eq!(n as u32, pk);
        }
    }
}
