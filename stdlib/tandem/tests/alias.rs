//! The alias table: its implied probabilities equal the scaled weights
//! exactly, its thresholds are the cuts in 2^-64 units, draws follow the
//! weights, and every bad input is refused with the parameter named.

mod common;

use common::*;
use phobos_tandem::{AliasTable, Error, Key, Tandem};

/// The mass each index receives from the table, in units where a column
/// holds `total`: its own column's cut plus what other columns alias to it.
fn implied(t: &AliasTable) -> Vec<u128> {
    let mut m = vec![0u128; t.len()];
    for c in 0..t.len() {
        let (_, alias) = t.column(c);
        m[c] += t.cut(c);
        m[alias as usize] += t.total() - t.cut(c);
    }
    m
}

fn check_exact(weights: &[f64]) {
    let t = AliasTable::new(weights).unwrap();
    let n = weights.len() as u128;
    let masses = implied(&t);
    for (i, (&mass, &q)) in masses.iter().zip(t.scaled_weights()).enumerate() {
        assert_eq!(mass, u128::from(q) * n, "index {i} of {weights:?}");
    }
    assert_eq!(
        t.total(),
        t.scaled_weights()
            .iter()
            .map(|&q| u128::from(q))
            .sum::<u128>()
    );
    // The scaled weights are the normalised weights to 2^-62 of the largest.
    let sum: f64 = weights.iter().sum();
    let max = weights.iter().copied().fold(0.0, f64::max);
    for (i, &q) in t.scaled_weights().iter().enumerate() {
        let p = q as f64 / t.total() as f64;
        assert!(
            (p - weights[i] / sum).abs() <= 1e-15 + 4e-19 * max / sum,
            "index {i}"
        );
    }
    // Thresholds are floor(cut * 2^64 / total).
    for c in 0..t.len() {
        let (thr, alias) = t.column(c);
        if t.cut(c) == t.total() {
            assert_eq!(alias as usize, c, "full column keeps itself");
        } else {
            let share = t.cut(c) as f64 / t.total() as f64;
            assert!(
                (thr as f64 / 2f64.powi(64) - share).abs() < 1e-15,
                "column {c}"
            );
        }
    }
}

#[test]
fn implied_probabilities_equal_the_weights() {
    check_exact(&[1.0, 2.0, 3.0, 4.0]);
    check_exact(&[3.0]);
    check_exact(&[1.0; 7]);
    check_exact(&[0.0, 5.0, 0.0, 1e-300, 2.5e-3]);
    check_exact(&[1e300, 1.0, 7e299]);
    check_exact(&[5e-324, 1e-320]);
    let many: Vec<f64> = (0..1000u64)
        .map(|i| ((i * 7919) % 1009) as f64 / 3.0)
        .collect();
    check_exact(&many);
}

#[test]
fn choices_follow_the_weights() {
    let weights = [1.0, 2.0, 3.0, 4.0, 0.0, 10.0];
    let t = AliasTable::new(&weights).unwrap();
    let mut out = vec![0u32; 1 << 17];
    Tandem::new(Key::from_seed(30))
        .fill_choice(&mut out, 0, &t)
        .unwrap();
    let mut c = [0u64; 6];
    out.iter().for_each(|&i| c[i as usize] += 1);
    assert_eq!(c[4], 0, "a zero weight is never chosen");
    let sum: f64 = weights.iter().sum();
    let obs: Vec<u64> = [0, 1, 2, 3, 5].iter().map(|&i| c[i]).collect();
    let exp: Vec<f64> = [0, 1, 2, 3, 5]
        .iter()
        .map(|&i| out.len() as f64 * weights[i] / sum)
        .collect();
    assert!(chi_square(&obs, &exp) > P_MIN);
    // Power: the same counts against slightly different weights fail.
    let wrong: Vec<f64> = [1.1, 2.0, 3.0, 4.0, 9.9]
        .iter()
        .map(|&w| out.len() as f64 * w / sum)
        .collect();
    assert!(chi_square(&obs, &wrong) < P_MIN);
}

#[test]
fn bad_weights_are_refused() {
    assert_eq!(AliasTable::new(&[]), Err(Error::EmptyWeights));
    assert_eq!(
        AliasTable::new(&[1.0, -1.0]),
        Err(Error::InvalidWeight {
            index: 1,
            value: -1.0
        })
    );
    assert!(matches!(
        AliasTable::new(&[f64::NAN]),
        Err(Error::InvalidWeight { index: 0, .. })
    ));
    assert!(matches!(
        AliasTable::new(&[1.0, f64::INFINITY]),
        Err(Error::InvalidWeight { index: 1, .. })
    ));
    assert_eq!(AliasTable::new(&[0.0, -0.0]), Err(Error::AllWeightsZero));
    let msg = AliasTable::new(&[2.0, f64::NAN]).unwrap_err().to_string();
    assert!(
        msg.contains("`weights`") && msg.contains("weight 1"),
        "{msg}"
    );
}
