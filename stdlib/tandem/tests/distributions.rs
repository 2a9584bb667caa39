//! Every fill against its exact distribution: chi-square for discrete
//! outputs, Kolmogorov-Smirnov for continuous ones, at sizes that run in
//! seconds in debug builds. Each statistic is also shown to reject a
//! slightly wrong distribution at the same size, so the tests can fail.

mod common;

use common::*;
use phobos_tandem::{Key, Tandem};

fn rng(seed: u64) -> Tandem {
    Tandem::new(Key::from_seed(seed))
}

fn counts(values: impl Iterator<Item = usize>, bins: usize) -> Vec<u64> {
    let mut c = vec![0u64; bins];
    for v in values {
        c[v] += 1;
    }
    c
}

#[test]
fn u32_bytes_of_each_position_are_uniform() {
    let mut w = vec![0u32; 1 << 18];
    rng(1).fill_u32(&mut w, 0).unwrap();
    for shift in [0, 8, 16, 24] {
        let p = chi_square_uniform(&counts(
            w.iter().map(|&x| ((x >> shift) & 0xFF) as usize),
            256,
        ));
        assert!(p > P_MIN, "byte at bit {shift}: p = {p}");
    }
    // Pairs of consecutive words (lag 1 and across lanes of a step).
    for lag in [1usize, 4, 32] {
        let pairs = w
            .windows(lag + 1)
            .map(|p| ((p[0] >> 28) as usize) << 4 | (p[lag] >> 28) as usize);
        let p = chi_square_uniform(&counts(pairs, 256));
        assert!(p > P_MIN, "lag {lag}: p = {p}");
    }
}

#[test]
fn narrow_and_wide_integers_are_uniform() {
    let mut b = vec![0u8; 1 << 18];
    rng(2).fill_u8(&mut b, 0).unwrap();
    assert!(chi_square_uniform(&counts(b.iter().map(|&x| x as usize), 256)) > P_MIN);
    let mut h = vec![0u16; 1 << 18];
    rng(3).fill_u16(&mut h, 0).unwrap();
    assert!(chi_square_uniform(&counts(h.iter().map(|&x| (x >> 8) as usize), 256)) > P_MIN);
    assert!(chi_square_uniform(&counts(h.iter().map(|&x| (x & 0xFF) as usize), 256)) > P_MIN);
    let mut q = vec![0u64; 1 << 17];
    rng(4).fill_u64(&mut q, 0).unwrap();
    for shift in [0, 28, 56] {
        let p = chi_square_uniform(&counts(
            q.iter().map(|&x| ((x >> shift) & 0xFF) as usize),
            256,
        ));
        assert!(p > P_MIN, "u64 bits at {shift}: p = {p}");
    }
}

#[test]
fn bools_are_fair_and_independent_of_neighbours() {
    let mut b = vec![false; 1 << 20];
    rng(5).fill_bool(&mut b, 0).unwrap();
    let ones = b.iter().filter(|&&x| x).count() as u64;
    assert!(binomial_two_sided(ones, b.len() as u64, 0.5) > P_MIN);
    // 8-bit patterns of consecutive bools.
    let p = chi_square_uniform(&counts(
        b.chunks(8)
            .map(|c| c.iter().fold(0, |a, &x| a << 1 | x as usize)),
        256,
    ));
    assert!(p > P_MIN, "octets: p = {p}");
}

#[test]
fn f16_takes_each_of_2048_values_equally() {
    let mut h = vec![0u16; 1 << 18];
    rng(6).fill_f16_bits(&mut h, 0).unwrap();
    // Map bits back to m = value * 2048 exactly with integer decoding.
    let m = h.iter().map(|&bits| {
        let e = (bits >> 10) as u32;
        let mant = (bits & 0x3FF) as usize;
        if bits == 0 {
            0
        } else {
            (1024 + mant) >> (14 - e)
        }
    });
    assert!(chi_square_uniform(&counts(m, 2048)) > P_MIN);
}

