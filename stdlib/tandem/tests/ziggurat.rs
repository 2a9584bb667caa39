//! The ziggurat's tails: the tail routine against the exact conditional
//! tail distribution (KS), counts beyond 5 and 6 sigma, and the whole fill's
//! counts beyond r = 4.04 and beyond 4.5 sigma.

mod common;

use common::*;
use phobos_tandem::core::Continuation;
use phobos_tandem::ziggurat::{self, R};
use phobos_tandem::{Key, Tandem};

/// A draw in the base layer whose abscissa lies beyond R: layer bits 0,
/// sign from `sign`, fraction 1 - 2^-53 (so `u * x[0] > R`).
fn base_miss(sign: bool) -> u64 {
    (u64::MAX << 11) | (u64::from(sign) << 10)
}

#[test]
fn tail_routine_matches_the_conditional_tail() {
    let t = ziggurat::table();
    let root = Key::from_seed(40);
    let n = 1u64 << 18;
    let mut samples = Vec::with_capacity(n as usize);
    for j in 0..n {
        let mut more = Continuation::new(root.split(j).words());
        let z = ziggurat::slow(t, base_miss(j & 1 == 1), &mut more);
        assert_eq!(z < 0.0, j & 1 == 1, "the sign bit decides the sign");
        samples.push(z.abs());
    }
    let tail_mass = normal_sf(R);
    assert!(samples.iter().all(|&z| z >= R));
    let p = ks(&samples, |z| 1.0 - normal_sf(z) / tail_mass);
    assert!(p > P_MIN, "KS p = {p}");
    for (sigma, min_expected) in [(5.0, 2000.0), (6.0, 9.0)] {
        let count = samples.iter().filter(|&&z| z > sigma).count() as u64;
        let mean = n as f64 * normal_sf(sigma) / tail_mass;
        assert!(mean > min_expected);
        let p = poisson_two_sided(count, mean);
        assert!(
            p > P_MIN,
            "beyond {sigma}: {count} against {mean:.1}, p = {p}"
        );
    }
    // Power: the same samples are far from a tail beginning 1 % further out.
    assert!(
        ks(&samples, |z| (1.0 - normal_sf(z) / normal_sf(R * 1.01))
            .max(0.0))
            < P_MIN
    );
}

#[test]
fn fill_tails_have_the_normal_counts() {
    let n = 1usize << 21;
    let mut z = vec![0f64; n];
    Tandem::new(Key::from_seed(41))
        .fill_normal_f64(&mut z, 0)
        .unwrap();
    for x in [R, 4.5] {
        let count = z.iter().filter(|v| v.abs() > x).count() as u64;
        let mean = n as f64 * 2.0 * normal_sf(x);
        let p = poisson_two_sided(count, mean);
        assert!(p > P_MIN, "beyond {x}: {count} against {mean:.1}, p = {p}");
    }
    let negative = z.iter().filter(|v| **v < 0.0).count() as u64;
    assert!(binomial_two_sided(negative, n as u64, 0.5) > P_MIN);
}

#[test]
fn misses_happen_at_the_predicted_rate() {
    // 0.428 % of draws miss the fast path (RNG-EVIDENCE.md).
    let t = ziggurat::table();
    let rng = Tandem::new(Key::from_seed(42));
    let mut d = vec![0u64; 1 << 18];
    rng.fill_u64(&mut d, 0).unwrap();
    let misses = d
        .iter()
        .filter(|&&x| ziggurat::fast(t, x).is_none())
        .count() as u64;
    assert!(binomial_two_sided(misses, d.len() as u64, 1.0 - 0.995_723_433) > P_MIN);
}