#[test]
fn uniform_floats_pass_ks() {
    let mut f = vec![0f32; 1 << 17];
    rng(7).fill_f32(&mut f, 0).unwrap();
    let s: Vec<f64> = f.iter().map(|&x| f64::from(x)).collect();
    assert!(s.iter().all(|&x| (0.0..1.0).contains(&x)));
    assert!(ks(&s, |x| x) > P_MIN);
    let mut d = vec![0f64; 1 << 17];
    rng(8).fill_f64(&mut d, 0).unwrap();
    assert!(d.iter().all(|&x| (0.0..1.0).contains(&x)));
    assert!(ks(&d, |x| x) > P_MIN);
    // Power: a 1 % scale error is rejected at this size.
    assert!(ks(&d, |x| (x * 1.01).min(1.0)) < P_MIN);
}

#[test]
fn normal_f32_passes_ks_and_moments() {
    let mut z = vec![0f32; 1 << 18];
    rng(9).fill_normal_f32(&mut z, 0).unwrap();
    let s: Vec<f64> = z.iter().map(|&x| f64::from(x)).collect();
    assert!(ks(&s, normal_cdf) > P_MIN);
    // The two halves of a pair are independent: the KS of their product's
    // sign and of each half alone.
    let even: Vec<f64> = s.iter().step_by(2).copied().collect();
    let odd: Vec<f64> = s.iter().skip(1).step_by(2).copied().collect();
    assert!(ks(&even, normal_cdf) > P_MIN);
    assert!(ks(&odd, normal_cdf) > P_MIN);
    let same_sign = even
        .iter()
        .zip(&odd)
        .filter(|(a, b)| (**a > 0.0) == (**b > 0.0))
        .count() as u64;
    assert!(binomial_two_sided(same_sign, even.len() as u64, 0.5) > P_MIN);
    // Power: a 3 % scale error is rejected at this size.
    assert!(ks(&s, |x| normal_cdf(x / 1.03)) < P_MIN);
}

#[test]
fn normal_f64_passes_ks_and_chi_square() {
    let mut z = vec![0f64; 1 << 18];
    rng(10).fill_normal_f64(&mut z, 0).unwrap();
    assert!(ks(&z, normal_cdf) > P_MIN);
    assert!(ks(&z, |x| normal_cdf(x / 1.03)) < P_MIN);
    // Chi-square on 0.1-wide bins out to +-4, and the two tails.
    let edges: Vec<f64> = (-40..=40).map(|k| k as f64 / 10.0).collect();
    let mut observed = vec![0u64; edges.len() + 1];
    for &x in &z {
        observed[edges.partition_point(|&e| e <= x)] += 1;
    }
    let n = z.len() as f64;
    let mut expected = Vec::new();
    let mut prev = 0.0;
    for &e in &edges {
        let c = normal_cdf(e);
        expected.push(n * (c - prev));
        prev = c;
    }
    expected.push(n * (1.0 - prev));
    let p = chi_square(&observed, &expected);
    assert!(p > P_MIN, "p = {p}");
}

#[test]
fn exponentials_pass_ks() {
    let mut e = vec![0f32; 1 << 17];
    rng(11).fill_exponential_f32(&mut e, 0).unwrap();
    let s: Vec<f64> = e.iter().map(|&x| f64::from(x)).collect();
    assert!(s.iter().all(|&x| (0.0..=22.2).contains(&x)));
    assert!(ks(&s, |x| 1.0 - (-x).exp()) > P_MIN);
    let mut d = vec![0f64; 1 << 17];
    rng(12).fill_exponential_f64(&mut d, 0).unwrap();
    assert!(d.iter().all(|&x| (0.0..=44.4).contains(&x)));
    assert!(ks(&d, |x| 1.0 - (-x).exp()) > P_MIN);
    assert!(ks(&d, |x| 1.0 - (-x * 1.03).exp()) < P_MIN);
    // The upper tail: P(X > 8) = e^-8, about 44 of 2^17.
    let beyond = d.iter().filter(|&&x| x > 8.0).count() as u64;
    assert!(poisson_two_sided(beyond, d.len() as f64 * (-8.0f64).exp()) > P_MIN);
}

#[test]
fn chi_square_detects_a_biased_die() {
    // Power check of the helper itself: 1 % extra on one face of six.
    let mut c = vec![10_000u64; 6];
    c[0] = 10_600;
    assert!(chi_square_uniform(&c) < P_MIN);
}
